"""How IK results are judged: success rates and distinct solutions (one definition each, used everywhere).

Within-limits is a property of the robot (:meth:`ggik.Robot.within_limits`); pose errors come from
:func:`ggik.kinematics.geometry.pose_errors` (position [m], rotation angle [rad]).
"""

from __future__ import annotations

import math

import torch

from ggik.ik.tolerances import PAPER_TOLERANCES

__all__ = ["success_rate", "distinct_solutions", "count_distinct", "DISTINCT_TOL"]

DISTINCT_TOL = 0.1  #: [rad] two solutions closer than this (joint-space Euclidean norm) are the same solution


def success_rate(
    pos_err: torch.Tensor,
    rot_err: torch.Tensor,
    pos_tol: float = PAPER_TOLERANCES.pos_tol,
    rot_tol_deg: float = math.degrees(PAPER_TOLERANCES.rot_tol),
) -> float:
    """Fraction of problems (rows of (P, S) errors [m], [rad]) with at least one sample within both tolerances
    (``pos_tol`` [m], ``rot_tol_deg`` [degrees]; the defaults are the GGIK paper's 1 cm and 1 degree,
    :data:`ggik.ik.tolerances.PAPER_TOLERANCES`)."""
    ok = (pos_err < pos_tol) & (rot_err < torch.deg2rad(torch.tensor(rot_tol_deg, dtype=rot_err.dtype)))
    return ok.any(-1).to(torch.float64).mean().item()


def distinct_solutions(
    q: torch.Tensor, keep: torch.Tensor, unbounded: torch.Tensor, limit: int | None = None, tol: float = DISTINCT_TOL
) -> list[int]:
    """Indices of distinct solutions among the rows of ``q`` (S, dof) [rad], greedily in row order.

    A row is taken when ``keep`` (S,) is true for it and its joint-space Euclidean distance to every row
    taken before it is at least ``tol`` [rad]; differences of unbounded (continuous) joints, ``unbounded``
    (dof,) bool, are wrapped to [-pi, pi]. Rows sorted best first give the best distinct solutions.
    At most ``limit`` indices (all when None).
    """
    if q.ndim != 2 or keep.shape != q.shape[:1] or unbounded.shape != q.shape[1:]:
        raise ValueError(
            f"distinct_solutions takes q (S, dof), keep (S,), unbounded (dof,); got {tuple(q.shape)}, "
            f"{tuple(keep.shape)}, {tuple(unbounded.shape)}"
        )
    taken: list[int] = []
    for k in range(q.shape[0]):
        if not bool(keep[k]):
            continue
        if taken:
            d = q[taken] - q[k]
            d = torch.where(unbounded, torch.atan2(torch.sin(d), torch.cos(d)), d)
            if float(d.norm(dim=-1).min()) < tol:
                continue
        taken.append(k)
        if limit is not None and len(taken) == limit:
            break
    return taken


def count_distinct(
    q: torch.Tensor, keep: torch.Tensor, unbounded: torch.Tensor, tol: float = DISTINCT_TOL
) -> torch.Tensor:
    """(P,) float64: the number of :func:`distinct_solutions` of each goal of ``q`` (P, S, dof) with ``keep`` (P, S)."""
    return torch.tensor(
        [len(distinct_solutions(q[p], keep[p], unbounded, tol=tol)) for p in range(q.shape[0])], dtype=torch.float64
    )
