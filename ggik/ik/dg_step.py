"""The distance-geometric projection's Gauss-Newton step on the problem's sparse structure (:mod:`ggik.ik.dg_refine`).

:func:`ggik.nn.distance_geometry.gauss_newton_step` builds the normal equations densely: all (M, N) node pairs,
a (B, M, 3, M, 3) outer-product tensor and a batched LU solve, general enough for the model's decoder (padding, per-row
masks, bf16). The projection solves one fixed problem structure for a whole batch (one robot, one goal kind), so its
step here works on the E known edges with a free end and on the few rows of the link volumes and limit hinges:

* residuals r_e = |x_i - x_j|^2 - d_e^2 and e_e = x_i - x_j (B, E) and (B, E, 3);
* J^T r through the signed edge-node incidence (E, M): one matrix product;
* J^T J: the diagonal blocks 4 sum_e e_e e_e^T through the unsigned incidence, the off-diagonal blocks -4 e_e e_e^T
  gathered from the edges (a node pair holds at most one edge), the (B, 3M, 3M) matrix in one gather;
* the volume and limit rows (at most 4 nodes each) as a dense (B, R, 3M) Jacobian: J^T J by one batched product;
* the damped system solved by Cholesky (``cholesky_ex``, ``cholesky_solve``), the rows where it breaks down (nearly
  singular at a small damping) by LU with pivoting, as ``gauss_newton_step`` solves them all.

The same normal equations as ``gauss_newton_step`` with the same damping (relative to the mean diagonal), so the same
step to rounding; float64, no autograd.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.graph.handedness import link_nodes
from ggik.ik.dg_limits import LimitTerms, limit_slots

__all__ = [
    "CHUNK",
    "StepStructure",
    "step_structure",
    "step_cost",
    "assemble",
    "sparse_step",
    "chunked_step",
    "chunked_cost",
]

#: samples per solve: their normal matrices (10-14 kB each for 3M = 36-42) stay in a core's L2 cache
#: (``benchmarks/dg_budget/step_cost.py``)
CHUNK = 64


@dataclass(frozen=True)
class StepStructure:
    """The sparse structure of one projection problem (float64, CPU).

    Attributes:
        cols: (M,) the free nodes (the unknowns, 3M coordinates); ends: (E, 2) the known edges with a free end.
        pair: (Q,) the edges with two free ends (a, b): block (a, b) of J^T J is -4 e e^T of the edge.
        where: (E, 2) the edge ends' columns (M: an anchor).
        bi, bj: (2Q + M,) the blocks (a, b), then (b, a) of those edges, then the diagonal blocks (m, m).
        volumes: optional (nodes (Lv, 4), V (Lv,) [m^3], sqrt(w) (Lv,) [1/m]) of the weighted links.
        limits: optional :class:`LimitTerms` (their node N is the goal point).
        slots: (columns (R, 4), 1.0 / 0.0 (R, 4)): the volume rows', then the limit rows', four nodes as unknowns
            (anchors and the goal point: column 0, weight 0).
    """

    cols: torch.Tensor
    ends: torch.Tensor
    pair: torch.Tensor
    where: torch.Tensor
    bi: torch.Tensor
    bj: torch.Tensor
    volumes: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None
    limits: LimitTerms | None
    slots: tuple[torch.Tensor, torch.Tensor]


def step_structure(
    edges: torch.Tensor,
    free: torch.Tensor,
    volumes: tuple[torch.Tensor, torch.Tensor] | None,
    limits: LimitTerms | None,
) -> StepStructure:
    """The structure of the problem whose known edges with a free end are ``edges`` (N, N) bool (symmetric), free
    nodes ``free`` (N,) bool, link ``volumes`` (V (L,) [m^3], w (L,) [1/m^2]; links with w = 0 are left out) and
    ``limits``' rows."""
    N = free.shape[0]
    cols = free.nonzero()[:, 0]
    M = cols.numel()
    where = torch.full((N + 1,), -1, dtype=torch.long)  # node -> column (-1: anchor, or the goal point N)
    where[cols] = torch.arange(M)
    ends = torch.triu(edges, 1).nonzero()  # (E, 2)
    a, b = where[ends[:, 0]], where[ends[:, 1]]
    both = (a >= 0) & (b >= 0)
    ar = torch.arange(M)
    bi, bj = torch.cat([a[both], b[both], ar]), torch.cat([b[both], a[both], ar])  # off-diagonal, both ways; diagonal
    ends_at = torch.stack([a, b], 1).masked_fill(torch.stack([a, b], 1) < 0, M)  # anchors: column M, dropped
    vol = None
    nodes = [torch.zeros(0, 4, dtype=torch.long)]
    if volumes is not None:
        keep = (volumes[1] > 0).nonzero()[:, 0]
        vn = link_nodes(volumes[0].shape[0])[keep]
        vol = (vn, volumes[0][keep].to(torch.float64), volumes[1][keep].to(torch.float64).sqrt())
        nodes.append(vn)
    if limits is not None:
        nodes.append(limits.nodes)
    at = where[torch.cat(nodes)]  # (R, 4)
    slots = (at.clamp_min(0), (at >= 0).to(torch.float64))
    return StepStructure(cols, ends, both.nonzero()[:, 0], ends_at, bi, bj, vol, limits, slots)


def _rows(x: torch.Tensor, goal: torch.Tensor, st: StepStructure, limits: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """The volume and (with ``limits``) limit rows of point sets ``x`` (B, N, 3) with goal points ``goal`` (B, 1, 3):
    (r (B, R), dr/dx at their four nodes (B, R, 4, 3)), volume rows weighted by sqrt(w)."""
    rs, js = [x.new_zeros(x.shape[0], 0)], [x.new_zeros(x.shape[0], 0, 4, 3)]
    if st.volumes is not None:
        vn, V, sw = st.volumes
        p, q, s, t = (x[:, vn[:, k]] for k in range(4))
        u, v, w = q - p, s - p, t - p
        gb, gc, gd = torch.linalg.cross(v, w), torch.linalg.cross(w, u), torch.linalg.cross(u, v)
        rs.append(((u * gb).sum(-1) - V) * sw)
        js.append(torch.stack([-(gb + gc + gd), gb, gc, gd], -2) * sw[:, None, None])
    if limits and st.limits is not None:
        r, J = limit_slots(torch.cat([x, goal], 1), st.limits)
        rs.append(r)
        js.append(J)
    return torch.cat(rs, 1), torch.cat(js, 1)


def step_cost(x: torch.Tensor, goal: torch.Tensor, d2: torch.Tensor, st: StepStructure) -> torch.Tensor:
    """f(X) (B,) [m^4] of point sets ``x`` (B, N, 3) with goal points ``goal`` (B, 1, 3) and squared known lengths
    ``d2`` (B, E) [m^2]: 1/2 the squared edge residuals, weighted volume residuals and limit hinges
    (:func:`ggik.ik.dg_refine.distance_cost` and the limit rows)."""
    e = x[:, st.ends[:, 0]] - x[:, st.ends[:, 1]]
    r = (e * e).sum(-1) - d2
    cost = 0.5 * (r * r).sum(-1)
    if st.volumes is not None or st.limits is not None:
        rr = _rows(x, goal, st, True)[0]
        cost = cost + 0.5 * (rr * rr).sum(-1)
    return cost


def assemble(
    x: torch.Tensor,
    goal: torch.Tensor,
    d2: torch.Tensor,
    st: StepStructure,
    damping: torch.Tensor,
    limits: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The damped normal equations (J^T J + lambda I (B, 3M, 3M), -J^T r (B, 3M, 1)) of :func:`sparse_step`;
    ``damping`` and ``limits`` (1.0: the limit rows join, 0.0: their rows are exact zeros) are 0-d float64 tensors, so
    that one compiled graph serves every step."""
    B = x.shape[0]
    M = st.cols.numel()
    e = x[:, st.ends[:, 0]] - x[:, st.ends[:, 1]]  # (B, E, 3)
    r = (e * e).sum(-1) - d2
    ge = 2.0 * r[..., None] * e  # (B, E, 3): J^T r per edge end
    grad = x.new_zeros(B, M + 1, 3).index_add(1, st.where[:, 0], ge).index_add(1, st.where[:, 1], -ge)[:, :M]
    o = 4.0 * e[..., :, None] * e[..., None, :]  # (B, E, 3, 3)
    H5 = x.new_zeros(B, M, 3, M, 3)
    blocks = H5.permute(0, 1, 3, 2, 4)  # (B, M, M, 3, 3), a view: block (m, n) of J^T J
    off = -o[:, st.pair]  # a node pair holds at most one edge
    diag = torch.zeros(B, M + 1, 3, 3, dtype=x.dtype).index_add_(1, st.where[:, 0], o).index_add_(1, st.where[:, 1], o)
    blocks[:, st.bi, st.bj] = torch.cat([off, off, diag[:, :M]], 1)
    at, valid = st.slots
    R = at.shape[0]
    if R:  # rows of at most 4 nodes each: J^T r and J^T J scattered into their nodes' blocks
        rr, jj = _rows(x, goal, st, st.limits is not None)
        keep = torch.ones(R, dtype=x.dtype)
        if st.limits is not None:  # the limit rows are the last K
            keep = torch.cat(
                [keep[: R - st.limits.nodes.shape[0]], limits.to(x.dtype).expand(st.limits.nodes.shape[0])]
            )
        jj = jj * (keep[:, None] * valid)[..., None]  # (B, R, 4, 3), zero at anchors and the goal point
        if not torch.compiler.is_compiling():  # eager: a dense (B, R, 3M) Jacobian and two batched products
            J = torch.einsum("rsm,brsc->brmc", torch.nn.functional.one_hot(at, M).to(x.dtype), jj)
            J = J.reshape(B, R, 3 * M)
            H = H5.view(B, 3 * M, 3 * M).baddbmm(J.mT, J)
            return _damped(H, grad + (J.mT @ rr[..., None]).reshape(B, M, 3), damping)
        grad = grad + x.new_zeros(B, M, 3).index_add(1, at.reshape(-1), (rr[..., None, None] * jj).reshape(B, 4 * R, 3))
        outer = (jj[:, :, :, None, :, None] * jj[:, :, None, :, None, :]).reshape(B, 16 * R, 3, 3)
        si, sj = at[:, :, None].expand(R, 4, 4).reshape(-1), at[:, None, :].expand(R, 4, 4).reshape(-1)
        blocks.index_put_((torch.arange(B)[:, None], si[None], sj[None]), outer, accumulate=True)
    return _damped(H5.view(B, 3 * M, 3 * M), grad, damping)


def _damped(H: torch.Tensor, grad: torch.Tensor, damping: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(H + lambda I, -grad (B, 3M, 1)) with lambda = ``damping`` times the mean diagonal of H (B, 3M, 3M)."""
    B, n, _ = H.shape
    hd = torch.diagonal(H, dim1=-2, dim2=-1)
    lam = damping * (hd.sum(-1) / n).clamp_min(1e-6)
    return H + torch.diag_embed(lam[:, None].expand(B, n)), -grad.reshape(B, n, 1)


_COMPILED: dict[str, object] = {}


@torch.no_grad()
def sparse_step(
    x: torch.Tensor,
    goal: torch.Tensor,
    d2: torch.Tensor,
    st: StepStructure,
    damping: float,
    limits: bool,
    compiled: bool = False,
) -> torch.Tensor:
    """One damped Gauss-Newton step (B, M, 3) [m] of the free nodes ``st.cols`` of point sets ``x`` (B, N, 3)
    float64 with goal points ``goal`` (B, 1, 3) and squared known lengths ``d2`` (B, E) [m^2]: (J^T J + lambda I)
    delta = -J^T r, lambda = ``damping`` times the mean diagonal of J^T J; the limit rows join with ``limits``.
    ``compiled``: the normal equations through ``torch.compile`` (:func:`assemble` fused into a few C++ loops; its first
    call per structure and batch size compiles, seconds)."""
    args = (x, goal, d2, st, torch.tensor(damping, dtype=torch.float64), torch.tensor(1.0 if limits else 0.0))
    if compiled:
        if "assemble" not in _COMPILED:
            _COMPILED["assemble"] = torch.compile(assemble, dynamic=False)
        H, rhs = _COMPILED["assemble"](*args)  # type: ignore[operator]
    else:
        H, rhs = assemble(*args)
    B, M = x.shape[0], st.cols.numel()
    U, info = torch.linalg.cholesky_ex(H, upper=True)  # H = U^T U
    sol = torch.cholesky_solve(rhs, U, upper=True)
    bad = (info != 0).nonzero()[:, 0]
    if bad.numel():  # Cholesky broke down (nearly singular at a small damping): LU with pivoting, as the dense step
        sol[bad] = torch.linalg.solve_ex(H[bad], rhs[bad])[0]
    # a singular system at a vanishing damping can leave no finite step: that sample stays where it is this step
    sol = torch.where(torch.isfinite(sol).all(-2, keepdim=True), sol, torch.zeros((), dtype=sol.dtype))
    return sol.reshape(B, M, 3)


def _pad(n: int, *tensors: torch.Tensor) -> list[torch.Tensor]:
    """``tensors`` (n, ...) padded to :data:`CHUNK` rows with copies of their first row."""
    pad = torch.zeros(CHUNK, dtype=torch.long)
    pad[:n] = torch.arange(n)
    return [t[pad] for t in tensors]


def chunked_cost(
    x: torch.Tensor, goal: torch.Tensor, d2: torch.Tensor, st: StepStructure, compiled: bool = False
) -> torch.Tensor:
    """:func:`step_cost` (B,) [m^4] in chunks of :data:`CHUNK` samples, ``compiled`` as :func:`chunked_step`."""
    if not compiled:
        return step_cost(x, goal, d2, st)
    if "cost" not in _COMPILED:
        _COMPILED["cost"] = torch.compile(step_cost, dynamic=False)
    parts = []
    for start in range(0, x.shape[0], CHUNK):
        xs, gs, ds = x[start : start + CHUNK], goal[start : start + CHUNK], d2[start : start + CHUNK]
        n = xs.shape[0]
        if n < CHUNK:
            xs, gs, ds = _pad(n, xs, gs, ds)
        parts.append(_COMPILED["cost"](xs, gs, ds, st)[:n])  # type: ignore[operator]
    return torch.cat(parts)


def chunked_step(
    x: torch.Tensor,
    goal: torch.Tensor,
    d2: torch.Tensor,
    st: StepStructure,
    damping: float,
    limits: bool,
    compiled: bool = False,
) -> torch.Tensor:
    """:func:`sparse_step` of any batch (B, N, 3) in chunks of :data:`CHUNK` samples (their normal matrices stay in a
    core's cache); ``compiled``: the last chunk padded to the same size (one compiled graph per structure)."""
    parts = []
    for start in range(0, x.shape[0], CHUNK):
        xs, gs, ds = x[start : start + CHUNK], goal[start : start + CHUNK], d2[start : start + CHUNK]
        n = xs.shape[0]
        if compiled and n < CHUNK:  # pad with copies of the first sample, dropped again
            xs, gs, ds = _pad(n, xs, gs, ds)
        parts.append(sparse_step(xs, gs, ds, st, damping, limits, compiled)[:n])
    return torch.cat(parts)
