"""The LM backend in torch: any device and dtype, large batches, and the clearance rows of obstacles (the one backend
of :data:`ggik.ik.lm.select.KEEPS_CLEAR`).

Each iteration solves the damped normal equations (:func:`ggik.ik.lm.core.damped_step`) for every element still
running at once: a step that lowers the cost is taken and the damping shrinks, otherwise it grows; joint values are
clamped into the limits (projected LM). Elements that meet the tolerances leave the working set, so an iteration costs
in proportion to the elements still running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from ggik.ik.lm.core import FirstSolution, WorkingSet, accept, damped_step, next_damping
from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.residuals import goal_residual, pose_row_weights, residual_errors, weighted_rows

if TYPE_CHECKING:  # ggik.collision imports the kinematics only; the solver takes its Clearance as an argument
    from ggik.collision import Clearance

__all__ = ["solve_torch"]


def solve_torch(problem: LMProblem, clearance: Clearance | None = None) -> LMOutcome:
    """LM on every element of ``problem`` in torch, on its device; ``clearance``: its hinge rows beside the goal's
    (an element runs until its pose is within the tolerances and :meth:`~ggik.collision.Clearance.settled`)."""
    p, c = problem, problem.chain
    cfg, robot = c.cfg, c.robot
    n, kind, w = p.size, c.kind, cfg.rot_weight
    q = p.q0.clone()
    row_w = pose_row_weights(kind, w, q)
    F, T = robot.joint_frames(q, trusted=True)  # the joint frames give the Jacobian without a second FK pass
    e = goal_residual(T, p.goal, w, kind, c.axis, p.basis)
    pos, rot = residual_errors(e, kind, w)
    pos0, rot0 = pos.clone(), rot.clone()
    iters = torch.zeros(n, dtype=torch.long, device=q.device)
    running = (pos >= cfg.pos_tol) | (rot >= cfg.rot_tol)
    D, JD = clearance.rows(q) if clearance is not None else (q[:, :0], q[:, :0, None].expand(n, 0, robot.dof))
    if clearance is not None:
        running |= ~clearance.settled(D)
    first = FirstSolution(~running, p.starts) if p.starts else None
    if first is not None:
        running = first.running(running)
    work = WorkingSet(running, (q, pos, rot))  # the working set: indices into the batch
    qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e, Da, JDa = (
        t[work.active] for t in (q, pos, rot, F, T, p.goal, p.basis, e, D, JD)
    )
    cost = (e * e).sum(-1) + _hinge_cost(clearance, Da)
    lam = torch.full(work.active.shape, cfg.damping, dtype=q.dtype, device=q.device)
    for _ in range(cfg.max_iters):
        if work.active.numel() == 0:
            break
        B = Ba if kind == "position+axis" else None
        J = weighted_rows(robot.jacobian_at(Fa, Ta), kind, w, B, row_w)  # rows matching the residual
        ef = e
        if clearance is not None:  # the clearance rows below the goal's
            eh, Jh = clearance.hinge(Da, JDa)
            J, ef = torch.cat([J, Jh], -2), torch.cat([e, eh], -1)
        q_new = torch.maximum(torch.minimum(qa + damped_step(J, ef, qa, c.lo, c.hi, lam), c.hi), c.lo)
        F_new, T_new = robot.joint_frames(q_new, trusted=True)
        e_new = goal_residual(T_new, Tg, w, kind, c.axis, B)
        D_new, JD_new = clearance.rows(q_new) if clearance is not None else (Da, JDa)
        cost_new = (e_new * e_new).sum(-1) + _hinge_cost(clearance, D_new)
        better = cost_new < cost
        new = (q_new, F_new, T_new, e_new, cost_new, D_new, JD_new)
        qa, Fa, Ta, e, cost, Da, JDa = accept(better, new, (qa, Fa, Ta, e, cost, Da, JDa))
        lam = next_damping(lam, better)
        iters[work.active] += 1
        pos_a, rot_a = residual_errors(e, kind, w)
        keep = (pos_a >= cfg.pos_tol) | (rot_a >= cfg.rot_tol)
        if clearance is not None:
            keep |= ~clearance.settled(Da)
        if first is not None:
            keep = first.keep(work.active, keep)
        running_arrays = (qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e, cost, lam, Da, JDa)
        qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e, cost, lam, Da, JDa = work.leave(keep, running_arrays)
    work.finish((qa, pos_a, rot_a))  # those still running at the budget's end
    if first is not None:  # the starts after a goal's solution, as they were given
        later = first.later()
        q[later], iters[later], pos[later], rot[later] = p.q0[later], 0, pos0[later], rot0[later]
    return LMOutcome(q, iters, pos, rot)


def _hinge_cost(clearance: Clearance | None, D: torch.Tensor) -> torch.Tensor | float:
    """The clearance rows' share of LM's cost (0 without obstacles)."""
    return 0.0 if clearance is None else clearance.hinge_cost(D)
