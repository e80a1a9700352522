"""Collision files: a robot's collision model written by hand (YAML), read by :meth:`CollisionModel.from_file`.

The form (lengths in metres, every shape in the frame of the link it is fixed to)::

    ggik_collision: 1          # format version (required)
    robot: panda               # informational; the links are checked against the robot the file is used with
    frame: link                # required, and the only value: each shape is in its own link's frame
    links:                     # required: link name (on the chain) -> its shapes; a link left out has none
      panda_link1:
        capsules: [{a: [0, 0, -0.1], b: [0, 0, 0.1], radius: 0.06}]   # the points within radius of segment a-b
        spheres: [{center: [0, 0, 0], radius: 0.05}]
    skip_pairs:                # optional: the self-collision pairs left out
      - [panda_link1, panda_link3]      # every pair of a shape of one link with a shape of the other
      - [panda_link2#0, panda_link4#1]  # LINK#k: the k-th shape of the link (from 0: its capsules, then its spheres)

A sphere is a capsule whose ends coincide (the model keeps one representation; :func:`collision_dict` writes a
capsule with a == b as a sphere). A shape may carry ``source`` (a string: where it came from; ``ggik robot
collision`` writes "urdf" or "segment"), kept in :attr:`CollisionModel.source`. Radii must be positive and finite,
ends finite. Self-collision is only ever checked between links at least two moving joints apart (the model's
candidates); ``skip_pairs`` leaves pairs out of those. Without ``skip_pairs`` (and without an SRDF) the pairs come
from the sampled rule (:mod:`ggik.collision.robot_model`); with it, that list alone. Anything else (an unknown key or
link, a missing field, a negative or NaN radius, another ``frame``) is a :class:`CollisionFileError` naming the file
and the field.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch

from ggik.errors import GGIKError
from ggik.fileio import atomic_write_text
from ggik.kinematics.robot import Robot

__all__ = [
    "CollisionFileError",
    "CollisionShapes",
    "ModelLike",
    "FORMAT_VERSION",
    "read_collision_file",
    "collision_dict",
    "collision_text",
    "write_collision_file",
]

FORMAT_VERSION = 1  #: the ``ggik_collision`` value this module reads and writes
_TOP = {"ggik_collision", "robot", "frame", "links", "skip_pairs"}
_SHAPES = {"capsules": ({"a", "b", "radius"}, {"source"}), "spheres": ({"center", "radius"}, {"source"})}


class CollisionFileError(GGIKError):
    """A collision file or SRDF that cannot be used: unreadable, an unknown key or link, a missing field, a radius that
    is not a positive finite length, another frame. The message names the file and the field."""


@dataclass(frozen=True)
class CollisionShapes:
    """What a collision file holds for a robot: ``capsules`` (link index, a (3,), b (3,) [m] in that link's frame,
    radius [m], source), ordered by link on the chain, then capsules before spheres as the file lists them; ``skip``
    the capsule index pairs of ``skip_pairs`` (None when the file has no such key)."""

    capsules: list[tuple[int, np.ndarray, np.ndarray, float, str]]
    skip: list[tuple[int, int]] | None


class ModelLike(Protocol):
    """What the writers read of a :class:`~ggik.collision.robot_model.CollisionModel` (this module sits below it)."""

    robot_name: str
    link_names: tuple[str, ...]
    link: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    radius: torch.Tensor
    source: tuple[str, ...]
    self_pairs: torch.Tensor
    skipped: tuple[tuple[int, int, str], ...]
    pairs_from: str

    def check_robot(self, robot: Robot) -> None: ...


def _vector(value: Any, where: str) -> np.ndarray:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 3:
        raise CollisionFileError(f"{where} must be a list of 3 numbers [m], got {value!r}")
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)) for v in value):
        raise CollisionFileError(f"{where} must be 3 finite numbers [m], got {value!r}")
    return np.array([float(v) for v in value], dtype=np.float64)


def _radius(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise CollisionFileError(f"{where} must be a finite number [m], got {value!r}")
    if value <= 0:
        raise CollisionFileError(f"{where} must be a positive length [m], got {value!r}")
    return float(value)


def _load(path: Path) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"collision file {path} does not exist")
    import yaml

    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise CollisionFileError(f"{path}: not valid YAML: {exc}") from None


def _check_top(data: Any, src: str) -> None:
    if not isinstance(data, Mapping):
        raise CollisionFileError(f"{src}: a collision file is a mapping with keys {sorted(_TOP)}")
    unknown = sorted(map(str, set(data) - _TOP))
    if unknown:
        raise CollisionFileError(f"{src}: unknown keys {unknown}; a collision file has {sorted(_TOP)}")
    for key in ("ggik_collision", "frame", "links"):
        if key not in data:
            raise CollisionFileError(f"{src}: missing field {key!r}")
    if data["ggik_collision"] != FORMAT_VERSION or isinstance(data["ggik_collision"], bool):
        raise CollisionFileError(
            f"{src}: ggik_collision: format version {data['ggik_collision']!r} is not one this ggik reads "
            f"({FORMAT_VERSION})"
        )
    if data["frame"] != "link":
        raise CollisionFileError(
            f"{src}: frame: {data['frame']!r} is not accepted; the only value is 'link' (every shape in the frame of "
            "the link it is fixed to)"
        )
    if "robot" in data and not isinstance(data["robot"], str):
        raise CollisionFileError(f"{src}: robot must be a name (informational), got {data['robot']!r}")
    if not isinstance(data["links"], Mapping):
        raise CollisionFileError(f"{src}: links must be a mapping of link name -> {{capsules: [...], spheres: [...]}}")


def _link_shapes(entry: Any, where: str, source: str) -> list[tuple[np.ndarray, np.ndarray, float, str]]:
    """The (a, b, radius, source) of one link's entry, capsules then spheres."""
    if entry is None:
        return []
    if not isinstance(entry, Mapping):
        raise CollisionFileError(f"{where} must be a mapping with keys capsules, spheres")
    unknown = sorted(map(str, set(entry) - set(_SHAPES)))
    if unknown:
        raise CollisionFileError(f"{where}: unknown keys {unknown}; a link has capsules, spheres")
    out = []
    for kind, (required, optional) in _SHAPES.items():
        items = entry.get(kind) or []
        if not isinstance(items, list):
            raise CollisionFileError(f"{where}.{kind} must be a list, got {type(items).__name__}")
        for i, item in enumerate(items):
            at = f"{where}.{kind}[{i}]"
            if not isinstance(item, Mapping):
                raise CollisionFileError(f"{at} must be a mapping with keys {sorted(required)}")
            bad = sorted(map(str, set(item) - required - optional))
            if bad:
                raise CollisionFileError(f"{at}: unknown keys {bad}; {kind} take {sorted(required | optional)}")
            missing = sorted(required - set(item))
            if missing:
                raise CollisionFileError(f"{at}: missing field {missing[0]!r}")
            shape_source = item.get("source", source)
            if not isinstance(shape_source, str):
                raise CollisionFileError(f"{at}.source must be a string, got {shape_source!r}")
            radius = _radius(item["radius"], f"{at}.radius")
            if kind == "capsules":
                a, b = _vector(item["a"], f"{at}.a"), _vector(item["b"], f"{at}.b")
            else:
                a = _vector(item["center"], f"{at}.center")
                b = a.copy()
            out.append((a, b, radius, shape_source))
    return out


_SHAPE_REF = re.compile(r"^(.*)#(\d+)$")


def _shape_refs(name: Any, where: str, first: Mapping[str, int], count: Mapping[str, int]) -> list[int]:
    """The capsule indices a ``skip_pairs`` name stands for: a link (all its shapes) or ``LINK#k`` (one)."""
    if not isinstance(name, str):
        raise CollisionFileError(f"{where} must be a link name or LINK#k, got {name!r}")
    if name in first:
        return list(range(first[name], first[name] + count[name]))
    match = _SHAPE_REF.match(name)
    if match is None or match.group(1) not in first:
        raise CollisionFileError(f"{where}: {name!r} is not a link on the chain {list(first)} (or LINK#k of one)")
    link, k = match.group(1), int(match.group(2))
    if k >= count[link]:
        raise CollisionFileError(
            f"{where}: {name!r}: link {link!r} has {count[link]} shapes (#0 to #{count[link] - 1})"
        )
    return [first[link] + k]


def read_collision_file(path: str | Path, robot: Robot) -> CollisionShapes:
    """The shapes and skipped pairs of collision file ``path`` (module docstring) for ``robot``
    (:class:`CollisionFileError` naming the file and the field; FileNotFoundError for a missing file)."""
    path = Path(path)
    src = str(path)
    data = _load(path)
    _check_top(data, src)
    chain = list(robot.link_names)
    unknown = [str(k) for k in data["links"] if k not in chain]
    if unknown:
        off = [k for k in unknown if k in robot.urdf_links]
        why = f" ({off} are in the URDF but not on the chain {robot.base_link} -> {robot.ee_link})" if off else ""
        raise CollisionFileError(f"{src}: links.{unknown[0]}: no such link on {robot.name}'s chain {chain}{why}")
    capsules: list[tuple[int, np.ndarray, np.ndarray, float, str]] = []
    first: dict[str, int] = {}
    count: dict[str, int] = {}
    for index, name in enumerate(chain):
        shapes = _link_shapes(data["links"].get(name), f"{src}: links.{name}", "file") if name in data["links"] else []
        first[name], count[name] = len(capsules), len(shapes)
        capsules.extend((index, a, b, r, s) for a, b, r, s in shapes)
    if not capsules:
        raise CollisionFileError(f"{src}: links: no link has a capsule or sphere")
    skip = None
    if "skip_pairs" in data:
        items = data["skip_pairs"] or []
        if not isinstance(items, list):
            raise CollisionFileError(f"{src}: skip_pairs must be a list of [LINK, LINK] pairs")
        skip = []
        for i, pair in enumerate(items):
            where = f"{src}: skip_pairs[{i}]"
            if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
                raise CollisionFileError(f"{where} must be a pair [LINK, LINK] (or LINK#k), got {pair!r}")
            left, right = (_shape_refs(n, f"{where}[{k}]", first, count) for k, n in enumerate(pair))
            if set(left) & set(right):
                raise CollisionFileError(f"{where}: {pair!r} pairs a shape with itself")
            skip += [(min(x, y), max(x, y)) for x in left for y in right]
    return CollisionShapes(capsules, skip)


def _shape_names(model: ModelLike) -> tuple[list[str], dict[str, int]]:
    """Per capsule its ``LINK#k`` name (k in file order: a link's capsules, then its spheres) and the shape count per
    link."""
    links = [model.link_names[int(k)] for k in model.link]
    sphere = (model.a == model.b).all(-1).tolist()
    names = [""] * len(links)
    count: dict[str, int] = {}
    for want_sphere in (False, True):
        for c, link in enumerate(links):
            if sphere[c] == want_sphere:
                names[c] = f"{link}#{count.get(link, 0)}"
                count[link] = count.get(link, 0) + 1
    return names, count


def collision_dict(model: ModelLike) -> dict[str, Any]:
    """The file form of ``model`` (:func:`read_collision_file` reads it back to the same capsules and pairs, a link's
    capsules before its spheres): every capsule with a == b as a sphere, the pairs the model leaves out as
    ``skip_pairs`` (whole link pairs where every candidate pair of their shapes is left out, else ``LINK#k`` pairs)."""
    names, count = _shape_names(model)
    capsules: dict[str, list] = {}
    spheres: dict[str, list] = {}
    for c in range(len(model.source)):
        link = model.link_names[int(model.link[c])]
        a, b, r = model.a[c].tolist(), model.b[c].tolist(), float(model.radius[c])
        if a == b:
            spheres.setdefault(link, []).append({"center": a, "radius": r, "source": model.source[c]})
        else:
            capsules.setdefault(link, []).append({"a": a, "b": b, "radius": r, "source": model.source[c]})
    links: dict[str, dict[str, list]] = {}
    for link in model.link_names:
        if link in capsules or link in spheres:
            links[link] = {k: v[link] for k, v in (("capsules", capsules), ("spheres", spheres)) if link in v}
    checked = {(i, j) for i, j in model.self_pairs.tolist()}
    by_links: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for i, j in sorted(checked | {(i, j) for i, j, _ in model.skipped}):
        key = (model.link_names[int(model.link[i])], model.link_names[int(model.link[j])])
        by_links.setdefault(key, []).append((i, j))
    skip: list[list[str]] = []
    for (u, v), pairs in by_links.items():
        left_out = [p for p in pairs if p not in checked]
        if left_out and len(left_out) == len(pairs) == count[u] * count[v]:
            skip.append([u, v])
        else:
            skip += [[names[i], names[j]] for i, j in left_out]
    top = {"ggik_collision": FORMAT_VERSION, "robot": model.robot_name, "frame": "link", "links": links}
    return {**top, "skip_pairs": skip}


def write_collision_file(model: ModelLike, path: str | Path) -> Path:
    """Write ``model`` as a collision file (atomically; :func:`collision_text`). Returns the path."""
    return atomic_write_text(path, collision_text(model))


def collision_text(model: ModelLike) -> str:
    """``model`` as the text of a collision file: a header that says how to edit it, then :func:`collision_dict`."""
    import yaml

    header = [
        f"# ggik collision model of {model.robot_name}: capsules and spheres per link [m], in each link's frame.",
        "# Edit it, then pass it with --collision FILE (ggik solve / path / view) or CollisionModel.from_file.",
        "# skip_pairs: the self-collision pairs left out (LINK, or LINK#k: the link's k-th shape, capsules first);",
        "# without the key ggik finds them at random configurations; --srdf FILE takes an SRDF's disabled pairs.",
    ]
    if model.pairs_from:
        header.append(f"# The pairs came from the {model.pairs_from}.")
    body = yaml.safe_dump(collision_dict(model), sort_keys=False, default_flow_style=None, width=120)
    return "\n".join(header) + "\n" + body
