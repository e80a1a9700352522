"""Joint limits in the distance-geometric projection (ggik.ik.dg_limits, DGConfig.limits): the angle function of one
squared distance and one signed volume, the hinge rows and their Jacobian, and projections ending within the limits."""

from __future__ import annotations

import math

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.graph.frames import AXIS_LENGTH
from ggik.ik.dg_limits import goal_point, limit_angles, limit_quantities, limit_rows, limit_terms
from ggik.ik.dg_refine import DGConfig, _edge_mask, dg_refine, volume_terms
from ggik.nn.distance_geometry import gauss_newton_step

F64 = torch.float64
PI = math.pi
CONVERGED = 1e-20  #: [m^4] DGConfig.tol: a projection below it is done


def limited_arm(dof: int, seed: int) -> Robot:
    """A random DH arm (twists U(-pi, pi), offsets a U(0.05, 0.4) m, d U(-0.3, 0.3) m: skew links) whose limits are
    random intervals, 1 to 5.5 rad wide about a middle in U(-1.5, 1.5) rad: asymmetric about 0 and about the
    distance extremes."""
    g = torch.Generator().manual_seed(seed)

    def u(lo: float, hi: float) -> list[float]:
        return (lo + (hi - lo) * torch.rand(dof, generator=g, dtype=F64)).tolist()

    a, d, alpha, middle, width = u(0.05, 0.4), u(-0.3, 0.3), u(-PI, PI), u(-1.5, 1.5), u(1.0, 5.5)
    a[-1], alpha[-1] = 0.0, 0.0
    lower = [m - w / 2 for m, w in zip(middle, width)]
    upper = [m + w / 2 for m, w in zip(middle, width)]
    return Robot.from_dh(a, d, alpha, lower=lower, upper=upper, name=f"limited{dof}_{seed}")


def near_pi_arm() -> Robot:
    """A 6-joint arm whose limits leave a forbidden arc of 0.04-0.28 rad about pi, some of them asymmetric."""
    return Robot.from_dh(
        [0.1, 0.3, 0.05, 0, 0, 0],
        [0.3, 0, 0, 0.3, 0, 0.1],
        [PI / 2, 0, PI / 2, -PI / 2, PI / 2, 0],
        lower=[-3.0, -3.1, -PI + 0.02, -3.13, -3.05, -3.1],
        upper=[3.12, 3.05, PI - 0.02, 3.13, 3.0, 3.1],
        name="near_pi",
    )


def extended(graph: RobotGraph, points: torch.Tensor, goals) -> torch.Tensor:
    """Point sets (..., N, 3) with the goal point w of their goals (...) appended: (..., N + 1, 3)."""
    w = goal_point(graph.goals(goals).in_graph)
    return torch.cat([points, w.expand(points.shape[:-2] + (3,))[..., None, :]], -2)


def wrap(x: torch.Tensor) -> torch.Tensor:
    return torch.remainder(x + PI, 2 * PI) - PI


ARMS = [limited_arm(d, s) for d, s in ((5, 1), (6, 2), (6, 3), (7, 4), (7, 5), (8, 6))]
ARMS += [near_pi_arm(), Robot.from_name("panda"), Robot.from_name("kr16_2"), Robot.from_name("lbr_iiwa")]


@pytest.mark.parametrize("robot", ARMS, ids=lambda r: r.name)
@pytest.mark.parametrize("convention", ["frames", "canonical"])
@pytest.mark.parametrize("kind", ["pose", "position"])
def test_the_angle_function_of_a_distance_and_a_volume_is_the_joint_value(robot, convention, kind):
    """On realizations of any configuration (limits ignored), each row's squared distance and signed volume are
    A - B cos(theta - theta0) and (L B / 2) sin(theta - theta0) of its joint's value, so the angle from them is the
    joint value (mod 2 pi) and the hinge is B times the angle by which it leaves its limits less the margin. One code
    path each (FK of the same values), float64: to 1e-9."""
    graph = RobotGraph.from_robot(robot, convention).for_goal_kind(kind)
    terms = limit_terms(graph, kind, margin=1e-3)
    assert terms is not None
    # every joint with limits narrower than 2 pi has its row, but the roll of the last joint under a partial goal (it
    # moves no point)
    bounded = robot.limited & (robot.upper - robot.lower < 2 * PI)
    expect = [j for j in range(robot.dof) if bounded[j] and not (kind != "pose" and j == robot.dof - 1)]
    assert terms.joint.tolist() == expect
    assert bool((terms.B > 0.01).all()), "a row whose points lie (nearly) on the joint's axis"
    g = torch.Generator().manual_seed(robot.dof)
    q = (2 * torch.rand(64, robot.dof, generator=g, dtype=F64) - 1) * PI
    T = robot.fk(q)
    goals = graph.goals(T if kind == "pose" else T[:, :3, 3], kind)
    X = extended(graph, graph.realize(q), goals)
    theta = q[:, terms.joint]
    d2, V = limit_quantities(X, terms)
    torch.testing.assert_close(d2, terms.A - terms.B * torch.cos(theta - terms.theta0), rtol=0, atol=1e-9)
    torch.testing.assert_close(V, AXIS_LENGTH * terms.B / 2 * torch.sin(theta - terms.theta0), rtol=0, atol=1e-9)
    torch.testing.assert_close(wrap(limit_angles(X, terms) - theta), torch.zeros_like(theta), rtol=0, atol=1e-9)
    r, _ = limit_rows(X, terms)
    over = (wrap(theta - terms.middle).abs() - (terms.half - 1e-3)).clamp_min(0.0)
    torch.testing.assert_close(r, terms.B * over, rtol=0, atol=1e-9)
    assert bool((r > 0).any()) and bool((r == 0).any())


@pytest.mark.parametrize("robot", ARMS[:3] + ARMS[6:8], ids=lambda r: r.name)
def test_the_hinge_jacobian_is_autograd_s(robot):
    """dr/dx of limit_rows against autograd, float64, on perturbed realizations of configurations in and out of the
    limits (rows on and off, the goal point's column included)."""
    graph = RobotGraph.from_robot(robot, "canonical")
    terms = limit_terms(graph, "pose", margin=1e-6)
    g = torch.Generator().manual_seed(7)
    q = (2 * torch.rand(6, robot.dof, generator=g, dtype=F64) - 1) * PI
    X = extended(graph, graph.realize(q), robot.fk(q))
    X = X + 0.03 * torch.randn(X.shape, generator=g, dtype=F64)
    r, J = limit_rows(X, terms)
    auto = torch.autograd.functional.jacobian(lambda x: limit_rows(x, terms)[0].sum(0), X)  # (K, B, N + 1, 3)
    torch.testing.assert_close(J, auto.permute(1, 0, 2, 3), rtol=1e-10, atol=1e-12)
    assert bool((r > 0).any()) and bool((r == 0).any()), "both sides of the hinge"
    assert bool((J[r == 0] == 0).all()), "a row that is off moves nothing"


def test_extra_rows_join_the_normal_equations():
    """gauss_newton_step's ``extra`` rows: zero rows leave the step bitwise as without them; rows with a Jacobian give
    the damped Gauss-Newton step of all residuals together, (J^T J + lambda I) delta = -J^T r over the movable
    coordinates, with J from autograd of the stacked residuals (distances over the known edges, the weighted link
    volumes, the hinges)."""
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot, "canonical")
    g = torch.Generator().manual_seed(3)
    q_goal = robot.sample_q(2, g)
    problem = graph.partial(robot.fk(q_goal))
    q = q_goal + 1.5 * torch.randn(q_goal.shape, generator=g, dtype=F64)  # far enough to leave the limits
    x = graph.realize(q) + 0.02 * torch.randn(2, graph.num_nodes, 3, generator=g, dtype=F64)
    x[:, problem.anchor_mask] = problem.known_positions[:, problem.anchor_mask]
    N = graph.num_nodes
    mask = _edge_mask(problem)
    movable = (~problem.anchor_mask).expand(2, N)
    V, w = volume_terms(graph, True)
    volumes = (V.expand(2, -1), w.expand(2, -1))
    terms = limit_terms(graph, "pose", 1e-6)
    W = goal_point(problem.goal)[:, None]
    args = (x, problem.known_distances, mask.expand(2, N, N), movable, 1e-3)
    plain = gauss_newton_step(*args, max_step=float("inf"), volumes=volumes)
    K = terms.joint.numel()
    zero = (torch.zeros(2, K, dtype=F64), torch.zeros(2, K, N, 3, dtype=F64))
    assert torch.equal(gauss_newton_step(*args, max_step=float("inf"), volumes=volumes, extra=zero), plain)
    r, J = limit_rows(torch.cat([x, W], 1), terms)
    assert bool((r > 0).any())
    step = gauss_newton_step(*args, max_step=float("inf"), volumes=volumes, extra=(r, J[:, :, :N]))

    iu = torch.triu_indices(N, N, 1)
    edges = mask[iu[0], iu[1]]
    free = (~problem.anchor_mask).nonzero()[:, 0]

    def residuals(b: int, xf: torch.Tensor) -> torch.Tensor:
        xb = x[b].clone()
        xb[free] = xf.view(-1, 3)
        d2 = ((xb[iu[0]] - xb[iu[1]]) ** 2).sum(-1) - problem.known_distances[b, iu[0], iu[1]] ** 2
        from ggik.graph.handedness import signed_volumes

        vol = w.sqrt() * (signed_volumes(xb, graph.n) - V)
        hinge = limit_rows(torch.cat([xb, W[b]], 0), terms)[0]
        return torch.cat([d2[edges], vol, hinge])

    for b in range(2):
        xf = x[b, free].reshape(-1)
        Jd = torch.autograd.functional.jacobian(lambda z, b=b: residuals(b, z), xf)
        res = residuals(b, xf)
        H = Jd.T @ Jd
        lam = 1e-3 * H.diagonal().mean()
        delta = torch.linalg.solve(H + lam * torch.eye(H.shape[0], dtype=F64), -Jd.T @ res)
        torch.testing.assert_close(step[b, free].reshape(-1), delta, rtol=1e-7, atol=1e-9)
        assert not torch.allclose(plain[b, free].reshape(-1), delta), "the hinges changed the step"


def projected(robot: Robot, q_goal: torch.Tensor, q0: torch.Tensor, kind: str = "pose", **cfg) -> dict:
    """The projections of the realizations of starts ``q0`` (P, S, dof) towards the goals FK(q_goal) of ``kind``, with
    and without the limits (30 steps, one pass: the hinges alone, ``flips=0``; :mod:`tests.test_dg_flips` for the
    passes): per run, which converged and which are within the limits."""
    graph = RobotGraph.from_robot(robot, "canonical")
    T = robot.fk(q_goal)
    goals = graph.goals(T if kind == "pose" else (T[:, :3, 3] if kind == "position" else T), kind)
    X = graph.for_goal_kind(kind).realize(q0)
    out = {}
    for limits in (False, True):
        res = dg_refine(graph, X, goals, DGConfig(iterations=30, limits=limits, flips=0, **cfg))
        torch.testing.assert_close(res.within_limits, robot.within_limits(res.q), rtol=0, atol=0)
        out[limits] = (res, res.cost < CONVERGED)
    return out


def assert_converged_within_limits(runs: dict, least: int, gain: int | None) -> None:
    """With the limits, every converged projection is within them and at least ``least`` converged; without, some
    converged projection lies outside them; and (``gain``) the hinges' steps make at least ``gain`` more projections
    converge within the limits than converge there without them (the stopping cost alone, which counts the hinges,
    would only filter)."""
    res, conv = runs[True]
    assert bool(res.within_limits[conv].all()), "a converged projection outside the limits"
    assert int(conv.sum()) >= least, f"{int(conv.sum())} of {conv.numel()} converged"
    res0, conv0 = runs[False]
    assert bool((conv0 & ~res0.within_limits).any()), "without limits no converged projection left them"
    if gain is not None:
        before = int((conv0 & res0.within_limits).sum())
        assert int(conv.sum()) >= before + gain, f"{int(conv.sum())} converged within the limits, {before} without"


def test_the_panda_s_tight_joints_end_within_their_limits():
    """Panda joints 4 ([-3.07, -0.07] rad) and 6 ([-0.02, 3.75] rad): from starts near each goal's configuration (0.05
    rad) with both joints 0.5-1.5 rad outside their limits, every converged projection has them (and every joint)
    within the limits. Measured: 38 of 64 converge with the hinges (held to 30), where without them 25 converge within
    the limits (held to 6 fewer) and 35 outside; joints 4 and 6 end within their limits in 77 % of the samples with
    the hinges, 56 % without (held to 10 points)."""
    robot = Robot.from_name("panda")
    g = torch.Generator().manual_seed(0)
    P, S = 8, 8
    q_goal = robot.sample_q(P, g)
    q0 = q_goal[:, None].repeat(1, S, 1) + 0.05 * torch.randn(P, S, 7, generator=g, dtype=F64)
    out = 0.5 + torch.rand(P, S, 2, generator=g, dtype=F64)
    above = torch.rand(P, S, 2, generator=g) < 0.5
    lo, hi = robot.lower, robot.upper
    for k, j in enumerate((3, 5)):
        q0[..., j] = torch.where(above[..., k], hi[j] + out[..., k], lo[j] - out[..., k])
    assert not bool(robot.joints_within_limits(q0)[..., [3, 5]].any())
    runs = projected(robot, q_goal, q0)
    assert_converged_within_limits(runs, least=30, gain=6)
    res, conv = runs[True]
    assert float(res.pos_err[conv].max()) < 1e-6 and float(res.rot_err[conv].max()) < 1e-6
    tight = {k: robot.joints_within_limits(r.q)[..., [3, 5]].all(-1).double().mean() for k, (r, _) in runs.items()}
    assert float(tight[True]) >= float(tight[False]) + 0.1, tight


def test_an_arm_with_limits_near_pi_leaves_its_forbidden_arcs():
    """Limits that leave 0.04-0.28 rad about pi (the hinge's phi wraps there): from starts with one joint inside its
    forbidden arc (0.3 rad about each goal's configuration for the others), every converged projection is within the
    limits (without the hinges, 4 of 100 converged ones are not; measured 95 of 128 converge with them, held to 80)."""
    robot = near_pi_arm()
    g = torch.Generator().manual_seed(0)
    P, S = 8, 16
    q_goal = robot.sample_q(P, g)
    q0 = q_goal[:, None].repeat(1, S, 1) + 0.3 * torch.randn(P, S, 6, generator=g, dtype=F64)
    j = torch.randint(0, 6, (P, S), generator=g)
    q0.scatter_(-1, j[..., None], PI + 0.01 * torch.randn(P, S, 1, generator=g, dtype=F64))
    assert float(robot.within_limits(q0).double().mean()) < 0.05
    assert_converged_within_limits(projected(robot, q_goal, q0), least=80, gain=None)  # few converge outside


@pytest.mark.parametrize("dof, seed, least", [(6, 2, 28), (7, 4, 18)])
def test_random_arms_converge_within_their_limits(dof, seed, least):
    """Random skew arms with random asymmetric limits, from starts anywhere in [-pi, pi] (nearly all outside the
    limits): every converged projection is within them, where without the hinges 44 of 63 (6 joints) and 83 of 90
    (7 joints) converged ones are not (measured with them: 35 and 24 of 128 converge, held to 28 and 18, against 19
    and 7 converged within the limits without them)."""
    robot = limited_arm(dof, seed)
    g = torch.Generator().manual_seed(seed)
    P, S = 8, 16
    q_goal = robot.sample_q(P, g)
    q0 = (2 * torch.rand(P, S, dof, generator=g, dtype=F64) - 1) * PI
    runs = projected(robot, q_goal, q0)
    assert_converged_within_limits(runs, least, gain=8)
    res, conv = runs[True]
    assert float(res.pos_err[conv].max()) < 1e-6


@pytest.mark.parametrize("kind", ["position", "position+axis"])
def test_partial_goals_converge_within_the_limits(kind):
    """Position and position + axis goals on the Panda from starts anywhere in [-pi, pi]: every converged projection
    is within the limits (the last joint, which such goals leave free, at 0 within its own), and reaches its goal.
    Without the hinges 102 of 125 (position) and 67 of 90 (position + axis) converged ones are outside the limits;
    with them 76 and 41 of 128 converge (held to 60 and 32), all within, against 23 and 23 within without them."""
    robot = Robot.from_name("panda")
    g = torch.Generator().manual_seed(5)
    P, S = 8, 16
    q_goal = robot.sample_q(P, g)
    q0 = (2 * torch.rand(P, S, 7, generator=g, dtype=F64) - 1) * PI
    runs = projected(robot, q_goal, q0, kind)
    assert_converged_within_limits(runs, least=60 if kind == "position" else 32, gain=8)
    res, conv = runs[True]
    assert bool((res.q[..., -1] == 0).all())
    assert float(res.pos_err[conv].max()) < 1e-6 and float(res.rot_err[conv].max()) < 1e-6


def test_joints_without_bounds_have_no_rows():
    """Continuous joints and limits 2 pi wide or wider add no row: the UR10 (limits +-2 pi) projects as without
    limits, bitwise; a random DH arm's [-pi, pi] joints alike."""
    from ggik import random_robot

    for robot in (Robot.from_name("ur10"), random_robot(6, 3)):
        graph = RobotGraph.from_robot(robot, "canonical")
        assert limit_terms(graph, "pose", 1e-6) is None
        g = torch.Generator().manual_seed(1)
        T = robot.fk(robot.sample_q(3, g))
        X = graph.realize(robot.sample_q(12, g).view(3, 4, -1))
        a = dg_refine(graph, X, T, DGConfig(iterations=8, limits=True))
        b = dg_refine(graph, X, T, DGConfig(iterations=8, limits=False))
        assert torch.equal(a.points, b.points) and torch.equal(a.cost, b.cost)
