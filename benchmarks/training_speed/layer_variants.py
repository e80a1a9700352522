"""The measured alternatives to :class:`ggik.nn.egnn.EGNNLayer` (``benchmarks/training_speed/results/bench_train.md``):
the same math written two other ways, so that the training-speed benchmark compares forms, not models.

* ``split`` (kept, :class:`~ggik.nn.egnn.EGNNLayer`): dense over all node pairs, the first edge layer split per
  node (``A h_i + B h_j + c d + E a``);
* ``concat`` (:class:`ConcatEGNNLayer`): dense, the first edge layer applied to the (B, N, N, 2D + 1 + edge_dim)
  concatenation ``[h_i, h_j, |x_i - x_j|^2, a_ij]`` per edge (the naive form);
* ``pyg`` (:func:`pyg_layer_class`): sparse ``torch_geometric`` message passing over an explicit edge list
  (gather / scatter-mean).

They repeat EGNNLayer's math on purpose and take its parameter values, so a model gives the same outputs with any
of them (:func:`swap_layers`).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from ggik.nn.cvae import GGIKModel
from ggik.nn.egnn import EGNN, EGNNLayer

__all__ = ["ConcatEGNNLayer", "pyg_layer_class", "swap_layers", "VARIANTS"]

#: variant name -> description (the table's "EGNN layer" column)
VARIANTS = {
    "split": "dense, split first layer (kept)",
    "concat": "dense, concatenated input",
    "pyg": "PyG MessagePassing",
}


class ConcatEGNNLayer(EGNNLayer):
    """Same parameters and math as EGNNLayer, but the first edge layer acts on the concatenation (shapes as there)."""

    def forward(self, h, x, edge_attr, node_mask, coord_mask=None, frame=None):
        B, N, _ = h.shape
        eye = torch.eye(N, dtype=torch.bool, device=h.device)
        pair = node_mask[:, :, None] & node_mask[:, None, :] & ~eye
        pair_f = pair.to(h.dtype)[..., None]
        deg = pair_f.sum(2).clamp(min=1.0)
        diff = x[:, :, None, :] - x[:, None, :, :]
        d2 = (diff * diff).sum(-1, keepdim=True)
        cat = torch.cat([h[:, :, None, :].expand(B, N, N, -1), h[:, None, :, :].expand(B, N, N, -1), d2, edge_attr], -1)
        W = torch.cat([self.lin_dst.weight, self.lin_src.weight, self.lin_edge.weight], 1)
        hid = nn.functional.silu(nn.functional.linear(cat, W, self.lin_dst.bias))
        if self.update_coords:
            w = self.coord(hid) * pair_f
            dx = (diff / (torch.sqrt(d2 + 1e-8) + 1.0) * w).sum(2) / deg
            if self.frame_vectors:
                dx = dx + self.frame_coef(h) @ frame
            x = x + (dx if coord_mask is None else dx * coord_mask[..., None].to(dx.dtype))
        if self.update_features:
            agg = (self.msg(hid) * pair_f).sum(2) / deg
            h = h + self.node(torch.cat([self.norm(h), agg], -1)) * node_mask[..., None].to(h.dtype)
        return h, x


@functools.cache
def pyg_layer_class() -> type[nn.Module]:
    """The class ``PyGEGNNLayer(dense: EGNNLayer)``: the EGNN layer as sparse message passing (mean aggregation)
    that uses the parameters of ``dense``; dense tensors in and out, shapes as in :class:`EGNNLayer`.
    Built on first use (it imports ``torch_geometric``)."""
    from torch_geometric.nn import MessagePassing

    class PyGEGNNLayer(MessagePassing):
        """The EGNN layer as sparse message passing over an explicit edge list (mean aggregation)."""

        def __init__(self, dense: EGNNLayer):
            super().__init__(aggr="mean")
            self.d = dense

        def forward(self, h, x, edge_attr, node_mask, coord_mask=None, frame=None):  # dense in, dense out
            B, N, D = h.shape
            pair = node_mask[:, :, None] & node_mask[:, None, :] & ~torch.eye(N, dtype=torch.bool)
            b, i, j = pair.nonzero(as_tuple=True)
            edge_index = torch.stack([b * N + j, b * N + i])  # source j -> target i
            ea = edge_attr[b, i, j]
            hf, xf = h.reshape(B * N, D), x.reshape(B * N, 3)
            m_agg, x_agg = self.propagate(edge_index, h=hf, x=xf, ea=ea, size=None).split([D, 3], -1)
            d = self.d
            if d.frame_vectors:
                x_agg = x_agg + (d.frame_coef(h) @ frame).reshape(B * N, 3)
            if coord_mask is not None:
                x_agg = x_agg * coord_mask.reshape(-1, 1).to(x_agg.dtype)
            x_new = xf + x_agg
            h_new = hf
            if d.update_features:
                h_new = hf + d.node(torch.cat([d.norm(hf), m_agg], -1)) * node_mask.reshape(-1, 1).to(h.dtype)
            return h_new.view(B, N, D), x_new.view(B, N, 3)

        def message(self, h_i, h_j, x_i, x_j, ea):
            d = self.d
            diff = x_i - x_j
            d2 = (diff * diff).sum(-1, keepdim=True)
            hid = nn.functional.silu(d.lin_dst(h_i) + d.lin_src(h_j) + d.lin_edge(torch.cat([d2, ea], -1)))
            m = d.msg(hid) if d.update_features else hid[..., : self.d.dim] * 0
            xw = diff / (torch.sqrt(d2 + 1e-8) + 1.0) * d.coord(hid) if d.update_coords else torch.zeros_like(diff)
            return torch.cat([m, xw], -1)

    return PyGEGNNLayer


def swap_layers(model: GGIKModel, variant: str) -> GGIKModel:
    """``model`` with every EGNN layer replaced, in place, by the ``variant`` form (a key of :data:`VARIANTS`) with
    the same parameter values (``split``: unchanged). Returns the model."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown EGNN layer variant {variant!r}; choose from {list(VARIANTS)}")
    for net in model.modules():
        if isinstance(net, EGNN):
            new = []
            for layer in net.layers:
                if variant == "concat":
                    c = ConcatEGNNLayer(
                        layer.dim,
                        layer.hidden,
                        layer.edge_dim,
                        update_coords=layer.update_coords,
                        update_features=layer.update_features,
                        frame_vectors=layer.frame_vectors,
                    )
                    c.load_state_dict(layer.state_dict())
                    new.append(c)
                elif variant == "pyg":
                    new.append(pyg_layer_class()(layer))
                else:
                    new.append(layer)
            net.layers = nn.ModuleList(new)
    return model
