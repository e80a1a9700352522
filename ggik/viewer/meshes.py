"""Triangle meshes of what the viewer draws: a robot's links (their URDF visual meshes, else capsules along the links)
and the obstacles of a scene.

Every link mesh is given in its own link frame (the frames of :meth:`ggik.Robot.link_poses`), so that one mesh per
link, posed by each solution's link poses, draws every arm. Visual meshes are found as the collision model finds its
meshes (:func:`ggik.collision.meshes.resolve_mesh`: ``package://PKG/path``, ``file://`` and paths relative to the URDF
file's folder and its parents) and read with trimesh; a link whose visual file is not found, or a robot without any
``<visual>`` (the kinematics-only URDFs shipped with ggik), gets a capsule from its frame to the next link's frame.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ggik.collision.meshes import resolve_mesh
from ggik.collision.scene import Scene
from ggik.kinematics.geometry import rpy_to_matrix
from ggik.kinematics.robot import Robot

__all__ = ["LinkMesh", "link_meshes", "obstacle_meshes", "capsule_mesh"]

MIN_SEGMENT = 1e-6  #: [m] a link whose next frame is closer than this gets a ball, not a capsule


@dataclass(frozen=True)
class LinkMesh:
    """One link's triangles in its link frame: ``vertices`` (V, 3) float32 [m], ``faces`` (F, 3) uint32; ``source``
    "visual" (URDF visual meshes or primitives) or "capsule" (the segment to the next link)."""

    link: str
    vertices: np.ndarray
    faces: np.ndarray
    source: str


def _merge(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One mesh (V, 3), (F, 3) from several, the face indices offset."""
    vertices, faces, offset = [], [], 0
    for v, f in parts:
        vertices.append(np.asarray(v, dtype=np.float32))
        faces.append(np.asarray(f, dtype=np.int64) + offset)
        offset += len(v)
    return np.concatenate(vertices), np.concatenate(faces).astype(np.uint32)


def _transformed(v: np.ndarray, T: np.ndarray) -> np.ndarray:
    return np.asarray(v, dtype=np.float64) @ T[:3, :3].T + T[:3, 3]


def capsule_mesh(a: np.ndarray, b: np.ndarray, radius: float, sections: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (V, 3), faces (F, 3)) of the capsule of points within ``radius`` [m] of segment a-b (3,) [m]; a ball
    when a and b coincide."""
    import trimesh

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    axis = b - a
    length = float(np.linalg.norm(axis))
    if length < MIN_SEGMENT:
        ball = trimesh.creation.icosphere(subdivisions=2, radius=radius)
        return _transformed(ball.vertices, _translation(a)), np.asarray(ball.faces)
    mesh = trimesh.creation.capsule(height=length, radius=radius, count=[sections, sections])  # along z, centred
    T = trimesh.geometry.align_vectors(np.array([0.0, 0.0, 1.0]), axis / length)
    T[:3, 3] = (a + b) / 2
    return _transformed(mesh.vertices, T), np.asarray(mesh.faces)


def _translation(p: np.ndarray) -> np.ndarray:
    T = np.eye(4)
    T[:3, 3] = p
    return T


def _origin(element: ET.Element | None) -> np.ndarray:
    """The (4, 4) pose of a ``<visual>``'s ``<origin>`` in its link frame (malformed numbers: the identity's part)."""
    T = np.eye(4)
    if element is None:
        return T
    try:
        xyz = [float(v) for v in (element.get("xyz") or "0 0 0").split()]
        rpy = [float(v) for v in (element.get("rpy") or "0 0 0").split()]
    except ValueError:
        return T
    if len(xyz) == 3:
        T[:3, 3] = xyz
    if len(rpy) == 3:
        T[:3, :3] = rpy_to_matrix(torch.tensor(rpy, dtype=torch.float64)).numpy()
    return T


def _visual_geometry(visual: ET.Element, urdf_dir: Path | None) -> tuple[np.ndarray, np.ndarray] | None:
    """One ``<visual>`` as triangles in its link frame, or None when its mesh file is not found or not read."""
    import trimesh

    geometry = visual.find("geometry")
    if geometry is None or len(geometry) != 1:
        return None
    shape, T = geometry[0], _origin(visual.find("origin"))
    try:
        if shape.tag == "mesh":
            path = resolve_mesh(shape.get("filename") or "", urdf_dir)
            if path is None:
                return None
            mesh = trimesh.load(path, force="mesh")
            scale = [float(v) for v in (shape.get("scale") or "1 1 1").split()]
            vertices = np.asarray(mesh.vertices, dtype=np.float64) * np.asarray(scale)  # type: ignore[attr-defined]
            faces = np.asarray(mesh.faces)  # type: ignore[attr-defined]
        elif shape.tag == "box":
            mesh = trimesh.creation.box(extents=[float(v) for v in (shape.get("size") or "").split()])
            vertices, faces = mesh.vertices, mesh.faces
        elif shape.tag == "cylinder":
            r, h = float(shape.get("radius") or 0), float(shape.get("length") or 0)
            mesh = trimesh.creation.cylinder(radius=r, height=h)
            vertices, faces = mesh.vertices, mesh.faces
        elif shape.tag == "sphere":
            mesh = trimesh.creation.icosphere(subdivisions=2, radius=float(shape.get("radius") or 0))
            vertices, faces = mesh.vertices, mesh.faces
        else:
            return None
    except Exception:  # trimesh's own errors have no common type (an unsupported format, a broken file)
        return None
    if len(vertices) == 0 or not np.isfinite(vertices).all():
        return None
    return _transformed(vertices, T), np.asarray(faces)


def _visuals(robot: Robot) -> dict[str, list[ET.Element]]:
    """{link: its ``<visual>`` elements} of the robot's URDF file (empty for a robot not read from a file)."""
    source = Path(robot.source) if robot.source else None
    if source is None or not source.is_file():
        return {}
    try:
        root = ET.parse(source).getroot()
    except (ET.ParseError, OSError):
        return {}
    return {link.get("name") or "": link.findall("visual") for link in root.findall("link")}


def link_meshes(robot: Robot, radius: float) -> list[LinkMesh]:
    """The mesh of every link of ``robot`` that has one, base first (:attr:`ggik.Robot.link_names`).

    With URDF visuals, each link that names any is drawn from them, and a link whose files are all missing gets the
    capsule of radius ``radius`` [m] along its segment; without visuals every segment is a capsule: from the link's
    frame to the next link's frame (its joint's origin, fixed in the link frame), the last link a ball.
    """
    visuals = _visuals(robot)
    urdf_dir = Path(robot.source).parent if visuals else None
    any_visual = any(visuals.get(link) for link in robot.link_names)
    out = []
    for k, link in enumerate(robot.link_names):
        nxt = robot.joints[k].origin[:3, 3] if k < len(robot.joints) else np.zeros(3)
        if any_visual and visuals.get(link):
            parts = [p for p in (_visual_geometry(v, urdf_dir) for v in visuals[link]) if p is not None]
            if parts:
                out.append(LinkMesh(link, *_merge(parts), "visual"))
                continue
        elif any_visual:
            continue  # the URDF draws this link as nothing
        if k == len(robot.joints) or np.linalg.norm(nxt) >= MIN_SEGMENT or k == 0:
            out.append(LinkMesh(link, *_merge([capsule_mesh(np.zeros(3), nxt, radius)]), "capsule"))
    return out


def obstacle_meshes(scene: Scene, robot: Robot) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, vertices (V, 3), faces (F, 3)) of every obstacle of ``scene`` in ``robot``'s base-link frame [m], named
    as the scene's lists ("boxes[0]", "spheres[1]", "capsules[0]"); SceneError for a frame the robot lacks."""
    import trimesh

    T = scene.to_base(robot).numpy()
    out = []
    for i, box in enumerate(scene.boxes):
        pose = np.eye(4)
        pose[:3, :3] = rpy_to_matrix(torch.tensor(box.rpy, dtype=torch.float64)).numpy()
        pose[:3, 3] = box.xyz
        mesh = trimesh.creation.box(extents=box.size)
        out.append((f"boxes[{i}]", _transformed(mesh.vertices, T @ pose), np.asarray(mesh.faces)))
    for i, sphere in enumerate(scene.spheres):
        v, f = capsule_mesh(np.asarray(sphere.xyz), np.asarray(sphere.xyz), sphere.radius)
        out.append((f"spheres[{i}]", _transformed(v, T), f))
    for i, capsule in enumerate(scene.capsules):
        v, f = capsule_mesh(np.asarray(capsule.a), np.asarray(capsule.b), capsule.radius)
        out.append((f"capsules[{i}]", _transformed(v, T), f))
    return [(name, v.astype(np.float32), f.astype(np.uint32)) for name, v, f in out]
