"""Result tables for evaluations and benchmarks: one Markdown file and one CSV per table, with provenance.

Every table records the command that produced it, the seed, the machine, the versions and the load on
the machine, so that a number in the README can always be traced to a rerunnable command.
"""
from __future__ import annotations

import csv
import io
import os
import platform
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ggik.fileio import atomic_write_text

__all__ = ["Table", "machine_description", "command_line", "read_csv"]


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
    import torch

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (
        f"{platform.machine()}, {os.cpu_count()} logical CPUs, torch {torch.__version__} ({torch.get_num_threads()} threads), "
        f"Python {platform.python_version()}, 1-min load average {load:.2f}"
    )


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

    def markdown(self, command: str, seed: int | None = None) -> str:
        lines = [f"# {self.title}", "", f"Command: `{command}`", f"Machine: {machine_description()}"]
        if seed is not None:
            lines.append(f"Seed: {seed}")
        return "\n".join(lines + ["", self.body()])

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

    def write(self, stem: str | Path, command: str | None = None, seed: int | None = None) -> tuple[Path, Path]:
        """Write ``stem.md`` and ``stem.csv`` atomically; returns both paths."""
        stem = Path(stem)
        md = atomic_write_text(stem.with_suffix(".md"), self.markdown(command or command_line(), seed))
        cs = atomic_write_text(stem.with_suffix(".csv"), self.csv())
        return md, cs


def read_csv(path: str | Path) -> list[dict]:
    """The rows of a result CSV written by :meth:`Table.write`, as dicts of strings keyed by column."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))
