"""The compiled LM (ggik.ik.lm_compiled, numba) takes the numpy LM's steps, element for element.

Small float64 CPU batches run compiled when numba is installed (extra ``fast``), else in numpy (``lm_numpy``), which
``tests/test_lm_numpy.py`` holds to the torch solver. Here the compiled kernel is held to numpy on the same chains
(shipped, random, prismatic, mimic, continuous, oblique axes), every goal kind, starts inside and outside the limits,
with and without the early stop per goal: the same iterations and convergence, joint values and errors up to float
rounding."""

from __future__ import annotations

import pytest
import torch
from test_lm_numpy import ROBOTS, make_robot

import ggik.ik.refine as refine
from ggik.graph.goal_kinds import GOAL_KINDS, goal_errors, goal_poses, tool_axis
from ggik.ik.refine import RefineConfig, lm_refine_checked

pytestmark = pytest.mark.skipif(not refine.lm_compiled.available(), reason="numba is not installed (extra 'fast')")


def compiled_and_numpy(robot_id: str, kind: str, stop: bool, iters: int, monkeypatch, goals: int = 6, starts: int = 8):
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    g = torch.Generator().manual_seed(5)
    T = robot.fk(robot.sample_q(goals, g))
    goal = goal_poses(T, kind, axis)[:, None]
    span = (robot.upper - robot.lower) * robot.limited  # starts partly outside the limits
    q0 = robot.sample_q(goals * starts, g).view(goals, starts, robot.dof)
    q0 = q0 + 0.3 * span * torch.randn(goals, starts, robot.dof, generator=g)
    cfg = RefineConfig(max_iters=iters, stop_at_first=stop)
    compiled = lm_refine_checked(robot, goal, q0, cfg, kind, axis)
    monkeypatch.setattr(refine.lm_compiled, "available", lambda: False)
    numpy = lm_refine_checked(robot, goal, q0, cfg, kind, axis)
    monkeypatch.undo()
    return robot, T, compiled, numpy


@pytest.mark.parametrize("stop", [False, True], ids=["all-starts", "stop-at-first"])
@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_take_the_same_steps(robot_id, kind, stop, monkeypatch):
    """Three iterations: the same steps up to float rounding."""
    _, _, (q_c, info_c), (q_n, info_n) = compiled_and_numpy(robot_id, kind, stop, 3, monkeypatch)
    assert torch.equal(info_c.iterations, info_n.iterations)
    assert torch.equal(info_c.converged, info_n.converged)
    torch.testing.assert_close(q_c, q_n, rtol=0, atol=1e-9)
    torch.testing.assert_close(info_c.pos_err, info_n.pos_err, rtol=0, atol=1e-10)
    torch.testing.assert_close(info_c.rot_err, info_n.rot_err, rtol=0, atol=1e-10)


@pytest.mark.parametrize("stop", [False, True], ids=["all-starts", "stop-at-first"])
@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_solve_alike_over_the_whole_budget(robot_id, kind, stop, monkeypatch):
    """The whole budget: rounding may grow into another accepted step on a few starts, never into another outcome
    (converged starts within one, iterations within 5 %, every goal solved by one as by the other); the errors
    reported are those of the joint values returned (forward kinematics, independently)."""
    robot, T, (q_c, info_c), (q_n, info_n) = compiled_and_numpy(robot_id, kind, stop, 100, monkeypatch)
    assert abs(int(info_c.converged.sum()) - int(info_n.converged.sum())) <= 1
    assert info_c.converged.float().mean() > 0.1, "the test needs converged starts"
    assert torch.equal(info_c.converged.any(-1), info_n.converged.any(-1))
    its_c, its_n = info_c.iterations.double().mean(), info_n.iterations.double().mean()
    assert abs(its_c - its_n) <= 0.05 * its_n
    T_goal = goal_poses(T, kind, tool_axis(robot))
    pos, rot = goal_errors(robot.fk(q_c), T_goal[:, None], kind, tool_axis(robot))
    torch.testing.assert_close(pos, info_c.pos_err, rtol=0, atol=1e-12)
    torch.testing.assert_close(rot, info_c.rot_err, rtol=0, atol=1e-9)
    assert bool(robot.within_limits(q_c).all())


def test_one_goal_one_start_the_single_call_path(monkeypatch):
    """B = 1, S = 1 (what a robot program asks): the compiled result is numpy's."""
    _, _, (q_c, info_c), (q_n, info_n) = compiled_and_numpy("panda", "pose", True, 100, monkeypatch, goals=1, starts=1)
    assert torch.equal(info_c.iterations, info_n.iterations) and torch.equal(info_c.converged, info_n.converged)
    torch.testing.assert_close(q_c, q_n, rtol=0, atol=1e-8)
