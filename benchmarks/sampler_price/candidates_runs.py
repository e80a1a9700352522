"""Cheaper samplers at equal accuracy: raw success and time of each candidate, on every training arm and goal kind.

For every robot of ``--robots`` and goal kind of ``--kinds``: the same goals (uniform random configurations within the
limits, stream SAMPLING_GOALS) and the same noise (stream SAMPLING_NOISE) for every candidate; 32 samples per goal
(``-s``); raw success (any sample within 1 cm and 1 deg, the GGIK paper's criterion; position goals: 1 cm), the mean
best-of-S position error, and the time of the whole call per goal (:func:`ggik.ik.sampling.sample_joint_angles`, the
median of ``--repeats`` calls after a warm-up that also compiles). Candidates: each model file of ``--ckpt`` and
``--more-ckpts``, eager and with its decoder compiled (:meth:`ggik.nn.cvae.GGIKModel.compile_decoder`); with
``--jacobi`` also compiled with its Gauss-Newton moves made block-Jacobi steps
(:func:`ggik.nn.distance_geometry.block_jacobi_step`, a 3 x 3 solve per node, where the model was trained with the full
step: no retraining).

The code of ``python -m benchmarks.sampler_price.candidates``.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from pathlib import Path

import torch

from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import sample_joint_angles
from ggik.rng import step_generator

__all__ = ["candidates_table"]


def candidates_table(args: argparse.Namespace) -> Table:
    """The table of ``main``'s options ``args``, measured."""
    models = {}
    for path in [args.ckpt, *args.more_ckpts]:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
        models[f"{Path(path).stem} ({digest})"] = load_bench_model(path, "cpu")[0]
    table = Table(
        f"Sampler candidates: {args.samples} samples per goal, {args.goals} goals per robot and goal kind",
        ["robot", "goal", "candidate", "raw success [%]", "best of S [mm]", "ms per goal"],
    )
    for name in args.robots:
        robot = robot_from_arg(name, args.seed)
        T = robot.fk(robot.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS)))
        for kind in args.kinds:
            for label, model in models.items():
                graph = model.graph(robot)
                goals = graph.goals(T, kind)
                variants = [("", False, "full"), (", compiled", True, "full")]
                variants += [(", compiled, Jacobi moves", True, "jacobi")] if args.jacobi and model.gn_follow else []
                for suffix, compiled, solver in variants:
                    if model.gn_follow is not None:
                        model.gn_follow.solver = solver
                    model.compile_decoder(compiled)
                    sample_joint_angles(model, graph, goals, args.samples)  # warm-up, compiles every pass shape
                    times = []
                    for _ in range(args.repeats):  # the same noise every call: the same samples
                        t0 = time.perf_counter()
                        raw = sample_joint_angles(
                            model, graph, goals, args.samples, generator=step_generator(args.seed, SAMPLING_NOISE)
                        )
                        times.append(time.perf_counter() - t0)
                    ms = 1e3 * sorted(times)[len(times) // 2] / args.goals
                    rot = raw.rot_err if kind != "position" else torch.zeros_like(raw.rot_err)
                    ok = 100 * success_rate(raw.pos_err, rot)
                    best = 1e3 * float(raw.pos_err.min(1).values.mean())
                    table.add(name, kind, label + suffix, ok, best, ms)
                    print(table.rows[-1], flush=True)
                if model.gn_follow is not None:
                    model.gn_follow.solver = model.cfg.gn_solver
                model.compile_decoder(False)
    table.notes.append(
        f"{torch.get_num_threads()} torch threads; time: the median of {args.repeats} calls over all goals after a "
        "warm-up call (which compiles the compiled candidates' pass shapes); raw success: any sample within 1 cm and "
        "1 deg (position goals: 1 cm)"
    )
    return table
