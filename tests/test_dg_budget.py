"""The DG projection's budget stops when done (issue 62 item 2): samples below DGConfig.tol leave the batch."""

from __future__ import annotations

import torch

from ggik import Robot, RobotGraph
from ggik.ik import dg_refine as dg
from ggik.ik.dg_refine import DGConfig, project_point_sets

F64 = torch.float64


def test_done_samples_leave_the_batch_and_keep_their_points(monkeypatch):
    """A sample whose cost is below the tolerance takes no further step: the exact realizations of a batch never enter
    a Gauss-Newton solve, the batch shrinks as samples converge, and a sample done by step k has the same points
    (bitwise) after k + 10 steps."""
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot, "canonical")
    g = torch.Generator().manual_seed(4)
    P, S = 3, 6
    q = robot.sample_q(P, g)
    T = robot.fk(q)
    X = graph.realize(q)[:, None].repeat(1, S, 1, 1)
    X[:, 2:] += 0.01 * torch.randn(P, S - 2, graph.num_nodes, 3, generator=g, dtype=F64)  # two exact per goal
    sizes: list[int] = []
    step = dg.chunked_step

    def spy(x, *args, **kwargs):
        sizes.append(x.shape[0])
        return step(x, *args, **kwargs)

    monkeypatch.setattr(dg, "chunked_step", spy)
    short, cost = project_point_sets(graph, X, T, DGConfig(iterations=10))
    assert sizes[0] == P * (S - 2), "an exact sample entered the solve"
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0], sizes
    anchors = graph.anchor_mask
    assert torch.equal(short[:, :2, ~anchors], X[:, :2, ~anchors]), "an exact sample moved"
    done = cost < DGConfig().tol
    assert int(done[:, 2:].sum()) > 0, "no noisy sample converged in 10 steps"
    first = list(sizes)
    sizes.clear()
    longer, _ = project_point_sets(graph, X, T, DGConfig(iterations=20))
    assert torch.equal(longer[done], short[done]), "a sample done at step 10 changed after it"
    assert sizes[: len(first)] == first and all(n <= P * S - int(done.sum()) for n in sizes[len(first) :]), sizes
