"""Where a sample's time goes: wall time and matrix FLOPs per part of sampling, and the floor they allow.

The script of :mod:`benchmarks.sampler_price.parts_runs` (what is measured, and how).

Usage: ``python -m benchmarks.sampler_price.parts [--ckpt CKPT] [--robots panda ur10] [-n 64] [-s 32] [--threads 2]
[--graphs-per-pass G] [--repeats 5] [--compile] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_model_study
from benchmarks.sampler_price.parts_runs import parts_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt")
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10"])
    ap.add_argument("-n", "--goals", type=positive_int, default=64, help="goals per robot")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal")
    ap.add_argument("--graphs-per-pass", type=positive_int, default=None, help="default: chosen for the CPU")
    ap.add_argument("--repeats", type=positive_int, default=5, help="timed calls (the median's parts are shown)")
    ap.add_argument("--compile", action="store_true", help="decode through torch.compile (GGIKModel.compile_decoder)")
    return run_model_study(__file__, ap, argv, parts_table)


if __name__ == "__main__":
    sys.exit(main())
