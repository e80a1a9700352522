"""Latency of one IK call for one goal and one solution, as a robot program or a ROS service calls IK, and the
per-iteration cost of the LM solver's two paths against the batch size.

Table 1 (``--out``): per robot, goals solved one call each (``GGIK.solve`` with the strategy "random", S random starts,
``first_solution``: each goal's LM stops at its first converged start) with LM compiled (numba: the solver's path on a
CPU when it is installed, :mod:`ggik.ik.single_goal`), in numpy (without numba) and forced into torch; and TRAC-IK
(pytracik, when installed: Speed mode, 5 ms budget, one uniform seed) on the same goals in the same run: median and
p90 wall time per call [ms], success (a strict-valid best solution: 1 mm and 0.01 rad within the limits, checked by
FK), mean LM iterations of the call (numpy's and torch's: the longest start; compiled: every start that ran).

Table 2 (``--out`` + ``_batch``): ms per LM iteration of each path for batches of n elements (panda,
pose goals, a tolerance no start meets, so every element runs all ``--iters`` iterations); where numpy stops paying
is where ``NUMPY_MAX_ELEMENTS`` belongs.

Run by ``python -m benchmarks.solvers.latency [--robots ...] [--goals 100] [--starts 4 16] [--threads 1]
[--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import time
from dataclasses import replace
from pathlib import Path

import torch

from benchmarks.common.measure import strict_valid
from benchmarks.common.streams import LATENCY_GOALS, LATENCY_STARTS
from benchmarks.solvers.solver_runs import TracIK
from ggik import GGIK, SolveConfig
from ggik.evaluation.report import Table
from ggik.ik.lm.select import NUMPY_MAX_ELEMENTS
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics import Robot
from ggik.rng import step_generator

__all__ = ["PATHS", "call_latency", "iteration_cost", "latency_tables", "tracik_latency"]

#: path -> the LM backends allowed in a solver call (RefineConfig.lm_backends; None: the solver's default rule)
PATHS: dict[str, tuple[str, ...] | None] = {"compiled": None, "numpy": ("numpy", "torch"), "torch": ("torch",)}


def call_latency(solver: GGIK, robot: Robot, goals: int, starts: int, path: str, seed: int) -> dict[str, float]:
    """Median and p90 ms per call, success and mean iterations of ``goals`` one-goal calls on ``path``."""
    g = step_generator(seed, LATENCY_GOALS, robot.dof)
    T = robot.fk(robot.sample_q(goals, g))
    config = SolveConfig(strategy="random", random_starts=starts, first_solution=True)
    default = solver.config
    solver.config = replace(default, lm_backends=PATHS[path])
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
            cfg = RefineConfig(stop_at_first=True, lm_backends=PATHS[path])
            its = lm_refine(robot, T[i : i + 1], q0, cfg)[1].iterations
            iters.append(int(its.sum() if path == "compiled" else its.max()))
    finally:
        solver.config = default
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
    cfg = RefineConfig(pos_tol=1e-300, rot_tol=1e-300, max_iters=iters, lm_backends=(path,))  # none converges
    lm_refine(robot, T, q0, cfg)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        lm_refine(robot, T, q0, cfg)
        times.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(times) / iters


def tracik_latency(robot: Robot, goals: int, seed: int, cfg: RefineConfig) -> dict[str, float] | None:
    """TRAC-IK's median and p90 ms per call and success on the goals of :func:`call_latency` (None: not installed)."""
    if importlib.util.find_spec("pytracik") is None:
        return None
    g = step_generator(seed, LATENCY_GOALS, robot.dof)
    T = robot.fk(robot.sample_q(goals, g))
    solver = TracIK(robot, timeout=0.005)
    seeds = robot.sample_q(goals, step_generator(seed, LATENCY_STARTS, 0))
    solver.solve(T[0], seeds[0])  # warm-up
    times, ok = [], []
    for i in range(goals):
        t0 = time.perf_counter()
        q = solver.solve(T[i], seeds[i])
        times.append(time.perf_counter() - t0)
        ok.append(bool(torch.isfinite(q).all()) and bool(strict_valid(robot, q[None, None], T[i : i + 1], cfg)[0, 0]))
    times.sort()
    return {
        "median_ms": 1e3 * statistics.median(times),
        "p90_ms": 1e3 * times[int(0.9 * (len(times) - 1))],
        "success": sum(ok) / len(ok),
        "iterations": math.nan,
    }


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
        t = tracik_latency(robot, args.goals, args.seed, solver.config)
        if t is not None:
            table.add(robot.name, robot.dof, 1, "TRAC-IK", t["median_ms"], t["p90_ms"], t["success"], t["iterations"])
            print(table.rows[-1], flush=True)
    table.notes.append(
        f"{args.goals} goals per row (q uniform in the limits, goal = FK(q)), one call each after a warm-up "
        f"call; {torch.get_num_threads()} torch thread(s); success: the best solution strict-valid (FK, 1 mm & "
        "0.01 rad, within limits); iterations: the call's longest start, mean over goals (the same starts, rerun)"
    )
    batch = Table(
        f"ms per LM iteration against batch size (panda, pose goals, {args.iters} iterations, none converges)",
        [
            "elements",
            "compiled ms per iteration",
            "numpy ms per iteration",
            "torch ms per iteration",
            "torch / compiled",
        ],  # fmt: skip
    )
    panda = Robot.from_name("panda")
    for n in args.batch_sizes:
        ms = [iteration_cost(panda, n, args.iters, path, 5, args.seed) for path in PATHS]
        batch.add(n, ms[0], ms[1], ms[2], ms[2] / ms[0])
        print(batch.rows[-1], flush=True)
    batch.notes.append(f"median of 5 calls; NUMPY_MAX_ELEMENTS = {NUMPY_MAX_ELEMENTS} in this code")
    print(batch.markdown(command, args.seed, None))
    if args.out is not None:
        print("wrote", *batch.write(f"{Path(args.out)}_batch", command, args.seed, None))
    return table
