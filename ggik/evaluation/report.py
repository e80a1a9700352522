"""Result tables for evaluations and benchmarks: one Markdown file and one CSV per table, with provenance.

Every table records the command that produced it, the seed, the machine, the versions and the load on
the machine, the code version (``git describe``) and, for a table of a model, which model it measured (file,
sha256 prefix, training step), so that a number in the README can always be traced to a rerunnable command and
to the exact weights it came from.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import os
import platform
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ggik.checkpoint import load_checkpoint, shipped_model_path
from ggik.fileio import atomic_write_text
from ggik.version import __version__

__all__ = [
    "Table",
    "machine_description",
    "command_line",
    "code_version",
    "describe_checkout",
    "model_stamp",
    "provenance",
    "read_csv",
]

SHA256_PREFIX = 12  #: hex digits of a model file's sha256 quoted in a table header


UNCOMMITTED_NAMED = 6  #: uncommitted files a ``-dirty`` code version names (then "and N more")


@functools.cache
def code_version() -> str:
    """The code that ran: ``ggik X.Y.Z`` plus ``git describe --always --dirty`` of the checkout holding the
    package, when it is one (an installed wheel has no git: the version alone). Read once per process: a long run
    calls it at its start (``ggik eval`` and :func:`benchmarks.common.scripts.run_table_script` do), so commits made
    while it runs do not change the version its tables name.

    A ``-dirty`` checkout (tracked files changed since the commit) is named loudly: the version says which files
    were uncommitted, e.g. ``ggik 0.2.0, git 19937c70bc-dirty (uncommitted: ggik/solver.py)``, and a warning goes
    to stderr once, since a table of uncommitted code is not a result to commit."""
    return describe_checkout(Path(__file__).resolve().parents[2])


def describe_checkout(root: Path) -> str:
    """:func:`code_version` of the checkout at ``root`` (read now, not cached; warns on stderr when ``-dirty``)."""
    described = _git(root, "describe", "--always", "--dirty", "--abbrev=10")
    if not described:
        return f"ggik {__version__}"
    version = f"ggik {__version__}, git {described}"
    if described.endswith("-dirty"):
        files = _git(root, "diff", "--name-only", "HEAD").split()
        named = ", ".join(files[:UNCOMMITTED_NAMED]) + (
            f" and {len(files) - UNCOMMITTED_NAMED} more" if len(files) > UNCOMMITTED_NAMED else ""
        )
        version += f" (uncommitted: {named or 'unknown'})"
        print(
            f"ggik: warning: {root} has uncommitted changes ({named or 'unknown'}); the tables of this run record "
            f"code {described}: commit first, then run, for results to commit",
            file=sys.stderr,
        )
    return version


def _git(root: Path, *args: str) -> str:
    """stdout of ``git ARGS`` in ``root``, stripped; "" where git is missing, fails or ``root`` is no checkout."""
    try:
        return subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def model_stamp(path: str | Path | None) -> str:
    """Which model a table measured: the file as given (``None``: the shipped model), the first 12 hex digits of its
    sha256, its training step and examples (where the file records them). Reads the file (GGIKError if it is not a
    ggik checkpoint)."""
    if path is None:
        with shipped_model_path() as shipped:
            return _stamp(shipped, "shipped ggik/weights/" + shipped.name)
    return _stamp(Path(path), str(path))


def _stamp(path: Path, name: str) -> str:
    ckpt = load_checkpoint(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:SHA256_PREFIX]
    trained = [
        f"{what} {int(ckpt[key]):,}" if what == "step" else f"{int(ckpt[key]):,} {what}"
        for key, what in (("step", "step"), ("examples", "examples"))
        if key in ckpt
    ]
    return f"{name} (" + ", ".join([f"sha256 {digest}", *trained]) + ")"


def command_line(argv: list[str] | None = None) -> str:
    """The command as typed (``ggik ...`` or ``python script ...``)."""
    args = sys.argv if argv is None else argv
    prog = Path(args[0]).name if args else "ggik"
    if prog in ("__main__.py", "-c"):
        prog = "python -m ggik.cli"
    elif prog.endswith(".py"):
        prog = f"python {os.path.relpath(args[0]) if os.path.isabs(args[0]) else args[0]}"
    return " ".join([prog] + [shlex.quote(a) for a in args[1:]])


def machine_description() -> str:
    """The machine a table was measured on: CPU model and the vector instructions torch uses (timings, and bf16
    sampling, depend on them: :func:`ggik.ik.sampling.native_bf16`), logical CPUs, versions, threads and load."""
    import torch

    from ggik.ik.sampling import native_bf16

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    bf16 = "native bf16" if native_bf16("cpu") else "no native bf16"
    return (
        f"{platform.machine()} {cpu_model()} ({torch.backends.cpu.get_cpu_capability()}, {bf16}), "
        f"{os.cpu_count()} logical CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"Python {platform.python_version()}, 1-min load average {load:.2f}"
    )


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, ``platform.processor()`` elsewhere; "unknown CPU")."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def provenance(command: str, seed: int | None = None, model: str | None = None) -> list[str]:
    """The header lines of a result file: command, model (if any), code version, machine, seed (if any)."""
    lines = [f"Command: `{command}`"]
    if model is not None:
        lines.append(f"Model: {model}")
    lines += [f"Code: {code_version()}", f"Machine: {machine_description()}"]
    if seed is not None:
        lines.append(f"Seed: {seed}")
    return lines


@dataclass
class Table:
    """A titled table: ``columns`` and ``rows`` (lists of values), plus notes printed under it."""

    title: str
    columns: list[str]
    rows: list[list] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *values) -> None:
        if len(values) != len(self.columns):
            raise ValueError(f"row has {len(values)} values, table {self.title!r} has {len(self.columns)} columns")
        self.rows.append(list(values))

    @staticmethod
    def _fmt(v) -> str:
        if isinstance(v, float):
            if v != v:
                return "n/a"
            return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
        return str(v)

    def markdown(self, command: str, seed: int | None = None, model: str | None = None) -> str:
        """Title, provenance (command, model as :func:`model_stamp` gives it, code version, machine, seed) and body."""
        return "\n".join([f"# {self.title}", "", *provenance(command, seed, model), "", self.body()])

    def body(self) -> str:
        """The table itself in Markdown: column header, rows and notes (what :meth:`markdown` puts under its title
        and provenance; a report of several tables puts one body under each section heading)."""
        lines = ["| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        lines += ["| " + " | ".join(self._fmt(v) for v in row) + " |" for row in self.rows]
        if self.notes:
            lines += [""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(self.columns)
        w.writerows(self.rows)
        return buf.getvalue()

    def write(
        self, stem: str | Path, command: str | None = None, seed: int | None = None, model: str | None = None
    ) -> tuple[Path, Path]:
        """Write ``stem.md`` and ``stem.csv`` atomically; returns both paths. ``model``: :func:`model_stamp` of the
        model the table measured (None for a table of no model)."""
        stem = Path(stem)
        md = atomic_write_text(stem.with_suffix(".md"), self.markdown(command or command_line(), seed, model))
        cs = atomic_write_text(stem.with_suffix(".csv"), self.csv())
        return md, cs


def read_csv(path: str | Path) -> list[dict]:
    """The rows of a result CSV written by :meth:`Table.write`, as dicts of strings keyed by column."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
