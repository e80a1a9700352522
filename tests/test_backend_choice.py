"""Every LM solve goes in through ``select_backend`` (ggik.ik.lm.select): the single-goal path's backend, and the
obstacle phase's, whose clearance rows only some backends take (``LMBackend.keeps_clear``, ``KEEPS_CLEAR``): the rule
chooses among those, and a choice that allows none is refused, never run without the obstacles."""

from __future__ import annotations

import pytest
import torch

import ggik.ik.lm.obstacles as obstacles
from ggik.collision import Box, Clearance, CollisionModel, Scene, Sphere
from ggik.graph.goal_kinds import tool_axis
from ggik.ik import single_goal
from ggik.ik.lm import LMProblem, compiled, select
from ggik.ik.lm.select import CUDA_MIN_ELEMENTS, KEEPS_CLEAR, NUMPY_MAX_ELEMENTS, LMBackend, select_backend
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics.robot import Robot

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_name("panda")


@pytest.fixture(scope="module")
def check(panda) -> Clearance:
    table = Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06))
    block = Box((0.2, 0.3, 0.1), (0.4, 0.1, 0.4), (0.3, 0.2, 0.1))
    return Clearance(panda, CollisionModel.from_robot(panda), Scene((table, block), (Sphere(0.1, (0.4, 0.2, 0.55)),)))


def problem_of(robot: Robot, n: int, cfg: RefineConfig | None = None) -> LMProblem:
    q = torch.zeros(n, robot.dof, dtype=torch.float64)
    return LMProblem.build(
        robot, torch.eye(4, dtype=torch.float64).expand(n, 4, 4), q, cfg or RefineConfig(), "pose", None
    )[0]


def test_only_the_backends_that_take_clearance_rows_say_so():
    assert {"torch"} == KEEPS_CLEAR
    assert [LMBackend(name, CPU).keeps_clear for name in select.BACKENDS] == [n in KEEPS_CLEAR for n in select.BACKENDS]
    assert set(select.SOLVERS_WITH_CLEARANCE) == KEEPS_CLEAR


def test_a_backend_without_clearance_rows_refuses_obstacles(panda, check):
    with pytest.raises(ValueError, match="'numpy' LM backend takes no clearance rows"):
        LMBackend("numpy", CPU).solve(problem_of(panda, 4), check)


def test_with_clearance_the_rule_chooses_among_the_backends_that_take_it(panda, monkeypatch):
    monkeypatch.setattr(compiled, "available", lambda: True)
    small, large = problem_of(panda, 4), problem_of(panda, CUDA_MIN_ELEMENTS)
    assert select_backend(small).name == "compiled"  # without obstacles
    assert select_backend(small, clearance=True) == LMBackend("torch", CPU)
    assert select_backend(small, prefer=("numpy", "torch"), clearance=True) == LMBackend("torch", CPU)
    assert select_backend(small, device="cuda", clearance=True) == LMBackend("torch", torch.device("cuda"))
    assert select_backend(large, device="cuda", clearance=True) == LMBackend("torch", torch.device("cuda"))
    with pytest.raises(ValueError, match=r"none of the LM backends \('numpy', 'compiled'\) takes the clearance rows"):
        select_backend(small, prefer=("numpy", "compiled"), clearance=True)
    # a backend that took them would be chosen by the same rule as without obstacles (numpy: small CPU problems)
    monkeypatch.setattr(compiled, "available", lambda: False)
    monkeypatch.setattr(select, "KEEPS_CLEAR", frozenset({"numpy", "torch"}))
    assert select_backend(small, clearance=True) == LMBackend("numpy", CPU)
    assert select_backend(problem_of(panda, NUMPY_MAX_ELEMENTS + 1), clearance=True) == LMBackend("torch", CPU)


def test_the_obstacle_phase_runs_on_the_backend_select_backend_chooses(panda, check, monkeypatch):
    """Both phases ask select_backend (the second with clearance=True) and run what it returns."""
    g = torch.Generator().manual_seed(0)
    q = panda.sample_q(200, g)
    T = panda.fk(q[check.collision_free(q)][:4])[:, None]
    q0 = panda.sample_q(4 * 8, g).view(4, 8, panda.dof)
    asked, ran = [], []
    real_select = select_backend

    def spy_select(problem, device=None, prefer=None, clearance=False):
        backend = real_select(problem, device, prefer, clearance)
        asked.append((clearance, backend.name))
        return backend

    monkeypatch.setattr(obstacles, "select_backend", spy_select)
    for table in (select.SOLVERS, select.SOLVERS_WITH_CLEARANCE):
        for name, solve in list(table.items()):
            rows = table is select.SOLVERS_WITH_CLEARANCE
            monkeypatch.setitem(table, name, lambda *a, n=name, s=solve, r=rows: ran.append((r, n)) or s(*a))
    cfg = RefineConfig(lm_backends=("numpy", "torch"))
    q, info = lm_refine_checked(panda, T, q0, cfg, "pose", tool_axis(panda), check)
    assert asked[0] == (False, "numpy") and (True, "torch") in asked, asked
    assert ran == [(False, "numpy")] + [(True, "torch")] * (len(asked) - 1)
    assert (check.collision_free(q) | ~info.converged).all()  # what the pose reached, it reached clear
    assert info.converged.any(-1).all()


def test_obstacles_with_no_backend_for_them_are_refused_before_any_lm(panda, check, monkeypatch):
    ran = []
    for name, solve in list(select.SOLVERS.items()):
        monkeypatch.setitem(select.SOLVERS, name, lambda *a, s=solve: ran.append(1) or s(*a))
    q0 = panda.sample_q(3, torch.Generator().manual_seed(1))
    T = panda.fk(panda.sample_q(3, torch.Generator().manual_seed(2)))
    with pytest.raises(ValueError, match="takes the clearance rows of obstacles"):
        lm_refine_checked(panda, T, q0, RefineConfig(lm_backends=("numpy",)), "pose", None, check)
    assert not ran


@pytest.mark.parametrize("numba", [True, False], ids=["numba", "no-numba"])
@pytest.mark.parametrize("starts", [1, NUMPY_MAX_ELEMENTS, NUMPY_MAX_ELEMENTS + 1])
@pytest.mark.parametrize("prefer", [None, ("numpy", "torch"), ("torch",)])
def test_the_single_goal_path_takes_the_backend_select_backend_chooses(panda, monkeypatch, numba, starts, prefer):
    """Its backend is select_backend's for the general path's problem of the call (float64, CPU, ``starts``
    elements), and it is taken exactly when that backend is not torch."""
    monkeypatch.setattr(compiled, "available", lambda: numba)
    cfg = RefineConfig(lm_backends=prefer, stop_at_first=True)
    chosen = single_goal.RobotSolver(panda, cfg, starts).backend
    general = select_backend(problem_of(panda, starts, cfg), prefer=prefer)
    assert chosen == general
    T = panda.fk(torch.zeros(panda.dof, dtype=torch.float64))
    assert single_goal.takes(T, "pose", "lm", None) and single_goal.RobotSolver(panda, cfg, starts).fast == (
        general.name != "torch"
    )
