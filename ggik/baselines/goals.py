"""The goals of the learned baselines: the poses a caller passes, and the network inputs made from them."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["goal_poses", "goal_features"]


def goal_poses(T_goal: Any, goal: str) -> torch.Tensor:
    """(B, 4, 4) float64 goal poses from poses (4, 4) / (B, 4, 4) in the base-link frame, or for ``goal`` "position"
    also positions (3,) / (B, 3) (identity rotation). ValueError for another shape or NaN/inf."""
    T = torch.as_tensor(T_goal, dtype=torch.float64)
    if goal == "position" and T.shape[-1:] == (3,) and T.ndim in (1, 2):
        pos = T.reshape(-1, 3)
        T = torch.eye(4, dtype=torch.float64).repeat(pos.shape[0], 1, 1)
        T[:, :3, 3] = pos
    if T.shape == (4, 4):
        T = T[None]
    if T.ndim != 3 or T.shape[-2:] != (4, 4) or not torch.isfinite(T).all():
        raise ValueError(f"T_goal must be finite poses (4, 4) or (B, 4, 4), got shape {tuple(T.shape)}")
    return T


def goal_features(T: torch.Tensor, goal: str, scale: float) -> torch.Tensor:
    """Network inputs of goal poses T (B, 4, 4): position / ``scale`` (the arm's reach) [-], and for ``goal`` "pose"
    the first two rotation columns (a continuous 6-number form): (B, 3) or (B, 9)."""
    p = T[:, :3, 3] / scale
    if goal == "position":
        return p
    return torch.cat([p, T[:, :3, 0], T[:, :3, 1]], -1)
