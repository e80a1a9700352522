"""Training curves of one or more runs: loss terms and validation success against examples seen.

Usage: ``python eval/plot_training.py RUN_DIR [RUN_DIR ...] --out eval/results/curves.png``
Reads ``RUN_DIR/metrics.jsonl`` (written by ``ggik train``); the reading, the power-law fit and the figure are
:mod:`ggik.evaluation.training_curves`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ggik.evaluation.training_curves import plot_training_curves, power_law_lines, throughput_lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument(
        "--fit-after",
        type=int,
        metavar="EXAMPLES",
        help="also print a power-law fit of the mean validation best-of-S error vs examples, from this many on",
    )
    ap.add_argument("--throughput", action="store_true", help="also print the examples/s of each run per device")
    args = ap.parse_args(argv)
    try:
        return _run(args)
    except (FileNotFoundError, ValueError) as exc:  # a bad run folder: one line, exit 2, as ggik's commands
        print(f"plot_training: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    if args.throughput:
        for run in args.runs:
            print("\n".join(throughput_lines(run)))
    if args.fit_after is not None:
        for run in map(Path, args.runs):
            print("\n".join(power_law_lines(run, args.fit_after)))
    plot_training_curves(args.runs, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
