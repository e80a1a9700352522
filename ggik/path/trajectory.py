"""Trajectory refinement of path following: Levenberg-Marquardt on all waypoints at once.

The unknowns are the whole trajectory q (T, dof). The residuals are the pose errors at every waypoint
(``[p_goal - p; w log(R_goal R^T)]``, as in :func:`ggik.ik.refine.pose_residual`) and a smoothness term
``sqrt(s) (q_{t+1} - q_t) / step`` per joint (``step``: the joint's allowed move, so the term is unit-free;
with a start configuration, also ``q_0 - q_start``). J^T J is block tridiagonal with bandwidth dof, so every
iteration is one banded Cholesky solve of size T * dof (scipy ``solveh_banded``): linear in T. The smoothness
weight s stays while some move is larger than allowed (for at most half the iterations) and then decays
geometrically (it shapes the trajectory early and no longer biases the poses late). With obstacles, every waypoint and
the midpoint of every motion get hinge rows (a midpoint's rows at both ends of its motion, half the derivative at
each), and their clearance margins shrink on the smoothness weight's schedule down to a fraction ``margin_floor`` of
them (a margin is a preference: kept whole, it pulls the poses off their tolerance where the path runs closer to an
obstacle than the margin; a floor keeps the rows pushing past mere contact). Joint values are
clamped into the limits after each step, and a joint sitting on a limit whose descent direction points outward is
held for that step (projected LM, as :func:`ggik.ik.refine.lm_refine`).
Continuous joints are unbounded and their values are taken as unwrapped (:func:`ggik.path.search.unwrap`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ggik.ik.lm.core import damped, held_joints, next_damping
from ggik.ik.refine import pose_residual
from ggik.ik.residuals import pose_weights
from ggik.kinematics.geometry import pose_errors
from ggik.kinematics.robot import Robot
from ggik.path.config import TrajectoryConfig
from ggik.path.motion import motion_clearance
from ggik.path.search import JointScale

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["TrajectoryInfo", "trajectory_refine", "trajectory_check"]


@dataclass
class TrajectoryInfo:
    """What :func:`trajectory_check` found about a trajectory (T waypoints).

    Attributes:
        pos_err: (T,) position errors [m]; rot_err: (T,) rotation errors [rad].
        moves: (T-1, dof) normalised joint moves between consecutive waypoints (1 = the allowed move), or (T, dof)
            with the move from the start configuration first.
        reached: (T,) bool, both errors within the tolerances; within_limits: (T,) bool.
        valid: every waypoint reached and within the limits, no move above 1, and (with obstacles) no collision.
        iterations: LM iterations run (0 for a check alone).
        clearance: (T,) [m] with obstacles, the lowest signed distance at each waypoint and on the motion arriving at
            it (:func:`ggik.path.motion.motion_clearance`); None without.
    """

    pos_err: torch.Tensor
    rot_err: torch.Tensor
    moves: torch.Tensor
    reached: torch.Tensor
    within_limits: torch.Tensor
    valid: bool
    iterations: int = 0
    clearance: torch.Tensor | None = None


def trajectory_check(
    robot: Robot,
    poses: torch.Tensor,
    q: torch.Tensor,
    scale: JointScale,
    cfg: TrajectoryConfig,
    q_start: torch.Tensor | None = None,
    T_ee: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> TrajectoryInfo:
    """Pose errors, normalised moves and validity of trajectory ``q`` (T, dof) [rad or m] for ``poses`` (T, 4, 4) (base
    frame). Moves are plain differences (continuous joints taken as unwrapped: a 2 pi step is a move). ``T_ee``: the
    EE poses FK(q) (T, 4, 4) when the caller has them (saves one FK). ``clearance``: obstacles, checked at the
    waypoints and on the motions between them. ValueError for other shapes."""
    if q.ndim != 2 or q.shape[1] != robot.dof or poses.shape != (q.shape[0], 4, 4):
        raise ValueError(
            f"a trajectory (T, {robot.dof}) and poses (T, 4, 4) are needed, got {tuple(q.shape)} and "
            f"{tuple(poses.shape)}"
        )
    return _judge(robot, poses, q, scale, cfg, q_start, T_ee, clearance)


def _judge(
    robot: Robot,
    poses: torch.Tensor,
    q: torch.Tensor,
    scale: JointScale,
    cfg: TrajectoryConfig,
    q_start: torch.Tensor | None = None,
    T_ee: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> TrajectoryInfo:
    """:func:`trajectory_check` without its shape check (the iterations of :func:`trajectory_refine`)."""
    pos, rot = pose_errors(robot.fk(q) if T_ee is None else T_ee, poses)
    full = q if q_start is None else torch.cat([torch.as_tensor(q_start, dtype=q.dtype)[None], q])
    moves = (full[1:] - full[:-1]) / torch.as_tensor(scale.step, dtype=q.dtype)
    reached = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
    inside = robot.within_limits(q)
    jump_ok = bool((moves.abs() <= 1.0).all()) if moves.numel() else True
    clear = None if clearance is None else motion_clearance(clearance, q, q_start)
    free = clear is None or bool((clear >= 0).all())
    return TrajectoryInfo(
        pos_err=pos,
        rot_err=rot,
        moves=moves,
        reached=reached,
        within_limits=inside,
        valid=bool(reached.all()) and bool(inside.all()) and jump_ok and free,
        clearance=clear,
    )


def _banded(D: np.ndarray, couple: np.ndarray, held: np.ndarray) -> np.ndarray:
    """Upper banded storage (dof + 1, T * dof) of the symmetric matrix with diagonal blocks D (T, dof, dof) and
    ``-couple`` (dof,) between joint d of waypoints t and t + 1; held variables (T * dof,) bool become identity rows."""
    T, n = D.shape[0], D.shape[1]
    u = n
    ab = np.zeros((u + 1, T * n))
    for k in range(n):
        ab[u - k].reshape(T, n)[:, k:] = np.diagonal(D, offset=k, axis1=1, axis2=2)
    ab[0].reshape(T, n)[1:] = -couple
    h = np.flatnonzero(held)
    if h.size:
        ab[:, h] = 0.0
        for k in range(1, u + 1):
            cols = h + k
            ab[u - k, cols[cols < T * n]] = 0.0
        ab[u, h] = 1.0
    return ab


def trajectory_refine(
    robot: Robot,
    poses: torch.Tensor,
    q0: torch.Tensor,
    scale: JointScale,
    cfg: TrajectoryConfig | None = None,
    q_start: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, TrajectoryInfo]:
    """LM on the whole trajectory q0 (T, dof) towards ``poses`` (T, 4, 4) (base frame), as in the module docstring.
    ``clearance``: obstacles; each waypoint gets their hinge rows (:meth:`ggik.collision.Clearance.hinge`, a block of
    its own waypoint: the banded structure stays), and so does the midpoint of each motion, at both its ends (margins
    shrinking with the smoothness weight); validity includes no collision on the motions.

    Stops as soon as the trajectory is valid (:func:`trajectory_check`) or after ``cfg.max_iters`` iterations.
    ``q_start`` (dof,): the configuration the robot starts from (its move onto waypoint 0 is smoothed and checked
    too). Returns (q (T, dof) float64, :class:`TrajectoryInfo`).
    """
    from scipy.linalg import solveh_banded

    cfg = cfg or TrajectoryConfig()
    q = robot.check_q(q0).to(torch.float64).clone()
    if q.ndim != 2 or poses.shape != (q.shape[0], 4, 4):
        raise ValueError(
            f"trajectory_refine takes q0 (T, dof) and poses (T, 4, 4), got {tuple(q.shape)} and {tuple(poses.shape)}"
        )
    T, n = q.shape
    lo, hi = torch.as_tensor(scale.lo), torch.as_tensor(scale.hi)
    q = torch.maximum(torch.minimum(q, hi), lo)
    qs = None if q_start is None else torch.as_tensor(q_start, dtype=torch.float64)
    w = pose_weights(cfg.rot_weight, q)
    inv_step2 = 1.0 / scale.step**2

    def smooth_terms(qn: np.ndarray, s: float) -> tuple[float, np.ndarray, np.ndarray]:
        """(cost, descent direction -grad/2 (T, dof), Laplacian degree (T,)) of the smoothness residuals."""
        full = qn if qs is None else np.concatenate([qs.numpy()[None], qn])
        d = np.diff(full, axis=0)
        dd = s * d * inv_step2
        desc = np.zeros_like(full)
        desc[:-1] += dd
        desc[1:] -= dd
        deg = np.full(full.shape[0], 2.0)
        deg[[0, -1]] = 1.0 if full.shape[0] > 1 else 0.0
        off = full.shape[0] - T
        return float((d * dd).sum()), desc[off:], deg[off:]

    off = 0 if qs is None else 1  # the motions: from q_start (with one) and between consecutive waypoints

    def rows(qt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The clearance distances (T + M, P) and their Jacobian (T + M, P, dof): at the waypoints qt, then at the
        midpoints of the M = T - 1 + off motions (empty without obstacles)."""
        if clearance is None:
            return qt[:, :0], qt[:, :0, None].expand(T, 0, n)
        full = qt if qs is None else torch.cat([qs[None], qt])
        return clearance.rows(torch.cat([qt, 0.5 * (full[:-1] + full[1:])]))

    def hinge(d: torch.Tensor, Jd: torch.Tensor, shrink: float) -> tuple[torch.Tensor, torch.Tensor, float]:
        """Hinge rows (T, 3 P) and their Jacobian (T, 3 P, dof) per waypoint, and their cost, at the distances of
        :func:`rows` with margins times ``shrink``: a waypoint's own rows, then those of the midpoint of the motion
        arriving at it and of the one leaving it (the same residual at both ends of a motion, half its derivative
        at each: the gradient is exact; J^T J leaves out the coupling of the two ends, so the structure stays
        banded). Empty rows without obstacles."""
        if clearance is None:
            return d, Jd, 0.0
        eh, Jh = clearance.hinge(d, Jd, shrink)
        mid, mid_J = eh[T:], 0.5 * Jh[T:]  # (M, P), (M, P, dof)
        none, none_J = eh[:1] * 0.0, Jh[:1] * 0.0
        arriving = (mid, mid_J) if off else (torch.cat([none, mid]), torch.cat([none_J, mid_J]))
        leaving = (torch.cat([mid[off:], none]), torch.cat([mid_J[off:], none_J]))
        stacked = torch.cat([eh[:T], arriving[0], leaving[0]], -1)
        return stacked, torch.cat([Jh[:T], arriving[1], leaving[1]], -2), float((eh * eh).sum())

    F, Tq = robot.joint_frames(q)
    e = pose_residual(Tq, poses, cfg.rot_weight)
    d, Jd = rows(q)
    s, lam, it, shrink = cfg.smooth_weight, cfg.damping, 0, 1.0
    info = trajectory_check(robot, poses, q, scale, cfg, qs, T_ee=Tq, clearance=clearance)
    while not info.valid and it < cfg.max_iters:
        it += 1
        qn = q.numpy()
        s_cost, s_desc, deg = smooth_terms(qn, s)
        eh, Jh, h_cost = hinge(d, Jd, shrink)
        cost = float((e * e).sum()) + s_cost + h_cost
        J = torch.cat([robot.jacobian_at(F, Tq) * w, Jh], -2)
        JtJ = (J.transpose(-1, -2) @ J).numpy()
        g = (J.transpose(-1, -2) @ torch.cat([e, eh], -1)[..., None])[..., 0].numpy() + s_desc
        held = held_joints(qn, scale.lo, scale.hi, g)
        D = damped(JtJ + (s * deg[:, None] * inv_step2)[:, :, None] * np.eye(n), lam)
        dq = solveh_banded(
            _banded(D, s * inv_step2, held.reshape(-1)), np.where(held, 0.0, g).reshape(-1), check_finite=False
        ).reshape(T, n)
        q_new = torch.maximum(torch.minimum(q + torch.from_numpy(dq), hi), lo)
        F_new, T_new = robot.joint_frames(q_new)
        e_new = pose_residual(T_new, poses, cfg.rot_weight)
        d_new, Jd_new = rows(q_new)
        cost_new = float((e_new * e_new).sum()) + smooth_terms(q_new.numpy(), s)[0] + hinge(d_new, Jd_new, shrink)[2]
        if cost_new < cost:
            q, F, Tq, e, lam, d, Jd = q_new, F_new, T_new, e_new, next_damping(lam, True), d_new, Jd_new
            info = _judge(robot, poses, q, scale, cfg, qs, T_ee=Tq, clearance=clearance)
        else:
            lam = next_damping(lam, False)
        if it >= cfg.max_iters // 2 or not bool((info.moves.abs() > 1.0).any()):
            s *= cfg.smooth_decay  # smoothing while a move is too large (half the budget at most), then exact poses
            shrink = max(shrink * cfg.smooth_decay, cfg.margin_floor)  # ... and the clearance margins, to a floor
    info.iterations = it
    return q, info
