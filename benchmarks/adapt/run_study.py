"""``python -m benchmarks.adapt.run_study``: the adaptation study (benchmarks/adapt/study.py), one call."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.adapt.study import ARMS, RECIPES, StudyOptions, report, run_study
from benchmarks.common.scripts import positive_float, positive_int


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--arms", nargs="+", default=list(ARMS), choices=list(ARMS))
    p.add_argument("--recipes", nargs="+", default=["default"], choices=list(RECIPES))
    p.add_argument("--minutes", type=positive_float, default=15.0, help="budget of each run [min]")
    p.add_argument("--val-every-s", type=positive_float, default=60.0, help="seconds between measurements")
    p.add_argument("--ckpt", help="the base model (default: the shipped one)")
    p.add_argument("--threads", type=positive_int, default=2)
    p.add_argument("--out", type=Path, default=Path("benchmarks/adapt/results/study"))
    p.add_argument("--report", action="store_true", help="only write the report of OUT/results.json again")
    a = p.parse_args()
    if a.report:
        report(a.out)
        return
    run_study(StudyOptions(a.arms, a.recipes, a.minutes, a.out, a.threads, a.val_every_s, a.ckpt))


if __name__ == "__main__":
    main()
