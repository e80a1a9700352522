"""Success tolerances of every solver, defined once: when a joint configuration reaches a goal.

A configuration reaches a goal when its end-effector position error is below ``pos_tol`` [m] and its rotation error
(the angle the goal kind fixes, :func:`ggik.graph.goal_kinds.goal_errors`) below ``rot_tol`` [rad]. Two sets of
defaults exist, and every config takes its defaults from them:

* :data:`SOLVE_TOLERANCES` (1 mm, 0.01 rad): :class:`ggik.ik.refine_config.RefineConfig`, hence :meth:`ggik.GGIK.solve`;
* :data:`PATH_TOLERANCES` (0.1 mm, 0.1 deg): :class:`ggik.path.PathConfig` and the trajectory LM of path
  following (CppFlow's criterion);
* :data:`PAPER_TOLERANCES` (1 cm, 1 deg): the raw-sample success of the GGIK paper
  (:func:`ggik.ik.metrics.success_rate`), a measure of unrefined samples, not a solver's criterion.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch

__all__ = ["Tolerances", "SOLVE_TOLERANCES", "PATH_TOLERANCES", "PAPER_TOLERANCES", "check_tolerance"]


def check_tolerance(value: float, name: str) -> float:
    """``value`` as a float when it is a positive finite number; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or not value > 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class Tolerances:
    """A success criterion: position error below ``pos_tol`` [m] and rotation error below ``rot_tol`` [rad]."""

    pos_tol: float = 1e-3  #: [m]
    rot_tol: float = 1e-2  #: [rad]

    def __post_init__(self) -> None:
        check_tolerance(self.pos_tol, "Tolerances.pos_tol")
        check_tolerance(self.rot_tol, "Tolerances.rot_tol")

    def met(self, pos_err: torch.Tensor, rot_err: torch.Tensor) -> torch.Tensor:
        """(...) bool: both errors within the tolerances (``pos_err`` [m], ``rot_err`` [rad], same shape)."""
        return (pos_err < self.pos_tol) & (rot_err < self.rot_tol)


SOLVE_TOLERANCES = Tolerances()  #: the solver's: 1 mm and 0.01 rad
PATH_TOLERANCES = Tolerances(pos_tol=1e-4, rot_tol=math.radians(0.1))  #: path following's: 0.1 mm and 0.1 deg
PAPER_TOLERANCES = Tolerances(pos_tol=1e-2, rot_tol=math.radians(1.0))  #: raw samples in the GGIK paper: 1 cm and 1 deg
