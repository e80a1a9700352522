"""Local IK refinement: batched Levenberg-Marquardt (torch; small CPU batches compiled or numpy), and SLSQP (scipy).

Both minimise the end-effector pose error of ``robot`` for goals ``T_goal`` in the base-link frame from starts
(random, or GGIK samples) within the joint limits (continuous joints unbounded). Errors: position [m] and rotation
angle [rad]; a solution is *converged* when both are below the tolerances (default 1 mm and 0.01 rad).

Goal kinds (``kind=``, :mod:`ggik.graph.goal_kinds`): ``"pose"`` (6 residual rows), ``"position+axis"`` (5 rows:
the position and the 2 components of the rotation taking the tool axis onto the goal axis, so the roll about the
axis is free; the rotation error is the angle between the axes) and ``"position"`` (3 rows; rotation error 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ggik.errors import GoalError
from ggik.graph import Goals
from ggik.graph.goal_kinds import check_goal_kind, goal_errors, goal_poses, tool_axis
from ggik.ik import lm_compiled
from ggik.ik.lm_core import damped, held_joints, next_damping
from ggik.ik.lm_numpy import NUMPY_MAX_ELEMENTS, lm_numpy
from ggik.ik.refine_config import RefineConfig
from ggik.ik.residuals import (
    goal_axis_basis,
    goal_residual,
    pose_residual,
    pose_row_weights,
    residual_errors,
    residual_rows,
    weighted_rows,
)
from ggik.kinematics.geometry import broadcast_shapes
from ggik.kinematics.robot import Robot

if TYPE_CHECKING:  # ggik.collision imports the kinematics only; the solver takes its Clearance as an argument
    from ggik.collision import Clearance

__all__ = [
    "RefineInfo",
    "lm_refine",
    "lm_refine_checked",
    "slsqp_refine",
    "slsqp_refine_checked",
    "slsqp_objective",
    "pose_residual",
    "goal_residual",
    "residual_rows",
    "residual_errors",
    "goal_axis_basis",
]


@dataclass
class RefineInfo:
    """Per-element outcome (shapes = the batch shape of the inputs)."""

    converged: torch.Tensor  #: bool
    iterations: torch.Tensor  #: long, iterations used until convergence (or the budget)
    pos_err: torch.Tensor  #: final position error [m]
    rot_err: (
        torch.Tensor
    )  #: final rotation error [rad]: the angle between the tool axes for "position+axis", 0 for "position"


def _goal_input(robot: Robot, T_goal, kind: str | None) -> tuple[torch.Tensor, str, torch.Tensor]:
    """(canonical goal poses, kind, tool axis in the EE frame) from a pose/position/pair or :class:`Goals`."""
    if isinstance(T_goal, Goals):
        if kind is not None and check_goal_kind(kind) != T_goal.kind:
            raise GoalError(f"goals of kind {T_goal.kind!r} given with kind={kind!r}")
        return T_goal.in_base, T_goal.kind, tool_axis(robot)
    kind = check_goal_kind(kind)
    axis = tool_axis(robot)
    return goal_poses(T_goal, kind, axis), kind, axis


def _batch_shape(q: torch.Tensor, T_goal: torch.Tensor) -> torch.Size:
    """Broadcast batch shape of q (..., dof) and T_goal (..., 4, 4); ValueError when they do not broadcast."""
    try:
        return broadcast_shapes(q.shape[:-1], T_goal.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch shapes of q {tuple(q.shape)} and T_goal {tuple(T_goal.shape)} do not broadcast "
            f"({tuple(q.shape[:-1])} vs {tuple(T_goal.shape[:-2])})"
        ) from None


def _limits(robot: Robot, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    inf = torch.tensor(float("inf"), dtype=like.dtype, device=like.device)
    lo = torch.where(robot.limited.to(like.device), robot.lower.to(like), -inf)
    hi = torch.where(robot.limited.to(like.device), robot.upper.to(like), inf)
    return lo, hi


def lm_refine(
    robot: Robot, T_goal, q0: torch.Tensor, cfg: RefineConfig | None = None, kind: str | None = None
) -> tuple[torch.Tensor, RefineInfo]:
    """Batched Levenberg-Marquardt from starts ``q0`` (..., dof) towards goals ``T_goal`` (..., 4, 4) (broadcast).

    ``kind`` (None: ``"pose"``, or the kind of a :class:`ggik.graph.Goals` passed as ``T_goal``): the goal kind, whose
    inputs are those of :func:`ggik.graph.goal_kinds.goal_poses` (a position (..., 3) for ``"position"``, a pair
    (position, axis) for ``"position+axis"``, or a pose of which only that part is read) and whose residual is
    :func:`goal_residual` (3, 5 or 6 rows).

    Each iteration solves ``(J^T J + lambda diag(J^T J) + lambda I) dq = J^T e`` for every element at
    once; a step that lowers the error is taken and lambda shrinks, otherwise lambda grows. Joint
    values are clamped into the limits after each step (projected LM), and a joint sitting on a limit
    whose descent direction points outward is left out of that step (so the others can still move). Elements that
    meet the tolerances stop changing (early stop per element) and leave the working set: an iteration costs in
    proportion to the elements still running, not to the batch. Returns (q (..., dof), RefineInfo).
    """
    q = robot.check_q(q0)
    T_goal, kind, axis = _goal_input(robot, T_goal, kind)
    return lm_refine_checked(robot, T_goal, q, cfg, kind, axis)


def lm_refine_checked(
    robot: Robot,
    T_goal: torch.Tensor,
    q0: torch.Tensor,
    cfg: RefineConfig | None = None,
    kind: str = "pose",
    axis: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, RefineInfo]:
    """:func:`lm_refine` of inputs its caller checked once: canonical goal poses ``T_goal`` (..., 4, 4) of ``kind``
    in the base-link frame (``in_base`` of :class:`ggik.graph.Goals`, :func:`ggik.graph.goal_kinds.goal_poses` or
    :func:`ggik.path.solve.check_path_inputs`), starts ``q0`` (..., dof), a floating tensor, and the robot's
    :func:`ggik.graph.goal_kinds.tool_axis` (computed when None). Nothing is validated again: the solver's
    strategies and path following call this in their inner loops.

    ``clearance`` (:class:`ggik.collision.Clearance`): obstacles and self-collision, in two phases. First plain LM from
    every start; then the elements that reached the pose in collision (with ``stop_at_first``: all starts of the goals
    without a collision-free solution, as the first phase cut them short) run again from where they ended, with the
    clearance rows ``max(0, margin - distance)`` beside the goal's (:meth:`~ggik.collision.Clearance.hinge`), until
    their pose is within the tolerances and they are collision-free (or a second budget ends). A start that plain LM
    solves clear of the obstacles costs what it costs without them. ``RefineInfo.converged`` reports the pose alone
    (the caller reads the clearances of the result); ``iterations`` counts both phases."""
    cfg = cfg or RefineConfig()
    q = q0.clone()
    axis = tool_axis(robot) if axis is None else axis
    T_goal, axis = T_goal.to(q), axis.to(q)
    batch = _batch_shape(q, T_goal)
    n = batch.numel()
    q = q.expand(batch + (robot.dof,)).reshape(n, robot.dof).clone()
    goal = T_goal.expand(batch + (4, 4)).reshape(n, 4, 4)
    lo, hi = _limits(robot, q)
    q = torch.maximum(torch.minimum(q, hi), lo)
    # per-goal constant, computed once: the basis of position+axis goals (an empty stand-in for the other kinds)
    basis = goal_axis_basis(goal, axis) if kind == "position+axis" else goal[:, :0, :0]
    starts = batch[-1] if cfg.stop_at_first and len(batch) else 0  # the starts of one goal (consecutive elements)
    small = _small_batch_solver(q, n)
    if small is not None:  # per-op overhead: the compiled kernel, or numpy
        arrays = (t.detach().numpy() for t in (goal, q, lo, hi, axis, basis))
        flat = tuple(
            torch.from_numpy(a) for a in small(robot.chain_constants(), *arrays, kind=kind, starts=starts, cfg=cfg)
        )
    else:
        flat = _lm_flat(robot, goal, q, lo, hi, basis, axis, kind, cfg, starts)
    if clearance is not None:
        flat = _clear_of_obstacles(robot, goal, lo, hi, basis, axis, kind, cfg, starts, clearance, *flat)
    return _outcome(*flat, batch=batch, cfg=cfg, dof=robot.dof)


def _small_batch_solver(q: torch.Tensor, n: int) -> Callable[..., tuple] | None:
    """Small float64 CPU batches (per-op overhead): compiled if numba is there, else numpy; None: torch's LM."""
    if q.device.type != "cpu" or q.dtype != torch.float64:
        return None
    if lm_compiled.COMPILED_MIN_ELEMENTS <= n <= lm_compiled.COMPILED_MAX_ELEMENTS and lm_compiled.available():
        return lm_compiled.lm_compiled
    return lm_numpy if n <= NUMPY_MAX_ELEMENTS else None


def _clear_of_obstacles(
    robot: Robot,
    goal: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
    basis: torch.Tensor,
    axis: torch.Tensor,
    kind: str,
    cfg: RefineConfig,
    starts: int,
    clearance: Clearance,
    q: torch.Tensor,
    iters: torch.Tensor,
    pos: torch.Tensor,
    rot: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The second phase of :func:`lm_refine_checked` with obstacles, on its flat first-phase results."""
    reached = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
    done = reached & clearance.collision_free(q)
    # stop_at_first: every start of a goal without a clear solution (the others were cut short); otherwise those that
    # reached the pose in collision (a start plain LM could not bring to the pose in its budget is left as it is)
    redo = ~done.view(-1, starts).any(-1).repeat_interleave(starts) if starts else reached & ~done
    idx = redo.nonzero()[:, 0]
    if idx.numel():
        q2, it2, pos2, rot2 = _lm_flat(robot, goal[idx], q[idx], lo, hi, basis[idx], axis, kind, cfg, 0, clearance)
        q, iters, pos, rot = q.clone(), iters.clone(), pos.clone(), rot.clone()
        q[idx], pos[idx], rot[idx] = q2, pos2, rot2
        iters[idx] += it2
    return q, iters, pos, rot


def _lm_flat(
    robot: Robot,
    goal: torch.Tensor,
    q: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
    basis: torch.Tensor,
    axis: torch.Tensor,
    kind: str,
    cfg: RefineConfig,
    starts: int,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The torch LM loop of :func:`lm_refine_checked` on flat elements: goals (n, 4, 4), starts q (n, dof) within the
    limits (lo, hi) (dof,), the goals' basis (n, ...), ``starts`` > 0: stop a goal's consecutive ``starts`` elements
    at their first converged one; ``clearance``: its rows beside the goal's. Returns (q, iterations, pos, rot)."""
    n = q.shape[0]
    q = q.clone()
    row_w = pose_row_weights(kind, cfg.rot_weight, q)
    F, T = robot.joint_frames(q, trusted=True)  # the joint frames give the Jacobian without a second FK pass
    e = goal_residual(T, goal, cfg.rot_weight, kind, axis, basis)
    pos, rot = residual_errors(e, kind, cfg.rot_weight)
    iters = torch.zeros(n, dtype=torch.long, device=q.device)
    running = (pos >= cfg.pos_tol) | (rot >= cfg.rot_tol)
    D, JD = clearance.rows(q) if clearance is not None else (q[:, :0], q[:, :0, None].expand(n, 0, robot.dof))
    if clearance is not None:
        running |= ~clearance.settled(D)
    solved = (~running).view(-1, starts).any(-1) if starts else None  # (goals,) one start converged
    if solved is not None:
        running &= ~solved.repeat_interleave(starts)
    active = running.nonzero()[:, 0]  # the working set: indices into the batch
    qa, Fa, Ta, Tg, Ba, pos_a, rot_a, e, Da, JDa = (t[active] for t in (q, F, T, goal, basis, pos, rot, e, D, JD))
    cost = (e * e).sum(-1) + _hinge_cost(clearance, Da)
    lam = torch.full(active.shape, cfg.damping, dtype=q.dtype, device=q.device)
    for _ in range(cfg.max_iters):
        if active.numel() == 0:
            break
        B = Ba if kind == "position+axis" else None
        J = weighted_rows(robot.jacobian_at(Fa, Ta), kind, cfg.rot_weight, B, row_w)  # rows matching the residual
        ef = e
        if clearance is not None:  # the clearance rows below the goal's
            eh, Jh = clearance.hinge(Da, JDa)
            J, ef = torch.cat([J, Jh], -2), torch.cat([e, eh], -1)
        # Active set: a joint on a limit whose descent direction points outward is held for this step.
        g = (J.transpose(-1, -2) @ ef[..., None])[..., 0]
        held = held_joints(qa, lo, hi, g)
        J = J * (~held)[..., None, :].to(J.dtype)
        A = damped(J.transpose(-1, -2) @ J, lam)
        dq = torch.linalg.solve_ex(A, torch.where(held, 0.0, g)[..., None])[0][..., 0]  # A is positive definite
        q_new = torch.maximum(torch.minimum(qa + dq, hi), lo)
        F_new, T_new = robot.joint_frames(q_new, trusted=True)
        e_new = goal_residual(T_new, Tg, cfg.rot_weight, kind, axis, B)
        D_new, JD_new = clearance.rows(q_new) if clearance is not None else (Da, JDa)
        cost_new = (e_new * e_new).sum(-1) + _hinge_cost(clearance, D_new)
        better = cost_new < cost
        if clearance is not None:
            Da = torch.where(better[:, None], D_new, Da)
            JDa = torch.where(better[:, None, None], JD_new, JDa)
        qa = torch.where(better[:, None], q_new, qa)
        Fa = torch.where(better[:, None, None, None], F_new, Fa)
        Ta = torch.where(better[:, None, None], T_new, Ta)
        e = torch.where(better[:, None], e_new, e)
        cost = torch.where(better, cost_new, cost)
        lam = next_damping(lam, better)
        iters[active] += 1
        pos_a, rot_a = residual_errors(e, kind, cfg.rot_weight)
        keep = (pos_a >= cfg.pos_tol) | (rot_a >= cfg.rot_tol)
        if clearance is not None:
            keep |= ~clearance.settled(Da)
        if solved is not None:  # a goal's other starts stop with its first converged one
            solved[active[~keep] // starts] = True
            keep &= ~solved[active // starts]
        if not bool(keep.all()):  # converged elements leave the working set
            out = ~keep
            q[active[out]], pos[active[out]], rot[active[out]] = qa[out], pos_a[out], rot_a[out]
            active, qa, Fa, Ta, Tg, Ba, e, cost, lam, pos_a, rot_a, Da, JDa = (
                t[keep] for t in (active, qa, Fa, Ta, Tg, Ba, e, cost, lam, pos_a, rot_a, Da, JDa)
            )
    q[active], pos[active], rot[active] = qa, pos_a, rot_a  # those still running at the budget's end
    return q, iters, pos, rot


def _hinge_cost(clearance: Clearance | None, D: torch.Tensor) -> torch.Tensor | float:
    """The clearance rows' share of LM's cost (0 without obstacles)."""
    return 0.0 if clearance is None else clearance.hinge_cost(D)


def _outcome(q, iters, pos, rot, *, batch: torch.Size, cfg: RefineConfig, dof: int) -> tuple[torch.Tensor, RefineInfo]:
    """(q (batch..., dof), RefineInfo) of the flat per-element results (q (n, dof); iterations, errors (n,)) of LM."""
    done = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
    info = RefineInfo(done.reshape(batch), iters.reshape(batch), pos.reshape(batch), rot.reshape(batch))
    return q.reshape(batch + (dof,)), info


def slsqp_objective(
    robot: Robot, q, T_goal, rot_weight: float, kind: str = "pose", axis_in_ee: torch.Tensor | None = None
) -> tuple[float, np.ndarray]:
    """The SLSQP objective of one element and its exact gradient: ``(f, grad (dof,))``.

    ``f = |p - p_goal|^2 + w^2 (3 - trace(R_goal^T R))`` (smooth; ~ w^2 angle^2 near the goal) and
    ``grad = 2 J_v^T (p - p_goal) + w^2 J_w^T a`` from the geometric Jacobian, a = (M21 - M12,
    M02 - M20, M10 - M01) for M = R R_goal^T. ``"position"``: ``|p - p_goal|^2`` alone; ``"position+axis"``:
    ``|p - p_goal|^2 + w^2 |a - g|^2`` for the tool axes a = R t, g = R_goal t (t = ``axis_in_ee``), gradient
    ``2 J_v^T (p - p_goal) - 2 w^2 J_w^T (a x g)``. ``q`` (dof,) and ``T_goal`` (4, 4): numpy arrays or
    tensors, evaluated in float64 on the CPU.
    """

    qt = torch.as_tensor(np.asarray(q, dtype=np.float64))
    Tg = np.asarray(T_goal.detach().cpu() if isinstance(T_goal, torch.Tensor) else T_goal, dtype=np.float64)
    T = robot.fk(qt).numpy()
    J = robot.jacobian(qt).numpy()
    dp = T[:3, 3] - Tg[:3, 3]
    w2 = rot_weight**2
    kind = check_goal_kind(kind)
    if kind == "position":
        return float(dp @ dp), 2.0 * J[:3].T @ dp
    if kind == "position+axis":
        t = np.asarray(axis_in_ee, dtype=np.float64)
        a, g = T[:3, :3] @ t, Tg[:3, :3] @ t
        return float(dp @ dp + w2 * ((a - g) @ (a - g))), 2.0 * J[:3].T @ dp - 2.0 * w2 * J[3:].T @ np.cross(a, g)
    M = T[:3, :3] @ Tg[:3, :3].T
    a = np.array([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]])
    f = dp @ dp + w2 * (3.0 - np.trace(Tg[:3, :3].T @ T[:3, :3]))
    g = 2.0 * J[:3].T @ dp + w2 * J[3:].T @ a
    return f, g


def slsqp_refine(
    robot: Robot, T_goal, q0: torch.Tensor, cfg: RefineConfig | None = None, kind: str | None = None
) -> tuple[torch.Tensor, RefineInfo]:
    """SLSQP (scipy) per element, as in the GGIK paper: at most ``slsqp_max_iters`` iterations, bounds = limits.
    Goals and ``kind`` as in :func:`lm_refine`.

    Objective ``|p - p_goal|^2 + w^2 (3 - trace(R_goal^T R))`` (smooth; ~ w^2 angle^2 near the goal)
    with its exact gradient from the geometric Jacobian (:func:`slsqp_objective`). Runs on CPU in float64.
    """
    q0 = robot.check_q(q0)
    T_goal, kind, axis = _goal_input(robot, T_goal, kind)
    return slsqp_refine_checked(robot, T_goal, q0, cfg, kind, axis)


def slsqp_refine_checked(
    robot: Robot,
    T_goal: torch.Tensor,
    q0: torch.Tensor,
    cfg: RefineConfig | None = None,
    kind: str = "pose",
    axis: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, RefineInfo]:
    """:func:`slsqp_refine` of inputs its caller checked once (as :func:`lm_refine_checked`). ``clearance``: obstacles
    as SLSQP inequality constraints, every pair's distance at least its margin
    (``Clearance.margins``), with their Jacobian (:meth:`ggik.collision.Clearance.rows`)."""
    from scipy.optimize import minimize

    cfg = cfg or RefineConfig()
    axis = tool_axis(robot) if axis is None else axis
    q0 = q0.detach().to("cpu", torch.float64)
    T_goal = T_goal.detach().to("cpu", torch.float64)
    batch = _batch_shape(q0, T_goal)
    q0 = q0.expand(batch + (robot.dof,)).reshape(-1, robot.dof)
    goals = T_goal.expand(batch + (4, 4)).reshape(-1, 4, 4)
    lo, hi = _limits(robot, q0)
    bounds = [
        (None if not torch.isfinite(a) else float(a), None if not torch.isfinite(b) else float(b))
        for a, b in zip(lo, hi)
    ]
    lower = [-np.inf if b[0] is None else b[0] for b in bounds]
    upper = [np.inf if b[1] is None else b[1] for b in bounds]
    out, iters = [], []
    constraints: Any = [] if clearance is None else [_clearance_constraint(clearance)]
    for qi, Tg in zip(q0, goals):
        fun = partial(slsqp_objective, robot, T_goal=Tg.numpy(), rot_weight=cfg.rot_weight, kind=kind, axis_in_ee=axis)
        x0 = np.clip(qi.numpy(), lower, upper)
        res = minimize(
            fun,
            x0,
            jac=True,
            method="SLSQP",
            bounds=bounds,
            constraints=constraints,
            options={"maxiter": cfg.slsqp_max_iters, "ftol": cfg.slsqp_ftol},
        )
        out.append(torch.from_numpy(res.x))
        iters.append(int(res.nit))
    q = torch.stack(out).reshape(batch + (robot.dof,))
    pos, rot = goal_errors(robot.fk(q), T_goal.expand(batch + (4, 4)), kind, axis)
    info = RefineInfo(
        converged=(pos < cfg.pos_tol) & (rot < cfg.rot_tol),
        iterations=torch.tensor(iters, dtype=torch.long).reshape(batch),
        pos_err=pos,
        rot_err=rot,
    )
    return q, info


def _clearance_constraint(clearance: Clearance) -> dict:
    """scipy's form of ``distance - margin >= 0`` for every pair of ``clearance``, with its Jacobian (P, dof)."""
    margins = clearance.margins.numpy()

    def rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d, J = clearance.rows(torch.from_numpy(np.asarray(x, dtype=np.float64))[None])
        return d[0].numpy() - margins, J[0].numpy()

    return {"type": "ineq", "fun": lambda x: rows(x)[0], "jac": lambda x: rows(x)[1]}
