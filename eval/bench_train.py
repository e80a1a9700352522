"""Training speed of the GGIK model on this machine: examples/s per configuration and speed-up.

Full training steps on one fixed batch (forward + backward + AdamW) for the model sizes ``default`` and
``paper``, the EGNN layer as kept against a dense concatenated form and a PyG ``MessagePassing`` form with the
same math (:mod:`ggik.evaluation.layer_variants`), bf16 autocast on and off, and 1 and 2 CPU threads; the
method is :mod:`ggik.evaluation.training_speed`.

Usage: ``python eval/bench_train.py [--steps 5] [--warmup 2] [--batch 128] [--out eval/results/bench_train.md]``.
Prints a Markdown table and writes it with the machine description. Other processes running at the
same time slow the numbers down: the output records the load average.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ggik.evaluation.layer_variants import VARIANTS
from ggik.evaluation.training_speed import SIZES, measure_training_speed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--threads", type=int, nargs="*", default=[1, 2])
    ap.add_argument("--sizes", nargs="*", default=["default", "paper"], choices=list(SIZES))
    ap.add_argument("--variants", nargs="*", default=["split", "concat", "pyg"], choices=list(VARIANTS))
    ap.add_argument("--out", default="eval/results/bench_train.md")
    args = ap.parse_args(argv)
    speed = measure_training_speed(args.sizes, args.variants, args.threads, args.batch, args.steps, args.warmup,
                                   log=lambda line: print(line, flush=True))
    command = f"python eval/bench_train.py {' '.join(argv if argv is not None else sys.argv[1:])}"
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(speed.markdown(command))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
