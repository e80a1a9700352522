"""Runs of :mod:`benchmarks.unseen_seeds.seed_quality` side by side, per arm: per-sample LM success over the sampling
seeds (mean, min-max), and the goals each strategy left unsolved, summed over the seeds.

Command (from the repository root; reads the runs' CSVs, computes nothing else)::

    python -m benchmarks.unseen_seeds.summary before=benchmarks/unseen_seeds/results/before.csv \
        after=benchmarks/unseen_seeds/results/after.csv head=benchmarks/unseen_seeds/results/head.csv \
        --out benchmarks/unseen_seeds/results/summary
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from benchmarks.common.scripts import BenchmarkError, run_table_script
from benchmarks.unseen_seeds.seed_quality import SHIPPED
from ggik.evaluation.report import Table, read_csv

__all__ = ["summary", "main"]

PER_SAMPLE = "samples + LM: samples strict [%]"
#: the strategies whose unsolved goals are counted: (column of goals solved, name in the summary)
SOLVED = [
    ("samples + LM: goals solved", "samples + LM"),
    ("model-first (ggik solve default): goals solved", "model-first"),
    ("random + LM: goals solved", "random + LM"),
]


def _run(label_path: str) -> tuple[str, Path]:
    label, sep, path = label_path.partition("=")
    if not sep or not label or not Path(path).is_file():
        raise BenchmarkError(f"a run is LABEL=CSV with an existing CSV file, got {label_path!r}")
    return label, Path(path)


def summary(runs: list[tuple[str, Path]]) -> Table:
    """Per arm (in the first run's order) and run: per-sample LM success over the seeds, mean (min-max) [%], the
    seeds, and for each strategy of :data:`SOLVED` the goals left unsolved / goals tried, summed over the seeds."""
    tables = {label: read_csv(path) for label, path in runs}
    arms = list(dict.fromkeys(r["arm"] for r in next(iter(tables.values()))))
    columns = ["arm", "run", "seeds", "samples + LM: samples strict, mean (min-max) [%]"]
    columns += [f"{name}: goals unsolved / tried" for _, name in SOLVED]
    table = Table("Seeds on unseen arms, runs side by side", columns)
    for arm in arms:
        for label, rows in tables.items():
            mine = [r for r in rows if r["arm"] == arm]
            if not mine:
                raise BenchmarkError(f"run {label} has no rows of arm {arm}")
            shares = [float(r[PER_SAMPLE]) for r in mine]
            tried = sum(int(r["goals"]) for r in mine)
            unsolved = [f"{tried - sum(int(r[col]) for r in mine)} / {tried}" for col, _ in SOLVED]
            mean = f"{sum(shares) / len(shares):.2f} ({min(shares):.2f}-{max(shares):.2f})"
            table.add(arm, label, len(mine), mean, *unsolved)
    table.notes += [
        f"{label}: {path} (sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}; its code: the Code line of "
        f"{path.with_suffix('.md').name})"
        for label, path in runs
    ]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", help="LABEL=CSV of a seed_quality run")
    ap.add_argument("--ckpt", default=SHIPPED, help="the model the runs measured (their Model line)")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    return run_table_script(__file__, argv, None, lambda _: summary([_run(r) for r in args.runs]), args.ckpt, args.out)


if __name__ == "__main__":
    sys.exit(main())
