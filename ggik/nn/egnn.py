"""Dense E(n)-equivariant graph neural network (Satorras, Hoogeboom, Welling, ICML 2021).

For node features ``h_i`` (invariant), coordinates ``x_i`` (equivariant) and edge attributes ``a_ij``
(invariant), one layer computes over all ordered pairs of real nodes i != j:

.. math::
    s_{ij} = \\mathrm{SiLU}(W[h_i, h_j, \\|x_i - x_j\\|^2, a_{ij}]),\\quad
    m_{ij} = \\mathrm{SiLU}(W_m s_{ij}),\\quad w_{ij} = w_x^\\top s_{ij},\\qquad
    x_i' = x_i + \\frac{1}{N_i - 1} \\sum_{j \\ne i} \\frac{x_i - x_j}{\\|x_i - x_j\\| + 1}\\, w_{ij},\\qquad
    h_i' = h_i + \\phi_h\\big(\\mathrm{LN}(h_i), \\tfrac{1}{N_i - 1} \\sum_{j \\ne i} m_{ij}\\big)

The first linear map of ``phi_e`` is split per node, ``W[h_i, h_j, d, a] = A h_i + B h_j + c d + E a``:
``A h`` and ``B h`` are computed once per node and broadcast over edges, which avoids materialising the
(B, N, N, 2D + 2) concatenation (faster on a CPU). Coordinate differences are normalised
(``(x_i - x_j) / (|x_i - x_j| + 1)``) and the last layer of ``phi_x`` starts with a small gain, the
stability kit of the EGNN authors. The coordinate weight ``w_ij`` is a linear
read-out of the message MLP's hidden layer ``s_ij`` (one edge-sized activation instead of two). Aggregation is
a mean over real neighbours so that graphs of different size (robots of different DOF, padded in one batch) see
comparable scales.

Everything is exactly E(3)-equivariant: rotating, reflecting or translating ``x`` transforms the output
coordinates the same way and leaves the output features unchanged; permuting nodes permutes outputs.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["EGNNLayer", "EGNN"]


class EGNNLayer(nn.Module):
    """One dense EGNN layer.

    Args:
        dim: node feature width D.
        hidden: hidden width of the message and node MLPs.
        edge_dim: width of the edge attributes ``a_ij``.
        coord_gain: initial gain of the last coordinate layer (small = near-identity start).
        update_coords: if False the layer leaves ``x`` unchanged (feature-only layer).
        update_features: if False the layer leaves ``h`` unchanged (a last, coordinate-only layer).
        frame_vectors: F > 0 adds ``sum_f c_f(h_i) e_f`` to each coordinate update, where ``e_f`` are F
            equivariant vectors per graph (e.g. the axes of a frame built from known anchors) and
            ``c_f`` invariant coefficients (linear in h, small-gain start). Equivariance is kept as long
            as the vectors are computed from the inputs' coordinates.
        residual_inputs: the layer also sees how far the current positions are from the known distances:
            ``edge_attr`` must then be (known distance d_ij [m], known flag k_ij, ...); the residual
            r_ij = (|x_i - x_j|^2 - d_ij^2) k_ij [m^2] is an extra edge input, and the coordinate update
            gains a learned step along the gradient of the distance cost, ``g(h_i) sum_j r_ij (x_i - x_j) / N_i``
            (``g`` invariant, linear in h, small-gain start).

    Shapes:
        h: (B, N, D); x: (B, N, 3); edge_attr: (B, N, N, edge_dim); node_mask: (B, N) bool;
        coord_mask: optional (B, N) bool, the nodes whose coordinates may move (others are pinned,
        e.g. the known anchors of an IK problem; equivariance is kept since pinned nodes are inputs);
        frame: (B, F, 3) equivariant vectors, required when ``frame_vectors`` > 0.
        extra: optional (pre (B, N, hidden), dx (B, N, 3) [m]) computed outside the layer from the same inputs (e.g.
        :class:`ggik.nn.decoders.VolumeInputs`): ``pre`` is added to the message MLP's first layer of every edge into
        node i, ``dx`` to node i's coordinate update.
        Returns (h', x') of the same shapes. Padding nodes neither send nor receive messages and keep
        their inputs.
    """

    def __init__(
        self,
        dim: int,
        hidden: int,
        edge_dim: int,
        coord_gain: float = 1e-3,
        update_coords: bool = True,
        update_features: bool = True,
        frame_vectors: int = 0,
        residual_inputs: bool = False,
    ) -> None:
        super().__init__()
        self.dim, self.hidden, self.edge_dim = dim, hidden, edge_dim
        self.residual_inputs = residual_inputs
        self.update_coords, self.update_features = update_coords, update_features
        self.frame_vectors = frame_vectors if update_coords else 0
        self.lin_dst = nn.Linear(dim, hidden)  # A h_i (+ bias)
        self.lin_src = nn.Linear(dim, hidden, bias=False)  # B h_j
        self.lin_edge = nn.Linear(1 + edge_dim + int(residual_inputs), hidden, bias=False)  # c d + E a (+ r)
        if update_features:
            self.msg = nn.Sequential(nn.Linear(hidden, dim), nn.SiLU())
        if update_coords:
            # phi_x shares phi_e's hidden layer: one (B, N, N, hidden) activation serves both heads.
            self.coord = nn.Linear(hidden, 1, bias=False)
            nn.init.xavier_uniform_(self.coord.weight, gain=coord_gain)
        if self.frame_vectors:
            self.frame_coef = nn.Linear(dim, self.frame_vectors, bias=False)
            nn.init.xavier_uniform_(self.frame_coef.weight, gain=coord_gain)
        if residual_inputs and update_coords:
            self.grad_coef = nn.Linear(dim, 1, bias=False)
            nn.init.xavier_uniform_(self.grad_coef.weight, gain=coord_gain)
        if update_features:
            self.norm = nn.LayerNorm(dim)
            self.node = nn.Sequential(nn.Linear(2 * dim, hidden), nn.SiLU(), nn.Linear(hidden, dim))

    def forward(
        self,
        h: torch.Tensor,
        x: torch.Tensor,
        edge_attr: torch.Tensor,
        node_mask: torch.Tensor,
        coord_mask: torch.Tensor | None = None,
        frame: torch.Tensor | None = None,
        extra: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        B, N, _ = h.shape
        eye = torch.eye(N, dtype=torch.bool, device=h.device)
        pair = node_mask[:, :, None] & node_mask[:, None, :] & ~eye  # (B, N, N): edge j -> i
        pair_f = pair.to(h.dtype)[..., None]
        deg = pair_f.sum(2).clamp(min=1.0)  # (B, N, 1) neighbours of i

        diff = x[:, :, None, :] - x[:, None, :, :]  # x_i - x_j, (B, N, N, 3)
        d2 = (diff * diff).sum(-1, keepdim=True)
        edge_in = [d2, edge_attr]
        if self.residual_inputs:
            r = (d2 - edge_attr[..., :1] ** 2) * edge_attr[..., 1:2]  # (B, N, N, 1) [m^2], 0 off the known edges
            edge_in.append(r)
        # A h_i + B h_j + (c d + E a): added in place into the one edge-sized tensor (out-of-place broadcasts
        # would allocate two more (B, N, N, hidden) tensors per layer).
        # The linear maps' backward needs their inputs, not outputs, so the in-place adds are autograd-safe; SiLU's
        # backward needs its input, so it runs in place only without autograd.
        pre = self.lin_edge(torch.cat(edge_in, -1))
        dst = self.lin_dst(h)
        if extra is not None:  # per node i: joins A h_i before the one broadcast over the edges
            dst = dst + extra[0].to(dst.dtype)
        pre += dst[:, :, None, :]
        pre += self.lin_src(h)[:, None, :, :]
        hid = nn.functional.silu(pre, inplace=not (torch.is_grad_enabled() and pre.requires_grad))  # (B, N, N, hidden)

        if self.update_coords:
            w = self.coord(hid) * pair_f  # (B, N, N, 1)
            unit = diff / (torch.sqrt(d2 + 1e-8) + 1.0)  # eps: finite gradient for coincident nodes
            dx = (unit * w).sum(2) / deg
            if self.frame_vectors:
                dx = dx + self.frame_coef(h) @ frame  # (B, N, F) @ (B, F, 3): invariant weights x equivariant vectors
            if self.residual_inputs:
                dx = dx + self.grad_coef(h) * (r * pair_f * diff).sum(2) / deg  # along the distance cost's gradient
            if extra is not None:
                dx = dx + extra[1].to(dx.dtype)
            x = x + (dx if coord_mask is None else dx * coord_mask[..., None].to(dx.dtype))
        if self.update_features:
            m = self.msg(hid) * pair_f  # (B, N, N, D)
            agg = m.sum(2) / deg
            h = h + self.node(torch.cat([self.norm(h), agg], -1)) * node_mask[..., None].to(h.dtype)
        return h, x

    def extra_repr(self) -> str:
        return (
            f"dim={self.dim}, hidden={self.hidden}, edge_dim={self.edge_dim}, "
            f"update_coords={self.update_coords}, update_features={self.update_features}"
        )


class EGNN(nn.Module):
    """A stack of :class:`EGNNLayer` with a final LayerNorm on the features.

    Args as in :class:`EGNNLayer`, plus ``layers`` and ``outputs``: ``"both"`` (features and coordinates),
    ``"features"`` (no layer moves ``x``) or ``"coords"`` (only the output coordinates are meant to be used, so the last
    layer skips its feature update and there is no output norm: no parameter without a gradient, as
    DistributedDataParallel requires). Shapes as in :class:`EGNNLayer`; returns (h (B, N, D), x (B, N, 3)).
    """

    OUTPUTS = ("both", "features", "coords")  #: the values of ``outputs``

    def __init__(
        self,
        dim: int,
        hidden: int,
        edge_dim: int,
        layers: int,
        coord_gain: float = 1e-3,
        outputs: str = "both",
        frame_vectors: int = 0,
        residual_inputs: bool = False,
    ) -> None:
        super().__init__()
        if outputs not in self.OUTPUTS:
            raise ValueError(f"outputs must be one of {self.OUTPUTS}, got {outputs!r}")
        update_coords, features_out = outputs != "features", outputs != "coords"
        self.layers = nn.ModuleList(
            EGNNLayer(
                dim,
                hidden,
                edge_dim,
                coord_gain,
                update_coords,
                features_out or k < layers - 1,
                frame_vectors,
                residual_inputs,
            )
            for k in range(layers)
        )
        self.out_norm = nn.LayerNorm(dim) if features_out else nn.Identity()

    def forward(
        self,
        h: torch.Tensor,
        x: torch.Tensor,
        edge_attr: torch.Tensor,
        node_mask: torch.Tensor,
        coord_mask: torch.Tensor | None = None,
        frame: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        for layer in self.layers:
            h, x = layer(h, x, edge_attr, node_mask, coord_mask, frame)
        return self.out_norm(h), x
