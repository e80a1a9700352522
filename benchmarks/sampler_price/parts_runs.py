"""Where a sample's time goes: wall time and matrix FLOPs per part of :func:`ggik.ik.sampling.sample_joint_angles`.

For each robot, the same pose goals (uniform random configurations within the limits) and S samples per goal, one
warm-up call, then
- wall time per part (timers around the parts; of ``--repeats`` calls, the one of median total time): the problem
  encoding (partial encoder and prior, once per goal), the decoder's EGNN layers, its Gauss-Newton moves, the rest of
  the decoder (its input layer, the latents from the drawn noise), angle recovery, FK errors, and what is left of the
  call (the noise of the whole call, drawn before its passes, batches, chunking, moving results);
- matrix FLOPs per part (torch profiler ``with_flops``: matrix products only; element-wise work is not counted), in a
  second call under the profiler;
- the rate [GFLOP/s] each part reaches, and two floors: the call's matrix FLOPs at the rate of the decoder's largest
  matrix product (its message layer, timed alone at the size of one pass: the time if every part ran as fast as the best
  kernel of the network), and the decoder's edge-tensor traffic at this machine's copy rate (a copy of one pass's
  pre-activation tensor, read and write counted): even fused, each decoder layer writes and reads its (S N^2, hidden)
  pre-activation and (S N^2, dim) messages once (the last layer, coordinates only, no messages), in the network's dtype.

The code of ``python -m benchmarks.sampler_price.parts``.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections import defaultdict
from collections.abc import Iterator

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.sampling import SamplingOptions, default_graphs_per_pass, native_bf16, sample_joint_angles
from ggik.kinematics.robot import Robot
from ggik.nn.cvae import GGIKModel
from ggik.nn.decoders import GaussNewtonFollow
from ggik.nn.egnn import EGNNLayer
from ggik.rng import step_generator

__all__ = ["parts_table", "PARTS"]

#: the parts of a call; "decoder other" is the whole decoder (latents from the noise, input layer, layers, moves) when
#: it is compiled (no timers inside it)
PARTS = ("encode", "decoder EGNN layers", "decoder Gauss-Newton moves", "decoder other", "angle recovery", "FK errors")


class _PartTimer:
    """Timers and profiler labels around the parts of a sampling call (patched in, removed on exit)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self._inside: list[str] = []

    def _wrap(self, owner: type, name: str, part: str, only_in: str | None = None):
        original = getattr(owner, name)

        def timed(*args, **kwargs):
            if only_in is not None and (not self._inside or self._inside[-1] != only_in):
                return original(*args, **kwargs)
            self._inside.append(part)
            t0 = time.perf_counter()
            try:
                with record_function(f"part::{part}"):
                    return original(*args, **kwargs)
            finally:
                self.wall[part] += time.perf_counter() - t0
                self._inside.pop()

        setattr(owner, name, timed)
        return owner, name, original

    @contextlib.contextmanager
    def patched(self, decoder_parts: bool) -> Iterator[None]:
        """Timers on; ``decoder_parts``: inside the decoder too (not for a compiled one: a timer would break its
        graph)."""
        patches = [
            self._wrap(GGIKModel, "sample", "sample"),
            self._wrap(GGIKModel, "encode_problem", "encode"),
            self._wrap(RobotGraph, "joint_angles", "angle recovery"),
            self._wrap(Robot, "fk", "FK errors"),
        ]
        if decoder_parts:
            patches += [
                self._wrap(EGNNLayer, "forward", "decoder EGNN layers", only_in="sample"),
                self._wrap(GaussNewtonFollow, "step", "decoder Gauss-Newton moves", only_in="sample"),
            ]
        try:
            yield
        finally:
            for owner, name, original in reversed(patches):
                setattr(owner, name, original)


def _flops_by_part(prof) -> dict[str, float]:
    """Matrix FLOPs of each op, given to the innermost ``part::`` label above it (decoder parts before "decoder")."""
    out: dict[str, float] = defaultdict(float)
    for evt in prof.events():
        if not evt.flops:
            continue
        part, node = "other", evt.cpu_parent
        while node is not None:
            if node.name.startswith("part::"):
                part = node.name[len("part::") :]
                break
            node = node.cpu_parent
        out[part] += float(evt.flops)
    return out


def _gemm_rate(model: GGIKModel, num_nodes: int, graphs: int, bf16: bool) -> float:
    """GFLOP/s of the decoder's message layer alone ((graphs N^2, hidden) x (hidden, dim)), the best of 7 calls."""
    dim, hidden = model.cfg.dec_dim or model.cfg.dim, model.cfg.dec_hidden or model.cfg.hidden
    dtype = torch.bfloat16 if bf16 else torch.float32
    a = torch.randn(graphs * num_nodes * num_nodes, hidden, dtype=dtype)
    w, b = torch.randn(hidden, dim, dtype=dtype), torch.randn(dim, dtype=dtype)
    torch.addmm(b, a, w)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        torch.addmm(b, a, w)
        times.append(time.perf_counter() - t0)
    return 2 * a.shape[0] * hidden * dim / min(times) / 1e9


def _copy_rate(num_nodes: int, graphs: int, hidden: int, bf16: bool) -> float:
    """GB/s of copying one pass's (graphs N^2, hidden) tensor (bytes read + written), the best of 7 copies."""
    src = torch.randn(graphs * num_nodes * num_nodes, hidden, dtype=torch.bfloat16 if bf16 else torch.float32)
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        dst.copy_(src)
        times.append(time.perf_counter() - t0)
    return 2 * src.numel() * src.element_size() / min(times) / 1e9


def _edge_bytes_per_goal(model: GGIKModel, num_nodes: int, samples: int, bf16: bool) -> float:
    """Bytes the decoder's edge tensors must at least move per goal: each layer writes and reads its pre-activation
    (hidden wide) and, but the last, its messages (dim wide), over S N^2 edges."""
    cfg = model.cfg
    dim, hidden, layers = cfg.dec_dim or cfg.dim, cfg.dec_hidden or cfg.hidden, cfg.dec_layers
    per_edge = 2 * (layers * hidden + (layers - 1) * dim) * (2 if bf16 else 4)
    return per_edge * samples * num_nodes * num_nodes


def parts_table(args: argparse.Namespace) -> Table:
    """The table of ``main``'s options ``args``, measured."""
    model, _ = load_bench_model(args.ckpt, "cpu")
    model.compile_decoder(args.compile)
    bf16 = native_bf16("cpu")
    table = Table(
        f"Where a sample's time goes: {args.samples} samples per goal, {args.goals} goals, per goal",
        ["robot", "part", "ms per goal", "share [%]", "matrix MFLOP per goal", "GFLOP/s"],
    )
    for name in args.robots:
        graph = model.graph(robot_from_arg(name, args.seed))
        T = graph.robot.fk(graph.robot.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS)))

        def call(T: torch.Tensor = T, graph: RobotGraph = graph) -> None:
            g = step_generator(args.seed, SAMPLING_NOISE)
            sample_joint_angles(
                model,
                graph,
                T,
                args.samples,
                generator=g,
                options=SamplingOptions(graphs_per_pass=args.graphs_per_pass),
            )

        call()  # warm-up (and the compilation of a compiled decoder)
        timer = _PartTimer()
        with timer.patched(decoder_parts=not args.compile):
            runs = []
            for _ in range(args.repeats):  # the call of median total time, with its parts
                timer.wall.clear()
                t0 = time.perf_counter()
                call()
                runs.append((time.perf_counter() - t0, dict(timer.wall)))
            total, wall = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
            with profile(activities=[ProfilerActivity.CPU], with_flops=True) as prof:
                call()
        flops = _flops_by_part(prof)
        decoder = wall.pop("sample", 0.0) - wall.get("encode", 0.0)  # sample(): the encoding, then the decoder
        layers, moves = wall.get("decoder EGNN layers", 0.0), wall.get("decoder Gauss-Newton moves", 0.0)
        wall["decoder other"] = decoder - layers - moves
        flops["decoder other"] = flops.pop("sample", 0.0)
        wall["rest of the call"] = total - sum(wall.values())
        per_goal = 1e3 / args.goals
        for part in (*PARTS, "rest of the call"):
            if args.compile and part.startswith("decoder ") and part != "decoder other":
                continue  # no timers inside a compiled decoder
            s, f = wall.get(part, 0.0), flops.get(part, 0.0)
            rate = f / s / 1e9 if s > 0 and f > 0 else float("nan")
            label = "decoder (compiled, all of it)" if args.compile and part == "decoder other" else part
            table.add(name, label, s * per_goal, 100 * s / total, f / 1e6 / args.goals, rate)
        all_flops = sum(flops.values())
        gpp = args.graphs_per_pass or default_graphs_per_pass(model, graph.num_nodes, "cpu")
        peak = _gemm_rate(model, graph.num_nodes, gpp, bf16)
        table.add(name, "whole call", total * per_goal, 100.0, all_flops / 1e6 / args.goals, all_flops / total / 1e9)
        floor = all_flops / peak / 1e9 * per_goal
        table.add(
            name, "floor: all at the message layer's rate", floor, float("nan"), all_flops / 1e6 / args.goals, peak
        )
        hidden = model.cfg.dec_hidden or model.cfg.hidden
        rate = _copy_rate(graph.num_nodes, gpp, hidden, bf16)
        traffic = _edge_bytes_per_goal(model, graph.num_nodes, args.samples, bf16)
        nan = float("nan")
        table.add(name, f"floor: edge-tensor traffic at {rate:.0f} GB/s", 1e3 * traffic / rate / 1e9, nan, nan, nan)
        print(*table.rows[-4:], sep="\n", flush=True)
    cfg = model.cfg
    table.notes.append(
        f"model: decoder {cfg.dec_layers} EGNN layers of width {cfg.dec_dim or cfg.dim} / hidden "
        f"{cfg.dec_hidden or cfg.hidden}, {cfg.gn_steps} Gauss-Newton moves ({cfg.gn_solver}), "
        f"{'compiled (torch.compile)' if args.compile else 'eager'}; network in "
        f"{'bf16' if bf16 else 'float32'}; {torch.get_num_threads()} torch threads; "
        f"{args.graphs_per_pass or 'the default number of'} graphs per pass; wall time with timers around the "
        f"parts, the call of median time of {args.repeats}; FLOPs from another call under the torch profiler "
        "(matrix products only); the floors' rates: the best of 7 timed products and copies"
    )
    return table
