"""ggik.refine: batched Levenberg-Marquardt (lm_refine), SLSQP (slsqp_refine) and the pose residual.

Everything in float64 with seeded generators; goals are FK poses of known configurations q*.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from conftest import HAND_URDFS
from lm_agreement import LMCase, assert_reports_its_own_errors, assert_same_outcomes, assert_same_steps

import ggik
from ggik import Robot, random_robot
from ggik.ik.refine import RefineInfo, lm_refine, pose_residual, slsqp_objective, slsqp_refine
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics.geometry import axis_angle_to_matrix, make_transform, pose_errors, rot_z

F64 = torch.float64
POS_TOL, ROT_TOL = 1e-3, 1e-2
RANDOM_ROBOTS = {f"random{dof}": (dof, 40 + dof) for dof in (3, 5, 6, 7, 9)}  # id -> (dof, seed)
ROBOT_IDS = tuple(ggik.available_robots()) + tuple(RANDOM_ROBOTS)


def make_robot(robot_id: str) -> Robot:
    if robot_id in RANDOM_ROBOTS:
        dof, seed = RANDOM_ROBOTS[robot_id]
        return random_robot(dof, torch.Generator().manual_seed(seed), name=robot_id)
    return Robot.from_name(robot_id)


def clamp(robot: Robot, q: torch.Tensor) -> torch.Tensor:
    """q moved into the hard limits (continuous joints untouched)."""
    lim = robot.limited
    return torch.where(lim, q.clamp(robot.lower, robot.upper), q)


def tol_check(robot: Robot, q: torch.Tensor, T_goal: torch.Tensor):
    pos, rot = pose_errors(robot.fk(q), T_goal)
    return pos, rot, (pos < POS_TOL) & (rot < ROT_TOL)


# ---------------------------------------------------------------------------------------------- LM
@pytest.mark.parametrize("robot_id", ROBOT_IDS)
def test_lm_converges_near_a_solution_and_reports_consistent_info(robot_id):
    robot = make_robot(robot_id)
    g = torch.Generator().manual_seed(7)
    n = 48
    q_star = robot.sample_q(n, g)
    T_goal = robot.fk(q_star)
    q0 = q_star + 0.05 * torch.randn(n, robot.dof, generator=g, dtype=F64)
    q0[: n // 4] = q_star[: n // 4]  # a quarter starts exactly at the solution
    q0_before = q0.clone()

    q, info = lm_refine(robot, T_goal, q0)

    assert torch.equal(q0, q0_before), "lm_refine must not modify its input"
    assert q.shape == (n, robot.dof) and q.dtype == F64
    for t in (info.converged, info.iterations, info.pos_err, info.rot_err):
        assert t.shape == (n,)
    pos, rot, ok = tol_check(robot, q, T_goal)
    assert ok.float().mean() >= 0.95, f"{robot_id}: converged on {ok.float().mean():.2%} of near-solution starts"
    assert torch.equal(info.converged, ok)
    torch.testing.assert_close(info.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(info.rot_err, rot, rtol=0, atol=1e-12)

    _, _, ok_at_start = tol_check(robot, clamp(robot, q0), T_goal)
    assert ok_at_start[: n // 4].all() and not ok_at_start[n // 4 :].all()
    assert (info.iterations[ok_at_start] == 0).all()
    assert (info.iterations[~ok_at_start] >= 1).all()
    assert (info.iterations <= RefineConfig().max_iters).all()
    assert torch.equal(q[: n // 4], q_star[: n // 4]), "elements converged at the start must not move"


def test_lm_batch_equals_each_element_alone():
    """Early stop per element: a (B, S, dof) batch gives what every element gives on its own, a batch of one (1, dof)
    or unbatched (dof,). The batch and the element alone are two code paths (other batch shapes, other vector
    kernels), whose last-bit differences LM amplifies at every step: a start that wanders unconverged over the whole
    budget may end elsewhere on each (tests/lm_agreement.py). So they are held to each other where that is
    well-conditioned: every element over three iterations (rule 4: the same outcome, the joint values within the
    bound the damping gives), and over the whole budget the elements that start at or near their solution, which
    converge in a few steps, to the same outcome (converged, iterations within one, the errors of the joint values
    returned: rule 2); every run reports its own errors (rule 1). The panda's pose goals have no unique solutions, so
    converged joint values are not compared (test_lm_reference holds the solutions)."""
    robot = Robot.from_name("panda")
    g = torch.Generator().manual_seed(3)
    B, S = 3, 4
    q_star = robot.sample_q(B, g)
    T_goal = robot.fk(q_star)[:, None]  # (B, 1, 4, 4), broadcast over S
    q0 = robot.sample_q(B * S, g).reshape(B, S, robot.dof)  # anywhere: slow or failing elements
    # ... mixed with elements that start at (converged at once) or near (a few steps) their solution
    q0[1, 0] = q_star[1]
    q0[1, 1:3] = q_star[1] + 0.02 * torch.randn(2, robot.dof, generator=g, dtype=F64)
    near = torch.zeros(B, S, dtype=torch.bool)
    near[1, :3] = True

    full, steps = RefineConfig(), RefineConfig(max_iters=3)
    q, info = lm_refine(robot, T_goal, q0, full)
    assert q.shape == (B, S, robot.dof) and info.converged.shape == (B, S)
    # The batch really mixes early stops, later convergence and failures (which use all iterations).
    its = info.iterations
    assert its[1, 0] == 0 and info.converged[1, 0]
    assert (its[info.converged] > 0).any() and (~info.converged).any()
    assert (its[~info.converged] == full.max_iters).all()
    assert len(set(its.flatten().tolist())) >= 4
    # the starts near their solution converge within the iterations rule 4 bounds (here 0, 1 and 1): their outcome over
    # the whole budget is that of the three iterations, where the paths are held to each other
    assert (its[near] <= steps.max_iters).all(), "the starts near their solution converge in a few steps"
    batch = {"full": (q, info), "steps": lm_refine(robot, T_goal, q0, steps)}

    def element(run: tuple[torch.Tensor, RefineInfo], *index: int) -> tuple[torch.Tensor, RefineInfo]:
        q, info = run
        return q[index], RefineInfo(*(getattr(info, f.name)[index] for f in dataclasses.fields(RefineInfo)))

    for b in range(B):
        for s in range(S):
            for budget, cfg in (("steps", steps), ("full", full)):
                case = LMCase(robot, T_goal[b, 0], "pose", cfg)
                in_batch = element(batch[budget], b, s)
                one = lm_refine(robot, T_goal[b], q0[b, s][None], cfg)
                assert one[0].shape == (1, robot.dof) and one[1].converged.shape == (1,)
                unbatched = lm_refine(robot, T_goal[b, 0], q0[b, s], cfg)
                assert unbatched[0].shape == (robot.dof,) and unbatched[1].converged.shape == ()
                for what, alone in (("in a batch of 1", element(one, 0)), ("unbatched", unbatched)):
                    what = f"({b}, {s}) {what}, {budget}"
                    if budget == "steps":
                        assert_same_steps(case, alone, in_batch, what)
                    elif near[b, s]:
                        assert_same_outcomes(case, alone, in_batch, what)
                    else:  # a start that may wander: each run on its own
                        assert_reports_its_own_errors(case, alone)
                        assert_reports_its_own_errors(case, in_batch)


def test_lm_from_many_random_starts_solves_nearly_every_goal():
    """16 uniform starts per goal: at least one converges for >= 90 % of panda goals."""
    robot = Robot.from_name("panda")
    g = torch.Generator().manual_seed(11)
    T_goal = robot.fk(robot.sample_q(10, g))
    q0 = robot.sample_q(160, g).reshape(10, 16, robot.dof)
    q, info = lm_refine(robot, T_goal[:, None], q0)
    _, _, ok = tol_check(robot, q, T_goal[:, None])
    assert torch.equal(ok, info.converged)
    assert ok.any(-1).float().mean() >= 0.9


def test_lm_stays_within_limits_from_starts_outside_them():
    robot = Robot.from_name("panda")
    g = torch.Generator().manual_seed(5)
    n = 40
    T_goal = robot.fk(robot.sample_q(n, g))
    span = robot.upper - robot.lower
    q0 = robot.lower - 0.5 * span + 2.0 * span * torch.rand(n, robot.dof, generator=g, dtype=F64)
    outside = (q0 < robot.lower) | (q0 > robot.upper)
    assert outside.any(-1).all(), "every start has a joint outside its limits"

    q, info = lm_refine(robot, T_goal, q0)
    assert ((q >= robot.lower) & (q <= robot.upper)).all()
    assert info.converged.any(), "some of these starts still converge"
    # Joints that stopped on a limit sit exactly on it (clamped, not merely close).
    on_bound = (q == robot.lower) | (q == robot.upper)
    assert on_bound.any()


def test_lm_continuous_joint_may_leave_minus_pi_pi():
    """Continuous joints are unbounded for refinement: a solution at 3.3 rad is kept, not wrapped."""
    robot = Robot.from_urdf(HAND_URDFS["continuous"])  # j1, j3, j5 continuous; j2, j4 limited
    assert robot.limited.tolist() == [False, True, False, True, False]
    q_star = torch.tensor([3.3, 0.5, -3.5, -1.0, 4.0], dtype=F64)
    T_goal = robot.fk(q_star)
    g = torch.Generator().manual_seed(2)
    q0 = q_star + 0.05 * torch.randn(8, robot.dof, generator=g, dtype=F64)
    q0[:, 3] = 0.7  # j4 starts above its upper limit 0.5

    q, info = lm_refine(robot, T_goal, q0)
    assert info.converged.all()
    assert (q[:, 0] > math.pi).all() and (q[:, 2] < -math.pi).all() and (q[:, 4] > math.pi).all()
    assert ((q[:, 1] >= -1.9) & (q[:, 1] <= 1.9)).all() and ((q[:, 3] >= -3.0) & (q[:, 3] <= 0.5)).all()

    q1, info1 = slsqp_refine(robot, T_goal, q0[:2])
    assert info1.converged.all() and (q1[:, 0] > math.pi).all() and (q1[:, 3] <= 0.5).all()


# ---------------------------------------------------------------------------------------------- half turns
@pytest.mark.parametrize("angle", [0.3, 2.0, math.pi - 1e-6, math.pi])
def test_pose_residual_is_translation_and_weighted_rotation_vector(angle):
    g = torch.Generator().manual_seed(4)
    robot = Robot.from_name("ur10")
    T = robot.fk(robot.sample_q(1, g)[0])
    axis = torch.randn(3, generator=g, dtype=F64)
    axis = axis / axis.norm()
    d = torch.tensor([0.1, -0.2, 0.05], dtype=F64)
    R_goal = axis_angle_to_matrix(axis, torch.tensor(angle, dtype=F64)) @ T[:3, :3]  # rotated about a base-frame axis
    T_goal = make_transform(R_goal, T[:3, 3] + d)
    w = 0.1
    e = pose_residual(T, T_goal, w)
    assert e.shape == (6,)
    torch.testing.assert_close(e[:3], d, rtol=0, atol=1e-12)
    rot = e[3:] / w
    torch.testing.assert_close(rot.norm(), torch.tensor(angle, dtype=F64), rtol=0, atol=1e-8)
    if angle < math.pi:
        torch.testing.assert_close(rot, angle * axis, rtol=0, atol=1e-8)
    else:  # a half turn about +axis is a half turn about -axis: either sign, never zero
        assert torch.linalg.cross(rot, axis).norm() < 1e-8
    # batched over leading dimensions
    eb = pose_residual(T.expand(2, 3, 4, 4), T_goal, w)
    assert eb.shape == (2, 3, 6)
    torch.testing.assert_close(eb[1, 2], e, rtol=0, atol=1e-12)  # batched kernels: other roundings


@pytest.mark.parametrize("seed", range(4))
def test_lm_leaves_a_half_turn_orientation_error(seed):
    """Start at q*, goal = FK(q*) rolled by pi about the EE z axis (reachable by the last joint of a
    random DH chain: its axis is the EE z axis). An axial-vector residual sin(angle) * axis would be
    zero there and LM would stay put; the rotation-vector residual has norm w * pi and LM converges."""
    robot = random_robot(6, torch.Generator().manual_seed(seed))
    g = torch.Generator().manual_seed(100 + seed)
    q_star = 0.5 * robot.sample_q(1, g)[0]
    q_star[-1] = 0.0  # the last joint can roll by +-pi within its limits [-pi, pi]
    T = robot.fk(q_star)
    T_goal = T @ make_transform(rot_z(torch.tensor(math.pi, dtype=F64)))
    pos0, rot0 = pose_errors(T, T_goal)
    assert pos0 < 1e-12 and abs(rot0 - math.pi) < 1e-9

    w = RefineConfig().rot_weight
    e = pose_residual(T, T_goal, w)
    assert e[:3].norm() < 1e-12
    assert abs(float(e[3:].norm()) - w * math.pi) < 1e-9

    q, info = lm_refine(robot, T_goal, q_star)
    assert bool(info.converged) and int(info.iterations) >= 1
    pos, rot = pose_errors(robot.fk(q), T_goal)
    assert pos < POS_TOL and rot < ROT_TOL
    assert ((q >= robot.lower) & (q <= robot.upper)).all()


# ---------------------------------------------------------------------------------------------- SLSQP
@pytest.mark.parametrize("robot_id", ["panda", "random6"])
def test_slsqp_converges_near_a_solution(robot_id):
    robot = make_robot(robot_id)
    g = torch.Generator().manual_seed(9)
    q_star = robot.sample_q(3, g)
    T_goal = robot.fk(q_star)
    q0 = q_star + 0.05 * torch.randn(3, robot.dof, generator=g, dtype=F64)
    q, info = slsqp_refine(robot, T_goal, q0)
    assert q.shape == (3, robot.dof) and q.dtype == F64
    pos, rot, ok = tol_check(robot, q, T_goal)
    assert ok.all()
    assert torch.equal(info.converged, ok)
    torch.testing.assert_close(info.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(info.rot_err, rot, rtol=0, atol=1e-12)
    assert (info.iterations >= 1).all() and (info.iterations <= RefineConfig().slsqp_max_iters).all()
    assert ((q >= robot.lower) & (q <= robot.upper)).all()


def _docstring_objective(robot: Robot, q: torch.Tensor, T_goal: torch.Tensor, w: float) -> torch.Tensor:
    """|p - p_g|^2 + w^2 (3 - tr(R_g^T R)), written independently of ggik.refine."""
    T = robot.fk(q)
    dp = T[:3, 3] - T_goal[:3, 3]
    return dp @ dp + w**2 * (3.0 - torch.trace(T_goal[:3, :3].T @ T[:3, :3]))


@pytest.mark.parametrize("robot_id", ["panda", "ur10", "random5"])
def test_slsqp_objective_value_and_gradient(robot_id):
    robot = make_robot(robot_id)
    g = torch.Generator().manual_seed(21)
    q = robot.sample_q(1, g)[0]
    T_goal = robot.fk(robot.sample_q(1, g)[0])  # far from q: every term of the gradient matters
    w = 0.3
    f, grad = slsqp_objective(robot, q.numpy(), T_goal.numpy(), w)
    assert isinstance(grad, np.ndarray) and grad.shape == (robot.dof,)

    q_ad = q.clone().requires_grad_(True)
    f_ref = _docstring_objective(robot, q_ad, T_goal, w)
    (grad_ad,) = torch.autograd.grad(f_ref, q_ad)
    assert f == pytest.approx(f_ref.item(), rel=1e-12)
    np.testing.assert_allclose(grad, grad_ad.numpy(), rtol=1e-9, atol=1e-12)

    h = 1e-6
    fd = np.empty(robot.dof)
    for i in range(robot.dof):
        step = np.zeros(robot.dof)
        step[i] = h
        fd[i] = (
            slsqp_objective(robot, q.numpy() + step, T_goal, w)[0]
            - slsqp_objective(robot, q.numpy() - step, T_goal, w)[0]
        ) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-9)
    assert np.abs(grad).max() > 1e-2  # not a trivially zero gradient

    f0, g0 = slsqp_objective(robot, q, robot.fk(q), w)  # at the goal: minimum
    assert abs(f0) < 1e-14 and np.abs(g0).max() < 1e-12


# ---------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("refine", [lm_refine, slsqp_refine], ids=["lm", "slsqp"])
def test_bad_input_raises_clear_value_errors(refine):
    robot = Robot.from_name("panda")
    q = robot.sample_q(2, torch.Generator().manual_seed(0))
    T = robot.fk(q)
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 7\) \(dof=7\), got \(2, 6\)"):
        refine(robot, T, q[:, :6])
    with pytest.raises(ValueError, match=r"q must have shape \(\.\.\., 7\) \(dof=7\), got \(\)"):
        refine(robot, T, torch.tensor(0.0, dtype=F64))
    q_nan = q.clone()
    q_nan[1, 3] = float("nan")
    with pytest.raises(ValueError, match="q contains NaN or inf"):
        refine(robot, T, q_nan)
    scaled = T.clone()
    scaled[0, :3, :3] *= 1.1
    with pytest.raises(ValueError, match=r"T_goal is not a rigid transform at index \(0,\)"):
        refine(robot, scaled, q)
    T_nan = T.clone()
    T_nan[1, 0, 3] = float("nan")
    with pytest.raises(ValueError, match="T_goal contains NaN or inf"):
        refine(robot, T_nan, q)
    with pytest.raises(ValueError, match=r"T_goal must have shape \(\.\.\., 4, 4\), got \(2, 3, 4\)"):
        refine(robot, T[:, :3], q)
    with pytest.raises(ValueError, match=r"batch shapes of q \(3, 7\) and T_goal \(2, 4, 4\) do not broadcast"):
        refine(robot, T, robot.sample_q(3, torch.Generator().manual_seed(1)))
