"""The numbers the README quotes for the shipped model are the committed ones.

"Where the model stands" names the shipped weights with a sha256 prefix and quotes a table drawn from
``eval/results/accuracy/accuracy.md`` and ``eval/results/seeding/seeding.md``. Here: the prefix is the weights
file's sha256, both tables' headers name that model (and the code the README names), and every quoted number is the
tables' value (success percentages exactly, the rest as rounded to the digits quoted). Columns and rows are found by
their names, so reordering them breaks nothing; a column the README adds that is not mapped here fails, so that no
quoted number goes unchecked.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
WEIGHTS = "ggik/weights/ggik_default.pt"
SECTION = "Where the model stands"
SOURCES = {"accuracy": "eval/results/accuracy/accuracy.md", "seeding": "eval/results/seeding/seeding.md"}

#: README column (regex on its header) -> per quoted number: (source table, row kind, source column regex); and
#: whether the numbers must be equal (success percentages: the tables give them in full) rather than rounded
LM_GGIK, LM_RANDOM = ("LM", "GGIK"), ("LM", "random")
COLUMNS = [
    (r"^raw success", [("accuracy", None, r"^success")], True),
    (r"^best of \d+, mean", [("accuracy", None, r"^pos min \[mm\]")], False),
    (r"^LM success", [("seeding", LM_GGIK, r"^success"), ("seeding", LM_RANDOM, r"^success")], True),
    (
        r"^LM iterations",
        [("seeding", LM_GGIK, r"^mean iterations"), ("seeding", LM_RANDOM, r"^mean iterations")],
        False,
    ),
    (
        r"^time per goal",
        [
            ("seeding", LM_GGIK, r"^time per goal"),
            ("seeding", LM_GGIK, r"^of which sampling"),
            ("seeding", LM_RANDOM, r"^time per goal"),
        ],
        False,
    ),
]


def section(text: str, title: str) -> str:
    """The text of the Markdown section ``## title`` (to the next ``## `` heading)."""
    match = re.search(rf"^## {re.escape(title)}\s*$(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"README.md has no section '## {title}'"
    return match.group(1)


def tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """The Markdown tables of ``text``: (header cells, body rows of cells), the separator row dropped."""
    found, block = [], []
    for line in text.splitlines() + [""]:
        if line.strip().startswith("|"):
            block.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif block:
            header, *body = block
            body = [row for row in body if not all(re.fullmatch(r":?-+:?", c) for c in row)]
            assert all(len(row) == len(header) for row in body), f"a ragged table under {header}"
            found.append((header, body))
            block = []
    return found


def column(header: list[str], pattern: str, where: str) -> int:
    hits = [k for k, name in enumerate(header) if re.search(pattern, name)]
    assert len(hits) == 1, f"{where}: {len(hits)} columns match {pattern!r} in {header}"
    return hits[0]


def numbers(cell: str) -> list[str]:
    """The numbers written in a cell, as written ("12.8 (12.6) / 1.0 ms" -> ["12.8", "12.6", "1.0"])."""
    return re.findall(r"\d+(?:\.\d+)?", cell.replace(",", ""))


def agrees(quoted: str, value: float, exact: bool) -> bool:
    """``quoted`` is ``value`` (exact), or ``value`` rounded to the digits ``quoted`` shows."""
    if exact:
        return float(quoted) == value
    digits = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted) - value) <= 0.5 * 10.0**-digits + 1e-9


def sha_in(line: str) -> str:
    match = re.search(r"sha256 `?([0-9a-f]{6,64})`?", line)
    assert match, f"no sha256 prefix in {line!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def stands() -> str:
    return section(README.read_text(encoding="utf-8"), SECTION)


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return {name: (ROOT / path).read_text(encoding="utf-8") for name, path in SOURCES.items()}


def readme_sha(stands: str) -> str:
    """The sha256 prefix the README gives for the shipped weights (`ggik/weights/ggik_default.pt` (... sha256 `...`)."""
    match = re.search(rf"`{re.escape(WEIGHTS)}`[^`]*?sha256 `([0-9a-f]{{6,64}})`", stands)
    assert match, f"the README's '{SECTION}' names no sha256 prefix for {WEIGHTS}"
    return match.group(1)


def test_readme_quotes_the_sha256_of_the_shipped_weights(stands):
    quoted = readme_sha(stands)
    actual = hashlib.sha256((ROOT / WEIGHTS).read_bytes()).hexdigest()
    assert actual.startswith(quoted), f"README quotes sha256 {quoted}, {WEIGHTS} has {actual[: len(quoted)]}"


def test_the_cited_tables_measured_that_model_with_that_code(stands, sources):
    quoted_sha = readme_sha(stands)
    # "with the code at `abc1234`" (every table), or "`abc1234` (accuracy) and `def5678` (seeding)" (per table)
    per_table = dict((name, commit) for commit, name in re.findall(r"`([0-9a-f]{7,40})` \((\w+)\)", stands))
    single = re.search(r"with the code at `([0-9a-f]{7,40})`", stands)
    for name, text in sources.items():
        code = per_table.get(name) or (single.group(1) if single else None)
        assert SOURCES[name] in stands, f"the README's '{SECTION}' does not cite {SOURCES[name]}"
        model = re.search(r"^Model: (.*)$", text, re.MULTILINE)
        assert model, f"{SOURCES[name]} has no 'Model:' line"
        assert WEIGHTS in model.group(1), f"{SOURCES[name]} measured {model.group(1)!r}, not {WEIGHTS}"
        assert sha_in(model.group(1)) == quoted_sha, (
            f"{SOURCES[name]} measured sha256 {sha_in(model.group(1))}, the README quotes {quoted_sha}"
        )
        assert code, f"the README's '{SECTION}' names no code version for {SOURCES[name]}"
        git = re.search(r"^Code: .*\bgit ([0-9a-f]{7,40})", text, re.MULTILINE)
        assert git, f"{SOURCES[name]} names no git commit"
        a, b = sorted((code, git.group(1)), key=len)
        assert b.startswith(a), f"{SOURCES[name]} was run at git {git.group(1)}, the README says {code}"


def test_readme_table_rows_agree_with_the_cited_tables(stands, sources):
    found = tables(stands)
    assert found, f"the README's '{SECTION}' has no table"
    header, rows = found[0]
    parsed = {}
    for name, text in sources.items():
        assert tables(text), f"{SOURCES[name]} has no table"
        parsed[name] = tables(text)[0]
    _, acc_rows = parsed["accuracy"]
    seed_header, seed_rows = parsed["seeding"]
    solver, starts = (column(seed_header, rf"^{c}$", SOURCES["seeding"]) for c in ("solver", "starts"))
    by_row = {
        "accuracy": {(r[0],): r for r in acc_rows},
        "seeding": {(r[0], r[solver], r[starts]): r for r in seed_rows},
    }
    readme_robots = [r[0] for r in rows]
    assert readme_robots and sorted(readme_robots) == sorted(r[0] for r in acc_rows), (
        f"the README quotes robots {readme_robots}, {SOURCES['accuracy']} has {[r[0] for r in acc_rows]}"
    )
    unmapped = [c for c in header[1:] if not any(re.search(p, c) for p, _, _ in COLUMNS)]
    assert not unmapped, f"README columns {unmapped} are not checked here: map them in COLUMNS"
    problems, checked = [], 0
    for pattern, wanted, exact in COLUMNS:
        k = column(header, pattern, "README")
        for row in rows:
            robot, quoted = row[0], numbers(row[k])
            if len(quoted) != len(wanted):
                problems.append(
                    f"row {robot!r}, {header[k]!r}: {len(quoted)} numbers in {row[k]!r}, {len(wanted)} wanted"
                )
                continue
            for q, (source, kind, src_pattern) in zip(quoted, wanted):
                src_header = parsed[source][0]
                key = (robot,) + (kind or ())
                assert key in by_row[source], f"{SOURCES[source]} has no row {key}"
                src = by_row[source][key][column(src_header, src_pattern, SOURCES[source])]
                checked += 1
                if not agrees(q, float(src), exact):
                    problems.append(
                        f"row {robot!r}, {header[k]!r}: README {q} vs {SOURCES[source]} {' / '.join(key)} "
                        f"{src_header[column(src_header, src_pattern, SOURCES[source])]!r} {src}"
                    )
    assert not problems, "the README's table disagrees with its sources:\n" + "\n".join(problems)
    assert checked == len(rows) * sum(len(w) for _, w, _ in COLUMNS)


def _exact_table() -> dict[tuple[str, str], dict[str, str]]:
    import csv

    text = (ROOT / "benchmarks/dg_budget/results/exact_table.csv").read_text(encoding="utf-8")
    return {(r["arm"], r["method"]): r for r in csv.DictReader(text.splitlines())}


def test_the_exact_samples_bullet_quotes_its_table():
    """ "Exact samples": the Panda's share, the training arms' range (model + DG), what DG + LM adds and the time ratio
    to raw sampling, as ``benchmarks/dg_budget/results/exact_table.csv`` has them."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    bullet = re.search(r"\*\*Exact samples\*\*.*?(?= - \*\*)", text).group(0)
    t = _exact_table()
    arms = sorted({a for a, _ in t})
    training = [a for a in arms if t[(a, "raw")]["family"] == "training"]
    dg = [float(t[(a, "model + DG")]["strict_per_sample_pct"]) for a in training]
    assert f"makes {min(dg):.0f}-{max(dg):.0f} % of the samples strict on the training arms" in bullet
    assert f"(Panda {float(t[('panda', 'model + DG')]['strict_per_sample_pct']):.1f} %)" in bullet
    gain = [
        float(t[(a, "model + DG + LM")]["strict_per_sample_pct"]) - float(t[(a, "model + DG")]["strict_per_sample_pct"])
        for a in arms
    ]
    assert f"+{min(gain):.1f}-{max(gain):.0f} points" in bullet
    redundant = [float(t[(a, "model + DG")]["distinct_strict_per_goal"]) for a in arms if t[(a, "raw")]["dof"] == "7"]
    assert f"{min(redundant):.0f}-{max(redundant):.0f} distinct solutions per goal on 7-DOF arms" in bullet
    ratio = [float(t[(a, "model + DG")]["ms_per_goal"]) / float(t[(a, "raw")]["ms_per_goal"]) for a in arms]
    assert f"{min(ratio):.1f}-{max(ratio):.1f}x the raw time" in bullet


def test_the_paths_paragraph_quotes_the_collision_models_run():
    """CppFlow's problems kept clear of each collision model: the valid runs the README quotes are the run's."""
    import csv

    text = (ROOT / "benchmarks/cppflow/results/models/models.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    rows = [r for r in rows if r["problem"] != "all"]  # the 13 problems, not the summary row
    assert len(rows) == 13

    def valid(model: str, prefix: str = "") -> int:
        column = f"{model}: valid runs (CppFlow's rules)"
        return sum(int(r[column].split("/")[0]) for r in rows if r["problem"].startswith(prefix))

    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f"capsules: {valid('cppflow file')} of 130" in text
    assert f"SRDFs: {valid('fitted + padding')} (Panda {valid('fitted + padding', 'panda')} of 30)" in text
    assert f"of the default model: {valid('default')}." in text
