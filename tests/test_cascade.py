"""The two-stage LM solve (:mod:`ggik.ik.cascade`; its study: benchmarks/cascade)."""

from __future__ import annotations

import pytest
import torch

from ggik.checkpoint import load_model
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.cascade import lm_cascade, lm_random_first, lm_random_starts
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.kinematics.geometry import pose_errors

CFG = RefineConfig()


@pytest.fixture(scope="module")
def model(tiny_ckpt):
    return load_model(tiny_ckpt)[0].eval()


def _goals(robot: Robot, n: int, seed: int) -> torch.Tensor:
    return robot.fk(robot.sample_q(n, torch.Generator().manual_seed(seed)))


def _check_strict(robot: Robot, res, T: torch.Tensor) -> None:
    """Every reported success is a strict-valid solution by FK, and the reported errors are the solution's."""
    pos, rot = pose_errors(robot.fk(res.q), T)
    torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-9)
    torch.testing.assert_close(res.rot_err, rot, rtol=0, atol=1e-9)
    ok = (pos < CFG.pos_tol) & (rot < CFG.rot_tol) & robot.within_limits(res.q)
    assert (res.success == ok).all()


@pytest.mark.parametrize("name", ["ur10", "panda"])
def test_random_starts_are_the_best_of_one_lm_run(name):
    robot, T = Robot.from_name(name), _goals(Robot.from_name(name), 6, 1)
    res = lm_random_starts(robot, T, 8, CFG, torch.Generator().manual_seed(3))
    q0 = robot.sample_q(6 * 8, torch.Generator().manual_seed(3)).view(6, 8, robot.dof)
    q, info = lm_refine(robot, T[:, None], q0, CFG)
    assert (res.success == (info.converged & robot.within_limits(q)).any(-1)).all()
    torch.testing.assert_close(res.iterations, info.iterations.double().sum(-1))
    assert not res.first_stage.any()
    _check_strict(robot, res, T)


def test_cascade_keeps_the_models_solutions_and_restarts_the_rest(model):
    robot = Robot.from_name("panda")
    T = _goals(robot, 8, 2)
    res = lm_cascade(
        model,
        robot,
        T,
        num_samples=2,
        random_starts=16,
        cfg=CFG,
        generator=torch.Generator().manual_seed(4),
        start_generator=torch.Generator().manual_seed(5),
    )
    _check_strict(robot, res, T)
    # stage 1 alone, with the same sampling noise: the goals it solves are exactly the cascade's first-stage goals
    raw = sample_joint_angles(model, RobotGraph.from_robot(robot), T, 2, generator=torch.Generator().manual_seed(4))
    q, info = lm_refine(robot, T[:, None], raw.q, CFG)
    stage1 = (info.converged & robot.within_limits(q)).any(-1)
    assert (res.first_stage == stage1).all()
    assert (res.success >= stage1).all()
    assert res.success.all(), "16 random starts reach every reachable panda goal here"
    assert (res.iterations >= info.iterations.double().sum(-1)).all()


def test_cascade_rejects_bad_input(model):
    robot = Robot.from_name("ur10")
    T = _goals(robot, 2, 0)
    with pytest.raises(ValueError, match=r"\(B, 4, 4\)"):
        lm_cascade(model, robot, T[0])
    with pytest.raises(ValueError, match="num_samples"):
        lm_cascade(model, robot, T, num_samples=0)
    with pytest.raises(ValueError, match="random_starts"):
        lm_random_starts(robot, T, random_starts=2.5)


def test_cascade_and_random_starts_are_the_solvers_strategies(model):
    """lm_cascade / lm_random_starts are the first solution of GGIK.solve's "model-first" / "random" strategies for
    the same draws (the model's noise from the call's generator, the random starts from a copy of it as it was
    before the noise: the strategy "random"'s starts)."""
    from ggik import GGIK, SolveConfig

    robot, solver = Robot.from_name("panda"), GGIK(model)
    T = _goals(robot, 6, 7)
    g = torch.Generator().manual_seed(8)
    starts = torch.Generator().manual_seed(8)
    cascade = lm_cascade(model, robot, T, num_samples=1, random_starts=4, cfg=CFG, generator=g, start_generator=starts)
    first = solver.solve(
        robot,
        T,
        SolveConfig(samples=1, strategy="model-first", random_starts=4),
        generator=torch.Generator().manual_seed(8),
    )
    assert not cascade.first_stage.all(), "test-data precondition: some goals go to the random restarts"
    assert torch.equal(cascade.q, first.best()) and torch.equal(cascade.pos_err, first.pos_err[:, 0])
    assert torch.equal(cascade.success, (first.success & first.within_limits)[:, 0])
    baseline = lm_random_starts(robot, T, 5, CFG, torch.Generator().manual_seed(9))
    rand = solver.solve(
        robot, T, SolveConfig(strategy="random", random_starts=5), generator=torch.Generator().manual_seed(9)
    )
    assert torch.equal(baseline.q, rand.best())
    assert torch.equal(baseline.success, (rand.success & rand.within_limits)[:, 0])


def test_random_starts_check_the_poses_once(monkeypatch):
    """The public functions check their goals on entry; the strategy code below does not check them again."""
    import ggik.ik.cascade
    import ggik.kinematics.geometry

    calls = []
    real = ggik.kinematics.geometry.check_pose

    def counting(T, name="pose", tol=1e-6):
        calls.append(name)
        return real(T, name, tol)

    monkeypatch.setattr(ggik.ik.cascade, "check_pose", counting)
    monkeypatch.setattr(ggik.kinematics.geometry, "check_pose", counting)
    robot = Robot.from_name("ur10")
    lm_random_starts(robot, _goals(robot, 3, 1), 2, CFG, torch.Generator().manual_seed(0))
    assert calls == ["T_goal"]


@pytest.mark.parametrize("name", ["ur10", "panda"])
def test_random_first_is_one_random_stage_then_restarts_for_what_it_left(name):
    robot, T = Robot.from_name(name), _goals(Robot.from_name(name), 8, 2)
    cfg = RefineConfig(max_iters=4)  # a short budget leaves goals to the second stage
    res = lm_random_first(robot, T, 1, 6, cfg, torch.Generator().manual_seed(4))
    first = lm_random_starts(robot, T, 1, cfg, torch.Generator().manual_seed(4))
    assert torch.equal(res.first_stage, first.success) and (~first.success).any()
    kept = first.success
    torch.testing.assert_close(res.q[kept], first.q[kept])
    assert (res.iterations[~kept] > first.iterations[~kept]).all()  # the restarts added their iterations
    assert res.success.sum() >= first.success.sum()
    pos, rot = pose_errors(robot.fk(res.q), T)
    torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-9)
    ok = (pos < cfg.pos_tol) & (rot < cfg.rot_tol) & robot.within_limits(res.q)
    assert (res.success == ok).all()
    with pytest.raises(ValueError, match="first_starts"):
        lm_random_first(robot, T, 0, 6)
