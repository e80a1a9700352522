"""Collisions along a joint trajectory: at its waypoints and on the motions between them.

A motion from q_a to q_b is checked at the configurations interpolated linearly in joint space (the way a controller
moves between waypoints) no more than :data:`MOTION_CHECK_STEP` apart in any revolute joint (and 1 cm in any prismatic
one), at most :data:`MAX_MOTION_CHECKS` per motion.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["MOTION_CHECK_STEP", "MAX_MOTION_CHECKS", "motion_clearance"]

MOTION_CHECK_STEP = math.radians(1.0)  #: [rad] the largest joint move between two checked configurations of a motion
MAX_MOTION_CHECKS = 64  #: interpolated configurations per motion at most (moves above 64 deg are invalid anyway)


def motion_clearance(clearance: Clearance, q: torch.Tensor, q_start: torch.Tensor | None = None) -> torch.Tensor:
    """(T,) [m] the lowest signed distance of trajectory q (T, dof) at each waypoint and on the motion arriving at
    it (from waypoint t-1, or from ``q_start`` (dof,) for waypoint 0 when given). Negative: a collision there."""
    at = clearance.min_clearance(q)
    full = q if q_start is None else torch.cat([q_start.to(q)[None], q])
    if full.shape[0] < 2:
        return at
    d = full[1:] - full[:-1]  # (M, dof) the motions
    prismatic = torch.tensor([t == "prismatic" for t in clearance.robot.joint_types], device=q.device)
    step = torch.where(prismatic, 0.01, MOTION_CHECK_STEP).to(q)
    m = int(min(max(math.ceil(float((d.abs() / step).max())), 1), MAX_MOTION_CHECKS))
    if m > 1:
        frac = torch.arange(1, m, dtype=q.dtype, device=q.device) / m  # (m - 1,) inside the motion
        between = full[:-1, None] + frac[None, :, None] * d[:, None]  # (M, m - 1, dof)
        worst = clearance.min_clearance(between).min(-1).values  # (M,)
        arriving = worst if q_start is not None else torch.cat([worst.new_full((1,), math.inf), worst])
        at = torch.minimum(at, arriving)
    return at
