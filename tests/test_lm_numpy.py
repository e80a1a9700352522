"""The numpy LM backend (ggik.ik.lm.numpy_lm) for small CPU batches: the same run as the torch backend, element for
element.

``RefineConfig.lm_backends`` picks the backend of a call. Both must agree by the rule of ``tests/lm_agreement.py``
(outcomes, not rounding: the same convergence, iterations within one, the same unique solutions, and over three
iterations every start's joint values within the bound the damping gives), over shipped, random and hand-written
chains (prismatic, mimic, continuous joints), every goal kind, starts inside and outside the limits, with and without
the early stop per goal."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from conftest import HAND_URDFS
from lm_agreement import LMCase, assert_reports_its_own_errors, assert_same_solutions, assert_same_steps

from ggik import Robot, random_robot
from ggik.graph.goal_kinds import GOAL_KINDS, goal_poses, tool_axis
from ggik.ik.lm import select
from ggik.ik.refine import lm_refine, lm_refine_checked
from ggik.ik.refine_config import RefineConfig

ROBOTS = ("ur10", "panda", "kr16_2", "random4", "random8", "prismatic", "mimic", "continuous", "oblique_axes")


def make_robot(robot_id: str) -> Robot:
    if robot_id.startswith("random"):
        dof = int(robot_id[6:])
        return random_robot(dof, torch.Generator().manual_seed(10 + dof), name=robot_id)
    if robot_id in HAND_URDFS:
        return Robot.from_urdf(HAND_URDFS[robot_id])
    return Robot.from_name(robot_id)


def both_paths(monkeypatch, robot, goal, q0, cfg, kind, axis):
    """(numpy's, torch's) results; a spy checks that each backend ran."""
    ran = []
    for name in ("numpy", "torch"):
        real = select.SOLVERS[name]
        monkeypatch.setitem(select.SOLVERS, name, lambda p, n=name, r=real: ran.append(n) or r(p))
    small = lm_refine_checked(robot, goal, q0, replace(cfg, lm_backends=("numpy",)), kind, axis)
    large = lm_refine_checked(robot, goal, q0, replace(cfg, lm_backends=("torch",)), kind, axis)
    monkeypatch.undo()
    assert ran == ["numpy", "torch"]
    return small, large


def runs(robot_id: str, kind: str, stop: bool, iters: int, monkeypatch):
    """(the case: robot, canonical goals (6, 1, 4, 4), settings, starts (6, 8, dof); numpy's run; torch's run)."""
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    g = torch.Generator().manual_seed(5)
    T = robot.fk(robot.sample_q(6, g))
    goal = goal_poses(T, kind, axis)[:, None]
    span = (robot.upper - robot.lower) * robot.limited  # starts partly outside the limits
    q0 = robot.sample_q(6 * 8, g).view(6, 8, robot.dof) + 0.3 * span * torch.randn(6, 8, robot.dof, generator=g)
    cfg = RefineConfig(max_iters=iters, stop_at_first=stop)
    return LMCase(robot, goal, kind, cfg, q0), *both_paths(monkeypatch, robot, goal, q0, cfg, kind, axis)


@pytest.mark.parametrize("stop", [False, True], ids=["all-starts", "stop-at-first"])
@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_numpy_and_torch_take_the_same_steps(robot_id, kind, stop, monkeypatch):
    """Three iterations: the same steps up to the rounding the damping bounds (lm_agreement rule 4; LM amplifies
    rounding more over many iterations)."""
    case, by_numpy, by_torch = runs(robot_id, kind, stop, 3, monkeypatch)
    assert_same_steps(case, by_numpy, by_torch, "numpy/torch")
    assert by_numpy[0].dtype == torch.float64 and by_numpy[1].iterations.dtype == torch.long


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ROBOTS)
def test_numpy_and_torch_solve_alike_over_the_whole_budget(robot_id, kind, monkeypatch):
    """30 iterations: rounding differences may grow into another accepted step on a few starts, never into another
    outcome for the batch (converged starts within one, iterations within 5 %); the errors reported are those of the
    joint values returned; the starts that converge alike (in iterations within one) reach the same unique
    solutions (lm_agreement rules 1 and 3)."""
    case, (q_np, info_np), (q_t, info_t) = runs(robot_id, kind, False, 30, monkeypatch)
    assert abs(int(info_np.converged.sum()) - int(info_t.converged.sum())) <= 1
    assert info_np.converged.float().mean() > 0.1, "the test needs converged starts"
    its_np, its_t = info_np.iterations.double().mean(), info_t.iterations.double().mean()
    assert abs(its_np - its_t) <= 0.05 * its_t
    for run in ((q_np, info_np), (q_t, info_t)):
        assert_reports_its_own_errors(case, run)
    alike = info_np.converged & info_t.converged & ((info_np.iterations - info_t.iterations).abs() <= 1)
    assert_same_solutions(case, q_np, q_t, alike, "numpy/torch")


@pytest.mark.parametrize("backend", select.BACKENDS)
@pytest.mark.parametrize("shape", [(0, 4), (3, 0)])
def test_empty_batches_return_empty_results(shape, backend):
    if backend == "compiled" and not select.compiled.available():
        pytest.skip("numba is not installed (extra 'fast')")
    robot = Robot.from_name("panda")
    T = robot.fk(robot.sample_q(shape[0], torch.Generator().manual_seed(0)))[:, None]
    for stop in (False, True):
        q, info = lm_refine(
            robot,
            T,
            torch.zeros(shape + (robot.dof,), dtype=torch.float64),
            RefineConfig(stop_at_first=stop, lm_backends=(backend,)),
        )
        assert q.shape == shape + (robot.dof,) and info.converged.shape == info.iterations.shape == shape
