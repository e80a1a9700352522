"""Every LM backend against an independent reference, not against another backend's kernel.

The reference is the configuration that made the goal: on 6-DOF arms without a redundant direction a goal's
solutions are isolated, so LM started 0.05 rad away must return to that configuration (no LM code involved in the
answer), and the errors it reports must be those of an independent FK of what it returns. Each backend is chosen by
``RefineConfig.lm_backends`` (compiled where numba is installed), and a spy checks that it, and no other, ran."""

from __future__ import annotations

import pytest
import torch

from ggik import Robot, random_robot
from ggik.graph.goal_kinds import goal_errors, goal_poses, tool_axis
from ggik.ik.lm import compiled, select
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig

BACKENDS = select.BACKENDS


def use_backend(name: str, monkeypatch) -> tuple[RefineConfig, list[str]]:
    """(settings that route LM to backend ``name``, the list of the backends called, filled as they run)."""
    if name == "compiled" and not compiled.available():
        pytest.skip("numba is not installed (pip install 'ggik[fast]')")
    called: list[str] = []
    for label, original in list(select.SOLVERS.items()):

        def spy(problem, _original=original, _label=label):
            called.append(_label)
            return _original(problem)

        monkeypatch.setitem(select.SOLVERS, label, spy)
    return RefineConfig(pos_tol=1e-9, rot_tol=1e-9, max_iters=60, lm_backends=(name,)), called


def arm(robot_id: str) -> Robot:
    if robot_id == "random6":
        return random_robot(6, torch.Generator().manual_seed(606), name="random6")
    return Robot.from_name(robot_id)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("robot_id", ["ur10", "kr16_2", "random6"])
def test_lm_returns_to_the_configuration_that_made_the_goal(robot_id, backend, monkeypatch):
    robot = arm(robot_id)
    g = torch.Generator().manual_seed(7)
    mid, half = (robot.lower + robot.upper) / 2, (robot.upper - robot.lower) / 2
    q_true = mid + 0.7 * half * (2 * torch.rand(64, robot.dof, generator=g, dtype=torch.float64) - 1)
    J = robot.jacobian(q_true)
    well_posed = torch.linalg.svdvals(J)[:, -1] > 0.02  # away from singular configurations: an isolated solution
    q_true = q_true[well_posed][:8]
    assert q_true.shape[0] >= 4
    T = robot.fk(q_true)
    q0 = q_true + 0.05 * torch.randn(q_true.shape, generator=g, dtype=torch.float64)
    cfg, called = use_backend(backend, monkeypatch)
    axis = tool_axis(robot)
    q, info = lm_refine_checked(robot, goal_poses(T, "pose", axis), q0, cfg, "pose", axis)
    assert set(called) == {backend}, called  # that backend ran, and no other
    torch.testing.assert_close(q, q_true, rtol=0, atol=1e-6)
    pos, rot = goal_errors(robot.fk(q), T, "pose", axis)  # the independent FK of what LM returned
    torch.testing.assert_close(info.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(info.rot_err, rot, rtol=0, atol=1e-9)
    assert bool((pos < 1e-9).all())
