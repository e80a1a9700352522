"""The result tables :mod:`benchmarks.handedness.ship_decision` compares, read from their folders.

A folder holds one table: the files ``ggik eval accuracy / paper / conventions / generalisation`` write (a CSV and its
Markdown header with the lines ``Command:``, ``Model:`` and ``Code:``), or the ``results.json`` of
``benchmarks.adapt.run_study``. :func:`read_table` gives its rows {key: {success column: (rate [%], goals)}}, the
options of its command that define the goals and samples, its code version and its model's sha256 prefix.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from ggik.errors import GGIKError

__all__ = ["FILES", "KEYS", "OPTIONAL_KEYS", "IGNORED", "ALIASES", "DEFAULTS", "ResultTable", "read_table"]

#: the tables' files: kind -> (table file, header file)
FILES = {
    "accuracy": ("accuracy.csv", "accuracy.md"),
    "paper": ("paper_protocol.csv", "paper_protocol.md"),
    "conventions": ("conventions.csv", "conventions.md"),
    "generalisation": ("generalisation.csv", "generalisation.md"),
    "adapt": ("results.json", "results.json"),
}
#: the columns naming a row, per kind
KEYS = {
    "accuracy": ("robot",),
    "paper": ("robot",),
    "conventions": ("robot", "file variant"),
    "generalisation": ("family", "robot"),
    "adapt": ("arm",),
}
#: key columns a kind's tables have since some version (the paper's: a row per method since 24c3c8f)
OPTIONAL_KEYS = {"paper": ("method",)}
#: options that change neither the goals nor the samples judged
IGNORED = {"--ckpt", "--out-dir", "--threads", "--no-progress", "--figure", "--mmd-goals", "--slsqp-goals"}
ALIASES = {"-n": "--goals", "-s": "--samples"}
DEFAULTS = {"--seed": ("0",)}
ADAPT_COLUMNS = {"base_test_success": "held-out before [%]", "test_success": "held-out final [%]"}


@dataclass
class ResultTable:
    """One result table: ``rows`` {key: {success column: (rate [%], goals)}} and its header.

    ``command``: the command's options that define the goals (:func:`_goal_options`; for adapt its config);
    ``code``: the git version of the code that ran (``-dirty`` kept); ``model``: the model's sha256 prefix."""

    kind: str
    folder: Path
    command: dict[str, tuple[str, ...]]
    code: str
    model: str
    rows: dict[tuple[str, ...], dict[str, tuple[float, int]]] = field(default_factory=dict)
    keys: tuple[str, ...] = ()  #: the columns naming a row


def _kind(folder: Path) -> str:
    kinds = [k for k, (data, head) in FILES.items() if (folder / data).is_file() and (folder / head).is_file()]
    if len(kinds) != 1:
        raise GGIKError(f"{folder}: expected the files of one result table ({sorted(FILES)}), found {kinds or 'none'}")
    return kinds[0]


def _goal_options(command: str, where: Path) -> dict[str, tuple[str, ...]]:
    """The options of ``ggik eval KIND ...`` that define its goals and samples: {option: values}, aliases resolved,
    :data:`IGNORED` dropped, :data:`DEFAULTS` filled; a positional argument (an old checkpoint form) dropped."""
    words = shlex.split(command)
    if "eval" not in words or words.index("eval") + 1 >= len(words):
        raise GGIKError(f"{where}: its command is no `ggik eval KIND ...`: {command!r}")
    i = words.index("eval")
    out: dict[str, tuple[str, ...]] = {"eval": (words[i + 1],)}
    option, values = "", []
    for word in [*words[i + 2 :], "--"]:
        if word.startswith("-") and not re.fullmatch(r"-?[0-9.]+", word):
            if option and option not in IGNORED:
                out[option] = tuple(values)
            option, values = ALIASES.get(word, word), []
        elif option:
            values.append(word)
    return {**DEFAULTS, **out}


def _rate_goals(cell: str, goals: int, where: str) -> tuple[float, int]:
    """(rate [%], goals) of a success cell [%]: the rate of the whole number of successes it stands for, GGIKError
    where it stands for none."""
    successes = float(cell) * goals / 100
    if goals < 1 or abs(successes - round(successes)) > 1e-6 * goals:
        raise GGIKError(f"{where}: {cell} % is no whole number of successes out of {goals} goals")
    return 100 * round(successes) / goals, goals


def read_table(folder: str | Path) -> ResultTable:
    """The result table in ``folder`` (its kind from the files there, :data:`FILES`); GGIKError naming the file when
    its header or columns are not those of a ggik result table."""
    folder = Path(folder)
    kind = _kind(folder)
    data, head = (folder / f for f in FILES[kind])
    if kind == "adapt":
        return _read_adapt(data)
    text = head.read_text(encoding="utf-8")
    fields = {m[1]: m[2] for m in re.finditer(r"^(Command|Model|Code): (.*)$", text, re.M)}
    command, model, code = (
        re.search(p, fields.get(f, ""))
        for f, p in (("Command", r"`(.*)`"), ("Model", r"sha256 ([0-9a-f]+)"), ("Code", r"git ([0-9a-f]+(?:-dirty)?)"))
    )
    if not (command and model and code):
        raise GGIKError(
            f"{head}: expected the header lines 'Command: `...`', 'Model: ... (sha256 ...)' and "
            "'Code: ggik ..., git HASH'"
        )
    rows = list(csv.DictReader(io.StringIO(data.read_text(encoding="utf-8"))))
    columns = [
        c
        for c in (rows[0] if rows else {})
        if "success" in c
        and c.endswith("[%]")
        and not c.startswith("paper")
        and "goals within" not in c
        and "goals outside" not in c
    ]
    keys = KEYS[kind] + tuple(k for k in OPTIONAL_KEYS.get(kind, ()) if rows and k in rows[0])
    if not rows or not columns or any(k not in rows[0] for k in keys):
        raise GGIKError(f"{data}: expected the columns {list(keys)} and a success column [%]")
    table = ResultTable(kind, folder, _goal_options(command[1], head), code[1], model[1], keys=keys)
    title = re.search(r"\((\d+) (?:pose )?goals per robot", text)
    for row in rows:
        goals = int(row["goals"]) if "goals" in row else int(title[1]) if title else 0
        if kind == "generalisation" and row["robot"] == "(family mean)":
            goals *= sum(r["family"] == row["family"] and r["robot"] != "(family mean)" for r in rows)
        key = tuple(row[k] for k in keys)
        table.rows[key] = {
            c: _rate_goals(row[c], goals, f"{data}: {key} {c}") for c in columns if row[c] not in ("", "nan", "n/a")
        }
    return table


def _read_adapt(path: Path) -> ResultTable:
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
        runs = list(results["runs"].values())
        config = {k: (json.dumps(v),) for k, v in runs[0]["config"].items() if k != "threads"}
        if any(run["config"] != runs[0]["config"] for run in runs):
            raise GGIKError(f"{path}: its runs have different configs; compare one recipe's runs")
        table = ResultTable(
            "adapt", path.parent, config, str(results["code"]), str(results["base"]["sha256"]), keys=KEYS["adapt"]
        )
        for run in runs:
            n = int(run["config"]["test_problems"])
            table.rows[(run["arm"],)] = {
                column: _rate_goals(str(100 * float(run[k])), n, f"{path}: {run['arm']}")
                for k, column in ADAPT_COLUMNS.items()
            }
    except GGIKError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, json.JSONDecodeError) as exc:
        raise GGIKError(f"{path}: not a results.json of benchmarks.adapt.run_study ({exc!r})") from None
    return table
