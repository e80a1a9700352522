"""The compiled LM backend's kernel: plain Python over arrays and scalars, which :mod:`ggik.ik.lm.compiled` compiles
with numba (uncompiled it runs too, slowly: the tests can step through it).

One element's LM is the numpy backend's, step for step: the same residuals, damping schedule and limit hold
(:mod:`ggik.ik.lm.core`'s constants, read when compiled), the arithmetic written out for one element at a time (4x4
products, a Cholesky solve of the damped normal equations). A goal's starts run one after another until one converges
(:class:`ggik.ik.lm.core.FirstSolution`'s rule). The kernel takes three namedtuples: :class:`Chain` (the constants),
:class:`Settings` (the scalars) and :class:`Batch` (the per-element arrays, written in place).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from ggik.ik.lm.core import DAMPING_DOWN, DAMPING_MAX, DAMPING_MIN, DAMPING_UP

__all__ = ["CHAIN_KEYS", "Chain", "Settings", "Batch", "Element", "Work", "KIND_CODES", "HELPERS", "lm_kernel"]

KIND_CODES = {"pose": 0, "position": 1, "position+axis": 2}  #: goal kind -> the kernel's code
#: the keys of :meth:`ggik.Robot.chain_constants` that :class:`Chain` holds first, in its order (``pre``: its first)
CHAIN_KEYS = ("A", "b", "pre", "next", "motion_next", "motion_mask", "axes")
#: the chain's float64 constants (:meth:`ggik.Robot.chain_constants`; ``pre0`` the first joint's fixed frame), the
#: limits ``lo``, ``hi`` (dof,), the tool axis ``ax`` (3,), and Shepperd's map ``W`` (16, 9), ``C`` (16,)
Chain = namedtuple("Chain", ["A", "b", "pre0", "nxt", "MN", "mask", "axes", "pris", "lo", "hi", "ax", "W", "C"])
#: the goal kind's code (:data:`KIND_CODES`), a goal's starts (0: every element on its own), the tolerances [m, rad],
#: the rotation weight [m/rad], the initial damping, the iteration budget and the hold threshold of the gradient
Settings = namedtuple("Settings", ["kind", "starts", "pos_tol", "rot_tol", "w", "damping", "max_iters", "hold"])
#: goals (n, 4, 4), position+axis bases (n, 3, 2); written in place: q (n, dof), iterations, errors (n,)
Batch = namedtuple("Batch", ["goal", "basis", "q", "iters", "pos", "rot"])
#: one element's state: q (dof,), joint frames F (J, 4, 4), pose T (4, 4), residual e (6,), goal G, basis B
Element = namedtuple("Element", ["q", "F", "T", "e", "G", "B"])
#: scratch of a step: rows Jr (6, dof), dq (dof,), and the trial q_new, F_new, T_new, e_new
Work = namedtuple("Work", ["Jr", "dq", "q_new", "F_new", "T_new", "e_new"])
#: the functions the kernel calls, compiled before it (:mod:`ggik.ik.lm.compiled`)
HELPERS = ("_fk", "_rotvec", "_residual", "_errors", "_rows", "_step", "_advance", "_solve_unit")
numba_prange = range  #: numba.prange once compiled (:mod:`ggik.ik.lm.compiled`); a plain range uncompiled


def _fk(c, q, F, T):  # pragma: no cover - compiled
    """Joint frames F (J, 4, 4) before their motion and the EE pose T (4, 4) of one configuration q (dof,) of chain
    ``c`` (:class:`Chain`)."""
    A, b, nxt, MN, mask = c.A, c.b, c.nxt, c.MN, c.mask
    J = A.shape[0]
    step = np.empty((4, 4))
    cur = c.pre0.copy()
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


def _residual(T, G, B, c, s, e):  # pragma: no cover - compiled
    """The goal residual e (3|5|6,) of EE pose T towards canonical goal G (:func:`ggik.ik.residuals.goal_residual`);
    returns its length."""
    kind, w, ax = s.kind, s.w, c.ax
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
        _rotvec(R, c.W, c.C, v)
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
    """(position error, rotation error) of residual e[:m] (:func:`ggik.ik.residuals.residual_errors`)."""
    pos = math.sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2])
    if m == 3:
        return pos, 0.0
    acc = 0.0
    for i in range(3, m):
        acc += e[i] * e[i]
    return pos, math.sqrt(acc) / w


def _rows(F, T, B, c, s, Jr):  # pragma: no cover - compiled
    """The weighted Jacobian rows Jr (m, dof) of the residual (:func:`ggik.ik.residuals.weighted_rows`)."""
    A, axes, pris, kind, w = c.A, c.axes, c.pris, s.kind, s.w
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


def _step(Jr, m, e, q, c, lam, hold, dq):  # pragma: no cover - compiled
    """dq (dof,): the damped step (J^T J + lam (diag(J^T J) + I)) dq = J^T e with the held joints out of it
    (:func:`ggik.ik.lm.core.damped_step`)."""
    lo, hi = c.lo, c.hi
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


def _advance(c, s, el, work, cost, lam, m):  # pragma: no cover - compiled
    """One LM iteration of element ``el`` (:class:`Element`) in place; returns (cost, lam)."""
    q, dq, q_new = el.q, work.dq, work.q_new
    _rows(el.F, el.T, el.B, c, s, work.Jr)
    _step(work.Jr, m, el.e, q, c, lam, s.hold, dq)
    for j in range(q.shape[0]):
        q_new[j] = min(max(q[j] + dq[j], c.lo[j]), c.hi[j])
    _fk(c, q_new, work.F_new, work.T_new)
    _residual(work.T_new, el.G, el.B, c, s, work.e_new)
    acc = 0.0
    for r in range(m):
        acc += work.e_new[r] * work.e_new[r]
    if acc < cost:
        q[:] = q_new
        el.F[:] = work.F_new
        el.T[:] = work.T_new
        el.e[:] = work.e_new
        return acc, min(max(lam / DAMPING_DOWN, DAMPING_MIN), DAMPING_MAX)  # ggik.ik.lm.core's schedule
    return cost, min(max(lam * DAMPING_UP, DAMPING_MIN), DAMPING_MAX)


def _solve_unit(c, s, b, first, count):  # pragma: no cover - compiled
    """LM on the elements first .. first + count - 1 of batch ``b`` in place, one after another, each to convergence
    or the budget; with count > 1 (one goal's starts) the goal stops at its first converged element (one converged
    at its start: none runs)."""
    q, iters, pos, rot = b.q, b.iters, b.pos, b.rot
    dof = q.shape[1]
    nJ = c.A.shape[0]
    F = np.zeros((count, nJ, 4, 4))
    T = np.zeros((count, 4, 4))
    e = np.zeros((count, 6))
    m = 6
    done = False
    for k in range(count):
        i = first + k
        for j in range(dof):
            q[i, j] = min(max(q[i, j], c.lo[j]), c.hi[j])
        _fk(c, q[i], F[k], T[k])
        m = _residual(T[k], b.goal[i], b.basis[i], c, s, e[k])
        pos[i], rot[i] = _errors(e[k], m, s.w)
        done = done or not (pos[i] >= s.pos_tol or rot[i] >= s.rot_tol)
    if done and count > 1:
        return
    work = Work(np.zeros((6, dof)), np.zeros(dof), np.zeros(dof), np.zeros((nJ, 4, 4)), np.zeros((4, 4)), np.zeros(6))
    for k in range(count):
        i = first + k
        el = Element(q[i], F[k], T[k], e[k], b.goal[i], b.basis[i])
        cost = 0.0
        for r in range(m):
            cost += e[k, r] * e[k, r]
        lam = s.damping
        while iters[i] < s.max_iters and (pos[i] >= s.pos_tol or rot[i] >= s.rot_tol):
            cost, lam = _advance(c, s, el, work, cost, lam, m)
            iters[i] += 1
            pos[i], rot[i] = _errors(e[k], m, s.w)
        if count > 1 and not (pos[i] >= s.pos_tol or rot[i] >= s.rot_tol):
            return


def lm_kernel(c, s, b):  # pragma: no cover - compiled
    """LM on every element of batch ``b`` (:class:`Batch`) in place. Units (prange: in parallel where compiled so):
    each element (``s.starts`` 0), or each goal's ``s.starts`` consecutive elements (:func:`_solve_unit`)."""
    size = s.starts if s.starts > 0 else 1
    for u in numba_prange(b.q.shape[0] // size):
        _solve_unit(c, s, b, u * size, size)
