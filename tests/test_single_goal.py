"""One pose goal per call (ggik.ik.single_goal): GGIK.solve's path without per-call work (the compiled kernel) gives
the general path's result with another LM backend (torch), outcome for outcome (tests/lm_agreement.py), and refuses a
bad pose with the general path's error."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from lm_agreement import FK_POS_TOL, FK_ROT_TOL, JOINT_TOL, unique_solutions

import ggik.ik.single_goal as single_goal
from ggik import GGIK, Robot, SolveConfig, random_robot
from ggik.graph.goal_kinds import tool_axis
from ggik.ik.lm import compiled, select
from ggik.ik.lm.select import COMPILED_MAX_ELEMENTS, NUMPY_MAX_ELEMENTS
from ggik.ik.refine_config import RefineConfig
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.geometry import pose_errors

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba is not installed (extra 'fast')")


@pytest.fixture(scope="module")
def solver() -> GGIK:
    return GGIK.pretrained()


def general(monkeypatch, solver, *args, **kwargs):
    """The general path's result, its LM in torch (another backend than the single-goal path's kernel)."""
    monkeypatch.setattr(single_goal, "takes", lambda *a: False)
    monkeypatch.setattr(solver, "config", replace(solver.config, lm_backends=("torch",)))
    ran = []
    real = select.SOLVERS["torch"]
    monkeypatch.setitem(select.SOLVERS, "torch", lambda p: ran.append(1) or real(p))
    out = solver.solve(*args, **kwargs)
    monkeypatch.undo()
    assert ran, "the general path ran LM in torch"
    return out


def assert_same_solutions(robot: Robot, T: torch.Tensor, config: SolveConfig, fast, slow) -> None:
    """Two paths' results of one pose goal ``T`` (4, 4) agree on outcomes (tests/lm_agreement.py: not on rounding, as
    the backends differ in it): each reports the errors of its own joint values and succeeds where they are under the
    tolerances; both have the same successes (ranked first) and the same solutions within limits; each of fast's
    successful unique solutions is one of slow's (JOINT_TOL), its best the same where that is unique."""
    tol = config.tolerances(SOLVE_TOLERANCES)
    for res in (fast, slow):
        pos, rot = pose_errors(robot.fk(res.q[0]), T.detach().reshape(4, 4))
        torch.testing.assert_close(res.pos_err[0], pos, rtol=0, atol=FK_POS_TOL)
        torch.testing.assert_close(res.rot_err[0], rot, rtol=0, atol=FK_ROT_TOL)
        assert torch.equal(res.success[0], tol.met(res.pos_err[0], res.rot_err[0]))
        assert torch.equal(res.within_limits[0], robot.within_limits(res.q[0]))
    assert torch.equal(fast.success, slow.success), "the same successes, ranked first"
    assert torch.equal(fast.success & fast.within_limits, slow.success & slow.within_limits)
    axis = tool_axis(robot)
    mine = fast.success[0] & unique_solutions(robot, fast.q[0], "pose", axis)
    theirs = slow.q[0][slow.success[0]]
    if bool(mine.any()):
        d = torch.cdist(fast.q[0][mine], theirs)
        assert float(d.min(-1).values.max()) <= JOINT_TOL, "each unique solution is one of the other path's"
        if bool(mine[0]):  # the best: the same (a tie of the ranking's score within rounding would be two solutions)
            torch.testing.assert_close(fast.q[0, 0], slow.q[0, 0], rtol=0, atol=JOINT_TOL)


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
        assert_same_solutions(r, goal, config, fast, slow)
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
    # the backend decides the rest, select_backend's choice for the call's problem (float64 CPU, `starts` elements)
    assert not single_goal.RobotSolver(panda, RefineConfig(lm_backends=("torch",)), 1).fast  # torch: the general path
    numpy_only = RefineConfig(lm_backends=("numpy", "torch"))
    assert single_goal.RobotSolver(panda, numpy_only, NUMPY_MAX_ELEMENTS).fast
    assert not single_goal.RobotSolver(panda, numpy_only, NUMPY_MAX_ELEMENTS + 1).fast


@pytest.mark.parametrize("chosen", select.BACKENDS)
def test_the_single_goal_path_follows_select_backends_choice(chosen, solver, monkeypatch):
    """One source for the rule: the CPU rule of select_backend changed (to choose ``chosen`` for every float64 CPU
    problem), the call follows it: torch runs the general path, another backend the single-goal path on it."""
    monkeypatch.setattr(select, "cpu_backend", lambda n, prefer=None: chosen)
    ran, one_goal = [], []
    for name, solve in list(select.SOLVERS.items()):
        monkeypatch.setitem(select.SOLVERS, name, lambda p, n=name, s=solve: ran.append(n) or s(p))
    real = single_goal.RobotSolver.solve
    monkeypatch.setattr(single_goal.RobotSolver, "solve", lambda self, *a: one_goal.append(1) or real(self, *a))
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(0)))[0]
    fresh = GGIK(solver.model)  # no warm single-goal solver from another test
    fresh.solve(panda, T, SolveConfig(strategy="random", random_starts=4), generator=torch.Generator().manual_seed(1))
    assert ran == [chosen], ran
    assert len(one_goal) == (chosen != "torch"), f"{chosen}: the single-goal path is taken exactly when not torch"


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
    assert_same_solutions(panda, T, config, fast, slow)
    assert not single_goal.RobotSolver(panda, RefineConfig(), COMPILED_MAX_ELEMENTS + 1).fast
