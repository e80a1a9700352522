"""Latency of one IK call for one goal and one solution, as a robot program or a ROS service calls IK, and the
per-iteration cost of the LM solver's two paths against the batch size.

Table 1 (``--out``): per robot, goals solved one call each (``GGIK.solve`` with the strategy "random", S random starts,
``first_solution``: each goal's LM stops at its first converged start) with LM in numpy (the solver's path for at most
``NUMPY_MAX_ELEMENTS`` elements on a CPU) and forced into torch: median and p90 wall time per call [ms], success (a
strict-valid best solution: 1 mm and 0.01 rad within the limits, checked by FK), mean LM iterations of the call's
longest start. Table 2 (``--out`` + ``_batch``): ms per LM iteration of each path for batches of n elements (panda,
pose goals, a tolerance no start meets, so every element runs all ``--iters`` iterations); where numpy stops paying
is where ``NUMPY_MAX_ELEMENTS`` belongs.

Run by ``python -m benchmarks.solvers.latency [--robots ...] [--goals 100] [--starts 4 16] [--threads 1]
[--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import torch

import ggik.ik.refine as refine
from benchmarks.common.measure import strict_valid
from benchmarks.common.streams import LATENCY_GOALS, LATENCY_STARTS
from ggik import GGIK, SolveConfig
from ggik.evaluation.report import Table
from ggik.ik.lm_numpy import NUMPY_MAX_ELEMENTS
from ggik.ik.refine import RefineConfig, lm_refine
from ggik.kinematics import Robot
from ggik.rng import step_generator

__all__ = ["PATHS", "call_latency", "iteration_cost", "latency_tables"]

PATHS = {"numpy": NUMPY_MAX_ELEMENTS, "torch": 0}  #: path -> the solver's element limit for numpy while measuring


def call_latency(solver: GGIK, robot: Robot, goals: int, starts: int, path: str, seed: int) -> dict[str, float]:
    """Median and p90 ms per call, success and mean iterations of ``goals`` one-goal calls on ``path``."""
    g = step_generator(seed, LATENCY_GOALS, robot.dof)
    T = robot.fk(robot.sample_q(goals, g))
    config = SolveConfig(strategy="random", random_starts=starts, first_solution=True)
    saved = refine.NUMPY_MAX_ELEMENTS
    refine.NUMPY_MAX_ELEMENTS = PATHS[path]
    try:
        solver.solve(robot, T[0], config, generator=step_generator(seed, LATENCY_STARTS, 10**6))  # warm-up
        times, ok = [], []
        for i in range(goals):
            gen = step_generator(seed, LATENCY_STARTS, i)
            t0 = time.perf_counter()
            res = solver.solve(robot, T[i], config, generator=gen)
            times.append(time.perf_counter() - t0)
            ok.append(bool(strict_valid(robot, res.q[:, :1], T[i : i + 1], solver.config)[0, 0]))
        iters = []
        for i in range(goals):  # the same calls' iterations, untimed (IKResult does not carry them)
            q0 = robot.sample_q(starts, step_generator(seed, LATENCY_STARTS, i))
            iters.append(int(lm_refine(robot, T[i : i + 1], q0, RefineConfig(stop_at_first=True))[1].iterations.max()))
    finally:
        refine.NUMPY_MAX_ELEMENTS = saved
    times.sort()
    return {
        "median_ms": 1e3 * statistics.median(times),
        "p90_ms": 1e3 * times[int(0.9 * (len(times) - 1))],
        "success": sum(ok) / len(ok),
        "iterations": sum(iters) / len(iters),
    }


def iteration_cost(robot: Robot, n: int, iters: int, path: str, repeats: int, seed: int) -> float:
    """ms per LM iteration of a batch of ``n`` elements on ``path`` (median over ``repeats`` calls)."""
    g = step_generator(seed, LATENCY_GOALS, 0)
    T = robot.fk(robot.sample_q(n, g))
    q0 = robot.sample_q(n, g)
    cfg = RefineConfig(pos_tol=1e-300, rot_tol=1e-300, max_iters=iters)  # no element converges
    saved = refine.NUMPY_MAX_ELEMENTS
    refine.NUMPY_MAX_ELEMENTS = 10**9 if path == "numpy" else 0
    try:
        lm_refine(robot, T, q0, cfg)
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            lm_refine(robot, T, q0, cfg)
            times.append(time.perf_counter() - t0)
    finally:
        refine.NUMPY_MAX_ELEMENTS = saved
    return 1e3 * statistics.median(times) / iters


def latency_tables(args: argparse.Namespace, robots: list[Robot], command: str) -> Table:
    """The single-call table of ``robots`` (returned) and the per-iteration table (printed, and written to
    ``args.out``_batch when given), for the options ``args`` of the script run as ``command``."""
    solver = GGIK.load_or_pretrained(None)  # the strategy 'random' does not use its model
    table = Table(
        "One goal per call, one solution (GGIK.solve, strategy random, first_solution)",
        ["robot", "dof", "starts", "LM path", "median ms per call", "p90 ms per call", "success", "iterations"],
    )
    for robot in robots:
        for starts in args.starts:
            for path in PATHS:
                r = call_latency(solver, robot, args.goals, starts, path, args.seed)
                row = [r["median_ms"], r["p90_ms"], r["success"], r["iterations"]]
                table.add(robot.name, robot.dof, starts, path, *row)
                print(table.rows[-1], flush=True)
    table.notes.append(
        f"{args.goals} goals per row (q uniform in the limits, goal = FK(q)), one call each after a warm-up "
        f"call; {torch.get_num_threads()} torch thread(s); success: the best solution strict-valid (FK, 1 mm & "
        "0.01 rad, within limits); iterations: the call's longest start, mean over goals (the same starts, rerun)"
    )
    batch = Table(
        f"ms per LM iteration against batch size (panda, pose goals, {args.iters} iterations, none converges)",
        ["elements", "numpy ms per iteration", "torch ms per iteration", "torch / numpy"],
    )
    panda = Robot.from_name("panda")
    for n in args.batch_sizes:
        ms = [iteration_cost(panda, n, args.iters, path, 5, args.seed) for path in PATHS]
        batch.add(n, ms[0], ms[1], ms[1] / ms[0])
        print(batch.rows[-1], flush=True)
    batch.notes.append(f"median of 5 calls; NUMPY_MAX_ELEMENTS = {NUMPY_MAX_ELEMENTS} in this code")
    print(batch.markdown(command, args.seed, None))
    if args.out is not None:
        print("wrote", *batch.write(f"{Path(args.out)}_batch", command, args.seed, None))
    return table
