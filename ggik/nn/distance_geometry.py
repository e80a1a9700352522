"""Differentiable distance-geometry terms for the decoder: known-edge residuals and a damped Gauss-Newton step.

A point set X (N, 3) solves an IK problem when every known edge {i, j} has its length d_ij. With residuals

    r_ij = |x_i - x_j|^2 - d_ij^2   [m^2]   (known edges only)

and the cost f(X) = 1/2 sum_{edges} r_ij^2, one damped Gauss-Newton step of the movable nodes solves
(J^T J + lambda I) delta = -J^T r with the closed-form blocks of J^T J (block (i, i) = sum_j 4 e_ij e_ij^T, block
(i, j) = -4 e_ij e_ij^T, e_ij = x_i - x_j). The step is an equivariant vector per node (it rotates with X and
does not change under translation), so a network may follow it with invariant coefficients and stay
E(3)-equivariant. :func:`block_jacobi_step` keeps only the diagonal (3 x 3) blocks of J^T J: each node takes the
damped Newton step of its own edges with its neighbours held where they are (a closed-form 3 x 3 solve per node,
no (3M x 3M) system), a cheaper and weaker step for decoders whose per-sample budget is small. Everything here
is batched, dense and differentiable (a batched linear solve); the parameter-free refinement of
:mod:`ggik.ik.dg_refine` is the float64, no-grad, many-iteration relative of this step.

:func:`gauss_newton_step` solves either a reduced system (the columns movable in some row: fewer unknowns, but found
with ``nonzero()``, a host sync and a data-dependent shape) or the fixed-size one of all N columns (the same solution);
by default the fixed-size one on CUDA, under torch.compile and inside :func:`fixed_size_steps` (a training step that
never waits for its device, on any device: ``sync_free`` of :class:`ggik.training.trainer.Trainer`).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import torch

from ggik.graph.handedness import link_nodes, signed_volumes, volume_jacobian

__all__ = [
    "known_residuals",
    "gauss_newton_step",
    "fixed_size_steps",
    "block_jacobi_step",
    "volume_normal_terms",
    "volume_residuals",
]

#: whether :func:`gauss_newton_step` takes all columns on every device (:func:`fixed_size_steps`)
_FIXED_SIZE = contextvars.ContextVar("ggik_fixed_size_steps", default=False)


@contextlib.contextmanager
def fixed_size_steps(enabled: bool = True) -> Iterator[None]:
    """While it is entered, :func:`gauss_newton_step` solves the fixed-size system of
    all N columns on every device (``enabled``; False: the device's default), as it does on CUDA: no host sync and no
    shape that depends on the data, so a training step on a CPU takes the path of a GPU's (tests) and a step has the
    same shapes every time. The solution is the reduced system's to rounding."""
    token = _FIXED_SIZE.set(enabled)
    try:
        yield
    finally:
        _FIXED_SIZE.reset(token)


def known_residuals(
    x: torch.Tensor, known_distances: torch.Tensor, known_mask: torch.Tensor, rows: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Residuals of the known edges and the pairwise differences.

    Args:
        x: (B, N, 3) positions [m]; known_distances: (B, N, N) [m] (anything, also NaN, where unknown);
        known_mask: (B, N, N) float or bool, 1 on known edges (symmetric, 0 on the diagonal and padding);
        rows: optional (M,) node indices i: only the residuals of their edges (i, j), for all j.
    Returns:
        r: (B, M, N) r_ij = (|x_i - x_j|^2 - d_ij^2) * known [m^2]; e: (B, M, N, 3) x_i - x_j [m] (M = N without
        ``rows``).
    """
    if rows is not None:
        known_distances, known_mask = known_distances[:, rows], known_mask[:, rows]
    e = (x if rows is None else x[:, rows])[:, :, None, :] - x[:, None, :, :]
    known = known_mask.to(x.dtype)
    d = torch.where(known > 0, known_distances.to(x.dtype), torch.zeros_like(known))  # NaN/inf where unknown stay out
    r = ((e * e).sum(-1) - d**2) * known
    return r, e


def gauss_newton_step(
    x: torch.Tensor,
    known_distances: torch.Tensor,
    known_mask: torch.Tensor,
    movable: torch.Tensor,
    damping: float = 1e-2,
    max_step: float = 0.25,
    volumes: tuple[torch.Tensor, torch.Tensor] | None = None,
    extra: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """One damped Gauss-Newton step delta (B, N, 3) [m] on the known distances; zero on nodes that may not move.

    Args:
        x: (B, N, 3) positions [m]; known_distances, known_mask: (B, N, N) as in :func:`known_residuals`.
        movable: (B, N) bool, nodes whose positions are unknowns (padding and anchors: False).
        damping: lambda relative to the mean diagonal of J^T J over the movable coordinates.
        max_step: each node's step is scaled down to at most this length [m] (a trust region: far from a
            solution a Gauss-Newton step can be huge, and a network early in training starts far away);
            ``inf``: no limit.
    The normal equations are assembled and solved over the M nodes that are movable in some row of the batch
    (3M unknowns: for one robot, its free nodes; a row's other nodes get a unit diagonal and a zero right-hand
    side, so their step is exactly 0). On CUDA, while torch.compile traces and inside :func:`fixed_size_steps` all N
    nodes are columns: the same solution from a fixed-size system without a host sync (CUDA graphs can capture it) and
    without a data-dependent shape (torch.compile traces it whole). The solve runs in float32 at least (the linear
    solve needs it under bf16 autocast); the result has x's dtype.
        volumes: optional (V (B, L) [m^3], w (B, L) [1/m^2]): the links' signed volumes (:mod:`ggik.graph.handedness`,
            L link slots) join the residuals, the cost gaining ``1/2 sum_l w_l (V_l(X) - V_l)^2``
            (:func:`volume_normal_terms`); w = 1 / L^2 (L the axis length) makes a volume residual an area like the
            distance residuals, w = 0 leaves a link out (and leaves the step exactly as without it).
        extra: optional further residual rows (r (B, K), dr/dx (B, K, N, 3)), the cost gaining ``1/2 sum_k r_k^2``
            (e.g. the joint limits' hinges of :mod:`ggik.ik.dg_limits`); a row with r = 0 and a zero Jacobian leaves
            the step exactly as without it.
    """
    dtype = x.dtype
    work = torch.promote_types(dtype, torch.float32)
    B, N, _ = x.shape
    step = torch.zeros(B, N, 3, dtype=work, device=x.device)
    # fixed size on CUDA (no host sync), under torch.compile (no graph break), where asked (fixed_size_steps)
    all_columns = x.device.type == "cuda" or torch.compiler.is_compiling() or _FIXED_SIZE.get()
    if all_columns:
        cols = torch.arange(N, device=x.device)
    else:  # the columns movable in some row (fewer unknowns; nonzero() waits for the device, free on a CPU)
        cols = movable.any(0).nonzero()[:, 0]  # (M,)
    M = cols.numel()
    if M == 0:
        return step.to(dtype)
    with torch.autocast(x.device.type, enabled=False):
        xw = x.to(work)
        r, e = known_residuals(xw, known_distances, known_mask, rows=cols)  # (B, M, N), (B, M, N, 3)
        known = known_mask[:, cols].to(work)  # (B, M, N)
        mov = movable[:, cols].to(work)  # (B, M)
        grad = 2.0 * (r[..., None] * e).sum(2)  # (B, M, 3): J^T r
        ek = e * known[..., None]  # (B, M, N, 3): rows of the known edges only
        ec = e[:, :, cols] * (mov[:, :, None, None] * mov[:, None, :, None])  # (B, M, M, 3), movable pairs only
        # (B, M, 3, M, 3): block (i, j) = -4 k_ij e_ij e_ij^T between movable nodes, then the diagonal blocks
        H = (-4.0 * ek[:, :, cols, :, None] * ec[..., None, :]).transpose(2, 3).contiguous()
        blocks = 4.0 * torch.einsum("bmnk,bmnl->bmkl", ek, e) * mov[..., None, None]  # (B, M, 3, 3) diagonal blocks
        H.diagonal(0, 1, 3).copy_(blocks.permute(0, 2, 3, 1))  # the view's [b, k, l, m] is H[b, m, k, m, l]
        if volumes is not None:
            grad_v, H_v = volume_normal_terms(xw, volumes[0].to(work), volumes[1].to(work), cols, mov)
            grad, H = grad + grad_v, H + H_v
        if extra is not None:
            r_x, J_x = extra[0].to(work), extra[1].to(work)[:, :, cols] * mov[:, None, :, None]  # (B, K), (B, K, M, 3)
            grad = grad + torch.einsum("bk,bkmc->bmc", r_x, J_x)
            H = H + torch.einsum("bkmi,bknj->bminj", J_x, J_x)
        H = H.reshape(B, 3 * M, 3 * M)
        mov3 = mov.repeat_interleave(3, dim=1)  # (B, 3M)
        diag = torch.diagonal(H, dim1=-2, dim2=-1)
        scale = (diag * mov3).sum(-1) / mov3.sum(-1).clamp_min(1.0)
        lam = damping * scale.clamp_min(1e-6)
        diag += lam[:, None] * mov3 + (1.0 - mov3)  # damping on the unknowns, a unit row for the others
        rhs = -(grad.reshape(B, 3 * M) * mov3)[..., None]
        # LU with pivoting (no error check: no host sync); Cholesky broke down on the nearly singular systems of a
        # small damping (the DG refinement's late steps)
        sub = torch.linalg.solve_ex(H, rhs)[0][..., 0].reshape(B, M, 3) * mov[..., None]
        sub = _clamp_step_length(sub, max_step)
        step = step.index_copy(1, cols, sub)
    return step.to(dtype)


def _clamp_step_length(step: torch.Tensor, max_step: float) -> torch.Tensor:
    """Scale each node's step (..., 3) down to at most ``max_step`` [m] (``inf``: unchanged)."""
    if max_step == float("inf"):  # inf / length would make 0 * inf = NaN in the backward pass
        return step
    length = torch.sqrt((step * step).sum(-1, keepdim=True) + 1e-12)
    return step * torch.clamp(max_step / length, max=1.0)


def block_jacobi_step(
    x: torch.Tensor,
    known_distances: torch.Tensor,
    known_mask: torch.Tensor,
    movable: torch.Tensor,
    damping: float = 1e-2,
    max_step: float = 0.25,
) -> torch.Tensor:
    """One damped block-Jacobi Gauss-Newton step delta (B, N, 3) [m]: node i solves (H_ii + lambda_i I) delta_i = -g_i.

    ``H_ii = 4 sum_j k_ij e_ij e_ij^T`` is the diagonal block of J^T J of :func:`gauss_newton_step` and ``g_i = 2 sum_j
    r_ij e_ij`` the node's gradient, so a node with fixed neighbours would land on the Gauss-Newton point of its own
    edges; all nodes move at once (neighbours that both correct one edge overshoot it, which the learned
    coefficients of a decoder can scale). lambda_i = damping * trace(H_ii) / 3 per node (+ a floor of 1e-9 m^2 for a
    node without known edges). Arguments and shapes as in :func:`gauss_newton_step`; computed in float32 at least,
    returned in x's dtype; zero on nodes that may not move.
    """
    dtype = x.dtype
    work = torch.promote_types(dtype, torch.float32)
    with torch.autocast(x.device.type, enabled=False):
        xw = x.to(work)
        r, e = known_residuals(xw, known_distances, known_mask)  # (B, N, N), (B, N, N, 3)
        known = known_mask.to(work)
        grad = 2.0 * (r[..., None] * e).sum(2)  # (B, N, 3)
        ek = e * known[..., None]
        H = 4.0 * torch.einsum("bijk,bijl->bikl", ek, e)  # (B, N, 3, 3)
        lam = damping * torch.diagonal(H, dim1=-2, dim2=-1).sum(-1) / 3.0 + 1e-9
        A = H + lam[..., None, None] * torch.eye(3, dtype=work, device=x.device)
        step = -_solve_spd3(A, grad) * movable[..., None].to(work)
        step = _clamp_step_length(step, max_step)
    return step.to(dtype)


def volume_normal_terms(
    x: torch.Tensor, volumes: torch.Tensor, weight: torch.Tensor, cols: torch.Tensor, movable: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The signed volumes' share of the Gauss-Newton normal equations over the columns ``cols`` (M,).

    Args:
        x: (B, N, 3) positions [m]; volumes: (B, L) the links' signed volumes V_l [m^3]; weight: (B, L) w_l [1/m^2];
        cols: (M,) node indices of the unknowns; movable: (B, M) float, 1 where column m moves in row b.
    Returns:
        (J^T W r (B, M, 3), J^T W J (B, M, 3, M, 3)) for the residuals r_l = V_l(X) - V_l, whose Jacobian rows are
        :func:`ggik.graph.handedness.volume_jacobian` placed at each link's four nodes, zero at nodes that do not move.
    """
    B, N, _ = x.shape
    L = volumes.shape[-1]
    onehot = torch.nn.functional.one_hot(link_nodes(L, x.device), N).to(x.dtype)  # (L, 4, N)
    J = torch.einsum("lkn,blkc->blnc", onehot[..., cols], volume_jacobian(x, L)) * movable[:, None, :, None]
    r = (signed_volumes(x, L) - volumes) * weight  # (B, L), weighted
    grad = torch.einsum("bl,blmc->bmc", r, J)
    H = torch.einsum("bl,blmi,blnj->bminj", weight, J, J)
    return grad, H


def volume_residuals(x: torch.Tensor, volumes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """How far point sets are from the arm's handedness, per node, for a network to read and follow.

    Args:
        x: (B, N, 3) positions [m]; volumes: (B, L) the arm's signed link volumes [m^3], 0 on links that are not skew
            and on padding (they are left out).
    Returns:
        (B, N, 2) [m^3]: at each node the residual r_l = V_l(X) - V_l of the link whose far axis it is on (p_i, q_i of
        link i) and of the link whose near axis it is on (p_{i-1}, q_{i-1} of link i); (B, N, 3) [m^5]: the gradient
        of 1/2 sum_l r_l^2 at each node. Invariant to rotations and translations of x, and the gradient rotates with x;
        a reflection changes the residuals (the volumes change sign, the arm's do not): what a network needs to tell the
        arm from its mirror images.
    """
    B, N, _ = x.shape
    L = volumes.shape[-1]
    idx = link_nodes(L, x.device)
    r = (signed_volumes(x, L) - volumes) * (volumes != 0).to(x.dtype)  # (B, L)
    zero = x.new_zeros(B, N)
    far = zero.index_add(1, idx[:, 2], r).index_add(1, idx[:, 3], r)
    near = zero.index_add(1, idx[:, 0], r).index_add(1, idx[:, 1], r)
    g = volume_jacobian(x, L) * r[..., None, None]  # (B, L, 4, 3)
    grad = x.new_zeros(B, N, 3).index_add(1, idx.reshape(-1), g.reshape(B, 4 * L, 3))
    return torch.stack([far, near], -1), grad


def _solve_spd3(A: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """x with A x = b for symmetric positive definite A (..., 3, 3), b (..., 3): the adjugate over the determinant,
    elementwise (a batched LAPACK call per 3 x 3 matrix costs far more than the arithmetic)."""
    a, bb, c = A[..., 0, 0], A[..., 1, 1], A[..., 2, 2]
    d, e, f = A[..., 0, 1], A[..., 1, 2], A[..., 0, 2]
    c00, c11, c22 = bb * c - e * e, a * c - f * f, a * bb - d * d
    c01, c12, c02 = f * e - d * c, d * f - a * e, d * e - bb * f
    det = a * c00 + d * c01 + f * c02
    x0 = c00 * b[..., 0] + c01 * b[..., 1] + c02 * b[..., 2]
    x1 = c01 * b[..., 0] + c11 * b[..., 1] + c12 * b[..., 2]
    x2 = c02 * b[..., 0] + c12 * b[..., 1] + c22 * b[..., 2]
    return torch.stack([x0, x1, x2], -1) / det[..., None]
