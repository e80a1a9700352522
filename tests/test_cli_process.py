"""The command line as a user meets it: every command here runs as a process, through the ``ggik`` console script
(or ``bash -c`` for pipes), and the test reads its exit status, stdout and stderr.

One test per finding of a new user's first session: a solution by default, exit status 1 without one, obstacle
output that says which obstacle and which link, ``--threads`` everywhere, errors that name the flag, output that
pipes, distinct solutions only, path output numbered from 1, files only where asked, start-up without torch.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ggik import random_robot

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
GGIK = str(BIN / "ggik")
POSE = ["0.4", "0.1", "0.5", "0", "1", "0", "0"]  # the README's first goal: reachable for the Panda
FAR = ["2.0", "0.1", "0.5", "0", "1", "0", "0"]  # 2 m away: beyond the Panda's reach
SCENE = str(REPO / "examples" / "scene.yaml")
WAYPOINTS = str(REPO / "examples" / "waypoints.csv")

pytestmark = [
    pytest.mark.skipif(not Path(GGIK).is_file(), reason="the ggik console script is not installed here"),
    pytest.mark.timing,  # every test runs processes
]


def ggik(*args: str, cwd: Path | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``ggik ARGS`` as a process: exit status, stdout, stderr."""
    return subprocess.run([GGIK, *args], capture_output=True, text=True, cwd=cwd or REPO, timeout=timeout)


def shell(line: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """A shell pipeline with the console script on PATH."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, cwd=cwd or REPO, env=env, timeout=120)


def clean(run: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in run.stderr and "Exception ignored" not in run.stderr, run.stderr


# ---------------------------------------------------------------------------------------------- 1, 2, 8: solve
def test_solve_gives_distinct_solutions_by_default_and_exit_0():
    run = ggik("solve", "--robot", "panda", "--pose", *POSE)
    clean(run)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("panda: lm from 32 model samples, random restarts if they fail")
    match = re.fullmatch(r"(\d+) distinct solutions? within 1 mm / 0\.573 deg, within the joint limits", lines[-1])
    assert match, lines[-1]
    rows = [line for line in lines if re.match(r"^ +\d+ ", line)]
    assert len(rows) == int(match.group(1)) >= 1
    assert [int(r.split()[0]) for r in rows] == list(range(1, len(rows) + 1))  # numbered from 1
    assert all(r.split()[3] == "yes" for r in rows)  # every listed row is a solution


def test_solve_without_a_solution_exits_1_and_says_so():
    run = ggik("solve", "--robot", "panda", "--pose", *FAR)
    clean(run)
    assert run.returncode == 1
    assert re.search(r"^no solution within 1 mm / 0\.573 deg: closest \d+\.\d mm / \d+\.\d+ deg$", run.stdout, re.M)
    data = ggik("solve", "--robot", "panda", "--pose", *FAR, "--json")
    assert data.returncode == 1
    out = json.loads(data.stdout)
    assert out["solved"] is False and out["summary"].startswith("no solution") and 1 <= len(out["solutions"]) <= 3


def test_solve_lists_each_solution_once():
    """-s 8 --strategy samples: LM from 8 samples often lands on one solution several times; it is listed once."""
    run = ggik("solve", "--robot", "panda", "--pose", *POSE, "-s", "8", "--strategy", "samples", "--json")
    assert run.returncode == 0, run.stderr
    qs = [row["q"] for row in json.loads(run.stdout)["solutions"]]
    for i in range(len(qs)):
        for j in range(i):
            distance = sum((a - b) ** 2 for a, b in zip(qs[i], qs[j])) ** 0.5
            assert distance >= 0.1, (i, j, distance)
    every = json.loads(ggik(*["solve", "--robot", "panda", "--pose", *POSE, "-s", "8"], "--strategy", "samples",
                            "--json", "--all").stdout)["solutions"]  # fmt: skip
    assert len(every) == 8 and len(qs) <= 8


def test_raw_samples_are_judged_by_the_papers_tolerances():
    run = ggik("solve", "--robot", "ur10", "--pose", "0.6", "0.2", "0.4", "0", "1", "0", "0", "--raw", "-s", "8")
    clean(run)
    assert run.stdout.splitlines()[0] == "ur10: raw model samples; " + run.stdout.splitlines()[0].split("; ")[1]
    assert re.search(r"raw samples? within 10 mm / 1 deg", run.stdout.splitlines()[-1])


# ---------------------------------------------------------------------------------------------- 3, 4: obstacles
def test_obstacle_and_self_clearance_are_separate_and_the_pairs_named():
    run = ggik("solve", "--robot", "panda", "--pose", *POSE, "--obstacles", SCENE)
    clean(run)
    assert run.returncode == 0, run.stderr
    assert "obstacle [mm]" in run.stdout and "self [mm]" in run.stdout
    pairs = re.search(r"closest pairs of #1: (panda_link\d) - (boxes|spheres|capsules)\[0\] \(obstacle\), "
                      r"panda_link\d - panda_link\d \(self\)", run.stdout)  # fmt: skip
    assert pairs, run.stdout
    data = json.loads(ggik("solve", "--robot", "panda", "--pose", *POSE, "--obstacles", SCENE, "--json").stdout)
    row = data["solutions"][0]
    assert row["obstacle_clearance_m"] != row["self_clearance_m"]  # no longer one number for both


def test_a_scene_in_the_robot_everywhere_is_refused_up_front(tmp_path):
    scene = tmp_path / "column.yaml"
    scene.write_text("capsules: [{a: [0, 0, 0], b: [0, 0, 0.5], radius: 0.04}]\n")  # inside the base column
    for command in (["solve", "--pose", *POSE], ["path", "--path", WAYPOINTS]):
        run = ggik(command[0], "--robot", "panda", *command[1:], "--obstacles", str(scene))
        clean(run)
        assert run.returncode == 2 and run.stdout == ""
        assert re.search(
            rf"--obstacles {re.escape(str(scene))}: the robot overlaps an obstacle in every one of 256 random "
            r"configurations \(panda_link\d - capsules\[0\]",
            run.stderr,
        ), run.stderr


#: ``python -c CLOCKED STEP ARGS...``: ``ggik ARGS`` as a process whose path search runs on a clock that reads STEP
#: seconds later at every reading (``PathConfig.clock``; 0: a clock at rest), so that how long the search takes, and
#: so whether its progress bar shows, is the clock's and not this machine's
CLOCKED = """import functools, itertools, sys
import ggik.cli.path
from ggik.cli import main
step, ticks = float(sys.argv[1]), itertools.count()
ggik.cli.path.PathConfig = functools.partial(ggik.cli.path.PathConfig, clock=lambda: step * next(ticks))
sys.exit(main(sys.argv[2:]))
"""


def ggik_clocked(step: float, *args: str) -> subprocess.CompletedProcess:
    """``ggik ARGS`` as a process, its path search on the clock of :data:`CLOCKED`."""
    return subprocess.run(
        [sys.executable, "-c", CLOCKED, str(step), *args], capture_output=True, text=True, cwd=REPO, timeout=120
    )


def test_a_long_path_search_shows_progress(tmp_path):
    """1,200 waypoints 1-1.6 m away, out of reach: rounds of search until the time limit, the bar on stderr once the
    search has run a second (short searches print nothing). Its clock reads half a second later at every reading (a
    round reads it about eight times), so the search runs past a second and ends at the time limit whatever the
    machine's speed; on a clock at rest an easy path prints no bar."""
    rows = "".join(f"{1.0 + 0.0005 * k:.4f},0,0.5,0,1,0,0\n" for k in range(1200))
    (tmp_path / "far.csv").write_text("x,y,z,qw,qx,qy,qz\n" + rows)
    run = ggik_clocked(0.5, "path", "--robot", "panda", "--path", str(tmp_path / "far.csv"), "-s", "0",
                       "--time-limit", "10")  # fmt: skip
    clean(run)
    assert run.returncode == 1
    assert "path search" in run.stderr and "1200 waypoints failing" in run.stderr
    assert "time to the first valid trajectory [s]:" in run.stdout and "never (no valid trajectory)" in run.stdout
    assert "waypoints not reached (tolerance or limits): 1-1200" in run.stdout  # numbered from 1
    rounds = int(re.search(r"rounds of candidates: +(\d+)", run.stdout).group(1))
    assert 2 <= rounds < 6  # the time limit (10 s of the clock), not max_rounds, ended it
    quiet = ggik_clocked(0.0, "path", "--robot", "panda", "--path", WAYPOINTS, "-s", "0")
    clean(quiet)
    assert quiet.returncode == 0 and quiet.stderr == ""  # a search under a second: no bar


# ---------------------------------------------------------------------------------------------- 5, 6: vocabulary
def test_threads_is_taken_by_solve_and_path():
    assert ggik("solve", "--robot", "panda", "--pose", *POSE, "--threads", "1").returncode == 0
    assert ggik("path", "--robot", "panda", "--path", WAYPOINTS, "--threads", "1", "--json").returncode == 0
    bad = ggik("solve", "--robot", "panda", "--pose", *POSE, "--threads", "0")
    assert bad.returncode == 2 and "argument --threads: must be a positive integer, got 0" in bad.stderr


TWO_LEAVES = """<robot name="fork"><link name="base"/><link name="l1"/><link name="a"/><link name="b"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="ja" type="revolute"><parent link="l1"/><child link="a"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="jb" type="revolute"><parent link="l1"/><child link="b"/><origin xyz="0 0 0.3"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>"""


def _prismatic_arm(tmp_path: Path) -> tuple[str, str]:
    """A random 6-DOF arm whose third joint slides: (file, joint name)."""
    robot = random_robot(6, 3)
    name = robot.joint_names[2]
    text = robot.to_urdf()
    text = re.sub(rf'(<joint name="{name}" type=")revolute"', r'\1prismatic"', text)
    limits = rf'(<joint name="{name}".*?<limit lower=")[^"]*(" upper=")[^"]*"'
    text = re.sub(limits, r'\g<1>0\g<2>0.2"', text, flags=re.S)
    path = tmp_path / "slider.urdf"
    path.write_text(text)
    return str(path), name


def test_errors_name_the_flag_the_user_typed(tmp_path):
    cases = [
        (["solve", "--robot", "panda", "--pose", *POSE, "--raw", "--first-solution"],
         "--first-solution stops LM at a goal's first solution; --raw runs no LM"),
        (["solve", "--robot", "panda", "--pose", "nan", *POSE[1:]],
         "--pose X Y Z QW QX QY QZ: every value must be a finite number"),
        (["path", "--robot", "panda", "--path", WAYPOINTS, "--start", "0", "0", "0", "0", "0", "0", "0"],
         "--start must be one configuration within the joint limits: panda_joint4 = 0 outside [-3.0718, -0.0698]"),
    ]  # fmt: skip
    fork = tmp_path / "fork.urdf"
    fork.write_text(TWO_LEAVES)
    ambiguous = "the end-effector link is ambiguous: give --ee LINK"
    cases.append((["solve", "--urdf", str(fork), "--pose", *POSE], ambiguous))
    slider, joint = _prismatic_arm(tmp_path)
    cases.append(
        (["solve", "--urdf", slider, "--pose", *POSE], f"joint {joint!r} is prismatic; the model takes revolute joints")
    )
    for args, message in cases:
        run = ggik(*args)
        clean(run)
        assert run.returncode == 2 and run.stderr.startswith("ggik: error: "), (args, run.stderr)
        assert message in run.stderr, (args, run.stderr)
        assert not re.search(r"\b(ee_link=|robot\.lock|SolveConfig|T_goal)", run.stderr), run.stderr
    # and the way out the message names works: --lock fixes the sliding joint, the model then solves
    locked = ggik("solve", "--urdf", slider, "--lock", f"{joint}=0.1", "--pose", *POSE, "--json")
    clean(locked)
    assert locked.returncode in (0, 1) and json.loads(locked.stdout)["joint_names"].count(joint) == 0
    bad_lock = ggik("solve", "--urdf", slider, "--lock", f"{joint}", "--pose", *POSE)
    assert bad_lock.returncode == 2 and "--lock " in bad_lock.stderr and "JOINT=VALUE" in bad_lock.stderr


# ---------------------------------------------------------------------------------------------- 7: pipes
@pytest.mark.parametrize(
    "line", ["ggik solve --robot panda --pose 0.4 0.1 0.5 0 1 0 0 --all | head -3", "ggik graph show panda | head -2"]
)
def test_output_pipes_without_a_traceback(line):
    run = shell(line)
    clean(run)
    assert run.returncode == 0 and len(run.stdout.splitlines()) <= 3 and run.stderr == ""


# ---------------------------------------------------------------------------------------------- 10: files
def test_no_file_is_written_where_the_user_did_not_ask(tmp_path):
    run = ggik("demo", "-n", "1", "-s", "2", "--show", "1", cwd=tmp_path)
    clean(run)
    assert run.returncode == 0 and "no figure (--out FILE.png draws the solutions)" in run.stdout
    assert list(tmp_path.iterdir()) == []
    run = ggik("eval", "limits", "--robots", "panda", "-n", "2", "-s", "2", "--no-progress", cwd=tmp_path)
    clean(run)
    assert run.returncode == 0
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["ggik-results/limits/limits.csv", "ggik-results/limits/limits.md"]
    assert "default: ggik-results/accuracy in the working directory" in " ".join(
        ggik("eval", "accuracy", "--help").stdout.split()
    )


def test_eval_writes_its_tables_without_matplotlib(tmp_path):
    """matplotlib blocked in the process: the accuracy table is written, the figures skipped with a note."""
    code = (
        "import sys; sys.modules['matplotlib'] = None; from ggik.cli import main; "
        "sys.exit(main(['eval', 'accuracy', '--robots', 'panda', '-n', '2', '-s', '2', '--mmd-goals', '2', "
        "'--slsqp-goals', '0', '--no-progress', '--out-dir', 'out']))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    clean(run)
    assert run.returncode == 0, run.stderr
    assert "figures skipped: matplotlib is not installed" in run.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["accuracy.csv", "accuracy.md"]


# ---------------------------------------------------------------------------------------------- 11, 12
def test_info_prints_the_provenance_as_a_chain():
    run = ggik("info", "ggik/weights/ggik_default.pt")
    clean(run)
    assert run.returncode == 0
    assert "initialised from (newest first; a path names the file as it was then):" in run.stdout
    chain = re.findall(r"^    (\d+)\. (\S+) \(", run.stdout, re.M)
    assert [int(k) for k, _ in chain] == list(range(1, len(chain) + 1)) and len(chain) >= 2
    assert "{" not in run.stdout.split("initialised from")[1].split("model config")[0]  # no nested JSON


def test_help_imports_no_torch():
    code = "import sys; from ggik.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
    code += "assert 'torch' not in sys.modules, 'ggik --help imported torch'"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr


def test_a_path_output_that_cannot_be_written_is_bad_input_before_the_search(tmp_path):
    run = ggik("path", "--robot", "panda", "--path", WAYPOINTS, "-s", "0", "--out", str(tmp_path))
    clean(run)
    assert run.returncode == 2 and f"--out {tmp_path}: not a file in an existing folder" in run.stderr
    empty = tmp_path / "empty.yaml"
    empty.write_text("boxes: []\n")
    data = ggik("path", "--robot", "panda", "--path", WAYPOINTS, "-s", "0", "--obstacles", str(empty), "--json")
    clean(data)
    out = json.loads(data.stdout, parse_constant=lambda c: pytest.fail(f"not JSON: {c}"))
    assert data.returncode == 0 and out["obstacle_pair"] == "" and out["obstacle_clearance_mm"] is None
