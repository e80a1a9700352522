"""Measurements the studies share: the median wall time of repeated calls, and strict validity of IK solutions.

Strict-valid (:func:`strict_valid`): FK in float64 within the refinement tolerances of the goal and every joint
within its limits (:meth:`ggik.kinematics.Robot.within_limits`). One call's wall and CPU time:
:func:`ggik.evaluation.tables.timed`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

from ggik.ik.refine_config import RefineConfig
from ggik.kinematics import Robot
from ggik.kinematics.geometry import pose_errors

__all__ = ["WARMUPS", "median_time", "strict_valid"]

WARMUPS = 2  #: untimed calls before each measurement


def median_time(fn: Callable[[], object], repeats: int, warmups: int = WARMUPS) -> tuple[float, float, float]:
    """(median, min, max) wall seconds of ``repeats`` calls of ``fn()`` after ``warmups`` untimed calls."""
    for _ in range(warmups):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def strict_valid(robot: Robot, q: torch.Tensor, T_goal: torch.Tensor, cfg: RefineConfig) -> torch.Tensor:
    """(P, K) bool: FK of q (P, K, dof) within ``cfg.pos_tol`` [m] and ``cfg.rot_tol`` [rad] of T_goal (P, 4, 4), every
    joint inside its limits (NaN rows: no solution, False)."""
    found = torch.isfinite(q).all(-1)
    qz = torch.where(found[..., None], q, torch.zeros_like(q))
    pos, rot = pose_errors(robot.fk(qz), T_goal[:, None])
    return found & (pos < cfg.pos_tol) & (rot < cfg.rot_tol) & robot.within_limits(qz)
