"""The LM layer's one way in (ggik.ik.lm): which backend solves a problem, and one answer whichever does.

``select_backend`` is the only place that chooses; a choice is an argument (``RefineConfig.lm_backends``), never a
module global. ``first_solution`` (``RefineConfig.stop_at_first``) has the same outcome on every backend: the
compiled kernel runs a goal's starts in turn, numpy and torch in lock-step, all follow
:class:`ggik.ik.lm.core.FirstSolution`'s rule and choose the same start (``tests/lm_agreement.py``, rule 5)."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from lm_agreement import LMCase, assert_first_solution_rule, assert_reports_its_own_errors, assert_same_first_solutions
from test_lm_numpy import make_robot

from ggik.graph.goal_kinds import GOAL_KINDS, goal_poses, tool_axis
from ggik.ik.lm import LMProblem, compiled, select, select_backend
from ggik.ik.lm.select import COMPILED_MAX_ELEMENTS, CUDA_MIN_ELEMENTS, NUMPY_MAX_ELEMENTS
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig

needs_numba = pytest.mark.skipif(not compiled.available(), reason="numba is not installed (extra 'fast')")


def problem_of(n: int, dtype: torch.dtype = torch.float64, lm_backends=None) -> LMProblem:
    robot = make_robot("panda")
    q = torch.zeros(n, robot.dof, dtype=dtype)
    cfg = RefineConfig(lm_backends=lm_backends)
    return LMProblem.build(robot, torch.eye(4, dtype=dtype).expand(n, 4, 4), q, cfg, "pose", None)[0]


def choice(n: int, device=None, prefer=None, dtype=torch.float64) -> tuple[str, str]:
    backend = select_backend(problem_of(n, dtype), device, prefer)
    return backend.name, backend.device.type


@needs_numba
def test_float64_cpu_problems_run_compiled_up_to_its_limit_then_torch():
    assert choice(1) == choice(NUMPY_MAX_ELEMENTS + 1) == choice(COMPILED_MAX_ELEMENTS) == ("compiled", "cpu")
    assert choice(COMPILED_MAX_ELEMENTS + 1) == ("torch", "cpu")


def test_without_numba_numpy_runs_small_problems_and_torch_the_rest(monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: False)
    assert choice(1) == choice(NUMPY_MAX_ELEMENTS) == ("numpy", "cpu")
    assert choice(NUMPY_MAX_ELEMENTS + 1) == ("torch", "cpu")
    with pytest.raises(ValueError, match="none of the LM backends"):
        choice(4, prefer="compiled")


def test_the_allowed_backends_are_an_argument(monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: True)
    assert choice(4, prefer=("numpy", "torch")) == ("numpy", "cpu")
    assert choice(NUMPY_MAX_ELEMENTS + 1, prefer=("numpy", "torch")) == ("torch", "cpu")
    assert choice(COMPILED_MAX_ELEMENTS * 2, prefer="numpy") == ("numpy", "cpu")  # the only one allowed: it runs
    assert choice(4, prefer="torch") == ("torch", "cpu")
    with pytest.raises(ValueError, match="LM backends must be some of"):
        choice(4, prefer=("numba",))
    with pytest.raises(ValueError, match="lm_backends must be some of"):
        RefineConfig(lm_backends=("cuda",))
    assert RefineConfig(lm_backends="numpy").lm_backends == ("numpy",)


def test_float32_runs_in_torch_where_it_is(monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: True)
    assert choice(4, dtype=torch.float32) == ("torch", "cpu")
    assert choice(4, dtype=torch.float32, prefer="numpy") == ("numpy", "cpu")  # float64 there, float32 back


def test_a_small_cuda_problem_goes_to_the_cpu_a_large_one_stays(monkeypatch):
    """Decided without a GPU: the rule reads the device asked for (a problem's tensors are moved only by solve)."""
    monkeypatch.setattr(compiled, "available", lambda: True)
    assert choice(CUDA_MIN_ELEMENTS - 1, device="cuda") == ("compiled", "cpu")
    assert choice(CUDA_MIN_ELEMENTS, device="cuda") == ("torch", "cuda")
    assert choice(CUDA_MIN_ELEMENTS, device="cuda", prefer="numpy") == ("numpy", "cpu")
    monkeypatch.setattr(compiled, "available", lambda: False)
    assert choice(8, device="cuda") == ("numpy", "cpu")
    assert choice(NUMPY_MAX_ELEMENTS + 1, device="cuda") == ("torch", "cuda")  # no CPU backend fits: the GPU


def test_a_backend_elsewhere_returns_the_outcome_where_the_problem_is():
    robot = make_robot("panda")
    g = torch.Generator().manual_seed(3)
    q = robot.sample_q(6, g).float()
    T = robot.fk(robot.sample_q(6, g)).float()
    problem = LMProblem.build(robot, T, q, RefineConfig(), "pose", None)[0]
    out = select.LMBackend("numpy", torch.device("cpu")).solve(problem)
    ref = select.LMBackend("numpy", torch.device("cpu")).solve(problem.to("cpu", torch.float64))
    assert out.q.dtype == out.pos_err.dtype == torch.float32 and out.iterations.dtype == torch.long
    assert torch.equal(out.q, ref.q.float()) and torch.equal(out.iterations, ref.iterations)


@pytest.mark.parametrize("kind", GOAL_KINDS)
@pytest.mark.parametrize("robot_id", ["panda", "ur10", "random8", "prismatic"])
def test_first_solution_is_the_same_on_every_backend(robot_id, kind):
    """Stopped at a goal's first solution over the whole budget: every backend follows the rule (each goal at most one
    converged start, the starts before it run to the budget, the later ones as given) and chooses the same start as
    torch, reaching the same unique solution (tests/lm_agreement.py, rule 5: a start that wanders unconverged for the
    whole budget differs by rounding, ~1e-7 rad, which may grow into a solution on one backend only)."""
    robot = make_robot(robot_id)
    axis = tool_axis(robot)
    g = torch.Generator().manual_seed(21)
    goal = goal_poses(robot.fk(robot.sample_q(10, g)), kind, axis)[:, None]
    q0 = robot.sample_q(10 * 6, g).view(10, 6, robot.dof)
    names = [b for b in select.BACKENDS if b != "compiled" or compiled.available()]
    case = LMCase(robot, goal, kind, RefineConfig(stop_at_first=True), q0)
    out = {b: lm_refine_checked(robot, goal, q0, replace(case.cfg, lm_backends=(b,)), kind, axis) for b in names}
    assert out["torch"][1].converged.any(-1).float().mean() > 0.5, "the test needs solved goals"
    assert_reports_its_own_errors(case, out["torch"])
    assert_first_solution_rule(case, out["torch"], "torch")
    others = [b for b in names if b != "torch"]
    compared = sum(assert_same_first_solutions(case, out[b], out["torch"], f"{b}/torch") for b in others)
    assert compared > 0 or kind != "pose" or robot.dof > 6, "the test needs unique solutions to compare"
