"""Committed results say what they measured and on which code: every result table's header names its model (a sha256
prefix, or a line saying why no model file applies), and a run on a checkout with uncommitted changes says so, naming
the files, in the code version its tables record."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import benchmarks.common.scripts as scripts
from ggik.evaluation.report import Table, describe_checkout

REPO = Path(__file__).resolve().parents[1]
#: the result tables: Markdown under benchmarks/*/results and eval/results (each CSV has its .md beside it)
TABLES = sorted([*REPO.glob("benchmarks/*/results/**/*.md"), *REPO.glob("eval/results/**/*.md")])
#: a header that names its model: a sha256 prefix, or a "Model:" line (also "Model: none (...)", "Model: ... gone")
NAMES_MODEL = re.compile(r"sha256 `?[0-9a-f]{12}|^(> )?Model: \S", re.MULTILINE)


def header(path: Path) -> str:
    """The lines of a result file above its first table row."""
    lines = path.read_text(encoding="utf-8").splitlines()
    end = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    return "\n".join(lines[:end])


def test_every_result_table_names_its_model():
    assert len(TABLES) >= 100, "the glob finds the result tables"
    missing = [str(p.relative_to(REPO)) for p in TABLES if not NAMES_MODEL.search(header(p))]
    assert not missing, f"result tables whose header names no model (sha256 or a 'Model:' line): {missing}"


def test_a_result_of_uncommitted_code_says_what_was_uncommitted():
    """Committed results come from committed code: a header recording a ``-dirty`` code version carries a note
    ("> Uncommitted at the run: ...") saying what was uncommitted, or that it is not known, and whether it was rerun.
    A new result of a dirty checkout fails here until rerun on committed code."""
    unexplained = [
        str(p.relative_to(REPO))
        for p in TABLES
        if re.search(r"git [0-9a-f]{7,}-dirty", header(p)) and "\n> Uncommitted at the run: " not in header(p)
    ]
    assert not unexplained, f"results of uncommitted code (rerun them on committed code): {unexplained}"


def _git(cwd: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", *who, *args], cwd=cwd, check=True, capture_output=True)


def test_a_dirty_checkout_names_its_uncommitted_files(tmp_path, capsys):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.md").write_text("doc\n")
    _git(tmp_path, "add", "a.py", "b.md")
    _git(tmp_path, "commit", "-q", "-m", "c")
    clean = describe_checkout(tmp_path)
    assert re.fullmatch(r"ggik \S+, git [0-9a-f]{7,}", clean) and capsys.readouterr().err == ""
    (tmp_path / "a.py").write_text("x = 2\n")
    (tmp_path / "new.py").write_text("untracked: not a change of the commit's code\n")
    dirty = describe_checkout(tmp_path)
    assert dirty == clean + "-dirty (uncommitted: a.py)"
    assert "uncommitted changes (a.py)" in capsys.readouterr().err


def test_a_study_of_the_shipped_model_names_it(tmp_path, capsys):
    """``--ckpt`` left at None (the shipped model) still gives the table a model line."""

    def one_row(_command: str) -> Table:
        table = Table("t", ["a"])
        table.add(1)
        return table

    for shipped, expected in ((True, "Model: shipped ggik/weights/"), (False, None)):
        scripts.run_table_script(scripts.__file__, [], 0, one_row, None, tmp_path / "t", shipped_if_none=shipped)
        text = (tmp_path / "t.md").read_text()
        if expected:
            assert expected in text and NAMES_MODEL.search(header(tmp_path / "t.md")), text
        else:
            assert "Model:" not in text, text  # a table of no model
    capsys.readouterr()
