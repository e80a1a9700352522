"""Layer 5, inverse kinematics: sampling joint angles from a model, local refinement (LM, SLSQP),
success metrics, path following (:mod:`ggik.ik.path`), and the user-facing solver :class:`GGIK`."""
from ggik.ik.path import PathConfig, PathResult
from ggik.ik.solver import GGIK, IKResult

__all__ = ["GGIK", "IKResult", "PathConfig", "PathResult"]
