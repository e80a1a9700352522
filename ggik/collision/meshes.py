"""Capsules that cover a link's collision meshes, where the mesh files can be found and read.

A URDF names meshes as ``package://PKG/path``, ``file:///abs/path`` or a path relative to the file. ggik resolves them
against the URDF file's folder and its parents (``PKG/path`` and ``path`` under each), reads them with trimesh (a
dependency of the URDF parser; STL, OBJ, PLY, ...) and covers the scaled vertices with one capsule: its axis is their
principal axis, its segment spans their projections onto it, its radius is their largest distance from the axis, so
every vertex lies inside it. A mesh that cannot be found or read gives None (the model then uses the link's segment
capsule and says why). :func:`shape_capsule` covers a URDF primitive (sphere, cylinder, capsule, box) with one capsule;
:mod:`ggik.collision.mesh_fit` fits tighter capsules to meshes (:meth:`CollisionModel.from_meshes`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ggik.kinematics.urdf_collision import CollisionShape

__all__ = ["resolve_mesh", "read_mesh", "mesh_capsule", "shape_capsule"]


def resolve_mesh(filename: str, urdf_dir: Path | None) -> Path | None:
    """The file a URDF mesh name points to, or None when it is not found."""
    if filename.startswith("file://"):
        path = Path(filename[len("file://") :])
        return path if path.is_file() else None
    rel = filename[len("package://") :] if filename.startswith("package://") else filename
    if Path(rel).is_absolute():
        return Path(rel) if Path(rel).is_file() else None
    if urdf_dir is None:
        return None
    candidates = [rel, rel.split("/", 1)[1] if filename.startswith("package://") and "/" in rel else rel]
    for folder in [urdf_dir, *urdf_dir.parents][:6]:
        for c in candidates:
            if (folder / c).is_file():
                return folder / c
    return None


def read_mesh(shape: CollisionShape, urdf_dir: Path | None, least: int = 1) -> tuple[Any, np.ndarray, str] | str:
    """(the trimesh mesh, its vertices (V, 3) float64 in the mesh file's own frame and units, the file's name) of the
    mesh ``shape``, or why it cannot be read: not found, not read by trimesh, or fewer than ``least`` finite
    vertices."""
    path = resolve_mesh(shape.mesh, urdf_dir)
    if path is None:
        return f"mesh {shape.mesh!r} not found"
    try:
        import trimesh

        mesh = trimesh.load(path, force="mesh")
        vertices = np.asarray(mesh.vertices, dtype=np.float64)  # type: ignore[attr-defined]  # force="mesh": a Trimesh
    except Exception as exc:  # trimesh's own errors carry no common type (an unsupported format, a broken file)
        return f"mesh {path.name} not read ({type(exc).__name__})"
    if vertices.ndim != 2 or vertices.shape[0] < least or not np.isfinite(vertices).all():
        return f"mesh {path.name} has no usable vertices"
    return mesh, vertices, path.name


def mesh_capsule(shape: CollisionShape, urdf_dir: Path | None) -> tuple[np.ndarray, np.ndarray, float] | str:
    """(a, b, radius) in the link frame of the capsule covering the mesh ``shape``, or the reason it cannot."""
    read = read_mesh(shape, urdf_dir)
    if isinstance(read, str):
        return read
    v = read[1] * np.asarray(shape.params, dtype=np.float64) @ shape.origin[:3, :3].T + shape.origin[:3, 3]
    centre = v.mean(0)
    axis = np.linalg.svd(v - centre, full_matrices=False)[2][0]
    t = (v - centre) @ axis
    radial = np.linalg.norm((v - centre) - t[:, None] * axis, axis=1)
    return centre + t.min() * axis, centre + t.max() * axis, float(radial.max())


def shape_capsule(shape: CollisionShape) -> tuple[np.ndarray, np.ndarray, float]:
    """(a, b, radius) in the link frame of the capsule covering a URDF primitive (not a mesh)."""
    T = shape.origin
    if shape.kind == "sphere":
        return T[:3, 3].copy(), T[:3, 3].copy(), shape.params[0]
    if shape.kind in ("cylinder", "capsule"):
        r, length = shape.params
        half = np.array([0.0, 0.0, length / 2])
    else:  # box: along its longest edge, the radius reaching the corners of the cross-section
        size = np.asarray(shape.params)
        k = int(np.argmax(size))
        r = float(np.linalg.norm(np.delete(size, k)) / 2)
        half = np.zeros(3)
        half[k] = size[k] / 2
    a = T[:3, :3] @ -half + T[:3, 3]
    b = T[:3, :3] @ half + T[:3, 3]
    return a, b, float(r)
