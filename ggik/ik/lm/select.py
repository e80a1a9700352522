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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from ggik.ik.lm import compiled
from ggik.ik.lm.numpy_lm import solve_numpy
from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.lm.torch_lm import solve_torch
from ggik.ik.refine_config import LM_BACKENDS, check_backends

__all__ = [
    "BACKENDS",
    "LMBackend",
    "select_backend",
    "check_backends",
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


@dataclass(frozen=True)
class LMBackend:
    """An LM backend chosen for a problem: ``name`` (one of :data:`BACKENDS`) running on ``device``."""

    name: str
    device: torch.device

    def solve(self, problem: LMProblem) -> LMOutcome:
        """The outcome of ``problem``, on the problem's device and in its dtype (moved there and back when this
        backend runs elsewhere)."""
        home, dtype = problem.device, problem.q0.dtype
        here = dtype if self.name == "torch" else torch.float64
        moved = problem if (home, dtype) == (self.device, here) else problem.to(self.device, here)
        outcome = SOLVERS[self.name](moved)
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


def select_backend(
    problem: LMProblem, device: torch.device | str | None = None, prefer: str | Sequence[str] | None = None
) -> LMBackend:
    """The backend that solves ``problem`` (module docstring): ``device`` where its result is wanted (None: the
    problem's), ``prefer`` the backends allowed (None: all)."""
    allowed = check_backends(prefer)
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
