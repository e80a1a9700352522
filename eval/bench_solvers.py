"""Speed against the IK solvers users would pick instead: same goals, same process, strict success.

For each robot (default: the five GGIK paper robots, then the rest of urdfs/; ``randomN`` adds a random
N-DOF robot), P seeded goals (q uniform within the limits, goal = FK(q)) are solved by

* **GGIK + LM**: S model samples per goal (``sample_joint_angles``), each refined by batched
  Levenberg-Marquardt (``lm_refine``): what ``GGIK.solve(refine="lm")`` does, called directly to read
  the iteration counts;
* **LM (random starts)**: ``lm_refine`` from S configurations uniform within the limits;
* **SLSQP (random starts)**: scipy SLSQP (``slsqp_refine``) from S uniform starts, on the first
  --slsqp-goals goals only (one scipy run per start: slow);
* **TRAC-IK**: the ``pytracik`` wheel (KDL + NLopt SQP raced in two threads until the first solution or
  the timeout; one call per goal, seeded with one uniform configuration), if it is importable.

Two modes: **single** (one call per goal, on the first --single-goals goals) and **batch** (all P goals
in one call; SLSQP: its goals in one call; TRAC-IK has no batch API: a loop over all P goals).

Every returned solution is checked here by FK in float64: *strict-valid* = position error < 1 mm,
rotation error < 0.01 rad and every joint within its limits. Reported per robot, method and mode:
success rate (goals with at least one strict-valid solution), strict-valid and distinct strict-valid
solutions per goal, strict-valid solutions per CPU-second (``time.process_time``: all threads of this
process), wall (``time.perf_counter``) and CPU time per goal, the time to the first strict solution
per solved goal (single mode: median over solved goals of the call's wall time, for SLSQP the time
until its first successful start; batch mode: batch wall time / P), and the mean solver iterations.

Writes OUT_DIR/solvers.md and solvers.csv (``ggik.report.Table``) and prints the table.

Usage: ``python eval/bench_solvers.py --ckpt runs/default/last.pt [--robots panda ur10 ...] [--goals 1000]
[--single-goals 200] [--samples 32] [--iters 30] [--slsqp-goals 20] [--seed 0] [--out-dir eval/results]``
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchutil import busy_processes, default_robots, load_checkpoint_or_exit, robot_from_arg, script_command  # noqa: E402

from ggik import GGIKError, Robot, RobotGraph  # noqa: E402
from ggik.data import ProblemSet  # noqa: E402
from ggik.rng import step_generator  # noqa: E402
from ggik.kinematics.geometry import matrix_to_quat, pose_errors  # noqa: E402
from ggik.ik.sampling import sample_joint_angles  # noqa: E402
from ggik.ik.refine import RefineConfig, lm_refine, slsqp_refine  # noqa: E402
from ggik.evaluation.report import Table  # noqa: E402

COLUMNS = [
    "robot", "dof", "method", "mode", "goals", "starts per goal", "success [%]", "strict solutions per goal",
    "distinct strict per goal", "strict solutions per CPU-s", "wall per goal [ms]", "CPU per goal [ms]",
    "first strict solution [ms]", "mean iterations",
]
METHODS = ("GGIK + LM", "LM (random starts)", "SLSQP (random starts)", "TRAC-IK")


@dataclass
class Outcome:
    """One method on one robot in one mode.

    Attributes:
        q: (P, K, dof) returned joint values [rad] (K solutions per goal; NaN rows = no solution returned).
        wall_s, cpu_s: total wall and CPU seconds of the timed calls.
        first_s: (P,) seconds until the first strict-valid solution of each goal (NaN: none), or None to use wall_s / P.
        iterations: (P, K) iterations per start (NaN where the solver does not report them).
    """

    q: torch.Tensor
    wall_s: float
    cpu_s: float
    first_s: torch.Tensor | None
    iterations: torch.Tensor


def strict_valid(robot: Robot, q: torch.Tensor, T_goal: torch.Tensor, cfg: RefineConfig) -> torch.Tensor:
    """(P, K) bool: FK of q (P, K, dof) within ``cfg.pos_tol`` [m] and ``cfg.rot_tol`` [rad] of T_goal (P, 4, 4), inside the limits."""
    found = torch.isfinite(q).all(-1)
    qz = torch.where(found[..., None], q, torch.zeros_like(q))
    pos, rot = pose_errors(robot.fk(qz), T_goal[:, None])
    lo, hi = robot.lower.to(q), robot.upper.to(q)
    within = (((qz >= lo - 1e-9) & (qz <= hi + 1e-9)) | ~robot.limited).all(-1)
    return found & (pos < cfg.pos_tol) & (rot < cfg.rot_tol) & within


def distinct_count(q: torch.Tensor, ok: torch.Tensor, tol: float) -> torch.Tensor:
    """(P,) number of distinct valid solutions per goal of q (P, K, dof) with mask ok (P, K), greedily: a solution is
    new when it differs from every kept one by more than ``tol`` [rad] in some joint (differences wrapped to [-pi, pi])."""
    qz = torch.where(ok[..., None], q, torch.zeros_like(q))
    diff = torch.remainder(qz[:, :, None] - qz[:, None, :] + math.pi, 2 * math.pi) - math.pi
    close = (diff.abs().amax(-1) <= tol).numpy()  # (P, K, K)
    counts = []
    for c, o in zip(close, ok.numpy()):
        kept: list[int] = []
        for k in o.nonzero()[0]:
            if not c[k, kept].any():
                kept.append(int(k))
        counts.append(len(kept))
    return torch.tensor(counts, dtype=torch.float64)


def _timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds of the whole process) of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


# ---------------------------------------------------------------------------------------------- methods
def run_lm(robot: Robot, T: torch.Tensor, starts: Callable[[int, int], torch.Tensor], cfg: RefineConfig,
           single: bool) -> Outcome:
    """LM from ``starts(goal_index, count)`` -> (count, S, dof) initial values (the start drawing is timed too)."""
    P = T.shape[0]
    if not single:
        (q, info), wall, cpu = _timed(lambda: lm_refine(robot, T[:, None], starts(0, P), cfg))
        return Outcome(q, wall, cpu, None, info.iterations.double())
    qs, its, first, wall, cpu = [], [], [], 0.0, 0.0
    for i in range(P):
        (q, info), w, c = _timed(lambda: lm_refine(robot, T[i : i + 1, None], starts(i, 1), cfg))
        ok = strict_valid(robot, q, T[i : i + 1], cfg)
        qs.append(q)
        its.append(info.iterations.double())
        first.append(w if bool(ok.any()) else math.nan)
        wall += w
        cpu += c
    return Outcome(torch.cat(qs), wall, cpu, torch.tensor(first, dtype=torch.float64), torch.cat(its))


def run_slsqp(robot: Robot, T: torch.Tensor, q0: torch.Tensor, cfg: RefineConfig, single: bool) -> Outcome:
    """SLSQP from q0 (P, S, dof); single mode runs start by start to time the first strict solution."""
    P, S = q0.shape[:2]
    if not single:
        (q, info), wall, cpu = _timed(lambda: slsqp_refine(robot, T[:, None], q0, cfg))
        return Outcome(q, wall, cpu, None, info.iterations.double())
    q = torch.empty_like(q0)
    its = torch.empty(P, S, dtype=torch.float64)
    first, wall, cpu = [], 0.0, 0.0
    for i in range(P):
        t_goal, found = 0.0, math.nan
        for s in range(S):
            (qs, info), w, c = _timed(lambda: slsqp_refine(robot, T[i], q0[i, s], cfg))
            q[i, s], its[i, s] = qs, float(info.iterations)
            t_goal += w
            cpu += c
            if math.isnan(found) and bool(strict_valid(robot, qs[None, None], T[i : i + 1], cfg)):
                found = t_goal
        wall += t_goal
        first.append(found)
    return Outcome(q, wall, cpu, torch.tensor(first, dtype=torch.float64), its)


class TracIK:
    """One TRAC-IK solver (pytracik) for ``robot``, built from its kinematic URDF (:meth:`Robot.to_urdf`)."""

    def __init__(self, robot: Robot, timeout: float, epsilon: float = 1e-5) -> None:
        import pytracik

        self.pytracik = pytracik
        self.handle = pytracik.TRAC_IK(robot.base_link, robot.ee_link, robot.to_urdf(), timeout, epsilon, pytracik.SolveType.Speed)
        n = pytracik.get_num_joints(self.handle)
        if n != robot.dof:
            raise GGIKError(f"TRAC-IK sees {n} joints on {robot.name}, ggik {robot.dof}")
        q = robot.sample_q(3, torch.Generator().manual_seed(0))
        diff = max(abs(pytracik.fk(self.handle, qi.numpy()) - robot.fk(qi).numpy()).max() for qi in q)
        if diff > 1e-9:
            raise GGIKError(f"TRAC-IK's forward kinematics of {robot.name} differs from ggik's by {diff:.2g}")
        self.dof = robot.dof

    def solve(self, T: torch.Tensor, seed: torch.Tensor) -> torch.Tensor:
        """(dof,) solution for the goal T (4, 4) from ``seed`` (dof,), NaN when TRAC-IK finds none in time."""
        p = T[:3, 3].tolist()
        w, x, y, z = matrix_to_quat(T[:3, :3]).tolist()
        r = self.pytracik.ik(self.handle, seed.numpy(), p[0], p[1], p[2], x, y, z, w)
        if r[0] < 0:
            return torch.full((self.dof,), math.nan, dtype=torch.float64)
        return torch.as_tensor(r[1:], dtype=torch.float64)


def run_tracik(solver: TracIK, robot: Robot, T: torch.Tensor, seeds: torch.Tensor, cfg: RefineConfig, single: bool) -> Outcome:
    """One TRAC-IK call per goal (P, 4, 4) from seeds (P, dof); single mode times each call."""
    P = T.shape[0]
    if not single:
        q, wall, cpu = _timed(lambda: torch.stack([solver.solve(T[i], seeds[i]) for i in range(P)]))
        return Outcome(q[:, None], wall, cpu, None, torch.full((P, 1), math.nan))
    qs, first, wall, cpu = [], [], 0.0, 0.0
    for i in range(P):
        q, w, c = _timed(lambda: solver.solve(T[i], seeds[i]))
        qs.append(q)
        ok = strict_valid(robot, q[None, None], T[i : i + 1], cfg)
        first.append(w if bool(ok.any()) else math.nan)
        wall += w
        cpu += c
    return Outcome(torch.stack(qs)[:, None], wall, cpu, torch.tensor(first, dtype=torch.float64), torch.full((P, 1), math.nan))


# ---------------------------------------------------------------------------------------------- table
def add_row(table: Table, robot: Robot, method: str, mode: str, out: Outcome, T: torch.Tensor, cfg: RefineConfig,
            distinct_tol: float) -> None:
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
    table.add(
        robot.name, robot.dof, method, mode, P, K, 100 * solved.double().mean().item(), n_ok / P,
        distinct_count(out.q, ok, distinct_tol).mean().item(), n_ok / out.cpu_s if out.cpu_s > 0 else math.nan,
        1e3 * out.wall_s / P, 1e3 * out.cpu_s / P, 1e3 * first, iters.mean().item() if iters.numel() else math.nan,
    )


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise SystemExit(f"bench_solvers: {message}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", required=True, help="checkpoint (RUN_DIR/last.pt) written by ggik train")
    ap.add_argument("--robots", nargs="+", default=None,
                    help="shipped robot names or randomN (default: the five paper robots, then the rest of urdfs/)")
    ap.add_argument("--goals", type=int, default=1000, help="P, goals per robot (batch mode of LM methods and TRAC-IK)")
    ap.add_argument("--single-goals", type=int, default=200, help="the first N goals are also solved one call per goal")
    ap.add_argument("--samples", type=int, default=32, help="S, GGIK samples / random starts per goal")
    ap.add_argument("--iters", type=int, default=30, help="LM iteration budget")
    ap.add_argument("--slsqp-goals", type=int, default=20, help="SLSQP solves only the first N goals (it is slow)")
    ap.add_argument("--slsqp-iters", type=int, default=100, help="SLSQP iteration budget (the GGIK paper's 100)")
    ap.add_argument("--tracik-timeout", type=float, default=0.005, help="TRAC-IK time budget per call [s] (its default 5 ms)")
    ap.add_argument("--distinct-tol", type=float, default=0.05, help="solutions closer than this in every joint [rad] count once")
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS, metavar="METHOD",
                    help=f"subset of: {', '.join(repr(m) for m in METHODS)}")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (0 = torch's default)")
    ap.add_argument("--seed", type=int, default=0, help="seeds the goals, the random starts and the GGIK sampling noise")
    ap.add_argument("--out-dir", default="eval/results", help="folder for solvers.md and solvers.csv")
    ap.add_argument("--load-probe", type=float, default=1.0,
                    help="seconds spent before and after the run listing other busy processes (for the notes)")
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    args = ap.parse_args(argv)
    for name in ("goals", "samples", "iters", "slsqp_iters"):
        _check(getattr(args, name) >= 1, f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    for name in ("single_goals", "slsqp_goals", "threads"):
        _check(getattr(args, name) >= 0, f"--{name.replace('_', '-')} must be >= 0, got {getattr(args, name)}")
    _check(args.tracik_timeout > 0, f"--tracik-timeout must be positive, got {args.tracik_timeout}")
    _check(args.load_probe > 0, f"--load-probe must be positive, got {args.load_probe}")
    _check(args.distinct_tol > 0, f"--distinct-tol must be positive, got {args.distinct_tol}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    from tqdm import tqdm

    robots = [robot_from_arg(n, args.seed) for n in (args.robots or default_robots())]
    model, ckpt = load_checkpoint_or_exit(args.ckpt)
    before = busy_processes(args.load_probe)
    P, S = args.goals, args.samples
    n_single, n_slsqp = min(args.single_goals, P), min(args.slsqp_goals, P)
    cfg = RefineConfig(max_iters=args.iters, slsqp_max_iters=args.slsqp_iters)
    methods = list(dict.fromkeys(args.methods))
    notes: list[str] = []
    tracik_version = None
    if "TRAC-IK" in methods:
        try:
            from importlib.metadata import PackageNotFoundError, version

            import pytracik  # noqa: F401

            try:
                tracik_version = version("pytracik")
            except PackageNotFoundError:
                tracik_version = "(version unknown)"
        except ImportError as exc:
            notes.append(f"TRAC-IK: not measured, pytracik is not importable here ({exc}); pip install 'ggik[bench]'.")
            methods.remove("TRAC-IK")

    table = Table(
        f"IK solvers on the same goals: strict success = {cfg.pos_tol * 1e3:g} mm and {cfg.rot_tol:g} rad within limits, "
        f"S = {S} starts per goal",
        COLUMNS,
    )
    modes = [m for m, n in (("single", n_single), ("batch", P)) if n > 0]
    bar = tqdm(total=len(robots) * len(methods) * len(modes), desc="solvers", unit="run", disable=args.no_progress, dynamic_ncols=True)
    problems = ProblemSet.generate(robots, P, args.seed).groups()
    for r_index, (robot, _, T) in enumerate(problems):
        q_rand = robot.sample_q(P * S, step_generator(args.seed, 20, r_index)).view(P, S, robot.dof)
        graph = None
        for method in methods:
            tracik = None
            if method == "GGIK + LM":
                try:
                    graph = RobotGraph.from_robot(robot)
                except GGIKError as exc:
                    notes.append(f"GGIK + LM on {robot.name}: skipped, {exc}")
                    bar.update(len(modes))
                    continue
            if method == "TRAC-IK":
                try:
                    tracik = TracIK(robot, args.tracik_timeout)
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
                    def starts(i: int, count: int, _g=graph, _T=Tn, _single=single) -> torch.Tensor:
                        gen = step_generator(args.seed, 10, r_index, int(_single), i)
                        return sample_joint_angles(model, _g, _T[i : i + count], S, generator=gen).q

                    run_lm(robot, Tn[:1], starts, cfg, True)  # warm-up: first calls pay one-off costs
                    out = run_lm(robot, Tn, starts, cfg, single)
                elif method == "LM (random starts)":
                    def starts(i: int, count: int, _single=single) -> torch.Tensor:
                        gen = step_generator(args.seed, 21, r_index, int(_single), i)
                        return robot.sample_q(count * S, gen).view(count, S, robot.dof)

                    run_lm(robot, Tn[:1], starts, cfg, True)
                    out = run_lm(robot, Tn, starts, cfg, single)
                elif method == "SLSQP (random starts)":
                    run_slsqp(robot, Tn[:1], q_rand[:1, :1], cfg, True)
                    out = run_slsqp(robot, Tn, q_rand[:n], cfg, single)
                else:
                    run_tracik(tracik, robot, Tn[:1], q_rand[:1, 0], cfg, True)
                    out = run_tracik(tracik, robot, Tn, q_rand[:n, 0], cfg, single)
                add_row(table, robot, method, mode, out, Tn, cfg, args.distinct_tol)
                bar.update(1)
    bar.close()
    after = busy_processes(args.load_probe)

    mc = model.cfg
    notes[:0] = [
        "strict-valid: FK (float64, ggik) of the returned joint values within "
        f"{cfg.pos_tol * 1e3:g} mm and {cfg.rot_tol:g} rad of the goal and inside the joint limits, checked here for every method. "
        "success: goals with at least one strict-valid solution.",
        f"distinct: strict-valid solutions of a goal that differ from each other by more than {args.distinct_tol:g} rad in some joint "
        "(greedy, wrapped angles).",
        f"single: one call per goal on the first {n_single} goals (SLSQP: the first {min(n_single, n_slsqp)}); first strict solution = "
        "median over solved goals of the call's wall time (all S starts of an LM call finish together; SLSQP: the time until its first "
        "successful start; TRAC-IK returns at its first solution). batch: all goals in one call (SLSQP: its first "
        f"{n_slsqp} goals; TRAC-IK has no batch API: a loop over all {P} goals); first strict solution = wall time / goals. "
        "n/a: no goal solved.",
        "CPU time: time.process_time of the whole process (every thread: torch's intra-op threads, TRAC-IK's two solver threads); "
        "wall time: time.perf_counter. Each method has an untimed warm-up call first.",
        f"GGIK + LM: checkpoint {args.ckpt} (step {ckpt.get('step', '?')}, {model.num_parameters():,} parameters, dim {mc.dim}, "
        f"hidden {mc.hidden}), S = {S} samples per goal (sampling + angle recovery + FK errors are timed), then LM as below.",
        f"LM: ggik.refine.lm_refine, batched in torch (float64), at most {cfg.max_iters} iterations, early stop per start at the "
        f"strict tolerances. Random starts: uniform within the limits, drawn inside the timed call.",
        f"SLSQP: scipy via ggik.refine.slsqp_refine, at most {cfg.slsqp_max_iters} iterations, ftol {cfg.slsqp_ftol:g}, exact gradient.",
        f"Goals: {P} per robot, q uniform within the limits (ggik.data.ProblemSet.generate, seed {args.seed}), goal = FK(q).",
        f"Other processes on the machine, before the run: {before}; after: {after}.",
    ]
    if tracik_version is not None:
        notes.append(f"TRAC-IK: pytracik {tracik_version} (Speed mode, timeout {1e3 * args.tracik_timeout:g} ms, epsilon 1e-5), "
                     "URDF = ggik's kinematic export of the chain (Robot.to_urdf), one uniform seed per goal; it reports no iterations.")
    table.notes += notes
    command = script_command(__file__, argv)
    table.write(Path(args.out_dir) / "solvers", command=command, seed=args.seed)
    print(table.markdown(command, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
