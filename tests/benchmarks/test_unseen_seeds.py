"""The unseen-arm seed study (benchmarks/unseen_seeds): its arms are the adapt study's chains, its goals the adapt
study's held-out goals, and a row counts what the solver's strategies solve on them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from benchmarks.adapt.study import ARMS
from benchmarks.unseen_seeds.seed_quality import ARM_FILES, COLUMNS, arm_robot, held_out_goals, main, measure
from benchmarks.unseen_seeds.summary import main as summary_main
from benchmarks.unseen_seeds.summary import summary
from ggik import GGIK
from ggik.data import ProblemSet
from ggik.evaluation.report import Table
from ggik.kinematics.robot_files import training_robots
from ggik.training.adapt_config import TEST_SEED_OFFSET, AdaptConfig


@pytest.mark.parametrize("name", list(ARM_FILES))
def test_the_arms_and_goals_are_the_adapt_studys_held_out_ones(name):
    """The chain of benchmarks.adapt.study.ARMS as ggik adapt resolves it, and the goals ggik adapt holds out for it
    (its test problems: ``cfg.test_problems`` goals, seed ``cfg.seed + TEST_SEED_OFFSET``)."""
    adapted = training_robots({name: ARMS[name]})[0].robot
    robot, cfg = arm_robot(name), AdaptConfig()
    assert robot.dof == adapted.dof and torch.equal(robot.lower, adapted.lower)
    assert torch.equal(robot.upper, adapted.upper)
    _, q, T = ProblemSet.generate([adapted], cfg.test_problems, cfg.seed + TEST_SEED_OFFSET).groups()[0]
    torch.testing.assert_close(held_out_goals(robot, 100), T, rtol=0, atol=1e-12)
    torch.testing.assert_close(robot.fk(q), T, rtol=0, atol=1e-12)


def test_a_row_counts_the_strategies_on_the_goals():
    """Two UR5 goals, 4 samples and 4 random starts: the row's goal counts agree with one another (model-first
    solves at least what LM from the samples solves, and whatever the random starts solve), shares in [0, 100]."""
    row = dict(zip(COLUMNS, measure(GGIK.pretrained(), "ur5", 2, 4, 4, 0)))
    assert row["arm"] == "ur5" and row["goals"] == 2
    solved_lm, solved_first = row["samples + LM: goals solved"], row["model-first (ggik solve default): goals solved"]
    solved_random = row["random + LM: goals solved"]
    assert solved_first >= max(solved_lm, solved_random) and solved_first <= 2
    for key in COLUMNS[3:6] + COLUMNS[8:9]:
        assert 0.0 <= row[key] <= 100.0
    missed = row["goals samples + LM leave unsolved (random + LM solves them?)"]
    assert (missed == "none") == (solved_lm == 2)


def test_bad_options_are_refused():
    with pytest.raises(SystemExit, match="--arms: unknown"):
        main(["--arms", "kuka"])
    with pytest.raises(SystemExit, match="--goals"):
        main(["--goals", "101"])


def test_the_summary_pools_each_runs_seeds_per_arm(tmp_path):
    """Two runs of two seeds: the per-sample share's mean and range, and the unsolved goals summed over the seeds."""

    def run(name: str, rows: list[tuple]) -> Path:
        table = Table("t", list(COLUMNS))
        for arm, seed, share, lm, first, rand in rows:
            table.add(arm, seed, 10, 1.0, 10.0, share, lm, first, 50.0, rand, "none")
        table.write(tmp_path / name, "cmd", 0, None)
        return tmp_path / f"{name}.csv"

    a = run("a", [("baxter", 0, 40.0, 9, 10, 10), ("baxter", 1, 36.0, 10, 10, 9), ("ur5", 0, 90.0, 10, 10, 10)])
    b = run("b", [("baxter", 0, 38.0, 8, 10, 10), ("ur5", 0, 93.0, 10, 10, 10)])
    rows = [dict(zip(t.columns, r)) for t in [summary([("a", a), ("b", b)])] for r in t.rows]
    assert [(r["arm"], r["run"], r["seeds"]) for r in rows] == [
        ("baxter", "a", 2),
        ("baxter", "b", 1),
        ("ur5", "a", 1),
        ("ur5", "b", 1),
    ]
    assert rows[0]["samples + LM: samples strict, mean (min-max) [%]"] == "38.00 (36.00-40.00)"
    assert rows[0]["samples + LM: goals unsolved / tried"] == "1 / 20"
    assert rows[0]["random + LM: goals unsolved / tried"] == "1 / 20"
    assert rows[1]["samples + LM: goals unsolved / tried"] == "2 / 10"
    with pytest.raises(SystemExit, match="LABEL=CSV"):
        summary_main(["a.csv"])
