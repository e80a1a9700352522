"""The summary tables of ``benchmarks/obstacles/README.md``: ranges over the five scenes of the study's CSVs.

``python -m benchmarks.obstacles.summary [--results DIR]`` reads ``DIR/obstacles.csv`` and ``DIR/obstacles_paths.csv``
(written by :mod:`benchmarks.obstacles.bench_obstacles`) and prints, per robot and IK method, the range over the scenes
of solved goals, distinct valid solutions per goal and ms per goal; per path method the valid paths of all robots and
scenes, the range of the mean seconds per path and the slowest path with its robot and scene.
"""

from __future__ import annotations

import argparse
import csv
from collections import defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _read(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no results here; write them with python -m benchmarks.obstacles.bench_obstacles"
        )
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _number(value: float, digits: int) -> str:
    """``value`` with ``digits`` after the point, trailing zeros after it dropped."""
    text = f"{value:.{digits}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _span(values: list[float], digits: int = 1) -> str:
    """'lo-hi' (one value when they are equal), ``digits`` after the point, trailing zeros dropped."""
    lo, hi = (_number(v, digits) for v in (min(values), max(values)))
    return lo if lo == hi else f"{lo}-{hi}"


def ik_summary(rows: list[dict[str, str]]) -> str:
    """Per robot and method (the reference left out): ranges over the scenes."""
    groups: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        if not row["method"].startswith("reference"):
            groups[(row["robot"], row["method"])].append(row)
    lines = ["| robot | method | solved [%] | distinct valid per goal | ms per goal |", "|---|---|---|---|---|"]
    for (robot, method), group in groups.items():
        solved = _span([float(r["solved [%]"]) for r in group])
        distinct = _span([float(r["distinct valid per goal"]) for r in group])
        ms = _span([float(r["ms per goal"]) for r in group])
        lines.append(f"| {robot} | {method} | {solved} | {distinct} | {ms} |")
    reference = [r for r in rows if r["method"].startswith("reference")]
    solved = sum(float(r["solved [%]"]) * int(r["goals"]) / 100 for r in reference)
    lines.append(
        f"\nReference (512 random starts with clearance): {solved:.0f} of {sum(int(r['goals']) for r in reference)} "
        f"goals solved over {len(reference)} robot-scene pairs."
    )
    return "\n".join(lines)


def path_summary(rows: list[dict[str, str]]) -> str:
    """Per method: valid paths of all robots and scenes, range of the mean s per path, the slowest path."""
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        groups[row["method"]].append(row)
    lines = [
        "| method | valid | mean s per path (range over robot and scene) | slowest path [s] |",
        "|---|---|---|---|",
    ]
    for method, group in groups.items():
        paths = sum(int(r["paths"]) for r in group)
        valid = round(sum(float(r["valid [%]"]) * int(r["paths"]) / 100 for r in group))
        slowest = max(group, key=lambda r: float(r["max s"]))
        per_row = _span([float(r["valid [%]"]) for r in group], 0)
        note = "" if valid == paths else f" ({per_row} % per row)"
        lines.append(
            f"| {method} | {valid} / {paths}{note} | {_span([float(r['mean s per path']) for r in group], 2)} | "
            f"{float(slowest['max s']):.2f} ({slowest['robot']}, {slowest['scene']}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS), help="the folder of obstacles.csv and obstacles_paths.csv")
    args = parser.parse_args(argv)
    folder = Path(args.results)
    print(ik_summary(_read(folder / "obstacles.csv")))
    print()
    print(path_summary(_read(folder / "obstacles_paths.csv")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
