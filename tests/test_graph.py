"""RobotGraph: the GGIK point set, partial/complete graphs, MDS, joint-angle recovery, PyG export.

Properties are checked on every shipped robot, >= 50 random robots (3..10 DOF) and the hand-written
chains the graph accepts (``graph_case``), at configurations sampled within the joint limits (the
last joint included), in float64.
"""

from __future__ import annotations

import math

import pytest
import torch
from conftest import HAND_URDFS

from ggik import Robot, RobotGraph
from ggik.graph.robot_graph import classical_mds
from ggik.kinematics import geometry as geo

F64 = torch.float64
BATCH = 32


def solved(robot: Robot, graph: RobotGraph, gen: torch.Generator, n: int = BATCH):
    """q within the limits, its point set and its EE pose."""
    q = robot.sample_q(n, gen)
    return q, graph.realize(q), robot.fk(q)


def assert_same_pose(T: torch.Tensor, T_ref: torch.Tensor, tol: float = 1e-9) -> None:
    pos, rot = geo.pose_errors(T, T_ref)
    assert pos.max() < tol and rot.max() < tol, (pos.max().item(), rot.max().item())


# ---------------------------------------------------------------------------------------------- (1) known distances
def test_known_distances_are_those_of_the_complete_graph(graph_case, rng):
    robot, graph = graph_case
    q, P, T = solved(robot, graph, rng)
    D = graph.distances(P)
    problem = graph.partial(T)
    known = graph.known_mask
    torch.testing.assert_close(problem.known_distances[:, known], D[:, known], rtol=0, atol=1e-9)
    assert (problem.known_distances[:, ~known] == 0).all()
    torch.testing.assert_close(problem.known_distances, problem.known_distances.transpose(-1, -2), rtol=0, atol=0)


def test_constant_known_distances_do_not_depend_on_q(graph_case, rng):
    robot, graph = graph_case
    _, P, T = solved(robot, graph, rng)
    home = graph.distances(graph.realize(torch.zeros(robot.dof, dtype=F64)))
    pairs = torch.tensor([ab for ab, kind in graph.edge_kind.items() if kind != "anchor_goal"]).T
    constant = torch.zeros_like(graph.known_mask)
    constant[pairs[0], pairs[1]] = True
    constant |= constant.T.clone()
    D = graph.distances(P)
    torch.testing.assert_close(D[:, constant], home[constant].expand(BATCH, -1), rtol=0, atol=1e-9)
    torch.testing.assert_close(
        graph.partial(T).known_distances[:, constant], home[constant].expand(BATCH, -1), rtol=0, atol=1e-9
    )
    # The goal-dependent (anchor-goal) distances do change with q (the test above is not vacuous).
    goal = graph.known_mask & ~constant
    assert (D[:, goal].std(0) > 1e-6).any()


def test_structure_edges_are_the_frame_rigid_bodies(graph_case):
    """p_i-q_i has length L = 1 and consecutive frames' points keep their distance (rigid links)."""
    _, graph = graph_case
    home = graph.realize(torch.zeros(graph.n, dtype=F64))
    idx = {name: k for k, name in enumerate(graph.node_names)}
    for i in range(graph.n + 1):
        assert (home[idx[f"q{i}"]] - home[idx[f"p{i}"]]).norm().sub(1.0).abs() < 1e-14
    kinds = graph.edge_kind
    for i in range(1, graph.n + 1):
        for u in (f"p{i - 1}", f"q{i - 1}"):
            for v in (f"p{i}", f"q{i}"):
                a, b = sorted((idx[u], idx[v]))
                assert (a, b) in kinds


# ---------------------------------------------------------------------------------------------- (2) round trip
def test_joint_angles_round_trip(graph_case, rng):
    robot, graph = graph_case
    q, P, T = solved(robot, graph, rng)
    q_back = graph.joint_angles(P, T)
    assert q_back.shape == q.shape and q_back.dtype == F64
    assert_same_pose(robot.fk(q_back), T)
    # Generic configurations have a unique point set: the angles themselves come back (mod 2 pi).
    d = torch.remainder(q_back - q + math.pi, 2 * math.pi) - math.pi
    assert d.abs().max() < 1e-9


def test_joint_angles_batched_and_broadcast(graph_case, rng):
    robot, graph = graph_case
    q, P, T = solved(robot, graph, rng, n=12)
    q_back = graph.joint_angles(P.reshape(3, 4, -1, 3), T.reshape(3, 4, 4, 4))
    assert q_back.shape == (3, 4, robot.dof)
    torch.testing.assert_close(q_back.reshape(12, -1), graph.joint_angles(P, T), rtol=0, atol=1e-12)
    # A rigid motion of the whole point set (the model's output frame is arbitrary) changes nothing.
    R = geo.quat_to_matrix(torch.randn(4, generator=rng, dtype=F64))
    moved = P @ R.T + torch.tensor([0.3, -2.0, 1.0], dtype=F64)
    assert_same_pose(robot.fk(graph.joint_angles(moved, T)), T)


# ---------------------------------------------------------------------------------------------- (3) MDS
def test_classical_mds_recovers_the_point_set(graph_case, rng):
    robot, graph = graph_case
    _, P, _ = solved(robot, graph, rng, n=8)
    X = classical_mds(graph.distances(P))
    assert X.shape == P.shape
    best = torch.full((8,), float("inf"), dtype=F64)
    for mirror in (1.0, -1.0):
        Y = X * torch.tensor([1.0, 1.0, mirror], dtype=F64)
        R, t = geo.kabsch(Y, P)
        err = (Y @ R.transpose(-1, -2) + t[:, None, :] - P).norm(dim=-1).amax(-1)
        best = torch.minimum(best, err)
    assert best.max() < 1e-6


def test_classical_mds_of_a_known_point_set(rng):
    P = torch.randn(5, 20, 3, generator=rng, dtype=F64)
    X = classical_mds(RobotGraph.distances(P))
    torch.testing.assert_close(RobotGraph.distances(X), RobotGraph.distances(P), rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------------------- (4) noise
def test_noisy_points_give_pose_errors_proportional_to_the_noise(graph_case, rng):
    """Angle recovery is Lipschitz in the points: noise of scale s on every coordinate moves the pose by at most
    20 s (m per m and rad per m; the suite's robots stay below 9 s), and to first order in s: the same noise direction
    at 1e-4 gives 100 times the errors at 1e-6 (within 10 %, per sample)."""
    robot, graph = graph_case
    _, P, T = solved(robot, graph, rng)
    direction = torch.randn(P.shape, generator=rng, dtype=F64)
    errors = {}
    for scale in (1e-3, 1e-4, 1e-6):
        q = graph.joint_angles(P + scale * direction, T)
        assert torch.isfinite(q).all()
        pos, rot = geo.pose_errors(robot.fk(q), T)
        assert pos.max() < 20 * scale and rot.max() < 20 * scale, (scale, pos.max().item(), rot.max().item())
        errors[scale] = pos, rot
    for big, small in zip(errors[1e-4], errors[1e-6]):
        torch.testing.assert_close(big, 100 * small, rtol=0.1, atol=1e-12)


# ---------------------------------------------------------------------------------------------- (5) frames
def test_graph_frames_give_the_fk_pose(graph_case, rng):
    robot, graph = graph_case
    q = robot.sample_q(BATCH, rng)
    F = graph.frames(q)
    assert F.shape == (BATCH, graph.n + 1, 4, 4)
    torch.testing.assert_close(F[:, 0], torch.eye(4, dtype=F64).expand(BATCH, 4, 4), rtol=0, atol=0)
    geo.check_pose(F, tol=1e-12)
    torch.testing.assert_close(graph.ee_pose(F), robot.fk(q), rtol=0, atol=1e-12)
    # The point set is made of the frames: p_i = origin, q_i = origin + z.
    P = graph.realize(q)
    torch.testing.assert_close(
        P[:, [0, 3]], torch.stack([F[:, 0, :3, 3], F[:, 0, :3, 3] + F[:, 0, :3, 2]], 1), rtol=0, atol=0
    )
    torch.testing.assert_close(P[:, 4::2], F[:, 1:, :3, 3], rtol=0, atol=0)
    torch.testing.assert_close(P[:, 5::2], F[:, 1:, :3, 3] + F[:, 1:, :3, 2], rtol=0, atol=1e-15)


def test_graph_frame_z_axes_are_the_joint_axes(graph_case, rng):
    """z of F_{i-1} (in the base frame) is joint i's axis, and F_{i-1}'s origin lies on it (Jacobian check)."""
    robot, graph = graph_case
    q = robot.sample_q(16, rng)
    F = graph.T_base_graph @ graph.frames(q)  # (B, n + 1, 4, 4) in the base link frame
    J = robot.jacobian(q)
    z = F[:, :-1, :3, 2].transpose(-1, -2)  # (B, 3, n)
    torch.testing.assert_close(J[:, 3:], z, rtol=0, atol=1e-12)
    p_ee = robot.fk(q)[:, :3, 3]
    lever = p_ee[:, :, None] - F[:, :-1, :3, 3].transpose(-1, -2)
    torch.testing.assert_close(J[:, :3], torch.linalg.cross(z, lever, dim=1), rtol=0, atol=1e-12)
    # The last joint turns about the last graph axis and moves neither p_n nor q_n.
    assert graph.T_tool.shape == (4, 4)
    qq = q.clone()
    qq[:, -1] += 1.0
    P, P2 = graph.realize(q), graph.realize(qq)
    torch.testing.assert_close(P2[:, -2:], P[:, -2:], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- (6) structure
def test_node_layout_and_complete_edges(graph_case):
    _, graph = graph_case
    n, N = graph.n, 2 * graph.n + 4
    assert graph.num_nodes == N
    assert graph.node_names == ("p0", "x", "y", "q0") + tuple(f"{c}{i}" for i in range(1, n + 1) for c in "pq")
    anchors = [graph.node_names[k] for k in range(N) if graph.anchor_mask[k]]
    assert anchors == ["p0", "x", "y", "q0", f"p{n}", f"q{n}"]
    assert graph.node_type.tolist() == [0, 0, 0, 0] + [1] * (2 * n - 2) + [2, 2]
    ei = graph.edge_index
    assert ei.shape == (2, N * (N - 1))
    expected = torch.tensor([(i, j) for i in range(N) for j in range(N) if i != j]).T
    assert torch.equal(ei, expected)
    home = graph.realize(torch.zeros(n, dtype=F64))
    torch.testing.assert_close(
        home[:4], torch.tensor([[0.0, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 1]], dtype=F64), rtol=0, atol=0
    )


def test_known_edge_bookkeeping(graph_case):
    _, graph = graph_case
    n, known = graph.n, graph.known_mask
    assert torch.equal(known, known.T) and not known.diagonal().any()
    kinds = list(graph.edge_kind.values())
    assert int(known.sum()) == 2 * len(kinds)
    assert all(known[a, b] and a < b for a, b in graph.edge_kind)
    assert kinds.count("base") + kinds.count("structure") == 5 * n + 6
    assert kinds.count("anchor_goal") == 8
    # Known "bounded" edges join points two frames apart (x, y count as frame -1).
    frame = graph.node_frame.clone()
    frame[1:3] = -1
    for (a, b), kind in graph.edge_kind.items():
        if kind == "bounded":
            assert abs(int(frame[a]) - int(frame[b])) == 2
    d = graph.to_dict()
    assert d["num_nodes"] == graph.num_nodes and len(d["known_edges"]) == len(kinds)
    assert sum(d["counts"].values()) == len(kinds)


@pytest.mark.parametrize(
    "name, count", [("ur10", 54), ("panda", 63), ("lbr_iiwa", 61), ("schunk_lwa4d", 67)], ids=lambda v: str(v)
)
def test_known_edge_counts_of_ggik_spec(name, count):
    """Undirected known pairs of the partial graph, as listed in ggik_spec.md section 1.6 (URDF robots)."""
    graph = RobotGraph.from_robot(Robot.from_name(name))
    assert len(graph.edge_kind) == count
    assert int(graph.known_mask.sum()) == 2 * count


def test_known_edge_counts_of_the_dh_robots(dh_tables):
    """ggik_spec.md section 1.6: UR10 54, KUKA-DH 67, LWA4D 67, LWA4P-DH 57 known pairs."""
    expected = {"UR10": 54, "KUKA iiwa": 67, "Schunk LWA4D": 67, "Schunk LWA4P": 57}
    for name, (a, d, alpha) in dh_tables.items():
        assert len(RobotGraph.from_robot(Robot.from_dh(a, d, alpha)).edge_kind) == expected[name], name


# ---------------------------------------------------------------------------------------------- (7) PyG
def test_pyg_batch_of_robots_with_different_dof(rng):
    from conftest import build_graph, build_robot
    from torch_geometric.data import Batch

    cases = ["ur10", "panda", "rand3-s0", "rand10-s1", "tool_frame", "ur10"]
    graphs = [build_graph(c) for c in cases]
    qs = [build_robot(c).sample_q(1, rng)[0] for c in cases]
    data = [g.to_pyg(q=q) for g, q in zip(graphs, qs)]
    batch = Batch.from_data_list(data)
    sizes = [g.num_nodes for g in graphs]
    offsets = torch.tensor([0] + sizes[:-1]).cumsum(0)
    expected = torch.cat([g.edge_index + o for g, o in zip(graphs, offsets)], dim=1)
    assert torch.equal(batch.edge_index, expected)
    assert batch.num_nodes == sum(sizes) and batch.num_graphs == len(cases)
    assert batch.num_joints.tolist() == [g.n for g in graphs]
    assert batch.goal.shape == (len(cases), 4, 4) and batch.T_goal.shape == (len(cases), 4, 4)
    assert torch.equal(batch.q, torch.cat(qs))
    for k, (g, q) in enumerate(zip(graphs, qs)):
        ex = batch.get_example(k)
        assert torch.equal(ex.edge_index, g.edge_index)
        torch.testing.assert_close(ex.T_goal[0], g.robot.fk(q), rtol=0, atol=1e-12)
        torch.testing.assert_close(ex.pos, g.realize(q), rtol=0, atol=1e-12)


def test_pyg_masks_and_partial_distances(graph_case, rng):
    robot, graph = graph_case
    q = robot.sample_q(1, rng)[0]
    data = graph.to_pyg(q=q)
    ei = data.edge_index
    N = graph.num_nodes
    assert data.num_nodes == N and ei.shape == (2, N * (N - 1))
    assert torch.equal(data.known_mask, graph.known_mask[ei[0], ei[1]])
    assert int(data.known_mask.sum()) == 2 * len(graph.edge_kind)
    mask = data.known_mask[:, None]
    torch.testing.assert_close(
        data.dist, (data.pos[ei[0]] - data.pos[ei[1]]).norm(dim=-1, keepdim=True), rtol=0, atol=0
    )
    torch.testing.assert_close(
        data.known_distances, torch.where(mask, data.dist, torch.zeros_like(data.dist)), rtol=0, atol=1e-9
    )
    anchors = data.anchor_mask[:, None]
    torch.testing.assert_close(
        data.known_positions, torch.where(anchors, data.pos, torch.zeros_like(data.pos)), rtol=0, atol=1e-9
    )
    # A problem-only example (T_goal) carries the same partial information and no solution.
    problem = graph.to_pyg(T_goal=robot.fk(q))
    assert "q" not in problem and "pos" not in problem and "dist" not in problem
    torch.testing.assert_close(problem.known_distances, data.known_distances, rtol=0, atol=1e-12)
    torch.testing.assert_close(problem.known_positions, data.known_positions, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- (8) limits
def test_joint_angles_respect_the_joint_limits(graph_case, rng):
    robot, graph = graph_case
    q, P, T = solved(robot, graph, rng)
    q_back = graph.joint_angles(P, T)
    lim = robot.limited
    assert (q_back[:, lim] >= robot.lower[lim] - 1e-9).all() and (q_back[:, lim] <= robot.upper[lim] + 1e-9).all()
    # With less than a full turn of range there is one equivalent inside the limits: q itself.
    single = lim & (robot.upper - robot.lower < 2 * math.pi)
    torch.testing.assert_close(q_back[:, single], q[:, single], rtol=0, atol=1e-9)
    assert_same_pose(robot.fk(q_back), T)


def test_ur10_full_turn_joints_come_back_inside_their_limits(rng):
    """UR10: +-2 pi on five joints. q anywhere in the range comes back inside it, 2 pi-equivalent, same pose."""
    robot = Robot.from_name("ur10")
    graph = RobotGraph.from_robot(robot)
    full, half = 6.28318530718, 3.14159265359
    assert robot.upper.tolist() == [full, full, half, full, full, full]
    assert robot.lower.tolist() == [-full, -full, -half, -full, -full, -full]
    q = robot.sample_q(500, rng)
    assert (q.abs() > math.pi).any()
    P, T = graph.realize(q), robot.fk(q)
    q_back = graph.joint_angles(P, T)
    assert (q_back >= robot.lower).all() and (q_back <= robot.upper).all()
    k = torch.round((q - q_back) / (2 * math.pi))
    torch.testing.assert_close(q_back + 2 * math.pi * k, q, rtol=0, atol=1e-9)
    assert_same_pose(robot.fk(q_back), T)


def test_wrap_to_limits():
    robot = Robot.from_urdf(HAND_URDFS["continuous"])  # j2 [-1.9, 1.9], j4 [-3.0, 0.5], j1 j3 j5 continuous
    graph = RobotGraph.from_robot(robot)
    pi = math.pi
    theta = torch.tensor(
        [
            [3.0, 1.0, -3.0, -2.0, 2.5],  # inside (j2, j4) / continuous kept
            [-3.1, 1.8, 3.1, 0.4, -3.1],
            [0.0, 2.5, 0.0, 3.5, 0.0],  # j2 2.5 has no equivalent in [-1.9, 1.9]: unchanged; j4 3.5 -> 3.5 - 2 pi
            [0.0, -1.0, 0.0, 0.9, 0.0],  # j4 0.9: nearest equivalent 0.9 - 2 pi is outside: unchanged
        ],
        dtype=F64,
    )
    out = graph.wrap_to_limits(theta)
    expected = theta.clone()
    expected[2, 3] = 3.5 - 2 * pi
    torch.testing.assert_close(out, expected, rtol=0, atol=1e-15)
    wide = RobotGraph.from_robot(Robot.from_name("irb140"))  # joint_6 +-6.9813: in-range angles are kept
    th = torch.tensor([[0.1, 0.2, -0.3, 3.0, -1.0, -3.1]], dtype=F64)
    torch.testing.assert_close(wide.wrap_to_limits(th), th, rtol=0, atol=0)
    panda = RobotGraph.from_robot(Robot.from_name("panda"))  # joint 6 in [-0.0175, 3.7525]
    th = torch.tensor([[0.0, 0.0, 0.0, -1.0, 0.0, -2.8, 0.0]], dtype=F64)
    out = panda.wrap_to_limits(th)
    torch.testing.assert_close(out[0, 5], torch.tensor(-2.8 + 2 * pi, dtype=F64), rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------- (9) tool frame
def test_tool_frame_rotated_and_offset_from_the_last_axis(rng):
    robot = Robot.from_urdf(HAND_URDFS["tool_frame"])
    graph = RobotGraph.from_robot(robot)
    # The EE origin is off the last axis and its z is not the last axis: T_tool is a general transform.
    T_tool = graph.T_tool
    assert (T_tool[:3, :3] - torch.eye(3, dtype=F64)).abs().max() > 0.1
    assert T_tool[:2, 3].norm() > 0.01
    # F_n lies on the last axis at the foot of the perpendicular from the EE origin: T_tool has no z offset.
    assert T_tool[2, 3].abs() < 1e-12
    q, P, T = solved(robot, graph, rng, n=200)
    assert_same_pose(robot.fk(graph.joint_angles(P, T)), T)
    problem = graph.partial(T)
    torch.testing.assert_close(problem.known_positions[:, -2:], P[:, -2:], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- (10) anchors
def test_partial_graph_anchors(graph_case, rng):
    robot, graph = graph_case
    q, P, T = solved(robot, graph, rng)
    problem = graph.partial(T)
    N = graph.num_nodes
    assert problem.known_positions.shape == (BATCH, N, 3) and problem.known_distances.shape == (BATCH, N, N)
    assert torch.equal(problem.anchor_mask, graph.anchor_mask) and torch.equal(problem.known_mask, graph.known_mask)
    base = torch.tensor([[0.0, 0, 0], [1, 0, 0], [0, -1, 0], [0, 0, 1]], dtype=F64)
    torch.testing.assert_close(problem.known_positions[:, :4], base.expand(BATCH, 4, 3), rtol=0, atol=0)
    torch.testing.assert_close(problem.known_positions[:, -2:], P[:, -2:], rtol=0, atol=1e-12)
    assert (problem.known_positions[:, ~graph.anchor_mask] == 0).all()
    # The goal is F_n in the graph frame, and it does not depend on the roll of the last joint.
    torch.testing.assert_close(problem.goal, graph.frames(q)[:, -1], rtol=0, atol=1e-12)
    torch.testing.assert_close(graph.T_base_graph @ problem.goal @ graph.T_tool, T, rtol=0, atol=1e-12)


def test_graph_is_expressed_in_the_first_joint_frame():
    """GGIK's base frame: the first joint's frame.

    robots.md: UR10 0.1273 m, iiwa 0.1575 m, Panda 0.333 m above world."""
    for name, z in [
        ("ur10", 0.1273),
        ("lbr_iiwa", 0.1575),
        ("panda", 0.333),
        ("schunk_lwa4d", 0.0),
        ("kuka_lwr", 0.11),
    ]:
        graph = RobotGraph.from_robot(Robot.from_name(name))
        expected = torch.eye(4, dtype=F64)
        expected[2, 3] = z
        torch.testing.assert_close(graph.T_base_graph, expected, rtol=0, atol=1e-12)


def test_each_goal_kind_has_its_graph_and_goals_are_mapped_once():
    """The graphs of one robot and convention that pose each kind are an explicit object (KindGraphs), chosen by kind:
    on canonical graphs position goals get the graph whose p_n is the tool point; Goals name the graph that mapped
    them, and any graph of the robot takes them as they are (no second mapping), while a graph of another convention
    maps them into its own frame."""
    from ggik.graph.goal_kinds import GOAL_KINDS

    robot = Robot.from_name("panda")
    canonical = RobotGraph.from_robot(robot, "canonical")
    position = canonical.for_goal_kind("position")
    assert position is not canonical and (position.ee_anchor, canonical.ee_anchor) == ("tool", "canonical")
    assert position.for_goal_kind("pose") is canonical and canonical.for_goal_kind("position+axis") is canonical
    assert canonical.kind_graphs is position.kind_graphs and canonical.for_goal_kind("position") is position
    frames = RobotGraph.from_robot(robot, "frames")
    assert all(frames.for_goal_kind(k) is frames for k in GOAL_KINDS)
    T = robot.fk(robot.sample_q(3, torch.Generator().manual_seed(0)))
    goals = canonical.goals(T[:, :3, 3], "position")
    assert goals.graph is position
    assert canonical.goals(goals) is goals and position.goals(goals) is goals and goals[1:].graph is position
    remapped = frames.goals(goals)
    assert remapped.graph is frames and torch.equal(remapped.in_graph, frames.goal_in_graph(goals.in_base))
    torch.testing.assert_close(canonical.partial(goals).known_distances, position.partial(goals).known_distances)
    points = position.realize(robot.sample_q(3, torch.Generator().manual_seed(1)))
    torch.testing.assert_close(canonical.joint_angles(points, goals), position.joint_angles(points, goals))
