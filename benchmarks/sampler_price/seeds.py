"""Model seeds against random seeds: LM from S model samples and from S random starts, at equal structure, in one run.

The script of :mod:`benchmarks.sampler_price.seeds_runs` (what is measured, and how).

Usage: ``python -m benchmarks.sampler_price.seeds [--ckpt MODEL.pt] [--more-ckpts MODEL.pt ...] [--families pose tight
axis shelf chain12 chain14 adapted] [--starts 4 32] [-n 100] [--repeats 3] [--adapted MODEL URDF] [--compile]
[--threads 2] [--out FILE]``. Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, run_model_study
from benchmarks.sampler_price.seeds_runs import FAMILIES, seeds_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt", help="the model (named in the table's stamp)")
    ap.add_argument("--more-ckpts", nargs="*", default=[], help="other model files, measured in the same run")
    ap.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    ap.add_argument("--starts", type=positive_int, nargs="+", default=[4, 32], help="values of S")
    ap.add_argument("-n", "--goals", type=positive_int, default=100, help="goals per problem set")
    ap.add_argument("--tight", type=positive_float, default=0.25, help="share of each joint range kept (tight), <= 1")
    ap.add_argument("--repeats", type=positive_int, default=3, help="timed calls (median)")
    ap.add_argument("--compile", action="store_true", help="each model also with its decoder compiled")
    ap.add_argument("--adapted", nargs=2, metavar=("MODEL", "URDF"), help="the family 'adapted': a model and its arm")
    return run_model_study(__file__, ap, argv, seeds_table)


if __name__ == "__main__":
    sys.exit(main())
