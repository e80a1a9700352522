"""Where path following breaks on CppFlow's problems, and whether dense candidates hold a branch through: the script
of :mod:`benchmarks.cppflow.probe_runs` (what is measured, and how).

Usage: ``python -m benchmarks.cppflow.probe --problems panda__flappy_bird [--starts 128] [--every 10]
[--collision-model cppflow] [--out DIR]``. Writes ``DIR/probe.md`` and ``.csv``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from benchmarks.common.scripts import BenchmarkError, positive_int, run_table_script
from benchmarks.cppflow.probe_runs import probe_table
from benchmarks.cppflow.problems import PROBLEMS
from ggik import GGIK

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--problems", nargs="+", default=["panda__flappy_bird"], help="problem names")
    ap.add_argument("--starts", type=positive_int, default=128, help="random starts per waypoint")
    ap.add_argument("--every", type=positive_int, default=10, help="tracks from every k-th waypoint")
    ap.add_argument("--collision-model", choices=("ggik", "cppflow"), default="cppflow", help="the model kept clear")
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt", help="the model file (its collision models)")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="a folder: DIR/probe.md and .csv")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    unknown = [n for n in args.problems if n not in PROBLEMS]
    if unknown:
        raise SystemExit(str(BenchmarkError(f"unknown problems {unknown}; problems: {', '.join(PROBLEMS)}")))
    out = None
    if args.out is not None:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        out = Path(args.out) / "probe"
    return run_table_script(
        __file__, argv, args.seed, lambda _: probe_table(args, GGIK.load(args.ckpt), args.problems), None, out
    )


if __name__ == "__main__":
    sys.exit(main())
