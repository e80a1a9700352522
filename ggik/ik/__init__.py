"""Layer 5, inverse kinematics: sampling joint angles from a model, local refinement (LM, SLSQP),
success metrics, path following (:mod:`ggik.ik.path`), and the user-facing solver :class:`GGIK` with its one
configuration :class:`SolveConfig` (tolerances defined once: :mod:`ggik.ik.tolerances`)."""

from ggik.ik.path import PathConfig, PathResult
from ggik.ik.refine import RefineConfig
from ggik.ik.result import IKResult
from ggik.ik.solve_config import SolveConfig
from ggik.ik.solver import GGIK
from ggik.ik.tolerances import Tolerances

__all__ = ["GGIK", "IKResult", "SolveConfig", "RefineConfig", "Tolerances", "PathConfig", "PathResult"]
