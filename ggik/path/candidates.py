"""IK candidates for every waypoint of a path, coherent along it (the layers of :mod:`ggik.path.search`).

A *track* is one seed per waypoint (T, dof) from which batched LM refines every waypoint at once:

* :func:`model_tracks`: GGIK samples with the same sampling noise at every waypoint (one fixed latent draw per
  track), so that a track's samples move continuously with the goal; the model runs on every ``stride``-th
  waypoint (all of them in one batched pass) and the joint values are interpolated in between;
* :func:`random_tracks`: one uniform configuration per track, the seed of every waypoint (no model);
* :func:`sweep`: continuation, sequential along the path: each waypoint's seed is the previous waypoint's value
  moved by damped Gauss-Newton steps towards the new pose (a predictor; LM corrects all waypoints afterwards).

:func:`refine_tracks` runs :func:`ggik.ik.refine.lm_refine` on all T x K seeds in one call and marks the
candidates that reach the tolerances inside the joint limits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from ggik.graph import Goals
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.lm.core import damped
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig
from ggik.ik.residuals import pose_weights
from ggik.ik.sampling import SamplingOptions, sample_joint_angles, shared_noise
from ggik.kinematics.robot import Robot
from ggik.nn.cvae import GGIKModel
from ggik.path.search import JointScale, jumps, wrap_difference

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["anchors", "interpolate", "model_tracks", "random_tracks", "sweep", "refine_tracks", "distinct"]


def anchors(T: int, stride: int) -> torch.Tensor:
    """(A,) long: every ``stride``-th waypoint index of a path of T waypoints, the last one always included."""
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    idx = list(range(0, T, stride))
    if idx[-1] != T - 1:
        idx.append(T - 1)
    return torch.tensor(idx, dtype=torch.long)


def interpolate(q: torch.Tensor, at: torch.Tensor, T: int, scale: JointScale) -> torch.Tensor:
    """(T, K, dof) joint values linear in the waypoint index between values ``q`` (A, K, dof) at waypoints ``at`` (A,)
    (increasing, first 0, last T - 1); continuous joints take the short way round."""
    if at.numel() == T:
        return q
    t = torch.arange(T)
    left = torch.searchsorted(at, t, right=True) - 1  # the last anchor at or before t
    right = (left + 1).clamp(max=at.numel() - 1)
    f = ((t - at[left]) / (at[right] - at[left]).clamp(min=1)).to(torch.float64)[:, None, None]
    return q[left] + f * wrap_difference(q[right] - q[left], scale)


@torch.no_grad()
def model_tracks(
    model: GGIKModel,
    graph: RobotGraph,
    poses: torch.Tensor | Goals,
    tracks: int,
    stride: int,
    scale: JointScale,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """(T, tracks, dof) seeds: sample k of every sampled waypoint decodes the same noise (:func:`shared_noise`); the
    model runs on the waypoints of :func:`anchors` (one batched pass) and :func:`interpolate` fills the rest.
    ``poses``: (T, 4, 4) base-link frame, or the path's checked :class:`Goals` (not checked again)."""
    at = anchors(poses.shape[0], stride)
    noise = shared_noise(model, graph, tracks, generator)
    raw = sample_joint_angles(model, graph, poses[at], tracks, options=SamplingOptions(noise=noise))
    return interpolate(raw.q, at, poses.shape[0], scale)


def random_tracks(robot: Robot, T: int, tracks: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """(T, tracks, dof) seeds: one configuration uniform within the limits per track, the same at every waypoint."""
    return robot.sample_q(tracks, generator)[None].expand(T, tracks, robot.dof)


def sweep(
    robot: Robot,
    poses: torch.Tensor,
    q0: torch.Tensor,
    start: torch.Tensor,
    direction: torch.Tensor,
    steps: int = 1,
    rot_weight: float = 0.1,
    damping: float = 1e-4,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Continuation predictor: track k starts from ``q0[k]`` (K, dof) at waypoint ``start[k]`` (K,) and walks the
    path in ``direction[k]`` (+1 forward, -1 backward) to its end; all tracks advance together, one waypoint per step.

    Each next waypoint's seed is the previous seed after ``steps`` damped Gauss-Newton steps towards its pose
    (``(J^T J + damping (diag + I)) dq = J^T e``, clamped into the limits): one small batched solve per step. The
    rotation residual is the axial vector sin(angle) axis (cheaper than :func:`ggik.ik.refine.pose_residual`'s
    rotation vector, and the same for the small rotations between waypoints).
    Returns (seeds (T, K, dof), visited (T, K) bool); unvisited seeds are 0.
    """
    T, K = poses.shape[0], q0.shape[0]
    lo = torch.where(robot.limited, robot.lower, -torch.inf)
    hi = torch.where(robot.limited, robot.upper, torch.inf)
    w = pose_weights(rot_weight, poses.to(torch.float64))
    out = torch.zeros((T, K, robot.dof), dtype=torch.float64)
    visited = torch.zeros((T, K), dtype=torch.bool)
    q = torch.maximum(torch.minimum(q0.to(torch.float64), hi), lo)
    t, cols = start.clone(), torch.arange(K)
    out[t, cols], visited[t, cols] = q, True
    length = int(torch.where(direction > 0, T - 1 - start, start).max()) if K else 0
    for _ in range(length):
        t = t + direction
        on = (t >= 0) & (t < T)
        goal = poses[t.clamp(0, T - 1)]
        for _ in range(steps):
            F, Tq = robot.joint_frames(q)
            M = goal[..., :3, :3] @ Tq[..., :3, :3].transpose(-1, -2)  # small rotations: axial vector ~ rotation vector
            axial = torch.stack(
                [M[..., 2, 1] - M[..., 1, 2], M[..., 0, 2] - M[..., 2, 0], M[..., 1, 0] - M[..., 0, 1]], -1
            )
            e = torch.cat([goal[..., :3, 3] - Tq[..., :3, 3], (0.5 * rot_weight) * axial], -1)
            J = robot.jacobian_at(F, Tq) * w
            A = damped(J.transpose(-1, -2) @ J, damping)
            q = q + torch.linalg.solve(A, (J.transpose(-1, -2) @ e[..., None]))[..., 0]
            q = torch.maximum(torch.minimum(q, hi), lo)
        out[t[on], cols[on]], visited[t[on], cols[on]] = q[on], True
    return out, visited


def refine_tracks(
    robot: Robot,
    poses: torch.Tensor,
    seeds: torch.Tensor,
    cfg: RefineConfig,
    mask: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """LM from every seed (T, K, dof) to its waypoint's pose (T, 4, 4), all in one batched call (only the seeds
    where ``mask`` (T, K) is true, when given; the others stay as they are and are invalid). The poses are taken
    as checked (:func:`ggik.path.solve.check_path_inputs`) and the seeds as joint values this module made:
    :func:`ggik.ik.refine.lm_refine_checked` validates neither again. ``clearance``: obstacles, kept clear by LM.

    Returns (q (T, K, dof), valid (T, K) bool: within ``cfg``'s tolerances and the joint limits, and collision-free
    with ``clearance``)."""
    if mask is None:
        mask = torch.ones(seeds.shape[:2], dtype=torch.bool)
    t, k = mask.nonzero(as_tuple=True)
    q, valid = seeds.clone(), torch.zeros(seeds.shape[:2], dtype=torch.bool)
    if t.numel() == 0:
        return q, valid
    qr, info = lm_refine_checked(robot, poses[t], seeds[t, k], cfg, clearance=clearance)
    ok = info.converged & robot.within_limits(qr)
    if clearance is not None:
        ok &= clearance.collision_free(qr)
    q[t, k], valid[t, k] = qr, ok
    return q, valid


def distinct(q: torch.Tensor, valid: torch.Tensor, limit: int, scale: JointScale, tol: float = 1.0) -> torch.Tensor:
    """(k,) indices of at most ``limit`` valid rows of q (K, dof) that are pairwise more than ``tol`` allowed moves
    apart (normalised, continuous joints wrapped), greedily in row order: the starts of continuation sweeps."""
    taken: list[int] = []
    qn = q.numpy()
    for k in np.flatnonzero(valid.numpy()):
        if taken and float(jumps(qn[taken], qn[k], scale).min()) <= tol:
            continue
        taken.append(int(k))
        if len(taken) == limit:
            break
    return torch.tensor(taken, dtype=torch.long)
