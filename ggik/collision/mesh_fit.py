"""Capsules fitted to a link's meshes: the collision model :meth:`CollisionModel.from_meshes` builds from a URDF's
``<collision>`` meshes, else its ``<visual>`` meshes.

Per link, every vertex of its meshes is put in the link's frame (each mesh's ``<origin>`` and ``scale``). One capsule
(segment a-b, radius r) is fitted to them: the ends are searched (Nelder-Mead, from the ends of the vertices' principal
axis) for the least capsule volume ``pi r^2 |b - a| + 4/3 pi r^3``, ``r`` being the largest distance of a vertex from
the segment. The search reads the vertices of the convex hull (a capsule is convex: it covers the mesh when it covers
the hull), at most ``search_points`` of them drawn with a seeded generator; the final radius is taken over every
vertex, so each fitted capsule covers all of its vertices. Where cutting the vertices in two along the principal axis
(at 35, 50 or 65 % of its span) and fitting a capsule to each part makes the summed volume smaller by ``split_gain`` or
more (default 30 %), the link gets the two. Deterministic for a given ``seed``.

The report per link (:class:`LinkFit`): the share of vertices inside the capsules (1.0 by construction), the capsules'
summed volume (an upper bound on their union), the mesh volume (trimesh's, where the mesh is watertight, else that of
its convex hull: :attr:`LinkFit.volume_kind` says which) and the volume added, their difference.
"""

from __future__ import annotations

import contextlib
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ggik.collision.meshes import read_mesh, shape_capsule
from ggik.errors import GGIKError
from ggik.kinematics.urdf_collision import CollisionShape, read_collision_shapes

__all__ = [
    "LinkFit",
    "MeshFitConfig",
    "MeshSet",
    "attached_transform",
    "fit_capsules",
    "capsule_volume",
    "link_shapes",
    "load_meshes",
    "fit_link",
    "fit_shapes",
]

SPLIT_FRACTIONS = (0.35, 0.5, 0.65)  #: where a link's vertices may be cut in two, along their principal axis


@dataclass(frozen=True)
class MeshFitConfig:
    """How :meth:`CollisionModel.from_meshes` fits capsules.

    Attributes:
        max_capsules: 1 or 2 per link (two where they save ``split_gain`` of the volume).
        split_gain: the share of the one capsule's volume two must save (0-1).
        padding: [m] added to the radius of every fitted capsule and of those covering primitives (not to guessed
            segment capsules): a margin, e.g. for a checker whose capsules are larger than the meshes need.
        attach: links of the URDF off the chain whose capsules are fixed to the chain link they hang from, with the
            joints between held at zero (e.g. a mobile manipulator's head), named in the SRDF by their own names.
    """

    max_capsules: int = 2
    split_gain: float = 0.3
    padding: float = 0.0
    attach: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.max_capsules not in (1, 2):
            raise ValueError(f"MeshFitConfig.max_capsules must be 1 or 2, got {self.max_capsules!r}")
        if not (0.0 <= self.split_gain < 1.0):
            raise ValueError(f"MeshFitConfig.split_gain must be in [0, 1), got {self.split_gain!r}")
        if not (isinstance(self.padding, (int, float)) and math.isfinite(self.padding) and self.padding >= 0):
            raise ValueError(f"MeshFitConfig.padding must be a length >= 0 [m], got {self.padding!r}")


def attached_transform(urdf: str | Path, link: str, chain: tuple[str, ...]) -> tuple[str, np.ndarray]:
    """(the chain link that ``link`` hangs from, (4, 4) ``link``'s frame in that link's frame with the joints between
    at zero). GGIKError naming the file and the link where it is not in the URDF or hangs from no chain link."""
    from ggik.kinematics.urdf import read_urdf

    model = read_urdf(urdf)
    parent_joint = {j.child: j for j in model.joints}
    if link not in model.links:
        raise GGIKError(f"{urdf}: attach names {link!r}, which is not a link of the URDF")
    T, at = np.eye(4), link
    while at not in chain:
        if at not in parent_joint:
            raise GGIKError(f"{urdf}: attached link {link!r} hangs from no link of the chain {list(chain)}")
        T = parent_joint[at].origin @ T
        at = parent_joint[at].parent
    return at, T


@dataclass(frozen=True)
class MeshSet:
    """A link's meshes, loaded: ``vertices`` (N, 3) float64 [m] in the link frame; ``edges`` (E, 2) the meshes'
    edges (vertex index pairs into ``vertices``); ``volume`` [m^3] summed over its
    meshes; ``volume_kind`` "mesh" (every mesh watertight), "convex hull" (none) or "mesh or convex hull" (some)."""

    vertices: np.ndarray
    edges: np.ndarray
    volume: float
    volume_kind: str


@dataclass(frozen=True)
class LinkFit:
    """The capsules fitted to one link's meshes (module docstring).

    Attributes:
        link: the link's name.
        capsules: ((a (3,), b (3,), radius), ...) in the link frame [m].
        meshes: "collision" or "visual": the URDF elements the meshes came from.
        vertices: how many mesh vertices were covered.
        covered: the share of them inside some capsule (0-1).
        capsule_volume: the capsules' summed volume [m^3]; mesh_volume: the meshes' [m^3], of kind ``volume_kind``.
    """

    link: str
    capsules: tuple[tuple[np.ndarray, np.ndarray, float], ...]
    meshes: str
    vertices: int
    covered: float
    capsule_volume: float
    mesh_volume: float
    volume_kind: str

    @property
    def added_volume(self) -> float:
        """[m^3] the capsules' volume less the mesh volume."""
        return self.capsule_volume - self.mesh_volume

    def source(self) -> str:
        """One line for the model's ``source`` field and the report: where the capsules came from and how well."""
        ratio = self.capsule_volume / self.mesh_volume if self.mesh_volume > 0 else math.inf
        return (
            f"fitted to {self.meshes} meshes: {len(self.capsules)} capsule(s) cover {100 * self.covered:.2f} % of "
            f"{self.vertices} vertices; capsules {1e6 * self.capsule_volume:.0f} cm3, {self.volume_kind} "
            f"{1e6 * self.mesh_volume:.0f} cm3, added {1e6 * self.added_volume:.0f} cm3 (x{ratio:.2f})"
        )


def capsule_volume(a: np.ndarray, b: np.ndarray, radius: float) -> float:
    """[m^3] the volume of the capsule of segment a-b (each (3,) [m]) and ``radius`` [m]."""
    return math.pi * radius**2 * float(np.linalg.norm(b - a)) + 4.0 / 3.0 * math.pi * radius**3


def segment_distances(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(N,) distances [m] of points (N, 3) from the segment a-b (each (3,))."""
    d = b - a
    dd = float(d @ d)
    t = np.clip((points - a) @ d / dd, 0.0, 1.0) if dd > 1e-18 else np.zeros(len(points))
    return np.linalg.norm(points - a - t[:, None] * d, axis=1)


def _hull_points(vertices: np.ndarray) -> np.ndarray:
    """The vertices of the convex hull of ``vertices`` (N, 3) (all of them where the hull is degenerate)."""
    from scipy.spatial import ConvexHull, QhullError

    try:
        return vertices[ConvexHull(vertices).vertices]
    except (QhullError, ValueError):  # flat or too few points: every vertex
        return vertices


def _fit_one(
    vertices: np.ndarray, search_points: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, float]:
    """(a, b, radius) [m]: the least-volume capsule found covering every one of ``vertices`` (N, 3)."""
    from scipy.optimize import minimize

    centre = vertices.mean(0)
    if len(vertices) < 2 or float(np.ptp(vertices, axis=0).max()) < 1e-9:
        return centre, centre.copy(), max(float(np.linalg.norm(vertices - centre, axis=1).max()), 1e-6)
    pts = _hull_points(vertices)
    if len(pts) > search_points:
        pts = pts[np.sort(rng.choice(len(pts), search_points, replace=False))]
    axis = np.linalg.svd(vertices - centre, full_matrices=False)[2][0]
    t = (vertices - centre) @ axis
    radial = float(np.linalg.norm((vertices - centre) - t[:, None] * axis, axis=1).max())
    lo, hi = t.min() + min(radial, (t.max() - t.min()) / 2), t.max() - min(radial, (t.max() - t.min()) / 2)
    starts = [np.concatenate([centre + lo * axis, centre + hi * axis])]
    starts.append(np.concatenate([centre + t.min() * axis, centre + t.max() * axis]))

    def cost(x: np.ndarray) -> float:
        return capsule_volume(x[:3], x[3:], float(segment_distances(pts, x[:3], x[3:]).max()))

    step = 0.1 * float(np.ptp(vertices, axis=0).max())
    best = None
    for x0 in starts:
        for _ in range(2):  # a restart from where the first search stopped
            simplex = np.vstack([x0, x0 + step * np.eye(6)])
            res = minimize(cost, x0, method="Nelder-Mead", options={"initial_simplex": simplex, "maxfev": 1500})
            x0 = res.x
        if best is None or cost(x0) < cost(best):
            best = x0
    assert best is not None
    a, b = best[:3].copy(), best[3:].copy()
    return a, b, float(segment_distances(vertices, a, b).max())  # every vertex covered


def _section(vertices: np.ndarray, t: np.ndarray, cut: float, edges: np.ndarray | None) -> np.ndarray:
    """(K, 3) the points where the mesh ``edges`` (E, 2) cross the plane ``t == cut`` (t (N,): the vertices'
    coordinates along the cut's normal): with the vertices on one side, the corners of the mesh's part on that side."""
    if edges is None or not len(edges):
        return np.zeros((0, 3))
    ti, tj = t[edges[:, 0]], t[edges[:, 1]]
    crossing = (ti - cut) * (tj - cut) < 0
    i, j = edges[crossing, 0], edges[crossing, 1]
    w = ((cut - t[i]) / (t[j] - t[i]))[:, None]
    return vertices[i] + w * (vertices[j] - vertices[i])


def fit_capsules(
    vertices: np.ndarray,
    edges: np.ndarray | None = None,
    max_capsules: int = 2,
    split_gain: float = 0.3,
    search_points: int = 400,
    seed: int = 0,
) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """The capsules ((a (3,), b (3,), radius) [m]) covering ``vertices`` (N, 3) [m] (module docstring): one, or two
    where ``max_capsules`` is 2 and they are ``split_gain`` smaller in summed volume. ``edges`` (E, 2), the mesh's
    edges as vertex index pairs: where given, each of two capsules also covers the points where edges cross the cut,
    so that the two cover the mesh's solid (the vertices of each of its two parts), not its vertices alone."""
    rng = np.random.default_rng(seed)
    one = _fit_one(vertices, search_points, rng)
    if max_capsules < 2 or len(vertices) < 8:
        return [one]
    centre = vertices.mean(0)
    axis = np.linalg.svd(vertices - centre, full_matrices=False)[2][0]
    t = (vertices - centre) @ axis
    best, best_volume = [one], capsule_volume(*one)
    for f in SPLIT_FRACTIONS:
        cut = t.min() + f * (t.max() - t.min())
        section = _section(vertices, t, cut, edges)
        parts = [np.concatenate([vertices[t <= cut], section]), np.concatenate([vertices[t >= cut], section])]
        if min(len(p) for p in parts) < 4:
            continue
        two = [_fit_one(p, search_points, rng) for p in parts]
        volume = sum(capsule_volume(*c) for c in two)
        if volume < (1 - split_gain) * capsule_volume(*one) and volume < best_volume:
            best, best_volume = two, volume
    return best


def link_shapes(urdf: str | Path) -> dict[str, tuple[str, tuple[CollisionShape, ...]]]:
    """Per link of the URDF file: ("collision", its collision shapes) where it has any, else ("visual", its visual
    shapes); links with neither are left out. URDFError naming the file and the link for a malformed element."""
    path = Path(urdf)
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as exc:
        raise GGIKError(f"{path}: cannot read the URDF for its meshes ({exc})") from None
    collision = read_collision_shapes(root, str(path))
    visual = read_collision_shapes(root, str(path), tag="visual")
    out = {name: ("visual", shapes) for name, shapes in visual.items()}
    out.update({name: ("collision", shapes) for name, shapes in collision.items()})
    return out


def load_meshes(shapes: list[CollisionShape], urdf_dir: Path | None) -> MeshSet | str:
    """The vertices of mesh ``shapes`` in their link's frame, with the meshes' volume, or why they cannot be read."""
    from scipy.spatial import ConvexHull, QhullError

    parts, edges, volume, kinds, offset = [], [], 0.0, set(), 0
    for shape in shapes:
        read = read_mesh(shape, urdf_dir, least=4)
        if isinstance(read, str):
            return read
        mesh, v, _ = read
        scale = np.asarray(shape.params, dtype=np.float64)
        watertight = bool(getattr(mesh, "is_watertight", False)) and float(mesh.volume) > 0
        if watertight:
            volume += float(mesh.volume) * float(np.prod(scale))
        else:
            with contextlib.suppress(QhullError, ValueError):  # a flat mesh has no hull volume
                volume += float(ConvexHull(v * scale).volume)
        kinds.add("mesh" if watertight else "convex hull")
        parts.append(v * scale @ shape.origin[:3, :3].T + shape.origin[:3, 3])
        e = np.asarray(getattr(mesh, "edges_unique", np.zeros((0, 2))), dtype=np.int64).reshape(-1, 2)
        edges.append(e + offset)
        offset += len(v)
    if not parts:
        return "no mesh"
    kind = kinds.pop() if len(kinds) == 1 else "mesh or convex hull"
    return MeshSet(np.concatenate(parts), np.concatenate(edges), volume, kind)


def fit_link(link: str, kind: str, meshes: MeshSet, config: MeshFitConfig | None = None, seed: int = 0) -> LinkFit:
    """The capsules fitted to a link's loaded meshes (``kind``: "collision" or "visual"), with their report (the
    radii before ``config.padding``)."""
    config = config or MeshFitConfig()
    caps = fit_capsules(meshes.vertices, meshes.edges, config.max_capsules, config.split_gain, seed=seed)
    inside = np.zeros(len(meshes.vertices), dtype=bool)
    for a, b, r in caps:
        inside |= segment_distances(meshes.vertices, a, b) <= r * (1 + 1e-9) + 1e-12
    return LinkFit(
        link=link,
        capsules=tuple(caps),
        meshes=kind,
        vertices=len(meshes.vertices),
        covered=float(inside.mean()),
        capsule_volume=sum(capsule_volume(*c) for c in caps),
        mesh_volume=meshes.volume,
        volume_kind=meshes.volume_kind,
    )


def fit_shapes(
    name: str, shapes: tuple[str, tuple[CollisionShape, ...]], urdf_dir: Path, fit: MeshFitConfig, seed: int
) -> tuple[list[tuple[np.ndarray, np.ndarray, float, str]], str]:
    """The capsules (a, b, radius [m], source) in its frame covering link ``name``'s ``shapes`` ((kind, shapes) of
    :func:`~ggik.collision.mesh_fit.link_shapes`): its primitives covered, its meshes fitted, each radius padded; and
    why its meshes cannot be used ("" where they can or where it has none)."""
    kind, found = shapes
    pad = f"; radius padded by {1e3 * fit.padding:g} mm" if fit.padding else ""
    out = []
    for s in found:
        if s.kind != "mesh":
            a, b, r = shape_capsule(s)
            out.append((a, b, r + fit.padding, f"urdf {kind} primitive{pad}"))
    meshes = [s for s in found if s.kind == "mesh"]
    if not meshes:
        return out, ""
    loaded = load_meshes(meshes, urdf_dir)
    if isinstance(loaded, str):
        return out, loaded
    link_fit = fit_link(name, kind, loaded, fit, seed)
    return out + [(a, b, r + fit.padding, link_fit.source() + pad) for a, b, r in link_fit.capsules], ""
