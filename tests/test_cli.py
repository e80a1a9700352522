"""The ggik command line (one robot resolver, the command groups, the demo library behind ``ggik demo``), and the
committed graphs/ JSON files against a rebuild."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ggik.cli import main
from ggik.cli.robots import resolve_robot, resolve_robots
from ggik.errors import GGIKError
from ggik.kinematics import Robot, available_robots
from ggik.kinematics.geometry import matrix_to_quat

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


@pytest.mark.parametrize("convention,folder", [("frames", "graphs"), ("canonical", "graphs/canonical")])
@pytest.mark.parametrize("name", available_robots())
def test_committed_graph_json_matches_rebuild(name, convention, folder, tmp_path):
    assert main(["graph", "build", name, "--convention", convention, "-o", str(tmp_path / "g.json")]) == 0
    rebuilt = json.loads((tmp_path / "g.json").read_text())
    committed = json.loads((REPO / folder / f"{name}.json").read_text())
    assert committed["convention"] == convention
    assert _close(rebuilt, committed), (
        f"{folder}/{name}.json is stale: run `ggik graph build --all --convention {convention} -o {folder}/`"
    )


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
    import ggik.solver

    original = ggik.solver.GGIK.pretrained.__func__

    def pretrained(cls, device="cpu"):
        solver = original(cls, device)
        trained = solver.checkpoint["training_robots"]
        solver.checkpoint = {
            **solver.checkpoint,
            "training_robots": {**trained, "named": {**trained["named"], "panda": 0.0}},
        }
        return solver

    monkeypatch.setattr(ggik.solver.GGIK, "pretrained", classmethod(pretrained))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no figure: faster
    assert main(["demo", "--goals", "1", "--samples", "2", "--show", "1", "--out", str(tmp_path / "s.png")]) == 0
    out = capsys.readouterr().out
    assert "panda (7 DOF, NOT among this model's training robots)" in out and "ur10 (6 DOF, a training robot)" in out


def test_demo_bad_options(capsys):
    assert main(["demo", "--out", "x.jpg"]) == 2
    assert "must end in .png" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- the robot resolver
def _revolute(name: str, parent: str, child: str, xyz: str, axis: str) -> str:
    return (
        f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit lower="-2.5" upper="2.5" effort="1" velocity="1"/></joint>'
    )


#: a torso (j1, j2) with two arms: "left" (4 more joints, EE left_tool) and "right" (3 more, EE right_tip)
TWO_ARMS = "".join(
    [
        '<robot name="two_arms">',
        "".join(
            f'<link name="{n}"/>' for n in ("root", "t1", "t2", "l1", "l2", "l3", "l4", "left_tool", "r1", "r2", "r3")
        ),
        _revolute("j1", "root", "t1", "0 0 0.3", "0 0 1"),
        _revolute("j2", "t1", "t2", "0 0 0.2", "0 1 0"),
        _revolute("left_1", "t2", "l1", "0 0.2 0.1", "1 0 0"),
        _revolute("left_2", "l1", "l2", "0 0.3 0", "0 0 1"),
        _revolute("left_3", "l2", "l3", "0 0.25 0", "1 0 0"),
        _revolute("left_4", "l3", "l4", "0 0.1 0.05", "0 1 0"),
        '<joint name="left_flange" type="fixed"><parent link="l4"/><child link="left_tool"/>'
        '<origin xyz="0 0.08 0"/></joint>',
        _revolute("right_1", "t2", "r1", "0 -0.2 0.1", "1 0 0"),
        _revolute("right_2", "r1", "r2", "0 -0.3 0", "0 0 1"),
        _revolute("right_3", "r2", "r3", "0 -0.25 0", "1 0 0"),
        "</robot>",
    ]
)


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


# ----------------------------------------------------------------------------------------- --base/--ee of eval and data
GEN_TINY = ["-n", "2", "-s", "2", "--dofs", "--scales", "--no-progress"]


def test_eval_generalisation_on_a_two_branch_urdf(tiny_ckpt, two_arms, tmp_path, capsys):
    out_dir = str(tmp_path / "res")
    argv = ["eval", "generalisation", "--ckpt", tiny_ckpt, "--robots", two_arms, *GEN_TINY, "--out-dir", out_dir]
    assert main(argv) == 2
    assert "ambiguous" in capsys.readouterr().err
    assert (
        main(
            [
                "eval",
                "generalisation",
                "--ckpt",
                tiny_ckpt,
                "--robots",
                two_arms,
                "--ee",
                "left_tool",
                *GEN_TINY,
                "--out-dir",
                out_dir,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "two_arms" in out and f"wrote {out_dir}/generalisation.md" in out
    assert "--ee left_tool" in (tmp_path / "res" / "generalisation.md").read_text()  # the command is recorded


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "generalisation", "--ee", "x"],
        ["eval", "limits", "--robots", "ur10", "--base", "x"],
        ["data", "make", "--robots", "ur10", "--ee", "x", "-o", "never.pt"],
    ],
)
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
    assert (
        main(["solve", "--urdf", two_arms, "--ee", "left_tool", "--pose", *pose, "-s", "2", "--ckpt", tiny_ckpt]) == 0
    )
    assert capsys.readouterr().out.startswith("two_arms: lm from 2 model samples, random restarts if they fail;")
    assert main(["solve", "--robot", "panda", "--ee", "panda_link8", "--pose", *pose, "--ckpt", tiny_ckpt]) == 2
    assert "is a shipped robot with a fixed chain" in capsys.readouterr().err
    assert main(["solve", "--urdf", "no_such_file", "--pose", *pose, "--ckpt", tiny_ckpt]) == 2
    assert "URDF file not found: no_such_file" in capsys.readouterr().err


def test_python_m_ggik_cli_help():
    run = subprocess.run(
        [sys.executable, "-m", "ggik.cli", "--help"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert run.returncode == 0, run.stderr
    from ggik.cli.commands import COMMANDS

    assert run.stdout.startswith("usage: ggik ")
    for command in COMMANDS:  # every command listed with its one-line help
        assert re.search(rf"^    {command.name} +{re.escape(command.help.split()[0])}", run.stdout, re.M), command


# ---------------------------------------------------------------------------------------------- the demo library
def test_demo_library_returns_what_the_cli_prints(tmp_path, capsys, monkeypatch):
    from ggik.evaluation.demo import figure_panels, run_demo
    from ggik.solver import GGIK

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no figure: faster
    assert main(DEMO_SMALL + ["--out", str(tmp_path / "d.png")]) == 0
    out = capsys.readouterr().out
    cases = list(run_demo(GGIK.pretrained(), goals=2, samples=4, show=2, seed=3))
    assert [c.subject.robot.name for c in cases] == ["panda", "ur10", "random7_seed7010"]
    blocks = out.split("\n\n")[1:4]  # after the header: one block per robot
    for case, block in zip(cases, blocks):
        lines = block.splitlines()
        assert lines[0] == f"{case.subject.robot.name} ({case.subject.robot.dof} DOF, {case.subject.seen})"
        assert lines[1].endswith(
            f"on {case.raw_goals_paper}/2 goals, within the strict tolerances on {case.raw_goals_strict}/2"
        )
        assert lines[2].endswith(
            f"; {case.lm_goals_solved}/2 goals solved, {case.lm_samples_solved}/8 samples, "
            f"distinct solutions per goal: {case.distinct_per_goal}"
        )
        rows = lines[4:]
        assert len(rows) == sum(max(len(r), len(m)) for r, m in zip(case.listed_raw, case.listed_lm))
        printed_q = [json.loads(re.sub(r"\s+", "", row[row.rindex("[") :])) for row in rows if row.endswith("]")]
        listed_q = [[round(v, 2) for v in case.lm.q[b, k].tolist()] for b in range(2) for k in case.listed_lm[b]]
        assert printed_q == listed_q
        assert case.T_goal.shape == (2, 4, 4) and case.raw.q.shape == case.lm.q.shape == (2, 4, case.subject.robot.dof)
    panels = figure_panels(cases)
    assert [p.title.split(":")[0] for p in panels] == ["panda", "ur10", "random7_seed7010 (unseen)"] * 2
    assert all(p.q.ndim == 2 and 1 <= p.q.shape[0] <= 8 and p.T_goal.shape == (4, 4) for p in panels)


# ---------------------------------------------------------------------------------------------- one vocabulary
#: every command with counts of goals and samples: -n is the goals, -s the samples (with the long names beside)
VOCABULARY = {
    ("data", "make"): {"-n": "n"},
    ("demo",): {"-n": "goals", "-s": "samples"},
    ("eval", "accuracy"): {"-n": "n", "-s": "samples"},
    ("eval", "seeding"): {"-n": "n", "-s": "samples"},
    ("eval", "limits"): {"-n": "n", "-s": "samples"},
    ("eval", "generalisation"): {"-n": "n", "-s": "samples"},
    ("eval", "goals"): {"-n": "n", "-s": "samples"},
    ("eval", "paths"): {"-s": "samples"},
    ("solve",): {"-s": "samples"},
    ("path",): {"-s": "samples"},
}


def _subparser(words: tuple[str, ...]):
    from ggik.cli import build_parser

    parser = build_parser()
    for word in words:
        action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        parser = action.choices[word]
    return parser


@pytest.mark.parametrize("words", list(VOCABULARY), ids=lambda w: " ".join(w))
def test_n_counts_goals_and_s_samples_in_every_command(words):
    parser = _subparser(words)
    options = {o: a for a in parser._actions for o in a.option_strings}
    for flag, dest in VOCABULARY[words].items():
        action = options[flag]
        assert action.dest == dest
        long = {"-n": "--goals", "-s": "--samples"}[flag]
        assert long in action.option_strings, f"{' '.join(words)} {flag}: no {long}"
    if "-n" not in VOCABULARY[words]:  # the old spelling of -s was removed in 0.2.0 (CHANGELOG.md)
        assert "-n" not in options
    if "-s" in VOCABULARY[words]:
        assert re.search(r"-s (S|SAMPLES), --samples (S|SAMPLES)", parser.format_help())


@pytest.mark.parametrize(
    "argv, message",
    [
        (["demo", "--threads", "-1"], r"argument --threads: must be a positive integer, got -1"),
        (["demo", "-n", "0"], r"argument -n/--goals: must be a positive integer, got 0"),
        (["demo", "-s", "-2"], r"argument -s/--samples: must be a positive integer, got -2"),
        (["demo", "--show", "x"], r"argument --show: expected an integer, got 'x'"),
        (["data", "make", "-n", "0", "-o", "x.pt"], r"argument -n/--goals: must be a positive integer, got 0"),
        (["data", "make", "--random", "0", "-o", "x.pt"], r"argument --random: must be a positive integer, got 0"),
        (["eval", "accuracy", "-n", "0"], r"argument -n/--goals: must be a positive integer, got 0"),
        (["eval", "seeding", "--random-starts", "0"], r"argument --random-starts: must be a positive integer"),
        (["eval", "limits", "--threads", "-3"], r"argument --threads: must be a positive integer, got -3"),
        (
            ["eval", "generalisation", "--scales", "0.1", "-0.2"],
            r"argument --scales: must be a positive number, got -0.2",
        ),
        (["eval", "goals", "-s", "0"], r"argument -s/--samples: must be a positive integer, got 0"),
        (["eval", "paths", "--chains", "0"], r"argument --chains: must be a positive integer, got 0"),
        (["eval", "paths", "--time-limit", "nan"], r"argument --time-limit: must be a positive number, got nan"),
        (
            ["solve", "--robot", "panda", "--position", "0.4", "0", "0.5", "-s", "0"],
            r"argument -s/--samples: must be a positive integer, got 0",
        ),
        (
            ["solve", "--robot", "panda", "--position", "0.4", "0", "0.5", "--pos-tol", "0"],
            r"argument --pos-tol: must be a positive number, got 0",
        ),
        (
            ["solve", "--robot", "panda", "--position", "0.4", "0", "0.5", "--strategy", "cascade"],
            r"argument --strategy: invalid choice: 'cascade'",
        ),
        (["train", "--max-minutes", "0"], r"argument --max-minutes: must be a positive number, got 0"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_bad_values_are_argparse_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err


def _threaded_commands() -> dict[tuple[str, ...], object]:
    """Every ggik command (its words) whose parser takes --threads, with that parser."""
    from ggik.cli import build_parser

    found = {}
    todo: list[tuple[tuple[str, ...], object]] = [((), build_parser())]
    while todo:
        words, parser = todo.pop()
        for action in parser._actions:
            if action.__class__.__name__ == "_SubParsersAction":
                todo += [(words + (word,), sub) for word, sub in action.choices.items()]
            elif "--threads" in action.option_strings:
                found[words] = parser
    return found


THREADED = _threaded_commands()


def _every_command() -> set[tuple[str, ...]]:
    """The words of every ggik command that runs something (the parsers without subcommands)."""
    from ggik.cli import build_parser

    found = set()
    todo: list[tuple[tuple[str, ...], object]] = [((), build_parser())]
    while todo:
        words, parser = todo.pop()
        subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        if not subs:
            found.add(words)
        todo += [(words + (word,), sub) for action in subs for word, sub in action.choices.items()]
    return found


def test_every_command_takes_threads():
    commands = _every_command()
    assert {("solve",), ("path",), ("train",), ("demo",), ("eval", "paths"), ("graph", "show")} <= commands
    assert set(THREADED) == commands, sorted(commands - set(THREADED))


@pytest.mark.parametrize("words", sorted(THREADED), ids=lambda w: " ".join(w))
def test_threads_takes_only_positive_integers(words, capsys):
    """--threads 0 (and -1, 1.5) exit with status 2 naming the option, before anything is loaded; the default is
    torch's own choice (None: threads left alone), except ggik demo's one thread."""
    for value, shown in (
        ("0", "must be a positive integer, got 0"),
        ("-1", "must be a positive integer, got -1"),
        ("1.5", "expected an integer, got '1.5'"),
    ):
        with pytest.raises(SystemExit) as exit_:
            main([*words, "--threads", value])
        assert exit_.value.code == 2
        assert f"argument --threads: {shown}" in capsys.readouterr().err
    parser = THREADED[words]
    action = next(a for a in parser._actions if "--threads" in a.option_strings)
    assert action.default == (1 if words == ("demo",) else None)
    assert "positive integer" in action.help and ("torch's own choice" in action.help) == (action.default is None)


def test_set_threads_leaves_torch_alone_without_a_value():
    import torch

    from ggik.cli.arguments import set_threads

    before = torch.get_num_threads()
    try:
        set_threads(None)
        assert torch.get_num_threads() == before
        set_threads(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_argument_types():
    import argparse

    from ggik.cli.arguments import non_negative_int, positive_float, positive_int

    assert positive_int("3") == 3 and non_negative_int("0") == 0 and positive_float("1e-4") == 1e-4
    for fn, text in (
        (positive_int, "0"),
        (positive_int, "1.5"),
        (non_negative_int, "-1"),
        (positive_float, "0"),
        (positive_float, "inf"),
        (positive_float, "-0.1"),
        (positive_float, "x"),
    ):
        with pytest.raises(argparse.ArgumentTypeError):
            fn(text)


def test_solve_takes_samples_as_s_only(tiny_ckpt, capsys):
    """ggik solve -s S; -n, its old spelling (before -n meant goals everywhere), is a usage error since 0.2.0."""
    argv = [
        "solve",
        "--robot",
        "panda",
        "--pose",
        "0.4",
        "0.1",
        "0.5",
        "0",
        "1",
        "0",
        "0",
        "--ckpt",
        tiny_ckpt,
        "--json",
        "--raw",
        "--all",
    ]
    assert main([*argv, "-s", "3"]) == 1  # the tiny model's raw samples solve nothing
    assert len(json.loads(capsys.readouterr().out)["solutions"]) == 3
    with pytest.raises(SystemExit) as exit_info:  # -n, the old spelling of -s, was removed in 0.2.0
        main([*argv, "-n", "3"])
    assert exit_info.value.code == 2 and "unrecognized arguments: -n 3" in capsys.readouterr().err


@pytest.mark.parametrize("strategy, count", [("model-first", 2), ("random", 5)])
def test_solve_strategies_from_the_command_line(tiny_ckpt, capsys, strategy, count):
    from ggik import GGIK, Robot, SolveConfig
    from ggik.kinematics.geometry import make_transform, quat_to_matrix

    options = ["-s", "2", "--random-starts", "3"] if strategy == "model-first" else ["--random-starts", "5"]
    assert (
        main(
            [
                "solve",
                "--robot",
                "panda",
                "--pose",
                "0.4",
                "0.1",
                "0.5",
                "0",
                "1",
                "0",
                "0",
                "--ckpt",
                tiny_ckpt,
                "--strategy",
                strategy,
                "--pos-tol",
                "0.002",
                "--json",
                "--all",
                *options,
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == strategy and out["refine"] == "lm" and len(out["solutions"]) == count
    import torch

    T = make_transform(
        quat_to_matrix(torch.tensor([0.0, 1.0, 0.0, 0.0], dtype=torch.float64)),
        torch.tensor([0.4, 0.1, 0.5], dtype=torch.float64),
    )
    cfg = (
        SolveConfig(samples=2, strategy=strategy, random_starts=3, pos_tol=0.002)
        if strategy == "model-first"
        else SolveConfig(strategy=strategy, random_starts=5, pos_tol=0.002)
    )
    expected = GGIK.load(tiny_ckpt).solve(Robot.from_name("panda"), T, cfg, generator=torch.Generator().manual_seed(0))
    assert [r["q"] for r in out["solutions"]] == [[round(v, 6) for v in q] for q in expected.q[0].tolist()]


def test_eval_paths_takes_samples_as_s_only(capsys):
    parser = _subparser(("eval", "paths"))
    assert parser.parse_args(["-s", "3"]).samples == 3
    with pytest.raises(SystemExit):
        parser.parse_args(["-n", "3"])
    assert "unrecognized arguments: -n 3" in capsys.readouterr().err


def test_solve_first_solution(tiny_ckpt, capsys):
    robot = Robot.from_name("panda")
    T = robot.fk(robot.sample_q(1, torch.Generator().manual_seed(2)))[0]
    quat = matrix_to_quat(T[:3, :3]).tolist()
    pose = [str(v) for v in T[:3, 3].tolist() + quat]
    argv = ["solve", "--robot", "panda", "--pose", *pose, "--ckpt", tiny_ckpt, "--json"]
    assert main(argv + ["--strategy", "random", "--random-starts", "8", "--first-solution"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["solutions"]) == 1 and out["solutions"][0]["ok"] and out["solved"]
    assert main(argv + ["--strategy", "random", "--random-starts", "8", "--first-solution", "--all"]) == 0
    assert len(json.loads(capsys.readouterr().out)["solutions"]) == 8
    assert main(argv + ["--first-solution", "--raw"]) == 2
    assert "--first-solution stops LM at a goal's first solution; --raw runs no LM" in capsys.readouterr().err
    assert main(argv + ["--first-solution", "--strategy", "samples", "--refine", "dg"]) == 2
    assert "--first-solution stops LM early; the refinement here is 'dg'" in capsys.readouterr().err


def test_eval_generalisation_takes_the_model_by_ckpt_only(tiny_ckpt, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["eval", "generalisation", tiny_ckpt, "-n", "1"])  # the positional form of before 0.2.0 is gone
    assert exc.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
