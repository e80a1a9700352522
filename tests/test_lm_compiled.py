"""The compiled LM backend (ggik.ik.lm.compiled, numba) takes the numpy backend's steps, element for element.

Float64 CPU batches run compiled when numba is installed (extra ``fast``), else in numpy, which
``tests/test_lm_numpy.py`` holds to the torch backend. Here the compiled kernel is held to numpy on the same chains
(shipped, random, prismatic, mimic, continuous, oblique axes), every goal kind, starts inside and outside the limits:
every element's run is numpy's (iterations, convergence, joint values and errors up to float rounding). With the early
stop per goal the compiled kernel runs a goal's starts in turn where numpy runs them in lock-step; both return the
same elements: each start before the solution numpy's run of it alone, the solution, the later starts as given."""

from __future__ import annotations

import pytest
import torch
from test_lm_numpy import ROBOTS, make_robot

from ggik.graph.goal_kinds import GOAL_KINDS, goal_errors, goal_poses, tool_axis
from ggik.ik.lm import compiled, select
from ggik.ik.lm.problem import LMChain, LMProblem
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba is not installed (extra 'fast')")


def compiled_and_numpy(robot_id: str, kind: str, stop: bool, iters: int, monkeypatch, goals: int = 6, starts: int = 8):
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
    return robot, T, by_kernel, by_numpy


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_take_the_same_steps(robot_id, kind, monkeypatch):
    """Three iterations of every start: the same steps up to float rounding."""
    _, _, (q_c, info_c), (q_n, info_n) = compiled_and_numpy(robot_id, kind, False, 3, monkeypatch)
    assert torch.equal(info_c.iterations, info_n.iterations)
    assert torch.equal(info_c.converged, info_n.converged)
    torch.testing.assert_close(q_c, q_n, rtol=0, atol=1e-9)
    torch.testing.assert_close(info_c.pos_err, info_n.pos_err, rtol=0, atol=1e-10)
    torch.testing.assert_close(info_c.rot_err, info_n.rot_err, rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_compiled_and_numpy_solve_alike_over_the_whole_budget(robot_id, kind, monkeypatch):
    """The whole budget: rounding may grow into another accepted step on a few starts, never into another outcome
    (converged starts within one, iterations within 5 %, every goal solved by one as by the other); the errors
    reported are those of the joint values returned (forward kinematics, independently)."""
    robot, T, (q_c, info_c), (q_n, info_n) = compiled_and_numpy(robot_id, kind, False, 100, monkeypatch)
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


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_stop_at_first_runs_a_goals_starts_in_turn(robot_id, kind, monkeypatch):
    """Per goal: the starts before the first converged one ran their whole budget unconverged, each exactly numpy's
    run of it alone; the converged one is numpy's run too; the later ones did not run (their starts, clamped, and 0
    iterations); numpy, in lock-step, returns the same elements."""
    iters = 12
    robot, T, (q_s, info_s), (q_n, info_n) = compiled_and_numpy(robot_id, kind, True, iters, monkeypatch)
    _, _, (q_all, info_all), _ = compiled_and_numpy(robot_id, kind, False, iters, monkeypatch)  # each start alone
    assert torch.equal(info_s.iterations, info_n.iterations) and torch.equal(info_s.converged, info_n.converged)
    torch.testing.assert_close(q_s, q_n, rtol=0, atol=1e-8)  # 12 iterations of rounding
    ran = info_s.iterations > 0
    for g in range(q_s.shape[0]):
        done = info_s.converged[g].nonzero()[:, 0]
        last = int(done[0]) if done.numel() else q_s.shape[1] - 1
        at_start = bool(info_all.converged[g][~ran[g]].any()) and not bool(ran[g].any())
        if at_start:  # a start converged where it began: no start ran
            continue
        for k in range(last + 1):
            assert int(info_s.iterations[g, k]) == int(info_all.iterations[g, k])
            torch.testing.assert_close(q_s[g, k], q_all[g, k], rtol=0, atol=1e-9)
            assert bool(info_s.converged[g, k]) == (k == last and bool(done.numel()))
        assert not bool(ran[g, last + 1 :].any())
    assert int(info_s.iterations.sum()) <= int(info_all.iterations.sum())


def test_one_goal_one_start_the_single_call_path(monkeypatch):
    """B = 1, S = 1 (what a robot program asks): the compiled result is numpy's (one start: in turn is lock-step)."""
    _, _, (q_c, info_c), (q_n, info_n) = compiled_and_numpy("panda", "pose", True, 100, monkeypatch, goals=1, starts=1)
    assert torch.equal(info_c.iterations, info_n.iterations) and torch.equal(info_c.converged, info_n.converged)
    torch.testing.assert_close(q_c, q_n, rtol=0, atol=1e-8)


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
