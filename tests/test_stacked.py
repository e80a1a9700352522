"""ggik.graph.stacked and the stacked sampler of ggik.data: examples of many robots and goal kinds in one vectorised
pass equal the per-robot path (GraphBatch.from_graph) example by example, over random robots of 2-9 DOF, the shipped
robots and every goal kind; the sampler's draws (robot and kind frequencies, limits, determinism, device
independence of the data stream); the trainer on it; CUDA where present."""

from __future__ import annotations

from dataclasses import fields

import pytest
import torch

from ggik import GGIKError, Robot, RobotGraph, random_robot
from ggik.data import DataConfig, TrainingData
from ggik.graph.batch import GraphBatch
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.graph.stacked import StackedGraphs
from ggik.kinematics import geometry as geo
from ggik.rng import step_generator

NAMED = ["panda", "ur10", "kr16_2", "puma560"]


def mixed_graphs(seed: int) -> list[RobotGraph]:
    g = torch.Generator().manual_seed(seed)
    randoms = [RobotGraph.from_robot(random_robot(dof, g)) for dof in (2, 3, 5, 6, 7, 9)]
    return randoms + [RobotGraph.from_robot(Robot.from_name(n)) for n in NAMED]


def draw(stack: StackedGraphs, B: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    robot = torch.randint(len(stack), (B,), generator=g)
    kind = torch.randint(len(GOAL_KINDS), (B,), generator=g)
    kind = torch.where(stack.partial_ok[robot], kind, 0)
    q = stack.sample_q(robot, torch.rand(B, stack.n_max, generator=g, dtype=torch.float64))
    return robot, q, kind


def assert_equal_to_per_robot(stack: StackedGraphs, batch: GraphBatch, robot, q, kind, tol: float = 1e-12) -> None:
    for b in range(batch.batch_size):
        graph = stack.graphs[int(robot[b])]
        n, N = graph.n, graph.num_nodes
        ref = GraphBatch.from_graph(graph, q=q[b : b + 1, :n], kind=GOAL_KINDS[int(kind[b])])
        for f in fields(GraphBatch):
            got, want = getattr(batch, f.name)[b : b + 1], getattr(ref, f.name)
            if f.name == "q":
                assert not got[:, n:].any()
                got = got[:, :n]
            elif f.name in ("known_distances", "known_mask"):
                assert not got[:, N:].any() and not got[:, :, N:].any(), f.name  # padding is 0 / False
                got = got[:, :N, :N]
            elif f.name not in ("goal", "T_goal", "num_joints"):
                assert not got[:, N:].any(), f.name
                got = got[:, :N]
            if got.is_floating_point():
                assert torch.allclose(got, want, rtol=0.0, atol=tol), (f.name, b, (got - want).abs().max())
            else:
                assert torch.equal(got, want), (f.name, b)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_examples_equal_the_per_robot_path_for_random_and_shipped_robots_and_every_kind(seed):
    stack = StackedGraphs(mixed_graphs(seed))
    robot, q, kind = draw(stack, 96, seed + 10)
    assert set(kind.tolist()) == {0, 1, 2}
    batch = stack.examples(robot, q, kind)
    assert batch.num_nodes == 2 * 9 + 4 and batch.pos.dtype == torch.float64
    assert_equal_to_per_robot(stack, batch, robot, q, kind)


def test_values_beyond_a_robots_dof_are_ignored():
    stack = StackedGraphs(mixed_graphs(3))
    robot, q, kind = draw(stack, 32, 4)
    noisy = q + (~stack.joint_mask[robot]) * 5.0  # garbage in the padded joints
    a, b = stack.examples(robot, q, kind), stack.examples(robot, noisy, kind)
    for f in fields(GraphBatch):
        assert torch.equal(getattr(a, f.name), getattr(b, f.name)), f.name


def test_solution_points_satisfy_the_known_distances():
    stack = StackedGraphs(mixed_graphs(5))
    robot, q, kind = draw(stack, 64, 6)
    batch = stack.examples(robot, q, kind)
    D = RobotGraph.distances(batch.pos)
    err = torch.where(batch.known_mask, D - batch.known_distances, torch.zeros_like(D)).abs().max()
    assert err < 1e-12
    anchors = torch.where(batch.anchor_mask[..., None], batch.pos - batch.known_positions, torch.zeros_like(D[..., :3]))
    assert anchors.abs().max() < 1e-12


def test_bad_inputs_are_refused():
    stack = StackedGraphs(mixed_graphs(0))
    robot, q, kind = draw(stack, 4, 0)
    with pytest.raises(GGIKError, match="q \\(B, 9\\)"):
        stack.examples(robot, q[:, :5], kind)
    with pytest.raises(GGIKError, match="at least one"):
        StackedGraphs([])
    stack.partial_ok[0] = False  # as for an EE link off the last joint axis
    with pytest.raises(GGIKError, match="off the last joint axis"):
        stack.check_kinds(torch.tensor([0, 1]), torch.tensor([2, 2]))
    stack.check_kinds(torch.tensor([0, 1]), torch.tensor([0, 2]))  # a pose for it is fine


# ---------------------------------------------------------------------------------------------- the sampler
def stacked_data(**changes) -> TrainingData:
    cfg = dict(robots={"panda": 1.0, "ur10": 3.0, "kr16_2": 0.0}, batch_size=4000, seed=2, sampler="stacked")
    return TrainingData(DataConfig(**{**cfg, **changes}))


def test_auto_sampler_is_stacked_for_named_robots_and_per_robot_with_random_ones():
    assert TrainingData(DataConfig()).sampler == "stacked"
    assert TrainingData(DataConfig(random_weight=1.0)).sampler == "per-robot"
    assert TrainingData(DataConfig(sampler="per-robot")).sampler == "per-robot"
    assert TrainingData(DataConfig(sampler="stacked", randomized_weight=0.5)).sampler == "stacked"
    with pytest.raises(GGIKError, match="random_robots_per_batch and data.random_refresh must be >= 1"):
        TrainingData(DataConfig(sampler="stacked", random_weight=0.5, random_robots_per_batch=0))
    with pytest.raises(GGIKError, match="random_robots_per_batch and data.random_refresh must be >= 1"):
        TrainingData(DataConfig(sampler="stacked", random_weight=0.5, random_refresh=0))
    with pytest.raises(GGIKError, match="random_refresh 4 needs data.sampler 'stacked'"):
        TrainingData(DataConfig(random_weight=0.5, random_refresh=4))
    with pytest.raises(GGIKError, match="data.sampler must be one of"):
        TrainingData(DataConfig(sampler="fast"))


def test_stacked_batches_follow_the_weights_and_limits_and_are_pure_functions_of_seed_step_rank():
    data = stacked_data()
    robot, q, kind, offset = data.stacked_draws(5, rank=1)
    assert offset is None
    again = stacked_data().stacked_draws(5, rank=1)
    assert all(torch.equal(x, y) for x, y in zip((robot, q, kind), again))
    assert not torch.equal(q, stacked_data().stacked_draws(5, rank=0)[1])
    stack = data.stack()
    names = [g.robot.name for g in stack.graphs]
    share = torch.bincount(robot, minlength=3).double() / robot.shape[0]
    assert abs(float(share[names.index("panda")]) - 0.25) < 0.03 and share[names.index("kr16_2")] == 0  # 1 : 3 : 0
    kinds = torch.bincount(kind, minlength=3).double() / kind.shape[0]
    for k, w in DataConfig().goal_kinds.items():
        assert abs(float(kinds[GOAL_KINDS.index(k)]) - w) < 0.03, k
    for r, graph in enumerate(stack.graphs):
        rows = robot == r
        if rows.any():
            qr = q[rows]
            assert ((qr[:, : graph.n] >= graph.robot.lower) & (qr[:, : graph.n] <= graph.robot.upper)).all()
            assert not qr[:, graph.n :].any()


def test_a_robot_off_its_last_axis_gets_pose_goals_only():
    data = stacked_data(robots={"panda": 1.0, "ur10": 1.0}, batch_size=200)
    stack = data.stack()
    stack.partial_ok[0] = False  # as for an EE link off the last joint axis
    robot, _, kind, _ = data.stacked_draws(1)
    assert (kind[robot == 0] == 0).all() and (kind[robot == 1] != 0).any()


def test_stacked_batches_match_the_per_robot_path():
    data = stacked_data(batch_size=48, robots={"panda": 1.0, "ur10": 1.0, "puma560": 1.0})
    batch = data.examples(3)
    robot, q, kind, _ = data.stacked_draws(3)
    assert torch.equal(batch.q, torch.where(data.stack().joint_mask[robot], q, 0.0))
    assert_equal_to_per_robot(data.stack(), batch, robot, q, kind)


@pytest.mark.parametrize("convention", ["frames", "canonical"])
def test_stacked_batches_with_random_robots_hold_the_steps_random_robots_by_their_weights(convention):
    cfg = dict(robots={"panda": 1.0, "ur10": 1.0}, random_weight=1.0, randomized_weight=2.0, random_robots_per_batch=3)

    def data(**changes) -> TrainingData:
        base = dict(batch_size=3000, seed=2, sampler="stacked", tool_offset=0.05)
        return TrainingData(DataConfig(**{**cfg, **base, **changes}), convention)

    big = data()
    robot, q, kind, offset = big.stacked_draws(5)
    stack = big.stack("cpu", 5)
    robots = len(stack) // 2 if convention == "canonical" else len(stack)
    assert robots == 2 + 3 + 3 and [g.robot.name for g in stack.graphs[:2]] == ["panda", "ur10"]
    extra, weights = big.random_graphs(5)
    assert [g.robot.to_urdf() for g in stack.graphs[2:robots]] == [g.robot.to_urdf() for g in extra]
    assert {g.robot.name for g in extra[3:]} <= {"panda~0.2", "ur10~0.2"} and weights == [1 / 3] * 3 + [2 / 3] * 3
    row = robot % robots  # each example's robot, whichever of its graphs poses its goal kind
    share = torch.bincount(row, minlength=robots).double() / row.shape[0]
    want = torch.tensor([1, 1] + weights, dtype=torch.float64) / 5
    assert (share - want).abs().max() < 0.03
    assert bool((robot >= robots).any()) == (convention == "canonical")
    if convention == "canonical":  # robot r's graph for position goals sits at R' + r, and only those are drawn there
        assert all(stack.graphs[robots + r] is stack.graphs[r].for_goal_kind("position") for r in range(robots))
        assert (kind[robot >= robots] == GOAL_KINDS.index("position")).all()
    # a pure function of (seed, step, rank); other robots at another step or rank
    again = data()
    assert all(torch.equal(x, y) for x, y in zip((robot, q, kind, offset), again.stacked_draws(5)))
    assert stack.graphs[2].robot.to_urdf() == again.stack("cpu", 5).graphs[2].robot.to_urdf()
    assert stack.graphs[2].robot.to_urdf() != big.stack("cpu", 6).graphs[2].robot.to_urdf()
    assert stack.graphs[2].robot.to_urdf() != big.stack("cpu", 5, rank=1).graphs[2].robot.to_urdf()
    shared = data(random_refresh=4)  # steps 4-7 share their robots, and draw their own examples of them
    # keyed by a block's first step: a run that changes random_refresh meets no robots it has seen again
    assert [g.robot.to_urdf() for g in shared.random_graphs(4)[0]] == [
        g.robot.to_urdf() for g in big.random_graphs(4)[0]
    ]
    urdfs = [[g.robot.to_urdf() for g in shared.stack("cpu", s).graphs] for s in (3, 4, 7, 8)]
    assert urdfs[0] != urdfs[1] == urdfs[2] != urdfs[3] and not torch.equal(
        shared.stacked_draws(4)[1], shared.stacked_draws(7)[1]
    )
    small = data(batch_size=40, tool_offset=0.0)  # each example that of its own robot's graph
    r2, q2, k2, _ = small.stacked_draws(2)
    assert_equal_to_per_robot(small.stack("cpu", 2), small.examples(2), r2, q2, k2, tol=1e-10)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("random", [0.0, 1.0])
@pytest.mark.parametrize("convention", ["frames", "canonical"])
def test_stacked_batches_on_cuda_equal_the_cpu_ones(random, convention):
    cfg = dict(robots={"panda": 1.0, "ur10": 3.0, "kr16_2": 0.0}, batch_size=64, seed=2, sampler="stacked")
    cfg.update(random_weight=random, randomized_weight=random, tool_offset=0.1)
    data = TrainingData(DataConfig(**cfg), convention)
    cpu, gpu = data.examples(7), data.examples(7, device="cuda")
    for f in fields(GraphBatch):
        a, b = getattr(cpu, f.name), getattr(gpu, f.name).cpu()
        assert torch.allclose(a, b, atol=1e-12) if a.is_floating_point() else torch.equal(a, b), f.name


def test_tool_offsets_make_the_examples_of_the_robot_with_that_tool():
    stack = StackedGraphs(mixed_graphs(7))
    robot, q, kind = draw(stack, 40, 8)
    offset = 0.2 * torch.rand(40, generator=torch.Generator().manual_seed(9), dtype=torch.float64) - 0.1
    batch = stack.examples(robot, q, kind, offset)
    for b in range(0, 40, 3):
        graph = stack.graphs[int(robot[b])]
        tooled = RobotGraph.from_robot(graph.robot.with_tool(geo.translation(float(offset[b]) * graph.tool_axis)))
        single = StackedGraphs([tooled])
        want = single.examples(torch.zeros(1, dtype=torch.long), q[b : b + 1, : tooled.n], kind[b : b + 1])
        n, N = tooled.n, tooled.num_nodes
        for f in fields(GraphBatch):
            got, ref = getattr(batch, f.name)[b : b + 1], getattr(want, f.name)
            if f.name == "q":
                got = got[:, :n]
            elif f.name in ("known_distances", "known_mask"):
                got = got[:, :N, :N]
            elif f.name not in ("goal", "T_goal", "num_joints"):
                got = got[:, :N]
            if got.is_floating_point():
                assert torch.allclose(got, ref, rtol=0, atol=1e-12), (f.name, b)
            else:
                assert torch.equal(got, ref), (f.name, b)


def test_the_tool_offset_option_draws_within_its_range_and_needs_the_stacked_sampler():
    data = stacked_data(tool_offset=0.05, batch_size=500)
    robot, q, kind, offset = data.stacked_draws(2)
    assert offset is not None and offset.abs().max() <= 0.05 and offset.std() > 0.02
    plain = stacked_data(batch_size=500).stacked_draws(2)
    assert torch.equal(robot, plain[0]) and torch.equal(kind, plain[2])  # the other draws keep their columns
    data.examples(2)
    with pytest.raises(GGIKError, match="tool_offset must be"):
        stacked_data(tool_offset=-0.1)
    with pytest.raises(GGIKError, match="needs the stacked sampler"):
        stacked_data(tool_offset=0.05, sampler="per-robot")


# ---------------------------------------------------------------------------------------------- unlimited_fraction
@pytest.mark.parametrize("convention", ["frames", "canonical"])
def test_unlimited_fraction_adds_one_last_column_of_the_steps_stream_and_keeps_the_others(convention):
    """f = 0: the draws of runs made before the option, bit for bit (one row of 2 + n_max uniforms per example, then
    one for the tool offset); f > 0: the same robots, kinds and offsets, and the same joint values but in the examples
    that a last column of uniforms picks (below f), whose joints take the same uniforms mapped to [-pi, pi]."""
    B, f = 2000, 0.3

    def data(fraction: float) -> TrainingData:
        cfg = dict(robots={"panda": 1.0, "ur10": 3.0, "kr16_2": 0.0}, batch_size=B, seed=2, sampler="stacked")
        return TrainingData(DataConfig(**cfg, tool_offset=0.05, unlimited_fraction=fraction), convention)

    robot0, q0, kind0, offset0 = data(0.0).stacked_draws(3, rank=1)
    stack = data(0.0).stack()
    g = step_generator(2, 3, 1)
    u = torch.rand(B, 2 + stack.n_max, generator=g, dtype=torch.float64)[:, 2:]
    lo, hi = stack.lower[robot0], stack.upper[robot0]
    assert torch.equal(q0, lo + (hi - lo) * u)
    want = 0.05 * (2.0 * torch.rand(B, 1, generator=g, dtype=torch.float64)[:, 0] - 1.0)
    if convention == "canonical":  # only position goals keep theirs
        want = torch.where(kind0 == GOAL_KINDS.index("position"), want, torch.zeros_like(want))
    assert offset0 is not None and torch.equal(offset0, want)
    picked = torch.rand(B, 1, generator=g, dtype=torch.float64)[:, 0] < f
    robot, q, kind, offset = data(f).stacked_draws(3, rank=1)
    assert torch.equal(robot, robot0) and torch.equal(kind, kind0) and torch.equal(offset, offset0)
    assert torch.equal(q[~picked], q0[~picked])
    free = torch.where(stack.joint_mask[robot], -torch.pi + 2 * torch.pi * u, torch.zeros_like(u))
    assert torch.equal(q[picked], free[picked])
    assert abs(float(picked.double().mean()) - f) < 0.04


@pytest.mark.parametrize("convention", ["frames", "canonical"])
def test_stacked_examples_outside_the_limits_equal_the_per_robot_path(convention):
    cfg = dict(robots={"panda": 1.0, "ur10": 1.0, "puma560": 1.0}, batch_size=48, sampler="stacked")
    data = TrainingData(DataConfig(**cfg, unlimited_fraction=1.0), convention)
    robot, q, kind, _ = data.stacked_draws(3)
    assert q.abs().max() <= torch.pi
    assert_equal_to_per_robot(data.stack(), data.examples(3), robot, q, kind)
