"""CppFlow's benchmark problems solved by ggik's path following, with their obstacles, judged by CppFlow's rules: the
script of :mod:`benchmarks.cppflow.run_runs` (what is measured, and how).

Usage: ``python -m benchmarks.cppflow.run --problems all --out DIR [--reruns 10] [--time-limit 10]``; ``--problems``
takes ``all``, ``obstacles`` or problem names (``data/problems/``). Writes ``DIR/cppflow.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, run_table_script
from benchmarks.cppflow.options import parse_problem_study
from benchmarks.cppflow.run_runs import cppflow_table
from ggik import GGIK

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=positive_float, default=10.0, help="[s] per problem (PathConfig.time_limit)")
    ap.add_argument("--max-rounds", type=positive_int, default=None, help="PathConfig.max_rounds (default its own)")
    ap.add_argument("--starts", type=positive_int, default=None, help="PathConfig.starts (default its own)")
    ap.add_argument("--samples", type=int, default=None, help="PathConfig.samples (default its own)")
    ap.add_argument("--reruns", type=positive_int, default=1, help="runs per problem, each from its own seed")
    ap.add_argument(
        "--collision-model",
        choices=("cppflow", "ggik"),
        default="cppflow",
        help="what the solver keeps clear: CppFlow's capsules (its benchmark's geometry) or ggik's own model",
    )
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args, names, out = parse_problem_study(ap, argv, "cppflow", "all")

    def table(command: str):
        return cppflow_table(args, GGIK.load(args.ckpt), names)

    return run_table_script(__file__, argv, args.seed, table, args.ckpt, out)


if __name__ == "__main__":
    sys.exit(main())
