"""Layer 5, inverse kinematics: sampling joint angles from a model, local refinement (LM, SLSQP),
success metrics, and the user-facing solver :class:`GGIK`."""
from ggik.ik.solver import GGIK, IKResult

__all__ = ["GGIK", "IKResult"]
