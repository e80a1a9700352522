"""The one definition of the damped least-squares step that every Levenberg-Marquardt solver in ggik takes, and of
the bookkeeping of a goal's starts stopped at its first solution.

A step solves ``(J^T J + lam (diag(J^T J) + I)) dq = J^T e`` for the joints not held at a limit; a step that lowers
the cost is taken and ``lam`` shrinks by :data:`DAMPING_DOWN`, otherwise ``lam`` grows by :data:`DAMPING_UP`, within
[:data:`DAMPING_MIN`, :data:`DAMPING_MAX`]. A joint on a limit whose gradient component points outward by more than
:data:`HOLD_GRADIENT` is held out of the step. The solvers that take it: the torch LM (:mod:`ggik.ik.lm.torch_lm`,
large batches and CUDA) and its numpy form (:mod:`ggik.ik.lm.numpy_lm`) through :func:`damped_step`, the compiled
kernel (:mod:`ggik.ik.lm.kernel`, which reads these constants when it is compiled), the trajectory solver
(:mod:`ggik.path.trajectory`, a banded system) and the continuation sweeps (:func:`ggik.path.candidates.sweep`, fixed
damping). Each function takes torch tensors or numpy arrays alike.

A goal's starts stopped at its first solution (:class:`FirstSolution`): the goal's solution is its lowest-indexed start
that converges within the budget, as if its starts ran one after another (which the compiled kernel does); a goal with
a start that meets the tolerances as given runs none. Every backend returns the same elements: the starts before the
solution at the end of their budget, the solution, and the starts after it as they were given (0 iterations).
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
    "damped_step",
    "FirstSolution",
    "WorkingSet",
    "accept",
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


def damped_step(J: Any, e: Any, q: Any, lo: Any, hi: Any, lam: Any) -> Any:
    """The LM step dq (n, dof) of residual rows J (n, m, dof) and residuals e (n, m) at q (n, dof) within limits lo, hi
    (dof,) and damping lam (n,): the joints :func:`held_joints` holds are out of the system and do not move."""
    if isinstance(J, torch.Tensor):
        g = (J.transpose(-1, -2) @ e[..., None])[..., 0]
        held = held_joints(q, lo, hi, g)
        J = J * (~held)[..., None, :].to(J.dtype)
        A = damped(J.transpose(-1, -2) @ J, lam)
        return torch.linalg.solve_ex(A, torch.where(held, 0.0, g)[..., None])[0][..., 0]  # A is positive definite
    g = (J.transpose(0, 2, 1) @ e[..., None])[..., 0]
    held = held_joints(q, lo, hi, g)
    J = J * (~held)[:, None, :]
    return np.linalg.solve(damped(J.transpose(0, 2, 1) @ J, lam), np.where(held, 0.0, g)[..., None])[..., 0]


def accept(better: Any, new: tuple, old: tuple) -> tuple:
    """Per element (the first dimension), each of ``new`` where ``better`` (k,) bool (its step lowered the cost), else
    the ``old`` value: the accepted step of every array of a lock-step loop."""
    where = torch.where if isinstance(better, torch.Tensor) else np.where
    return tuple(where(better.reshape(better.shape + (1,) * (a.ndim - 1)), a, b) for a, b in zip(new, old))


class FirstSolution:
    """The bookkeeping of goals whose ``starts`` consecutive elements stop at the goal's first solution (module
    docstring), for the lock-step loops, in torch tensors or numpy arrays alike. ``converged`` (n,) bool: the elements
    that meet the tolerances as given."""

    def __init__(self, converged: Any, starts: int) -> None:
        self.starts = starts
        self.index: Any  # (starts,) 0 .. starts - 1
        self.closed: Any  # (goals,) a start met the tolerances as given: none runs
        self.first: Any  # (goals,) the lowest converged start (starts: none yet)
        grid = converged.reshape(-1, starts)
        if isinstance(converged, torch.Tensor):
            self.index = torch.arange(starts, device=converged.device)
            self.closed = grid.any(-1)
            self.first = torch.where(grid, self.index, starts).amin(-1)
        else:
            self.index = np.arange(starts)
            self.closed = grid.any(-1)
            self.first = np.where(grid, self.index, starts).min(-1)

    def running(self, running: Any) -> Any:
        """(n,) bool: ``running`` less every start of the goals closed as given."""
        if isinstance(running, torch.Tensor):
            return running & ~self.closed.repeat_interleave(self.starts)
        return running & ~np.repeat(self.closed, self.starts)

    def keep(self, active: Any, keep: Any) -> Any:
        """``keep`` (k,) bool of the working set ``active`` (k,) (element indices) after an iteration, less the starts
        after their goal's lowest converged one; the converged ones (``~keep``) are recorded first."""
        goal, start = active // self.starts, active % self.starts
        done = ~keep
        if isinstance(active, torch.Tensor):
            self.first.scatter_reduce_(0, goal[done], start[done], "amin")
        else:
            np.minimum.at(self.first, goal[done], start[done])
        return keep & (start < self.first[goal])

    def later(self) -> Any:
        """(n,) bool: the starts after their goal's solution, returned as they were given."""
        return (self.index[None, :] > self.first[:, None]).reshape(-1)


class WorkingSet:
    """The elements of a lock-step loop still running (``active``: indices into the batch) and the batch's results
    ``(q (n, dof), pos (n,), rot (n,))``, into which elements are written as they stop (torch or numpy alike)."""

    def __init__(self, running: Any, results: tuple[Any, Any, Any]) -> None:
        self.active: Any = running.nonzero()[:, 0] if isinstance(running, torch.Tensor) else np.flatnonzero(running)
        self.results = results

    def leave(self, keep: Any, running: tuple) -> tuple:
        """The elements not ``keep`` (k,) stop: the first three arrays of ``running`` (their q, pos, rot; then any
        other per-element arrays of the loop) are written into the results; returns ``running`` for those kept."""
        if bool(keep.all()):
            return running
        out = ~keep
        for full, part in zip(self.results, running[:3]):
            full[self.active[out]] = part[out]
        self.active = self.active[keep]
        return tuple(t[keep] for t in running)

    def finish(self, running: tuple) -> None:
        """Write the elements still running at the end of the budget into the results."""
        for full, part in zip(self.results, running[:3]):
            full[self.active] = part
