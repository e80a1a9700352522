"""Which LM backend solves a problem: one rule, in :func:`select_backend`.

The backends (:data:`BACKENDS`) solve the same problem the same way, step for step, and return the same
:class:`~ggik.ik.lm.problem.LMOutcome` up to float rounding; they differ in cost. Per-operation overhead dominates
small problems, arithmetic large ones (the measured crossovers: ``benchmarks/solvers/README.md``):

- float64 on a CPU: ``"compiled"`` (numba) up to :data:`COMPILED_MAX_ELEMENTS` elements where numba imports, else
  ``"numpy"`` up to :data:`NUMPY_MAX_ELEMENTS`, else ``"torch"``;
- CUDA: ``"torch"`` on the GPU from :data:`CUDA_MIN_ELEMENTS` elements; a smaller problem is solved on the CPU (by
  the rule above, in float64) and its outcome moved back, as a GPU iteration costs its kernel launches whatever the
  batch;
- another dtype or device: ``"torch"`` where the problem is.

``prefer``: the backends a caller allows (e.g. ``("numpy", "torch")`` for a process that solves once and should not
load numba); the rule picks among them, falling back to the first allowed one that can run.

``clearance``: the solve has the clearance rows of obstacles (:class:`ggik.collision.Clearance`, the second phase of
:func:`ggik.ik.lm.obstacles.solve_with_clearance`), which only the backends of :data:`KEEPS_CLEAR` take: the rule picks
among those allowed that do, and a ``prefer`` that allows none is a ValueError (the obstacles are never dropped).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ggik.ik.lm import compiled
from ggik.ik.lm.numpy_lm import solve_numpy
from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.lm.torch_lm import solve_torch
from ggik.ik.refine_config import LM_BACKENDS, check_backends

if TYPE_CHECKING:  # ggik.collision imports the kinematics only; the solver takes its Clearance as an argument
    from ggik.collision import Clearance

__all__ = [
    "BACKENDS",
    "LMBackend",
    "select_backend",
    "allowed_backends",
    "check_backends",
    "KEEPS_CLEAR",
    "cpu_backend",
    "NUMPY_MAX_ELEMENTS",
    "COMPILED_MAX_ELEMENTS",
    "CUDA_MIN_ELEMENTS",
    "SOLVERS",
]

BACKENDS = LM_BACKENDS  #: every LM backend, in the rule's order of preference
NUMPY_MAX_ELEMENTS = 256  #: float64 CPU problems of at most this many elements run in numpy without numba
COMPILED_MAX_ELEMENTS = 65536  #: ... and compiled up to this many where numba imports
#: CUDA problems of fewer elements run on the CPU (the estimated crossover: benchmarks/solvers/README.md, "LM on CUDA")
CUDA_MIN_ELEMENTS = 4096
#: the solve functions of the backends that take the clearance rows of obstacles beside the goal's
#: (:meth:`LMBackend.solve`'s ``clearance``)
SOLVERS_WITH_CLEARANCE: dict[str, Callable[[LMProblem, Clearance], LMOutcome]] = {"torch": solve_torch}
KEEPS_CLEAR = frozenset(SOLVERS_WITH_CLEARANCE)  #: their names


@dataclass(frozen=True)
class LMBackend:
    """An LM backend chosen for a problem: ``name`` (one of :data:`BACKENDS`) running on ``device``."""

    name: str
    device: torch.device

    @property
    def keeps_clear(self) -> bool:
        """Whether this backend takes the clearance rows of obstacles (:data:`KEEPS_CLEAR`)."""
        return self.name in KEEPS_CLEAR

    def solve(self, problem: LMProblem, clearance: Clearance | None = None) -> LMOutcome:
        """The outcome of ``problem``, on the problem's device and in its dtype (moved there and back when this
        backend runs elsewhere); ``clearance``: the hinge rows of obstacles beside the goal's (a backend that does not
        :attr:`keeps_clear` raises ValueError rather than drop them)."""
        if clearance is not None and not self.keeps_clear:
            can = sorted(KEEPS_CLEAR)
            raise ValueError(f"the {self.name!r} LM backend takes no clearance rows (obstacles); those that do: {can}")
        home, dtype = problem.device, problem.q0.dtype
        here = dtype if self.name == "torch" else torch.float64
        moved = problem if (home, dtype) == (self.device, here) else problem.to(self.device, here)
        if clearance is None:
            outcome = SOLVERS[self.name](moved)
        else:
            outcome = SOLVERS_WITH_CLEARANCE[self.name](moved, clearance)
        if moved is problem:
            return outcome
        q, iters, pos, rot = outcome
        return LMOutcome(q.to(home, dtype), iters.to(home), pos.to(home, dtype), rot.to(home, dtype))


#: each backend's solve function, by name
SOLVERS: dict[str, Callable[[LMProblem], LMOutcome]] = {
    "compiled": compiled.solve_compiled,
    "numpy": solve_numpy,
    "torch": solve_torch,
}


def allowed_backends(prefer: str | Sequence[str] | None, clearance: bool = False) -> tuple[str, ...]:
    """The backends of ``prefer`` (None: all) the rule may choose; with ``clearance``, only those that take clearance
    rows (:data:`KEEPS_CLEAR`), ValueError when ``prefer`` allows none of them."""
    allowed = check_backends(prefer)
    if not clearance:
        return allowed
    keep = tuple(a for a in allowed if a in KEEPS_CLEAR)
    if not keep:
        can = sorted(KEEPS_CLEAR)
        raise ValueError(f"none of the LM backends {allowed} takes the clearance rows of obstacles: allow one of {can}")
    return keep


def select_backend(
    problem: LMProblem,
    device: torch.device | str | None = None,
    prefer: str | Sequence[str] | None = None,
    clearance: bool = False,
) -> LMBackend:
    """The backend that solves ``problem`` (module docstring): ``device`` where its result is wanted (None: the
    problem's), ``prefer`` the backends allowed (None: all), ``clearance`` whether the solve has the clearance rows
    of obstacles (only a backend that :attr:`~LMBackend.keeps_clear` is chosen then)."""
    allowed = allowed_backends(prefer, clearance)
    device = problem.device if device is None else torch.device(device)
    cpu = torch.device("cpu")
    n = problem.size
    if device.type == "cuda" and "torch" in allowed and n >= CUDA_MIN_ELEMENTS:
        return LMBackend("torch", device)  # (decided before the CPU's choice, which may import numba)
    other = device.type not in ("cpu", "cuda") or (device.type == "cpu" and problem.q0.dtype != torch.float64)
    if other and "torch" in allowed:
        return LMBackend("torch", device)  # float32 or another device: where the problem is
    on_cpu = cpu_backend(n, allowed)
    if device.type == "cuda" and on_cpu == "torch" and "torch" in allowed:
        return LMBackend("torch", device)  # no CPU backend fits: the GPU
    return LMBackend(on_cpu, cpu)


def cpu_backend(n: int, prefer: str | Sequence[str] | None = None) -> str:
    """The float64 CPU backend of n elements among ``prefer`` (:func:`select_backend`): the rule's first that fits,
    else the first allowed that runs."""
    if prefer is None and n <= COMPILED_MAX_ELEMENTS and compiled.available():  # the common case, without the lists
        return "compiled"
    allowed = check_backends(prefer)
    runs = [a for a in allowed if a != "compiled" or compiled.available()]
    fits = {"compiled": n <= COMPILED_MAX_ELEMENTS, "numpy": n <= NUMPY_MAX_ELEMENTS, "torch": True}
    for name in BACKENDS:
        if name in runs and fits[name]:
            return name
    if not runs:
        raise ValueError(f"none of the LM backends {allowed} runs here (numba does not import)")
    return runs[0]
