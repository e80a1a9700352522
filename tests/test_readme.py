"""The README a user meets first: short, no project history, its Python example runs, and every result table it cites
exists and names the model it measured (file, sha256 prefix, step) and the code version."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_is_short_and_has_no_history():
    assert len(README.splitlines()) <= 250
    assert not re.search(r"\bissue\s*#?\d+", README, re.IGNORECASE)
    assert not re.search(r"\bv[1-5]\b", README), "model history belongs in MODEL_CARD.md"
    assert (REPO / "MODEL_CARD.md").is_file() and (REPO / "benchmarks" / "README.md").is_file()


def test_every_cited_table_names_its_model_and_code():
    cited = sorted(set(re.findall(r"eval/results/[\w/]+\.md", README)))
    assert cited, "the README cites its tables"
    for path in cited:
        text = (REPO / path).read_text(encoding="utf-8")
        header = "\n".join(text.splitlines()[:8])
        assert re.search(r"^Model: .*\(sha256 [0-9a-f]{12}, step [\d,]+", header, re.MULTILINE), path
        assert re.search(r"^Code: ggik \S+, git [0-9a-f]{7,}\s*$", header, re.MULTILINE), f"{path}: not committed code"


def test_every_python_block_runs_as_written(monkeypatch):
    """Each python block in a fresh namespace, from the repository root (as the README's reader runs it)."""
    blocks = re.findall(r"```python\n(.*?)```", README, re.DOTALL)
    assert len(blocks) >= 2
    monkeypatch.chdir(REPO)
    spaces = []
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - the README's own examples
        spaces.append(namespace)
    kinematics = next(ns for ns in spaces if "J" in ns)
    q = kinematics["q"]
    assert tuple(kinematics["J"].shape) == (q.shape[0], 6, q.shape[1])
    assert kinematics["points"].shape[:1] == q.shape[:1]
    result, first = spaces[0]["result"], spaces[0]["first"]
    assert tuple(result.q.shape) == (4, 32, 7) and bool(result.success[:, 0].all())
    assert bool(first.success[:, 0].all())


@pytest.mark.parametrize("command", re.findall(r"^\| `(ggik [a-z]+)", README, re.MULTILINE))
def test_every_command_of_the_table_exists(command, capsys):
    from ggik.cli import main

    with pytest.raises(SystemExit) as done:
        main([command.split()[1], "--help"])
    assert done.value.code == 0 and "usage: ggik" in capsys.readouterr().out
