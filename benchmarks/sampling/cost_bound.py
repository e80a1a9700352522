"""Sampling's work per goal against this machine's arithmetic rate: the lower bound on sampling time.

The script of :mod:`benchmarks.sampling.cost_bound_runs` (what is measured, and how).

Usage: ``python -m benchmarks.sampling.cost_bound [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 200] [-s 32]
[--repeats 3] [--threads 2] [--target-ms 5] [--compile] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, run_model_study
from benchmarks.sampling.cost_bound_runs import cost_bound_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt")
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10", "lbr_iiwa", "kr16_2"])
    ap.add_argument("-n", "--goals", type=positive_int, default=200, help="goals per call")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal")
    ap.add_argument("--repeats", type=positive_int, default=3, help="timed calls per robot (median)")
    ap.add_argument("--target-ms", type=positive_float, default=5.0, help="the sampling-time target per goal [ms]")
    ap.add_argument("--compile", action="store_true", help="also measure with the decoder layers compiled")
    return run_model_study(__file__, ap, argv, cost_bound_table)


if __name__ == "__main__":
    sys.exit(main())
