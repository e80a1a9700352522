"""The cascade benchmark behind ``python -m benchmarks.cascade.bench_cascade``: model first, random restarts where it
fails (:func:`ggik.ik.cascade.lm_cascade`), against LM from random starts alone
(:func:`ggik.ik.cascade.lm_random_starts`).

Per robot, on the seeding table's goals and streams: the baseline with R random starts per goal and, for each S of
``samples``, the cascade with S model samples then R random starts for the goals still unsolved; every method is
called once to warm up, then ``repeats`` times interleaved (a slow phase of the shared machine hits all alike), and the
median wall time per goal is reported. Strict success: 1 mm and 0.01 rad within the joint limits. Where ``pytracik``
(the ``bench`` extra) is importable, TRAC-IK runs beside them on the same goals: one call per goal from one random
seed, with its own time budget (it restarts from random seeds inside it), timed the same way. A timing benchmark: run
it alone on the machine.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from benchmarks.common.load import busy_processes
from benchmarks.common.measure import strict_valid
from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.scripts import BenchmarkError
from ggik import rng
from ggik.evaluation.report import Table, model_stamp
from ggik.evaluation.tables import EvalConfig, evaluation_problems
from ggik.ik.cascade import CascadeResult, lm_cascade, lm_random_first, lm_random_starts
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics import Robot
from ggik.rng import step_generator

__all__ = ["CascadeBenchmark", "COLUMNS", "run_cascade_benchmark"]

COLUMNS = [
    "robot",
    "method",
    "model samples",
    "random starts",
    "goals",
    "strict success [%]",
    "solved by the first stage [%]",
    "LM iterations per goal",
    "time per goal [ms]",
    "speed-up vs random starts",
    "speed-up vs random-first, same S",
]


@dataclass
class CascadeBenchmark:
    """The options of ``python -m benchmarks.cascade.bench_cascade``."""

    robots: list[str] = field(default_factory=lambda: ["panda", "ur10", "lbr_iiwa", "kr16_2"])
    goals: int = 200  #: goals per robot
    samples: list[int] = field(default_factory=lambda: [1, 2, 4])  #: model samples per goal, one cascade each
    random_starts: int = 32  #: R, random starts per goal of the baseline and of the cascade's second stage
    repeats: int = 3  #: interleaved timed calls per method (the median is reported)
    threads: int = 2  #: torch CPU threads
    device: str = "cpu"  #: where the model samples (angle recovery and FK included); LM runs on the CPU
    seed: int = 0  #: seeds the goals, the model noise and the random starts
    tracik_timeout: float = 0.005  #: TRAC-IK's time budget per call [s] (its default); 0: no TRAC-IK rows

    def check(self) -> None:
        """:class:`BenchmarkError` naming the first bad option."""
        for name, values in (
            ("--samples", self.samples),
            ("-n", [self.goals]),
            ("--random-starts", [self.random_starts]),
            ("--repeats", [self.repeats]),
            ("--threads", [self.threads]),
        ):
            if not values or any(int(v) != v or v < 1 for v in values):
                raise BenchmarkError(f"bench_cascade: {name} must be integers >= 1, got {values}")
        if not self.robots:
            raise BenchmarkError("bench_cascade: --robots is empty")
        if not self.tracik_timeout >= 0:
            raise BenchmarkError(f"bench_cascade: --tracik-timeout must be >= 0, got {self.tracik_timeout}")


TRACIK = "TRAC-IK, one seed"


def _tracik_available(timeout: float, notes: list[str]) -> bool:
    """Whether TRAC-IK rows are measured (``timeout`` > 0 and pytracik importable); says why not in ``notes``."""
    if timeout == 0:
        return False
    try:
        import pytracik  # noqa: F401
    except ImportError as exc:
        notes.append(f"TRAC-IK: not measured, pytracik is not importable here ({exc}); pip install 'ggik[bench]'.")
        return False
    return True


def _tracik_method(robot: Robot, T: torch.Tensor, timeout: float, seed: int, cfg: RefineConfig):
    """A callable solving every goal of T (P, 4, 4) with TRAC-IK (:func:`benchmarks.solvers.solver_runs.run_tracik`:
    one call per goal) from one uniform random seed per goal (the seeding table's start stream), returning a
    :class:`CascadeResult` judged by the same strict test; its errors and iterations are NaN (the table reads only
    success, and computing errors would add FK work to the timed call)."""
    from benchmarks.solvers.solver_runs import TracIK, run_tracik

    solver = TracIK(robot, timeout)

    def solve() -> CascadeResult:
        seeds = robot.sample_q(T.shape[0], step_generator(seed, rng.SEEDING_STARTS))
        q = run_tracik(solver, robot, T, seeds, cfg, single=False).q  # (P, 1, dof)
        ok = strict_valid(robot, q, T, cfg)[:, 0]
        nan = torch.full((T.shape[0],), float("nan"), dtype=torch.float64)
        return CascadeResult(q[:, 0], nan, nan, ok, torch.zeros_like(ok), nan)

    return solve


def run_cascade_benchmark(ckpt_path: str | Path, opts: CascadeBenchmark, out_stem: str | Path, command: str) -> Table:
    """Measure as ``opts`` says with the model at ``ckpt_path``; write ``out_stem``.md/.csv (with ``command``, the
    machine and its load); return the table. Sets torch's CPU thread count."""
    opts.check()
    torch.set_num_threads(opts.threads)
    model, _ = load_bench_model(ckpt_path, opts.device)
    robots = [robot_from_arg(name, opts.seed) for name in opts.robots]
    cfg, R = RefineConfig(), opts.random_starts
    before = busy_processes(1.0)
    notes: list[str] = []
    with_tracik = _tracik_available(opts.tracik_timeout, notes)
    table = Table(
        f"Cascades (LM from S model samples or S random starts, then {R} random starts where unsolved) vs LM from "
        f"{R} random starts",
        list(COLUMNS),
    )
    for robot, _, T in evaluation_problems(robots, EvalConfig(problems=opts.goals, seed=opts.seed)):
        graph = model.graph(robot)
        base_key = ("LM from random starts", 0)
        methods = {
            base_key: lambda robot=robot, T=T: lm_random_starts(
                robot, T, R, cfg, step_generator(opts.seed, rng.SEEDING_STARTS)
            )
        }
        for S in sorted(set(opts.samples)):
            methods[("model-first cascade", S)] = lambda S=S, T=T, graph=graph: lm_cascade(
                model,
                graph,
                T,
                S,
                R,
                cfg,
                generator=step_generator(opts.seed, rng.SEEDING_SAMPLES),
                start_generator=step_generator(opts.seed, rng.SEEDING_STARTS),
            )
            methods[("random-first cascade", S)] = lambda S=S, robot=robot, T=T: lm_random_first(
                robot, T, S, R, cfg, step_generator(opts.seed, rng.SEEDING_STARTS)
            )
        if with_tracik:
            try:
                methods[(TRACIK, 0)] = _tracik_method(robot, T, opts.tracik_timeout, opts.seed, cfg)
                methods[(TRACIK, 0)]()  # its warm-up, where a goal it cannot take would fail
            except Exception as exc:  # another chain in TRAC-IK's eyes, a URDF it refuses: say so, keep the rest
                methods.pop((TRACIK, 0), None)
                notes.append(f"TRAC-IK on {robot.name}: skipped, {type(exc).__name__}: {exc}")
        for key, fn in methods.items():
            if key[0] != TRACIK:
                fn()  # warm-up
        times: dict[tuple[str, int], list[float]] = {key: [] for key in methods}
        results = {}
        for _ in range(opts.repeats):
            for key, fn in methods.items():
                t0 = time.perf_counter()
                results[key] = fn()
                times[key].append((time.perf_counter() - t0) / T.shape[0])
        median = {key: statistics.median(t) for key, t in times.items()}
        for (method, S), res in results.items():
            t = median[(method, S)]
            control = median.get(("random-first cascade", S)) if method == "model-first cascade" else None
            table.add(
                robot.name,
                method,
                S if method == "model-first cascade" else 0,
                S + R if method == "random-first cascade" else (1 if method == TRACIK else R),
                T.shape[0],
                100 * res.success.double().mean().item(),
                float("nan") if method == TRACIK else 100 * res.first_stage.double().mean().item(),
                res.iterations.mean().item(),
                1e3 * t,
                median[base_key] / t,
                float("nan") if control is None else control / t,
            )
    table.notes += [
        f"Checkpoint {ckpt_path}, sampling on {opts.device}, LM on the CPU; {torch.get_num_threads()} torch "
        "thread(s); goals, model noise and random starts: "
        f"the seeding table's streams (seed {opts.seed}); both cascades draw their second-stage starts for the "
        "unsolved goals only.",
        "random starts: of a random-first cascade, S first-stage starts + R for the goals the first stage leaves; "
        "'speed-up vs random-first, same S': the model-first cascade against the random-first one with S random "
        "first starts (the same structure, the model's samples replaced by random starts).",
        f"time per goal: wall time of the whole call (sampling and both LM stages) / goals, median of {opts.repeats} "
        "interleaved repeats after a warm-up; LM iterations per goal: summed over the goal's starts and stages.",
        f"Other processes on the machine, before the run: {before}; after: {busy_processes(1.0)}.",
    ]
    if any(row[1] == TRACIK for row in table.rows):
        from importlib.metadata import version

        table.notes.append(
            f"{TRACIK}: pytracik {version('pytracik')} (Speed mode, timeout {1e3 * opts.tracik_timeout:g} ms, "
            "epsilon 1e-5), one call per goal from one uniform random seed (it restarts from random seeds within its "
            "budget), a Python loop over the goals (no batch API); judged by the same strict test."
        )
    table.notes += notes
    table.write(out_stem, command=command, seed=opts.seed, model=model_stamp(ckpt_path))
    return table
