"""The LM solver of :func:`ggik.ik.refine.lm_refine_checked` compiled with numba: no interpreter work per iteration.

The same algorithm, residuals, damping schedule, limit handling and stopping rules as :func:`ggik.ik.lm_numpy.lm_numpy`
(and so as the torch solver), step for step: elements advance in lock-step, one iteration at a time, so that a goal's
starts stop at its first converged one exactly as there. Only the arithmetic is written out for one element at a time
(4x4 products, a Cholesky solve of the damped normal equations), which numba compiles. ``tests/test_lm_compiled.py``
holds it to :func:`~ggik.ik.lm_numpy.lm_numpy` on random robots and goals of every kind.

numba is optional (``pip install 'ggik[fast]'``, which ``make`` installs): :func:`available` says whether it imports;
without it :func:`ggik.ik.refine.lm_refine_checked` uses numpy and torch as before. The kernel is compiled on its first
call and cached on disk (numba's ``cache=True``), so a process after the first pays no compilation.
"""

from __future__ import annotations

import importlib.util
import math
import threading
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from ggik.ik.lm_core import DAMPING_DOWN, DAMPING_MAX, DAMPING_MIN, DAMPING_UP, HOLD_GRADIENT
from ggik.kinematics.geometry import SHEPPERD_MAP

if TYPE_CHECKING:
    from ggik.ik.refine_config import RefineConfig

__all__ = ["available", "lm_compiled", "KIND_CODES", "COMPILED_MAX_ELEMENTS"]

#: float64 CPU batches of at most this many elements (goals x starts) run compiled (faster than torch at every size
#: measured: benchmarks/solvers/README.md); larger batches, float32 and CUDA run in torch
COMPILED_MAX_ELEMENTS = 65536
COMPILED_MIN_ELEMENTS = 0  #: smaller ones run in numpy (a process that solves once need not load numba)
KIND_CODES = {"pose": 0, "position": 1, "position+axis": 2}  #: goal kind -> the kernel's code
_W = np.ascontiguousarray(SHEPPERD_MAP[0].numpy())  # (16, 9): a rotation's entries -> Shepperd's 4x4 matrix
_C = np.ascontiguousarray(SHEPPERD_MAP[1].numpy())  # (16,)
_KERNEL: Any = None  #: the compiled kernel
numba_prange = range  #: numba.prange once numba is imported (_kernel); a plain range in uncompiled code


_AVAILABLE: bool | None = None  #: whether numba imports here (found on the first ask); one thread builds the kernel:
_LOCK = threading.Lock()
_HELPERS = ("_fk", "_rotvec", "_residual", "_errors", "_rows", "_step", "_advance", "_solve_unit")


def available() -> bool:
    """Whether numba imports (the compiled solver is used only then): an installed numba that refuses to import, e.g.
    beside a numpy newer than it supports, counts as absent, and numpy runs the small batches instead."""
    global _AVAILABLE
    if _AVAILABLE is None:
        if importlib.util.find_spec("numba") is None:
            _AVAILABLE = False
        else:
            try:
                import numba  # noqa: F401

                _AVAILABLE = True
            except Exception:  # numba's own import checks (numpy and llvmlite versions) raise various errors
                _AVAILABLE = False
    return _AVAILABLE


def _kernel() -> Any:
    """The compiled kernel, built once per process under a lock (numba imported only then): the helpers it calls are
    compiled first and take their names' places in this module, where the kernel finds them, only once all of them
    are. ``error_model="numpy"``: a division by zero gives inf or NaN as in numpy, not an exception. Its units run on
    numba's threads (``numba.set_num_threads``, set per call). Its disk cache follows this file: the constants it reads
    from :mod:`ggik.ik.lm_core` are fixed in it, so a change there alone needs the cache cleared."""
    global _KERNEL, numba_prange
    with _LOCK:
        if _KERNEL is None:
            import numba

            names = globals()
            jit = numba.njit(cache=True, nogil=True, error_model="numpy")
            compiled = {name: jit(names[name]) for name in _HELPERS}
            names.update(compiled)
            numba_prange = numba.prange
            _KERNEL = numba.njit(cache=True, nogil=True, parallel=True, error_model="numpy")(_lm_kernel)
    return _KERNEL


def lm_compiled(
    consts: tuple[dict[str, np.ndarray], bool],
    goal: np.ndarray,
    q: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    axis: np.ndarray,
    basis: np.ndarray,
    *,
    kind: str,
    starts: int,
    cfg: RefineConfig,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ggik.ik.lm_numpy.lm_numpy`, compiled: the same arguments and results (q, iterations, position errors
    [m], rotation errors [rad] of every element); each element's run is the same as there. With ``starts`` > 0 (a
    goal's starts stop at its first converged one) the starts run one after another, each to convergence or
    ``cfg.max_iters``, until one converges, the others keeping their starts (0 iterations): the batched solvers run
    them in lock-step instead. The work bound per goal is the same (starts x max_iters); the work is far less when an
    early start converges, and the goal's solution may be another start's. Units (elements, or goals) run on torch's
    number of threads when there are several."""
    c, _ = consts
    n, dof = q.shape
    f64 = np.float64
    B = np.ascontiguousarray(basis, dtype=f64) if kind == "position+axis" else np.zeros((n, 3, 2))
    q_out = np.ascontiguousarray(q, dtype=f64).copy()
    iters = np.zeros(n, dtype=np.int64)
    pos = np.zeros(n)
    rot = np.zeros(n)
    if starts > 0 and n % starts:
        raise ValueError(f"lm_compiled: {n} elements are not goals of {starts} consecutive starts each")
    kernel = _kernel()
    import numba

    units = n // starts if starts > 0 else n
    limit = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    threads, numba_threads = torch.get_num_threads(), numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, units, limit)))  # torch's threads, as the torch LM
    try:
        _run(kernel, c, goal, q_out, lo, hi, axis, B, kind, starts, cfg, iters, pos, rot)
    finally:  # numba's OpenMP layer sets the process's OpenMP threads, which torch reads: both put back
        numba.set_num_threads(numba_threads)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    return q_out, iters, pos, rot


def _run(kernel, c, goal, q_out, lo, hi, axis, B, kind, starts, cfg, iters, pos, rot) -> None:  # contiguous float64
    f64 = np.float64
    kernel(
        np.ascontiguousarray(c["A"], dtype=f64), np.ascontiguousarray(c["b"], dtype=f64),
        np.ascontiguousarray(c["pre"][0], dtype=f64), np.ascontiguousarray(c["next"], dtype=f64),
        np.ascontiguousarray(c["motion_next"], dtype=f64), np.ascontiguousarray(c["motion_mask"], dtype=f64),
        np.ascontiguousarray(c["axes"], dtype=f64), np.ascontiguousarray(c["prismatic"], dtype=np.bool_),
        np.ascontiguousarray(goal, dtype=f64), q_out, np.ascontiguousarray(lo, dtype=f64),
        np.ascontiguousarray(hi, dtype=f64), np.ascontiguousarray(axis, dtype=f64), B, KIND_CODES[kind], starts,
        float(cfg.pos_tol), float(cfg.rot_tol), float(cfg.rot_weight), float(cfg.damping), int(cfg.max_iters),
        HOLD_GRADIENT, _W, _C, iters, pos, rot,
    )  # fmt: skip


# ------------------------------------------------- the kernel: plain Python over arrays and scalars, compiled (_kernel)


def _fk(A, b, pre0, nxt, MN, mask, q, F, T):  # pragma: no cover - compiled
    """Joint frames F (J, 4, 4) before their motion and the EE pose T (4, 4) of one configuration q (dof,)."""
    J = A.shape[0]
    step = np.empty((4, 4))
    cur = pre0.copy()
    new = np.empty((4, 4))
    for k in range(J):
        v = b[k]
        for j in range(A.shape[1]):
            v += A[k, j] * q[j]
        c0, c1, c2 = math.sin(v) * mask[k, 0], (1.0 - math.cos(v)) * mask[k, 1], v * mask[k, 2]
        for r in range(4):
            for s in range(4):
                step[r, s] = (
                    nxt[k, r, s] + c0 * MN[k, 0, 4 * r + s] + c1 * MN[k, 1, 4 * r + s] + c2 * MN[k, 2, 4 * r + s]
                )
        F[k] = cur
        for r in range(4):
            for s in range(4):
                acc = 0.0
                for t in range(4):
                    acc += cur[r, t] * step[t, s]
                new[r, s] = acc
        cur, new = new, cur
    T[:, :] = cur


def _rotvec(R, W, C, out):  # pragma: no cover - compiled
    """The rotation vector of rotation R (3, 3) into out (3,) (Shepperd's method, as geometry.matrix_to_rotvec)."""
    K = np.empty(16)
    for i in range(16):
        acc = C[i]
        for j in range(9):
            acc += W[i, j] * R[j // 3, j % 3]
        K[i] = acc
    best = 0
    for i in range(1, 4):
        if K[5 * i] > K[5 * best]:
            best = i
    quat = np.empty(4)
    norm = 0.0
    for i in range(4):
        quat[i] = K[4 * best + i]
        norm += quat[i] * quat[i]
    norm = math.sqrt(norm)
    sign = -1.0 if quat[0] / norm < 0 else 1.0
    for i in range(4):
        quat[i] = sign * quat[i] / norm
    s = math.sqrt(quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3])
    angle = 2.0 * math.atan2(s, quat[0])
    scale = angle / max(s, 1e-300) if s > 1e-12 else 2.0 / max(quat[0], 1e-12)
    for i in range(3):
        out[i] = quat[i + 1] * scale


def _residual(T, G, kind, w, ax, B, W, C, e):  # pragma: no cover - compiled
    """The goal residual e (3|5|6,) of EE pose T towards canonical goal G (:func:`ggik.ik.refine.goal_residual`)."""
    for i in range(3):
        e[i] = G[i, 3] - T[i, 3]
    if kind == 1:
        return 3
    if kind == 0:
        R = np.empty((3, 3))
        for r in range(3):
            for s in range(3):
                acc = 0.0
                for t in range(3):
                    acc += G[r, t] * T[s, t]
                R[r, s] = acc
        v = np.empty(3)
        _rotvec(R, W, C, v)
        for i in range(3):
            e[3 + i] = w * v[i]
        return 6
    a = np.empty(3)
    g = np.empty(3)
    for r in range(3):
        a[r] = T[r, 0] * ax[0] + T[r, 1] * ax[1] + T[r, 2] * ax[2]
        g[r] = G[r, 0] * ax[0] + G[r, 1] * ax[1] + G[r, 2] * ax[2]
    cr = np.array([a[1] * g[2] - a[2] * g[1], a[2] * g[0] - a[0] * g[2], a[0] * g[1] - a[1] * g[0]])
    sn = math.sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2])
    d = a[0] * g[0] + a[1] * g[1] + a[2] * g[2]
    rho = np.zeros(3)
    if sn < 1e-12:
        if d < 0:
            for i in range(3):
                rho[i] = math.pi * B[i, 0]
    else:
        f = math.atan2(sn, d) / sn
        for i in range(3):
            rho[i] = cr[i] * f
    for j in range(2):
        e[3 + j] = w * (rho[0] * B[0, j] + rho[1] * B[1, j] + rho[2] * B[2, j])
    return 5


def _errors(e, m, w):  # pragma: no cover - compiled
    """(position error, rotation error) of residual e[:m] (:func:`ggik.ik.refine.residual_errors`)."""
    pos = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    if m == 3:
        return pos, 0.0
    acc = 0.0
    for i in range(3, m):
        acc += e[i] * e[i]
    return pos, math.sqrt(acc) / w


def _rows(A, axes, pris, F, T, kind, w, B, Jr):  # pragma: no cover - compiled
    """The weighted Jacobian rows Jr (m, dof) of the residual (:func:`ggik.ik.residuals.weighted_rows`)."""
    nJ, dof = A.shape
    Jm = np.zeros((6, nJ))
    for k in range(nJ):
        wk = np.empty(3)
        for r in range(3):
            wk[r] = F[k, r, 0] * axes[k, 0] + F[k, r, 1] * axes[k, 1] + F[k, r, 2] * axes[k, 2]
        if pris[k]:
            for r in range(3):
                Jm[r, k] = wk[r]
        else:
            px, py, pz = T[0, 3] - F[k, 0, 3], T[1, 3] - F[k, 1, 3], T[2, 3] - F[k, 2, 3]
            Jm[0, k] = wk[1] * pz - wk[2] * py
            Jm[1, k] = wk[2] * px - wk[0] * pz
            Jm[2, k] = wk[0] * py - wk[1] * px
            for r in range(3):
                Jm[3 + r, k] = wk[r]
    J6 = np.zeros((6, dof))
    for r in range(6):
        for j in range(dof):
            acc = 0.0
            for k in range(nJ):
                acc += Jm[r, k] * A[k, j]
            J6[r, j] = acc
    for r in range(3):
        for j in range(dof):
            Jr[r, j] = J6[r, j]
    if kind == 1:
        return 3
    if kind == 0:
        for r in range(3, 6):
            for j in range(dof):
                Jr[r, j] = w * J6[r, j]
        return 6
    for c in range(2):
        for j in range(dof):
            Jr[3 + c, j] = w * (B[0, c] * J6[3, j] + B[1, c] * J6[4, j] + B[2, c] * J6[5, j])
    return 5


def _step(Jr, m, e, q, lo, hi, lam, hold, dq):  # pragma: no cover - compiled
    """dq (dof,): the damped step (J^T J + lam (diag(J^T J) + I)) dq = J^T e with the held joints out of it."""
    dof = q.shape[0]
    g = np.zeros(dof)
    for j in range(dof):
        acc = 0.0
        for r in range(m):
            acc += Jr[r, j] * e[r]
        g[j] = acc
    held = np.zeros(dof, dtype=np.bool_)
    for j in range(dof):
        held[j] = (q[j] <= lo[j] and g[j] < -hold) or (q[j] >= hi[j] and g[j] > hold)
    M = np.zeros((dof, dof))
    for a in range(dof):
        if held[a]:
            continue
        for c in range(dof):
            if held[c]:
                continue
            acc = 0.0
            for r in range(m):
                acc += Jr[r, a] * Jr[r, c]
            M[a, c] = acc
    for a in range(dof):
        M[a, a] += lam * (M[a, a] + 1.0)
    # Cholesky: M is symmetric positive definite (lam > 0)
    L = np.zeros((dof, dof))
    for a in range(dof):
        for c in range(a + 1):
            acc = M[a, c]
            for k in range(c):
                acc -= L[a, k] * L[c, k]
            if a == c:
                L[a, a] = math.sqrt(acc)
            else:
                L[a, c] = acc / L[c, c]
    y = np.zeros(dof)
    for a in range(dof):
        acc = 0.0 if held[a] else g[a]
        for k in range(a):
            acc -= L[a, k] * y[k]
        y[a] = acc / L[a, a]
    for a in range(dof - 1, -1, -1):
        acc = y[a]
        for k in range(a + 1, dof):
            acc -= L[k, a] * dq[k]
        dq[a] = acc / L[a, a]


def _advance(A, b, pre0, nxt, MN, mask, axes, pris, goal, q, F, T, e, cost, lam, lo, hi, ax, basis, kind, m, w, hold, W,
             C, Jr, dq, q_new, F_new, T_new, e_new):  # pragma: no cover - compiled  # fmt: skip
    """One LM iteration of one element in place (q (dof,), its frames F, pose T, residual e); returns (cost, lam)."""
    dof = q.shape[0]
    _rows(A, axes, pris, F, T, kind, w, basis, Jr)
    _step(Jr, m, e, q, lo, hi, lam, hold, dq)
    for j in range(dof):
        q_new[j] = min(max(q[j] + dq[j], lo[j]), hi[j])
    _fk(A, b, pre0, nxt, MN, mask, q_new, F_new, T_new)
    _residual(T_new, goal, kind, w, ax, basis, W, C, e_new)
    acc = 0.0
    for r in range(m):
        acc += e_new[r] * e_new[r]
    if acc < cost:
        q[:] = q_new
        F[:] = F_new
        T[:] = T_new
        e[:] = e_new
        return acc, min(max(lam / DAMPING_DOWN, DAMPING_MIN), DAMPING_MAX)  # ggik.ik.lm_core's schedule
    return cost, min(max(lam * DAMPING_UP, DAMPING_MIN), DAMPING_MAX)


def _solve_unit(A, b, pre0, nxt, MN, mask, axes, pris, goal, q, lo, hi, ax, basis, kind, first, count, pos_tol,
                rot_tol, w, damping, max_iters, hold, W, C, iters, pos, rot):  # pragma: no cover  # fmt: skip
    """LM on the elements first .. first + count - 1 of q in place, one after another, each to convergence or
    ``max_iters``; with count > 1 (one goal's starts) the goal stops at its first converged element (one converged
    at its start: none runs)."""
    dof = q.shape[1]
    nJ = A.shape[0]
    F = np.zeros((count, nJ, 4, 4))
    T = np.zeros((count, 4, 4))
    e = np.zeros((count, 6))
    m = 6
    done = False
    for k in range(count):
        i = first + k
        for j in range(dof):
            q[i, j] = min(max(q[i, j], lo[j]), hi[j])
        _fk(A, b, pre0, nxt, MN, mask, q[i], F[k], T[k])
        m = _residual(T[k], goal[i], kind, w, ax, basis[i], W, C, e[k])
        pos[i], rot[i] = _errors(e[k], m, w)
        done = done or not (pos[i] >= pos_tol or rot[i] >= rot_tol)
    if done and count > 1:
        return
    Jr = np.zeros((6, dof))
    dq = np.zeros(dof)
    q_new = np.zeros(dof)
    F_new = np.zeros((nJ, 4, 4))
    T_new = np.zeros((4, 4))
    e_new = np.zeros(6)
    for k in range(count):
        i = first + k
        cost = 0.0
        for r in range(m):
            cost += e[k, r] * e[k, r]
        lam = damping
        while iters[i] < max_iters and (pos[i] >= pos_tol or rot[i] >= rot_tol):
            cost, lam = _advance(A, b, pre0, nxt, MN, mask, axes, pris, goal[i], q[i], F[k], T[k], e[k], cost, lam,
                                 lo, hi, ax, basis[i], kind, m, w, hold, W, C, Jr, dq, q_new, F_new, T_new,
                                 e_new)  # fmt: skip
            iters[i] += 1
            pos[i], rot[i] = _errors(e[k], m, w)
        if count > 1 and not (pos[i] >= pos_tol or rot[i] >= rot_tol):
            return


def _lm_kernel(A, b, pre0, nxt, MN, mask, axes, pris, goal, q, lo, hi, ax, basis, kind, starts, pos_tol, rot_tol, w,
               damping, max_iters, hold, W, C, iters, pos, rot):  # pragma: no cover - compiled  # fmt: skip
    """LM on every element of q (n, dof) in place; iters, pos, rot (n,) out. Units (prange: in parallel where
    compiled so): each element (``starts`` 0), or each goal's ``starts`` consecutive elements (:func:`_solve_unit`)."""
    size = starts if starts > 0 else 1
    for u in numba_prange(q.shape[0] // size):
        _solve_unit(A, b, pre0, nxt, MN, mask, axes, pris, goal, q, lo, hi, ax, basis, kind, u * size, size, pos_tol,
                    rot_tol, w, damping, max_iters, hold, W, C, iters, pos, rot)  # fmt: skip
