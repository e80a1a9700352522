"""The evaluation suite: MMD diversity score, the three tables, the `ggik eval` command."""
from __future__ import annotations

import csv
import math

import pytest
import torch

from ggik import Robot
from ggik.cli import main
from ggik.config import from_dict, load_yaml
from ggik.evaluation import EvalConfig, accuracy_table, angle_mmd, limits_table, reference_solutions, seeding_table
from ggik.geometry import pose_errors
from ggik.training import TrainConfig, Trainer, load_model

F64 = torch.float64


@pytest.fixture(scope="module")
def tiny_ckpt(tmp_path_factory):
    run = tmp_path_factory.mktemp("tiny_eval")
    cfg = from_dict(TrainConfig, {**load_yaml("train/configs/tiny.yaml"), "steps": 3})
    Trainer(cfg, run, progress=False).train()
    return run / "last.pt"


def test_mmd_is_zero_for_identical_sets_and_positive_otherwise():
    g = torch.Generator().manual_seed(0)
    a = torch.rand(5, 8, 6, generator=g, dtype=F64) * 6 - 3
    assert torch.allclose(angle_mmd(a, a.clone()), torch.zeros(5, dtype=F64), atol=1e-12)
    b = a + 1.0
    assert (angle_mmd(a, b) > 1e-3).all()


def test_mmd_treats_angles_2pi_apart_as_equal_and_is_symmetric():
    g = torch.Generator().manual_seed(1)
    a = torch.rand(3, 6, 4, generator=g, dtype=F64) * 6 - 3
    b = torch.rand(3, 7, 4, generator=g, dtype=F64) * 6 - 3
    assert torch.allclose(angle_mmd(a, b + 2 * math.pi), angle_mmd(a, b), atol=1e-12)
    assert torch.allclose(angle_mmd(a, b), angle_mmd(b, a), atol=1e-12)


def test_mmd_masks_reference_solutions_and_needs_two():
    g = torch.Generator().manual_seed(2)
    a = torch.rand(2, 5, 3, generator=g, dtype=F64)
    b = torch.cat([a, torch.full((2, 5, 3), 2.5, dtype=F64)], 1)  # second half: far away, masked out
    valid = torch.cat([torch.ones(2, 5, dtype=torch.bool), torch.zeros(2, 5, dtype=torch.bool)], 1)
    assert torch.allclose(angle_mmd(a, b, valid), torch.zeros(2, dtype=F64), atol=1e-12)
    one = torch.zeros(2, 10, dtype=torch.bool)
    one[:, 0] = True
    assert torch.isnan(angle_mmd(a, b, one)).all()


def test_reference_solutions_are_exact_where_converged():
    robot = Robot.from_name("ur10")
    g = torch.Generator().manual_seed(3)
    T = robot.fk(robot.sample_q(4, g))
    q, ok = reference_solutions(robot, T, 8, g)
    assert q.shape == (4, 8, 6) and ok.any(-1).all()
    pos, rot = pose_errors(robot.fk(q), T[:, None])
    assert (pos[ok] < 1e-3).all() and (rot[ok] < 1e-2).all()


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("which", ["accuracy", "seeding", "limits"])
def test_tables_have_one_row_per_robot_and_sane_values(tiny_ckpt, which):
    model, _ = load_model(tiny_ckpt)
    robots = [Robot.from_name("panda"), Robot.from_name("schunk_lwa4p")]
    cfg = EvalConfig(problems=5, samples=3, seed=0, mmd_problems=3, slsqp_problems=2)
    make = {"accuracy": accuracy_table, "seeding": seeding_table, "limits": limits_table}[which]
    table = make(model, robots, cfg, progress=False)
    per_robot = {"accuracy": 1, "seeding": 4, "limits": 1}[which]
    assert len(table.rows) == per_robot * len(robots)
    assert [r[0] for r in table.rows] == [n for n in ("panda", "schunk_lwa4p") for _ in range(per_robot)]
    for row in table.rows:
        for col, v in zip(table.columns, row):
            if "[%]" in col and v != "":
                assert 0.0 <= v <= 100.0, (col, v)
            if "[mm]" in col or "[deg]" in col:
                assert math.isfinite(v) and v >= 0.0, (col, v)
    if which == "seeding":
        lm_random = [r for r in table.rows if r[1] == "LM" and r[2] == "random"]
        assert all(r[4] >= 60.0 for r in lm_random), "LM from random starts solves most goals"
        assert all(r[7] == 0.0 for r in table.rows if r[2] == "random"), "random starts cost no sampling time"


def test_accuracy_stats_are_ordered(tiny_ckpt):
    model, _ = load_model(tiny_ckpt)
    table = accuracy_table(model, [Robot.from_name("ur10")], EvalConfig(problems=6, samples=5, mmd_problems=3), progress=False)
    row = dict(zip(table.columns, table.rows[0]))
    for unit in ("pos", "rot"):
        u = "mm" if unit == "pos" else "deg"
        assert row[f"{unit} min [{u}]"] <= row[f"{unit} Q1 [{u}]"] <= row[f"{unit} Q3 [{u}]"] <= row[f"{unit} max [{u}]"]
        assert row[f"{unit} min [{u}]"] <= row[f"{unit} mean [{u}]"] <= row[f"{unit} max [{u}]"]


def test_ggik_eval_writes_markdown_and_csv(tiny_ckpt, tmp_path, capsys):
    argv = ["eval", "limits", "--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "3", "-s", "2",
            "--out-dir", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    md = (tmp_path / "limits.md").read_text()
    assert "Command: `" in md and "--robots ur10" in md and "Machine:" in md and "Seed: 0" in md
    rows = _read_csv(tmp_path / "limits.csv")
    assert [r["robot"] for r in rows] == ["ur10"] and float(rows[0]["all joints"]) == 100.0  # UR10 limits hold by wrapping


def test_ggik_eval_accuracy_writes_figures(tiny_ckpt, tmp_path):
    argv = ["eval", "accuracy", "--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "3", "-s", "2", "--mmd-goals", "2",
            "--out-dir", str(tmp_path), "--no-progress"]
    assert main(argv) == 0
    for name in ("accuracy.md", "accuracy.csv", "accuracy_ur10_errors.png", "accuracy_ur10_solutions.png"):
        data = (tmp_path / name).read_bytes()
        assert len(data) > 100
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_ggik_eval_without_a_model_is_a_clear_error(tmp_path, capsys):
    assert main(["eval", "accuracy", "--ckpt", str(tmp_path / "none.pt"), "-n", "2"]) == 2
    assert "checkpoint not found" in capsys.readouterr().err
