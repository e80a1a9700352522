"""The whole solve on one device: ``GGIK(device=...).solve`` for B goals at once, per strategy, as ms per goal and
strict solutions per second; and the model's sampling alone (32 samples per goal). On a GPU everything stays there
(sampling, angle recovery, LM, ranking) and the result comes back at the end; on the CPU LM runs compiled.

Usage: ``python -m benchmarks.solvers.device_solve --device cuda --robots panda ur10 --goals 1 100 10000 [--compile]
--out FILE`` (the CUDA rows come from lent GPU time: ``train/gpu/device_checks.sh``). Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_model_study
from benchmarks.solvers.device_study import device_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    ap.add_argument("--ckpt", default=None, help="model file (default: the shipped model)")
    ap.add_argument("--robots", nargs="+", default=["panda", "ur10"], help="shipped names or randomN")
    ap.add_argument("--goals", nargs="+", type=positive_int, default=[1, 100, 10000], help="B, goals per call")
    ap.add_argument("--repeats", type=positive_int, default=3)
    ap.add_argument("--compile", action="store_true", help="sample through torch.compile (GGIK compile_sampler)")
    return run_model_study(__file__, ap, argv, device_table)


if __name__ == "__main__":
    sys.exit(main())
