"""`ggik eval goals`: raw and refined IK per goal kind, the IKNet protocol, diversity of solutions."""

from __future__ import annotations

import csv
import dataclasses
import math

import pytest
import torch
from conftest import HAND_URDFS

from ggik import Robot
from ggik.checkpoint import WEIGHTS_FORMAT
from ggik.cli import main
from ggik.errors import GoalError
from ggik.evaluation.goal_kind_report import IKNET_REFERENCE, goal_kind_markdown
from ggik.evaluation.goal_kind_table import COLUMNS, goal_kind_rows, joint_spread
from ggik.evaluation.tables import EvalConfig
from ggik.ik.metrics import count_distinct
from ggik.nn.cvae import GGIKModel, ModelConfig

F64 = torch.float64
KINDS = ("pose", "position+axis", "position")
TINY = ModelConfig(
    dim=8, hidden=16, enc_layers=1, dec_layers=1, latent=2, prior_components=2, residual_inputs=False, gn_steps=0
)
SAMPLES = 4
TIMING = {"sampling [ms/goal]", "LM from samples [ms/goal]", "LM from random [ms/goal]"}


@pytest.fixture(scope="module")
def tiny_model() -> GGIKModel:
    """An untrained tiny model: the table's logic does not need a good one."""
    torch.manual_seed(0)
    return GGIKModel(TINY).eval()


@pytest.fixture(scope="module")
def offset_robot() -> Robot:
    """A robot whose EE origin lies off the last joint axis: partial goal kinds are refused for it."""
    return Robot.from_urdf(HAND_URDFS["tool_frame"])


@pytest.fixture(scope="module")
def rows(tiny_model, offset_robot) -> list[dict]:
    return goal_kind_rows(
        tiny_model,
        [Robot.from_name("panda"), offset_robot],
        kinds=KINDS,
        iknet_samples=6,
        progress=False,
        cfg=EvalConfig(problems=3, samples=SAMPLES, seed=0),
    )


def by_key(rows):
    return {(r["robot"], r["kind"]): r for r in rows}


def test_one_row_per_robot_and_kind_with_every_column(rows, offset_robot):
    assert [(r["robot"], r["kind"]) for r in rows] == [(n, k) for n in ("panda", offset_robot.name) for k in KINDS]
    for row in rows:
        assert list(row) == COLUMNS
    assert all(r["status"] == "ok" for r in rows if r["robot"] == "panda")


def test_success_shares_and_counts_are_in_range(rows):
    for row in (r for r in rows if r["status"] == "ok"):
        shares = [row[c] for c in COLUMNS if c.endswith("[%]") and not c.startswith("iknet")]
        assert all(0.0 <= v <= 100.0 for v in shares), row
        r1, r2, r5 = (row[f"raw success {k}cm&{k}deg [%]"] for k in (1, 2, 5))
        assert r1 <= r2 <= r5
        assert 0 < row["raw best pos [mm]"] <= row["raw mean pos [mm]"]
        for start in ("samples", "random"):
            assert 0 <= row[f"LM from {start} iterations"] <= 30 and row[f"LM from {start} [ms/goal]"] > 0
            distinct = row[f"distinct LM from {start}"]
            assert 0 <= distinct <= SAMPLES
            assert distinct >= row[f"LM from {start} success [%]"] / 100 - 1e-12  # every solved goal has >= 1 solution
        assert 0 <= row["distinct raw 1cm&1deg"] <= SAMPLES


def test_rotation_and_iknet_columns_only_where_they_apply(rows):
    got = by_key(rows)
    for kind in ("pose", "position+axis"):
        row = got["panda", kind]
        assert math.isfinite(row["raw best rot [deg]"]) and row["raw best rot [deg]"] <= row["raw mean rot [deg]"]
        assert all(math.isnan(row[c]) for c in COLUMNS if c.startswith("iknet"))
    row = got["panda", "position"]
    assert math.isnan(row["raw best rot [deg]"]) and math.isnan(row["raw mean rot [deg]"])
    assert row["iknet samples"] == 6 and row["iknet mean dist [cm]"] > 0


def test_iknet_shares_are_monotone(rows):
    row = by_key(rows)["panda", "position"]
    w10, w2, w1 = (row[f"iknet within {r}cm [%]"] for r in (10, 2, 1))
    assert 100.0 >= w10 >= w2 >= w1 >= 0.0


def test_partial_kinds_on_an_offset_ee_are_skipped_with_the_reason(rows, offset_robot):
    got = by_key(rows)
    assert got[offset_robot.name, "pose"]["status"] == "ok"
    for kind in ("position+axis", "position"):
        row = got[offset_robot.name, kind]
        assert row["status"].startswith("skipped: ") and "off the last joint axis" in row["status"]
        assert math.isnan(row["raw success 1cm&1deg [%]"]) and math.isnan(row["LM from random success [%]"])


def test_rows_are_seeded_and_each_kind_stands_alone(rows, tiny_model):
    """The same seed gives the same numbers, and a kind measured alone equals its row in a run of all kinds."""
    again = goal_kind_rows(
        tiny_model,
        [Robot.from_name("panda")],
        kinds=["position"],
        iknet_samples=6,
        progress=False,
        cfg=EvalConfig(problems=3, samples=SAMPLES, seed=0),
    )
    want = by_key(rows)["panda", "position"]
    for c in COLUMNS:
        if c not in TIMING:
            assert again[0][c] == want[c] or (math.isnan(want[c]) and math.isnan(again[0][c])), c


def test_pose_rows_repeat_the_seeding_tables_lm_rows(rows, tiny_model):
    """Same goals, samples and random starts as `ggik eval seeding` (its docstring's promise)."""
    from ggik.evaluation.tables import EvalConfig, seeding_table

    table = seeding_table(
        tiny_model,
        [Robot.from_name("panda")],
        EvalConfig(problems=3, samples=SAMPLES, seed=0, slsqp_problems=1),
        progress=False,
    )
    lm = {r[2]: dict(zip(table.columns, r)) for r in table.rows if r[1] == "LM"}
    row = by_key(rows)["panda", "pose"]
    for start, name in (("GGIK", "samples"), ("random", "random")):
        assert lm[start]["success [%]"] == row[f"LM from {name} success [%]"]
        assert lm[start]["mean iterations"] == row[f"LM from {name} iterations"]


def test_distinct_solutions_on_hand_built_joints():
    """The diversity columns count with :func:`ggik.ik.metrics.count_distinct` (joint-space distance, 2 pi wraps of
    continuous joints are no difference), batched over goals."""
    unbounded = torch.tensor([True, False, False])
    a = torch.tensor([0.5, 0.2, -0.3], dtype=F64)
    q = torch.stack(
        [
            a,
            a + torch.tensor([2 * math.pi, 0.0, 0.0], dtype=F64),  # a 2 pi wrap of the continuous joint: the same
            a + torch.tensor([0.05, 0.05, 0.05], dtype=F64),  # 0.087 rad away: the same
            a + torch.tensor([0.08, 0.08, 0.08], dtype=F64),  # 0.139 rad away: distinct
            a + torch.tensor([0.0, 0.0, 2 * math.pi], dtype=F64),  # 2 pi on a bounded joint: another configuration
            a + torch.tensor([0.0, 0.0, 1.0], dtype=F64),  # distinct, but not kept
        ]
    )
    keep = torch.tensor([True, True, True, True, True, False])
    both = torch.stack([q, q.flip(0)])
    assert count_distinct(both, torch.stack([keep, keep.flip(0)]), unbounded).tolist() == [3.0, 3.0]
    assert count_distinct(both, torch.zeros(2, 6, dtype=torch.bool), unbounded).tolist() == [0.0, 0.0]
    near_pi = torch.tensor([[[3.1, 0.0, 0.0], [-3.1, 0.0, 0.0]]], dtype=F64)  # 0.083 apart across the wrap
    assert count_distinct(near_pi, torch.ones(1, 2, dtype=torch.bool), unbounded).tolist() == [1.0]
    assert count_distinct(near_pi, torch.ones(1, 2, dtype=torch.bool), torch.zeros(3, dtype=torch.bool)).tolist() == [
        2.0
    ]


def test_joint_spread_ignores_wraps_and_needs_two_solutions():
    unbounded = torch.tensor([True, False])
    q = torch.tensor([[[1.0, 0.0], [1.0 + 2 * math.pi, 0.2], [9.0, 9.0]]], dtype=F64)
    keep = torch.tensor([[True, True, False]])
    assert torch.allclose(joint_spread(q, keep, unbounded), torch.tensor([0.05], dtype=F64))  # std (0, 0.1)
    assert torch.isnan(joint_spread(q, torch.tensor([[True, False, False]]), unbounded)).all()


def test_bad_kinds_and_counts_are_clear_errors(tiny_model):
    panda = [Robot.from_name("panda")]
    with pytest.raises(GoalError, match="goal kind must be one of"):
        goal_kind_rows(tiny_model, panda, kinds=["pose", "orientation"], progress=False)
    with pytest.raises(ValueError, match="problems must be at least 1"):
        goal_kind_rows(tiny_model, panda, progress=False, cfg=EvalConfig(problems=0))
    with pytest.raises(ValueError, match="twice"):
        goal_kind_rows(tiny_model, panda, kinds=["pose", "pose"], progress=False)


def test_markdown_quotes_the_iknet_reference_beside_ours(rows):
    text = goal_kind_markdown(rows, "ggik eval goals", seed=0)
    line = next(x for x in text.splitlines() if "quoted from the IKNet paper" in x)
    assert line.startswith("| panda | position | 100 | 3.1 | 98 |") and "not measured" in line
    assert "| panda | position | 6 |" in text and IKNET_REFERENCE["iknet within 10cm [%]"] == 98.0
    for section in ("## Raw samples", "## IKNet protocol", "## Refined", "## Diversity"):
        assert section in text


@pytest.fixture
def tiny_ckpt_file(tiny_model, tmp_path):
    """A weights-only checkpoint of the untrained tiny model (no training run needed)."""
    path = tmp_path / "tiny.pt"
    torch.save(
        {"format": WEIGHTS_FORMAT, "config": {"model": dataclasses.asdict(TINY)}, "model": tiny_model.state_dict()},
        path,
    )
    return str(path)


def test_ggik_eval_goals_writes_markdown_and_csv(tiny_ckpt_file, tmp_path, capsys):
    urdf = tmp_path / "tool_frame.urdf"
    urdf.write_text(HAND_URDFS["tool_frame"])
    out = tmp_path / "goal_kinds"
    argv = [
        "eval",
        "goals",
        "--ckpt",
        tiny_ckpt_file,
        "--robots",
        "panda",
        str(urdf),
        "-n",
        "2",
        "-s",
        "2",
        "--iknet-samples",
        "3",
        "--seed",
        "1",
        "--out-dir",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0
    md, table = out / "goal_kinds.md", out / "goal_kinds.csv"
    assert f"wrote {md} and {table}" in capsys.readouterr().out
    text = md.read_text()
    assert "Command: `ggik eval goals --ckpt" in text and "Seed: 1" in text and "quoted from the IKNet paper" in text
    with open(table, newline="") as f:
        got = list(csv.DictReader(f))
    assert list(got[0]) == COLUMNS
    assert [(r["robot"], r["kind"]) for r in got] == [(n, k) for n in ("panda", "tool_frame") for k in KINDS]
    assert [r["status"].split(":")[0] for r in got] == ["ok"] * 4 + ["skipped"] * 2
    assert "source" not in got[0]  # the quoted IKNet row is in the Markdown only


def test_ggik_eval_goals_bad_kind_is_a_one_line_error(tmp_path, capsys):
    argv = ["eval", "goals", "--robots", "panda", "--kinds", "pose", "bogus", "-n", "1", "--out-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ggik: error: goal kind must be one of") and "'bogus'" in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())
