"""What sampling costs against what this machine can compute: is a sampling-time target reachable with this model?

For each robot, on the same goals: the floating-point work of :func:`ggik.ik.sampling.sample_joint_angles` per goal
(S samples; counted by ``torch.utils.flop_counter.FlopCounterMode``: matrix products, the bulk of the decoder's
work, elementwise ops not counted), its measured time per goal (P goals in one call, the median of ``repeats`` calls
after a warm-up), the arithmetic rate that time implies, and the time the same work would take at this machine's
float32 matrix-product rate (a large square product at the same thread count, the best of three): a lower bound for
any implementation of this network on this machine. A target below that bound needs a smaller network, fewer
samples or other hardware, not a faster implementation.

Run by ``python -m benchmarks.sampling.cost_bound [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 200] [-s 32]
[--repeats 3] [--threads 2] [--target-ms 5] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.utils.flop_counter import FlopCounterMode

from benchmarks.common.robots import load_bench_model
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics.robot import Robot
from ggik.rng import step_generator

__all__ = ["COLUMNS", "matmul_rate", "cost_bound_table"]

COLUMNS = [
    "robot",
    "graph nodes",
    "GFLOP per goal",
    "measured ms per goal",
    "achieved GFLOP/s",
    "bound ms per goal (at the matmul rate)",
    "target ms per goal",
    "GFLOP/s the target needs",
]


def matmul_rate(size: int = 2048, repeats: int = 3) -> float:
    """This machine's float32 matrix-product rate [GFLOP/s] at torch's current thread count: the best of ``repeats``
    products of two (size, size) matrices after a warm-up one."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2 * size**3 / best / 1e9


def cost_bound_table(args: argparse.Namespace) -> Table:
    """The table of ``cost_bound.main``'s options ``args``, measured (torch's thread count as set by the caller)."""
    model, _ = load_bench_model(args.ckpt)
    rate = matmul_rate()
    table = Table(
        f"Sampling {args.samples} samples per goal, {args.goals} goals per call: work, time, and this machine's bound",
        list(COLUMNS),
    )
    for name in args.robots:
        graph = RobotGraph.from_robot(Robot.from_name(name))
        T = graph.robot.fk(graph.robot.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS)))

        def call(goals: torch.Tensor = T, graph: RobotGraph = graph) -> None:
            sample_joint_angles(model, graph, goals, args.samples, generator=step_generator(args.seed, SAMPLING_NOISE))

        with FlopCounterMode(display=False) as counter:
            call(T[:8])  # the work per goal is the same for every goal of a robot; 8 goals count it
        gflop = counter.get_total_flops() / 8 / 1e9
        call(T[:8])  # warm-up
        times = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            call()
            times.append((time.perf_counter() - t0) / args.goals)
        ms = 1e3 * statistics.median(times)
        table.add(
            name,
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
        f"{torch.get_num_threads()} torch thread(s); this machine's float32 matrix-product rate: {rate:.1f} GFLOP/s "
        "(2048 x 2048 x 2048, best of 3): the bound is the counted work at that rate.",
        "GFLOP: matrix products only (FlopCounterMode); the elementwise passes over the decoder's (S, N, N, hidden) "
        "edge tensors are not counted but cost time, which is why the achieved rate is below the matrix-product rate. "
        "Goals: q uniform within the limits (stream SAMPLING_GOALS), pose goals; the model in float32.",
    ]
    return table
