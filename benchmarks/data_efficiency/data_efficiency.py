"""Data efficiency on a CPU: validation error against examples seen, per training recipe, with fitted power laws.

The study (what it trains, validates and fits) is :mod:`benchmarks.data_efficiency.study`. Usage: ``python -m
benchmarks.data_efficiency.data_efficiency --protocol panda --variants b128-lr1e-3 b512-lr1e-3 --examples 122880
--every 20480 [--runs runs/data_efficiency] [--measure-only] [--out FILE] [--curves FILE.png]``. Run it alone on the
machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_table_script
from benchmarks.data_efficiency.study import PROTOCOLS, VARIANTS, study_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--protocol", default="panda", choices=list(PROTOCOLS))
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS)[:3], choices=list(VARIANTS))
    ap.add_argument("--examples", type=positive_int, default=122_880, help="examples per run")
    ap.add_argument("--every", type=positive_int, default=20_480, help="validate every so many examples")
    ap.add_argument("--runs", default="runs/data_efficiency", help="folder of the runs")
    ap.add_argument("--measure-only", action="store_true", help="tabulate the runs as they are")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    ap.add_argument("--curves", default=None, help="also plot the runs' training curves to this PNG")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)

    return run_table_script(__file__, argv, None, lambda _command: study_table(args), out=args.out)


if __name__ == "__main__":
    sys.exit(main())
