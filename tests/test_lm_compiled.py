"""The compiled LM backend (ggik.ik.lm.compiled, numba) takes the numpy backend's steps, element for element.

Float64 CPU batches run compiled when numba is installed (extra ``fast``), else in numpy, which
``tests/test_lm_numpy.py`` holds to the torch backend. Here the compiled kernel is held to numpy on the same chains
(shipped, random, prismatic, mimic, continuous, oblique axes), every goal kind, starts inside and outside the limits,
by the rule of ``tests/lm_agreement.py`` (the kernel solves its steps with a Cholesky, numpy with LU: outcomes and
unique solutions agree, not the rounding): three iterations take the same steps, the whole budget reaches the same
outcomes. With the early stop per goal the compiled kernel runs a goal's starts in turn where numpy runs them in
lock-step; both follow the first-solution rule and choose the same start, each start up to it run as alone."""

from __future__ import annotations

import pytest
import torch
from lm_agreement import (
    LMCase,
    assert_first_as_alone,
    assert_reports_its_own_errors,
    assert_same_first_solutions,
    assert_same_outcomes,
    assert_same_solutions,
    assert_same_steps,
)
from test_lm_numpy import ROBOTS, make_robot

from ggik.graph.goal_kinds import GOAL_KINDS, goal_poses, tool_axis
from ggik.ik.lm import compiled, select
from ggik.ik.lm.problem import LMChain, LMProblem
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba is not installed (extra 'fast')")


def compiled_and_numpy(robot_id: str, kind: str, stop: bool, iters: int, monkeypatch, goals: int = 6, starts: int = 8):
    """(the case: robot, canonical goals (goals, 1, 4, 4), settings, starts (goals, starts, dof); the kernel's run;
    numpy's run); a spy checks that the kernel ran."""
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    g = torch.Generator().manual_seed(5)
    T = robot.fk(robot.sample_q(goals, g))
    goal = goal_poses(T, kind, axis)[:, None]
    span = (robot.upper - robot.lower) * robot.limited  # starts partly outside the limits
    q0 = robot.sample_q(goals * starts, g).view(goals, starts, robot.dof)
    q0 = q0 + 0.3 * span * torch.randn(goals, starts, robot.dof, generator=g)
    cfg = RefineConfig(max_iters=iters, stop_at_first=stop, lm_backends=("compiled",))
    calls = []
    real = select.SOLVERS["compiled"]
    monkeypatch.setitem(select.SOLVERS, "compiled", lambda p: calls.append(1) or real(p))
    by_kernel = lm_refine_checked(robot, goal, q0, cfg, kind, axis)
    assert calls, "the compiled kernel ran"
    monkeypatch.setattr(compiled, "available", lambda: False)  # numba absent: numpy
    by_numpy = lm_refine_checked(robot, goal, q0, RefineConfig(max_iters=iters, stop_at_first=stop), kind, axis)
    monkeypatch.undo()
    return LMCase(robot, goal, kind, cfg, q0), by_kernel, by_numpy


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_take_the_same_steps(robot_id, kind, monkeypatch):
    """Three iterations of every start: the same outcomes, and every start's joint values within the bound the
    damping gives to three steps' rounding (lm_agreement rule 4)."""
    case, by_kernel, by_numpy = compiled_and_numpy(robot_id, kind, False, 3, monkeypatch)
    assert_same_steps(case, by_kernel, by_numpy, "compiled/numpy")


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_solve_alike_over_the_whole_budget(robot_id, kind, monkeypatch):
    """The whole budget: rounding may grow into another accepted step on a few wandering starts, never into another
    outcome (converged starts within one, iterations within 5 %, every goal solved by one as by the other); each
    reports the errors of the joint values it returns; the starts that converge alike (in iterations within one)
    reach the same unique solutions (lm_agreement rules 1 and 3)."""
    case, (q_c, info_c), (q_n, info_n) = compiled_and_numpy(robot_id, kind, False, 100, monkeypatch)
    assert abs(int(info_c.converged.sum()) - int(info_n.converged.sum())) <= 1
    assert info_c.converged.float().mean() > 0.1, "the test needs converged starts"
    assert torch.equal(info_c.converged.any(-1), info_n.converged.any(-1))
    its_c, its_n = info_c.iterations.double().mean(), info_n.iterations.double().mean()
    assert abs(its_c - its_n) <= 0.05 * its_n
    for run in ((q_c, info_c), (q_n, info_n)):
        assert_reports_its_own_errors(case, run)
        assert bool(case.robot.within_limits(run[0]).all())
    alike = info_c.converged & info_n.converged & ((info_c.iterations - info_n.iterations).abs() <= 1)
    assert_same_solutions(case, q_c, q_n, alike, "compiled/numpy")


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_stop_at_first_runs_a_goals_starts_in_turn(robot_id, kind, monkeypatch):
    """Per goal: the compiled kernel (in turn) and numpy (lock-step) both follow the first-solution rule and choose
    the same start (lm_agreement rule 5); on the kernel, the starts up to the chosen one are its run of each start
    alone (the same outcomes, the solution unique alike), and the later ones did not run."""
    iters = 12
    case, stopped, by_numpy = compiled_and_numpy(robot_id, kind, True, iters, monkeypatch)
    _, alone, _ = compiled_and_numpy(robot_id, kind, False, iters, monkeypatch)  # each start alone
    assert_same_first_solutions(case, stopped, by_numpy, "compiled/numpy")
    assert_reports_its_own_errors(case, alone)
    assert_first_as_alone(case, stopped, alone, "in turn/alone")


def test_one_goal_one_start_the_single_call_path(monkeypatch):
    """B = 1, S = 1 (what a robot program asks): the compiled result is numpy's (one start: in turn is lock-step)."""
    case, by_kernel, by_numpy = compiled_and_numpy("panda", "pose", True, 100, monkeypatch, 1, 1)
    assert_same_outcomes(case, by_kernel, by_numpy, "compiled/numpy")


@pytest.mark.parametrize("threads", [1, 2])
def test_a_compiled_call_leaves_torchs_threads_as_they_were(threads):
    """numba's OpenMP layer sets the process's thread count: the call puts torch's back."""
    robot = make_robot("panda")
    T = robot.fk(robot.sample_q(4, torch.Generator().manual_seed(0)))
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        for stop in (False, True):
            lm_refine_checked(robot, T[:, None], robot.sample_q(8, torch.Generator().manual_seed(1)).view(4, 2, -1),
                              RefineConfig(stop_at_first=stop), "pose", None)  # fmt: skip
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)


def test_numba_threads_are_restored_and_uneven_starts_refused():
    import numba

    before = numba.get_num_threads()
    test_a_compiled_call_leaves_torchs_threads_as_they_were(1)
    assert numba.get_num_threads() == before
    robot = make_robot("panda")
    q = robot.sample_q(5, torch.Generator().manual_seed(0))
    chain = LMChain.of(robot, "pose", RefineConfig(), q)
    with pytest.raises(ValueError, match="not goals of 2 consecutive starts"):
        compiled.solve_compiled(LMProblem.on(chain, robot.fk(q), q, 2))


_FRESH = """
import sys, threading, torch
from ggik import Robot
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
robot = Robot.from_name("panda")
T = robot.fk(robot.sample_q(3, torch.Generator().manual_seed(0)))
out, barrier = [], threading.Barrier(2)
def run():
    barrier.wait()
    out.append(bool(lm_refine(robot, T[:, None], robot.sample_q(12).view(3, 4, -1), RefineConfig())[1].converged.any()))
threads = [threading.Thread(target=run) for _ in range(2)]
[t.start() for t in threads]
[t.join() for t in threads]
print(out)
"""


def test_two_threads_may_make_the_first_compiled_call_at_once():
    """A fresh process: both threads reach the kernel's first build together; both get results."""
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _FRESH], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[True, True]"


def test_a_numba_that_refuses_to_import_leaves_numpy_to_run(tmp_path):
    """numba installed but unimportable (e.g. beside a newer numpy): available() is False and LM runs in numpy."""
    import os
    import subprocess
    import sys

    (tmp_path / "numba").mkdir()
    (tmp_path / "numba" / "__init__.py").write_text("raise ImportError('Numba needs NumPy 2.0 or less')\n")
    code = (
        "import torch; from ggik import Robot; from ggik.ik.lm import compiled; from ggik.ik.refine import lm_refine\n"
        "robot = Robot.from_name('panda'); g = torch.Generator().manual_seed(0); T = robot.fk(robot.sample_q(2, g))\n"
        "info = lm_refine(robot, T[:, None], robot.sample_q(32, g).view(2, 16, -1))[1]\n"
        "print(compiled.available(), bool(info.converged.any()))"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False True"
