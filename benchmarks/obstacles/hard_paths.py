"""Hard obstacle paths: GGIK candidates, random candidates and sequential LM on the same paths, one table.

The paths: :mod:`benchmarks.obstacles.hard_group` (scenes around a witness with the first branches blocked, and
tool-sized slots without a witness, kept apart).

Usage: ``python -m benchmarks.obstacles.hard_paths --threads 2 --out benchmarks/obstacles/results/hard_paths``.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import nonnegative_int, positive_int, run_model_study
from benchmarks.obstacles.hard_group import HARD_SCENES, NO_WITNESS_SCENES, hard_path_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10", "lbr_iiwa", "kr16_2"])
    scenes = HARD_SCENES + NO_WITNESS_SCENES
    ap.add_argument("--scenes", nargs="+", default=list(scenes), choices=scenes)
    ap.add_argument("--paths", type=positive_int, default=4, help="paths per robot and scene (at most)")
    ap.add_argument("--waypoints", type=positive_int, default=60)
    ap.add_argument("--time-limit", type=float, default=4.0, help="[s] per path and method")
    ap.add_argument(
        "--block",
        type=nonnegative_int,
        default=2,
        help="obstacle-free trajectories off the witness's branch to block per path (0: none)",
    )
    ap.add_argument("--ckpt", default=None, help="model file (default: the shipped model)")
    return run_model_study(__file__, ap, argv, hard_path_table)


if __name__ == "__main__":
    sys.exit(main())
