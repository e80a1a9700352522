"""What :meth:`ggik.GGIK.solve` returns: :class:`IKResult`, every goal's solutions sorted best first."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import torch

__all__ = ["IKResult", "sort_best_first", "best_first", "best_first_order"]


@dataclass
class IKResult:
    """Solutions for B goals, S per goal, sorted best first per goal.

    Attributes:
        q: (B, S, dof) joint values [rad].
        pos_err: (B, S) EE position error [m]; rot_err: (B, S) rotation error [rad].
        success: (B, S) bool, both errors within the solver's tolerances (and, in a solve with obstacles,
            collision-free).
        within_limits: (B, S) bool, every joint within its limits.
        collision_free: (B, S) bool, no obstacle or self-collision pair overlaps; None for a solve without obstacles.
        clearance: (B, S) float64, the lowest signed distance over the checked pairs [m] (negative: the deepest
            overlap); None for a solve without obstacles.
        wrong_handedness: (B, S) bool, the solution's angles were recovered from a point set that is a mirror image
            of the arm (``refine="dg"``: ``handed`` False in :class:`ggik.ik.dg_refine.DGResult`), so they miss the
            goal however well the distances were met; None where the angles do not come from a projected point set
            (every other refinement, "dg+lm" included: LM moves the angles themselves).
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    success: torch.Tensor
    within_limits: torch.Tensor
    collision_free: torch.Tensor | None = None
    clearance: torch.Tensor | None = None
    wrong_handedness: torch.Tensor | None = None

    def to(self, device: torch.device | str) -> IKResult:
        """The same result with every tensor on ``device``."""
        if self.q.device == torch.device(device):
            return self
        return self.map(lambda t: t.to(device))

    def map(self, fn: Any) -> IKResult:
        """The result with ``fn`` applied to every tensor field (fields that are None stay None)."""
        return replace(self, **{f.name: fn(v) for f in fields(self) if (v := getattr(self, f.name)) is not None})

    def best(self) -> torch.Tensor:
        """(B, dof): the best solution of each goal."""
        return self.q[:, 0]

    def __len__(self) -> int:
        return self.q.shape[0]

    def __repr__(self) -> str:
        """Shapes and counts, not every tensor: ``IKResult(goals=4, solutions per goal=32, dof=7, solved goals=4,
        successful solutions=97, within limits=128)``."""
        B, S, dof = self.q.shape
        solved = int(self.success.any(-1).sum())
        text = (
            f"IKResult(goals={B}, solutions per goal={S}, dof={dof}, solved goals={solved}, "
            f"successful solutions={int(self.success.sum())}, within limits={int(self.within_limits.sum())}"
        )
        if self.collision_free is not None:
            text += f", collision-free={int(self.collision_free.sum())}"
        if self.wrong_handedness is not None:
            text += f", wrong handedness={int(self.wrong_handedness.sum())}"
        return text + ")"


def sort_best_first(
    q: torch.Tensor,
    pos: torch.Tensor,
    rot: torch.Tensor,
    success: torch.Tensor,
    within: torch.Tensor,
    pos_tol: float,
    rot_tol: float,
    clearance: torch.Tensor | None = None,
) -> IKResult:
    """Order each goal's solutions: successful first, then within limits, then by pos/pos_tol + rot/rot_tol.

    ``q`` (B, K, dof), the others (B, K); stable, so equal keys keep their column order. ``clearance`` (B, K) [m]: the
    solutions' lowest signed distances to obstacles, in a solve with obstacles: the result's ``collision_free`` is
    ``clearance >= 0`` and ``success`` requires it (the caller's ``success`` is the pose's). :func:`best_first` of
    the unsorted result."""
    return best_first(IKResult(q, pos, rot, success, within, clearance=clearance), pos_tol, rot_tol)


def best_first(result: IKResult, pos_tol: float, rot_tol: float) -> IKResult:
    """An unsorted ``result`` (its ``collision_free`` None, its ``success`` the pose's) sorted best first as
    :func:`sort_best_first` sorts, every per-solution field taken along (``wrong_handedness`` included); with a
    ``clearance``, ``collision_free`` is set to ``clearance >= 0`` and ``success`` requires it."""
    if result.clearance is not None:
        free = result.clearance >= 0
        result = replace(result, success=result.success & free, collision_free=free)
    order = best_first_order(result.pos_err / pos_tol + result.rot_err / rot_tol, result.within_limits, result.success)

    def take(t: torch.Tensor) -> torch.Tensor:
        return torch.gather(t, 1, order if t.ndim == 2 else order[..., None].expand_as(t))

    return result.map(take)


def best_first_order(score: Any, within: Any, success: Any) -> Any:
    """(..., K) indices that order each row of K solutions: successful first, then within limits, then by ``score``
    (..., K) ascending; stable, so equal keys keep their column order. The one ranking rule of the solver, for torch
    tensors or numpy arrays alike (``within`` and ``success``: bool, the shape of ``score``)."""
    order: Any
    if isinstance(score, torch.Tensor):
        order = torch.argsort(score, dim=-1, stable=True)
        for key in (within, success):  # stable sorts: the last key applied is the primary one
            k = torch.gather((~key).to(torch.int8), -1, order)
            order = torch.gather(order, -1, torch.argsort(k, dim=-1, stable=True))
        return order
    order = np.argsort(score, axis=-1, kind="stable")
    for key in (within, success):
        if order.ndim == 1:  # one goal (the single-goal path): plain indexing, no per-axis helpers
            order = order[np.argsort(~key[order], kind="stable")]
        else:
            order = np.take_along_axis(order, np.argsort(~np.take_along_axis(key, order, -1), -1, kind="stable"), -1)
    return order
