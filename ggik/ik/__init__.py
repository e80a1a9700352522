"""Layer 7, inverse kinematics: sampling joint angles from a model, local refinement (LM, SLSQP, DG), strategies,
success metrics, the result :class:`IKResult` and the one configuration of an IK solve :class:`SolveConfig`
(tolerances defined once: :mod:`ggik.ik.tolerances`). The user-facing solver :class:`ggik.GGIK` (:mod:`ggik.solver`)
sits above this layer and the path layer (:mod:`ggik.path`)."""

from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult
from ggik.ik.solve_config import SolveConfig
from ggik.ik.tolerances import Tolerances

__all__ = ["IKResult", "SolveConfig", "RefineConfig", "Tolerances"]
