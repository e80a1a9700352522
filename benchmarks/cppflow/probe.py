"""Where path following breaks on CppFlow's problems, and whether dense candidates hold a branch through: the script
of :mod:`benchmarks.cppflow.probe_runs` (what is measured, and how).

Usage: ``python -m benchmarks.cppflow.probe --problems panda__flappy_bird [--starts 128] [--every 10]
[--collision-model cppflow] [--out DIR]``. Writes ``DIR/probe.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_table_script
from benchmarks.cppflow.options import parse_problem_study
from benchmarks.cppflow.probe_runs import probe_table
from ggik import GGIK

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--starts", type=positive_int, default=128, help="random starts per waypoint")
    ap.add_argument("--every", type=positive_int, default=10, help="tracks from every k-th waypoint")
    ap.add_argument("--collision-model", choices=("ggik", "cppflow"), default="cppflow", help="the model kept clear")
    args, names, out = parse_problem_study(ap, argv, "probe", "panda__flappy_bird")

    return run_table_script(
        __file__, argv, args.seed, lambda _: probe_table(args, GGIK.load(args.ckpt), names), None, out
    )


if __name__ == "__main__":
    sys.exit(main())
