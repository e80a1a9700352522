"""What the baseline tables measure of position answers: distances from the targets, their summary, and LM from
given random starts as the numerical row beside them."""

from __future__ import annotations

import torch

from ggik import Robot
from ggik.ik.refine import lm_refine

__all__ = ["distances_cm", "distance_stats", "lm_distances_cm"]


def distances_cm(robot: Robot, q: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(B, S) distances [cm] of the EE positions of q (B, S, dof) from target positions (B, 3)."""
    return 100 * (robot.fk(q)[..., :3, 3] - targets[:, None]).norm(dim=-1)


def distance_stats(d: torch.Tensor) -> list:
    """mean [cm], std [cm] and share within 1 cm [%] of distances d [cm], rounded for a table."""
    return [round(float(d.mean()), 2), round(float(d.std()), 2), round(100 * float((d < 1).float().mean()), 1)]


def lm_distances_cm(robot: Robot, targets: torch.Tensor, starts: torch.Tensor) -> torch.Tensor:
    """(B, S) distances [cm] from target positions (B, 3) of the library's LM for position goals run from ``starts``
    (B, S, dof), converged or not."""
    q, _ = lm_refine(robot, targets[:, None].expand(-1, starts.shape[1], -1), starts, kind="position")
    return distances_cm(robot, q, targets)
