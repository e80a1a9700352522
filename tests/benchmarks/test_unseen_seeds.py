"""The unseen-arm seed study (benchmarks/unseen_seeds): its arms are the adapt study's chains, its goals the adapt
study's held-out goals, and a row counts what the solver's strategies solve on them."""

from __future__ import annotations

import pytest
import torch

from benchmarks.adapt.study import ARMS
from benchmarks.unseen_seeds.seed_quality import ARM_FILES, COLUMNS, arm_robot, held_out_goals, main, measure
from ggik import GGIK
from ggik.data import ProblemSet
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
