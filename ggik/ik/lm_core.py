"""The one definition of the damped least-squares step that every Levenberg-Marquardt solver in ggik takes.

A step solves ``(J^T J + lam (diag(J^T J) + I)) dq = J^T e`` for the joints not held at a limit; a step that lowers
the cost is taken and ``lam`` shrinks by :data:`DAMPING_DOWN`, otherwise ``lam`` grows by :data:`DAMPING_UP`, within
[:data:`DAMPING_MIN`, :data:`DAMPING_MAX`]. A joint on a limit whose gradient component points outward by more than
:data:`HOLD_GRADIENT` is held out of the step. The solvers that take it: the torch LM (:func:`ggik.ik.refine._lm_flat`,
large batches and CUDA), its numpy form (:mod:`ggik.ik.lm_numpy`), the compiled kernel (:mod:`ggik.ik.lm_compiled`,
which reads these constants when it is compiled), the trajectory solver (:mod:`ggik.path.trajectory`) and the
continuation sweeps (:func:`ggik.path.candidates.sweep`, fixed damping). Each function takes torch tensors or numpy
arrays alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

__all__ = [
    "HOLD_GRADIENT",
    "DAMPING_DOWN",
    "DAMPING_UP",
    "DAMPING_MIN",
    "DAMPING_MAX",
    "held_joints",
    "damped",
    "next_damping",
]

#: a joint on a limit is held out of a step when its gradient component points outward by more than this (J^T e, in
#: m^2 per rad for the position rows): a zero component (a joint the goal leaves free, e.g. the roll about the tool
#: axis of a position+axis goal) is rounding noise of either sign, and must not decide a step
HOLD_GRADIENT = 1e-14
DAMPING_DOWN = 3.0  #: lam is divided by this after a step that lowered the cost
DAMPING_UP = 4.0  #: ... and multiplied by this after one that did not
DAMPING_MIN, DAMPING_MAX = 1e-9, 1e6  #: the range lam is kept in


def held_joints(q: Any, lo: Any, hi: Any, g: Any) -> Any:
    """(..., dof) bool: the joints of q (..., dof) on a limit (lo, hi) whose gradient g = J^T e points outward."""
    return ((q <= lo) & (g < -HOLD_GRADIENT)) | ((q >= hi) & (g > HOLD_GRADIENT))


def damped(JtJ: Any, lam: Any) -> Any:
    """``JtJ + lam (diag(JtJ) + I)`` for JtJ (..., n, n) and lam, a number or (...,)."""
    if isinstance(JtJ, torch.Tensor):
        d = torch.diagonal(JtJ, dim1=-2, dim2=-1)
        lam_t = torch.as_tensor(lam, dtype=JtJ.dtype, device=JtJ.device)
        return JtJ + torch.diag_embed(lam_t[..., None] * (d + 1.0))
    diag = np.diagonal(JtJ, axis1=-2, axis2=-1)
    lam_a = np.asarray(lam, dtype=JtJ.dtype)
    return JtJ + (lam_a[..., None] * (diag + 1.0))[..., None] * np.eye(JtJ.shape[-1])


def next_damping(lam: Any, better: Any) -> Any:
    """lam after a step: divided by :data:`DAMPING_DOWN` where ``better`` (the cost fell), else multiplied by
    :data:`DAMPING_UP`, kept within [DAMPING_MIN, DAMPING_MAX]; a number for numbers, an array for arrays."""
    if isinstance(lam, torch.Tensor):
        return torch.where(better, lam / DAMPING_DOWN, lam * DAMPING_UP).clamp(DAMPING_MIN, DAMPING_MAX)
    if isinstance(lam, np.ndarray):
        return np.clip(np.where(better, lam / DAMPING_DOWN, lam * DAMPING_UP), DAMPING_MIN, DAMPING_MAX)
    return min(max(lam / DAMPING_DOWN if better else lam * DAMPING_UP, DAMPING_MIN), DAMPING_MAX)
