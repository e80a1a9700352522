"""Summary of the generalisation study (``bash benchmarks/generalisation_study/table4.sh``): tables and figures from
its result files.

Usage: ``python -m benchmarks.generalisation_study.generalisation_summary [--runs runs/table4]
[--results benchmarks/generalisation_study/results] [--left-out lbr_iiwa]``

Reads, for each model M of the study, ``RESULTS/M/generalisation.csv`` (``ggik eval generalisation``) and the
training budget of ``RUNS/M/last.pt``; for each fine-tuning size N, ``RESULTS/finetune_N/accuracy.csv``
(``ggik eval accuracy`` on the left-out robot) and ``RUNS/finetune_N/last.pt`` (N = 0: the leave-one-out model
itself). Writes ``RESULTS/README.md`` (printed too), ``RESULTS/distance.png`` and ``RESULTS/finetune.png``
(:mod:`benchmarks.generalisation_study.generalisation_study`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.common.scripts import script_command
from benchmarks.generalisation_study.generalisation_study import MODELS, StudyFilesError, summarise_study


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--runs", type=Path, default=Path("runs/table4"), help="the study's run folders (RUNS/MODEL/last.pt)"
    )
    ap.add_argument(
        "--results",
        type=Path,
        default=Path("benchmarks/generalisation_study/results"),
        help="the study's result folders (RESULTS/MODEL/generalisation.csv)",
    )
    ap.add_argument("--left-out", default="lbr_iiwa", help="the robot the leave-one-out models did not see")
    ap.add_argument("--models", nargs="*", default=list(MODELS), choices=list(MODELS))
    args = ap.parse_args(argv)
    command = script_command(
        __file__, ["--runs", str(args.runs), "--results", str(args.results), "--left-out", args.left_out]
    )
    try:
        text = summarise_study(args.runs, args.results, args.left_out, args.models, command)
    except (StudyFilesError, FileNotFoundError) as exc:
        raise SystemExit(
            f"generalisation_summary: {exc} (run benchmarks/generalisation_study/table4.sh first, "
            "or point --runs at its run folders)"
        ) from None
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
