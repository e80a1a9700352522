"""Reading and writing URDF documents: the kinematics of a URDF as :class:`JointSpec` records.

The rest of the library sees only :class:`JointSpec` records. Every document is checked here, so that bad files
fail with a specific message: malformed XML, unexpanded xacro, a missing file, NaN/inf or wrongly sized numbers, a
zero axis, duplicate names, joints naming undeclared links. The joints are read straight from the checked XML
(origins, axes, limits, mimics: all the kinematics needs); no URDF parser library is imported, which keeps the
command line's start-up short (yourdfpy pulls in trimesh and scipy.spatial: 0.4-0.7 s). The tests read every file
with yourdfpy as an independent reference and compare the joints and the forward kinematics.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from ggik.errors import URDFError
from ggik.kinematics.geometry import matrix_to_rpy, rpy_to_matrix
from ggik.kinematics.urdf_collision import CollisionShape, read_collision_shapes

__all__ = ["JointSpec", "UrdfModel", "read_urdf", "write_urdf", "SUPPORTED_JOINT_TYPES"]

SUPPORTED_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed")
_XACRO_NS = "{http://www.ros.org/wiki/xacro}"


@dataclass(frozen=True)
class JointSpec:
    """One URDF joint, as ggik uses it.

    Attributes:
        name: joint name.
        type: "revolute", "continuous", "prismatic", "fixed" (or another URDF type, refused on a chain).
        parent, child: link names.
        origin: (4, 4) float64 transform parent-link frame -> joint frame at zero joint value.
        axis: (3,) float64 unit axis in the joint frame (URDF default (1, 0, 0) when absent).
        lower, upper: joint limits [rad or m], ``None`` when the file gives none.
        mimic: ``(source_joint, multiplier, offset)`` for a mimic joint, else ``None``.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray
    axis: np.ndarray
    lower: float | None = None
    upper: float | None = None
    mimic: tuple[str, float, float] | None = None


@dataclass(frozen=True)
class UrdfModel:
    """A parsed URDF: robot name, link names and joints in document order; ``source`` for messages; the links'
    ``<collision>`` shapes ({link: shapes}, only links that have any)."""

    name: str
    links: tuple[str, ...]
    joints: tuple[JointSpec, ...]
    source: str
    collisions: dict[str, tuple[CollisionShape, ...]] = field(default_factory=dict)


def _load_text(path_or_xml: str | Path) -> tuple[str, str]:
    """Return (xml text, a short description of where it came from)."""
    if isinstance(path_or_xml, str) and path_or_xml.lstrip().startswith("<"):
        return path_or_xml, "<URDF string>"
    path = Path(path_or_xml)
    if not path.is_file():
        raise FileNotFoundError(f"URDF file not found: {path}")
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except UnicodeDecodeError as exc:
        raise URDFError(f"{path} is not a UTF-8 text file ({exc})") from None


def _numbers(text: str | None, count: int, where: str, src: str, default: tuple[float, ...]) -> tuple[float, ...]:
    if text is None:
        return default
    parts = text.split()
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise URDFError(f"{src}: {where} = {text!r} is not a list of numbers") from None
    if len(values) != count:
        raise URDFError(f"{src}: {where} = {text!r} must have {count} numbers, found {len(values)}")
    if not all(math.isfinite(v) for v in values):
        raise URDFError(f"{src}: {where} = {text!r} contains NaN or inf")
    return values


def _check_xacro(root: ET.Element, src: str) -> None:
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.startswith(_XACRO_NS):
            raise URDFError(
                f"{src} contains unexpanded xacro (element <xacro:{el.tag[len(_XACRO_NS) :]}>); "
                "expand it first, e.g. `xacro robot.urdf.xacro > robot.urdf`"
            )
        for key, value in el.attrib.items():
            if "${" in value or "$(" in value:
                raise URDFError(
                    f"{src} contains an unexpanded xacro expression {value!r} (attribute {key!r} of "
                    f"<{el.tag}>); expand it first, e.g. `xacro robot.urdf.xacro > robot.urdf`"
                )


def _validate_joints(root: ET.Element, src: str) -> None:
    """Check the numbers of every joint before the parser sees them."""
    for el in root.findall("joint"):
        name = el.get("name")
        if not name:
            raise URDFError(f"{src}: a <joint> has no name attribute")
        jtype = el.get("type")
        if jtype is None:
            raise URDFError(f"{src}: joint {name!r} has no type attribute")
        for tag in ("parent", "child"):
            sub = el.find(tag)
            if sub is None or not sub.get("link"):
                raise URDFError(f"{src}: joint {name!r} has no <{tag} link=...>")
        origin = el.find("origin")
        if origin is not None:
            _numbers(origin.get("xyz"), 3, f"joint {name!r} <origin xyz>", src, (0.0,) * 3)
            _numbers(origin.get("rpy"), 3, f"joint {name!r} <origin rpy>", src, (0.0,) * 3)
        axis_el = el.find("axis")
        if axis_el is not None:
            axis = _numbers(axis_el.get("xyz"), 3, f"joint {name!r} <axis xyz>", src, (1.0, 0.0, 0.0))
            if jtype != "fixed" and math.sqrt(sum(a * a for a in axis)) < 1e-12:
                raise URDFError(f"{src}: joint {name!r} has a zero axis {axis_el.get('xyz')!r}")
        limit = el.find("limit")
        if limit is not None:
            for key in ("lower", "upper", "effort", "velocity"):
                _numbers(limit.get(key), 1, f"joint {name!r} <limit {key}>", src, (0.0,))
        mimic = el.find("mimic")
        if mimic is not None:
            if not mimic.get("joint"):
                raise URDFError(f"{src}: joint {name!r} has a <mimic> without a joint attribute")
            _numbers(mimic.get("multiplier"), 1, f"joint {name!r} <mimic multiplier>", src, (1.0,))
            _numbers(mimic.get("offset"), 1, f"joint {name!r} <mimic offset>", src, (0.0,))


def read_urdf(path_or_xml: str | Path) -> UrdfModel:
    """Read and check a URDF file path or XML string.

    Raises:
        FileNotFoundError: a path that does not exist.
        URDFError: malformed XML, a root other than <robot>, unexpanded xacro, a joint without
            name/type/parent/child, numbers that are NaN/inf or of the wrong count, a zero axis,
            duplicate link or joint names, joints naming undeclared links.
    """
    text, src = _load_text(path_or_xml)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        if "unbound prefix" in str(exc) and "xacro:" in text:
            raise URDFError(
                f"{src} contains unexpanded xacro (xacro: elements); expand it first, "
                "e.g. `xacro robot.urdf.xacro > robot.urdf`"
            ) from None
        raise URDFError(f"{src} is not well-formed XML: {exc}") from None
    if root.tag != "robot":
        raise URDFError(f"{src}: the root element must be <robot>, found <{root.tag}>")
    _check_xacro(root, src)
    _validate_joints(root, src)

    link_names = [el.get("name") or "" for el in root.findall("link")]
    if any(not n for n in link_names):
        raise URDFError(f"{src}: a <link> has no name attribute")
    dup = sorted({n for n in link_names if link_names.count(n) > 1})
    if dup:
        raise URDFError(f"{src}: duplicate link names {dup}")
    joint_names = [el.get("name") or "" for el in root.findall("joint")]  # all named: _validate_joints
    dup = sorted({n for n in joint_names if joint_names.count(n) > 1})
    if dup:
        raise URDFError(f"{src}: duplicate joint names {dup}")

    collisions = read_collision_shapes(root, src)  # checked here: the messages name the link
    links = set(link_names)
    joints = []
    for el in root.findall("joint"):  # every number checked by _validate_joints
        name, jtype = el.get("name") or "", el.get("type") or ""
        parent, child = (el.find(tag).get("link") or "" for tag in ("parent", "child"))  # type: ignore[union-attr]
        for role, link in (("parent", parent), ("child", child)):
            if link not in links:
                raise URDFError(f"{src}: joint {name!r} names {role} link {link!r}, which is not declared")
        joints.append(
            JointSpec(name, jtype, parent, child, *_origin_axis(el, jtype, src), *_limits(el, src), _mimic(el, src))
        )
    return UrdfModel(
        name=root.get("name") or "robot",
        links=tuple(link_names),
        joints=tuple(joints),
        source=src,
        collisions=collisions,
    )


def _origin_axis(el: ET.Element, jtype: str, src: str) -> tuple[np.ndarray, np.ndarray]:
    """A joint's (4, 4) origin (URDF rpy: ``Rz(y) Ry(p) Rx(r)``) and (3,) axis (unit, except a fixed joint's)."""
    name = el.get("name")
    origin_el = el.find("origin")
    xyz: tuple[float, ...] = (0.0, 0.0, 0.0)
    rpy: tuple[float, ...] = (0.0, 0.0, 0.0)
    if origin_el is not None:
        xyz = _numbers(origin_el.get("xyz"), 3, f"joint {name!r} <origin xyz>", src, xyz)
        rpy = _numbers(origin_el.get("rpy"), 3, f"joint {name!r} <origin rpy>", src, rpy)
    origin = np.eye(4)
    origin[:3, :3] = rpy_to_matrix(torch.tensor(rpy, dtype=torch.float64)).numpy()
    origin[:3, 3] = xyz
    axis_el = el.find("axis")
    default = (1.0, 0.0, 0.0)
    axis = np.array(
        default if axis_el is None else _numbers(axis_el.get("xyz"), 3, f"joint {name!r} <axis xyz>", src, default)
    )
    if jtype != "fixed":
        axis = axis / np.linalg.norm(axis)
    return origin, axis


def _limits(el: ET.Element, src: str) -> tuple[float | None, float | None]:
    """A joint's (lower, upper) limits, None where the file gives none."""
    limit = el.find("limit")
    if limit is None:
        return None, None
    name = el.get("name")
    lower, upper = (limit.get(k) for k in ("lower", "upper"))
    return (
        None if lower is None else _numbers(lower, 1, f"joint {name!r} <limit lower>", src, (0.0,))[0],
        None if upper is None else _numbers(upper, 1, f"joint {name!r} <limit upper>", src, (0.0,))[0],
    )


def _mimic(el: ET.Element, src: str) -> tuple[str, float, float] | None:
    """A mimic joint's (source joint, multiplier, offset), else None."""
    mimic = el.find("mimic")
    if mimic is None:
        return None
    name = el.get("name")
    multiplier = _numbers(mimic.get("multiplier"), 1, f"joint {name!r} <mimic multiplier>", src, (1.0,))[0]
    offset = _numbers(mimic.get("offset"), 1, f"joint {name!r} <mimic offset>", src, (0.0,))[0]
    return mimic.get("joint") or "", multiplier, offset


def _fmt(x: float) -> str:
    """Shortest text that reads back as the same float64 (exact URDF round trips)."""
    x = float(x)
    return "0" if x == 0.0 else repr(x)


def write_urdf(name: str, joints: Sequence[JointSpec]) -> str:
    """A minimal kinematics-only URDF (links, joints, limits, mimic) of a chain of ``joints``, base first.

    Numbers are written in their shortest exact float64 form, so :func:`read_urdf` reads the same chain back.
    """
    robot = ET.Element("robot", name=name)
    for link in (joints[0].parent, *(j.child for j in joints)):
        ET.SubElement(robot, "link", name=link)
    for j in joints:
        el = ET.SubElement(robot, "joint", name=j.name, type=j.type)
        rpy = matrix_to_rpy(torch.from_numpy(j.origin[:3, :3])).tolist()
        ET.SubElement(el, "origin", xyz=" ".join(_fmt(v) for v in j.origin[:3, 3]), rpy=" ".join(_fmt(v) for v in rpy))
        ET.SubElement(el, "parent", link=j.parent)
        ET.SubElement(el, "child", link=j.child)
        if j.type != "fixed":
            ET.SubElement(el, "axis", xyz=" ".join(_fmt(v) for v in j.axis))
        if j.type in ("revolute", "prismatic") and j.lower is not None and j.upper is not None:
            ET.SubElement(el, "limit", lower=_fmt(j.lower), upper=_fmt(j.upper), effort="0", velocity="0")
        if j.mimic is not None:
            ET.SubElement(el, "mimic", joint=j.mimic[0], multiplier=_fmt(j.mimic[1]), offset=_fmt(j.mimic[2]))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"
