"""What the DG studies' scripts share (``budget.py``, ``flips.py``, ``exact_table.py``, ``step_cost.py``): the code
stamp of their headers, their common options and the writing of their tables."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from ggik.fileio import atomic_write_text

__all__ = ["commit", "study_parser", "write_table"]


def commit() -> str:
    """The short hash of HEAD, "-dirty" when a tracked file of ``ggik/`` or ``benchmarks/dg_budget/`` has changed (an
    untracked results folder does not count); "unknown" outside a git checkout. Read before the study runs: the code
    imported then."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        paths = ["ggik", "benchmarks/dg_budget"]
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", *paths], capture_output=True)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def study_parser(
    description: str, samples_help: str | None = None, out_help: str = "(Markdown)"
) -> argparse.ArgumentParser:
    """The options of a study over the handedness study's arms: ``--goals``, ``--samples``, ``--families``, ``--arms``,
    ``--ckpt``, ``--threads`` and ``--out``."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--goals", type=int, default=100)
    p.add_argument("--samples", type=int, default=32, help=samples_help)
    p.add_argument("--families", nargs="*", default=None, help="the study's families (default: every family)")
    p.add_argument("--arms", nargs="*", default=None, help="only these arms of the families (default: all)")
    p.add_argument("--ckpt", default=None, help="the model (default: the shipped one)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=None, help=f"write the tables here too {out_help}")
    return p


def write_table(text: str, out: Path | None) -> None:
    """Print the table ``text`` and, with ``out``, write it there (atomically, its folder made)."""
    print(text)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out, text)
