"""Axis reversal in the distance-geometric projection (``DGConfig.flips``, :func:`ggik.ik.dg_refine.reverse_axes`): the
passes that take samples whose nearby solutions lie outside the joint limits to the arm's other branch."""

from __future__ import annotations

import math

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.graph.frames import AXIS_LENGTH
from ggik.ik.dg_limits import goal_point, limit_terms
from ggik.ik.dg_refine import DGConfig, dg_refine, project_point_sets, reverse_axes

F64 = torch.float64
CONVERGED = 1e-8  #: [m^4] the handedness study's definition


def _p(i: int) -> int:
    return 0 if i == 0 else 2 * i + 2


def _q(i: int) -> int:
    return 3 if i == 0 else 2 * i + 3


def panda_problem(P: int, seed: int):
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot, "canonical")
    q_goal = robot.sample_q(P, torch.Generator().manual_seed(seed)).to(F64)
    return robot, graph, q_goal, graph.goals(robot.fk(q_goal))


@pytest.mark.parametrize("joints", [(3,), (5,), (3, 5), (0,), ()])
def test_reverse_axes_reflects_the_axes_of_the_joints_outside_their_limits_and_nothing_else(joints):
    """Panda realizations with the given joints (0-based) moved 0.3-1.3 rad outside their limits: q_{i-1} of each such
    joint i is reflected through p_{i-1} (to rounding), keeping its distance L from p_{i-1}; every other node is left
    bitwise as it was, the first joint's base axis (anchors) included."""
    robot, graph, _, goals = panda_problem(6, 0)
    g = torch.Generator().manual_seed(1)
    q = robot.sample_q(6, g).to(F64)
    lo, hi = robot.lower.to(F64), robot.upper.to(F64)
    for j in joints:
        out = 0.3 + torch.rand(6, generator=g, dtype=F64)
        q[:, j] = torch.where(torch.rand(6, generator=g) < 0.5, hi[j] + out, lo[j] - out)
    assert bool(robot.within_limits(q).logical_not().all()) == bool(joints)
    X = graph.realize(q)
    terms = limit_terms(graph, "pose", 1e-6)
    anchors = graph.partial(goals).anchor_mask
    Y = X.clone()
    reverse_axes(Y, goal_point(goals.in_graph)[:, None], terms, anchors)
    moved = [_q(j) for j in joints if j > 0]  # joint j + 1 turns about (p_j, q_j); joint 1's axis is the base's
    keep = [n for n in range(graph.num_nodes) if n not in moved]
    assert torch.equal(Y[:, keep], X[:, keep])
    for j in joints:
        if j > 0:
            torch.testing.assert_close(Y[:, _q(j)], 2 * X[:, _p(j)] - X[:, _q(j)], rtol=0, atol=1e-15)
            length = (Y[:, _q(j)] - Y[:, _p(j)]).norm(dim=-1)
            torch.testing.assert_close(length, torch.full((6,), AXIS_LENGTH, dtype=F64))


def test_each_pass_keeps_a_sample_s_best_so_more_passes_never_raise_its_cost():
    """The passes are the same computation up to the last (deterministic), and each sample keeps its pass of lowest
    cost: the final cost of every sample falls or stays with each further pass, and some fall."""
    robot, graph, _, goals = panda_problem(8, 2)
    starts = graph.realize(robot.sample_q(64, torch.Generator().manual_seed(3)).to(F64).view(8, 8, 7))
    costs = [project_point_sets(graph, starts, goals, DGConfig(flips=k))[1] for k in (1, 2, 3)]
    for before, after in zip(costs, costs[1:]):
        assert bool((after <= before).all())
    assert bool((costs[-1] < costs[0]).any())


def test_the_panda_s_samples_outside_joint_4_reach_the_other_branch():
    """Starts near each goal's configuration (0.05 rad) on the elbow's other branch (q3 + pi, -q4, q5 + pi: joint 4,
    [-3.07, -0.07] rad, bent the other way): the distances alone take them to a solution outside the limits, the hinges
    alone (one pass) hold few of them, axis reversal takes most to the goal within the limits. Measured: converged
    within the limits 8 of 64 with the hinges alone, 56 with 3 passes (held to 45 and 30 more); every converged
    projection within the limits, at the goal."""
    robot, graph, q_goal, goals = panda_problem(8, 4)
    g = torch.Generator().manual_seed(5)
    q0 = q_goal[:, None].repeat(1, 8, 1) + 0.05 * torch.randn(8, 8, 7, generator=g, dtype=F64)
    q0[..., 2] += math.pi  # the elbow's other branch: the same pose to within the Panda's elbow offsets
    q0[..., 3] = -q0[..., 3]
    q0[..., 4] += math.pi
    assert not bool(robot.joints_within_limits(q0)[..., 3].any())
    X = graph.realize(q0)
    one = dg_refine(graph, X, goals, DGConfig(flips=0))
    many = dg_refine(graph, X, goals, DGConfig(flips=3))
    ok = {k: (r.cost < CONVERGED) & r.within_limits for k, r in (("one", one), ("many", many))}
    conv = many.cost < CONVERGED
    assert bool(many.within_limits[conv].all())
    assert float(many.pos_err[conv].max()) < 1e-6 and float(many.rot_err[conv].max()) < 1e-6
    n_one, n_many = int(ok["one"].sum()), int(ok["many"].sum())
    assert n_many >= 45 and n_many >= n_one + 30, (n_one, n_many)


@pytest.mark.parametrize("kind", ["position", "position+axis"])
def test_partial_goals_take_the_passes_too(kind):
    """Position and position + axis goals on the Panda from starts anywhere in [-pi, pi]: every converged projection
    is within the limits and at its goal, and the passes converge more of them within the limits than the hinges
    alone. Measured, hinges alone / 3 passes: 73 / 113 (position), 62 / 119 (position + axis) of 128 (held to 25
    more)."""
    robot, graph, q_goal, _ = panda_problem(8, 6)
    T = robot.fk(q_goal)
    goals = graph.goals(T[:, :3, 3] if kind == "position" else T, kind)
    q0 = (2 * torch.rand(8, 16, 7, generator=torch.Generator().manual_seed(7), dtype=F64) - 1) * math.pi
    X = graph.for_goal_kind(kind).realize(q0)
    one = dg_refine(graph, X, goals, DGConfig(flips=0))
    many = dg_refine(graph, X, goals, DGConfig(flips=3))
    conv = many.cost < CONVERGED
    assert bool(many.within_limits[conv].all())
    assert float(many.pos_err[conv].max()) < 1e-6 and float(many.rot_err[conv].max()) < 1e-6
    n_one, n_many = int(((one.cost < CONVERGED) & one.within_limits).sum()), int(conv.sum())
    assert n_many >= n_one + 25, (n_one, n_many)


def test_a_bad_number_of_passes_is_a_clear_error():
    with pytest.raises(ValueError, match=r"DGConfig.flips must be >= 0, got -1"):
        DGConfig(flips=-1)
