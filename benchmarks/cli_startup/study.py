"""The start-up study of the ``ggik`` command line (what :mod:`benchmarks.cli_startup.measure` runs): wall time of
``ggik --help`` and of the README's first solve as a user's shell sees it, a fresh process each run, the code of the
checkout that holds this study (the code its table's header names) and optionally other checkouts' (``before``), their
runs alternating."""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ggik.evaluation.report import Table

__all__ = ["SHIPPED", "COMMANDS", "alternating_times", "before_command", "startup_table"]

SHIPPED = "ggik/weights/ggik_default.pt"  #: the model ggik solve loads (run from the repository root)
#: the checkout that holds this study: its code is "this" (run as its console script would run it)
HERE = Path(__file__).resolve().parents[2]

GGIK = str(Path(sys.executable).parent / "ggik")
SOLVE = [GGIK, "solve", "--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "1", "0", "0"]
#: name -> (command, target [s], the same request to the code before (its default was the raw samples))
COMMANDS = {
    "ggik --help": ([GGIK, "--help"], 0.5, [GGIK, "--help"]),
    "ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0": (SOLVE, 1.5, SOLVE + ["--refine", "lm"]),
    "ggik solve ... --raw (before: the default)": (SOLVE + ["--raw"], None, SOLVE),
}


def alternating_times(
    runs_of: list[tuple[list[str], dict, str]], runs: int
) -> tuple[list[list[float]], list[list[float]]]:
    """Wall and CPU seconds (the process's user + system time, all its threads) of ``runs`` runs of each ``(command,
    env, cwd)``, alternating: one untimed run of each (the file cache warm), then ``runs`` rounds in which each runs
    once, the order reversed every other round, so that the machine's load, which changes while they run, weighs on
    each alike (the CPU time depends on it less)."""
    for command, env, cwd in runs_of:
        subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
    wall: list[list[float]] = [[] for _ in runs_of]
    cpu: list[list[float]] = [[] for _ in runs_of]
    for r in range(runs):
        order = list(range(len(runs_of)))
        for i in order if r % 2 == 0 else order[::-1]:
            command, env, cwd = runs_of[i]
            c0, t0 = _children_cpu(), time.perf_counter()
            subprocess.run(command, capture_output=True, check=False, env=env, cwd=cwd)
            wall[i].append(time.perf_counter() - t0)
            cpu[i].append(_children_cpu() - c0)
    return wall, cpu


def _children_cpu() -> float:
    """User + system seconds of this process's waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def before_command(command: list[str], src: str) -> tuple[list[str], dict]:
    """``command`` run by the ggik of another checkout ``src`` (what its console script would run) and its env; run
    it in ``src`` (``python -c`` puts the working directory first on the path)."""
    entry = "import sys; from ggik.cli import main; sys.exit(main())"
    return [sys.executable, "-c", entry, *command[1:]], {**os.environ, "PYTHONPATH": str(Path(src).resolve())}


def startup_table(args: argparse.Namespace) -> Table:
    """One row per command and code: this checkout's (:data:`HERE`) and each of ``args.before`` (a list of
    checkouts, or None): median, min, max wall seconds and median CPU seconds of ``args.runs`` alternating runs
    (:func:`alternating_times`). The codes before are asked what this code is asked with ``args.same_request``, else
    what the code before 19d6cfb needed for the same work (:data:`COMMANDS`)."""
    table = Table(
        "Start-up of the ggik command line",
        ["command", "code", "median [s]", "min [s]", "max [s]", "CPU median [s]", "target [s]"],
    )
    befores = list(args.before or [])
    for name, (command, target, before_request) in COMMANDS.items():
        goal = "" if target is None else f"< {target:g}"
        codes = [("this", *before_command(command, str(HERE)), str(HERE))]
        for src in befores:
            short = subprocess.run(["git", "-C", src, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
            request = command if args.same_request else before_request
            codes.append((f"before ({short.stdout.strip()})", *before_command(request, src), src))
        wall, cpu = alternating_times([(cmd, env, cwd) for _, cmd, env, cwd in codes], args.runs)
        for (code, *_), t, c in zip(codes, wall, cpu):
            median, fastest, slowest = (round(v, 2) for v in (statistics.median(t), min(t), max(t)))
            table.add(f"`{name}`", code, median, fastest, slowest, round(statistics.median(c), 2), goal)
    table.notes.append(
        f"Wall time (and CPU time: user + system, all threads) of a fresh process, {args.runs} runs of each code after "
        "one untimed run (the file cache warm), the codes alternating (the order reversed every other round). Each "
        "code is run as its console script would run it (python -c 'from ggik.cli import main; ...' in its checkout)"
        + (
            "; the codes before are asked the same."
            if args.same_request
            else "; the codes before are asked what code before 19d6cfb needed for the same work: --refine lm (every "
            "sample refined) where this code refines by default (model-first), and nothing for --raw (its default)."
        )
    )
    return table
