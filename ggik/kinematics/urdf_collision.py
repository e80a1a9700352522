"""The ``<collision>`` geometry of URDF links, as plain records: what :mod:`ggik.collision` builds its robot model from.

Primitives (box, cylinder, sphere, and the capsule that some files use) are read with their ``<origin>``; a mesh is
recorded by its file name and scale (:mod:`ggik.collision.meshes` loads it where it can). Numbers are checked like
every other URDF number (:class:`ggik.errors.URDFError` naming the link).
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import torch

from ggik.errors import URDFError
from ggik.kinematics.geometry import rpy_to_matrix

__all__ = ["CollisionShape", "read_collision_shapes", "SHAPE_PARAMETERS"]

#: the numbers of each primitive, in the order of :attr:`CollisionShape.params` [m]
SHAPE_PARAMETERS = {
    "box": ("size",),
    "cylinder": ("radius", "length"),
    "sphere": ("radius",),
    "capsule": ("radius", "length"),
}


@dataclass(frozen=True)
class CollisionShape:
    """One ``<collision>`` element of a link.

    Attributes:
        kind: "box", "cylinder", "sphere", "capsule" or "mesh".
        origin: (4, 4) float64 pose of the shape in the link frame (cylinders and capsules lie along its z axis).
        params: box: (sx, sy, sz) full edge lengths; cylinder, capsule: (radius, length) (a capsule's length is that of
            its cylindrical part); sphere: (radius,) [m]; mesh: its scale (sx, sy, sz) (default 1).
        mesh: the mesh file name (kind "mesh"), else "".
    """

    kind: str
    origin: np.ndarray
    params: tuple[float, ...]
    mesh: str = ""


def _floats(text: str | None, count: int, where: str, src: str) -> tuple[float, ...]:
    try:
        values = tuple(float(v) for v in (text or "").split())
    except ValueError:
        raise URDFError(f"{src}: {where} = {text!r} is not a list of numbers") from None
    if len(values) != count or not all(math.isfinite(v) for v in values):
        raise URDFError(f"{src}: {where} = {text!r} must be {count} finite number(s)")
    if any(v < 0 for v in values):
        raise URDFError(f"{src}: {where} = {text!r} must not be negative")
    return values


def _origin(el: ET.Element | None, where: str, src: str) -> np.ndarray:
    T = np.eye(4)
    if el is None:
        return T
    xyz, rpy = el.get("xyz"), el.get("rpy")
    for name, text in (("xyz", xyz), ("rpy", rpy)):
        if text is not None:
            parts = text.split()
            try:
                values = [float(p) for p in parts]
            except ValueError:
                raise URDFError(f"{src}: {where} <origin {name}> = {text!r} is not a list of numbers") from None
            if len(values) != 3 or not all(math.isfinite(v) for v in values):
                raise URDFError(f"{src}: {where} <origin {name}> = {text!r} must be 3 finite numbers")
            if name == "xyz":
                T[:3, 3] = values
            else:
                T[:3, :3] = rpy_to_matrix(torch.tensor(values, dtype=torch.float64)).numpy()
    return T


def read_collision_shapes(root: ET.Element, src: str, tag: str = "collision") -> dict[str, tuple[CollisionShape, ...]]:
    """The collision shapes of every link of a parsed ``<robot>`` element that has any: {link name: shapes}; with
    ``tag="visual"`` its ``<visual>`` elements' shapes, read alike."""
    out: dict[str, tuple[CollisionShape, ...]] = {}
    for link in root.findall("link"):
        name = link.get("name") or ""
        shapes = []
        for i, col in enumerate(link.findall(tag)):
            where = f"link {name!r} <{tag}> {i}"
            geometry = col.find("geometry")
            if geometry is None or len(geometry) != 1:
                raise URDFError(f"{src}: {where} needs one <geometry> element with one shape")
            shape = geometry[0]
            origin = _origin(col.find("origin"), where, src)
            if shape.tag == "box":
                params = _floats(shape.get("size"), 3, f"{where} <box size>", src)
            elif shape.tag in ("cylinder", "capsule"):
                params = _floats(shape.get("radius"), 1, f"{where} <{shape.tag} radius>", src)
                params += _floats(shape.get("length"), 1, f"{where} <{shape.tag} length>", src)
            elif shape.tag == "sphere":
                params = _floats(shape.get("radius"), 1, f"{where} <sphere radius>", src)
            elif shape.tag == "mesh":
                scale: tuple[float, ...] = (1.0, 1.0, 1.0)
                if shape.get("scale") is not None:
                    scale = _floats(shape.get("scale"), 3, f"{where} <mesh scale>", src)
                shapes.append(CollisionShape("mesh", origin, scale, shape.get("filename") or ""))
                continue
            else:
                raise URDFError(f"{src}: {where} has an unknown shape <{shape.tag}>")
            shapes.append(CollisionShape(shape.tag, origin, params))
        if shapes:
            out[name] = tuple(shapes)
    return out
