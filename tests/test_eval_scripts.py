"""The suite's scripts in eval/ (the path suite's generator, the training-curve figure): thin command lines that
answer --help and turn a bad number into a usage error."""

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
    assert sorted(p.name for p in (REPO / "eval").glob("*.py")) == ["make_paths.py", "plot_training.py"]


def test_plot_training_answers_help():
    done = run("eval/plot_training.py", "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:") and "--fit-after" in done.stdout


def test_make_paths_refuses_zero_threads(tmp_path):
    done = run("eval/make_paths.py", "--threads", "0", "--out", str(tmp_path))
    assert done.returncode == 2 and "argument --threads: must be an integer >= 1, got 0" in done.stderr
    assert "Traceback" not in done.stderr and not list(tmp_path.iterdir())
