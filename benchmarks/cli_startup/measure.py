"""Start-up of the ``ggik`` command line: wall time of ``ggik --help`` and of the README's first solve, as a user's
shell sees it (a fresh process each run, the console script of this environment).

    python -m benchmarks.cli_startup.measure --runs 10 --out benchmarks/cli_startup/results/startup
    git worktree add /tmp/ggik-before 19d6cfb       # the code before, measured in the same run:
    python -m benchmarks.cli_startup.measure --runs 10 --before /tmp/ggik-before --out ...

Run it alone on the machine. Targets (issue: the command line as a user meets it): ``ggik --help`` under 0.5 s,
``ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0`` under 1.5 s on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common.scripts import positive_int, run_table_script
from ggik.evaluation.report import Table

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=10, help="timed runs per command (default 10)")
    ap.add_argument("--out", help="also write the table here (.md/.csv)")
    ap.add_argument("--before", metavar="SRC", help="also time the ggik of this checkout (e.g. a git worktree)")
    args = ap.parse_args(argv)
    return run_table_script(__file__, argv, None, lambda command: startup_table(args), SHIPPED, args.out)


if __name__ == "__main__":
    sys.exit(main())
