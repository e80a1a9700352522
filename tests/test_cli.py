"""The ggik command line (one robot resolver, the command groups, the demo library behind ``ggik demo``), and the
committed graphs/ JSON files against a rebuild."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ggik.cli import main
from ggik.cli.robots import resolve_robot, resolve_robots
from ggik.errors import GGIKError
from ggik.kinematics import Robot, available_robots

REPO = Path(__file__).resolve().parents[1]


def _close(a, b, tol: float = 1e-9) -> bool:
    """Structural equality of JSON values with a tolerance on numbers."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and isinstance(a, (int, float)) and abs(a - b) <= tol
    return a == b


@pytest.mark.parametrize("name", available_robots())
def test_committed_graph_json_matches_rebuild(name, tmp_path):
    assert main(["graph", "build", name, "-o", str(tmp_path / "g.json")]) == 0
    rebuilt = json.loads((tmp_path / "g.json").read_text())
    committed = json.loads((REPO / "graphs" / f"{name}.json").read_text())
    assert _close(rebuilt, committed), f"graphs/{name}.json is stale: run `ggik graph build --all -o graphs/`"


def test_graph_build_all_writes_one_file_per_robot(tmp_path):
    assert main(["graph", "build", "--all", "-o", str(tmp_path)]) == 0
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == sorted(available_robots())
    assert not list(tmp_path.glob(".*.tmp")), "atomic writes must not leave temporary files"


def test_robot_show_prints_chain_and_graph(capsys):
    assert main(["robot", "show", "panda"]) == 0
    out = capsys.readouterr().out
    assert "panda_joint7" in out and "7 DOF" in out and "18 nodes" in out


def test_robot_show_urdf_file_with_links(capsys):
    urdf = REPO / "urdfs" / "irb140.urdf"
    assert main(["robot", "show", str(urdf), "--base", "link_1", "--ee", "link_6"]) == 0
    out = capsys.readouterr().out
    assert "link_1 -> link_6, 5 DOF" in out


def test_robot_show_refused_graph_is_reported(tmp_path, capsys):
    urdf = tmp_path / "slider.urdf"
    urdf.write_text(
        '<robot name="slider"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="lift" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        '<limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>'
        '<joint name="turn" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
    )
    assert main(["robot", "show", str(urdf)]) == 0
    out = capsys.readouterr().out
    assert "cannot be represented" in out and "'lift'" in out and "lock" in out


def test_unknown_robot_is_a_clean_error(capsys):
    assert main(["robot", "show", "no_such_robot"]) == 2
    err = capsys.readouterr().err
    assert "neither a URDF file nor a shipped robot" in err


def test_missing_urdf_file_is_a_clean_error(capsys, tmp_path):
    assert main(["graph", "show", str(tmp_path / "missing.urdf")]) == 2
    assert "not found" in capsys.readouterr().err


DEMO_SMALL = ["demo", "--seed", "3", "--goals", "2", "--samples", "4", "--show", "2"]


def test_demo_solves_with_the_shipped_model(tmp_path, capsys):
    out_png = tmp_path / "demo" / "solutions.png"
    assert main(DEMO_SMALL + ["--out", str(out_png)]) == 0
    out = capsys.readouterr().out
    assert "ggik demo: the shipped model" in out
    assert "panda (7 DOF, a training robot)" in out and "ur10 (6 DOF, a training robot)" in out
    assert "random7_seed7010 (7 DOF, a random robot the model never saw" in out
    assert out.count("raw samples:") == 3 and out.count("LM-refined:") == 3
    rows = [line for line in out.splitlines() if line.count("|") == 3 and line.endswith("]") and "goal" not in line]
    assert 3 * 2 <= len(rows) <= 3 * 2 * 2  # 3 robots x 2 goals x 1..2 distinct solutions listed
    pytest.importorskip("matplotlib")
    assert f"figure: {out_png}" in out
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_without_matplotlib_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import and find_spec then fail as if not installed
    assert main(["demo", "--goals", "1", "--samples", "2", "--show", "1", "--out", str(tmp_path / "s.png")]) == 0
    assert "no figure: matplotlib is not installed" in capsys.readouterr().out
    assert not (tmp_path / "s.png").exists()


def test_demo_counts_a_zero_weight_robot_as_unseen(tmp_path, capsys, monkeypatch):
    """A named robot kept with weight 0 (leave-one-out training) was not trained on, as in ggik eval generalisation."""
    import ggik.ik.solver

    original = ggik.ik.solver.GGIK.pretrained.__func__

    def pretrained(cls, device="cpu"):
        solver = original(cls, device)
        trained = solver.checkpoint["training_robots"]
        solver.checkpoint = {**solver.checkpoint, "training_robots": {**trained, "named": {**trained["named"], "panda": 0.0}}}
        return solver

    monkeypatch.setattr(ggik.ik.solver.GGIK, "pretrained", classmethod(pretrained))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no figure: faster
    assert main(["demo", "--goals", "1", "--samples", "2", "--show", "1", "--out", str(tmp_path / "s.png")]) == 0
    out = capsys.readouterr().out
    assert "panda (7 DOF, NOT among this model's training robots)" in out and "ur10 (6 DOF, a training robot)" in out


@pytest.mark.parametrize("extra, message", [(["--goals", "0"], "must be at least 1"), (["--out", "x.jpg"], "must end in .png")])
def test_demo_bad_options(extra, message, capsys):
    assert main(["demo"] + extra) == 2
    assert message in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- the robot resolver
def _revolute(name: str, parent: str, child: str, xyz: str, axis: str) -> str:
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>')


#: a torso (j1, j2) with two arms: "left" (4 more joints, EE left_tool) and "right" (3 more, EE right_tip)
TWO_ARMS = "".join([
    '<robot name="two_arms">',
    "".join(f'<link name="{n}"/>' for n in ("root", "t1", "t2", "l1", "l2", "l3", "l4", "left_tool", "r1", "r2", "r3")),
    _revolute("j1", "root", "t1", "0 0 0.3", "0 0 1"),
    _revolute("j2", "t1", "t2", "0 0 0.2", "0 1 0"),
    _revolute("left_1", "t2", "l1", "0 0.2 0.1", "1 0 0"),
    _revolute("left_2", "l1", "l2", "0 0.3 0", "0 0 1"),
    _revolute("left_3", "l2", "l3", "0 0.25 0", "1 0 0"),
    _revolute("left_4", "l3", "l4", "0 0.1 0.05", "0 1 0"),
    '<joint name="left_flange" type="fixed"><parent link="l4"/><child link="left_tool"/><origin xyz="0 0.08 0"/></joint>',
    _revolute("right_1", "t2", "r1", "0 -0.2 0.1", "1 0 0"),
    _revolute("right_2", "r1", "r2", "0 -0.3 0", "0 0 1"),
    _revolute("right_3", "r2", "r3", "0 -0.25 0", "1 0 0"),
    "</robot>",
])


@pytest.fixture
def two_arms(tmp_path) -> str:
    path = tmp_path / "two_arms.urdf"
    path.write_text(TWO_ARMS)
    return str(path)


def test_resolve_robot_shipped_name():
    robot = resolve_robot("panda")
    assert robot.name == "panda" and robot.dof == 7
    assert robot.joint_names == Robot.from_name("panda").joint_names


def test_resolve_robot_urdf_with_base_and_ee(two_arms):
    with pytest.raises(GGIKError, match="end-effector link is ambiguous"):
        resolve_robot(two_arms)
    left = resolve_robot(two_arms, ee="left_tool")
    assert (left.base_link, left.ee_link, left.dof) == ("root", "left_tool", 6)
    right = resolve_robot(two_arms, base="t2", ee="r3")
    assert right.joint_names == ("right_1", "right_2", "right_3") and right.base_link == "t2"


@pytest.mark.parametrize("base, ee", [("panda_link0", None), (None, "panda_link8")])
def test_resolve_robot_chain_links_of_a_shipped_robot_are_an_error(base, ee):
    with pytest.raises(GGIKError, match=r"--base/--ee apply to URDF files; 'panda' is a shipped robot"):
        resolve_robot("panda", base, ee)


def test_resolve_robot_unknown_spec_lists_the_shipped_robots():
    with pytest.raises(GGIKError, match="neither a URDF file nor a shipped robot") as info:
        resolve_robot("no_such_robot")
    assert all(name in str(info.value) for name in available_robots())


def test_resolve_robots_applies_links_to_the_urdf_files_only(two_arms):
    robots = resolve_robots(["ur10", two_arms], ee="r3")
    assert [r.name for r in robots] == ["ur10", "two_arms"] and robots[1].dof == 5
    with pytest.raises(GGIKError, match="--base/--ee apply to the URDF files among --robots, and none was named"):
        resolve_robots(["ur10"], ee="r3")


def test_cli_robot_show_needs_the_ee_of_a_two_branch_urdf(two_arms, capsys):
    assert main(["robot", "show", two_arms]) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert main(["robot", "show", two_arms, "--ee", "left_tool"]) == 0
    assert "root -> left_tool, 6 DOF" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- --base/--ee of eval and data
GEN_TINY = ["-n", "2", "-s", "2", "--dofs", "--scales", "--no-progress"]


def test_eval_generalisation_on_a_two_branch_urdf(tiny_ckpt, two_arms, tmp_path, capsys):
    out_dir = str(tmp_path / "res")
    assert main(["eval", "generalisation", tiny_ckpt, "--robots", two_arms, *GEN_TINY, "--out-dir", out_dir]) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert main(["eval", "generalisation", tiny_ckpt, "--robots", two_arms, "--ee", "left_tool", *GEN_TINY,
                 "--out-dir", out_dir]) == 0
    out = capsys.readouterr().out
    assert "two_arms" in out and f"wrote {out_dir}/generalisation.md" in out
    assert "--ee left_tool" in (tmp_path / "res" / "generalisation.md").read_text()  # the command is recorded


@pytest.mark.parametrize("argv", [["eval", "generalisation", "--ee", "x"], ["eval", "limits", "--robots", "ur10", "--base", "x"],
                                  ["data", "make", "--robots", "ur10", "--ee", "x", "-o", "never.pt"]])
def test_links_without_a_urdf_file_are_an_error(argv, capsys):
    assert main(argv) == 2
    assert "--base/--ee apply to the URDF files among --robots" in capsys.readouterr().err


def test_data_make_with_the_ee_of_a_two_branch_urdf(two_arms, tmp_path, capsys):
    out = tmp_path / "p.pt"
    assert main(["data", "make", "--robots", "ur10", two_arms, "--ee", "r3", "-n", "3", "-o", str(out)]) == 0
    assert "6 problems, robots ['ur10', 'two_arms']" in capsys.readouterr().out
    from ggik.data import ProblemSet

    problems = ProblemSet.load(out)
    assert problems.robot_index.tolist() == [0, 0, 0, 1, 1, 1]


def test_solve_urdf_with_ee_and_shipped_robot_with_links(tiny_ckpt, two_arms, capsys):
    pose = ["0.3", "0.2", "0.5", "1", "0", "0", "0"]
    assert main(["solve", "--urdf", two_arms, "--ee", "left_tool", "--pose", *pose, "-n", "2", "--ckpt", tiny_ckpt]) == 0
    assert capsys.readouterr().out.startswith("two_arms: 2 solutions (raw model samples), best first")
    assert main(["solve", "--robot", "panda", "--ee", "panda_link8", "--pose", *pose, "--ckpt", tiny_ckpt]) == 2
    assert "is a shipped robot with a fixed chain" in capsys.readouterr().err
    assert main(["solve", "--urdf", "no_such_file", "--pose", *pose, "--ckpt", tiny_ckpt]) == 2
    assert "URDF file not found: no_such_file" in capsys.readouterr().err


def test_python_m_ggik_cli_help():
    run = subprocess.run([sys.executable, "-m", "ggik.cli", "--help"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: ggik ") and "{robot,graph,train,data,solve,path,eval,info,export,demo}" in run.stdout


# ---------------------------------------------------------------------------------------------- the demo library
def test_demo_library_returns_what_the_cli_prints(tmp_path, capsys, monkeypatch):
    from ggik.evaluation.demo import figure_panels, run_demo
    from ggik.ik.solver import GGIK

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no figure: faster
    assert main(DEMO_SMALL + ["--out", str(tmp_path / "d.png")]) == 0
    out = capsys.readouterr().out
    cases = list(run_demo(GGIK.pretrained(), goals=2, samples=4, show=2, seed=3))
    assert [c.subject.robot.name for c in cases] == ["panda", "ur10", "random7_seed7010"]
    blocks = out.split("\n\n")[1:4]  # after the header: one block per robot
    for case, block in zip(cases, blocks):
        lines = block.splitlines()
        assert lines[0] == f"{case.subject.robot.name} ({case.subject.robot.dof} DOF, {case.subject.seen})"
        assert lines[1].endswith(f"on {case.raw_goals_paper}/2 goals, within the strict tolerances on {case.raw_goals_strict}/2")
        assert lines[2].endswith(f"; {case.lm_goals_solved}/2 goals solved, {case.lm_samples_solved}/8 samples, "
                                 f"distinct solutions per goal: {case.distinct_per_goal}")
        rows = lines[4:]
        assert len(rows) == sum(max(len(r), len(m)) for r, m in zip(case.listed_raw, case.listed_lm))
        printed_q = [json.loads(re.sub(r"\s+", "", row[row.rindex("["):])) for row in rows if row.endswith("]")]
        listed_q = [[round(v, 2) for v in case.lm.q[b, k].tolist()] for b in range(2) for k in case.listed_lm[b]]
        assert printed_q == listed_q
        assert case.T_goal.shape == (2, 4, 4) and case.raw.q.shape == case.lm.q.shape == (2, 4, case.subject.robot.dof)
    panels = figure_panels(cases)
    assert [p.title.split(":")[0] for p in panels] == ["panda", "ur10", "random7_seed7010 (unseen)"] * 2
    assert all(p.q.ndim == 2 and 1 <= p.q.shape[0] <= 8 and p.T_goal.shape == (4, 4) for p in panels)
