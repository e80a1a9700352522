"""Layer 8, the ``ggik`` command line: one module per command group, each thin (parse, call the library, print).

:func:`build_parser` assembles the groups; :func:`main` is the console script ``ggik`` (and ``python -m ggik.cli``).
"""

from __future__ import annotations

import argparse
import sys

from ggik.cli.arguments import deprecation_notes, warn_deprecated
from ggik.cli.data import add_data_parser
from ggik.cli.demo import add_demo_parser
from ggik.cli.evaluate import add_eval_parser
from ggik.cli.inspect import add_graph_parser, add_robot_parser
from ggik.cli.model_files import add_export_parser, add_info_parser
from ggik.cli.path import add_path_parser
from ggik.cli.solve import add_solve_parser
from ggik.cli.train import add_train_parser
from ggik.errors import GGIKError
from ggik.evaluation.report import code_version

__all__ = ["main", "build_parser"]

#: the command groups, in the order of ``ggik --help``
GROUPS = (
    add_robot_parser,
    add_graph_parser,
    add_train_parser,
    add_data_parser,
    add_solve_parser,
    add_path_parser,
    add_eval_parser,
    add_info_parser,
    add_export_parser,
    add_demo_parser,
)


def build_parser() -> argparse.ArgumentParser:
    """The ``ggik`` argument parser; every command sets ``func`` (Namespace -> exit status)."""
    parser = argparse.ArgumentParser(prog="ggik", description="Generative graphical inverse kinematics.")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in GROUPS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one ``ggik`` command (``argv`` default ``sys.argv[1:]``); GGIKError and FileNotFoundError become
    ``ggik: error: ...`` on stderr and exit status 2."""
    args = build_parser().parse_args(argv)  # bad values: an argparse error naming the option, exit status 2
    warn_deprecated(deprecation_notes(args), sys.stderr)  # old spellings of options, e.g. -n for samples
    args.argv = list(sys.argv[1:] if argv is None else argv)  # recorded in result files
    if args.command == "eval":
        code_version()  # the code the evaluation starts with, named in its tables however long it runs
    try:
        return args.func(args)
    except (GGIKError, FileNotFoundError, ValueError) as exc:  # bad input: one line, exit 2
        print(f"ggik: error: {exc}", file=sys.stderr)
        return 2
