"""Speed against the IK solvers users would pick instead: same goals, same process, strict success.

GGIK + LM, LM from random starts, SLSQP from random starts and TRAC-IK (pytracik, if importable) on the same
seeded goals per robot, one call per goal (single) and all goals in one call (batch); every solution is checked
by FK in float64 (1 mm, 0.01 rad, within the joint limits). The method is :mod:`benchmarks.solvers.solver_benchmark`.
Writes OUT_DIR/solvers.md and solvers.csv and prints the table.

Usage: ``python -m benchmarks.solvers.bench_solvers --ckpt ggik/weights/ggik_default.pt [--robots panda ur10 ...]
[--goals 1000] [--single-goals 200] [--samples 32] [--iters 30] [--slsqp-goals 20] [--seed 0]
[--out-dir benchmarks/solvers/results]``
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import nonnegative_int, positive_float, positive_int, run_table_script
from benchmarks.solvers.solver_benchmark import METHODS, SolverBenchmark, run_solver_benchmark
from ggik.ik.metrics import DISTINCT_TOL


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--ckpt", required=True, help="checkpoint or export (e.g. ggik/weights/ggik_default.pt, RUN_DIR/last.pt)"
    )
    ap.add_argument(
        "--robots",
        nargs="+",
        default=None,
        help="shipped robot names or randomN (default: the five paper robots, then the rest of urdfs/)",
    )
    ap.add_argument(
        "-n",
        "--goals",
        type=positive_int,
        default=1000,
        help="P, goals per robot (batch mode of LM methods and TRAC-IK)",
    )
    ap.add_argument(
        "--single-goals", type=nonnegative_int, default=200, help="the first N goals are also solved one call per goal"
    )
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="S, GGIK samples / random starts per goal")
    ap.add_argument("--iters", type=positive_int, default=30, help="LM iteration budget")
    ap.add_argument(
        "--slsqp-goals", type=nonnegative_int, default=20, help="SLSQP solves only the first N goals (it is slow)"
    )
    ap.add_argument(
        "--slsqp-iters", type=positive_int, default=100, help="SLSQP iteration budget (the GGIK paper's 100)"
    )
    ap.add_argument(
        "--tracik-timeout",
        type=positive_float,
        default=0.005,
        help="TRAC-IK time budget per call [s] (its default 5 ms)",
    )
    ap.add_argument(
        "--distinct-tol",
        type=positive_float,
        default=DISTINCT_TOL,
        help="solutions closer than this in joint space (Euclidean norm, continuous joints wrapped) [rad] count "
        f"once (default {DISTINCT_TOL:g}, ggik.ik.metrics.DISTINCT_TOL)",
    )
    ap.add_argument(
        "--methods",
        nargs="+",
        default=list(METHODS),
        choices=METHODS,
        metavar="METHOD",
        help=f"subset of: {', '.join(repr(m) for m in METHODS)}",
    )
    ap.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--seed", type=int, default=0, help="seeds the goals, the random starts and the GGIK sampling noise"
    )
    ap.add_argument("--out-dir", default="benchmarks/solvers/results", help="folder for solvers.md and solvers.csv")
    ap.add_argument(
        "--load-probe",
        type=positive_float,
        default=1.0,
        help="seconds spent before and after the run listing other busy processes (for the notes)",
    )
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    args = ap.parse_args(argv)
    opts = SolverBenchmark(
        robots=args.robots,
        goals=args.goals,
        single_goals=args.single_goals,
        samples=args.samples,
        iters=args.iters,
        slsqp_goals=args.slsqp_goals,
        slsqp_iters=args.slsqp_iters,
        tracik_timeout=args.tracik_timeout,
        distinct_tol=args.distinct_tol,
        methods=args.methods,
        threads=args.threads,
        seed=args.seed,
        load_probe=args.load_probe,
        progress=not args.no_progress,
    )
    return run_table_script(
        __file__,
        argv,
        args.seed,
        lambda command: run_solver_benchmark(args.ckpt, opts, args.out_dir, command),
        args.ckpt,
    )


if __name__ == "__main__":
    sys.exit(main())
