"""Model first, random restarts where it fails, against LM from random starts alone: one process, same goals.

The method is :mod:`benchmarks.cascade.cascade_benchmark` (:func:`ggik.ik.cascade.lm_cascade` against
:func:`ggik.ik.cascade.lm_random_starts`); writes --out .md and .csv and prints the table. Run it alone on the machine.

Usage: ``python -m benchmarks.cascade.bench_cascade [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 200]
[--samples 1 2 4] [--random-starts 32] [--repeats 3] [--threads 2] [--tracik-timeout 0.005] [--device cuda]
[--out benchmarks/cascade/results/cascade]``
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.cascade.cascade_benchmark import CascadeBenchmark, run_cascade_benchmark
from benchmarks.common.scripts import add_device_arg, nonnegative_float, positive_int, run_table_script


def main(argv: list[str] | None = None) -> int:
    d = CascadeBenchmark()
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--ckpt", default="ggik/weights/ggik_default.pt", help="checkpoint or export (default: the shipped model)"
    )
    ap.add_argument("--robots", nargs="+", default=d.robots, help="shipped robots or randomN")
    ap.add_argument("-n", type=positive_int, default=d.goals, help="goals per robot")
    ap.add_argument(
        "-s",
        "--samples",
        type=positive_int,
        nargs="+",
        default=d.samples,
        help="model samples per goal, one cascade each",
    )
    ap.add_argument(
        "--random-starts",
        type=positive_int,
        default=d.random_starts,
        help="random starts per goal (baseline and stage 2)",
    )
    ap.add_argument(
        "--repeats", type=positive_int, default=d.repeats, help="interleaved timed calls per method (median reported)"
    )
    ap.add_argument("--threads", type=positive_int, default=d.threads, help="torch CPU threads")
    add_device_arg(ap, "the model's sampling (LM on the CPU)")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument(
        "--tracik-timeout",
        type=nonnegative_float,
        default=d.tracik_timeout,
        help="TRAC-IK's budget per call [s] (rows only where pytracik is importable; 0: none)",
    )
    ap.add_argument("--out", default="benchmarks/cascade/results/cascade", help="output stem (.md and .csv)")
    args = ap.parse_args(argv)
    opts = CascadeBenchmark(
        robots=args.robots,
        goals=args.n,
        samples=args.samples,
        random_starts=args.random_starts,
        repeats=args.repeats,
        threads=args.threads,
        seed=args.seed,
        tracik_timeout=args.tracik_timeout,
        device=args.device,
    )
    return run_table_script(
        __file__, argv, args.seed, lambda command: run_cascade_benchmark(args.ckpt, opts, args.out, command), args.ckpt
    )


if __name__ == "__main__":
    sys.exit(main())
