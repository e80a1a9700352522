"""Distance-geometric refinement (refine="dg"): projection of point sets onto the known distances."""

from __future__ import annotations

import pytest
import torch

from ggik import GGIK, GGIKModel, ModelConfig, Robot, RobotGraph, SolveConfig, random_robot
from ggik.ik.dg_refine import DGConfig, dg_refine, distance_cost, project_point_sets
from ggik.ik.sampling import RawSamples
from ggik.kinematics.geometry import pose_errors

F64 = torch.float64


def robots():
    return [Robot.from_name("panda"), Robot.from_name("ur10")] + [random_robot(d, 40 + d) for d in (5, 7, 9)]


def problems(robot: Robot, P: int, seed: int):
    q = robot.sample_q(P, torch.Generator().manual_seed(seed))
    return q, robot.fk(q)


@pytest.mark.parametrize("robot", robots(), ids=lambda r: r.name)
def test_a_valid_point_set_is_a_fixed_point(robot):
    graph = RobotGraph.from_robot(robot)
    q, T = problems(robot, 4, 0)
    X = graph.realize(q)[:, None]  # (P, 1, N, 3)
    out, cost = project_point_sets(graph, X, T)
    assert cost.max() < 1e-24
    torch.testing.assert_close(out, X, rtol=0, atol=1e-12)


@pytest.mark.parametrize("robot", robots(), ids=lambda r: r.name)
def test_perturbed_point_sets_are_projected_onto_the_known_distances(robot):
    """1 cm of noise per node: every sample ends on the problem's known distances (to the stopping tolerance,
    ``DGConfig.tol`` = 1e-20 m^4: each known squared length within 1.4e-10 m^2, each edge of 5 cm or more within
    1e-9 m of its length), with the anchors exactly in place.

    The poses are not exact: where a link's tetrahedron (p_i-1, q_i-1, p_i, q_i) is flat (parallel or intersecting
    axes, as on the UR10 and most random chains), a distance changes only to second order when a point leaves the
    plane, so distance errors of 1e-10 m leave pose errors of up to ~sqrt(1e-10) = 1e-5 (the panda, without such links,
    reaches 1e-9). The claim on the pose is the order of magnitude: far inside the strict 1 mm / 0.01 rad."""
    graph = RobotGraph.from_robot(robot)
    q, T = problems(robot, 6, 1)
    g = torch.Generator().manual_seed(2)
    X = graph.realize(q)[:, None].expand(-1, 3, -1, -1) + 0.01 * torch.randn(
        6, 3, graph.num_nodes, 3, generator=g, dtype=F64
    )
    cfg = DGConfig(iterations=60)  # every sample stops at the tolerance long before (the loop ends there)
    out = dg_refine(graph, X, T, cfg)
    anchors = graph.anchor_mask
    problem = graph.partial(T)
    known = problem.known_positions
    torch.testing.assert_close(
        out.points[:, :, anchors], known[:, None, anchors].expand_as(out.points[:, :, anchors]), rtol=0, atol=1e-12
    )  # anchors are set, never moved
    assert out.cost.max() <= cfg.tol, f"a sample stopped above the tolerance: cost {out.cost.max().item():.3g} m^4"
    # The distances themselves, from the points (not through the cost): every known edge with a free end has its
    # squared length to sqrt(2 tol) = 1.4e-10 m^2, i.e. 1e-10 m on a 1 m edge (a short edge, where two nodes nearly
    # coincide, misses its length by more: the residual is in squared lengths).
    free = ~problem.anchor_mask
    edges = problem.known_mask & (free[:, None] | free[None, :])
    sq = (out.points[..., :, None, :] - out.points[..., None, :, :]).pow(2).sum(-1)  # (P, S, N, N) [m^2]
    miss = (sq - problem.known_distances[:, None] ** 2).abs()[..., edges]
    assert miss.max() <= (2 * cfg.tol) ** 0.5, f"a known squared distance missed by {miss.max().item():.3g} m^2"
    long = (problem.known_distances[:, None].expand_as(sq) > 0.05)[..., edges]  # edges of 5 cm and more
    miss_m = (sq.sqrt() - problem.known_distances[:, None]).abs()[..., edges][long]
    assert miss_m.max() < 1e-9, f"a known distance of 5 cm or more missed by {miss_m.max().item():.3g} m"
    pos, rot = pose_errors(robot.fk(out.q), T[:, None])
    assert pos.max() < 1e-4 and rot.max() < 1e-4, (pos.max().item(), rot.max().item())
    torch.testing.assert_close(out.pos_err, pos, rtol=0, atol=0)


def test_without_a_stopping_tolerance_the_panda_is_solved_exactly():
    """Where the distances pin the pose to first order (the panda: no flat link tetrahedra, see above), projecting to
    machine precision (``tol=0``) gives exact solutions: pose errors below 1e-9 from 1 cm of noise per node."""
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot)
    q, T = problems(robot, 6, 1)
    X = graph.realize(q)[:, None].expand(-1, 3, -1, -1) + 0.01 * torch.randn(
        6, 3, graph.num_nodes, 3, generator=torch.Generator().manual_seed(2), dtype=F64
    )
    out = dg_refine(graph, X, T, DGConfig(iterations=30, tol=0.0))
    pos, rot = pose_errors(robot.fk(out.q), T[:, None])
    assert pos.max() < 1e-9 and rot.max() < 1e-9, (pos.max().item(), rot.max().item())


def test_cost_is_half_the_sum_of_squared_residuals_over_edges():
    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    q, T = problems(graph.robot, 2, 3)
    X = graph.realize(q) + 0.05 * torch.randn(
        2, graph.num_nodes, 3, generator=torch.Generator().manual_seed(4), dtype=F64
    )
    D = graph.partial(T).known_distances
    free = ~graph.anchor_mask
    mask = graph.known_mask & (free[:, None] | free[None, :])
    expected = torch.zeros(2, dtype=F64)
    for i in range(graph.num_nodes):
        for j in range(i + 1, graph.num_nodes):
            if mask[i, j]:
                expected += 0.5 * (((X[:, i] - X[:, j]) ** 2).sum(-1) - D[:, i, j] ** 2) ** 2
    torch.testing.assert_close(distance_cost(X, D**2, mask.to(F64)), expected, rtol=1e-12, atol=0)


def test_bad_shapes_are_clear_errors():
    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    _, T = problems(graph.robot, 2, 0)
    with pytest.raises(ValueError, match=r"points must have shape \(P, S, 18, 3\)"):
        project_point_sets(graph, torch.zeros(2, 18, 3, dtype=F64), T)
    with pytest.raises(ValueError, match="3 goals for 2 groups of samples"):
        project_point_sets(graph, torch.zeros(2, 4, 18, 3, dtype=F64), torch.cat([T, T[:1]]))
    with pytest.raises(ValueError, match="T_goal contains NaN"):
        project_point_sets(graph, torch.zeros(2, 4, 18, 3, dtype=F64), torch.full_like(T, float("nan")))


def test_solver_refine_dg_and_dg_lm(monkeypatch):
    """With samples standing in for a model (true point sets + 1 cm noise), "dg" solves every goal and "dg+lm"
    keeps them solved; an unknown method is refused."""
    import ggik.ik.strategies as strategies

    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot)
    q, T = problems(robot, 5, 5)

    def noisy_truth(model, graph_, goals, num_samples, generator=None, options=None):
        pts = graph.realize(q)[:, None].expand(-1, num_samples, -1, -1)
        pts = pts + 0.01 * torch.randn(pts.shape, generator=torch.Generator().manual_seed(6), dtype=F64)
        qs = graph.joint_angles(pts, T[:, None])
        pos, rot = pose_errors(robot.fk(qs), T[:, None])
        return RawSamples(q=qs, pos_err=pos, rot_err=rot, points=pts)

    monkeypatch.setattr(strategies, "sample_joint_angles", noisy_truth)
    cfg = ModelConfig(
        dim=8, hidden=16, enc_layers=1, dec_layers=1, latent=2, prior_components=2, residual_inputs=False, gn_steps=0
    )
    solver = GGIK(GGIKModel(cfg))
    raw = solver.solve(robot, T, SolveConfig(samples=4))
    for method in ("dg", "dg+lm"):
        res = solver.solve(robot, T, SolveConfig(samples=4, refine=method))
        assert res.success[:, 0].all(), method
        assert (res.pos_err[:, 0] < raw.pos_err[:, 0]).all()
    with pytest.raises(ValueError, match="refine must be one of"):
        solver.solve(robot, T, SolveConfig(samples=4, refine="gn"))


def test_a_position_goal_projects_onto_its_own_known_edges():
    """A position goal leaves q_n free and its base edges unknown: the projection must use the problem's edges."""
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot)
    q, T = problems(robot, 4, 5)
    goals = graph.goals(T[:, :3, 3], "position")
    g = torch.Generator().manual_seed(6)
    X = graph.realize(q)[:, None].expand(-1, 2, -1, -1) + 0.05 * torch.randn(
        4, 2, graph.num_nodes, 3, generator=g, dtype=F64
    )
    out = dg_refine(graph, X, goals, DGConfig(iterations=30))
    problem = graph.partial(goals)
    assert not problem.anchor_mask[-1], "q_n is free for a position goal"
    d = torch.linalg.vector_norm(out.points[..., :, None, :] - out.points[..., None, :, :], dim=-1)
    err = ((d - problem.known_distances[:, None]) * problem.known_mask).abs()
    assert err.max() < 1e-6, "every known edge of the problem, q_n's included, has its length"
    pos = torch.linalg.vector_norm(robot.fk(out.q)[..., :3, 3] - T[:, None, :3, 3], dim=-1)
    assert pos.max() < 1e-4
