"""LM with obstacles, in two phases, each on the backend :func:`ggik.ik.lm.select.select_backend` chooses.

First plain LM from every start (any backend); then the elements to redo run again from where they ended with the
clearance rows of :class:`ggik.collision.Clearance` beside the goal's, on a backend that takes them
(:data:`ggik.ik.lm.select.KEEPS_CLEAR`; ``select_backend(..., clearance=True)``). A start that plain LM solves clear of
the obstacles costs what it costs without them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.lm.select import allowed_backends, select_backend

if TYPE_CHECKING:  # ggik.collision imports the kinematics only; the solver takes its Clearance as an argument
    from ggik.collision import Clearance

__all__ = ["solve_with_clearance", "clear_of_obstacles"]


def solve_with_clearance(problem: LMProblem, clearance: Clearance) -> LMOutcome:
    """Both phases on ``problem`` (:func:`ggik.ik.refine.lm_refine_checked` describes them), each on the backend that
    the problem's ``cfg.lm_backends`` and :func:`~ggik.ik.lm.select.select_backend` choose. ValueError before any LM
    runs when ``cfg.lm_backends`` allows no backend that takes clearance rows."""
    prefer = problem.chain.cfg.lm_backends
    allowed_backends(prefer, clearance=True)  # the second phase's backends: checked before the first runs
    outcome = select_backend(problem, prefer=prefer).solve(problem)
    return clear_of_obstacles(problem, outcome, clearance)


def clear_of_obstacles(problem: LMProblem, outcome: LMOutcome, clearance: Clearance) -> LMOutcome:
    """The second phase of LM with obstacles, on the first phase's ``outcome``: the elements to redo run again from
    where they ended, with the clearance rows, on the backend ``select_backend(..., clearance=True)`` chooses for them
    (``cfg.lm_backends`` allowing)."""
    cfg, starts = problem.chain.cfg, problem.starts
    q, iters, pos, rot = outcome
    reached = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
    done = reached & clearance.collision_free(q)
    # stop_at_first: every start of a goal without a clear solution (the others were cut short); otherwise those that
    # reached the pose in collision (a start plain LM could not bring to the pose in its budget is left as it is)
    redo = ~done.view(-1, starts).any(-1).repeat_interleave(starts) if starts else reached & ~done
    idx = redo.nonzero()[:, 0]
    if idx.numel():
        again = problem.subset(idx, q[idx])
        q2, it2, pos2, rot2 = select_backend(again, prefer=cfg.lm_backends, clearance=True).solve(again, clearance)
        q, iters, pos, rot = q.clone(), iters.clone(), pos.clone(), rot.clone()
        q[idx], pos[idx], rot[idx] = q2, pos2, rot2
        iters[idx] += it2
    return LMOutcome(q, iters, pos, rot)
