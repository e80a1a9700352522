"""The fast-IK tables of the code at a git ref and of the working tree, in one run: the script of
:mod:`benchmarks.solvers.before_after_runs` (what is measured, and how).

Usage: ``python -m benchmarks.solvers.before_after --before REF [--robots ...] [--rounds 3] [--out FILE]``. Run it
alone on the machine (about 2 minutes a round).
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, run_table_script
from benchmarks.solvers.before_after_runs import before_after_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", required=True, help="the git ref of the code before the change")
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10", "lbr_iiwa", "kr16_2"], help="shipped names")
    ap.add_argument("--rounds", type=positive_int, default=3, help="runs of each tree (alternating which goes first)")
    ap.add_argument("--goals", type=positive_int, default=300, help="goals of the batch tables")
    ap.add_argument("--latency-goals", type=positive_int, default=100, help="one-goal calls per robot")
    ap.add_argument("--tolerance", type=positive_float, default=0.05, help="the relative change called 'within'")
    ap.add_argument("--out", default=None, help="write the table here (.md/.csv)")
    args = ap.parse_args(argv)

    def table(command: str):
        return before_after_table(args.before, args.robots, args.rounds, args.goals, args.latency_goals, args.tolerance)

    return run_table_script(__file__, argv, None, table, out=args.out)


if __name__ == "__main__":
    sys.exit(main())
