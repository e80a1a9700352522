"""Draw K x S samples, keep the S that best satisfy the known distances: raw accuracy and cost against K = 1.

The script of :mod:`benchmarks.sampling.oversample_runs` (what is measured, and how).

Usage: ``python -m benchmarks.sampling.oversample [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 100]
[-s 32] [--oversample 1 2 4] [--threads 2] [--device cuda] [--graphs-per-pass G]
[--repeats 1] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import add_device_arg, positive_int, run_model_study
from benchmarks.sampling.oversample_runs import oversample_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt")
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10", "lbr_iiwa", "kr16_2"])
    ap.add_argument("-n", "--goals", type=positive_int, default=100, help="goals per robot")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples kept per goal")
    ap.add_argument("--oversample", type=positive_int, nargs="+", default=[1, 2, 4], help="values of K")
    add_device_arg(ap, "the model (with angle recovery and FK)")
    ap.add_argument(
        "--graphs-per-pass",
        type=positive_int,
        default=None,
        help="decoded graphs per network pass (default: ggik.ik.sampling.default_graphs_per_pass)",
    )
    ap.add_argument("--repeats", type=positive_int, default=1, help="timed calls per K (median)")
    return run_model_study(__file__, ap, argv, oversample_table)


if __name__ == "__main__":
    sys.exit(main())
