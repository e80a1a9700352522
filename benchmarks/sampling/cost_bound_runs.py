"""What sampling costs against what this machine can compute: is a sampling-time target reachable with this model?

For each robot, on the same goals: the floating-point work of :func:`ggik.ik.sampling.sample_joint_angles` per goal
(S samples; counted by ``torch.utils.flop_counter.FlopCounterMode``: matrix products, the bulk of the decoder's
work, elementwise ops not counted), its measured time per goal (P goals in one call, the median of ``repeats`` calls
after a warm-up), the arithmetic rate that time implies, and the time the same work would take at the float32
matrix-product rate torch reaches on this machine (a large square product at the same thread count, the best of
three). That rate is below the CPU's theoretical peak, so the bound is a practical one: what this network's
arithmetic costs here at the best rate torch's own kernels reach. A target well below it needs a smaller network,
fewer samples or other hardware rather than a faster implementation. With ``--compile``, each robot is measured
again with every decoder layer compiled by ``torch.compile`` (fused elementwise passes; the compilation happens in
a full-size warm-up call and is not in the time per goal).

Run by ``python -m benchmarks.sampling.cost_bound [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 200] [-s 32]
[--repeats 3] [--threads 2] [--target-ms 5] [--compile] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.common.load import busy_processes
from benchmarks.common.measure import median_time
from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.sampling import sample_joint_angles
from ggik.nn.cvae import GGIKModel
from ggik.nn.egnn import EGNNLayer
from ggik.rng import step_generator

__all__ = ["COLUMNS", "matmul_rate", "compile_decoder", "cost_bound_table"]

COLUMNS = [
    "robot",
    "decoder",
    "graph nodes",
    "GFLOP per goal",
    "measured ms per goal",
    "achieved GFLOP/s",
    "bound ms per goal (at the matmul rate)",
    "target ms per goal",
    "GFLOP/s the target needs",
]


def matmul_rate(size: int = 2048, repeats: int = 3) -> float:
    """The float32 matrix-product rate torch reaches here [GFLOP/s] at its current thread count: the best of
    ``repeats`` products of two (size, size) matrices after a warm-up one."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = median_time(lambda: a @ b, repeats, warmups=1)[1]
    return 2 * size**3 / best / 1e9


def compile_decoder(model: GGIKModel) -> int:
    """Compile every decoder layer's forward of ``model`` in place (``torch.compile``, static shapes); returns how
    many layers were compiled."""
    layers = [m for m in model.decoder.modules() if isinstance(m, EGNNLayer)]
    for layer in layers:
        layer.forward = torch.compile(layer.forward, dynamic=False)  # type: ignore[method-assign]
    return len(layers)


def cost_bound_table(args: argparse.Namespace) -> Table:
    """The table of ``cost_bound.main``'s options ``args``, measured (torch's thread count as set by the caller)."""
    rate = matmul_rate()
    warmup_s: dict[tuple[str, str], float] = {}
    compiled: dict[str, int] = {}
    before = busy_processes(1.0)
    table = Table(
        f"Sampling {args.samples} samples per goal, {args.goals} goals per call: work, time, and this machine's bound",
        list(COLUMNS),
    )
    for name in args.robots:
        model = load_bench_model(args.ckpt)[0]  # eager: a compiled one is not carried to the next robot
        graph = model.graph(robot_from_arg(name, args.seed))
        T = graph.robot.fk(graph.robot.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS)))

        def call(goals: torch.Tensor = T, graph: RobotGraph = graph, model: GGIKModel = model) -> None:
            sample_joint_angles(model, graph, goals, args.samples, generator=step_generator(args.seed, SAMPLING_NOISE))

        counted = min(8, args.goals)  # the work per goal is the same for every goal of a robot
        with FlopCounterMode(display=False) as counter:
            call(T[:counted])
        gflop = counter.get_total_flops() / counted / 1e9
        decoders = ["eager", "compiled"] if args.compile else ["eager"]
        for decoder in decoders:
            if decoder == "compiled":
                compiled[name] = compile_decoder(model)
            t0 = time.perf_counter()
            call()  # a full-size warm-up (and, compiled, every pass shape's compilation)
            warmup_s[(name, decoder)] = time.perf_counter() - t0
            ms = 1e3 * median_time(call, args.repeats, warmups=0)[0] / args.goals
            table.add(
                name,
                decoder,
                graph.num_nodes,
                gflop,
                ms,
                gflop / ms * 1e3,
                1e3 * gflop / rate,
                args.target_ms,
                gflop / args.target_ms * 1e3,
            )
            print(table.rows[-1], flush=True)
    table.notes += [
        f"{torch.get_num_threads()} torch thread(s); the float32 matrix-product rate torch reaches here: {rate:.1f} "
        "GFLOP/s (2048 x 2048 x 2048, best of 3; below the CPU's theoretical peak): the bound is the counted work at "
        "that rate.",
        "GFLOP: matrix products only (FlopCounterMode); elementwise work (SiLU, broadcast adds, masks over the "
        "decoder's (S, N, N, hidden) edge tensors) and memory traffic are not counted. Goals: q uniform within the "
        "limits (stream SAMPLING_GOALS), pose goals; the model in float32.",
        f"Other processes on the machine, before the run: {before}; after: {busy_processes(1.0)}.",
    ]
    if args.compile:
        table.notes.append(
            f"compiled: every decoder layer's forward ({', '.join(f'{n} on {r}' for r, n in compiled.items())}) "
            "through torch.compile (dynamic=False); the full-size warm-up call, compilation included, took "
            + ", ".join(f"{s:.0f} s ({n})" for (n, d), s in warmup_s.items() if d == "compiled")
            + "; the eager warm-ups "
            + ", ".join(f"{s:.1f} s" for (_, d), s in warmup_s.items() if d == "eager")
            + "."
        )
    return table
