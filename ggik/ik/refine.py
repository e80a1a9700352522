"""Local IK refinement: batched Levenberg-Marquardt (:mod:`ggik.ik.lm`: torch, numpy or compiled), and SLSQP (scipy).

Both minimise the end-effector pose error of ``robot`` for goals ``T_goal`` in the base-link frame from starts
(random, or GGIK samples) within the joint limits (continuous joints unbounded). Errors: position [m] and rotation
angle [rad]; a solution is *converged* when both are below the tolerances (default 1 mm and 0.01 rad).

Goal kinds (``kind=``, :mod:`ggik.graph.goal_kinds`): ``"pose"`` (6 residual rows), ``"position+axis"`` (5 rows:
the position and the 2 components of the rotation taking the tool axis onto the goal axis, so the roll about the
axis is free; the rotation error is the angle between the axes) and ``"position"`` (3 rows; rotation error 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ggik.errors import GoalError
from ggik.graph import Goals
from ggik.graph.goal_kinds import check_goal_kind, goal_errors, goal_poses, tool_axis
from ggik.ik.lm import LMOutcome, LMProblem, select_backend
from ggik.ik.lm.obstacles import solve_with_clearance
from ggik.ik.lm.problem import batch_shape, limits
from ggik.ik.refine_config import RefineConfig
from ggik.ik.residuals import goal_axis_basis, goal_residual, pose_residual, residual_errors, residual_rows
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
    (the caller reads the clearances of the result); ``iterations`` counts both phases. Each phase runs on the backend
    :func:`ggik.ik.lm.select.select_backend` chooses among ``cfg.lm_backends``, the second among those that take
    clearance rows (:func:`ggik.ik.lm.obstacles.solve_with_clearance`: ValueError when ``cfg.lm_backends`` allows
    none)."""
    problem, batch = LMProblem.build(robot, T_goal, q0, cfg or RefineConfig(), kind, axis)
    if clearance is None:
        outcome = select_backend(problem, prefer=problem.chain.cfg.lm_backends).solve(problem)
    else:  # both phases on the backends select_backend chooses (the second: one that takes clearance rows)
        outcome = solve_with_clearance(problem, clearance)
    return _outcome(outcome, batch, problem.chain.cfg, robot.dof)


def _outcome(outcome: LMOutcome, batch: torch.Size, cfg: RefineConfig, dof: int) -> tuple[torch.Tensor, RefineInfo]:
    """(q (batch..., dof), RefineInfo) of the flat per-element outcome of LM."""
    q, iters, pos, rot = outcome
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
    batch = batch_shape(q0, T_goal)
    q0 = q0.expand(batch + (robot.dof,)).reshape(-1, robot.dof)
    goals = T_goal.expand(batch + (4, 4)).reshape(-1, 4, 4)
    lo, hi = limits(robot, q0)
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
