"""The compiled LM backend: :mod:`ggik.ik.lm.kernel` compiled with numba, no interpreter work per iteration.

Each element's run is the numpy backend's, step for step; with a goal's starts stopped at its first solution they run
one after another (:class:`ggik.ik.lm.core.FirstSolution`'s rule, which the lock-step backends follow too). Units
(elements, or goals) run on torch's number of threads.

numba is optional (``pip install 'ggik[fast]'``, which ``make`` installs): :func:`available` says whether it imports;
without it :func:`ggik.ik.lm.select.select_backend` chooses numpy or torch. The kernel is compiled on its first call
and cached on disk (numba's ``cache=True``), so a process after the first pays no compilation.
"""

from __future__ import annotations

import importlib.util
import threading
from functools import cache
from typing import Any

import numpy as np
import torch

from ggik.ik.lm import kernel
from ggik.ik.lm.core import HOLD_GRADIENT
from ggik.ik.lm.problem import LMChain, LMOutcome, LMProblem
from ggik.kinematics.geometry import SHEPPERD_MAP

__all__ = ["available", "solve_compiled"]

_LOCK = threading.Lock()  # one thread builds the kernel
_BUILT: dict[str, Any] = {}  # the compiled kernel, once built


@cache
def available() -> bool:
    """Whether numba imports (the compiled backend is used only then): an installed numba that refuses to import, e.g.
    beside a numpy newer than it supports, counts as absent."""
    if importlib.util.find_spec("numba") is None:
        return False
    try:
        import numba  # noqa: F401
    except Exception:  # numba's own import checks (numpy and llvmlite versions) raise various errors
        return False
    return True


def _compiled_kernel() -> Any:
    """The compiled kernel, built once per process under a lock (numba imported only then): the helpers it calls are
    compiled first and take their names' places in :mod:`ggik.ik.lm.kernel`, where the kernel finds them, only once
    all of them are. ``error_model="numpy"``: a division by zero gives inf or NaN as in numpy, not an exception. Its
    disk cache follows the kernel's file: the constants it reads from :mod:`ggik.ik.lm.core` are fixed in it, so a
    change there alone needs the cache cleared."""
    with _LOCK:
        if not _BUILT:
            import numba

            names = vars(kernel)
            inlined = numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
            unit = numba.njit(cache=True, nogil=True, error_model="numpy")  # a unit: a call of its own
            compiled = {name: (unit if name == "_solve_unit" else inlined)(names[name]) for name in kernel.HELPERS}
            names.update(compiled)
            names["numba_prange"] = numba.prange
            _BUILT["kernel"] = numba.njit(cache=True, nogil=True, parallel=True, error_model="numpy")(kernel.lm_kernel)
        return _BUILT["kernel"]


def solve_compiled(problem: LMProblem) -> LMOutcome:
    """LM on every element of ``problem``, compiled (float64, on the CPU); the outcome as CPU float64 tensors."""
    chain, settings = _prepared(problem.chain)
    n, starts = problem.size, problem.starts
    if starts > 0 and n % starts:
        raise ValueError(f"solve_compiled: {n} elements are not goals of {starts} consecutive starts each")
    goal, q0, _, _, _, basis = problem.arrays()
    if problem.chain.kind != "position+axis":
        basis = np.zeros((n, 3, 2))
    batch = kernel.Batch(goal, basis, q0.copy(), np.zeros(n, dtype=np.int64), np.zeros(n), np.zeros(n))
    compiled = _compiled_kernel()
    import numba

    units = n // starts if starts > 0 else n
    limit = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    threads, numba_threads = torch.get_num_threads(), numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, units, limit)))  # torch's threads, as the torch backend
    try:
        compiled(chain, kernel.Settings(settings.kind, starts, *settings[2:]), batch)
    finally:  # numba's OpenMP layer sets the process's OpenMP threads, which torch reads: both put back
        numba.set_num_threads(numba_threads)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    return LMOutcome(*(torch.from_numpy(a) for a in (batch.q, batch.iters, batch.pos, batch.rot)))


def _prepared(lm_chain: LMChain) -> tuple[kernel.Chain, kernel.Settings]:
    """The kernel's :class:`~ggik.ik.lm.kernel.Chain` and :class:`~ggik.ik.lm.kernel.Settings` (``starts`` 0) of
    ``lm_chain``, made once per chain (kept in its ``prepared``)."""
    if "compiled" not in lm_chain.prepared:
        c, _ = lm_chain.robot.chain_constants()
        lo, hi, axis = lm_chain.arrays()
        arr = np.ascontiguousarray
        A, b, pre, nxt, moves, mask, axes = (arr(c[k], np.float64) for k in kernel.CHAIN_KEYS)
        W, C = (arr(t.numpy()) for t in SHEPPERD_MAP)
        chain = kernel.Chain(A, b, pre[0], nxt, moves, mask, axes, arr(c["prismatic"], np.bool_), lo, hi, axis, W, C)
        cfg = lm_chain.cfg
        scalars = (float(cfg.pos_tol), float(cfg.rot_tol), float(cfg.rot_weight), float(cfg.damping))
        settings = kernel.Settings(kernel.KIND_CODES[lm_chain.kind], 0, *scalars, int(cfg.max_iters), HOLD_GRADIENT)
        lm_chain.prepared["compiled"] = chain, settings
    return lm_chain.prepared["compiled"]
