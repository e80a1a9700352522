"""The whole solve on one device (what :mod:`benchmarks.solvers.device_solve` runs): ``GGIK(device=...).solve`` for B
goals at once, per strategy, as ms per goal and strict solutions per second, and the model's sampling alone (32 samples
per goal), one table."""

from __future__ import annotations

import argparse
import time

import torch

from benchmarks.common.measure import strict_valid
from benchmarks.common.robots import robot_from_arg
from ggik import GGIK, SolveConfig
from ggik.evaluation.report import Table
from ggik.ik.sampling import SamplingOptions, sample_joint_angles
from ggik.rng import step_generator

__all__ = ["CONFIGS", "device_table"]
#: row name -> the solve's configuration (32 starts or samples per goal)
CONFIGS = {
    "LM, 32 random starts": SolveConfig(strategy="random", random_starts=32),
    "LM, 32 random starts, first solution": SolveConfig(strategy="random", random_starts=32, first_solution=True),
    "GGIK 32 samples + LM": SolveConfig(samples=32, refine="lm"),
    "GGIK 32 samples, model-first": SolveConfig(samples=32, strategy="model-first"),
}


def _timed(fn, device: torch.device, repeats: int) -> tuple[float, object]:
    """(best wall seconds of ``repeats`` calls after one untimed call, the last result), synchronised on CUDA."""
    out = fn()
    best = float("inf")
    for _ in range(repeats):
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        out = fn()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        best = min(best, time.perf_counter() - t0)
    return best, out


def device_table(args: argparse.Namespace) -> Table:
    device = torch.device(args.device)
    solver = GGIK.load_or_pretrained(args.ckpt, device=device, compile_sampler=args.compile)
    table = Table(
        f"The whole solve on {device.type} (GGIK.solve, B goals in one call)",
        ["robot", "goals", "method", "ms per goal", "strict solutions per s", "success [%]"],
    )
    for name in args.robots:
        robot = robot_from_arg(name, args.seed)
        graph = solver._graph(robot)
        for B in args.goals:
            T = robot.fk(robot.sample_q(B, step_generator(args.seed, 7, B)))
            for method, config in CONFIGS.items():

                def solve(c=config, r=robot, goals=T):  # the same random draws every call
                    return solver.solve(r, goals, c, generator=torch.Generator().manual_seed(args.seed))

                seconds, res = _timed(solve, device, args.repeats)
                ok = strict_valid(robot, res.q, T, solver.config)  # type: ignore[attr-defined]
                table.add(robot.name, B, method, 1e3 * seconds / B, float(ok.sum()) / seconds,
                          100.0 * float(ok.any(-1).double().mean()))  # fmt: skip
                print(table.rows[-1], flush=True)
            gen = torch.Generator(device=device).manual_seed(args.seed) if device.type == "cuda" else None

            def sample(g=gen, gr=graph, goals=T):
                return sample_joint_angles(
                    solver.model, gr, goals, 32, generator=g, options=SamplingOptions(on_device=True)
                )

            seconds, _ = _timed(sample, device, args.repeats)
            table.add(robot.name, B, "sampling alone, 32 per goal", 1e3 * seconds / B, float("nan"), float("nan"))
            print(table.rows[-1], flush=True)
    table.notes.append(
        f"best of {args.repeats} calls after an untimed one (CUDA synchronised around each); strict: FK of every "
        "returned solution within 1 mm and 0.01 rad and the limits; success: goals with a strict solution; "
        f"{torch.get_num_threads()} CPU thread(s); model {args.ckpt or 'shipped'}"
        + (", decoder compiled (torch.compile)" if args.compile else "")
    )
    return table
