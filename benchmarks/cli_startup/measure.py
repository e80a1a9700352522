"""Start-up of the ``ggik`` command line: wall time of ``ggik --help`` and of the README's first solve, as a user's
shell sees it (a fresh process each run, the console script of this environment).

    python -m benchmarks.cli_startup.measure --runs 10 --out benchmarks/cli_startup/results/startup
    git worktree add /tmp/ggik-before 19d6cfb       # the code before, measured in the same run:
    python -m benchmarks.cli_startup.measure --runs 10 --before /tmp/ggik-before --out ...

"this" is the code of the checkout that holds this script (the code its table's header names): run it from a clean
checkout of a commit. Run it alone on the machine. Targets (issue: the command line as a user meets it): ``ggik --help``
under 0.5 s, ``ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0`` under 1.5 s on 2 cores.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.cli_startup.study import SHIPPED, startup_table
from benchmarks.common.scripts import positive_int, run_table_script

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=10, help="timed runs per command (default 10)")
    ap.add_argument("--out", help="also write the table here (.md/.csv)")
    ap.add_argument(
        "--before",
        metavar="SRC",
        action="append",
        help="also time the ggik of this checkout (e.g. a git worktree), the runs alternating (repeat for more)",
    )
    ap.add_argument(
        "--same-request",
        action="store_true",
        help="ask the codes before what this code is asked (default: what code before 19d6cfb needed for it)",
    )
    args = ap.parse_args(argv)
    return run_table_script(__file__, argv, None, lambda command: startup_table(args), SHIPPED, args.out)


if __name__ == "__main__":
    sys.exit(main())
