"""What the lab's scripts share: the error every script exits with, the command that reproduces a run, the common
end of a table-writing script, and argparse types that turn a bad number into a usage error.

Every problem a study cannot run as asked (unknown robot, missing checkpoint, bad option value) raises
:class:`BenchmarkError`, whose message is what the scripts print when they exit (status 1, no traceback).
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import torch

from ggik.errors import GGIKError
from ggik.evaluation.report import Table, code_version, model_stamp

__all__ = [
    "BenchmarkError",
    "bench_device",
    "REPO",
    "script_command",
    "run_table_script",
    "positive_int",
    "nonnegative_int",
    "nonnegative_float",
    "add_device_arg",
    "run_model_study",
    "positive_float",
]

REPO = Path(__file__).resolve().parents[2]  #: the repository root (the folder holding ``benchmarks/``)


class BenchmarkError(GGIKError):
    """A study that cannot run as asked; the message names the option or input at fault."""


def script_command(script: str, argv: list[str] | None) -> str:
    """The command that reproduces this run: ``python -m benchmarks.STUDY.SCRIPT ARGS`` (also when ``main(argv)``
    is called from Python).

    ``script`` is the script's ``__file__`` (a module of ``benchmarks/``), ``argv`` its arguments (None:
    ``sys.argv[1:]``).
    """
    module = ".".join(Path(script).resolve().relative_to(REPO).with_suffix("").parts)
    args = sys.argv[1:] if argv is None else list(argv)
    return " ".join(["python", "-m", module] + [shlex.quote(a) for a in args])


def bench_device(device: str) -> torch.device:
    """The torch device a ``--device`` option names; :class:`BenchmarkError` for a malformed name or a CUDA device this
    machine does not have (rather than a crash deep inside torch)."""
    try:
        dev = torch.device(device)
    except RuntimeError as exc:
        raise BenchmarkError(f"--device: {exc}") from None
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise BenchmarkError(f"--device {device}: torch sees no CUDA device on this machine")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise BenchmarkError(f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    try:
        torch.empty(1, device=dev) + 1  # mps, xpu, ... where torch has no such device: fail here, not mid-study
    except (RuntimeError, AssertionError, NotImplementedError) as exc:
        raise BenchmarkError(f"--device {device}: torch cannot compute there ({exc})") from None
    return dev


def add_device_arg(ap: argparse.ArgumentParser, what: str) -> None:
    """The ``--device`` option of a study (default cpu); ``what``: what runs there (its help text)."""
    ap.add_argument("--device", default="cpu", help=f"where {what} runs: cpu, cuda, cuda:1, ...")


def run_table_script(
    script: str,
    argv: list[str] | None,
    seed: int | None,
    run: Callable[[str], Table],
    ckpt: str | Path | None = None,
    out: str | Path | None = None,
    shipped_if_none: bool = False,
) -> int:
    """The common end of the table-writing scripts: ``run(command)`` with the command that reproduces the run
    (:func:`script_command`), then its table printed as Markdown, headed by the stamp of the model file ``ckpt`` it
    measured (:func:`ggik.evaluation.report.model_stamp`; None: a table of no model, or of the shipped model with
    ``shipped_if_none``), and written to ``out``.md/.csv when given. A :class:`BenchmarkError` exits with its message
    (status 1, no traceback). Returns 0."""
    command = script_command(script, argv)
    code_version()  # the code this run starts with, read before it runs (tables printed hours later name it)
    try:
        table = run(command)
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    stamp = model_stamp(ckpt) if ckpt is not None or shipped_if_none else None
    print(table.markdown(command, seed, stamp))
    if out is not None:
        print("wrote", *table.write(out, command, seed, stamp))
    return 0


def run_model_study(script: str, ap: argparse.ArgumentParser, argv: list[str] | None, table: Callable) -> int:
    """The common end of a study of one model file (``--ckpt``, declared by the caller; None: the shipped model, which
    the header then names): adds ``--threads``, ``--seed`` and ``--out`` to ``ap``, parses ``argv``, sets torch's
    thread count and runs ``table(args)`` through :func:`run_table_script`."""
    ap.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    return run_table_script(script, argv, args.seed, lambda _: table(args), args.ckpt, args.out, shipped_if_none=True)


def _bounded(convert: Callable[[str], float], minimum: float, strict: bool, what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None
        if value < minimum or (strict and value == minimum) or not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    parse.__name__ = what  # argparse names the type in its messages
    return parse


#: argparse ``type=`` of a count that must be at least 1 (``--threads 0`` is a usage error, exit status 2)
positive_int = _bounded(int, 1, False, "an integer >= 1")
#: argparse ``type=`` of a count that may be 0
nonnegative_int = _bounded(int, 0, False, "an integer >= 0")
#: argparse ``type=`` of a duration or size that must be above 0
positive_float = _bounded(float, 0.0, True, "a number > 0")
#: a finite number >= 0 (inf is refused: a time budget or a size must be finite)
nonnegative_float = _bounded(float, 0.0, False, "a finite number >= 0")
