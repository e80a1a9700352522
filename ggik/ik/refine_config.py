"""The tolerances and budgets of the local solvers (:class:`RefineConfig`), one source of their defaults, shared by the
LM loops (torch, numpy, compiled), SLSQP, the solver and path following."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ggik.ik.tolerances import SOLVE_TOLERANCES, Tolerances

__all__ = ["RefineConfig", "LM_BACKENDS", "check_backends"]

LM_BACKENDS = ("compiled", "numpy", "torch")  #: every LM backend (:mod:`ggik.ik.lm.select`), in its order of preference


def check_backends(prefer: str | Sequence[str] | None, what: str = "LM backends") -> tuple[str, ...]:
    """``prefer`` as a tuple of backend names (None: :data:`LM_BACKENDS`); ValueError naming ``what`` otherwise."""
    if prefer is None:
        return LM_BACKENDS
    names = (prefer,) if isinstance(prefer, str) else tuple(prefer)
    if not names or any(n not in LM_BACKENDS for n in names):
        raise ValueError(f"{what} must be some of {LM_BACKENDS}, got {prefer!r}")
    return names


@dataclass
class RefineConfig:
    """Tolerances and budgets of the local solvers (tolerance defaults: :data:`ggik.ik.tolerances.SOLVE_TOLERANCES`)."""

    pos_tol: float = SOLVE_TOLERANCES.pos_tol  #: converged when the position error is below this [m]
    rot_tol: float = SOLVE_TOLERANCES.rot_tol  #: ... and the rotation error below this [rad]
    max_iters: int = 30  #: LM iterations (each a batched linear solve)
    rot_weight: float = 0.1  #: [m/rad] length that makes rotation errors comparable to positions
    damping: float = 1e-3  #: initial LM damping (relative to the diagonal of J^T J)
    #: LM: a goal's starts (the last batch dimension) stop at its first solution: its lowest-indexed start that
    #: converges, the starts after it returned as given (ggik.ik.lm.core.FirstSolution; the same on every backend)
    stop_at_first: bool = False
    slsqp_max_iters: int = 100  #: as in the GGIK paper
    slsqp_ftol: float = 1e-10  #: scipy's default 1e-6 stops far above a 1 mm criterion
    #: the LM backends allowed (names of :data:`LM_BACKENDS`; None: all), chosen among by
    #: :func:`ggik.ik.lm.select.select_backend`
    lm_backends: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.lm_backends is not None:
            self.lm_backends = check_backends(self.lm_backends, "lm_backends")

    @property
    def tolerances(self) -> Tolerances:
        """``pos_tol`` and ``rot_tol`` as :class:`Tolerances` (ValueError unless both are positive)."""
        return Tolerances(self.pos_tol, self.rot_tol)
