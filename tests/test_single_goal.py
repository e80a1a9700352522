"""One pose goal per call (ggik.ik.single_goal): GGIK.solve's compiled path without per-call work gives exactly the
general path's result, and refuses a bad pose with the general path's error."""

from __future__ import annotations

import pytest
import torch

import ggik.ik.single_goal as single_goal
from ggik import GGIK, Robot, SolveConfig, random_robot

pytestmark = pytest.mark.skipif(not single_goal.lm_compiled.available(), reason="numba is not installed (extra 'fast')")


@pytest.fixture(scope="module")
def solver() -> GGIK:
    return GGIK.pretrained()


def general(monkeypatch, solver, *args, **kwargs):
    monkeypatch.setattr(single_goal, "takes", lambda *a: False)
    out = solver.solve(*args, **kwargs)
    monkeypatch.undo()
    return out


@pytest.mark.parametrize("first", [True, False], ids=["first-solution", "every-start"])
@pytest.mark.parametrize("robot", ["panda", "ur10", "random7"])
def test_the_single_goal_path_is_the_general_path(robot, first, solver, monkeypatch):
    r = random_robot(7, 3) if robot == "random7" else Robot.from_name(robot)
    config = SolveConfig(strategy="random", random_starts=8, first_solution=first, pos_tol=2e-4)
    calls = []
    real = single_goal.RobotSolver.solve
    monkeypatch.setattr(single_goal.RobotSolver, "solve", lambda self, *a: calls.append(1) or real(self, *a))
    for k, T in enumerate(r.fk(r.sample_q(5, torch.Generator().manual_seed(1)))):
        goal = T if k % 2 else T[None]  # (4, 4) and (1, 4, 4)
        fast = solver.solve(r, goal, config, generator=torch.Generator().manual_seed(k))
        slow = general(monkeypatch, solver, r, goal, config, generator=torch.Generator().manual_seed(k))
        monkeypatch.setattr(single_goal.RobotSolver, "solve", lambda self, *a: calls.append(1) or real(self, *a))
        for name in ("q", "pos_err", "rot_err", "success", "within_limits"):
            assert torch.equal(getattr(fast, name), getattr(slow, name)), (k, name)
    assert len(calls) == 5  # every call took the single-goal path


def test_calls_the_single_goal_path_does_not_take(solver):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(2, torch.Generator().manual_seed(0)))
    lm = "lm"
    assert single_goal.takes(T[0], "pose", lm, None) and single_goal.takes(T[:1], "pose", lm, None)
    assert not single_goal.takes(T, "pose", lm, None)  # two goals: the batched path
    assert not single_goal.takes(T[0], "position", lm, None)
    assert not single_goal.takes(T[0], "pose", "slsqp", None)
    assert not single_goal.takes(T[0], "pose", lm, object())  # obstacles
    assert not single_goal.takes(T[0].numpy(), "pose", lm, None)  # an array: the general path converts and checks


@pytest.mark.parametrize(
    "entry, value, message",
    [((0, 0), float("nan"), "NaN or inf"), ((0, 0), 2.0, "not a rigid transform"), ((3, 0), 1.0, "not homogeneous")],
    ids=["nan", "scaled", "last-row"],
)
def test_a_bad_pose_gets_the_general_paths_error(entry, value, message, solver, monkeypatch):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(0)))[0].clone()
    T[entry] = value
    config = SolveConfig(strategy="random", random_starts=4, first_solution=True)
    with pytest.raises(ValueError, match=message) as fast:
        solver.solve(panda, T, config)
    with pytest.raises(ValueError, match=message) as slow:
        general(monkeypatch, solver, panda, T, config)
    assert str(fast.value) == str(slow.value)


def test_a_goal_that_requires_grad_is_solved_as_by_the_general_path(solver, monkeypatch):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(4)))[0].requires_grad_(True)
    config = SolveConfig(strategy="random", random_starts=4)
    fast = solver.solve(panda, T, config, generator=torch.Generator().manual_seed(0))
    slow = general(monkeypatch, solver, panda, T, config, generator=torch.Generator().manual_seed(0))
    assert torch.equal(fast.q, slow.q)
    assert not single_goal.takes(T, "pose", "lm", None, single_goal.lm_compiled.COMPILED_MAX_ELEMENTS + 1)
