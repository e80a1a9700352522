"""Cheaper samplers at equal accuracy: raw success and time per goal of each model file, eager and compiled.

The script of :mod:`benchmarks.sampler_price.candidates_runs` (what is measured, and how).

Usage: ``python -m benchmarks.sampler_price.candidates [--ckpt MODEL.pt] [--more-ckpts MODEL.pt ...] [--robots ...]
[--kinds pose position+axis position] [-n 200] [-s 32] [--repeats 3] [--jacobi] [--threads 2] [--out FILE]``. Run it
alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.robots import default_robots
from benchmarks.common.scripts import positive_int, run_model_study
from benchmarks.sampler_price.candidates_runs import candidates_table
from ggik.graph.goal_kinds import GOAL_KINDS

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt", help="the model (named in the table's stamp)")
    ap.add_argument("--more-ckpts", nargs="*", default=[], help="other model files, measured in the same run")
    ap.add_argument("--robots", nargs="+", default=default_robots())
    ap.add_argument("--kinds", nargs="+", default=list(GOAL_KINDS), choices=GOAL_KINDS)
    ap.add_argument("-n", "--goals", type=positive_int, default=200, help="goals per robot and goal kind")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal")
    ap.add_argument("--repeats", type=positive_int, default=3, help="timed calls per candidate (median)")
    ap.add_argument("--jacobi", action="store_true", help="also compiled with block-Jacobi Gauss-Newton moves")
    return run_model_study(__file__, ap, argv, candidates_table)


if __name__ == "__main__":
    sys.exit(main())
