"""Joint values from uniforms: the one rule by which ggik's samplers map uniform numbers to configurations.

Within the limits a joint is ``lower + (upper - lower) * u`` (:meth:`ggik.Robot.sample_q`, whose continuous joints
carry the limits [-pi, pi]); where the limits are ignored (the GGIK paper's protocol, ``DataConfig.unlimited_fraction``)
a joint is uniform over one full turn, [-pi, pi], by the same arithmetic with the bounds :data:`FULL_TURN`. The
training samplers (:meth:`ggik.graph.stacked.StackedGraphs.sample_q`, the per-robot sampler of
:class:`ggik.data.TrainingData`) and the paper's goals (:func:`ggik.kinematics.paper_goals.paper_goal_q`) all draw
through :func:`uniform_joints`.
"""

from __future__ import annotations

import math

import torch

__all__ = ["FULL_TURN", "uniform_joints"]

FULL_TURN = (-math.pi, math.pi)  #: [rad] the range of a revolute joint whose limits are ignored


def uniform_joints(
    u: torch.Tensor,
    lower: torch.Tensor | float,
    upper: torch.Tensor | float,
    free: torch.Tensor | None = None,
) -> torch.Tensor:
    """Joint values [rad or m] from uniforms ``u`` in [0, 1): ``lower + (upper - lower) * u``, uniform within the
    limits; where ``free`` is True, uniform in :data:`FULL_TURN` instead (the limits ignored).

    Args:
        u: (..., dof) uniforms; the result has their dtype where ``lower`` and ``upper`` are Python floats, else the
            bounds' (the caller converts ``u`` beforehand when they differ).
        lower, upper: the limits, (dof,) or (..., dof) tensors broadcast against ``u``, or floats.
        free: optional bool tensor broadcast against the limits, e.g. (B, 1) per example or (B, dof) per joint.

    Returns:
        (..., dof) joint values. Each value is computed as ``lo + (hi - lo) * u`` with (lo, hi) its bounds, so a free
        joint is bit for bit what a joint with the limits [-pi, pi] gets from the same uniform.
    """
    if free is not None:
        lower = torch.where(free, FULL_TURN[0], lower)
        upper = torch.where(free, FULL_TURN[1], upper)
    return lower + (upper - lower) * u
