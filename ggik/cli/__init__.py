"""Layer 14, the ``ggik`` command line: one module per command group, each thin (parse, call the library, print).

:func:`build_parser` assembles the groups (:data:`ggik.cli.commands.COMMANDS`); :func:`main` is the console script
``ggik`` (and ``python -m ggik.cli``). Start-up is kept short: ``ggik --help`` imports no command module (so no
torch), and a command imports its own module alone.

Exit status, in every command: 0 success; 1 the command ran and found no answer (``ggik solve``: no solution,
``ggik path``: no valid trajectory); 2 bad input (an argparse error naming the option, or ``ggik: error: ...``);
141 the reader of the output went away (``ggik solve ... | head -3``), as for a tool killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from ggik.cli.arguments import CommandParser, add_threads_arg, set_threads
from ggik.cli.commands import COMMANDS
from ggik.errors import GGIKError

__all__ = ["main", "build_parser"]

EXIT_BROKEN_PIPE = 141  #: 128 + SIGPIPE: the output's reader closed the pipe


def build_parser(command: str | None = None) -> CommandParser:
    """The ``ggik`` argument parser; every command sets ``func`` (Namespace -> exit status).

    ``command``: build only that command's parser in full (importing its module alone) and the others as their
    one-line help, which is all ``ggik --help`` shows; ``""`` none in full; None (default) every one. Every command
    takes ``--threads`` (added here where its module does not)."""
    parser = CommandParser(
        prog="ggik",
        description="Generative graphical inverse kinematics. Exit status: 0 success, 1 no solution (solve) or no "
        "valid trajectory (path), 2 bad input.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    built: set[tuple[str, str]] = set()
    for c in COMMANDS:
        if command is None or c.name == command:
            if (c.module, c.adder) not in built:
                getattr(importlib.import_module(c.module), c.adder)(sub)
                built.add((c.module, c.adder))
        else:
            sub.add_parser(c.name, help=c.help)
    for leaf in parser.leaves():
        if leaf is not parser and "--threads" not in leaf.option_names:
            add_threads_arg(leaf)
    return parser


def _command_of(argv: list[str]) -> str:
    """The command ``argv`` names (its first word when that is one), else ``""`` (e.g. ``ggik --help``)."""
    names = {c.name for c in COMMANDS}
    return argv[0] if argv and argv[0] in names else ""


def main(argv: list[str] | None = None) -> int:
    """Run one ``ggik`` command (``argv`` default ``sys.argv[1:]``); bad input (GGIKError, ValueError, and OSError: a
    file that cannot be read or written) becomes ``ggik: error: ...`` on stderr and exit status 2 (module docstring)."""
    words = list(sys.argv[1:] if argv is None else argv)
    if argv is None:  # the process's own command (the console script): its start-up, made short
        args = _start_up(words)
    else:  # a caller's process (tests, scripts): its collector is left alone
        args = build_parser(_command_of(words)).parse_args(words)
    args.argv = words  # recorded in result files
    if args.command == "eval":
        from ggik.evaluation.report import code_version

        code_version()  # the code the evaluation starts with, named in its tables however long it runs
    if args.command != "train":  # train takes --threads into its config (its saved runs record it)
        set_threads(args.threads)
    try:
        status = args.func(args)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at the interpreter's exit
        return status
    except BrokenPipeError:  # `ggik solve ... | head -3`: the reader has what it wanted (an OSError: caught first)
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (GGIKError, ValueError, OSError) as exc:  # bad input, or a file that cannot be read or written: exit 2
        print(f"ggik: error: {exc}", file=sys.stderr)
        return 2


def _start_up(words: list[str]) -> argparse.Namespace:
    """Parse ``words`` and import torch with the garbage collector off, then freeze what that made: importing torch
    allocates ~10^6 objects and the collections it triggers cost 0.25 s of every command's start-up while freeing
    nothing (those objects live as long as the process); later collections skip them (``gc.freeze``)."""
    gc.disable()
    try:
        args = build_parser(_command_of(words)).parse_args(words)  # bad values: an argparse error naming the option
        import torch  # noqa: F401  (every command computes with it)
    finally:
        gc.freeze()
        gc.enable()
    return args


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's flush at exit does not fail on the closed pipe again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (e.g. captured by a test)
        pass
