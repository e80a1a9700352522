"""Training speed of the GGIK model on this machine: examples/s per configuration and speed-up.

Full training steps on one fixed batch (forward + backward + AdamW) for the model sizes ``default`` and
``paper``, the EGNN layer as kept against a dense concatenated form and a PyG ``MessagePassing`` form with the
same math (:mod:`benchmarks.training_speed.layer_variants`), bf16 autocast on and off, and 1 and 2 CPU threads; the
method is :mod:`benchmarks.training_speed.training_speed`.

Usage: ``python -m benchmarks.training_speed.bench_train [--steps 5] [--warmup 2] [--batch 128]
[--out benchmarks/training_speed/results/bench_train.md]``.
Prints a Markdown table and writes it with the machine description. Other processes running at the
same time slow the numbers down: the output records the load average.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import nonnegative_int, positive_int, script_command
from benchmarks.training_speed.layer_variants import VARIANTS
from benchmarks.training_speed.training_speed import SIZES, measure_training_speed
from ggik.fileio import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=positive_int, default=5, help="timed training steps per configuration")
    ap.add_argument("--warmup", type=nonnegative_int, default=2, help="untimed steps before them")
    ap.add_argument("--batch", type=positive_int, default=128, help="examples per step")
    ap.add_argument(
        "--threads", type=positive_int, nargs="+", default=[1, 2], help="torch CPU thread counts to measure"
    )
    ap.add_argument("--sizes", nargs="+", default=["default", "paper"], choices=list(SIZES))
    ap.add_argument("--variants", nargs="+", default=["split", "concat", "pyg"], choices=list(VARIANTS))
    ap.add_argument("--out", default="benchmarks/training_speed/results/bench_train.md")
    args = ap.parse_args(argv)
    speed = measure_training_speed(
        args.sizes,
        args.variants,
        args.threads,
        args.batch,
        args.steps,
        args.warmup,
        log=lambda line: print(line, flush=True),
    )
    out = atomic_write_text(args.out, speed.markdown(script_command(__file__, argv)))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
