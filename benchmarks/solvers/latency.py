"""Latency of one IK call for one goal and one solution, and the LM solver's per-iteration cost per path against the
batch size: the script of :mod:`benchmarks.solvers.latency_runs` (what is measured, and how).

Usage: ``python -m benchmarks.solvers.latency [--robots ...] [--goals 100] [--starts 4 16] [--threads 1]
[--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.common.robots import default_robots, robot_from_arg
from benchmarks.common.scripts import positive_int, run_table_script
from benchmarks.solvers.latency_runs import latency_tables

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--robots", nargs="+", default=None, help="shipped names or randomN (default: urdfs/)")
    ap.add_argument("--goals", type=positive_int, default=100, help="one-goal calls per robot and setting")
    ap.add_argument("--starts", nargs="+", type=positive_int, default=[4, 16], help="random starts per call")
    ap.add_argument("--batch-sizes", nargs="+", type=positive_int, default=[1, 4, 16, 64, 256, 1024])
    ap.add_argument("--iters", type=positive_int, default=10, help="LM iterations of the per-iteration table")
    ap.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the tables here (.md/.csv, and _batch.md/.csv)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    robots = [robot_from_arg(name, args.seed) for name in (args.robots or default_robots())]

    return run_table_script(
        __file__, argv, args.seed, lambda command: latency_tables(args, robots, command), out=args.out
    )


if __name__ == "__main__":
    sys.exit(main())
