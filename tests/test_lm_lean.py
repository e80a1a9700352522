"""The LM solver's lean paths: errors read off the residual, and a one-solution caller's early stop per goal
(``RefineConfig.stop_at_first``). Float64, seeded, over shipped and random robots and every goal kind."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from lm_agreement import (
    LMCase,
    assert_first_as_alone,
    assert_first_solution_rule,
    assert_reports_its_own_errors,
    assert_same_outcomes,
    assert_same_solutions,
    assert_same_steps,
)

from ggik import Robot, random_robot
from ggik.graph.goal_kinds import GOAL_KINDS, goal_errors, goal_poses, tool_axis
from ggik.ik.lm import compiled, select
from ggik.ik.refine import RefineInfo, goal_residual, lm_refine_checked, residual_errors
from ggik.ik.refine_config import RefineConfig

ROBOTS = ("ur10", "panda", "kr16_2", "random5", "random9")


def make_robot(robot_id: str) -> Robot:
    if robot_id.startswith("random"):
        dof = int(robot_id[6:])
        return random_robot(dof, torch.Generator().manual_seed(dof), name=robot_id)
    return Robot.from_name(robot_id)


def goals_and_starts(robot: Robot, goals: int, starts: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    T = robot.fk(robot.sample_q(goals, g))
    return T, robot.sample_q(goals * starts, g).view(goals, starts, robot.dof)


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_errors_read_off_the_residual_equal_goal_errors(robot_id, kind):
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    T_goal, q = goals_and_starts(robot, 64, 1, seed=1)
    goal = goal_poses(T_goal, kind, axis)
    T = robot.fk(q[:, 0])
    T[:4] = goal[:4]  # exact hits too (zero errors)
    pos, rot = residual_errors(goal_residual(T, goal, 0.1, kind, axis), kind, 0.1)
    pos_ref, rot_ref = goal_errors(T, goal, kind, axis)
    torch.testing.assert_close(pos, pos_ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(rot, rot_ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize("path", ["compiled", "numpy", "torch"])
@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_stop_at_first_solves_the_same_goals_with_fewer_iterations(robot_id, kind, path, monkeypatch):
    """Every backend (lock-step in numpy and torch, in turn compiled): every goal that some start solves is solved, by
    its lowest-indexed start that converges, which follows the path it follows alone, with fewer iterations in all
    (tests/lm_agreement.py: the same outcomes, not the same rounding, as the batches differ)."""
    if path == "compiled" and not compiled.available():
        pytest.skip("numba is not installed (extra 'fast')")
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    T_goal, q0 = goals_and_starts(robot, 24, 4, seed=2)
    goal = goal_poses(T_goal, kind, axis)[:, None]
    case = LMCase(robot, goal, kind, RefineConfig(stop_at_first=True, lm_backends=(path,)), q0)
    alone = lm_refine_checked(robot, goal, q0, RefineConfig(lm_backends=(path,)), kind, axis)
    stopped = lm_refine_checked(robot, goal, q0, case.cfg, kind, axis)
    assert alone[1].converged.any(-1).float().mean() > 0.5, "the test needs solved goals"
    # what is reported is what the returned joint values give
    for run in (alone, stopped):
        assert_reports_its_own_errors(case, run)
    # in turn: the starts before the converged one ran their whole budget, the ones after it are as given
    assert_first_solution_rule(case, stopped, path)
    # starts are independent: a goal's first converged start follows the path it follows alone (up to rounding)
    assert_first_as_alone(case, stopped, alone, path)
    assert stopped[1].iterations.sum() < alone[1].iterations.sum()


def test_stop_at_first_with_one_start_and_an_unbatched_goal_is_plain_lm():
    """One start, batched or not: the early stop is plain LM (the same outcome and solution, lm_agreement rules 1-3;
    the UR10, whose pose goals have isolated solutions, so that the joint values are compared)."""
    robot = Robot.from_name("ur10")
    T_goal, q0 = goals_and_starts(robot, 1, 1, seed=3)
    axis = tool_axis(robot)
    for shape in ((1, 1), (1,), ()):
        q = q0.reshape(shape + (robot.dof,))
        stopped = lm_refine_checked(robot, T_goal[0], q, RefineConfig(stop_at_first=True), "pose", axis)
        plain = lm_refine_checked(robot, T_goal[0], q, RefineConfig(), "pose", axis)
        assert stopped[0].shape == plain[0].shape == q.shape and stopped[1].converged.shape == shape
        assert bool(plain[1].converged.all()), "the test needs a solution to compare"
        case = LMCase(robot, T_goal[0], "pose", RefineConfig())
        assert_same_outcomes(case, stopped, plain, str(shape))
        assert assert_same_solutions(case, stopped[0], plain[0], plain[1].converged) == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("kind", GOAL_KINDS)
def test_lm_on_cuda_runs_there_and_matches_the_cpu(kind, monkeypatch):
    """Goals and starts on the GPU, the torch backend: LM runs there (float64; a spy checks where the problem's
    tensors live when it runs, so a silent CPU fallback fails) and takes the CPU's torch steps up to rounding (the
    bound the damping gives three steps, tests/lm_agreement.py rule 4)."""
    robot = make_robot("panda")
    axis = tool_axis(robot)
    T_goal, q0 = goals_and_starts(robot, 80, 4, seed=6)
    goal = goal_poses(T_goal, kind, axis)[:, None]
    cfg = RefineConfig(max_iters=3, stop_at_first=True, lm_backends=("torch",))
    q_cpu, info_cpu = lm_refine_checked(robot, goal, q0, cfg, kind, axis)
    devices = []
    real = select.SOLVERS["torch"]
    monkeypatch.setitem(select.SOLVERS, "torch", lambda p: devices.append(p.q0.device.type) or real(p))
    q_gpu, info_gpu = lm_refine_checked(robot, goal.cuda(), q0.cuda(), cfg, kind, axis)
    assert devices == ["cuda"]
    assert q_gpu.device.type == "cuda" and info_gpu.pos_err.device.type == "cuda"
    back = (q_gpu.cpu(), RefineInfo(*(getattr(info_gpu, f.name).cpu() for f in dataclasses.fields(RefineInfo))))
    assert_same_steps(LMCase(robot, goal, kind, cfg), back, (q_cpu, info_cpu), "cuda/cpu")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_small_cuda_problem_is_solved_on_the_cpu_and_comes_back(monkeypatch):
    """Fewer than CUDA_MIN_ELEMENTS elements on the GPU: the CPU backend runs (a spy sees CPU tensors), the result is
    on the GPU, equal to the CPU's own solve; from CUDA_MIN_ELEMENTS on, torch runs on the GPU."""
    robot = make_robot("panda")
    T_goal, q0 = goals_and_starts(robot, 2, 16, seed=8)
    goal = T_goal[:, None]
    seen = []
    for name, real in list(select.SOLVERS.items()):
        monkeypatch.setitem(select.SOLVERS, name, lambda p, n=name, r=real: seen.append((n, p.q0.device.type)) or r(p))
    q_cpu, _ = lm_refine_checked(robot, goal, q0, RefineConfig(), "pose", None)
    q_gpu, _ = lm_refine_checked(robot, goal.cuda(), q0.cuda(), RefineConfig(), "pose", None)
    assert seen[0] == seen[1] and seen[1][0] != "torch" and seen[1][1] == "cpu", seen
    assert q_gpu.device.type == "cuda" and torch.equal(q_gpu.cpu(), q_cpu)
    T_big, q_big = goals_and_starts(robot, select.CUDA_MIN_ELEMENTS // 8, 8, seed=9)
    lm_refine_checked(robot, T_big[:, None].cuda(), q_big.cuda(), RefineConfig(max_iters=2), "pose", None)
    assert seen[-1] == ("torch", "cuda")
