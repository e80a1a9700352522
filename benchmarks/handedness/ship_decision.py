"""Ship a candidate model in place of the default by 95 % intervals (issue 61, item 4).

For each pair of result tables of the same kind (the folders ``ggik eval accuracy / paper / conventions /
generalisation`` write, or the ``results.json`` of ``benchmarks.adapt.run_study``), each row (robot, file variant,
family, arm) and each success column: the Wilson 95 % interval (:func:`ggik.evaluation.paper_protocol.wilson_interval`)
of the base's and the candidate's rate over the row's goals, and a verdict: ``better`` when the candidate's rate lies
above the base's interval, ``worse`` below it, else ``level``. The rule: ship where no compared row is worse and each
chiral arm is better on the chiral tables (default: the tables of our protocol, kind ``accuracy``).

Two tables compare only on the same goals: the same command once the options that do not change the goals or the
samples are dropped (model, output folder, threads, progress, figure, MMD/SLSQP goals), and code versions on the same
side of every commit known to change that kind's goals (:data:`GOAL_CHANGES`); otherwise :class:`GGIKError` says
what differs. The tables are read by :mod:`benchmarks.handedness.ship_tables`. Command::

    python -m benchmarks.handedness.ship_decision --base ours=DIR paper=DIR ... --candidate ours=DIR paper=DIR ... \
        --out benchmarks/handedness/results/ship/decision
"""

from __future__ import annotations

import argparse
import csv
import io
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.handedness.ship_tables import ResultTable, read_table
from ggik.errors import GGIKError
from ggik.evaluation.paper_protocol import wilson_interval
from ggik.evaluation.report import code_version
from ggik.fileio import atomic_write_text

__all__ = [
    "GOAL_CHANGES",
    "ResultTable",
    "RowVerdict",
    "Decision",
    "read_table",
    "same_goals",
    "compare",
    "decide",
    "report",
    "main",
]

ROOT = Path(__file__).resolve().parents[2]
#: commits known to change a kind's goals (commit, what): two tables compare only when both codes lie on the same
#: side of each. The goals of accuracy, conventions and generalisation hash equal at 4ead48c (v10's eval/results),
#: 24c3c8f and 5a8f0d1 (results/ship/goal_hashes.py); the paper's changed with d4a0018 (1b81f11's tables.py hunk).
GOAL_CHANGES: dict[str, tuple[tuple[str, str], ...]] = {
    "paper": (("d4a0018", "the paper's goals drawn per arm, keyed by its name"),),
}
TIE = 1e-9  #: [points] a rate this close to an interval's end is on it (100 % of 100 goals: upper end 99.99999999...)


@dataclass(frozen=True)
class RowVerdict:
    """One row and column of a comparison: rates [%] and 95 % intervals [%] over ``goals`` goals each."""

    table: str
    key: tuple[str, ...]
    column: str
    goals: int
    base: float
    base_interval: tuple[float, float]
    candidate: float
    candidate_interval: tuple[float, float]
    verdict: str  #: "better", "worse" or "level"


@dataclass(frozen=True)
class Decision:
    ship: bool
    reasons: list[str]


def git_is_ancestor(commit: str, code: str) -> bool | None:
    """Whether ``commit`` is in the history of ``code`` (this checkout's git); None where git cannot tell."""
    run = subprocess.run(["git", "merge-base", "--is-ancestor", commit, code], cwd=ROOT, capture_output=True)
    return {0: True, 1: False}.get(run.returncode)


def same_goals(
    base: ResultTable, candidate: ResultTable, is_ancestor: Callable[[str, str], bool | None] = git_is_ancestor
) -> list[str]:
    """Notes on what differs harmlessly (code versions); GGIKError when the two tables' goals or samples differ:
    their kinds, their commands' options (:attr:`ResultTable.command`) or their codes across a :data:`GOAL_CHANGES`
    commit."""
    where = f"{base.folder} (base) and {candidate.folder} (candidate)"
    if base.kind != candidate.kind:
        raise GGIKError(f"{where}: tables of different kinds, {base.kind} and {candidate.kind}")
    if base.keys != candidate.keys:
        raise GGIKError(f"{where}: other layouts, rows named by {list(base.keys)} and {list(candidate.keys)}")
    differs = [
        f"{k}: {' '.join(base.command.get(k, ('(none)',)))} against {' '.join(candidate.command.get(k, ('(none)',)))}"
        for k in sorted(set(base.command) | set(candidate.command))
        if base.command.get(k) != candidate.command.get(k)
    ]
    if differs:
        raise GGIKError(f"{where}: other goals or samples; their commands differ in " + "; ".join(differs))
    a, b = (t.code.removesuffix("-dirty") for t in (base, candidate))
    notes = [f"{t.folder}: code {t.code} ran with uncommitted changes" for t in (base, candidate) if "dirty" in t.code]
    if a == b or a.startswith(b) or b.startswith(a):
        return notes
    for commit, what in GOAL_CHANGES.get(base.kind, ()):
        sides = is_ancestor(commit, a), is_ancestor(commit, b)
        if None in sides:
            raise GGIKError(f"{where}: cannot tell whether codes {a} and {b} both have {commit} ({what})")
        if sides[0] != sides[1]:
            has, lacks = (a, b) if sides[0] else (b, a)
            raise GGIKError(f"{where}: other goals; code {has} has {commit} ({what}), code {lacks} does not")
    known = ", ".join(c for c, _ in GOAL_CHANGES.get(base.kind, ())) or "none"
    return [*notes, f"{base.kind}: codes {a} and {b} differ; known goal changes ({known}) on the same side of both"]


def compare(name: str, base: ResultTable, candidate: ResultTable) -> tuple[list[RowVerdict], list[str]]:
    """The verdict of every row and success column the two tables share, and the rows or columns only one has."""
    verdicts, missing = [], []
    for key in dict.fromkeys([*base.rows, *candidate.rows]):
        if key not in base.rows or key not in candidate.rows:
            missing.append(f"{name}: {'/'.join(key)} only in the {'base' if key in base.rows else 'candidate'}")
            continue
        for column, (rate, n) in base.rows[key].items():
            if column not in candidate.rows[key]:
                missing.append(f"{name}: {'/'.join(key)} {column} not in the candidate")
                continue
            other, m = candidate.rows[key][column]
            if m != n:
                raise GGIKError(f"{name}: {'/'.join(key)} has {n} goals in the base and {m} in the candidate")
            lo, hi = (100 * x for x in wilson_interval(round(rate * n / 100), n))
            verdict = "better" if other > hi + TIE else "worse" if other < lo - TIE else "level"
            c_lo, c_hi = (100 * x for x in wilson_interval(round(other * n / 100), n))
            verdicts.append(RowVerdict(name, key, column, n, rate, (lo, hi), other, (c_lo, c_hi), verdict))
    return verdicts, missing


def _better_needs(v: RowVerdict) -> str:
    """What the candidate needs for ``better`` on row ``v``: the smallest rate over its goals above the base's
    interval."""
    need = next((k for k in range(v.goals + 1) if 100 * k / v.goals > v.base_interval[1]), None)
    if need is None:
        return "better is out of reach (the base's interval reaches 100 %)"
    return f"better needs {100 * need / v.goals:.1f} % ({need}/{v.goals})"


def _row(v: RowVerdict) -> str:
    return (
        f"{'/'.join(v.key)} {v.column}: {v.candidate:.1f} % against {v.base:.1f} % "
        f"({v.base_interval[0]:.1f}-{v.base_interval[1]:.1f} %, {v.goals} goals)"
    )


def decide(
    verdicts: Sequence[RowVerdict],
    chiral: Sequence[str],
    chiral_tables: Sequence[str],
    not_compared: Sequence[str] = (),
) -> Decision:
    """The rule: no row worse, each chiral arm better in every row of ``chiral_tables`` naming it (rows keyed by the
    arm), every table compared. The reasons name each row that decides."""
    reasons = [f"worse: {v.table}: {_row(v)}" for v in verdicts if v.verdict == "worse"]
    for arm in chiral:
        rows = [v for v in verdicts if v.table in chiral_tables and arm in v.key]
        if not rows:
            reasons.append(f"chiral arm {arm}: not compared on {', '.join(chiral_tables) or 'no table'}")
        reasons += [
            f"chiral arm not better: {v.table}: {_row(v)}, {v.verdict}; {_better_needs(v)}"
            for v in rows
            if v.verdict != "better"
        ]
    reasons += [f"not compared: {what}" for what in not_compared]
    if not reasons:
        better = [f"{v.table}: {_row(v)}" for v in verdicts if v.table in chiral_tables and v.verdict == "better"]
        return Decision(True, ["no row worse; the chiral arms better: " + "; ".join(better)])
    return Decision(False, reasons)


def report(
    tables: dict[str, tuple[ResultTable, ResultTable]],
    verdicts: Sequence[RowVerdict],
    notes: Sequence[str],
    decision: Decision,
    command: str,
    chiral: Sequence[str] = (),
    max_rows: int = 24,
) -> str:
    """The markdown: per table its files, models and codes, counts and rows (a long table: its rows not level and
    the chiral arms' rows), then the decision and its reasons."""
    lines = [
        "# Ship by 95 % intervals: the candidate against the base",
        "",
        f"Command: `{command}`",
        "Models: base sha256 "
        + ", ".join(dict.fromkeys(b.model for b, _ in tables.values()))
        + "; candidate sha256 "
        + ", ".join(dict.fromkeys(c.model for _, c in tables.values())),
        f"Code: {code_version()} (this comparison; each table's own below)",
        "",
        "Verdict per row: better when the candidate's rate lies above the base's Wilson 95 % interval, worse "
        "below it, else level. The rule: no row worse, the chiral arms better on their tables.",
        "",
    ]
    for name, (base, cand) in tables.items():
        rows = [v for v in verdicts if v.table == name]
        counts = ", ".join(f"{sum(v.verdict == w for v in rows)} {w}" for w in ("better", "level", "worse"))
        lines += [
            f"## {name} ({base.kind}): {counts}",
            "",
            f"- base: `{base.folder}`, model sha256 {base.model}, code {base.code}",
            f"- candidate: `{cand.folder}`, model sha256 {cand.model}, code {cand.code}",
            "",
        ]
        shown = (
            rows
            if len(rows) <= max_rows
            else [v for v in rows if v.verdict != "level" or any(a in v.key for a in chiral)]
        )
        lines += [
            "| row | column | goals | base [%] (95 %) | candidate [%] (95 %) | verdict |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {'/'.join(v.key)} | {v.column} | {v.goals} | {v.base:.1f} ({v.base_interval[0]:.1f}-"
            f"{v.base_interval[1]:.1f}) | {v.candidate:.1f} ({v.candidate_interval[0]:.1f}-"
            f"{v.candidate_interval[1]:.1f}) | {v.verdict} |"
            for v in shown
        ]
        if len(shown) < len(rows):
            lines.append(f"\n{len(rows) - len(shown)} more rows, all level (every row: ship_decision.csv).")
        lines.append("")
    lines += ["## Decision: " + ("ship" if decision.ship else "not shipped"), ""]
    lines += [f"- {r}" for r in decision.reasons] + [""] + (["Notes:", ""] + [f"- {n}" for n in notes] if notes else [])
    return "\n".join(lines) + "\n"


def _pairs(specs: Sequence[str], what: str) -> dict[str, str]:
    out = {}
    for spec in specs:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not folder or name in out:
            raise GGIKError(f"{what}: expected distinct NAME=DIR, got {spec!r}")
        out[name] = folder
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", nargs="+", required=True, metavar="NAME=DIR", help="the base model's tables")
    p.add_argument("--candidate", nargs="+", required=True, metavar="NAME=DIR", help="the candidate's, same NAMEs")
    p.add_argument("--chiral", nargs="*", default=["panda", "irb140", "kr16_2"], help="arms that must be better")
    p.add_argument("--chiral-tables", nargs="*", help="NAMEs where they must be (default: the accuracy tables)")
    p.add_argument("--not-compared", nargs="*", default=[], metavar="WHAT", help="tables left out, and why")
    p.add_argument("--out", required=True, help="writes ship_decision.md and ship_decision.csv there")
    args = p.parse_args(argv)
    base, cand = _pairs(args.base, "--base"), _pairs(args.candidate, "--candidate")
    if set(base) != set(cand):
        raise GGIKError(f"--base names {sorted(base)} and --candidate names {sorted(cand)} differ")
    tables = {name: (read_table(base[name]), read_table(cand[name])) for name in base}
    notes, verdicts = [], []
    for name, (b, c) in tables.items():
        notes += same_goals(b, c)
        rows, missing = compare(name, b, c)
        verdicts += rows
        notes += missing
    chiral_tables = args.chiral_tables or [n for n, (b, _) in tables.items() if b.kind == "accuracy"]
    decision = decide(verdicts, args.chiral, chiral_tables, args.not_compared)
    command = "python -m benchmarks.handedness.ship_decision " + shlex.join(sys.argv[1:] if argv is None else argv)
    out = Path(args.out)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        ["table", "row", "column", "goals", "base [%]", "base 95% [%]", "candidate [%]", "candidate 95% [%]", "verdict"]
    )
    for v in verdicts:
        writer.writerow(
            [
                v.table,
                "/".join(v.key),
                v.column,
                v.goals,
                v.base,
                "{:.1f}-{:.1f}".format(*v.base_interval),
                v.candidate,
                "{:.1f}-{:.1f}".format(*v.candidate_interval),
                v.verdict,
            ]
        )
    atomic_write_text(out / "ship_decision.csv", buf.getvalue())
    atomic_write_text(out / "ship_decision.md", report(tables, verdicts, notes, decision, command, args.chiral))
    print(f"{'ship' if decision.ship else 'not shipped'}: " + "; ".join(decision.reasons))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except GGIKError as exc:
        raise SystemExit(f"ship_decision: error: {exc}") from None
