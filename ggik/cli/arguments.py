"""The one vocabulary of the ``ggik`` commands: shared argparse types for counts, times and tolerances.

A command that counts goals spells it ``-n``/``--goals``, and a count of samples per goal ``-s``/``--samples``
(0.2.0 removed ``-n`` for samples). A bad value (a sample count below 1, ``--threads 0``, a tolerance or time limit
that is not positive) is an argparse error naming the option, before anything is loaded.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

__all__ = [
    "CommandParser",
    "positive_int",
    "non_negative_int",
    "positive_float",
    "add_threads_arg",
    "set_threads",
    "add_out_dir_arg",
    "figures_possible",
]


class CommandParser(argparse.ArgumentParser):
    """The parser of ``ggik`` and of each of its commands (``add_subparsers`` makes its children of the same class):
    it keeps its subcommand actions and option strings, so that :meth:`leaves` finds the parsers that run something
    and whether they take an option, without argparse's private attributes."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.command_actions: list[Any] = []
        self.option_names: set[str] = set()  # before argparse's own __init__, which adds -h
        super().__init__(*args, **kwargs)

    def add_subparsers(self, **kwargs: Any) -> Any:
        action = super().add_subparsers(**kwargs)
        self.command_actions.append(action)
        return action

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action:
        action = super().add_argument(*args, **kwargs)
        self.option_names.update(action.option_strings)
        return action

    def leaves(self) -> list[CommandParser]:
        """The parsers under this one (itself included) that have no subcommands, each once."""
        if not self.command_actions:
            return [self]
        children = [child for action in self.command_actions for child in dict.fromkeys(action.choices.values())]
        return [leaf for child in children for leaf in child.leaves()]


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (counts of goals, samples, starts, robots)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (0 where the help gives it a meaning, e.g. random starts only)."""
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value}")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (tolerances [m] or [rad], time limits [s], scales)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a finite number >= 0 (margins [m])."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def add_threads_arg(parser: argparse.ArgumentParser, default: int | None = None, note: str = "") -> None:
    """``--threads N``: torch CPU threads, a positive integer (every command that computes takes it). ``default``
    None leaves torch's own choice; ``note`` ends the help text (e.g. why a command defaults to one thread)."""
    default_text = "torch's own choice" if default is None else str(default)
    parser.add_argument(
        "--threads",
        type=positive_int,
        default=default,
        metavar="N",
        help=f"torch CPU threads, a positive integer (default: {default_text}){note}",
    )


def set_threads(threads: int | None) -> None:
    """Apply ``--threads``: ``torch.set_num_threads(threads)``; None leaves torch's setting alone."""
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def add_out_dir_arg(parser: argparse.ArgumentParser, table: str, writes: str) -> None:
    """``--out-dir DIR`` of an evaluation command: where its files go (``writes`` names them), by default
    ``ggik-results/TABLE`` under the working directory; nothing is written anywhere else."""
    parser.add_argument(
        "--out-dir",
        default=f"ggik-results/{table}",
        metavar="DIR",
        help=f"writes {writes} in DIR, created if needed (default: ggik-results/{table} in the working directory)",
    )


def figures_possible(stream: Any) -> bool:
    """Whether matplotlib can draw the figures of a command; without it, a note on ``stream`` says they are skipped
    (the tables are written all the same)."""
    import importlib.util

    try:
        if importlib.util.find_spec("matplotlib") is not None:
            return True
    except (ImportError, ValueError):  # a broken install, or sys.modules["matplotlib"] = None (blocked)
        pass
    print("figures skipped: matplotlib is not installed (pip install 'ggik[plot]')", file=stream)
    return False
