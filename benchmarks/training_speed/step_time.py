"""Training throughput of the real trainer, data included: examples/s and the share of a step spent making data.

The script of :mod:`benchmarks.training_speed.step_timing` (what is measured, and how).

Usage: ``python -m benchmarks.training_speed.step_time [--device cuda] [--batch 512] [--steps 30] [--warmup 10]
[--samplers stacked per-robot] [--compile eager reduce-overhead] [--micro-batches 0 64] [--out FILE]``.
Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.common.scripts import add_device_arg, nonnegative_int, positive_int, run_table_script
from benchmarks.training_speed.step_timing import step_time_table
from ggik.data import SAMPLERS
from ggik.training.compile_modes import COMPILE_MODES

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_device_arg(ap, "training")
    ap.add_argument("--batch", type=positive_int, default=512, help="examples per step")
    ap.add_argument("--steps", type=positive_int, default=30, help="timed steps per configuration")
    ap.add_argument("--warmup", type=nonnegative_int, default=10, help="untimed steps before them (compilation)")
    ap.add_argument(
        "--samplers", nargs="+", default=["stacked", "per-robot"], choices=[s for s in SAMPLERS if s != "auto"]
    )
    ap.add_argument("--compile", nargs="+", default=["eager"], choices=list(COMPILE_MODES), help="torch.compile modes")
    ap.add_argument(
        "--micro-batches", nargs="+", type=nonnegative_int, default=[0], help="cpu_micro_batch values (0: one pass)"
    )
    ap.add_argument("--bf16", choices=["on", "off"], default="on", help="bf16 autocast (TrainConfig.bf16)")
    ap.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    return run_table_script(__file__, argv, None, lambda _: step_time_table(args), out=args.out)


if __name__ == "__main__":
    sys.exit(main())
