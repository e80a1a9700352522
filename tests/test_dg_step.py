"""The projection's sparse Gauss-Newton step (ggik.ik.dg_step): the same step as the dense gauss_newton_step of the
model's decoder, the same cost as distance_cost and the limit hinges, eager and compiled alike."""

from __future__ import annotations

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.ik.dg_limits import goal_point, limit_rows, limit_terms
from ggik.ik.dg_refine import _edge_mask, distance_cost, volume_terms
from ggik.ik.dg_step import chunked_cost, chunked_step, sparse_step, step_cost, step_structure
from ggik.nn.distance_geometry import gauss_newton_step

F64 = torch.float64


def _problem(name: str, kind: str, B: int, seed: int):
    """B perturbed realizations of configurations far from B goals of ``kind`` (limits crossed), their problem's
    structure and per-sample data: (graph, x (B, N, 3), goal points (B, 1, 3), d2 (B, E), structure, dense args)."""
    robot = Robot.from_name(name)
    graph = RobotGraph.from_robot(robot, "canonical")
    g = torch.Generator().manual_seed(seed)
    q_goal = robot.sample_q(B, g)
    goals = graph.goals(robot.fk(q_goal), kind=kind)
    problem = graph.partial(goals)
    kg = graph.for_goal_kind(goals.kind)
    q = q_goal + 1.5 * torch.randn(q_goal.shape, generator=g, dtype=F64)
    x = graph.realize(q) + 0.02 * torch.randn(B, graph.num_nodes, 3, generator=g, dtype=F64)
    x[:, problem.anchor_mask] = problem.known_positions[:, problem.anchor_mask]
    terms, limits = volume_terms(kg, True), limit_terms(kg, goals.kind, 1e-6)
    st = step_structure(_edge_mask(problem), ~problem.anchor_mask, terms, limits)
    d2 = problem.known_distances[:, st.ends[:, 0], st.ends[:, 1]] ** 2
    w = goal_point(problem.goal)[:, None]
    return x, w, d2, st, (problem, terms, limits)


@pytest.mark.parametrize(
    "name,kind", [("panda", "pose"), ("lbr_iiwa", "pose"), ("panda", "position"), ("panda", "position+axis")]
)
@pytest.mark.parametrize("with_limits", [False, True])
def test_the_sparse_step_is_the_dense_step(name, kind, with_limits):
    """sparse_step against gauss_newton_step with the volumes and the limit hinges as ``extra`` rows, float64: the same
    damped normal equations, so the same step to rounding (Cholesky against LU of a system damped 1e-3)."""
    B = 6
    x, w, d2, st, (problem, terms, limits) = _problem(name, kind, B, 7)
    N = x.shape[1]
    movable = (~problem.anchor_mask).expand(B, N)
    extra = None
    if with_limits and limits is not None:
        r, J = limit_rows(torch.cat([x, w], 1), limits)
        assert bool((r > 0).any()), "no joint outside its limits"
        extra = (r, J[:, :, :N])
    vol = None if terms is None else (terms[0].expand(B, -1), terms[1].expand(B, -1))
    known = _edge_mask(problem).expand(B, N, N)
    dense = gauss_newton_step(x, problem.known_distances, known, movable, 1e-3, float("inf"), volumes=vol, extra=extra)
    sparse = sparse_step(x, w, d2, st, 1e-3, with_limits)
    scale = dense.abs().max()
    assert float(scale) > 1e-3
    torch.testing.assert_close(sparse, dense[:, st.cols], rtol=0, atol=1e-10 * float(scale))
    assert torch.equal(dense[:, problem.anchor_mask], torch.zeros_like(dense[:, problem.anchor_mask]))


def test_the_sparse_cost_is_the_dense_cost():
    """step_cost: 1/2 the squared edge residuals (distance_cost over the dense mask), the weighted volume residuals and
    the limit hinges, in chunks as in one piece."""
    x, w, d2, st, (problem, terms, limits) = _problem("panda", "pose", 150, 9)
    mask = _edge_mask(problem).to(F64)
    dense = distance_cost(x, problem.known_distances**2, mask, terms)
    dense = dense + 0.5 * (limit_rows(torch.cat([x, w], 1), limits)[0] ** 2).sum(-1)
    torch.testing.assert_close(step_cost(x, w, d2, st), dense, rtol=1e-12, atol=0)
    assert torch.equal(chunked_cost(x, w, d2, st), step_cost(x, w, d2, st))


def test_chunks_do_not_change_the_step():
    """chunked_step over 150 samples (chunks of 64) is sparse_step of each sample alone, to rounding."""
    x, w, d2, st, _ = _problem("kr16_2", "pose", 150, 11)
    whole = chunked_step(x, w, d2, st, 1e-3, True)
    for b in (0, 63, 64, 149):
        one = sparse_step(x[b : b + 1], w[b : b + 1], d2[b : b + 1], st, 1e-3, True)
        torch.testing.assert_close(whole[b : b + 1], one, rtol=1e-10, atol=1e-14)


@pytest.mark.slow
def test_the_compiled_step_and_cost_are_the_eager_ones():
    """torch.compile of the normal equations and the cost (padded chunks, limit rows on and off in one graph): the
    eager results to rounding, float64."""
    x, w, d2, st, _ = _problem("panda", "pose", 70, 13)
    for limits in (False, True):
        eager = chunked_step(x, w, d2, st, 1e-3, limits)
        compiled = chunked_step(x, w, d2, st, 1e-3, limits, compiled=True)
        torch.testing.assert_close(compiled, eager, rtol=1e-9, atol=1e-12 * float(eager.abs().max()))
    torch.testing.assert_close(chunked_cost(x, w, d2, st, True), chunked_cost(x, w, d2, st), rtol=1e-9, atol=0)
