"""Where a robot stands among obstacles, in words: the closest robot-obstacle pair and the closest self-collision
pair of each configuration, by name, and the obstacles that no configuration keeps clear of.

The solver's ``clearance`` is the lowest signed distance over all pairs, obstacles and self pairs together: for a
report that says which is which, :func:`clearance_report` splits them (an empty scene then reports +inf for the
obstacles, and the self clearance alone).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.collision.clearance import Clearance

__all__ = ["ClearanceReport", "clearance_report", "obstacles_in_the_way"]


@dataclass(frozen=True)
class ClearanceReport:
    """The two clearances of N configurations and the pairs that give them.

    Attributes:
        obstacle: (N,) [m] the lowest signed distance between a moving link and an obstacle (+inf without obstacles;
            negative: overlapping by that much).
        obstacle_pair: N labels, the pair of ``obstacle`` (``"panda_link5 - boxes[0]"``; "" without obstacles).
        self: (N,) [m] the lowest signed distance between two links of a self-collision pair (+inf without pairs).
        self_pair: N labels, the pair of ``self`` (``"panda_link4 - panda_link7"``; "" without pairs).
    """

    obstacle: torch.Tensor
    obstacle_pair: list[str]
    self: torch.Tensor
    self_pair: list[str]


def _lowest(d: torch.Tensor, names: list[str]) -> tuple[torch.Tensor, list[str]]:
    """Per row of d (N, P): the lowest value (+inf for P = 0) and its pair's name ("" for P = 0)."""
    if d.shape[-1] == 0:
        return torch.full(d.shape[:1], float("inf"), dtype=d.dtype), [""] * d.shape[0]
    low, at = d.min(-1)
    return low, [names[i] for i in at.tolist()]


def clearance_report(check: Clearance, q: torch.Tensor) -> ClearanceReport:
    """The :class:`ClearanceReport` of configurations q (N, dof) [rad] under ``check``'s robot, model and scene."""
    if q.ndim != 2 or q.shape[-1] != check.robot.dof:
        raise ValueError(f"clearance_report takes q (N, {check.robot.dof}), got {tuple(q.shape)}")
    d = check.distances(q)
    names = check.pair_names()
    k = check.obstacle_pairs
    obstacle, obstacle_pair = _lowest(d[:, :k], names[:k])
    self_d, self_pair = _lowest(d[:, k:], names[k:])
    return ClearanceReport(obstacle, obstacle_pair, self_d, self_pair)


def obstacles_in_the_way(check: Clearance, generator: torch.Generator, samples: int = 256) -> list[str]:
    """The robot-obstacle pairs that overlap in every one of ``samples`` random configurations within the joint
    limits (labels as :meth:`Clearance.pair_names`): an obstacle where the robot always is (inside the base column,
    around the shoulder), which leaves no solution anywhere. Empty when some configuration keeps every obstacle
    clear, or without obstacles."""
    k = check.obstacle_pairs
    if k == 0:
        return []
    q = check.robot.sample_q(samples, generator)
    d = check.distances(q)[:, :k]
    if bool((d >= 0).all(-1).any()):
        return []
    names = check.pair_names()
    return [names[i] for i in (d < 0).all(0).nonzero()[:, 0].tolist()]
