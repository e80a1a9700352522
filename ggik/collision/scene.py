"""Obstacles: :class:`Scene`, boxes, spheres and capsules in the robot's base-link frame, and its file form.

A scene file (YAML or JSON; lengths in metres, angles in radians, every obstacle in the base-link frame)::

    frame: panda_link0        # optional: the robot's base link (or a link fixed to it); another is refused when used
    boxes:   [{size: [0.15, 0.15, 0.15], xyz: [0.2, 0.3, 0.4], rpy: [0, 0, 0]}]
    spheres: [{radius: 0.05, xyz: [0.5, 0.0, 0.3]}]
    capsules: [{a: [0, 0, 0], b: [0, 0, 0.5], radius: 0.04}]

``frame`` may also name a link that only fixed joints join to the base link (its fixed transform is applied).
``size`` is a box's full edge lengths along its own x, y, z; ``xyz`` its centre; ``rpy`` its orientation, roll-pitch-yaw
about the fixed axes x, y, z as in URDF (default 0). A capsule is the set of points within ``radius`` of the segment
from ``a`` to ``b``. Each list may be absent or empty; a box may be flat (a size of 0: a wall of no thickness), a
sphere or capsule radius must be positive.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from ggik.errors import GGIKError
from ggik.kinematics.geometry import rpy_to_matrix
from ggik.kinematics.robot import Robot

__all__ = ["Box", "Sphere", "Capsule", "Scene", "SceneError"]


class SceneError(GGIKError):
    """A scene that cannot be used: an unreadable file, an unknown key, a negative size, NaN, a wrong frame."""


def _vector(value: Any, n: int, what: str) -> tuple[float, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != n:
        raise SceneError(f"{what} must be a list of {n} numbers, got {value!r}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(float(v)):
            raise SceneError(f"{what} must be {n} finite numbers, got {value!r}")
        out.append(float(v))
    return tuple(out)


def _length(value: Any, what: str, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise SceneError(f"{what} must be a finite number [m], got {value!r}")
    if value < 0 or (positive and value == 0):
        raise SceneError(f"{what} must be {'positive' if positive else 'non-negative'} [m], got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Box:
    """An oriented box: full edge lengths ``size`` (x, y, z) [m] >= 0, centre ``xyz`` [m] and orientation ``rpy``
    [rad] (URDF roll-pitch-yaw) in the base-link frame."""

    size: tuple[float, float, float]
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        size = _vector(self.size, 3, "box size")
        for s in size:
            _length(s, "box size", positive=False)
        object.__setattr__(self, "size", size)
        object.__setattr__(self, "xyz", _vector(self.xyz, 3, "box xyz"))
        object.__setattr__(self, "rpy", _vector(self.rpy, 3, "box rpy"))


@dataclass(frozen=True)
class Sphere:
    """A ball of ``radius`` [m] > 0 about ``xyz`` [m] (base-link frame)."""

    radius: float
    xyz: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", _length(self.radius, "sphere radius", positive=True))
        object.__setattr__(self, "xyz", _vector(self.xyz, 3, "sphere xyz"))


@dataclass(frozen=True)
class Capsule:
    """The points within ``radius`` [m] > 0 of the segment from ``a`` to ``b`` [m] (base-link frame)."""

    a: tuple[float, float, float]
    b: tuple[float, float, float]
    radius: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", _vector(self.a, 3, "capsule a"))
        object.__setattr__(self, "b", _vector(self.b, 3, "capsule b"))
        object.__setattr__(self, "radius", _length(self.radius, "capsule radius", positive=True))


_KEYS = {
    "boxes": (Box, {"size", "xyz", "rpy"}),
    "spheres": (Sphere, {"radius", "xyz"}),
    "capsules": (Capsule, {"a", "b", "radius"}),
}
_REQUIRED = {"boxes": {"size"}, "spheres": {"radius"}, "capsules": {"a", "b", "radius"}}


@dataclass(frozen=True)
class Scene:
    """Obstacles in a robot's base-link frame (``frame``: that link's name, or None for "whatever the base is").

    Build one in code (``Scene(boxes=[Box((0.1, 0.1, 0.1), xyz=(0.4, 0, 0.2))])``), from a mapping
    (:meth:`from_dict`) or from a YAML/JSON file (:meth:`from_file`, the module docstring's form)."""

    boxes: tuple[Box, ...] = ()
    spheres: tuple[Sphere, ...] = ()
    capsules: tuple[Capsule, ...] = ()
    frame: str | None = None
    source: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        for name, (kind, _) in _KEYS.items():
            items = tuple(getattr(self, name))
            for item in items:
                if not isinstance(item, kind):
                    raise SceneError(f"Scene.{name} holds {kind.__name__} objects, got {type(item).__name__}")
            object.__setattr__(self, name, items)
        if self.frame is not None and (not isinstance(self.frame, str) or not self.frame):
            raise SceneError(f"a scene's frame must be a link name, got {self.frame!r}")

    def __len__(self) -> int:
        """The number of obstacles."""
        return len(self.boxes) + len(self.spheres) + len(self.capsules)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "scene") -> Scene:
        """A scene from the mapping of the file form (SceneError naming ``source`` and the entry for bad data)."""
        if not isinstance(data, Mapping):
            raise SceneError(f"{source}: a scene is a mapping with keys frame, boxes, spheres, capsules")
        unknown = sorted(set(data) - {"frame", *_KEYS})
        if unknown:
            raise SceneError(f"{source}: unknown keys {unknown}; a scene has frame, boxes, spheres, capsules")
        built: dict[str, list] = {}
        for name, (kind, keys) in _KEYS.items():
            items = data.get(name) or []
            if not isinstance(items, list):
                raise SceneError(f"{source}: {name} must be a list, got {type(items).__name__}")
            built[name] = []
            for i, item in enumerate(items):
                where = f"{source}: {name}[{i}]"
                if not isinstance(item, Mapping):
                    raise SceneError(f"{where} must be a mapping with keys {sorted(keys)}")
                bad = sorted(set(item) - keys)
                if bad:
                    raise SceneError(f"{where}: unknown keys {bad}; {name} take {sorted(keys)}")
                missing = sorted(_REQUIRED[name] - set(item))
                if missing:
                    raise SceneError(f"{where}: missing {missing}")
                try:
                    built[name].append(kind(**item))
                except SceneError as exc:
                    raise SceneError(f"{where}: {exc}") from None
        frame = data.get("frame")
        if frame is not None and not isinstance(frame, str):
            raise SceneError(f"{source}: frame must be a link name, got {frame!r}")
        boxes, spheres, capsules = (tuple(built[k]) for k in ("boxes", "spheres", "capsules"))
        return cls(boxes=boxes, spheres=spheres, capsules=capsules, frame=frame, source=source)

    @classmethod
    def from_file(cls, path: str | Path) -> Scene:
        """Read a scene file: JSON for a ``.json`` name, YAML otherwise (SceneError for an unreadable file)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"scene file {path} does not exist")
        text = path.read_text(encoding="utf-8")
        try:
            if path.suffix.lower() == ".json":
                data = json.loads(text)
            else:
                import yaml

                data = yaml.safe_load(text)
        except Exception as exc:  # the parsers' own errors carry no common type
            raise SceneError(
                f"{path}: not valid {'JSON' if path.suffix.lower() == '.json' else 'YAML'}: {exc}"
            ) from None
        return cls.from_dict(data if data is not None else {}, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        """The file form (:meth:`from_dict` reads it back)."""
        out: dict[str, Any] = {} if self.frame is None else {"frame": self.frame}
        out["boxes"] = [{"size": list(b.size), "xyz": list(b.xyz), "rpy": list(b.rpy)} for b in self.boxes]
        out["spheres"] = [{"radius": s.radius, "xyz": list(s.xyz)} for s in self.spheres]
        out["capsules"] = [{"a": list(c.a), "b": list(c.b), "radius": c.radius} for c in self.capsules]
        return out

    def to_base(self, robot: Robot) -> torch.Tensor:
        """(4, 4) float64 the transform from the scene's ``frame`` to ``robot``'s base-link frame: the identity for the
        base link itself (or no frame), the fixed transform for a link that only fixed joints join to the base (e.g.
        ``panda_link0`` under a ``world`` base). SceneError for another link (one that joints move, or not on the
        chain)."""
        T = torch.eye(4, dtype=torch.float64)
        if self.frame is None or self.frame == robot.base_link:
            return T
        for joint in robot.joints:
            if joint.type != "fixed":
                break
            T = T @ torch.as_tensor(joint.origin, dtype=torch.float64)
            if joint.child == self.frame:
                return T
        raise SceneError(
            f"{self.source or 'the scene'} gives its obstacles in frame {self.frame!r}, which is not {robot.name}'s "
            f"base link {robot.base_link!r} or a link fixed to it; express them in the base-link frame"
        )

    def box_arrays(self, to_base: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(centres (M, 3), rotations (M, 3, 3) box -> base, half extents (M, 3)) [m] of the boxes, float64, mapped by
        ``to_base`` (4, 4) (:meth:`to_base`; default the identity)."""
        T = torch.eye(4, dtype=torch.float64) if to_base is None else to_base
        if not self.boxes:
            return torch.zeros(0, 3, dtype=torch.float64), torch.zeros(0, 3, 3, dtype=torch.float64), torch.zeros(0, 3)
        centre = torch.tensor([b.xyz for b in self.boxes], dtype=torch.float64) @ T[:3, :3].T + T[:3, 3]
        rotation = T[:3, :3] @ rpy_to_matrix(torch.tensor([b.rpy for b in self.boxes], dtype=torch.float64))
        half = torch.tensor([b.size for b in self.boxes], dtype=torch.float64) / 2
        return centre, rotation, half

    def capsule_arrays(self, to_base: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(a (K, 3), b (K, 3), radius (K,)) [m] of the spheres (a = b = centre), then the capsules, float64, mapped
        by ``to_base`` (4, 4) (default the identity)."""
        T = torch.eye(4, dtype=torch.float64) if to_base is None else to_base
        a = [s.xyz for s in self.spheres] + [c.a for c in self.capsules]
        b = [s.xyz for s in self.spheres] + [c.b for c in self.capsules]
        r = [s.radius for s in self.spheres] + [c.radius for c in self.capsules]
        if not r:
            return torch.zeros(0, 3, dtype=torch.float64), torch.zeros(0, 3, dtype=torch.float64), torch.zeros(0)
        R, t = T[:3, :3], T[:3, 3]
        a_t = torch.tensor(a, dtype=torch.float64) @ R.T + t
        b_t = torch.tensor(b, dtype=torch.float64) @ R.T + t
        return a_t, b_t, torch.tensor(r, dtype=torch.float64)
