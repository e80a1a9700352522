"""Path following (ggik.path.solve and its parts): the search against brute force, 2 pi wraps, the trajectory LM,
continuation, and solve_path / GGIK.solve_path on easy, constrained and unreachable paths.

Paths are FK of smooth joint trajectories (followable by construction); everything float64 and seeded. Searches of
more than one round run on a clock the test sets (``PathConfig.clock``: :func:`still`, or one driven by the test), so
no outcome depends on how fast this machine runs them.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
import torch
from conftest import HAND_URDFS

from ggik import GGIK, GGIKModel, ModelConfig, PathConfig, Robot, SolveConfig, random_robot
from ggik.graph import RobotGraph
from ggik.ik.sampling import SamplingOptions, sample_joint_angles, shared_noise
from ggik.kinematics.geometry import pose_errors
from ggik.path import solve_path
from ggik.path.candidates import anchors, distinct, interpolate, sweep
from ggik.path.config import TrajectoryConfig
from ggik.path.result import path_result
from ggik.path.search import (
    JointScale,
    bottleneck_path,
    joint_scale,
    jumps,
    limit_penalty,
    search_path,
    smooth_path,
    unwrap,
)
from ggik.path.trajectory import trajectory_check, trajectory_refine

F64 = torch.float64
JUMP = math.radians(7.0)


def smooth_trajectory(robot: Robot, T: int, seed: int, span: float = 0.6) -> torch.Tensor:
    """(T, dof): from a configuration in the middle of the ranges, every joint moving by at most ``span`` [rad]
    along a smoothstep (steps well below 7 deg)."""
    g = torch.Generator().manual_seed(seed)
    mid, half = (robot.lower + robot.upper) / 2, (robot.upper - robot.lower) / 2
    qa = mid + 0.4 * half * (2 * torch.rand(robot.dof, generator=g, dtype=F64) - 1)
    dq = span * (2 * torch.rand(robot.dof, generator=g, dtype=F64) - 1)
    s = torch.linspace(0, 1, T, dtype=F64)[:, None]
    return qa + dq * (3 * s**2 - 2 * s**3)


def still() -> float:
    """A clock that stands still (``PathConfig.clock``): no time limit ends a search, ``max_rounds`` does."""
    return 0.0


def tiny_model() -> GGIKModel:
    return GGIKModel(
        ModelConfig(
            dim=8,
            hidden=16,
            enc_layers=1,
            dec_layers=1,
            latent=2,
            prior_components=2,
            residual_inputs=False,
            gn_steps=0,
        )
    )


# ---------------------------------------------------------------------------------------------- search
def brute_force(start, nodes, edges, combine):
    """Best (cost, path) over every path through the layers: combine='max' (bottleneck) or 'sum'."""
    best = (math.inf, None)
    for path in itertools.product(*[range(len(n)) for n in nodes]):
        costs = [start[path[0]]] + [edges[t][path[t], path[t + 1]] for t in range(len(edges))]
        if combine == "max":
            c = max(costs)
        else:
            c = sum(costs) + sum(nodes[t][i] for t, i in enumerate(path))
        if c < best[0]:
            best = (c, path)
    return best


@pytest.mark.parametrize("seed", range(6))
def test_dp_is_optimal_against_brute_force(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 4, size=5)  # 5 layers of 1-3 nodes
    edges = [rng.uniform(0, 1, (a, b)) for a, b in zip(sizes[:-1], sizes[1:])]
    for E in edges:  # some forbidden edges
        E[rng.uniform(size=E.shape) < 0.2] = np.inf
    nodes = [rng.uniform(0, 0.5, n) for n in sizes]
    start = rng.uniform(0, 0.3, sizes[0])
    zero_nodes = [np.zeros(n) for n in sizes]

    path, value = bottleneck_path(edges, start)
    ref_value, _ = brute_force(start, zero_nodes, edges, "max")
    assert value == pytest.approx(ref_value, abs=1e-15)
    if math.isfinite(value):
        got = max([start[path[0]]] + [edges[t][path[t], path[t + 1]] for t in range(len(edges))])
        assert got == pytest.approx(value, abs=1e-15)

    path, value = smooth_path(edges, nodes, start)
    ref_value, ref_path = brute_force(start, nodes, edges, "sum")
    assert value == pytest.approx(ref_value, abs=1e-12)
    if math.isfinite(value):
        got = (
            start[path[0]]
            + sum(edges[t][path[t], path[t + 1]] for t in range(len(edges)))
            + sum(nodes[t][i] for t, i in enumerate(path))
        )
        assert got == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_search_path_two_passes_match_brute_force(seed):
    """search_path: the smallest largest jump B*, then the least (squared moves + limit penalty) among paths with
    every jump <= max(B*, allow), both by enumeration of all paths of a tiny candidate graph."""
    g = torch.Generator().manual_seed(seed)
    scale = JointScale(
        step=np.array([0.1, 0.2]), wrap=np.array([False, False]), lo=np.array([-1.0, -1.0]), hi=np.array([1.0, 1.0])
    )
    T, K = 4, 3
    q = 0.2 * torch.randn(T, K, 2, generator=g, dtype=F64).clamp(-0.95, 0.95)
    valid = torch.rand(T, K, generator=g) > 0.15
    valid[:, 0] = True
    allow, margin, weight = 1.5, 0.3, 2.0
    res = search_path(q, valid, scale, allow=allow, limit_margin=margin, limit_weight=weight)
    qn = q.numpy()
    paths = [p for p in itertools.product(range(K), repeat=T) if all(valid[t, i] for t, i in enumerate(p))]
    worst = {p: max(float(jumps(qn[t, p[t]], qn[t + 1, p[t + 1]], scale)) for t in range(T - 1)) for p in paths}
    B = min(worst.values())
    assert res.bottleneck == pytest.approx(B, abs=1e-12)
    cap = max(B, allow)

    def cost(p):
        moves = sum(float((((qn[t + 1, p[t + 1]] - qn[t, p[t]]) / scale.step) ** 2).sum()) for t in range(T - 1))
        return moves + weight * sum(float(limit_penalty(qn[t, p[t]], scale, margin)) for t in range(T))

    best = min((p for p in paths if worst[p] <= cap + 1e-12), key=cost)
    assert res.cost == pytest.approx(cost(best), abs=1e-9)
    assert cost(tuple(res.index.tolist())) == pytest.approx(res.cost, abs=1e-9)
    np.testing.assert_allclose(res.q, qn[np.arange(T), res.index], atol=0)


def test_no_path_through_valid_candidates_gives_an_infinite_bottleneck():
    scale = JointScale(step=np.array([0.1]), wrap=np.array([False]), lo=np.array([-1.0]), hi=np.array([1.0]))
    valid = torch.ones(3, 2, dtype=torch.bool)
    valid[1] = False  # waypoint 1 has no valid candidate
    res = search_path(torch.zeros(3, 2, 1, dtype=F64), valid, scale)
    assert math.isinf(res.bottleneck)


def test_continuous_joints_wrap_in_the_search_and_unwrap_along_the_path():
    robot = Robot.from_urdf(HAND_URDFS["continuous"])  # j1, j3, j5 continuous
    scale = joint_scale(robot, JUMP, 0.02)
    assert scale.wrap.tolist() == [True, False, True, False, True]
    a = np.array([math.pi - 0.02, 0.1, 0.0, -1.0, 0.0])
    b = a.copy()
    b[0] = -math.pi + 0.03  # 0.05 rad further on, across the +-pi seam
    assert jumps(a, b, scale) == pytest.approx(0.05 / JUMP, abs=1e-12)
    c = a.copy()
    c[1] = 0.1 + 2 * math.pi - 0.05  # a limited joint 2 pi away is a real move, not a wrap
    assert jumps(a, c, scale) > 50
    # The search prefers the wrapped neighbour over a nearby-looking value on the other side.
    q = torch.tensor(np.stack([[a, a], [b, b + np.array([2.0, 0, 0, 0, 0])]]), dtype=F64)  # (T=2, K=2, 5)
    res = search_path(q, torch.ones(2, 2, dtype=torch.bool), scale)
    assert res.index.tolist()[1] == 0 and res.bottleneck < 0.01 / JUMP * 10
    assert res.q[1, 0] == pytest.approx(math.pi + 0.03, abs=1e-12)  # unwrapped: continues past pi
    # unwrap: every step is the wrapped one; a start configuration fixes the branch of the first waypoint
    traj = np.array([[3.1, 0, 0, -1, 0], [-3.1, 0, 0, -1, 0], [-2.9, 0, 0, -1, 0]])
    out = unwrap(traj, scale)
    assert np.allclose(np.diff(out[:, 0]), [2 * math.pi - 6.2, 0.2])
    out = unwrap(traj, scale, np.array([3.1 + 2 * math.pi, 0, 0, -1, 0]))
    assert out[0, 0] == pytest.approx(3.1 + 2 * math.pi)


def test_limit_penalty_is_zero_inside_and_one_per_joint_on_a_limit():
    scale = JointScale(
        step=np.ones(3),
        wrap=np.array([False, False, True]),
        lo=np.array([-1.0, -2.0, -np.inf]),
        hi=np.array([1.0, 2.0, np.inf]),
    )
    assert limit_penalty(np.array([0.0, 0.0, 100.0]), scale, 0.1) == 0.0
    assert limit_penalty(np.array([1.0, -2.0, 0.0]), scale, 0.1) == pytest.approx(2.0)
    assert limit_penalty(np.array([0.95, 0.0, 0.0]), scale, 0.1) == pytest.approx(0.25)


# ---------------------------------------------------------------------------------------------- trajectory LM
@pytest.mark.parametrize(
    "robot", [Robot.from_name("panda"), random_robot(6, torch.Generator().manual_seed(3))], ids=lambda r: r.name
)
def test_trajectory_lm_reaches_every_waypoint_within_limits(robot):
    q_true = smooth_trajectory(robot, 80, seed=1)
    q_true[:, 0] += robot.upper[0] - 0.01 - q_true[:, 0].max()  # joint 1 ends 0.01 rad below its upper limit
    poses = robot.fk(q_true)
    scale = joint_scale(robot, JUMP, 0.02)
    g = torch.Generator().manual_seed(2)
    q0 = q_true + 0.03 * torch.randn(q_true.shape, generator=g, dtype=F64)
    q0[-10:, 0] = robot.upper[0] + 0.05  # starts outside the limit: clamped, never returned outside
    cfg = TrajectoryConfig()
    before = trajectory_check(robot, poses, q0.clamp(robot.lower, robot.upper), scale, cfg)
    q, info = trajectory_refine(robot, poses, q0, scale, cfg)
    assert not before.valid and info.valid and 1 <= info.iterations <= cfg.max_iters
    pos, rot = pose_errors(robot.fk(q), poses)
    assert pos.max() < cfg.pos_tol and rot.max() < cfg.rot_tol
    assert pos.max() < before.pos_err.max() / 10
    assert ((q >= robot.lower) & (q <= robot.upper)).all()
    assert (info.moves.abs() <= 1).all()


def test_trajectory_lm_with_a_start_configuration_smooths_the_first_move():
    robot = Robot.from_name("ur10")
    q_true = smooth_trajectory(robot, 40, seed=4)
    poses = robot.fk(q_true)
    scale = joint_scale(robot, JUMP, 0.02)
    q, info = trajectory_refine(robot, poses, q_true + 0.01, scale, q_start=q_true[0])
    assert info.valid and info.moves.shape == (40, robot.dof)
    torch.testing.assert_close(info.moves[0], (q[0] - q_true[0]) / JUMP, rtol=0, atol=1e-12)
    already = trajectory_refine(robot, poses, q_true, scale)[1]
    assert already.valid and already.iterations == 0  # a valid trajectory is returned as it is


def test_trajectory_lm_rejects_bad_shapes():
    robot = Robot.from_name("panda")
    scale = joint_scale(robot, JUMP, 0.02)
    with pytest.raises(ValueError, match=r"takes q0 \(T, dof\) and poses \(T, 4, 4\)"):
        trajectory_refine(robot, robot.fk(robot.sample_q(3)), robot.sample_q(4), scale)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("pos_tol", 0.0, "pos_tol must be positive"),
        ("damping", -1e-3, "damping must be positive"),
        ("max_iters", -1, "max_iters must be >= 0"),
        ("smooth_weight", float("nan"), "smooth_weight must be >= 0"),
        ("smooth_decay", 1.5, r"smooth_decay must be in \[0, 1\]"),
        ("margin_floor", -0.1, r"margin_floor must be in \[0, 1\]"),
    ],
)
def test_trajectory_config_names_a_bad_value(field, value, message):
    with pytest.raises(ValueError, match=message):
        TrajectoryConfig(**{field: value})


# ---------------------------------------------------------------------------------------------- candidates
def test_anchors_and_interpolation():
    assert anchors(10, 4).tolist() == [0, 4, 8, 9] and anchors(3, 1).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="stride must be >= 1"):
        anchors(5, 0)
    scale = JointScale(step=np.ones(2), wrap=np.array([False, True]), lo=-np.ones(2) * np.inf, hi=np.ones(2) * np.inf)
    at = anchors(9, 4)  # 0, 4, 8
    q = torch.tensor([[[0.0, 3.0]], [[0.4, -3.0]], [[0.0, -2.0]]], dtype=F64)  # (A, K=1, 2)
    out = interpolate(q, at, 9, scale)
    assert out.shape == (9, 1, 2)
    torch.testing.assert_close(out[at], q, rtol=0, atol=1e-15)
    torch.testing.assert_close(out[2, 0, 0], torch.tensor(0.2, dtype=F64))
    step = (2 * math.pi - 6.0) / 4  # the continuous joint goes the short way across pi
    torch.testing.assert_close(out[1, 0, 1], torch.tensor(3.0 + step, dtype=F64))


def test_sweep_follows_the_path_in_both_directions():
    robot = Robot.from_name("panda")
    q_true = smooth_trajectory(robot, 50, seed=5)
    poses = robot.fk(q_true)
    q0 = torch.stack([q_true[0], q_true[-1], q_true[20]])
    start, direction = torch.tensor([0, 49, 20]), torch.tensor([1, -1, -1])
    seeds, visited = sweep(robot, poses, q0, start, direction)
    assert visited[:, :2].all() and visited[:21, 2].all() and not visited[21:, 2].any()
    pos, _ = pose_errors(robot.fk(seeds[visited]), poses[visited.nonzero()[:, 0]])
    assert pos.max() < 1e-3  # one Gauss-Newton step per waypoint keeps the predictor near the path
    steps = (seeds[1:, :2] - seeds[:-1, :2]).abs()  # continuous tracks (the arm is redundant: not q_true itself)
    assert steps.max() < 0.2 * JUMP


def test_distinct_keeps_valid_rows_apart():
    scale = JointScale(step=np.ones(2), wrap=np.array([False, False]), lo=-np.ones(2) * 9, hi=np.ones(2) * 9)
    q = torch.tensor([[0.0, 0.0], [0.5, 0.0], [2.0, 0.0], [5.0, 0.0], [9.0, 0.0]], dtype=F64)
    valid = torch.tensor([True, True, True, False, True])
    assert distinct(q, valid, 10, scale).tolist() == [0, 2, 4]
    assert distinct(q, valid, 2, scale).tolist() == [0, 2]


def test_shared_noise_gives_every_goal_the_same_latent_draws():
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot)
    model = tiny_model().eval()
    noise = shared_noise(model, graph, 3, torch.Generator().manual_seed(0))
    L = model.latent_mask(torch.ones(1, graph.num_nodes, dtype=torch.bool)).shape[1]
    assert noise["u"].shape == (3, L) and noise["eps"].shape == (3, L, model.cfg.latent)
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(1)))
    both = sample_joint_angles(model, graph, T, 3, options=SamplingOptions(noise=noise, bf16=False))
    alone = sample_joint_angles(model, graph, T[1:], 3, options=SamplingOptions(noise=noise, bf16=False))
    torch.testing.assert_close(both.points[1], alone.points[0], rtol=0, atol=1e-5)
    twice = sample_joint_angles(model, graph, T[[0, 0]], 3, options=SamplingOptions(noise=noise, bf16=False))
    torch.testing.assert_close(twice.points[0], twice.points[1], rtol=0, atol=0)


# ---------------------------------------------------------------------------------------------- solve_path
def check_result(res, robot, poses, cfg=None, q_start=None):
    """The PathResult's fields recomputed from its trajectory (judged by ``cfg``, default PathConfig())."""
    cfg = cfg or PathConfig()
    T = poses.shape[0]
    assert res.q.shape == (T, robot.dof) and res.q.dtype == F64
    pos, rot = pose_errors(robot.fk(res.q), poses)
    torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(res.rot_err, rot, rtol=0, atol=1e-12)
    full = res.q if q_start is None else torch.cat([q_start[None], res.q])
    torch.testing.assert_close(res.steps, full[1:] - full[:-1], rtol=0, atol=0)
    assert res.mjac == pytest.approx(math.degrees(float(res.steps.abs().max())) if res.steps.numel() else 0.0, abs=1e-9)
    assert res.within_limits == bool(robot.within_limits(res.q).all())
    ok = bool((pos < cfg.pos_tol).all() and (rot < cfg.rot_tol).all()) and res.within_limits and res.mjac <= 7.0
    assert res.valid == ok
    assert res.total_time >= 0 and res.candidates > 0 and res.rounds >= 1
    assert res.length == pytest.approx(float(res.steps.norm(dim=-1).sum()))


@pytest.mark.parametrize(
    "robot",
    [Robot.from_name("panda"), Robot.from_name("kr16_2"), random_robot(7, torch.Generator().manual_seed(8))],
    ids=lambda r: r.name,
)
def test_random_start_solver_follows_an_easy_path(robot):
    q_true = smooth_trajectory(robot, 60, seed=6)
    poses = robot.fk(q_true)
    res = solve_path(robot, poses, PathConfig(samples=0), generator=torch.Generator().manual_seed(0))
    check_result(res, robot, poses)
    assert res.valid and res.rounds == 1 and res.time_to_valid <= res.total_time
    assert res.unreached == [] and res.large_moves == []
    assert res.pos_err.max() < 1e-4 and res.rot_err.max() < math.radians(0.1)


def test_ggik_solve_path_with_an_untrained_model_and_a_start_configuration():
    """An untrained model's samples are useless; the random starts still make it work."""
    robot = Robot.from_name("lbr_iiwa")
    q_true = smooth_trajectory(robot, 40, seed=7)
    poses = robot.fk(q_true)
    solver = GGIK(tiny_model())
    res = solver.solve_path(
        robot, poses, PathConfig(samples=4, clock=still), q_start=q_true[0], generator=torch.Generator().manual_seed(1)
    )
    check_result(res, robot, poses, q_start=q_true[0])
    assert res.valid and res.steps.shape == (40, robot.dof)
    res = solver.solve_path(
        robot,
        poses,
        PathConfig(samples=0, pos_tol=1e-5, rot_tol=1e-4, clock=still),
        generator=torch.Generator().manual_seed(1),
    )
    assert res.valid and res.pos_err.max() < 1e-5 and res.rot_err.max() < 1e-4


def test_ggik_solve_path_takes_one_path_config_and_nothing_else():
    """GGIK.solve_path(robot, poses, PathConfig): the config's samples, time limit and tolerances rule (no second
    config, no precedence); the IK config, loose options and positionals after it are refused, naming what to use."""
    robot = Robot.from_name("ur10")
    poses = robot.fk(smooth_trajectory(robot, 12, seed=3))
    solver = GGIK(tiny_model())
    cfg = PathConfig(samples=2, max_rounds=2, starts=6, time_limit=5.0, pos_tol=2e-4, clock=still)
    res = solver.solve_path(robot, poses, cfg, generator=torch.Generator().manual_seed(2))
    direct = solve_path(robot, poses, cfg, solver.model, generator=torch.Generator().manual_seed(2))
    assert torch.equal(res.q, direct.q) and res.valid == direct.valid and res.candidates == direct.candidates
    assert res.valid and float(res.pos_err.max()) < 2e-4
    with pytest.raises(TypeError, match="config must be a ggik.PathConfig .* got SolveConfig"):
        solver.solve_path(robot, poses, SolveConfig(samples=2))
    with pytest.raises(TypeError, match="unexpected keyword argument 'time_limit'"):
        solver.solve_path(robot, poses, cfg, time_limit=1.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional argument"):
        solver.solve_path(robot, poses, cfg, None)  # type: ignore[misc]


@pytest.mark.parametrize("refine_bottleneck", [2.0, 1e-9])  # trajectory LM on the searched path, or a check alone
def test_solve_path_result_agrees_with_an_independent_judgement(refine_bottleneck):
    """solve_path hands its last judgement of the trajectory to path_result; judged here by the criteria written out
    without the path code (FK and pose errors, joint differences, the limits, the clearance of every waypoint and of
    the motion arriving at it), the result says the same."""
    from ggik.collision import Clearance, CollisionModel, Scene, Sphere

    robot = Robot.from_name("panda")
    q_true = smooth_trajectory(robot, 16, seed=11)
    poses = robot.fk(q_true)
    model = CollisionModel.from_robot(robot)
    a, _ = model.capsules_at(robot.link_poses(q_true[8]))
    ball = Sphere(0.05, tuple((a[3] + torch.tensor([0.0, 0.15, 0.0], dtype=F64)).tolist()))
    clearance = Clearance(robot, model, Scene(spheres=(ball,)))
    cfg = PathConfig(samples=0, max_rounds=2, refine_bottleneck=refine_bottleneck, clock=still)
    res = solve_path(robot, poses, cfg, q_start=q_true[0], generator=torch.Generator().manual_seed(3),
                     clearance=clearance)  # fmt: skip
    pos, rot = pose_errors(robot.fk(res.q), poses)
    torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(res.rot_err, rot, rtol=0, atol=1e-9)
    steps = torch.diff(torch.cat([q_true[:1], res.q]), dim=0)
    torch.testing.assert_close(res.steps, steps, rtol=0, atol=0)
    assert res.mjac == pytest.approx(math.degrees(float(steps.abs().max())))
    assert res.large_moves == (steps.abs() > cfg.max_jump + 1e-12).any(-1).nonzero()[:, 0].tolist()
    within = robot.within_limits(res.q)
    assert res.within_limits == bool(within.all())
    assert res.unreached == (~((pos < cfg.pos_tol) & (rot < cfg.rot_tol)) | ~within).nonzero()[:, 0].tolist()
    # collisions: at each waypoint and on the motion arriving at it, interpolated in joint space at most 1 deg apart
    full = torch.cat([q_true[:1], res.q])
    m = min(max(math.ceil(math.degrees(float((full[1:] - full[:-1]).abs().max()))), 1), 64)
    t = (torch.arange(1, m, dtype=F64) / m)[:, None, None]
    between = full[:-1] + t * (full[1:] - full[:-1])  # (m - 1, T, dof)
    clear = clearance.min_clearance(res.q)
    if m > 1:
        clear = torch.minimum(
            clear, clearance.min_clearance(between.reshape(-1, robot.dof)).view(m - 1, -1).min(0).values
        )
    assert res.collisions == (clear < 0).nonzero()[:, 0].tolist()
    assert res.min_clearance == pytest.approx(float(clear.min()), abs=1e-12)
    assert res.valid == (not res.unreached and not res.large_moves and not res.collisions)
    with pytest.raises(ValueError, match="info judges"):
        from ggik.path.trajectory import trajectory_check as judge

        info = judge(robot, poses[:4], res.q[:4], joint_scale(robot, 0.1, 0.02), TrajectoryConfig())
        path_result(robot, poses, res.q, cfg, None, None, None, info)


def test_solve_path_checks_the_poses_on_entry_only(monkeypatch):
    """Poses are checked on entry: as a path (check_path_inputs, naming the waypoint) and, with a model, as the graph's
    goals (RobotGraph.goals, the one place goals are made); the model samples, LM and trajectory refinement of every
    round take them checked."""
    import ggik.kinematics.geometry
    import ggik.path.solve

    calls = []
    real = ggik.kinematics.geometry.check_pose

    def counting(T, name="pose", tol=1e-6):
        calls.append(name)
        return real(T, name, tol)

    for module in (ggik.path.solve, ggik.kinematics.geometry):  # goal_kinds calls geometry.check_pose
        monkeypatch.setattr(module, "check_pose", counting)
    robot = Robot.from_name("panda")
    poses = robot.fk(smooth_trajectory(robot, 10, seed=4))
    cfg = PathConfig(max_rounds=2, stop_at_first_valid=False, track_samples=2, random_tracks=2, clock=still)
    res = GGIK(tiny_model()).solve_path(
        robot, poses, replace(cfg, samples=2), generator=torch.Generator().manual_seed(0)
    )
    assert res.rounds == 2 and calls == ["poses", "T_goal"]


def test_unreachable_waypoints_are_named():
    robot = Robot.from_name("panda")
    q_true = smooth_trajectory(robot, 30, seed=8)
    poses = robot.fk(q_true).clone()
    poses[[12, 13, 20], 0, 3] += 5.0  # 5 m away: out of reach
    res = solve_path(
        robot, poses, PathConfig(samples=0, max_rounds=2, clock=still), generator=torch.Generator().manual_seed(0)
    )
    check_result(res, robot, poses)
    assert not res.valid and math.isnan(res.time_to_valid)
    assert res.unreached == [12, 13, 20]
    assert "waypoints not reached: 12-13, 20" in res.summary()


def test_path_result_of_a_trajectory_with_a_large_move():
    robot = Robot.from_name("panda")
    q = smooth_trajectory(robot, 10, seed=9)
    q[6:] += torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.3], dtype=F64)  # 17 deg jump of joint 7 into waypoint 6
    res = path_result(robot, robot.fk(q), q, PathConfig())
    assert not res.valid and res.unreached == [] and res.large_moves == [6]
    assert res.mjac == pytest.approx(math.degrees(float((q[6] - q[5]).abs().max())))


def test_bad_input():
    robot = Robot.from_name("panda")
    poses = robot.fk(smooth_trajectory(robot, 5, seed=1))
    with pytest.raises(ValueError, match="poses must have shape"):
        solve_path(robot, poses[0], PathConfig(samples=0))
    bad = poses.clone()
    bad[2, :3, :3] *= 2
    with pytest.raises(ValueError, match="poses is not a rigid transform at index"):
        solve_path(robot, bad, PathConfig(samples=0))
    with pytest.raises(ValueError, match="q_start must be one configuration within the joint limits: panda_joint1 = "):
        solve_path(robot, poses, PathConfig(samples=0), q_start=robot.upper + 1)
    for bad_cfg, message in [
        (PathConfig(max_jump=0), "max_jump must be positive"),
        (PathConfig(sweep_tracks=0), "sweep_tracks must be >= 1"),
        (PathConfig(continuation=False), "no source of candidates"),
        (PathConfig(samples=0, starts=0), "continuation needs start seeds"),
        (PathConfig(clock=0.0), "PathConfig.clock must be a function returning seconds"),  # type: ignore[arg-type]
    ]:
        with pytest.raises(ValueError, match=message):
            solve_path(robot, poses, bad_cfg)
    with pytest.raises(ValueError, match="PathConfig.samples must be >= 0"):
        GGIK(tiny_model()).solve_path(robot, poses, PathConfig(samples=-1))
    with pytest.raises(TypeError, match="config must be a ggik.PathConfig .* got str"):
        GGIK(tiny_model()).solve_path(robot, poses, "fast")  # type: ignore[arg-type]


def test_coherent_tracks_without_continuation():
    """The track sources alone (model tracks with one noise draw per track, constant random starts), batched LM."""
    robot = Robot.from_name("kr16_2")
    q_true = smooth_trajectory(robot, 30, seed=10)
    poses = robot.fk(q_true)
    cfg = PathConfig(continuation=False, random_tracks=16, track_samples=3, track_stride=7, max_rounds=1)
    res = solve_path(robot, poses, cfg, model=tiny_model(), generator=torch.Generator().manual_seed(2))
    check_result(res, robot, poses)
    assert res.candidates == 30 * 19 and res.timings["tracks"] > 0 and res.timings["sweeps"] == 0


# ---------------------------------------------------------------------------------------------- fixed in review
@pytest.mark.parametrize("with_start", [False, True])
def test_a_single_waypoint_is_a_path(with_start):
    """T = 1: the start candidates alone fill the pool (no sweep leaves the waypoint); no move, or only from q_start."""
    robot = Robot.from_name("panda")
    q_true = smooth_trajectory(robot, 2, seed=11)
    poses = robot.fk(q_true[:1])
    q_start = q_true[0] + 0.01 if with_start else None
    cfg = PathConfig(samples=0, clock=still)
    res = solve_path(robot, poses, cfg, q_start=q_start, generator=torch.Generator().manual_seed(0))
    check_result(res, robot, poses, q_start=q_start)
    assert res.valid and res.q.shape == (1, robot.dof) and res.steps.shape == (1 if with_start else 0, robot.dof)


@pytest.mark.parametrize("far", [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [0, 9]], ids=["all", "both ends"])
def test_unreachable_start_waypoints_are_named_not_a_crash(far):
    """No valid start candidate at either end: continuation starts from the nearest ones, and the result names the
    waypoints out of reach (it crashed on an empty candidate pool)."""
    robot = Robot.from_name("panda")
    poses = robot.fk(smooth_trajectory(robot, 10, seed=12)).clone()
    poses[far, 0, 3] += 5.0
    res = solve_path(
        robot, poses, PathConfig(samples=0, max_rounds=2, clock=still), generator=torch.Generator().manual_seed(0)
    )
    check_result(res, robot, poses)
    assert not res.valid and res.unreached == far


def test_bad_options_without_a_source_of_candidates():
    robot = Robot.from_name("panda")
    poses = robot.fk(smooth_trajectory(robot, 5, seed=1))
    with pytest.raises(ValueError, match="continuation needs start seeds"):
        solve_path(robot, poses, PathConfig(samples=8, starts=0))  # only model samples, and no model
    with pytest.raises(ValueError, match="track_samples needs a model"):
        solve_path(robot, poses, PathConfig(continuation=False, track_samples=2))
    for cfg, message in [
        (PathConfig(smooth_weight=-1.0), "smooth_weight must be >= 0"),
        (PathConfig(rot_weight=0.0), "rot_weight must be positive"),
    ]:
        with pytest.raises(ValueError, match=message):
            solve_path(robot, poses, cfg)


def test_search_and_check_reject_empty_or_mismatched_inputs():
    robot = Robot.from_name("panda")
    scale = joint_scale(robot, JUMP, 0.02)
    with pytest.raises(ValueError, match="with T, K >= 1"):
        search_path(torch.zeros(3, 0, robot.dof, dtype=F64), torch.zeros(3, 0, dtype=torch.bool), scale)
    q = smooth_trajectory(robot, 4, seed=2)
    with pytest.raises(ValueError, match=r"a trajectory \(T, 7\) and poses \(T, 4, 4\) are needed"):
        path_result(robot, robot.fk(q), q[:1], PathConfig())  # used to broadcast


def test_continuous_joint_crossing_pi_is_followed_unwrapped():
    """A continuous joint turning through +-pi: valid, every move small, the trajectory continuous (unwrapped)."""
    robot = Robot.from_urdf(HAND_URDFS["continuous"])
    q_true = smooth_trajectory(robot, 40, seed=13, span=0.0)
    q_true[:, 0] = torch.linspace(math.pi - 0.4, math.pi + 0.4, 40, dtype=F64)
    poses = robot.fk(q_true)
    res = solve_path(robot, poses, PathConfig(samples=0), generator=torch.Generator().manual_seed(0))
    check_result(res, robot, poses)
    assert res.valid and res.steps[:, 0].abs().max() < JUMP


def test_progress_is_called_once_per_round_with_the_rounds_state():
    """solve_path(progress=...): one call per round, rounds counting up, elapsed time rising (on a clock that reads a
    second later at every reading: every round reads it), the failing count of the round's trajectory, and valid on the
    last call of a path it solves."""
    robot = Robot.from_name("ur10")
    q = smooth_trajectory(robot, 12, seed=4)
    calls = []
    ticks = itertools.count()
    cfg = PathConfig(samples=0, time_limit=1e9, clock=lambda: float(next(ticks)))
    result = solve_path(robot, robot.fk(q), cfg, generator=torch.Generator().manual_seed(0), progress=
                        lambda *args: calls.append(args))  # fmt: skip
    assert result.valid and [c[0] for c in calls] == list(range(1, result.rounds + 1))
    assert calls[0][1] > 0 and all(b[1] > a[1] for a, b in itertools.pairwise(calls))
    assert calls[-1][1] < result.total_time and result.time_to_valid <= calls[-1][1]
    assert calls[-1][2:] == (0, True)
    unreachable = robot.fk(q)
    unreachable[:, 0, 3] += 5.0  # 5 m off: no round can reach a waypoint
    calls.clear()
    solve_path(robot, unreachable, replace(cfg, max_rounds=2), generator=torch.Generator().manual_seed(0),
               progress=lambda *args: calls.append(args))  # fmt: skip
    assert [c[0] for c in calls] == [1, 2] and all(c[2:] == (12, False) for c in calls)


@pytest.mark.parametrize("time_limit, rounds", [(10.0, 3), (12.0, 3), (12.5, 4)])
def test_no_round_starts_after_the_time_limit(time_limit, rounds):
    """Each round of a search that never succeeds takes 4 s of its clock (the progress callback moves it on): a round
    starts while less than ``time_limit`` has passed, none after; the result's total time is the clock's."""
    robot = Robot.from_name("ur10")
    poses = robot.fk(smooth_trajectory(robot, 6, seed=4))
    poses[:, 0, 3] += 5.0  # 5 m off: every round fails
    now = [100.0]  # any origin

    def four_seconds_a_round(done: int, elapsed: float, failing: int, valid: bool) -> None:
        assert elapsed == now[0] - 100.0 == 4.0 * (done - 1) and not valid
        now[0] += 4.0

    cfg = PathConfig(samples=0, starts=4, max_rounds=6, time_limit=time_limit, clock=lambda: now[0])
    res = solve_path(robot, poses, cfg, generator=torch.Generator().manual_seed(0), progress=four_seconds_a_round)
    assert res.rounds == rounds and res.total_time == 4.0 * rounds and math.isnan(res.time_to_valid)
    now[0] = 100.0  # max_rounds ends a search before its time limit
    two = solve_path(robot, poses, replace(cfg, max_rounds=2), generator=torch.Generator().manual_seed(0),
                     progress=four_seconds_a_round)  # fmt: skip
    assert two.rounds == 2
    assert solve_path(robot, poses, replace(cfg, clock=still)).rounds == 6  # a clock at rest: max_rounds ends it


def test_a_failing_path_says_where_no_configuration_exists_and_what_is_closest():
    """no_candidate: the waypoints where the search found no valid configuration in any round (an unreachable one
    here); closest_obstacle: the robot-obstacle pair nearest over the returned waypoints, by name."""
    from ggik.collision import CollisionModel, Scene, Sphere
    from ggik.collision.clearance import Clearance

    robot = Robot.from_name("ur10")
    q = smooth_trajectory(robot, 10, seed=4)
    poses = robot.fk(q)
    poses[6, 0, 3] += 5.0  # 5 m off: no configuration reaches it
    cfg = PathConfig(samples=0, max_rounds=2, clock=still)
    result = solve_path(robot, poses, cfg, generator=torch.Generator().manual_seed(0))
    assert not result.valid and result.no_candidate == [6] and 6 in result.unreached
    assert result.closest_obstacle is None  # no obstacles
    assert "no valid configuration found at waypoints: 6" in result.summary()
    far = Scene(spheres=(Sphere(0.05, (3.0, 3.0, 3.0)),))  # out of the way: the path stays valid
    check = Clearance(robot, CollisionModel.from_robot(robot), far)
    gen = torch.Generator().manual_seed(0)
    ok = solve_path(robot, robot.fk(q), replace(cfg, max_rounds=6), generator=gen, clearance=check)
    assert ok.valid and ok.no_candidate == []
    assert ok.closest_obstacle is not None and " - spheres[0] at waypoint " in ok.closest_obstacle
