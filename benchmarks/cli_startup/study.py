"""The start-up study of the ``ggik`` command line (what :mod:`benchmarks.cli_startup.measure` runs): wall time of
``ggik --help`` and of the README's first solve as a user's shell sees it, a fresh process each run, this checkout's
console script and optionally another checkout's code (``before``)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ggik.evaluation.report import Table

__all__ = ["SHIPPED", "COMMANDS", "wall_times", "before_command", "startup_table"]

SHIPPED = "ggik/weights/ggik_default.pt"  #: the model ggik solve loads (run from the repository root)

GGIK = str(Path(sys.executable).parent / "ggik")
SOLVE = [GGIK, "solve", "--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "1", "0", "0"]
#: name -> (command, target [s], the same request to the code before (its default was the raw samples))
COMMANDS = {
    "ggik --help": ([GGIK, "--help"], 0.5, [GGIK, "--help"]),
    "ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0": (SOLVE, 1.5, SOLVE + ["--refine", "lm"]),
    "ggik solve ... --raw (before: the default)": (SOLVE + ["--raw"], None, SOLVE),
}


def wall_times(command: list[str], runs: int, env: dict | None = None, cwd: str | None = None) -> list[float]:
    """Seconds of ``runs`` runs of ``command`` (after one untimed run that warms the file cache)."""
    subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
        times.append(time.perf_counter() - t0)
    return times


def before_command(command: list[str], src: str) -> tuple[list[str], dict]:
    """``command`` run by the ggik of another checkout ``src`` (what its console script would run) and its env; run
    it in ``src`` (``python -c`` puts the working directory first on the path)."""
    entry = "import sys; from ggik.cli import main; sys.exit(main())"
    return [sys.executable, "-c", entry, *command[1:]], {**os.environ, "PYTHONPATH": str(Path(src).resolve())}


def startup_table(args: argparse.Namespace) -> Table:
    """One row per command and code (this checkout, and ``args.before``'s where given): median, min, max seconds."""
    table = Table(
        "Start-up of the ggik command line",
        ["command", "code", "median [s]", "min [s]", "max [s]", "target [s]"],
    )
    for name, (command, target, before_request) in COMMANDS.items():
        goal = "" if target is None else f"< {target:g}"
        runs: list[tuple[str, list[str], dict | None, str | None]] = [("this", command, None, None)]
        if args.before:
            before = subprocess.run(["git", "-C", args.before, "rev-parse", "--short", "HEAD"], capture_output=True,
                                    text=True).stdout.strip()  # fmt: skip
            runs.append((f"before ({before})", *before_command(before_request, args.before), args.before))
        for code, cmd, env, cwd in runs:
            t = wall_times(cmd, args.runs, env, cwd)
            table.add(f"`{name}`", code, round(statistics.median(t), 2), round(min(t), 2), round(max(t), 2), goal)
    table.notes.append(
        f"Wall time of a fresh process, {args.runs} runs after one untimed run (the file cache warm). The code before "
        "is run as its console script would run it; its solve refined nothing by default, so it is asked for LM "
        "(--refine lm: every sample refined) where this code refines by default (model-first)."
    )
    return table
