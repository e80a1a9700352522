"""Clearances of a robot among obstacles at batches of joint values, and their Jacobians for the LM solver.

:class:`Clearance` binds a robot, its :class:`~ggik.collision.robot_model.CollisionModel`, a
:class:`~ggik.collision.scene.Scene` and a :class:`CollisionConfig`. Its pairs (P of them): every moving robot capsule
against every obstacle, then the model's self-collision pairs. ``distances(q)`` gives their signed distances (..., P)
[m] (positive: clear by that much; negative: overlapping), ``rows(q)`` also d(distance)/dq (n, P, dof), the rows that
LM adds as the hinge residual ``max(0, margin - distance)``: zero where a pair is clear by the margin, so a solution
whose pairs all are is a zero of the residual as without obstacles.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from os import PathLike
from pathlib import Path
from typing import Any

import torch

from ggik.collision.distance import segment_box, segment_segment
from ggik.collision.robot_model import CollisionModel
from ggik.collision.scene import Scene
from ggik.kinematics.robot import Robot

__all__ = ["CollisionConfig", "Clearance"]


@dataclass(frozen=True)
class CollisionConfig:
    """How collisions count in a solve.

    Attributes:
        margin: [m] LM pushes every robot-obstacle clearance up to this (a hinge residual, active below the margin);
            it stops an element once the pose is within tolerance and no pair overlaps. 1 mm: a margin is a
            preference that competes with the pose; 1 cm shut narrow passages (CppFlow's ``panda__flappy_bird``
            slot, ``benchmarks/cppflow``).
        self_margin: [m] the same for the self-collision pairs (1 mm; not a centimetre: the default link capsules of
            some arms lie closer than that in most configurations, e.g. the panda's fourth and seventh links; not 0:
            a pair pushed only to contact ends at distance 0 to round-off, where the last bit decides whether it
            collides, and a motion between two such configurations dips below 0).
        self_collision: check the collision model's self-collision pairs too.
        model_file: a collision file (:mod:`ggik.collision.collision_file`: capsules and spheres per link) to use
            instead of the model built from the URDF (None: :meth:`CollisionModel.from_robot`).
        srdf: an SRDF file whose ``<disable_collisions>`` pairs replace the sampled self-collision rule (or the
            collision file's ``skip_pairs``) (:mod:`ggik.collision.srdf`).
    """

    margin: float = 0.001
    self_margin: float = 0.001
    self_collision: bool = True
    model_file: str | Path | None = None
    srdf: str | Path | None = None

    def __post_init__(self) -> None:
        for name in ("margin", "self_margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0 <= value < float("inf")):
                raise ValueError(f"CollisionConfig.{name} must be a length >= 0 [m], got {value!r}")
        for name in ("model_file", "srdf"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (str, PathLike)) and str(value)):
                raise ValueError(f"CollisionConfig.{name} must be a file path or None, got {value!r}")

    @property
    def default_model(self) -> bool:
        """Whether the robot's own model is meant (no collision file, no SRDF)."""
        return self.model_file is None and self.srdf is None

    def without_files(self) -> CollisionConfig:
        """These settings without ``model_file`` and ``srdf`` (for a :class:`Clearance` given the model they name)."""
        return replace(self, model_file=None, srdf=None)

    def collision_model(self, robot: Robot) -> CollisionModel:
        """The collision model of ``robot`` these settings name: :meth:`CollisionModel.from_file` of ``model_file``,
        else :meth:`CollisionModel.from_robot`, with ``srdf``'s disabled pairs when given."""
        if self.model_file is not None:
            return CollisionModel.from_file(self.model_file, robot, srdf=self.srdf)
        return CollisionModel.from_robot(robot, srdf=self.srdf)


class Clearance:
    """The collision pairs of ``robot`` (model ``model``) among ``scene``'s obstacles (module docstring).

    A collision-free configuration has every distance >= 0 (:meth:`collision_free`)."""

    def __init__(
        self,
        robot: Robot,
        model: CollisionModel | None,
        scene: Scene | None = None,
        config: CollisionConfig | None = None,
    ) -> None:
        """``model`` None: the one ``config`` names (:meth:`CollisionConfig.collision_model`: the robot's own, or a
        collision file and SRDF); a model given with a ``config`` that names files is a ValueError (which one?)."""
        scene = Scene() if scene is None else scene
        to_base = scene.to_base(robot)  # SceneError for a frame that is not the base link's
        config = config or CollisionConfig()
        if model is None:
            model = config.collision_model(robot)
        elif not config.default_model:
            raise ValueError(
                "a Clearance takes a CollisionModel or a CollisionConfig naming a collision file / SRDF, not both "
                "(CollisionConfig.without_files())"
            )
        model.check_robot(robot)
        self.robot, self.model, self.scene = robot, model, scene
        self.config = config
        moving = model.moving.nonzero()[:, 0]
        self.cap_a, self.cap_b, self.cap_r = scene.capsule_arrays(to_base)
        self.box_c, self.box_R, self.box_h = scene.box_arrays(to_base)
        K, M = len(self.cap_r), len(self.box_h)
        self.cap_pairs = torch.cartesian_prod(moving, torch.arange(K)).reshape(-1, 2)  # (robot capsule, obstacle)
        self.box_pairs = torch.cartesian_prod(moving, torch.arange(M)).reshape(-1, 2)
        self.self_pairs = model.self_pairs if self.config.self_collision else torch.zeros(0, 2, dtype=torch.long)
        self.pairs = len(self.cap_pairs) + len(self.box_pairs) + len(self.self_pairs)
        #: (P,) [m] the clearance each pair's hinge asks for
        self.margins = torch.cat(
            [
                torch.full((self.obstacle_pairs,), float(self.config.margin), dtype=torch.float64),
                torch.full((len(self.self_pairs),), float(self.config.self_margin), dtype=torch.float64),
            ]
        )
        consts, _ = robot.chain_constants()
        self._axes = torch.tensor(consts["axes"])
        self._prismatic = torch.tensor(consts["prismatic"])
        self._A = torch.tensor(consts["A"])
        child = [i + 1 for i, j in enumerate(robot.joints) if j.type != "fixed"]  # link index of each moving joint
        self._child = torch.tensor(child, dtype=torch.long)
        links = torch.arange(len(robot.link_names))
        self._moves = links[:, None] >= self._child[None, :]  # (L, n_moving): the joint moves the link

    def pair_names(self) -> list[str]:
        """A label per pair, in the order of :meth:`distances`: the robot link, then the obstacle as the scene file
        names it (``boxes[0]``, ``spheres[1]``, ``capsules[0]``) or the other link (a self-collision pair)."""
        links = self.model.link_names
        cap_link = self.model.link
        kinds = [f"spheres[{k}]" for k in range(len(self.scene.spheres))]
        kinds += [f"capsules[{k}]" for k in range(len(self.scene.capsules))]
        names = [f"{links[int(cap_link[i])]} - {kinds[k]}" for i, k in self.cap_pairs.tolist()]
        names += [f"{links[int(cap_link[i])]} - boxes[{m}]" for i, m in self.box_pairs.tolist()]
        names += [f"{links[int(cap_link[i])]} - {links[int(cap_link[j])]}" for i, j in self.self_pairs.tolist()]
        return names

    @property
    def obstacle_pairs(self) -> int:
        """The number of robot-obstacle pairs: the first of :meth:`distances`' columns (self pairs follow)."""
        return len(self.cap_pairs) + len(self.box_pairs)

    def _closest(self, link_poses: torch.Tensor, exact_below: float | None = None):
        """Per pair: distance (..., P), the first capsule's closest point (..., P, 3) and the distance's direction
        there (..., P, 3); for self pairs also the second capsule's closest point (..., P_self, 3).

        ``exact_below`` [m]: a capsule-box pair whose bounding spheres are further apart than this gets that lower
        bound of its distance instead of the exact value, and no direction (what LM's inactive hinge rows need)."""
        a, b = self.model.capsules_at(link_poses)  # (..., C, 3)
        r = self.model.radius.to(a)
        like: dict[str, Any] = dict(dtype=a.dtype, device=a.device)
        i, k = self.cap_pairs[:, 0], self.cap_pairs[:, 1]
        d1, s1, _, n1 = segment_segment(a[..., i, :], b[..., i, :], self.cap_a.to(**like)[k], self.cap_b.to(**like)[k])
        d1 = d1 - r[i] - self.cap_r.to(**like)[k]
        i2, m = self.box_pairs[:, 0], self.box_pairs[:, 1]
        d2, s2, n2 = self._box_pairs(a[..., i2, :], b[..., i2, :], r[i2], m, exact_below)
        p, q = self.self_pairs[:, 0], self.self_pairs[:, 1]
        d3, s3, t3, n3 = segment_segment(a[..., p, :], b[..., p, :], a[..., q, :], b[..., q, :])
        d3 = d3 - r[p] - r[q]
        first = torch.cat([i, i2, p])
        s = torch.cat([s1, s2, s3], -1)
        x = a[..., first, :] + s[..., None] * (b[..., first, :] - a[..., first, :])
        y = a[..., q, :] + t3[..., None] * (b[..., q, :] - a[..., q, :])
        return torch.cat([d1, d2, d3], -1), x, torch.cat([n1, n2, n3], -2), y

    def _box_pairs(self, a: torch.Tensor, b: torch.Tensor, r: torch.Tensor, m: torch.Tensor, exact_below: float | None):
        """(distance, t, direction) of the capsule-box pairs: segments (..., P2, 3), radii (P2,), box indices (P2,)."""
        c, R, h = (t.to(dtype=a.dtype, device=a.device)[m] for t in (self.box_c, self.box_R, self.box_h))
        if exact_below is None:
            d, t, n = segment_box(a, b, c, R, h)
            return d - r, t, n
        mid, half_len = (a + b) / 2, torch.linalg.vector_norm(b - a, dim=-1) / 2
        bound = torch.linalg.vector_norm(mid - c, dim=-1) - half_len - torch.linalg.vector_norm(h, dim=-1) - r
        near = (bound <= exact_below).nonzero(as_tuple=True)
        d, t, n = bound.clone(), torch.zeros_like(bound), torch.zeros_like(a)
        if near[0].numel():
            pair = near[-1]
            dn, tn, nn = segment_box(a[near], b[near], c[pair], R[pair], h[pair])
            d[near], t[near], n[near] = dn - r[pair], tn, nn
        return d, t, n

    def distances(self, q: torch.Tensor) -> torch.Tensor:
        """(..., P) signed distances [m] of every pair at joint values q (..., dof)."""
        return self._closest(self.robot.link_poses(q))[0]

    def min_clearance(self, q: torch.Tensor) -> torch.Tensor:
        """(...,) the lowest signed distance over all pairs [m] (+inf with no pairs)."""
        d = self.distances(q)
        if d.shape[-1] == 0:
            return torch.full(d.shape[:-1], float("inf"), dtype=d.dtype, device=d.device)
        return d.min(-1).values

    def collision_free(self, q: torch.Tensor) -> torch.Tensor:
        """(...,) bool: no pair overlaps at q (..., dof)."""
        return self.min_clearance(q) >= 0

    def rows(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Distances (n, P) [m] and their derivatives (n, P, dof) [m/rad or m/m] at joint values q (n, dof): exact where
        a pair is within the largest margin; further, a capsule-box pair may get a lower bound (above every margin)
        and zero rows, as its hinge row is zero either way."""
        poses = self.robot.link_poses(q)
        d, x, n, y = self._closest(poses, exact_below=float(self.margins.max()) if self.pairs else None)
        R, origin = poses[..., self._child, :3, :3], poses[..., self._child, :3, 3]  # (n, nm, ...) joint frames
        w = (R @ self._axes.to(q)[..., None])[..., 0]  # (n, nm, 3) joint axes in the base frame
        first_link = self.model.link[torch.cat([self.cap_pairs[:, 0], self.box_pairs[:, 0], self.self_pairs[:, 0]])]
        J = self._point_rows(x, n, w, origin, self._moves[first_link])
        P3 = len(self.self_pairs)
        if P3:
            second = self._point_rows(
                y, n[..., -P3:, :], w, origin, self._moves[self.model.link[self.self_pairs[:, 1]]]
            )
            J = torch.cat([J[..., :-P3, :], J[..., -P3:, :] - second], -2)
        return d, J @ self._A.to(q)

    def _point_rows(self, x, n, w, origin, mask) -> torch.Tensor:
        """(n, P, n_moving): n . dx/dq_moving for points x (n, P, 3) fixed to links moved by ``mask`` (P, n_moving).

        A turn about axis w through o moves x at w x (x - o), and n . (w x (x - o)) = (x x n) . w - n . (w x o):
        two batched products instead of a cross product per point and joint. A slide along w moves x at w."""
        wt = w.transpose(-1, -2)  # (n, 3, nm)
        turn = torch.linalg.cross(x, n, dim=-1) @ wt - n @ torch.linalg.cross(w, origin, dim=-1).transpose(-1, -2)
        rows = torch.where(self._prismatic.to(x.device), n @ wt, turn)
        return rows * mask.to(x)

    def hinge(self, d: torch.Tensor, J: torch.Tensor, shrink: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
        """LM's residual rows (n, P) ``max(0, shrink * margin - d)`` (each pair's margin, :attr:`margins`; ``shrink``
        in [0, 1] scales them all) and their Jacobian (n, P, dof) (the rows' model: d)."""
        gap = shrink * self.margins.to(d) - d
        active = gap > 0
        return torch.where(active, gap, 0.0), J * active[..., None].to(J)

    def hinge_cost(self, d: torch.Tensor) -> torch.Tensor:
        """(n,) the hinge rows' sum of squares at distances d (n, P)."""
        gap = (self.margins.to(d) - d).clamp(min=0)
        return (gap * gap).sum(-1)

    def settled(self, d: torch.Tensor) -> torch.Tensor:
        """(n,) bool: no pair overlaps (LM's stopping test beside the pose's: the margin is where the rows start
        pushing, not a requirement; a solution is collision-free, usually with about the margin to spare)."""
        return (d >= 0).all(-1)
