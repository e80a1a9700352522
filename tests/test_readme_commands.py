"""Every command of the README's ``bash`` blocks runs, as written, through the shell and the ``ggik`` console script,
in a scratch folder that sees the repository's files (so outputs land there, not in the checkout).

Commands that compute for minutes or hours run with a budget appended (later options override earlier ones in
argparse, so the command is the README's, only smaller); commands that need a GPU or run this suite are not run, each
with its reason, and the test checks that list is exactly what the README holds.

The work, not the time, is bounded: every command runs at a fixed size (its own arguments or the budget: goals,
samples, steps) and its output must show the work it did, counted (:data:`WORK`). Two have a budget of time of their
own, and the output shows what it decided: ``ggik adapt --minutes`` trains for that long and reports the steps (its
measurements of 100 + 100 goals before and after are fixed work), and a path search's ``--time-limit`` only stops new
rounds, which the output shows were not needed (the first round, which starts whatever the clock says, found the
path). No command is timed: under CI's load (.ci/under_load.sh) they take longer and pass alike.
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
    "bash train/gpu/paper_sitting.sh": "one call of a lent GPU (checked on the CPU path by tests/test_gpu_scripts.py)",
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


#: command prefix -> what its output must hold (a regular expression, ``^`` at any line): the work the command did,
#: counted, at the size it was given (the longest prefix of a command applies)
WORK = {
    "ggik solve --robot panda --pose": r"^panda: lm from 32 model samples, random restarts if they fail; \d+ listed",
    "ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0 --obstacles": r"^panda: lm from 32 model samples, .* among 3 "
    r"obstacles; \d+ listed",
    "ggik solve --robot ur10": r"^ur10: raw model samples; 8 listed",
    "ggik solve --robot panda --position": r'"goal": "position",\s+"strategy": "model-first",\s+"refine": "lm",\s+'
    r'"solved": true',
    # the path found in the first round of candidates: the time limit (no new round after it) decided nothing
    "ggik path": r"^panda: 21 waypoints [\s\S]*^  rounds of candidates: +1\n[\s\S]*^valid trajectory",
    "ggik robot show": r"^GGIK graph: RobotGraph\(panda, frames: 7 joints[\s\S]*^RobotGraph\(panda, canonical",
    "ggik info": r"^  step \d+[\s\S]*^wrote problems.pt: 40 problems[\s\S]*^1 reachable goals per robot .*, 8 samples "
    r"per goal",
    # the measurements (100 held-out goals, before and after) are fixed work; training ran for --minutes: its steps
    "ggik adapt": r"held-out raw success \(best of 32 .*, 100 goals .*\) [\d.]+% before, [\d.]+% after [\d.]+ min "
    r"\([\d,]+ steps, [\d,]+ examples\)",
    "ggik solve --ckpt": r"^ur5_robot: lm from 32 model samples",
    "ggik train --config": r"step 0/1\)[\s\S]*^stopped at step 1: .*\"examples\": 8,",
    "ggik train --resume": r"step 1/2\)[\s\S]*^stopped at step 2: .*\"examples\": 16,",
    "ggik train --init": r"step 0/1\)[\s\S]*^stopped at step 1: .*\"examples\": 8,",
    "python eval/plot_training.py": r"^wrote runs/default/curves.png",
    "ggik eval accuracy": r"\(2 goals per robot, 4 samples each\)",
    "ggik eval paper": r"\(2 goals per robot, best of 4 samples",
    "ggik eval seeding": r"4 starts per goal[\s\S]*^\| panda \| LM \| random \| 2 \|",
    "ggik eval generalisation": r"\(2 goals per robot, 4 samples each\)[\s\S]*mean over 1 of 1 robots",
    "ggik eval goals": r"\(2 goals per robot, 4 samples each\)",
    # every method valid in its first round (rounds: the last column): the 1 s time limit decided nothing
    "ggik eval paths": r"(^\| ur10_line \| ur10 \| 6 \| 100 \| [^|\n]+ \| True \|[^\n]*\| 1 \|\n){4}",
    "ggik eval conventions": r"\(2 pose goals per robot and file, 4 samples each\)",
}

#: [s] not a limit on speed, a guard against a hang (a deadlock): a command still running after this long is ended and
#: fails with its output, rather than stopping the suite. The slowest command, ggik adapt, takes ~40 s alone on one
#: thread; CI's passes have outer bounds of their own (.ci/lowered_cpu.sh, .ci/under_load.sh), `make test` has none.
HANG_GUARD_S = 3600


def _matching(table: dict[str, str], command: str) -> str | None:
    """The longest key of ``table`` that ``command`` starts with (None: none)."""
    return max((key for key in table if command.startswith(key)), key=len, default=None)


def test_the_commands_not_run_are_the_listed_ones():
    skipped = {key for key in NOT_RUN if any(c.startswith(key) for c in COMMANDS)}
    assert skipped == set(NOT_RUN), "NOT_RUN lists a command the README no longer has"
    budgeted = {key for key in BUDGETS if any(c.startswith(key) for c in COMMANDS)}
    assert budgeted == set(BUDGETS), "BUDGETS lists a command the README no longer has"
    run = [c for c in COMMANDS if not _matching(NOT_RUN, c)]
    assert not [c for c in run if not _matching(WORK, c)], "a command run without the work its output must show"
    assert {_matching(WORK, c) for c in run} == set(WORK), "WORK lists a command the README no longer has"


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A scratch folder with the repository's inputs linked in: commands read them and write beside them."""
    work = tmp_path_factory.mktemp("readme")
    for name in ("examples", "ggik", "train", "eval", "urdfs", "benchmarks"):
        (work / name).symlink_to(REPO / name)
    return work


def _run(command: str, workdir: Path) -> None:
    """Runs ``command`` (with its budget) in ``workdir``; it must succeed and its output show :data:`WORK`."""
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
    try:
        run = subprocess.run(
            ["bash", "-o", "pipefail", "-c", line],
            cwd=workdir,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
        )
    except subprocess.TimeoutExpired as hung:
        out = hung.stdout.decode(errors="replace") if isinstance(hung.stdout, bytes) else hung.stdout or ""
        pytest.fail(f"{line}\nstill running after {HANG_GUARD_S} s (hung?)\n{out[-2000:]}")
    # `| head` closes the pipe early: ggik then exits 141 (SIGPIPE), which pipefail reports; anything else is an error
    ok = run.returncode == 0 or (" | head" in line and run.returncode == 141)
    assert ok, f"{line}\nexit {run.returncode}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    assert "Traceback" not in run.stderr, run.stderr
    work = WORK[_matching(WORK, command) or ""]
    assert re.search(work, run.stdout, re.MULTILINE), (
        f"{line}\nthe output lacks the work done: {work}\n{run.stdout[-3000:]}"
    )


@pytest.mark.parametrize("block", range(len(BLOCKS)))
def test_readme_bash_block_runs(block: int, workdir: Path):
    commands = [c for c in BLOCKS[block] if not _matching(NOT_RUN, c)]
    if not commands:
        pytest.skip(f"bash block {block + 1}: {'; '.join(NOT_RUN[_matching(NOT_RUN, c) or ''] for c in BLOCKS[block])}")
    for command in commands:
        _run(command, workdir)
