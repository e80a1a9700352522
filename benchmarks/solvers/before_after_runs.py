"""The fast-IK tables of two versions of the code in one run: a change that must not move speed or results.

The code at ``--before`` (a git ref, checked out into a temporary worktree) and the working tree run the same
commands in turn, ``--rounds`` times, alternating which goes first, each command its own process (so neither pays
the other's imports or compiled kernels; each tree's numba kernel is compiled before the first timed round):

- ``bench_solvers`` (LM rows): one solution per goal in a batch (the method "LM (random starts, first solution)",
  ms per goal) and 32 starts per goal in a batch ("LM (random starts)": distinct strict solutions per second =
  distinct strict per goal / wall per goal);
- ``latency``: one goal per call (``GGIK.solve``, 16 random starts, first solution, LM compiled), median ms.

Reported per row: the median over rounds of each tree, after / before, and the verdict: within ``--tolerance``, or
faster or slower; strict success of each row, which must be equal. Run it alone on the machine.
"""

from __future__ import annotations

import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.common.scripts import REPO, BenchmarkError
from ggik.evaluation.report import Table

__all__ = ["Measure", "before_after_table", "run_tree_commands"]

#: the ``bench_solvers`` methods measured (LM rows of the compiled table in benchmarks/solvers/README.md)
LM_METHODS = ("LM (random starts)", "LM (random starts, first solution)")
WARM_UP = (
    "import torch; from ggik import Robot; from ggik.ik.refine import lm_refine; r = Robot.from_name('panda'); "
    "T = r.fk(r.sample_q(2)); lm_refine(r, T[:, None], r.sample_q(8).view(2, 4, -1))"
)


class Measure(dict):
    """One tree's numbers of one round: (table, robot, quantity) -> value."""


def _commands(robots: list[str], goals: int, latency_goals: int, out: Path) -> list[list[str]]:
    py = sys.executable
    bench = [
        py,
        "-m",
        "benchmarks.solvers.bench_solvers",
        "--ckpt",
        "ggik/weights/ggik_default.pt",
        "--robots",
        *robots,
    ]
    bench += ["--goals", str(goals), "--single-goals", "1", "--methods", *LM_METHODS, "--threads", "2", "--no-progress"]
    latency = [py, "-m", "benchmarks.solvers.latency", "--robots", *robots, "--goals", str(latency_goals)]
    latency += ["--starts", "16", "--batch-sizes", "16", "--iters", "2", "--threads", "1"]
    return [bench + ["--out-dir", str(out / "solvers")], latency + ["--out", str(out / "latency.md")]]


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def _measure(out: Path) -> Measure:
    m = Measure()
    for row in _read(out / "solvers" / "solvers.csv"):
        if row["mode"] != "batch":
            continue
        wall = float(row["wall per goal [ms]"])
        if row["method"] == LM_METHODS[1]:
            m[("first solution, batch", row["robot"], "ms per goal")] = wall
            m[("first solution, batch", row["robot"], "success %")] = float(row["success [%]"])
        elif row["method"] == LM_METHODS[0]:
            m[("32 starts, batch", row["robot"], "distinct strict per s")] = (
                1e3 * float(row["distinct strict per goal"]) / wall
            )
            m[("32 starts, batch", row["robot"], "success %")] = float(row["success [%]"])
    for row in _read(out / "latency.csv"):
        if row["LM path"] == "compiled" and row["starts"] == "16":
            m[("one goal per call", row["robot"], "median ms")] = float(row["median ms per call"])
            m[("one goal per call", row["robot"], "success %")] = 100 * float(row["success"])
    return m


def run_tree_commands(tree: Path, commands: list[list[str]]) -> None:
    """Run ``commands`` from ``tree`` (its ``ggik`` and ``benchmarks`` imported, not the installed ones)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for cmd in commands:
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        if done.returncode:
            raise BenchmarkError(f"{' '.join(cmd[:3])} in {tree} failed:\n{done.stderr[-2000:]}")


def before_after_table(
    before: str, robots: list[str], rounds: int, goals: int, latency_goals: int, tolerance: float
) -> Table:
    """The table of the module docstring; ``before``: a git ref of this repository."""
    with tempfile.TemporaryDirectory(prefix="ggik-before-") as tmp:
        old = Path(tmp) / "before"
        made = subprocess.run(
            ["git", "worktree", "add", "--detach", str(old), before], cwd=REPO, capture_output=True, text=True
        )
        if made.returncode:
            raise BenchmarkError(f"--before {before}: {made.stderr.strip()}")
        try:
            trees = {"before": old, "after": REPO}
            for tree in trees.values():
                run_tree_commands(tree, [[sys.executable, "-c", WARM_UP]])
            results: dict[str, list[Measure]] = {"before": [], "after": []}
            for r in range(rounds):
                for name in ("before", "after") if r % 2 == 0 else ("after", "before"):
                    out = Path(tmp) / f"{name}{r}"
                    run_tree_commands(trees[name], _commands(robots, goals, latency_goals, out))
                    results[name].append(_measure(out))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=REPO, capture_output=True)
    return _table(results, before, tolerance)


def _table(results: dict[str, list[Measure]], before: str, tolerance: float) -> Table:
    table = Table(
        f"LM speed and results before ({before}) and after (the working tree), medians of {len(results['after'])} "
        "rounds each",
        ["table", "robot", "quantity", "before", "after", "after / before", "verdict"],
    )
    for key in results["after"][0]:
        b = statistics.median(m[key] for m in results["before"])
        a = statistics.median(m[key] for m in results["after"])
        ratio = a / b if b else float("nan")
        table.add(*key, b, a, ratio, _verdict(key[2], ratio, a == b, tolerance))
    table.notes.append(
        f"verdict: 'within {100 * tolerance:g} %' of before, else 'faster' or 'slower'; success: 'equal' or 'differs'"
    )
    return table


def _verdict(quantity: str, ratio: float, equal: bool, tolerance: float) -> str:
    if quantity.startswith("success"):
        return "equal" if equal else "differs"
    if abs(ratio - 1.0) <= tolerance:
        return f"within {100 * tolerance:g} %"
    better = ratio > 1.0 if quantity.endswith("per s") else ratio < 1.0  # a rate up, a time down
    return "faster" if better else "slower"
