"""The LM backend in numpy, for a handful of elements on a CPU, where the torch backend's time is per-operation
overhead (:func:`ggik.ik.lm.select.select_backend` chooses it for float64 CPU problems of up to
:data:`ggik.ik.lm.select.NUMPY_MAX_ELEMENTS` elements when the compiled backend is not there or not wanted).

The same algorithm, residuals, step (:func:`ggik.ik.lm.core.damped_step`) and stopping rules as the torch backend;
only the arithmetic library differs. No obstacles.
"""

from __future__ import annotations

import numpy as np
import torch

from ggik.ik.lm.core import FirstSolution, WorkingSet, accept, damped_step, next_damping
from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.residuals import pose_weights
from ggik.kinematics.geometry import SHEPPERD_MAP

__all__ = ["solve_numpy"]

_W, _C = SHEPPERD_MAP[0].numpy(), SHEPPERD_MAP[1].numpy()


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis (3,) (np.cross's argument handling outweighs the arithmetic on these small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], -1)


def _norm(a: np.ndarray) -> np.ndarray:
    return np.sqrt((a * a).sum(-1))


def _frames(c: dict[str, np.ndarray], q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, J, 4, 4) joint frames and (n, 4, 4) EE poses (:func:`ggik.kinematics.chain_fk.chain_frames`)."""
    v = q @ c["A"].T + c["b"]
    coef = np.stack([np.sin(v), 1.0 - np.cos(v), v], -1) * c["motion_mask"]
    steps = np.einsum("njk,jkl->njl", coef, c["motion_next"]).reshape(v.shape + (4, 4)) + c["next"]
    F = np.broadcast_to(c["pre"][0], (v.shape[0], 4, 4))
    frames = [F]
    for k in range(v.shape[1] - 1):
        F = F @ steps[:, k]
        frames.append(F)
    return np.stack(frames, 1), F @ steps[:, -1]


def _jacobian(c: dict[str, np.ndarray], plain: bool, F: np.ndarray, T: np.ndarray) -> np.ndarray:
    """(n, 6, dof) geometric Jacobian in the base frame (:meth:`ggik.Robot.jacobian_at`)."""
    w = (F[..., :3, :3] * c["axes"][:, None, :]).sum(-1)
    rot_v = _cross(w, T[:, None, :3, 3] - F[..., :3, 3])
    if plain:
        return np.concatenate([rot_v, w], -1).transpose(0, 2, 1)
    pris = c["prismatic"][:, None]
    J = np.concatenate([np.where(pris, w, rot_v), np.where(pris, 0.0, w)], -1).transpose(0, 2, 1)
    return J @ c["A"]


def _rotvec(R: np.ndarray) -> np.ndarray:
    """(n, 3) rotation vectors of rotations (n, 3, 3) (:func:`ggik.kinematics.geometry.matrix_to_rotvec`)."""
    K = (R.reshape(-1, 9) @ _W.T + _C).reshape(-1, 4, 4)
    best = np.argmax(np.diagonal(K, axis1=1, axis2=2), -1)
    row = K[np.arange(len(K)), best]
    quat = row / _norm(row)[:, None]
    quat = np.where(quat[:, :1] < 0, -quat, quat)
    vec = quat[:, 1:]
    s = _norm(vec)[:, None]
    angle = 2.0 * np.arctan2(s, quat[:, :1])
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0 / np.maximum(quat[:, :1], 1e-12))
    return vec * scale


def _residual(T: np.ndarray, goal: np.ndarray, kind: str, w: float, ax: np.ndarray, B: np.ndarray) -> np.ndarray:
    """(n, 3|5|6) :func:`ggik.ik.residuals.goal_residual`."""
    dp = goal[:, :3, 3] - T[:, :3, 3]
    if kind == "position":
        return dp
    if kind == "pose":
        return np.concatenate([dp, w * _rotvec(goal[:, :3, :3] @ T[:, :3, :3].transpose(0, 2, 1))], -1)
    a, g = T[:, :3, :3] @ ax, goal[:, :3, :3] @ ax
    cr = _cross(a, g)
    s, d = _norm(cr), (a * g).sum(-1)
    small = s < 1e-12
    rho = cr * (np.arctan2(s, d) / np.where(small, 1.0, s))[:, None]
    rho = np.where((small & (d < 0))[:, None], np.pi * B[:, :, 0], np.where(small[:, None], 0.0, rho))
    return np.concatenate([dp, w * (rho[:, None, :] @ B)[:, 0, :]], -1)


def _errors(e: np.ndarray, kind: str, w: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`ggik.ik.residuals.residual_errors`."""
    pos = _norm(e[:, :3])
    return pos, (np.zeros_like(pos) if kind == "position" else _norm(e[:, 3:]) / w)


def solve_numpy(problem: LMProblem) -> LMOutcome:
    """LM on every element of ``problem`` in numpy (float64, on the CPU); the outcome as CPU float64 tensors."""
    c, plain = problem.chain.robot.chain_constants()
    goal, q0, lo, hi, axis, basis = problem.arrays()
    cfg, kind, starts = problem.chain.cfg, problem.chain.kind, problem.starts
    n = q0.shape[0]
    w = cfg.rot_weight
    row_w = pose_weights(w, torch.zeros((), dtype=torch.float64)).numpy()
    start = np.clip(q0, lo, hi)  # the starts as given, within the limits
    q = start.copy()
    F, T = _frames(c, q)
    e = _residual(T, goal, kind, w, axis, basis)
    pos, rot = _errors(e, kind, w)
    pos0, rot0 = pos.copy(), rot.copy()
    iters = np.zeros(n, dtype=np.int64)
    running = (pos >= cfg.pos_tol) | (rot >= cfg.rot_tol)
    first = FirstSolution(~running, starts) if starts else None
    if first is not None:
        running = first.running(running)
    work = WorkingSet(running, (q, pos, rot))
    qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e = (t[work.active] for t in (q, pos, rot, F, T, goal, basis, e))
    cost = (e * e).sum(-1)
    lam = np.full(work.active.shape, cfg.damping)
    for _ in range(cfg.max_iters):
        if work.active.size == 0:
            break
        J = _jacobian(c, plain, Fa, Ta)
        if kind == "pose":
            J = J * row_w
        elif kind == "position":
            J = J[:, :3, :]
        else:
            J = np.concatenate([J[:, :3, :], w * (Ba.transpose(0, 2, 1) @ J[:, 3:, :])], -2)
        q_new = np.minimum(np.maximum(qa + damped_step(J, e, qa, lo, hi, lam), lo), hi)
        F_new, T_new = _frames(c, q_new)
        e_new = _residual(T_new, Tg, kind, w, axis, Ba)
        cost_new = (e_new * e_new).sum(-1)
        better = cost_new < cost
        qa, Fa, Ta, e, cost = accept(better, (q_new, F_new, T_new, e_new, cost_new), (qa, Fa, Ta, e, cost))
        lam = next_damping(lam, better)
        iters[work.active] += 1
        pos_a, rot_a = _errors(e, kind, w)
        keep = (pos_a >= cfg.pos_tol) | (rot_a >= cfg.rot_tol)
        if first is not None:
            keep = first.keep(work.active, keep)
        qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e, cost, lam = work.leave(
            keep, (qa, pos_a, rot_a, Fa, Ta, Tg, Ba, e, cost, lam)
        )
    work.finish((qa, pos_a, rot_a))
    if first is not None:  # the starts after a goal's solution, as they were given
        later = first.later()
        q[later], iters[later], pos[later], rot[later] = start[later], 0, pos0[later], rot0[later]
    return LMOutcome(*(torch.from_numpy(a) for a in (q, iters, pos, rot)))
