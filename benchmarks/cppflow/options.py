"""The options the scripts of this study share (``--problems``, ``--ckpt``, ``--threads``, ``--seed``, ``--out``) and
what they resolve to."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from benchmarks.common.scripts import BenchmarkError, positive_int
from benchmarks.cppflow.problems import OBSTACLE_PROBLEMS, PROBLEMS

__all__ = ["parse_problem_study", "problem_names"]


def problem_names(asked: list[str]) -> list[str]:
    """The problems a ``--problems`` option names: ``all``, ``obstacles`` (those with obstacles) or names;
    BenchmarkError naming the unknown ones."""
    names = {"all": list(PROBLEMS), "obstacles": list(OBSTACLE_PROBLEMS)}.get(asked[0], list(asked))
    unknown = [n for n in names if n not in PROBLEMS]
    if unknown:
        raise BenchmarkError(f"unknown problems {unknown}; problems: {', '.join(PROBLEMS)}")
    return names


def parse_problem_study(
    ap: argparse.ArgumentParser, argv: list[str] | None, stem: str, default: str
) -> tuple[argparse.Namespace, list[str], Path | None]:
    """Add the shared options to ``ap`` (``--problems`` defaulting to ``default``), parse ``argv``, set torch's
    threads; returns (args, the problems, ``DIR/stem`` to write to, its folder made, or None). An unknown problem
    exits with its message (status 1)."""
    ap.add_argument("--problems", nargs="+", default=[default], help="all, obstacles, or problem names")
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt", help="the model file (default: the shipped one)")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help=f"a folder: DIR/{stem}.md and .csv")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        names = problem_names(args.problems)
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    out = None
    if args.out is not None:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        out = Path(args.out) / stem
    return args, names, out
