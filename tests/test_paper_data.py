"""The GGIK paper's training data: ``DataConfig.unlimited_last_joint_zero`` (the unlimited examples' last joint at 0,
as the paper's data and goals have it) and ``train/configs/paper.yaml`` (the paper's five arms, pose goals, every
example uniform in [-pi, pi] with the last joint at 0)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from ggik import GGIKError, Robot
from ggik.data import DataConfig, TrainingData
from ggik.evaluation.paper_protocol import PAPER_ARMS
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.training.config import TrainConfig
from ggik.typed_config import from_dict, load_yaml

REPO = Path(__file__).resolve().parents[1]

MIX = dict(robots={"panda": 1.0, "ur10": 1.0}, goal_kinds={"pose": 0.5, "position": 0.5},
           batch_size=48, seed=4)  # fmt: skip

#: summary(examples(3)) of MIX at unlimited_fraction 0.5 on canonical graphs, per sampler, as ggik drew it before
#: unlimited_last_joint_zero existed (commit 52bcb76), printed from the repository's root by: REPO=$PWD OLD=$(mktemp -d)
#: && git archive 52bcb76 ggik urdfs | tar -x -C $OLD && cd $OLD && python -c "import sys;
#: sys.path.insert(0, '$REPO/tests'); import test_paper_data as t;
#: [print(s, t.summary(t.data(s).examples(3))) for s in ('stacked', 'per-robot')]"
BEFORE = {
    "stacked": {"q_sum": 19.939902289466392, "q_weighted_sum": 1208.1739091549323,
                "goal_position_sum": 24.68903412315907, "anchors": 261},
    "per-robot": {"q_sum": 41.44448027755439, "q_weighted_sum": 2398.3765473448716,
                  "goal_position_sum": 11.801564705370463, "anchors": 264},
}  # fmt: skip


def data(sampler: str, **changes) -> TrainingData:
    return TrainingData(DataConfig(**{**MIX, "sampler": sampler, "unlimited_fraction": 0.5, **changes}), "canonical")


def summary(batch) -> dict:
    """What BEFORE records of a batch: exactly rounded sums (fsum) of q and the goal positions, the anchor count."""
    q = batch.q.flatten().tolist()
    return {
        "q_sum": math.fsum(q),
        "q_weighted_sum": math.fsum(k * x for k, x in enumerate(q, 1)),
        "goal_position_sum": math.fsum(batch.T_goal[:, :3, 3].flatten().tolist()),
        "anchors": int(batch.anchor_mask.sum()),
    }


@pytest.mark.parametrize("sampler", ["stacked", "per-robot"])
@pytest.mark.parametrize("flag", [None, False], ids=["unset", "false"])
def test_unset_or_false_draws_the_examples_of_runs_made_before_it(sampler, flag):
    """At its default the batch is the one the code before the key drew (BEFORE). Floats to 1e-12: q is two rounded
    float64 operations per joint, the sums are exactly rounded, and FK's goal coordinates are good to ~1e-15 m."""
    extra = {} if flag is None else {"unlimited_last_joint_zero": flag}
    got = summary(data(sampler, **extra).examples(3))
    assert got["anchors"] == BEFORE[sampler]["anchors"]
    for key in ("q_sum", "q_weighted_sum", "goal_position_sum"):
        assert got[key] == pytest.approx(BEFORE[sampler][key], rel=0, abs=1e-12), key


@pytest.mark.parametrize("sampler", ["stacked", "per-robot"])
def test_last_joint_zero_sets_the_last_joint_of_the_unlimited_examples_alone(sampler):
    """Against the same stream without the key: the same robots, goal kinds and joints, except that the unlimited
    examples' last joint (found as the rows equal to the stream at unlimited_fraction 1, which draws the same
    uniforms) is 0; padding stays 0; every example is still solved (a pose goal is FK of its q, to 1e-12 m)."""
    step = 3
    drawn = data(sampler).examples(step)
    zeroed = data(sampler, unlimited_last_joint_zero=True).examples(step)
    every = data(sampler, unlimited_fraction=1.0).examples(step)
    assert torch.equal(zeroed.num_joints, drawn.num_joints) and torch.equal(zeroed.anchor_mask, drawn.anchor_mask)
    unlimited = (drawn.q == every.q).all(1)
    assert 0.3 < unlimited.double().mean() < 0.7  # about half the examples, so both branches are checked
    last = torch.arange(drawn.q.shape[1]) == (drawn.num_joints - 1)[:, None]  # (B, n_max): each example's last joint
    assert (drawn.q[last & unlimited[:, None]].abs() > 1e-6).all()  # drawn, not 0, without the key
    assert (zeroed.q[last & unlimited[:, None]] == 0).all()
    assert torch.equal(zeroed.q[~(last & unlimited[:, None])], drawn.q[~(last & unlimited[:, None])])
    pose = zeroed.anchor_mask.sum(1) == 6
    for name in ("panda", "ur10"):  # 7 and 6 joints: the DOF names the robot
        robot = Robot.from_name(name)
        rows = pose & (zeroed.num_joints == robot.dof)
        assert rows.sum() > 5
        T = robot.fk(zeroed.q[rows, : robot.dof].double())
        torch.testing.assert_close(zeroed.T_goal[rows].double(), T, rtol=0, atol=1e-12)


def test_last_joint_zero_without_unlimited_examples_is_a_clear_error():
    with pytest.raises(GGIKError, match=r"data.unlimited_last_joint_zero needs data.unlimited_fraction > 0"):
        data("stacked", unlimited_fraction=0.0, unlimited_last_joint_zero=True)


def test_paper_config_draws_the_papers_data():
    """train/configs/paper.yaml: the paper's five arms alike, pose goals only, every example's joints uniform in
    [-pi, pi] but the last, which is 0 (as ggik eval paper draws its goals, ggik.evaluation.tables.paper_goal_q)."""
    cfg = from_dict(TrainConfig, load_yaml(str(REPO / "train" / "configs" / "paper.yaml")))
    assert set(cfg.data.robots) == set(PAPER_ARMS) and set(cfg.data.robots.values()) == {1.0}
    assert cfg.data.goal_kinds == {"pose": 1.0} and cfg.model.volume_inputs
    cfg.data.batch_size = 2000
    d = TrainingData(cfg.data, cfg.model.graph)
    robot, q, kind, _ = d.stacked_draws(7)
    assert (kind == GOAL_KINDS.index("pose")).all()
    graphs = d.stack("cpu", 7, 0).graphs  # also each arm's graph for position goals, which pose goals never use
    drawn = [i for i in range(len(graphs)) if (robot == i).any()]
    assert sorted(graphs[i].robot.name for i in drawn) == sorted(PAPER_ARMS)
    for i in drawn:
        arm = graphs[i].robot
        qi = q[robot == i, : arm.dof]
        assert 300 < qi.shape[0] < 500, arm.name  # the five arms alike: 400 each on average
        assert (qi[:, -1] == 0).all() and (qi[:, :-1].abs() <= math.pi).all(), arm.name
        assert (qi[:, :-1].min(0).values < -2.9).all() and (qi[:, :-1].max(0).values > 2.9).all(), arm.name
