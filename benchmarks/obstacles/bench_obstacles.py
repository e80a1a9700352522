"""IK and paths among obstacles on the urdfs/ robots: the script of :mod:`benchmarks.obstacles.study` (what is
measured, and how).

Usage: ``python -m benchmarks.obstacles.bench_obstacles [--robots ...] [--scenes ...] [--goals 30] [--samples 32]
[--threads 2] [--out FILE] [--figures DIR]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from benchmarks.common.scripts import nonnegative_int, positive_float, positive_int, run_table_script
from benchmarks.obstacles.scenes import SCENES
from benchmarks.obstacles.study import ObstacleStudy, obstacle_tables
from ggik import GGIK
from ggik.evaluation.report import model_stamp

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10", "lbr_iiwa", "kr16_2"], help="shipped robots")
    ap.add_argument("--scenes", nargs="+", default=list(SCENES), help=f"of {', '.join(SCENES)}")
    ap.add_argument("--goals", type=positive_int, default=30, help="IK goals per robot and scene")
    ap.add_argument("--samples", type=positive_int, default=32, help="S: model samples or random starts per goal")
    ap.add_argument("--reference-goals", type=positive_int, default=10)
    ap.add_argument("--reference-starts", type=positive_int, default=512)
    ap.add_argument("--paths", type=nonnegative_int, default=10, help="paths per robot and scene (at most)")
    ap.add_argument("--waypoints", type=positive_int, default=30)
    ap.add_argument("--path-time-limit", type=positive_float, default=10.0, help="[s] per path")
    ap.add_argument("--ckpt", default=None, help="model file (default: the shipped model)")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the tables here (.md/.csv, and _paths.md/.csv)")
    ap.add_argument("--figures", default=None, help="write a PNG per robot and scene into this folder")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    solver = GGIK.load_or_pretrained(args.ckpt)
    study = ObstacleStudy(
        robots=args.robots, scenes=args.scenes, goals=args.goals, samples=args.samples,
        reference_goals=args.reference_goals, reference_starts=args.reference_starts, paths=args.paths,
        waypoints=args.waypoints, path_time_limit=args.path_time_limit, seed=args.seed,
        figures=None if args.figures is None else Path(args.figures),
    )  # fmt: skip
    ckpt = args.ckpt or "ggik/weights/ggik_default.pt"
    stamp = model_stamp(ckpt)
    return run_table_script(
        __file__, argv, args.seed, lambda command: obstacle_tables(study, solver, command, args.out, stamp),
        ckpt=ckpt, out=args.out,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
