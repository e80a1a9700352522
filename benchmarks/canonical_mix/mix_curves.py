"""Fine-tuning curves on canonical graphs, with and without random robots: raw success per family of validation robots
against the examples of the fine-tune (the study: :mod:`benchmarks.canonical_mix.curves`).

Usage: ``python -m benchmarks.canonical_mix.mix_curves --config train/configs/canonical_any.yaml --graph canonical
--ckpt without=ggik/weights/ggik_default.pt --ckpt without=train/checkpoints/v10/last.pt --metrics
with=runs/canonical_any/metrics.jsonl [--out FILE] [--curves FILE.png]``.
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.canonical_mix.curves import labelled, study_table
from benchmarks.common.scripts import run_table_script

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--config", required=True, help="training config whose val section is the validation set")
    ap.add_argument("--graph", default="canonical", help="the graphs the models are read on")
    ap.add_argument("--ckpt", type=labelled, action="append", default=[], help="LABEL=PATH of a checkpoint")
    ap.add_argument("--metrics", type=labelled, action="append", default=[], help="LABEL=PATH of a metrics.jsonl")
    ap.add_argument(
        "--after",
        type=labelled,
        action="append",
        default=[],
        help="LABEL=EXAMPLES: that run started from a model fine-tuned on this many examples (its x axis moves by it)",
    )
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    ap.add_argument("--curves", default=None, help="plot the curves to this PNG")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    return run_table_script(__file__, argv, None, lambda _: study_table(args), out=args.out)


if __name__ == "__main__":
    sys.exit(main())
