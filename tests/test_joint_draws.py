"""ggik.kinematics.joint_draws: the one rule that maps uniforms to joint values, and its three users (the stacked and
per-robot training samplers, the paper's goals) drawing what they drew before it existed.

The training draws are pinned bit for bit twice: by the sha256 of draws the code before the shared function made
(commit 19937c7, recorded once), and by the arithmetic of that code written out here (``lo + (hi - lo) * u``, the
limits replaced by [-pi, pi] for free joints). The paper's goals were ``pi * (2 u - 1)``; they now share the training
samplers' arithmetic, ``-pi + 2 pi u``, which differs from it by at most one rounding (one ulp of pi).
"""

from __future__ import annotations

import hashlib
import math

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.data import DataConfig, TrainingData
from ggik.evaluation.tables import paper_goal_q
from ggik.graph.stacked import StackedGraphs
from ggik.kinematics.joint_draws import FULL_TURN, uniform_joints
from ggik.rng import step_generator


def sha(t: torch.Tensor) -> str:
    """The first 16 hex digits of the sha256 of a tensor's bytes (little-endian machines)."""
    return hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest()[:16]


def old_rule(u: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor, free: torch.Tensor) -> torch.Tensor:
    """The code before the shared function, as data.py and stacked.py wrote it: full_like bounds, lo + (hi - lo) u."""
    lo = torch.where(free, torch.full_like(u, -torch.pi), lower)
    hi = torch.where(free, torch.full_like(u, torch.pi), upper)
    return lo + (hi - lo) * u


def test_the_per_robot_sampler_draws_what_it_drew_before():
    """TrainingData's per-robot sampler at unlimited_fraction 0.5: the uniforms of Robot.sample_q, then one per
    example picking the free ones; sha256 of the old code's draw and the old arithmetic on the same stream."""
    panda = Robot.from_name("panda")
    data = TrainingData(DataConfig(robots={"panda": 1.0}, unlimited_fraction=0.5))
    q = data._sample_q(panda, 64, step_generator(7, 1))
    assert sha(q) == "0b3094997744944d"  # the draw of commit 19937c7
    g = step_generator(7, 1)
    u = torch.rand(64, panda.dof, generator=g, dtype=torch.float64)
    free = (torch.rand(64, generator=g, dtype=torch.float64) < 0.5)[:, None]
    assert 10 < int(free.sum()) < 54, "test-data precondition: both kinds of examples"
    assert torch.equal(q, old_rule(u, panda.lower, panda.upper, free))
    assert torch.equal(q[free[:, 0]], -math.pi + 2 * math.pi * u[free[:, 0]])


@pytest.mark.parametrize(
    "dtype, with_free, without",
    [
        (torch.float64, "39620fb93a421e42", "9b1476cb8611791a"),
        (torch.float32, "167962c4823c7b51", "7645c80d6cbb69aa"),
    ],
)
def test_the_stacked_sampler_draws_what_it_drew_before(dtype, with_free, without):
    """StackedGraphs.sample_q of a Panda (7 DOF) and UR10 (6 DOF: one padded joint, kept 0) stack, with and without
    free examples, in both dtypes: the old code's sha256 and its arithmetic in the stack's dtype."""
    stack = StackedGraphs([RobotGraph.from_robot(Robot.from_name(n)) for n in ("panda", "ur10")], dtype=dtype)
    g = step_generator(7, 2)
    robot = (torch.rand(64, generator=g) < 0.5).long()
    u = torch.rand(64, stack.n_max, generator=g, dtype=torch.float64)
    unlimited = torch.rand(64, generator=g) < 0.5
    q, q_limited = stack.sample_q(robot, u, unlimited), stack.sample_q(robot, u)
    assert (sha(q), sha(q_limited)) == (with_free, without)  # the draws of commit 19937c7
    free = unlimited[:, None] & stack.joint_mask[robot]
    lo, hi, u_ = stack.lower[robot], stack.upper[robot], u.to(dtype)
    assert torch.equal(q, old_rule(u_, lo, hi, free)) and torch.equal(q_limited, lo + (hi - lo) * u_)
    assert (q[~stack.joint_mask[robot]] == 0).all()


def test_the_paper_goals_take_the_samplers_arithmetic_within_one_rounding_of_the_old():
    """paper_goal_q: joints 1..dof-1 are -pi + 2 pi u (the samplers' rule) and within one ulp of pi (2u - 1), the
    formula it had; the last joint 0."""
    panda = Robot.from_name("panda")
    q = paper_goal_q(panda, 512, step_generator(7, 3))
    u = torch.rand(512, panda.dof, generator=step_generator(7, 3), dtype=torch.float64)
    assert torch.equal(q[:, :-1], (-math.pi + 2 * math.pi * u)[:, :-1]) and (q[:, -1] == 0).all()
    old = math.pi * (2.0 * u - 1.0)
    ulp = math.ulp(math.pi)
    assert (q[:, :-1] - old[:, :-1]).abs().max() <= ulp
    assert (q[:, :-1] != old[:, :-1]).any(), "the two formulas round differently somewhere (else this says nothing)"


def test_uniform_joints_maps_zero_and_one_to_the_bounds_and_free_joints_to_a_full_turn():
    lower = torch.tensor([-1.0, 0.5, -2.0], dtype=torch.float64)
    upper = torch.tensor([1.0, 1.5, 4.0], dtype=torch.float64)
    u = torch.tensor([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [0.25, 0.5, 0.75]], dtype=torch.float64)
    free = torch.tensor([[False], [True], [False]])
    q = uniform_joints(u, lower, upper, free)
    assert torch.equal(q[0], lower) and torch.equal(q[2], torch.tensor([-0.5, 1.0, 2.5], dtype=torch.float64))
    assert torch.equal(q[1], torch.full((3,), FULL_TURN[1], dtype=torch.float64))
    per_joint = torch.tensor([[True, False, True]]).expand(3, 3)
    q = uniform_joints(u, lower, upper, per_joint)
    assert torch.equal(q[:, 1], lower[1] + (upper[1] - lower[1]) * u[:, 1])
    assert torch.equal(q[:, 0], FULL_TURN[0] + 2 * math.pi * u[:, 0])
    assert torch.equal(uniform_joints(u, *FULL_TURN), -math.pi + 2 * math.pi * u)
