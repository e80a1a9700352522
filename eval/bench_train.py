"""Training speed of the GGIK model on this machine: examples/s per configuration and speed-up.

Measures full training steps (data generation excluded: one fixed batch from the default robot mix,
forward + backward + AdamW step) for:

* model sizes: ``default`` (ModelConfig defaults) and ``paper`` (5 EGNN layers in each of the three
  graph networks, width 64, hidden 128: the size the issue's reference numbers refer to);
* the EGNN layer as kept (dense, first edge layer split per node) against a dense layer that
  concatenates [h_i, h_j, d, a] per edge (the naive form) and against a PyG ``MessagePassing``
  layer with the same math (sparse gather/scatter);
* bf16 autocast on and off; 1 and 2 CPU threads.

Usage: ``python eval/bench_train.py [--steps 5] [--warmup 2] [--batch 128] [--out eval/results/bench_train.md]``.
Prints a Markdown table and writes it with the machine description. Other processes running at the
same time slow the numbers down: the output records the load average.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch
from torch import nn

from ggik.data import DataConfig, TrainingData
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.nn.egnn import EGNN, EGNNLayer


class ConcatEGNNLayer(EGNNLayer):
    """Same parameters and math as EGNNLayer, but the first edge layer acts on the concatenation."""

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


def make_pyg_layer_class():
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
    for net in model.modules():
        if isinstance(net, EGNN):
            new = []
            for layer in net.layers:
                if variant == "concat":
                    c = ConcatEGNNLayer(layer.dim, layer.hidden, layer.edge_dim, update_coords=layer.update_coords,
                                        update_features=layer.update_features, frame_vectors=layer.frame_vectors)
                    c.load_state_dict(layer.state_dict())
                    new.append(c)
                elif variant == "pyg":
                    new.append(make_pyg_layer_class()(layer))
                else:
                    new.append(layer)
            net.layers = nn.ModuleList(new)
    return model


def bench(cfg: ModelConfig, variant: str, bf16: bool, threads: int, batch, steps: int, warmup: int) -> float:
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = swap_layers(GGIKModel(cfg), variant)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(batch)
            loss = (10 * out["anchor_se"] + 100 * out["free_se"] + out["kl"]).float().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    return batch.batch_size / times[len(times) // 2]  # median step


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--sizes", nargs="*", default=["default", "paper"], choices=["default", "paper"])
    ap.add_argument("--variants", nargs="*", default=["split", "concat", "pyg"], choices=["split", "concat", "pyg"])
    ap.add_argument("--out", default="eval/results/bench_train.md")
    args = ap.parse_args(argv)

    data = TrainingData(DataConfig(robots={n: 1.0 for n in ("ur10", "lbr_iiwa", "panda", "schunk_lwa4d", "schunk_lwa4p", "kuka_lwr", "irb140", "kr16_2", "puma560")}, random_weight=1.0, random_dofs=[6, 7], batch_size=args.batch))
    batch = data.batch(0)[0].to("cpu", torch.float32)
    sizes = {"default": ModelConfig(), "paper": ModelConfig(enc_layers=5, dec_layers=5)}
    load_before = os.getloadavg()[0]
    rows = []
    for size in args.sizes:
        params = GGIKModel(sizes[size]).num_parameters()
        for variant in args.variants:
            for bf16 in (False, True):
                for threads in args.threads:
                    eps = bench(sizes[size], variant, bf16, threads, batch, args.steps, args.warmup)
                    rows.append((size, params, variant, bf16, threads, eps))
                    print(f"{size:8s} {variant:7s} bf16={bf16!s:5s} threads={threads}: {eps:7.1f} examples/s", flush=True)
    load_after = os.getloadavg()[0]
    lines = [
        "# Training speed (examples/s, median of timed steps; higher is better)",
        "",
        f"Command: `python eval/bench_train.py {' '.join(argv if argv is not None else sys.argv[1:])}`".rstrip() + "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, torch {torch.__version__}, Python {platform.python_version()}; "
        f"batch {args.batch} from the default robot mix (N up to 18 nodes); {args.warmup} warm-up + {args.steps} timed steps; "
        f"1-min load average before/after: {load_before:.2f}/{load_after:.2f} (other processes running at the same time lower the numbers).",
        "",
        "| model | parameters | EGNN layer | bf16 | threads | examples/s |",
        "|---|---|---|---|---|---|",
    ]
    for size, params, variant, bf16, threads, eps in rows:
        label = {"split": "dense, split first layer (kept)", "concat": "dense, concatenated input", "pyg": "PyG MessagePassing"}[variant]
        lines.append(f"| {size} | {params:,} | {label} | {'on' if bf16 else 'off'} | {threads} | {eps:.0f} |")
    text = "\n".join(lines) + "\n"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
