"""The GGIK paper's protocol in the evaluation suite: its goal sampler, its table beside the paper's Table 1
(``ggik eval paper``) and ``ggik eval accuracy --protocol paper``."""

from __future__ import annotations

import csv
import math
import re

import pytest
import torch

from ggik import GGIKError, Robot, rng
from ggik.checkpoint import load_model, load_model_or_shipped
from ggik.cli import build_parser, main
from ggik.evaluation.paper_protocol import (
    METHODS,
    PAPER_ARMS,
    PAPER_TABLE1,
    paper_protocol_table,
    sample_sizes,
    wilson_interval,
)
from ggik.evaluation.tables import EvalConfig, evaluation_problems, paper_goal_q, raw_stats, seeding_table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.sampling import RawSamples, sample_joint_angles
from ggik.kinematics.geometry import pose_errors
from tests.conftest import _joint, _urdf, shared_path

#: the paper's Table 1 as the paper gives it (../shared/ggik_spec.md, section 5.6, "Paper numbers"; checked against that
#: text below): success [%], pos mean [mm], rot mean [deg] per arm, typed here, not read from ggik
PAPER = {
    "lbr_iiwa": (99.0, 15.1, 2.0),
    "schunk_lwa4d": (99.0, 13.9, 2.3),
    "schunk_lwa4p": (98.2, 6.6, 1.8),
    "panda": (97.5, 36.5, 3.6),
    "ur10": (90.0, 17.0, 1.7),
}
PAPER_COLUMNS = ("paper success [%]", "paper pos mean [mm]", "paper rot mean [deg]")
#: q[0, :3] [rad] of the UR10's paper goals at seed 11, as ggik drew them when each arm got its own stream
UR10_SEED_11_FIRST_GOAL = [-0.13014619874893366, 0.9824430378465272, 1.7124597564051325]


def _read_csv(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", PAPER_ARMS)
def test_paper_goals_span_the_circle_ignore_the_limits_and_fix_the_last_joint(name, rng):
    robot = Robot.from_name(name)
    q = paper_goal_q(robot, 4000, rng)
    assert q.shape == (4000, robot.dof) and q.dtype == torch.float64
    assert torch.equal(q[:, -1], torch.zeros(4000, dtype=torch.float64))
    free = q[:, :-1]
    assert free.abs().max() <= math.pi
    # uniform on [-pi, pi]: mean 0 (sd pi / sqrt(3 n) = 0.029), variance pi^2 / 3, and each quarter of the circle
    # holds a quarter of the draws (sd 0.007), per joint
    assert free.mean(0).abs().max() < 0.15
    assert torch.allclose(free.var(0), torch.full((robot.dof - 1,), math.pi**2 / 3, dtype=torch.float64), rtol=0.1)
    quarters = torch.stack([((free >= a) & (free < a + math.pi / 2)).double().mean(0) for a in (-math.pi, -1.5708, 0)])
    assert (quarters - 0.25).abs().max() < 0.04
    # no clipping: each joint falls outside its limits as often as the share of [-pi, pi] they leave out (sd < 0.008)
    lo, hi = robot.lower[:-1], robot.upper[:-1]
    gap = torch.where(robot.limited[:-1], (lo + math.pi).clamp(min=0) + (math.pi - hi).clamp(min=0), 0.0) / (
        2 * math.pi
    )
    outside = ((free < lo) | (free > hi)).double().mean(0)
    assert (outside - gap).abs().max() < 0.03
    assert bool((outside[gap > 0.01] > 0).all()) and bool((outside[gap == 0] == 0).all())


def test_paper_goals_are_fk_of_their_configurations_and_follow_the_seed():
    robots = [Robot.from_name(n) for n in ("panda", "ur10")]
    cfg = EvalConfig(problems=5, seed=3, protocol="paper")
    groups = evaluation_problems(robots, cfg)
    assert [r.name for r, _, _ in groups] == ["panda", "ur10"]
    for robot, q, T in groups:
        assert torch.equal(T, robot.fk(q)) and torch.equal(q[:, -1], torch.zeros(5, dtype=torch.float64))
    again = evaluation_problems(robots, cfg)
    assert all(torch.equal(a[1], b[1]) for a, b in zip(groups, again))
    other = evaluation_problems(robots, EvalConfig(problems=5, seed=4, protocol="paper"))
    assert not torch.equal(groups[0][1], other[0][1])
    ours = evaluation_problems(robots, EvalConfig(problems=5, seed=3))
    assert all(bool(r.within_limits(q).all()) for r, q, _ in ours)


def test_an_arms_paper_goals_are_the_same_alone_and_in_any_list_of_arms():
    """Each arm draws from its own stream, keyed by its name with a stable hash: the UR10 alone gets the goals it gets
    fifth in the paper's list or first in the reversed one, in every process. Two arms of the same DOF get different
    goals."""
    cfg = EvalConfig(problems=6, seed=11, protocol="paper")
    arms = [Robot.from_name(n) for n in PAPER_ARMS]
    ((_, alone, T_alone),) = evaluation_problems([Robot.from_name("ur10")], cfg)
    for order in (arms, arms[::-1]):
        (q,) = [q for robot, q, _ in evaluation_problems(order, cfg) if robot.name == "ur10"]
        assert torch.equal(q, alone)
    assert torch.equal(T_alone, Robot.from_name("ur10").fk(alone))
    groups = {robot.name: q for robot, q, _ in evaluation_problems(arms, cfg)}
    assert groups["lbr_iiwa"].shape == groups["schunk_lwa4d"].shape
    assert (groups["lbr_iiwa"][:, :-1] - groups["schunk_lwa4d"][:, :-1]).abs().min() > 0
    # the stream of ("ur10", seed 11), recorded: Python's salted hash() of the name would move it in every process
    torch.testing.assert_close(
        alone[0, :3], torch.tensor(UR10_SEED_11_FIRST_GOAL, dtype=torch.float64), rtol=0, atol=1e-12
    )


def test_a_prismatic_joint_is_refused_by_name():
    urdf = _urdf(
        "slider",
        ["base", "a", "b"],
        _joint("j1", "revolute", "base", "a", axis="0 0 1")
        + "\n"
        + _joint("s2", "prismatic", "a", "b", xyz="0 0 0.3", axis="1 0 0", limit=(0, 0.5)),
    )
    with pytest.raises(GGIKError, match=r"slider: .*\['s2'\] are prismatic"):
        paper_goal_q(Robot.from_urdf(urdf), 3)


def test_an_unknown_protocol_is_a_clear_error_in_the_api_and_the_command(capsys):
    with pytest.raises(GGIKError, match=r"unknown goal protocol 'iknet': expected one of 'ours', 'paper'"):
        EvalConfig(protocol="iknet")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "accuracy", "--protocol", "iknet", "-n", "1"])
    assert exit_info.value.code == 2
    assert "argument --protocol: invalid choice: 'iknet' (choose from 'ours', 'paper')" in capsys.readouterr().err


def test_seeding_refuses_goals_outside_the_limits(tiny_ckpt):
    model, _ = load_model(tiny_ckpt)
    with pytest.raises(GGIKError, match=r"seeding table judges success within the joint limits.*'paper'"):
        seeding_table(model, [Robot.from_name("ur10")], EvalConfig(problems=1, samples=1, protocol="paper"))


def test_wilson_interval():
    lo, hi = wilson_interval(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and 0.2 < hi < 0.35  # 0 of 10 is not proof of 0 %
    lo, hi = wilson_interval(300, 300)
    assert hi == pytest.approx(1.0, abs=1e-12) and 0.98 < lo < 0.99
    lo, hi = wilson_interval(150, 300)  # symmetric about 1/2: 0.5 -+ 1.96 sqrt(0.25 / 300), nearly
    assert lo + hi == pytest.approx(1.0, abs=1e-12) and hi - lo == pytest.approx(2 * 1.96 * math.sqrt(0.25 / 300), 1e-2)
    with pytest.raises(ValueError, match="0 <= successes <= n"):
        wilson_interval(4, 3)


def test_the_papers_table_1_in_ggik_is_the_papers():
    """PAPER_TABLE1 against the paper's numbers as ../shared/ggik_spec.md quotes them (arms KUKA = lbr_iiwa, LWA4D,
    LWA4P, Panda, UR10): success, pos mean, rot mean and MMD; and the test's own transcription (PAPER) too."""
    text = " ".join(shared_path("ggik_spec.md").read_text(encoding="utf-8").split("### 5.6")[1].split())
    table1 = text.split("Table 1")[1].split("Table 2")[0]
    arms = ("lbr_iiwa", "schunk_lwa4d", "schunk_lwa4p", "panda", "ur10")

    def five(label: str) -> list[float]:
        (numbers,) = re.findall(re.escape(label) + r"((?:[^;]*?\d+\.\d+){5})", table1)
        return [float(x) for x in re.findall(r"\d+\.\d+", numbers)]

    columns = [five(label) for label in ("pos mean [mm]", "rot mean [deg]", "success (1 cm & 1°)", "MMD")]
    quoted = {arm: (success, pos, rot, mmd) for arm, pos, rot, success, mmd in zip(arms, *columns)}
    assert quoted == PAPER_TABLE1
    assert {arm: values[:3] for arm, values in quoted.items()} == PAPER


def test_the_table_gives_each_arm_the_papers_numbers_for_it(tiny_ckpt):
    """Each row's paper columns are its own arm's Table 1 numbers (PAPER, typed from the paper), whatever the order of
    the robots (here neither the paper's nor PAPER_TABLE1's); n/a for an arm outside the paper's table."""
    model, _ = load_model(tiny_ckpt)
    names = ["ur10", "kuka_lwr", "schunk_lwa4p", "panda", "lbr_iiwa", "schunk_lwa4d"]
    table = paper_protocol_table(model, [Robot.from_name(n) for n in names], EvalConfig(problems=2, samples=2), False)
    rows = [dict(zip(table.columns, row)) for row in table.rows]
    assert [(r["robot"], r["method"]) for r in rows] == [(n, m) for n in names for m in METHODS]
    for r in rows:
        if r["robot"] in PAPER:
            assert tuple(r[c] for c in PAPER_COLUMNS) == PAPER[r["robot"]], r["robot"]
        else:  # an arm outside the paper's table: n/a
            assert all(math.isnan(r[c]) for c in PAPER_COLUMNS)
        success = r["success, best of 2 [%]"]
        assert r["goals"] == 2 and success in (0.0, 50.0, 100.0)
        assert r["ours - paper, best of 2 [points]"] == pytest.approx(success - r["paper success [%]"], nan_ok=True)
        lo, hi = (float(v) for v in r["95% interval, best of 2 [%]"].split("-"))
        assert lo <= success <= hi
        assert 0 <= r["goals outside limits [%]"] <= 100 and r["best-of-2 pos [mm]"] <= r["pos mean [mm]"]
    assert "Table 1 (2000 goals per arm" in table.body()


def _fk_success(robot: Robot, q: torch.Tensor, T: torch.Tensor, size: int) -> float:
    """[%] of goals T (P, 4, 4) with one of the first ``size`` angle sets q (P, S, dof) within 1 cm and 1 degree, by the
    robot's FK and pose_errors: the test's own judge, not the table's."""
    pos, rot = pose_errors(robot.fk(q[:, :size]), T[:, None])
    return 100 * ((pos < 0.01) & (rot < math.radians(1))).any(-1).double().mean().item()


def test_best_of_s_is_nested_on_one_draw_and_both_rows_are_judged_by_fk():
    """sizes (3, 1): 3 samples per goal drawn once (the accuracy stream) and projected once; best of 1 is the first of
    those 3, so its success is at most best of 3's. Each rate is the test's own FK judgement of that draw: the raw
    samples' angles, and the angles ggik.ik.dg_refine recovers from the projected point sets (the DG row: FK only, no
    limits in the fit nor in the judgement, no LM). The shipped model, on goals where raw and projected samples
    differ."""
    model, _ = load_model_or_shipped(None)
    robots = [Robot.from_name(n) for n in ("panda", "lbr_iiwa")]
    cfg = EvalConfig(problems=12, seed=0, protocol="paper")
    table = paper_protocol_table(model, robots, cfg, False, sizes=(3, 1))
    rows = {(r[0], r[3]): dict(zip(table.columns, r)) for r in table.rows}
    assert list(rows) == [(robot.name, m) for robot in robots for m in METHODS]
    differ = False
    for robot, _, T in evaluation_problems(robots, cfg):
        graph = model.graph(robot)
        raw = sample_joint_angles(model, graph, T, 3, generator=rng.step_generator(0, rng.ACCURACY_SAMPLES))
        projected = dg_refine(graph, raw.points, T, DGConfig(limits=False))  # the protocol has no limits
        for method, q in zip(METHODS, (raw.q, projected.q)):
            row = rows[robot.name, method]
            for size in (1, 3):
                assert row[f"success, best of {size} [%]"] == pytest.approx(_fk_success(robot, q, T, size), abs=1e-9), (
                    robot.name,
                    method,
                    size,
                )
            assert row["success, best of 1 [%]"] <= row["success, best of 3 [%]"]
        differ |= _fk_success(robot, raw.q, T, 3) != _fk_success(robot, projected.q, T, 3)
        assert rows[robot.name, METHODS[1]]["projection time per goal [ms]"] > 0
        assert math.isnan(rows[robot.name, METHODS[0]]["projection time per goal [ms]"])
    assert differ  # the DG row is not the raw row again
    assert "no joint-space solver (no LM, no SLSQP)" in table.body() and 'refine="dg"' in table.body()


def test_sample_sizes_are_positive_distinct_and_sorted():
    assert sample_sizes(32) == (32,) and sample_sizes([50, 32]) == (32, 50)
    for bad in ([], [0], [32, -1], [2.5], [True]):
        with pytest.raises(GGIKError, match=r"one or more positive integers"):
            sample_sizes(bad)
    with pytest.raises(GGIKError, match=r"must be distinct, got \[32, 32\]"):
        sample_sizes([32, 32])


def test_ggik_eval_paper_parses_several_sample_sizes(capsys):
    """-s takes one or more sizes (default 32 50); a bad one is an argparse error naming -s/--samples; a repeated one
    fails before the model is loaded (the missing --ckpt is never read)."""
    parse = build_parser("eval").parse_args
    assert parse(["eval", "paper"]).samples == [32, 50]
    assert parse(["eval", "paper", "-s", "50", "32", "100"]).samples == [50, 32, 100]
    assert parse(["eval", "paper", "--samples", "8"]).samples == [8]
    for bad, message in (
        (["0"], "argument -s/--samples: must be a positive integer, got 0"),
        (["32", "x"], "argument -s/--samples: expected an integer, got 'x'"),
        ([], "argument -s/--samples: expected at least one argument"),
    ):
        with pytest.raises(SystemExit) as exit_info:
            parse(["eval", "paper", "-s", *bad])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, bad
    assert main(["eval", "paper", "--ckpt", "missing.pt", "-s", "4", "4", "--no-progress"]) == 2
    assert "ggik: error: sample sizes must be distinct, got [4, 4]" in capsys.readouterr().err


def test_ggik_eval_paper_runs_end_to_end(tiny_ckpt, tmp_path, capsys):
    argv = ["eval", "paper", "--ckpt", tiny_ckpt, "-n", "2", "-s", "3", "1", "--threads", "1", "--no-progress"]
    assert main([*argv, "--out-dir", str(tmp_path)]) == 0
    rows = _read_csv(tmp_path / "paper_protocol.csv")
    assert [(r["robot"], r["method"]) for r in rows] == [(n, m) for n in PAPER_ARMS for m in METHODS]
    success = [f"success, best of {s} [%]" for s in (1, 3)]
    assert [c for c in rows[0] if c.startswith("success, best of")] == success
    for r in rows:  # the file's columns: each arm's paper numbers, and our success less the paper's, per size
        assert tuple(float(r[c]) for c in PAPER_COLUMNS) == PAPER[r["robot"]], r["robot"]
        for size in (1, 3):
            gap = float(r[f"success, best of {size} [%]"]) - float(r["paper success [%]"])
            assert float(r[f"ours - paper, best of {size} [points]"]) == pytest.approx(gap, abs=1e-9)
        assert float(r[success[0]]) <= float(r[success[1]])
    md = (tmp_path / "paper_protocol.md").read_text()
    assert "Command: `ggik eval paper --ckpt" in md and "Model: " in md and "sha256 " in md and "Code: ggik " in md
    assert "best of 1 / 3 samples within 1 cm and 1 degree" in md and "| model + DG projection |" in md
    assert "The first S of 3 are not the samples of a run of -s S alone" in md
    assert f"wrote {tmp_path}/paper_protocol.md" in capsys.readouterr().out
    # the same goals and samples give the same table: measured, not drawn anew
    assert main([*argv, "--out-dir", str(tmp_path / "again")]) == 0
    again = _read_csv(tmp_path / "again" / "paper_protocol.csv")
    keep = ("robot", "method", *success, "pos mean [mm]", "rot mean [deg]", "goals outside limits [%]")
    assert [[r[k] for k in keep] for r in again] == [[r[k] for k in keep] for r in rows]
    # one arm alone: the goals and samples it gets in the full run, so the same rows
    assert main([*argv, "--robots", "ur10", "--out-dir", str(tmp_path / "alone")]) == 0
    alone = _read_csv(tmp_path / "alone" / "paper_protocol.csv")
    assert [[r[k] for k in keep] for r in alone] == [[r[k] for k in keep] for r in rows[-2:]]


def test_ggik_eval_accuracy_takes_the_papers_goals(tiny_ckpt, tmp_path):
    base = ["eval", "accuracy", "--ckpt", tiny_ckpt, "--robots", "ur10", "-n", "2", "-s", "2", "--mmd-goals", "2"]
    assert main([*base, "--protocol", "paper", "--no-progress", "--out-dir", str(tmp_path)]) == 0
    md = (tmp_path / "accuracy.md").read_text()
    assert "the GGIK paper's goals" in md and "--protocol paper" in md and "limits ignored" in md
    assert [r["robot"] for r in _read_csv(tmp_path / "accuracy.csv")] == ["ur10"]


@pytest.mark.parametrize("name", PAPER_ARMS)
def test_an_exact_point_set_outside_the_limits_is_a_raw_success(name, rng):
    """Nothing between a point set and the table's success clips or judges the limits: the true point sets of the
    paper's goals (outside the limits) give back angles with the goals' FK to 1e-9, and raw_stats counts them all."""
    robot = Robot.from_name(name)
    q = paper_goal_q(robot, 16, rng)
    graph = RobotGraph.from_robot(robot)
    T = robot.fk(q)
    back = graph.joint_angles(graph.realize(q), T)  # what sample_joint_angles does with a sampled point set
    pos, rot = pose_errors(robot.fk(back), T)
    assert float(pos.max()) < 1e-9 and float(rot.max()) < 1e-7
    if name != "ur10":  # the UR10's joints span [-2 pi, 2 pi]: every draw is within them
        assert not bool(robot.within_limits(back).all())
    raw = RawSamples(q=back[:, None], pos_err=pos[:, None], rot_err=rot[:, None], points=graph.realize(q)[:, None])
    assert raw_stats(raw)[2] == 100.0


def test_the_readme_quotes_the_committed_results():
    """Every result table of benchmarks/paper_tables/README.md's paper-protocol section is the CSV it names, to the
    digit shown, and lists the five arms with the paper's numbers."""
    from tests.conftest import REPO_ROOT

    folder = REPO_ROOT / "benchmarks" / "paper_tables"
    section = (folder / "README.md").read_text(encoding="utf-8").split("## The paper's own protocol")[1]
    results = section.split("**Result**")[1:]
    assert results, "no **Result** paragraph in the paper-protocol section"
    row = re.compile(r"^\| (\w+) \| ([\d.]+) \| ([\d.]+) \(([\d.]+)-([\d.]+)\) \| ([\d.]+) \|$", re.M)
    for text in results:
        csv_rows = {
            r["robot"]: r for r in _read_csv(folder / re.search(r"`(results/\w+)/`", text)[1] / "paper_protocol.csv")
        }
        quoted = row.findall(text)
        assert [q[0] for q in quoted] == list(PAPER_ARMS) == list(csv_rows)
        for arm, paper, success, lo, hi, outside in quoted:
            r = csv_rows[arm]
            assert float(paper) == PAPER_TABLE1[arm][0] == float(r["paper success [%]"])
            assert success == f"{float(r['success [%]']):.1f}" and f"{lo}-{hi}" == r["95% interval [%]"]
            assert outside == f"{float(r['goals outside limits [%]']):.1f}"


def test_the_main_readme_quotes_the_paper_runs_table():
    """The README's table of the paper's protocol is the committed CSVs it cites (the paper run's export, 2,000 goals,
    best of 32 / 50, raw and + DG; v10's 2,000-goal table), to the digit shown, and the paper's Table 1."""
    from tests.conftest import REPO_ROOT

    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("**The paper's Table 1 on its protocol**")[1].split("\n\n")[1]
    rows = {
        line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")[1:]] for line in block.splitlines()
    }
    results = REPO_ROOT / "benchmarks" / "paper_tables" / "results"
    run = {(r["robot"], r["method"]): r for r in _read_csv(results / "paper_run_2000" / "paper_protocol.csv")}
    v10 = {r["robot"]: r for r in _read_csv(results / "paper_protocol_v10_2000" / "paper_protocol.csv")}
    assert rows["success [%]"] == list(PAPER_ARMS)
    for k, arm in enumerate(PAPER_ARMS):
        raw, dg = run[arm, METHODS[0]], run[arm, METHODS[1]]
        interval = raw["95% interval, best of 32 [%]"]
        assert rows["raw, best of 32 (95 % interval)"][k] == f"{float(raw['success, best of 32 [%]']):.1f} ({interval})"
        assert rows["raw, best of 50"][k] == f"{float(raw['success, best of 50 [%]']):.1f}"
        quoted_dg = rows["+ DG projection, best of 32 (26-44 ms per goal, sampling 22-30)"][k]
        assert quoted_dg.split(" ")[0] == f"{float(dg['success, best of 32 [%]']):.0f}"
        assert (
            26 <= float(dg["projection time per goal [ms]"]) < 45
            and 22 <= float(dg["sampling time per goal [ms]"]) < 31
        )
        v10_row = next(v for key, v in rows.items() if key.startswith("v10, raw"))
        assert v10_row[k] == f"{float(v10[arm]['success [%]']):.1f}"
        assert float(rows["the paper, raw, best of 32"][k]) == PAPER_TABLE1[arm][0]
    assert "sha256 ff54e2ad1c19" in (results / "paper_run_2000" / "paper_protocol.md").read_text(encoding="utf-8")
