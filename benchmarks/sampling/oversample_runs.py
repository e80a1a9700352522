"""Draw K x S samples, keep the S that best satisfy the known distances: raw accuracy and cost against K = 1.

For each robot, the same goals (uniform random configurations within the limits, pose goals) and, for each K of
``--oversample``, :func:`ggik.ik.sampling.sample_joint_angles` with ``oversample=K`` and ``-s`` samples kept per goal:
best-of-S position error (mean over goals), raw success (the best of S within 1 cm and 1 deg, the GGIK paper's
criterion), the mean error of all kept samples, and the sampling time per goal (one timed call over all goals, after
a warm-up call). K = 1 is plain sampling. With ``--device cuda`` the model, angle recovery and FK run on the GPU; the
time is the whole call, results back on the CPU included.

Run by ``python -m benchmarks.sampling.oversample [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 100]
[-s 32] [--oversample 1 2 4] [--threads 2] [--device cuda] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import time

import torch

from benchmarks.common.measure import median_time
from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import RawSamples, SamplingOptions, sample_joint_angles
from ggik.rng import step_generator

__all__ = ["oversample_table"]


def oversample_table(args: argparse.Namespace) -> Table:
    """The table of ``main``'s options ``args``, measured."""
    model, _ = load_bench_model(args.ckpt, args.device)
    table = Table(
        f"Oversampling: K x {args.samples} drawn, {args.samples} kept by known-distance cost ({args.goals} goals)",
        ["robot", "K", "best of S [mm]", "raw success 1cm&1deg [%]", "mean of kept [mm]", "sampling ms per goal"],
    )
    gpp, repeats = args.graphs_per_pass, args.repeats
    for name in args.robots:
        graph = model.graph(robot_from_arg(name, args.seed))
        T = graph.robot.fk(graph.robot.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS)))
        sample_joint_angles(model, graph, T[:1], args.samples, options=SamplingOptions(graphs_per_pass=gpp))  # warm-up
        for k in args.oversample:

            def call(k: int = k, T: torch.Tensor = T, graph: RobotGraph = graph) -> RawSamples:
                g = step_generator(args.seed, SAMPLING_NOISE, k)
                return sample_joint_angles(
                    model,
                    graph,
                    T,
                    args.samples,
                    generator=g,
                    options=SamplingOptions(oversample=k, graphs_per_pass=gpp),
                )

            if repeats == 1:  # one timed call (how the committed CPU table was measured)
                t0 = time.perf_counter()
                raw = call()
                ms = 1e3 * (time.perf_counter() - t0) / args.goals
            else:  # a full-size warm-up (a GPU's first allocations), then the median of the repeats
                raw = call()
                ms = 1e3 * median_time(call, repeats, warmups=0)[0] / args.goals
            best, mean = raw.pos_err.min(1).values.mean(), raw.pos_err.mean()
            ok = 100 * success_rate(raw.pos_err, raw.rot_err)
            table.add(name, k, 1e3 * float(best), ok, 1e3 * float(mean), ms)
            print(table.rows[-1], flush=True)
    table.notes.append(
        f"device {args.device}, {gpp or 'the default number of'} graphs per pass, "
        f"{torch.get_num_threads()} torch threads; time: "
        + ("one call" if repeats == 1 else f"median of {repeats} calls after a full-size warm-up")
        + "; goals: q uniform within the limits (stream SAMPLING_GOALS), pose goals; raw success: any of the kept "
        "samples within 1 cm and 1 deg (the best by position need not be it)"
    )
    return table
