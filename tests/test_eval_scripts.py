"""The suite's script in eval/ (the training-curve figure): a thin command line that answers --help."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_eval_scripts_are_the_suites_only():
    assert sorted(p.name for p in (REPO / "eval").glob("*.py")) == ["plot_training.py"]


def test_plot_training_answers_help():
    done = run("eval/plot_training.py", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:") and "--fit-after" in done.stdout
