"""Summary of the generalisation study (``bash eval/table4.sh``): tables and figures from its result files.

Usage: ``python eval/generalisation_summary.py [--runs runs/table4] [--results eval/results/table4] [--left-out lbr_iiwa]``

Reads, for each model M of the study, ``RESULTS/M/generalisation.csv`` (``ggik eval generalisation``) and the
training budget of ``RUNS/M/last.pt``; for each fine-tuning size N, ``RESULTS/finetune_N/accuracy.csv``
(``ggik eval accuracy`` on the left-out robot) and ``RUNS/finetune_N/last.pt`` (N = 0: the leave-one-out model
itself). Writes ``RESULTS/README.md`` (printed too), ``RESULTS/distance.png`` and ``RESULTS/finetune.png``
(:mod:`ggik.evaluation.generalisation_study`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ggik.evaluation.generalisation_study import MODELS, StudyFilesError, summarise_study


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=Path, default=Path("runs/table4"))
    ap.add_argument("--results", type=Path, default=Path("eval/results/table4"))
    ap.add_argument("--left-out", default="lbr_iiwa")
    ap.add_argument("--models", nargs="*", default=list(MODELS))
    args = ap.parse_args(argv)
    command = (f"python eval/generalisation_summary.py --runs {args.runs} --results {args.results} "
               f"--left-out {args.left_out}")
    try:
        text = summarise_study(args.runs, args.results, args.left_out, args.models, command)
    except (StudyFilesError, FileNotFoundError) as exc:
        raise SystemExit(f"generalisation_summary: {exc} (run eval/table4.sh first, or point --runs at its run folders)") from None
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
