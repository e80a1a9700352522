"""The tolerances and budgets of the local solvers (:class:`RefineConfig`), one source of their defaults, shared by the
LM loops (torch, numpy, compiled), SLSQP, the solver and path following."""

from __future__ import annotations

from dataclasses import dataclass

from ggik.ik.tolerances import SOLVE_TOLERANCES, Tolerances

__all__ = ["RefineConfig"]


@dataclass
class RefineConfig:
    """Tolerances and budgets of the local solvers (tolerance defaults: :data:`ggik.ik.tolerances.SOLVE_TOLERANCES`)."""

    pos_tol: float = SOLVE_TOLERANCES.pos_tol  #: converged when the position error is below this [m]
    rot_tol: float = SOLVE_TOLERANCES.rot_tol  #: ... and the rotation error below this [rad]
    max_iters: int = 30  #: LM iterations (each a batched linear solve)
    rot_weight: float = 0.1  #: [m/rad] length that makes rotation errors comparable to positions
    damping: float = 1e-3  #: initial LM damping (relative to the diagonal of J^T J)
    #: LM: a goal's starts (the last batch dimension) stop at its first converged one, the others keeping their values
    #: (one solution per goal): in lock-step (torch, numpy), or one after another (compiled, ggik.ik.lm_compiled)
    stop_at_first: bool = False
    slsqp_max_iters: int = 100  #: as in the GGIK paper
    slsqp_ftol: float = 1e-10  #: scipy's default 1e-6 stops far above a 1 mm criterion

    @property
    def tolerances(self) -> Tolerances:
        """``pos_tol`` and ``rot_tol`` as :class:`Tolerances` (ValueError unless both are positive)."""
        return Tolerances(self.pos_tol, self.rot_tol)
