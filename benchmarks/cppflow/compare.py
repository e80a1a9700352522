"""CppFlow's published per-problem results beside ours: the table of ``benchmarks/cppflow/README.md``.

``python -m benchmarks.cppflow.compare --out benchmarks/cppflow/results/compare.md`` reads the two committed runs of
:mod:`benchmarks.cppflow.run` (the solver kept clear of CppFlow's capsules, ``results/cppflow.csv``, and of ggik's own
collision model, ``results/ggik_model/cppflow.csv``) and writes one row per problem with CppFlow's figures from its
paper (:data:`PUBLISHED`). The two sides ran on different machines: CppFlow on an Intel i9 with an RTX 4090, ours on
the CPU the runs' tables name.
"""

from __future__ import annotations

import argparse
import csv
import math
from pathlib import Path

from benchmarks.cppflow.problems import PROBLEMS
from ggik.fileio import atomic_write_text

HERE = Path(__file__).resolve().parent
RUNS = {
    "CppFlow's capsules": HERE / "results" / "cppflow.csv",
    "ggik's collision model": HERE / "results" / "ggik_model" / "cppflow.csv",
}

#: Table I of Morgan et al., "CppFlow: Generative Inverse Kinematics for Efficient and Robust Cartesian Path
#: Planning", ICRA 2024 (arXiv 2309.09102), CppFlow's rows: problem (the repository's file name) -> (time to a valid
#: solution [s], success within 2.5 s [%], success within 50 s [%]); 10 runs per problem, RTX 4090. The paper's
#: "rotation" problems are the files ``rot_yz2``, its Fetch.Arm ``fetch_arm`` and Fetch.Full ``fetch``.
PUBLISHED: dict[str, tuple[float, float, float]] = {
    "fetch_arm__circle": (1.211, 90.0, 100.0),
    "fetch_arm__hello": (1.126, 100.0, 100.0),
    "fetch_arm__rot_yz2": (0.535, 100.0, 100.0),
    "fetch_arm__s": (0.788, 100.0, 100.0),
    "fetch_arm__square": (0.747, 100.0, 100.0),
    "fetch__circle": (1.02, 100.0, 100.0),
    "fetch__hello": (1.243, 70.0, 100.0),
    "fetch__rot_yz2": (0.605, 100.0, 100.0),
    "fetch__s": (0.785, 100.0, 100.0),
    "fetch__square": (0.751, 100.0, 100.0),
    "panda__1cube": (0.434, 100.0, 100.0),
    "panda__2cubes": (0.484, 100.0, 100.0),
    "panda__flappy_bird": (0.63, 100.0, 100.0),
}
VALID = "valid runs (CppFlow's capsules)"
MEDIAN = "median time to valid over valid runs [s]"


def read_run(path: Path) -> dict[str, dict[str, str]]:
    """The rows of one run's CSV by problem; FileNotFoundError naming the command that writes it."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no run here; write it with python -m benchmarks.cppflow.run (README)")
    with path.open(newline="", encoding="utf-8") as f:
        return {row["problem"]: row for row in csv.DictReader(f)}


def _seconds(text: str) -> str:
    value = float(text) if text not in ("", "n/a") else math.nan
    return "n/a" if math.isnan(value) else f"{value:.2f}"


def _count(text: str) -> tuple[int, int]:
    """'7/10' -> (7, 10)."""
    valid, runs = text.split("/")
    return int(valid), int(runs)


def compare_table(runs: dict[str, dict[str, dict[str, str]]]) -> str:
    """The Markdown table: per problem CppFlow's published figures, then per run of ``runs`` (name -> rows by problem)
    the runs valid by CppFlow's rules and their median time to valid [s]; a last row of totals."""
    head = ["problem", "CppFlow (paper): time to valid [s]", "CppFlow: success within 2.5 s / 50 s"]
    for name in runs:
        head += [f"ggik kept clear of {name}: valid runs by CppFlow's rules", "median time to valid [s]"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    totals = {name: [0, 0] for name in runs}
    for problem in PROBLEMS:
        time, within, eventually = PUBLISHED[problem]
        cells = [problem, f"{time:.3f}", f"{within:.0f} / {eventually:.0f} %"]
        for name, rows in runs.items():
            row = rows[problem]
            valid, count = _count(row[VALID])
            totals[name][0] += valid
            totals[name][1] += count
            cells += [row[VALID], _seconds(row[MEDIAN])]
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["all", "", ""]
    for valid, count in totals.values():
        cells += [f"{valid}/{count}", ""]
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="the Markdown table to write")
    args = parser.parse_args(argv)
    runs = {name: read_run(path) for name, path in RUNS.items()}
    header = (
        "# CppFlow's published results beside ggik's runs\n\n"
        "Command: `python -m benchmarks.cppflow.compare --out " + args.out + "`\n"
        "CppFlow: Table I of its paper (ICRA 2024, arXiv 2309.09102), 10 runs per problem, Intel i9 + RTX 4090.\n"
        "ggik: " + ", ".join(f"`{p.relative_to(HERE.parents[1])}`" for p in RUNS.values()) + " (each names its model, "
        "code and machine).\n\n"
    )
    text = header + compare_table(runs)
    atomic_write_text(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
