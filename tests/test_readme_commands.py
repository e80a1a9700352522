"""Every command of the README's ``bash`` blocks runs, as written, through the shell and the ``ggik`` console script,
in a scratch folder that sees the repository's files (so outputs land there, not in the checkout).

Commands that compute for minutes or hours run with a budget appended (later options override earlier ones in
argparse, so the command is the README's, only smaller); commands that need a GPU or run this suite are not run, each
with its reason, and the test checks that list is exactly what the README holds.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
BIN = Path(sys.executable).parent  # the environment's console scripts (ggik) and python

#: command prefix -> what is appended: the README's command, at a size a test can afford
BUDGETS = {
    "ggik train --config": " --set steps=1 --set data.batch_size=8 --set val.every=0 --no-progress",
    "ggik train --resume": " --set steps=2 --no-progress",
    "ggik eval accuracy": " -n 2 -s 4 --robots panda --mmd-goals 2 --slsqp-goals 0 --no-progress",
    "ggik eval seeding": " -n 2 -s 4 --robots panda --mmd-goals 2 --slsqp-goals 1 --no-progress",
    "ggik eval generalisation": " -n 2 -s 4 --family-size 1 --dofs 6 --scales 0.1 --robots --no-progress",
    "ggik eval goals": " --robots panda -n 2 -s 4 --iknet-samples 1 --no-progress",
    "ggik eval paths": " --robots ur10 --paths ur10_line --time-limit 1 --no-figures --no-progress",
    "ggik eval conventions": " --robots panda -n 2 -s 4 --variants file --conventions canonical --no-progress",
    "ggik eval paper": " --robots panda -n 2 -s 4 --no-progress",
    "ggik adapt": " --minutes 0.05 --no-progress",
    "ggik train --init": " --set steps=1 --set data.batch_size=8 --set val.every=0 --no-progress",
}

#: command prefix -> why the test does not run it
NOT_RUN = {
    "make demo": "the Makefile's set-up (a fresh .venv); its ggik demo runs below",
    "make test": "runs this test suite",
    "torchrun": "DDP on CUDA GPUs",
    "bash train/gpu/train_on_gpu.sh": "a GPU machine's time-boxed training",
    "bash eval/ship_default.sh": "the whole suite, 10 minutes alone on the machine; its commands run below, smaller",
    "ggik view": "a server that runs until Ctrl-C (tests/test_view.py starts it on a free port and drives it)",
}


def _blocks() -> list[list[str]]:
    """The command lines of each of the README's bash blocks, comments stripped; a block's commands run in order (a
    training run, then its resumption and its curves)."""
    blocks = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.DOTALL):
        lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
        blocks.append([line for line in lines if line])
    return blocks


BLOCKS = _blocks()
COMMANDS = [command for block in BLOCKS for command in block]


def _matching(table: dict[str, str], command: str) -> str | None:
    return next((key for key in table if command.startswith(key)), None)


def test_the_commands_not_run_are_the_listed_ones():
    skipped = {key for key in NOT_RUN if any(c.startswith(key) for c in COMMANDS)}
    assert skipped == set(NOT_RUN), "NOT_RUN lists a command the README no longer has"
    budgeted = {key for key in BUDGETS if any(c.startswith(key) for c in COMMANDS)}
    assert budgeted == set(BUDGETS), "BUDGETS lists a command the README no longer has"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A scratch folder with the repository's inputs linked in: commands read them and write beside them."""
    work = tmp_path_factory.mktemp("readme")
    for name in ("examples", "ggik", "train", "eval", "urdfs", "benchmarks"):
        (work / name).symlink_to(REPO / name)
    return work


def _run(command: str, workdir: Path) -> None:
    budget = _matching(BUDGETS, command)
    parts = re.split(r"( \| | && )", command, maxsplit=1)
    if budget is not None:  # the budget goes after the first command's own options, before a pipe or &&
        parts[0] += BUDGETS[budget]
    line = "".join(parts)
    # One intra-op thread per command, as in this suite's own process (conftest.py): CI runs this test beside busy
    # loops (.ci/under_load.sh), where two OpenMP threads wait on each other at every barrier and a command of 30 s
    # alone took over 300 s. The commands are the README's; only the machine's thread count is the test's.
    threads = {name: "1" for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")}
    env = {**os.environ, **threads, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line], cwd=workdir, env=env, capture_output=True, text=True, timeout=300
    )
    # `| head` closes the pipe early: ggik then exits 141 (SIGPIPE), which pipefail reports; anything else is an error
    ok = run.returncode == 0 or (" | head" in line and run.returncode == 141)
    assert ok, f"{line}\nexit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr


@pytest.mark.parametrize("block", range(len(BLOCKS)))
def test_readme_bash_block_runs(block: int, workdir: Path):
    commands = [c for c in BLOCKS[block] if not _matching(NOT_RUN, c)]
    if not commands:
        pytest.skip(f"bash block {block + 1}: {'; '.join(NOT_RUN[_matching(NOT_RUN, c) or ''] for c in BLOCKS[block])}")
    for command in commands:
        _run(command, workdir)
