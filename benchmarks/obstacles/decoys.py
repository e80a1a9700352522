"""Dead ends for the first branch: obstacles that block the trajectories path following finds without them.

A hard path of :mod:`benchmarks.obstacles.hard_group` has waypoints, a scene and a witness W (T, dof) that is
collision-free in it. Its *decoys* are the valid trajectories that :func:`ggik.path.solve_path` finds for the same
waypoints without obstacles (random starts only, one per seed): the branches a continuation follows first. A decoy
that stays within one allowed move of W everywhere is W's own branch and is not blocked.

:func:`block_decoys` adds balls on each decoy's links where they are far from every link of W, at waypoints every
``stride`` apart over the middle half of the path: a ball at the decoy's point farthest from W (over W's waypoints and
the motions between them, every degree), its radius that distance less a margin (at most ``max_radius``, at least
``min_radius``). A decoy then collides along a stretch of the path while W stays clear: on a 6-DOF arm, whose IK
branches are isolated, the decoy's branch is a dead end there; on a 7-DOF arm the balls block a stretch of the decoy's
self-motion as well, unless a detour within the allowed moves goes round them.
"""

from __future__ import annotations

import math

import torch

from ggik import Robot
from ggik.collision import Clearance, CollisionModel, Scene, Sphere
from ggik.collision.distance import segment_segment
from ggik.path import PathConfig, solve_path
from ggik.path.motion import MOTION_CHECK_STEP, motion_clearance

__all__ = ["decoys", "block_decoys", "dense_motion"]

_MARGIN = 0.01  #: [m] free space kept between a ball and every witness link (beyond the link's capsule radius)


def dense_motion(q: torch.Tensor) -> torch.Tensor:
    """(T', dof) the trajectory q (T, dof) with configurations inserted so that no joint moves more than one degree
    between neighbours (the motions between waypoints, as :mod:`ggik.path.motion` checks them)."""
    d = q[1:] - q[:-1]
    m = max(1, math.ceil(float((d.abs() / MOTION_CHECK_STEP).max()))) if len(q) > 1 else 1
    frac = torch.arange(m, dtype=q.dtype) / m
    inner = (q[:-1, None] + frac[None, :, None] * d[:, None]).reshape(-1, q.shape[1])
    return torch.cat([inner, q[-1:]])


def decoys(robot: Robot, poses: torch.Tensor, witness: torch.Tensor, n: int, seed: int, time_limit: float = 2.0):
    """Up to ``n`` valid obstacle-free trajectories (T, dof) of ``poses`` (T, 4, 4) that leave W's branch (some joint
    more than 7 deg from the witness at some waypoint), from seeds ``seed``, ``seed + 1``, ..."""
    out = []
    for k in range(n):
        gen = torch.Generator().manual_seed(seed + k)
        found = solve_path(robot, poses, PathConfig(samples=0, time_limit=time_limit), generator=gen)
        if found.valid and float((found.q - witness).abs().max()) > math.radians(7.0):
            out.append(found.q)
    return out


def _free_distance(points: torch.Tensor, a: torch.Tensor, b: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """(N,) [m] the distance of every point (N, 3) from the union of capsules (M, 3), (M, 3), (M,)."""
    out = torch.full((points.shape[0],), math.inf, dtype=points.dtype)
    for start in range(0, a.shape[0], 4096):  # (N, 4096) pairs at a time
        aa, bb, rr = a[start : start + 4096], b[start : start + 4096], r[start : start + 4096]
        p = points[:, None].expand(-1, aa.shape[0], 3)
        d = segment_segment(p, p, aa[None].expand_as(p), bb[None].expand_as(p))[0] - rr
        out = torch.minimum(out, d.min(-1).values)
    return out


def block_decoys(
    robot: Robot,
    model: CollisionModel,
    scene: Scene,
    witness: torch.Tensor,
    blocked: list[torch.Tensor],
    stride: int = 3,
    min_radius: float = 0.02,
    max_radius: float = 0.08,
) -> Scene | None:
    """``scene`` with balls that make every trajectory of ``blocked`` collide while ``witness`` (T, dof) stays clear
    (module docstring), or None when some decoy cannot be blocked (no point of it far enough from the witness)."""
    dense = dense_motion(witness)
    wa, wb = model.capsules_at(robot.link_poses(dense))
    moving = model.moving
    r = model.radius.to(wa)
    wa, wb = wa[:, moving].reshape(-1, 3), wb[:, moving].reshape(-1, 3)
    wr = r[moving].repeat(dense.shape[0])
    T = witness.shape[0]
    balls = list(scene.spheres)
    u = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0], dtype=witness.dtype)
    for q in blocked:
        for t in range(T // 4, (3 * T) // 4 + 1, stride):
            a, b = model.capsules_at(robot.link_poses(q[t]))
            a, b = a[moving], b[moving]
            pts = (a[:, None] + u[None, :, None] * (b - a)[:, None]).reshape(-1, 3)
            free = _free_distance(pts, wa, wb, wr) - _MARGIN
            best = int(free.argmax())
            if float(free[best]) < min_radius:
                continue
            balls.append(Sphere(min(float(free[best]), max_radius), tuple(pts[best].tolist())))
    out = Scene(boxes=scene.boxes, spheres=tuple(balls), capsules=scene.capsules)
    check = Clearance(robot, model, out)
    if not bool((motion_clearance(check, witness) >= 0).all()):
        return None
    if any(bool((motion_clearance(check, q) >= 0).all()) for q in blocked):
        return None
    return out
