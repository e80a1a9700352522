"""Speed against the IK solvers users would pick instead: same goals, same process, strict success.

For each robot (default: the five GGIK paper robots, then the rest of urdfs/; ``randomN`` adds a random
N-DOF robot), P seeded goals (q uniform within the limits, goal = FK(q)) are solved by

* **GGIK + LM**: S model samples per goal (``sample_joint_angles``), each refined by batched
  Levenberg-Marquardt (``lm_refine``): what ``GGIK.solve(refine="lm")`` does, called directly to read
  the iteration counts;
* **LM (random starts)**: ``lm_refine`` from S configurations uniform within the limits;
* **SLSQP (random starts)**: scipy SLSQP (``slsqp_refine``) from S uniform starts, on the first
  ``slsqp_goals`` goals only (one scipy run per start: slow);
* **TRAC-IK**: the ``pytracik`` wheel (KDL + NLopt SQP raced in two threads until the first solution or
  the timeout; one call per goal, seeded with one uniform configuration), if it is importable.

Two modes: **single** (one call per goal, on the first ``single_goals`` goals) and **batch** (all P goals
in one call; SLSQP: its goals in one call; TRAC-IK has no batch API: a loop over all P goals).

Every returned solution is checked by FK in float64 (:func:`benchmarks.common.measure.strict_valid`):
position error < 1 mm, rotation error < 0.01 rad and every joint within its limits. Reported per robot, method
and mode: success rate (goals with at least one strict-valid solution), strict-valid and distinct strict-valid
solutions per goal (:func:`ggik.ik.metrics.count_distinct`), strict-valid solutions per CPU-second, wall and CPU
time per goal, the time to the first strict solution per solved goal (single mode: median over solved goals of
the call's wall time, for SLSQP the time until its first successful start; batch mode: batch wall time / P),
and the mean solver iterations.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch

from benchmarks.common.load import busy_processes
from benchmarks.common.measure import strict_valid
from benchmarks.common.robots import default_robots, load_bench_model, robot_from_arg
from benchmarks.common.scripts import BenchmarkError
from benchmarks.common.streams import SOLVERS_GGIK_SAMPLES, SOLVERS_RANDOM_STARTS, SOLVERS_SINGLE_START
from benchmarks.solvers.solver_runs import Outcome, TracIK, run_lm, run_slsqp, run_tracik
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.evaluation.report import Table, model_stamp
from ggik.ik.lm.select import NUMPY_MAX_ELEMENTS
from ggik.ik.metrics import DISTINCT_TOL, count_distinct
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.rng import step_generator

__all__ = ["SolverBenchmark", "run_solver_benchmark", "add_row", "COLUMNS", "METHODS"]

COLUMNS = [
    "robot",
    "dof",
    "method",
    "mode",
    "goals",
    "starts per goal",
    "success [%]",
    "strict solutions per goal",
    "distinct strict per goal",
    "strict solutions per CPU-s",
    "wall per goal [ms]",
    "CPU per goal [ms]",
    "first strict solution [ms]",
    "mean iterations",
]
#: "first solution": LM from the same random starts, each goal's starts stopped at its first converged one
#: (``RefineConfig.stop_at_first``, ``SolveConfig.first_solution``)
METHODS = ("GGIK + LM", "LM (random starts)", "LM (random starts, first solution)", "SLSQP (random starts)", "TRAC-IK")


@dataclass
class SolverBenchmark:
    """The options of the solver benchmark (those of ``python -m benchmarks.solvers.bench_solvers``)."""

    robots: list[str] | None = None  #: shipped robot names or randomN (None: paper robots, then the rest of urdfs/)
    goals: int = 1000  #: P, goals per robot (batch mode of LM methods and TRAC-IK)
    single_goals: int = 200  #: the first N goals are also solved one call per goal
    samples: int = 32  #: S, GGIK samples / random starts per goal
    iters: int = 30  #: LM iteration budget
    slsqp_goals: int = 20  #: SLSQP solves only the first N goals (it is slow)
    slsqp_iters: int = 100  #: SLSQP iteration budget (the GGIK paper's 100)
    tracik_timeout: float = 0.005  #: TRAC-IK time budget per call [s]
    distinct_tol: float = DISTINCT_TOL  #: [rad] joint-space distance below which two solutions count once
    methods: list[str] = field(default_factory=lambda: list(METHODS))  #: subset of METHODS
    threads: int = 1  #: torch CPU threads
    seed: int = 0  #: seeds the goals, the random starts and the GGIK sampling noise
    load_probe: float = 1.0  #: seconds spent before and after the run listing other busy processes
    progress: bool = True  #: tqdm progress bar

    def check(self) -> None:
        """:class:`BenchmarkError` naming the first bad option."""

        def need(ok: bool, message: str) -> None:
            if not ok:
                raise BenchmarkError(f"bench_solvers: {message}")

        for name in ("goals", "samples", "iters", "slsqp_iters", "threads"):
            need(getattr(self, name) >= 1, f"--{name.replace('_', '-')} must be >= 1, got {getattr(self, name)}")
        for name in ("single_goals", "slsqp_goals"):
            need(getattr(self, name) >= 0, f"--{name.replace('_', '-')} must be >= 0, got {getattr(self, name)}")
        need(self.tracik_timeout > 0, f"--tracik-timeout must be positive, got {self.tracik_timeout}")
        need(self.load_probe > 0, f"--load-probe must be positive, got {self.load_probe}")
        need(self.distinct_tol > 0, f"--distinct-tol must be positive, got {self.distinct_tol}")
        unknown = [m for m in self.methods if m not in METHODS]
        need(not unknown, f"unknown methods {unknown}; choose from {list(METHODS)}")


def add_row(
    table: Table,
    robot: Robot,
    method: str,
    mode: str,
    out: Outcome,
    T: torch.Tensor,
    cfg: RefineConfig,
    distinct_tol: float,
) -> None:
    """One row of :data:`COLUMNS` for ``out`` on the goals T (P, 4, 4)."""
    P, K = out.q.shape[:2]
    ok = strict_valid(robot, out.q, T, cfg)
    n_ok = int(ok.sum())
    solved = ok.any(-1)
    if out.first_s is None:  # batch: all goals' solutions arrive together
        first = out.wall_s / P if bool(solved.any()) else math.nan
    else:
        times = out.first_s[solved & torch.isfinite(out.first_s)].tolist()
        first = statistics.median(times) if times else math.nan
    iters = out.iterations[torch.isfinite(out.iterations)]
    distinct = count_distinct(out.q, ok, ~robot.limited, distinct_tol)
    table.add(
        robot.name,
        robot.dof,
        method,
        mode,
        P,
        K,
        100 * solved.double().mean().item(),
        n_ok / P,
        distinct.mean().item(),
        n_ok / out.cpu_s if out.cpu_s > 0 else math.nan,
        1e3 * out.wall_s / P,
        1e3 * out.cpu_s / P,
        1e3 * first,
        iters.mean().item() if iters.numel() else math.nan,
    )


def _tracik_version() -> str:
    """pytracik's version; ImportError when it cannot be imported."""
    from importlib import import_module
    from importlib.metadata import PackageNotFoundError, version

    import_module("pytracik")
    try:
        return version("pytracik")
    except PackageNotFoundError:
        return "(version unknown)"


def run_solver_benchmark(ckpt_path: str | Path, opts: SolverBenchmark, out_dir: str | Path, command: str) -> Table:
    """Solve the same seeded goals with every method of ``opts.methods``; write ``out_dir``/solvers.md and
    solvers.csv (with ``command``, the machine and its load) and return the table (:data:`COLUMNS`).

    Raises :class:`BenchmarkError` for bad options, an unknown robot or an unusable checkpoint. A method that
    cannot run on a robot (no GGIK graph, TRAC-IK's URDF) or at all (pytracik missing) is skipped with a note.
    Sets torch's CPU thread count.
    """
    opts.check()
    torch.set_num_threads(opts.threads)

    from tqdm import tqdm

    robots = [robot_from_arg(n, opts.seed) for n in (opts.robots or default_robots())]
    model, ckpt = load_bench_model(ckpt_path)
    before = busy_processes(opts.load_probe)
    P, S = opts.goals, opts.samples
    n_single, n_slsqp = min(opts.single_goals, P), min(opts.slsqp_goals, P)
    cfg = RefineConfig(max_iters=opts.iters, slsqp_max_iters=opts.slsqp_iters)
    methods = list(dict.fromkeys(opts.methods))
    notes: list[str] = []
    tracik_version = None
    if "TRAC-IK" in methods:
        try:
            tracik_version = _tracik_version()
        except ImportError as exc:
            notes.append(f"TRAC-IK: not measured, pytracik is not importable here ({exc}); pip install 'ggik[bench]'.")
            methods.remove("TRAC-IK")

    table = Table(
        f"IK solvers on the same goals: strict success = {cfg.pos_tol * 1e3:g} mm and {cfg.rot_tol:g} rad within "
        "limits, "
        f"S = {S} starts per goal",
        list(COLUMNS),
    )
    modes = [m for m, n in (("single", n_single), ("batch", P)) if n > 0]
    bar = tqdm(
        total=len(robots) * len(methods) * len(modes),
        desc="solvers",
        unit="run",
        disable=not opts.progress,
        dynamic_ncols=True,
    )
    problems = ProblemSet.generate(robots, P, opts.seed).groups()
    for r_index, (robot, _, T) in enumerate(problems):
        q_rand = robot.sample_q(P * S, step_generator(opts.seed, SOLVERS_RANDOM_STARTS, r_index)).view(P, S, robot.dof)
        graph = None
        for method in methods:
            tracik = None
            if method == "GGIK + LM":
                try:
                    graph = model.graph(robot)
                except GGIKError as exc:
                    notes.append(f"GGIK + LM on {robot.name}: skipped, {exc}")
                    bar.update(len(modes))
                    continue
            if method == "TRAC-IK":
                try:
                    tracik = TracIK(robot, opts.tracik_timeout)
                except Exception as exc:  # URDF parsing in KDL, joint-count or FK mismatch
                    notes.append(f"TRAC-IK on {robot.name}: skipped, {type(exc).__name__}: {exc}")
                    bar.update(len(modes))
                    continue
            for mode in modes:
                bar.set_postfix_str(f"{robot.name}: {method}, {mode}")
                single = mode == "single"
                n = n_single if single else P
                if method == "SLSQP (random starts)":
                    n = min(n, n_slsqp)
                    if n == 0:
                        bar.update(1)
                        continue
                Tn = T[:n]
                if method == "GGIK + LM":

                    def starts(i: int, count: int, _g=graph, _T=Tn, _single=single, _r=r_index) -> torch.Tensor:
                        gen = step_generator(opts.seed, SOLVERS_GGIK_SAMPLES, _r, int(_single), i)
                        return sample_joint_angles(model, _g, _T[i : i + count], S, generator=gen).q

                    run_lm(robot, Tn[:1], starts, cfg, True)  # warm-up: first calls pay one-off costs
                    out = run_lm(robot, Tn, starts, cfg, single)
                elif method.startswith("LM (random starts"):

                    def starts(i: int, count: int, _single=single, _r=r_index, _robot=robot) -> torch.Tensor:
                        gen = step_generator(opts.seed, SOLVERS_SINGLE_START, _r, int(_single), i)
                        return _robot.sample_q(count * S, gen).view(count, S, _robot.dof)

                    lm_cfg = replace(cfg, stop_at_first=method.endswith("first solution)"))
                    run_lm(robot, Tn[:1], starts, lm_cfg, True)
                    out = run_lm(robot, Tn, starts, lm_cfg, single)
                elif method == "SLSQP (random starts)":
                    run_slsqp(robot, Tn[:1], q_rand[:1, :1], cfg, True)
                    out = run_slsqp(robot, Tn, q_rand[:n], cfg, single)
                else:
                    run_tracik(tracik, robot, Tn[:1], q_rand[:1, 0], cfg, True)
                    out = run_tracik(tracik, robot, Tn, q_rand[:n, 0], cfg, single)
                add_row(table, robot, method, mode, out, Tn, cfg, opts.distinct_tol)
                bar.update(1)
    bar.close()
    after = busy_processes(opts.load_probe)

    mc = model.cfg
    notes[:0] = [
        "strict-valid: FK (float64, ggik) of the returned joint values within "
        f"{cfg.pos_tol * 1e3:g} mm and {cfg.rot_tol:g} rad of the goal and inside the joint limits, checked here for "
        "every method. "
        "success: goals with at least one strict-valid solution.",
        f"distinct: strict-valid solutions of a goal at least {opts.distinct_tol:g} rad apart in joint space "
        "(Euclidean norm "
        "over the joints, continuous joints wrapped; greedy in start order: ggik.ik.metrics.count_distinct).",
        f"single: one call per goal on the first {n_single} goals (SLSQP: the first {min(n_single, n_slsqp)}); first "
        "strict solution = "
        "median over solved goals of the call's wall time (all S starts of an LM call finish together; SLSQP: the "
        "time until its first "
        "successful start; TRAC-IK returns at its first solution). batch: all goals in one call (SLSQP: its first "
        f"{n_slsqp} goals; TRAC-IK has no batch API: a loop over all {P} goals); first strict solution = wall time / "
        "goals. "
        "n/a: no goal solved.",
        "CPU time: time.process_time of the whole process (every thread: torch's intra-op threads, TRAC-IK's two "
        "solver threads); "
        "wall time: time.perf_counter. Each method has an untimed warm-up call first.",
        f"GGIK + LM: checkpoint {ckpt_path} (step {ckpt.get('step', '?')}, {model.num_parameters():,} parameters, dim "
        f"{mc.dim}, "
        f"hidden {mc.hidden}), S = {S} samples per goal (sampling + angle recovery + FK errors are timed), then LM as "
        "below.",
        f"LM: ggik.ik.refine.lm_refine, batched in float64 (in numpy for calls of at most {NUMPY_MAX_ELEMENTS} "
        f"goals x starts, in torch above), at most {cfg.max_iters} iterations, early stop per start at the strict "
        "tolerances; 'first solution': each goal's starts stop at its first converged one. Random starts: uniform "
        "within the limits, drawn inside the timed call.",
        f"SLSQP: scipy via ggik.ik.refine.slsqp_refine, at most {cfg.slsqp_max_iters} iterations, ftol "
        f"{cfg.slsqp_ftol:g}, exact gradient.",
        f"Goals: {P} per robot, q uniform within the limits (ggik.data.ProblemSet.generate, seed {opts.seed}), goal = "
        "FK(q).",
        f"Other processes on the machine, before the run: {before}; after: {after}.",
    ]
    if tracik_version is not None:
        notes.append(
            f"TRAC-IK: pytracik {tracik_version} (Speed mode, timeout {1e3 * opts.tracik_timeout:g} ms, epsilon 1e-5), "
            "URDF = ggik's kinematic export of the chain (Robot.to_urdf), one uniform seed per goal; it reports no "
            "iterations."
        )
    table.notes += notes
    table.write(Path(out_dir) / "solvers", command=command, seed=opts.seed, model=model_stamp(ckpt_path))
    return table
