"""The canonical graph (ggik.graph.conventions) is a function of the arm alone: a file that moves its joint frames
along their axes, turns their zero angles and their frames, mounts its base elsewhere or adds a tool poses the same
problem, exactly; the samples of a model are the same point sets and their angles meet the goal by the file's own
FK. Over random DH robots, the shipped arms and random reframings (ggik.kinematics.reframe)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from ggik import GGIK, Robot, RobotGraph, random_robot
from ggik.errors import ChainError, GGIKError, GraphError
from ggik.graph import Goals, GraphBatch
from ggik.graph.conventions import (
    EE_ANCHOR_OFFSET,
    GRAPH_CONVENTIONS,
    axis_lines,
    canonical_frames,
    canonical_points,
)
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.ik.sampling import SamplingOptions, sample_joint_angles
from ggik.kinematics import geometry as geo
from ggik.kinematics.reframe import Reframing, random_reframing, reframe
from ggik.nn.cvae import GGIKModel, ModelConfig

TOL = 1e-9
SHIPPED = ["panda", "ur10", "lbr_iiwa", "kr16_2", "schunk_lwa4p", "schunk_lwa4d", "kuka_lwr", "irb140", "puma560"]
CASES = [("shipped", n, s) for n in SHIPPED for s in (0, 1)] + [("random", d, s) for d in (5, 6, 7) for s in range(4)]


def case_robot(family: str, what, seed: int) -> Robot:
    return Robot.from_name(what) if family == "shipped" else random_robot(what, 100 * what + seed)


def reframed(robot: Robot, seed: int, **options) -> tuple[Robot, Reframing]:
    how = random_reframing(robot, torch.Generator().manual_seed(seed), **options)
    return reframe(robot, how), how


def axial_tool(robot: Robot, along: float, seed: int) -> np.ndarray:
    """A tool (4, 4) in the EE frame, turned at random and moved ``along`` [m] the last joint's axis."""
    g = torch.Generator().manual_seed(seed)
    axis = torch.randn(3, generator=g, dtype=torch.float64)
    turn = geo.axis_angle_to_matrix(axis / axis.norm(), torch.tensor(2.0, dtype=torch.float64))
    return geo.make_transform(turn, along * RobotGraph.from_robot(robot, "canonical").tool_axis).numpy()


def structure(graph: RobotGraph) -> dict[str, torch.Tensor]:
    """What a graph gives the model besides the goal: constant distances, known edges, roles, anchors, base points."""
    return {
        "D_const": graph.D_const,
        "known_mask": graph.known_mask,
        "constant_mask": graph.constant_mask,
        "anchor_mask": graph.anchor_mask,
        "node_type": graph.node_type,
        "node_kind": graph.node_kind,
        "node_frame": graph.node_frame,
        "base_points": graph.home[:4],
    }


def assert_same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor], tol: float = TOL) -> None:
    for key in a:
        if a[key].is_floating_point():
            assert (a[key] - b[key]).abs().max() <= tol, (key, (a[key] - b[key]).abs().max())
        else:
            assert torch.equal(a[key], b[key]), key


# ---------------------------------------------------------------------------------------------- the reframing itself
@pytest.mark.parametrize("family,what,seed", CASES[::3])
def test_a_reframed_file_is_the_same_arm_by_the_exact_map(family, what, seed):
    robot = case_robot(family, what, seed)
    other, how = reframed(robot, seed)
    q = robot.sample_q(64, torch.Generator().manual_seed(seed))
    torch.testing.assert_close(other.fk(how.q_new(q)), how.pose_new(robot.fk(q)), rtol=0, atol=1e-12)
    torch.testing.assert_close(other.lower, robot.lower - torch.as_tensor(how.turn), rtol=0, atol=1e-15)
    assert other.base_link == "mount" and other.ee_link == "tool" and other.dof == robot.dof
    assert not torch.equal(RobotGraph.from_robot(other).D_const, RobotGraph.from_robot(robot).D_const), (
        "the file's own graph changes: the reframing is not a no-op"
    )


def test_reframe_refuses_bad_shapes_and_prismatic_joints():
    robot = Robot.from_name("ur10")
    how = random_reframing(robot, 0)
    with pytest.raises(ValueError, match="slide"):
        reframe(robot, Reframing(how.slide[:3], how.turn, how.rotate, how.base, how.tool))
    with pytest.raises(ValueError, match="rotate\\[0\\] is not a rigid"):
        reframe(robot, Reframing(how.slide, how.turn, 2.0 * how.rotate, how.base, how.tool))
    urdf = """<robot name="p"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/>
        <limit lower="0" upper="1" effort="1" velocity="1"/></joint></robot>"""
    slider = Robot.from_urdf(urdf)
    with pytest.raises(ChainError, match="is a prismatic joint and cannot be reframed"):
        reframe(slider, random_reframing(slider, 0))


# ---------------------------------------------------------------------------------------------- invariance
@pytest.mark.parametrize("family,what,seed", CASES)
def test_the_canonical_graph_of_any_file_of_an_arm_is_the_same(family, what, seed):
    robot = case_robot(family, what, seed)
    other, how = reframed(robot, seed + 7)
    mine, theirs = RobotGraph.from_robot(robot, "canonical"), RobotGraph.from_robot(other, "canonical")
    assert_same(structure(mine), structure(theirs))
    # the graph frame is the same frame of the arm: in the new base link, the old one moved by the mounting
    base = torch.as_tensor(how.base)
    torch.testing.assert_close(theirs.T_base_graph, base @ mine.T_base_graph, rtol=0, atol=TOL)


@pytest.mark.parametrize("family,what,seed", CASES[::2])
@pytest.mark.parametrize("kind", ["pose", "position+axis"])
def test_the_canonical_problem_of_a_goal_is_the_same_in_any_file(family, what, seed, kind):
    """The partial graph (anchor positions, known distances) of the same arm pose, asked in either file."""
    robot = case_robot(family, what, seed)
    other, how = reframed(robot, seed + 3)
    if kind != "pose" or not RobotGraph.from_robot(robot, "canonical").supports_partial_goals:
        # a partial goal needs the tool point on the last axis: a tool turned and moved along that axis
        how = Reframing(how.slide, how.turn, how.rotate, how.base, axial_tool(robot, 0.15, seed))
        other = reframe(robot, how)
    q = robot.sample_q(16, torch.Generator().manual_seed(seed))
    a = RobotGraph.from_robot(robot, "canonical").partial(robot.fk(q), kind)
    b = RobotGraph.from_robot(other, "canonical").partial(other.fk(how.q_new(q)), kind)
    assert_same(
        {"pos": a.known_positions, "D": a.known_distances, "goal": a.goal[..., :3, 2:]},
        {"pos": b.known_positions, "D": b.known_distances, "goal": b.goal[..., :3, 2:]},
    )
    assert torch.equal(a.known_mask, b.known_mask) and torch.equal(a.anchor_mask, b.anchor_mask)


@pytest.mark.parametrize("name", ["panda", "ur10", "lbr_iiwa"])
def test_position_goals_keep_the_tool_point_in_the_structure(name):
    """A position goal fixes the tool point: a file that keeps it (frames moved and turned, tool frame turned about its
    origin) poses the same position problem; a tool moved along the last axis poses another one (its p_n moves)."""
    robot = Robot.from_name(name)
    how = random_reframing(robot, 5, tool=0.0)
    spin = np.eye(4)
    spin[:3, :3] = geo.axis_angle_to_matrix(torch.tensor([0.6, -0.0, 0.8]), torch.tensor(1.1)).numpy()
    how = Reframing(how.slide, how.turn, how.rotate, how.base, spin)
    other = reframe(robot, how)
    q = robot.sample_q(8, torch.Generator().manual_seed(1))
    mine, theirs = RobotGraph.from_robot(robot, "canonical"), RobotGraph.from_robot(other, "canonical")
    a, b = mine.partial(robot.fk(q), "position"), theirs.partial(other.fk(how.q_new(q)), "position")
    assert_same({"pos": a.known_positions, "D": a.known_distances}, {"pos": b.known_positions, "D": b.known_distances})
    assert_same(structure(mine.for_goal_kind("position")), structure(theirs.for_goal_kind("position")))
    longer = RobotGraph.from_robot(robot.with_tool(geo.translation(torch.tensor([0.0, 0.0, 0.05]))), "canonical")
    assert_same(structure(longer), structure(mine))  # pose problems: the same
    assert (longer.for_goal_kind("position").D_const - mine.for_goal_kind("position").D_const).abs().max() > 0.01


@pytest.mark.parametrize("family,what,seed", CASES[1::3])
def test_realize_and_joint_angles_round_trip_on_canonical_graphs(family, what, seed):
    robot = case_robot(family, what, seed)
    graph = RobotGraph.from_robot(robot, "canonical")
    q = robot.sample_q(32, torch.Generator().manual_seed(seed))
    T = robot.fk(q)
    torch.testing.assert_close(robot.fk(graph.joint_angles(graph.realize(q), T)), T, rtol=0, atol=1e-9)
    points, T_ee = graph.realize_with_pose(q)
    torch.testing.assert_close(T_ee, T, rtol=0, atol=1e-12)
    for kind in ("position+axis", "position"):
        g = graph.for_goal_kind(kind)
        got = robot.fk(graph.joint_angles(g.realize(q), graph.goals(T, kind)))
        torch.testing.assert_close(got[:, :3, 3], T[:, :3, 3], rtol=0, atol=1e-9)
        if kind == "position+axis":  # the tool axis too
            axis = graph.tool_axis
            torch.testing.assert_close(got[:, :3, :3] @ axis, T[:, :3, :3] @ axis, rtol=0, atol=1e-9)


@pytest.mark.parametrize("family,what,seed", CASES[::4])
def test_a_canonical_model_samples_the_same_points_in_every_file_and_its_angles_meet_the_files_own_fk(
    family, what, seed
):
    robot = case_robot(family, what, seed)
    other, how = reframed(robot, seed + 11)
    model = GGIKModel(ModelConfig(dim=16, hidden=16, enc_layers=1, dec_layers=2, gn_steps=1, graph="canonical"))
    model = model.double().eval()
    q = robot.sample_q(3, torch.Generator().manual_seed(seed))
    noise = {"u": torch.rand(3, 2 * robot.dof + 4, dtype=torch.float64)}
    noise["eps"] = torch.randn(3, 2 * robot.dof + 4, model.cfg.latent, dtype=torch.float64)
    raws = []
    for r, T in ((robot, robot.fk(q)), (other, other.fk(how.q_new(q)))):
        raws.append(sample_joint_angles(model, model.graph(r), T, 3, options=SamplingOptions(noise=noise, bf16=False)))
    mine, theirs = raws
    assert (mine.points - theirs.points).abs().max() <= TOL
    # the same arm poses: the angles differ by the zero turns (modulo 2 pi), the poses by the exact map
    diff = torch.remainder(theirs.q - how.q_new(mine.q) + math.pi, 2 * math.pi) - math.pi
    assert diff.abs().max() <= TOL
    torch.testing.assert_close(other.fk(theirs.q), how.pose_new(robot.fk(mine.q)), rtol=0, atol=TOL)
    # rotation errors are those of the same arm pose; position errors are of another tool point (the file's own)
    torch.testing.assert_close(theirs.rot_err, mine.rot_err, rtol=0, atol=1e-7)


# ---------------------------------------------------------------------------------------------- the rules
def test_canonical_points_follow_the_stated_rules():
    x, _, z = torch.eye(3, dtype=torch.float64).unbind(0)
    o = torch.tensor([[0.0, 0.0, 0.1], [0.0, 0.5, 0.7], [0.0, 0.9, 1.2], [0.3, 0.9, 2.0]], dtype=torch.float64)
    u = torch.stack([z, x, x, z])  # z, then x twice (parallel, distinct lines), then z
    c = canonical_points(o, u)
    want = [[0.0, 0.0, 0.7], [0.0, 0.5, 0.7], [0.3, 0.9, 1.2], [0.3, 0.9, 1.2]]
    # rule 1 (foot with the next axis), rule 2 (projection of the previous point), rule 1, the last axis (rule 2)
    torch.testing.assert_close(c, torch.tensor(want, dtype=torch.float64), rtol=0, atol=1e-15)
    backwards = canonical_points(o[1:], u[1:])  # begins with parallel axes: from the first point rule 1 places
    torch.testing.assert_close(backwards[0], torch.tensor([0.3, 0.5, 0.7], dtype=torch.float64), rtol=0, atol=1e-15)
    planar = canonical_points(
        torch.tensor([[0.0, 0.0, 0.3], [1.0, 0.0, 0.5], [2.0, 0.0, 0.9]]).double(), z.expand(3, 3)
    )
    torch.testing.assert_close(planar, torch.tensor([[0.0, 0, 0], [1, 0, 0], [2, 0, 0]]).double(), rtol=0, atol=0)


def test_the_ee_anchor_sits_at_the_stated_offset_and_the_base_frame_on_the_first_axis():
    robot = Robot.from_name("kr16_2")
    graph = RobotGraph.from_robot(robot, "canonical")
    o, u, _ = axis_lines(robot)
    points = graph.realize(torch.zeros(robot.dof, dtype=torch.float64))
    assert abs(float((points[-2] - points[-4]).norm()) - EE_ANCHOR_OFFSET) < 1e-12  # p_n - p_{n-1}
    F0 = graph.T_base_graph
    torch.testing.assert_close(F0[:3, 2], u[0], rtol=0, atol=1e-12)
    assert float(torch.linalg.cross(F0[:3, 3] - o[0], u[0]).norm()) < 1e-12  # origin on axis 1
    torch.testing.assert_close(geo.invert_transform(F0) @ F0, torch.eye(4, dtype=torch.float64), rtol=0, atol=1e-12)


def test_turning_joint_one_of_an_unlimited_arm_turns_the_base_frame():
    """Rule 4 needs joint 1's limits: a continuous joint 1 keeps the file's zero (stated, not invariant)."""
    urdf = Robot.from_name("ur10").to_urdf().replace('type="revolute"', 'type="continuous"', 1)
    robot = Robot.from_urdf(urdf)
    assert not bool(robot.limited[0])
    how = random_reframing(robot, 2)
    assert how.turn[0] == 0.0  # random_reframing leaves an unlimited joint's zero alone
    turned = Reframing(how.slide, how.turn + np.eye(robot.dof)[0], how.rotate, how.base, how.tool)
    a, b = RobotGraph.from_robot(robot, "canonical"), RobotGraph.from_robot(reframe(robot, turned), "canonical")
    assert torch.allclose(a.D_const, b.D_const, atol=TOL)  # distances: still the same
    R = geo.invert_transform(a.T_base_graph) @ turned_base(turned) @ b.T_base_graph
    assert abs(float(torch.atan2(R[1, 0], R[0, 0])) - 1.0) < 1e-9  # the base frame turned with joint 1's zero


def turned_base(how: Reframing) -> torch.Tensor:
    return geo.invert_transform(torch.as_tensor(how.base))


# ---------------------------------------------------------------------------------------------- conventions in use
def test_unknown_conventions_and_mismatched_graphs_get_clear_errors():
    robot = Robot.from_name("panda")
    with pytest.raises(GraphError, match="unknown graph convention 'dh'"):
        RobotGraph.from_robot(robot, "dh")
    with pytest.raises(ValueError, match="model.graph must be one of"):
        GGIKModel(ModelConfig(graph="dh"))
    model = GGIKModel(ModelConfig(dim=16, hidden=16, enc_layers=1, dec_layers=2, gn_steps=1, graph="canonical"))
    assert model.graph(robot).convention == "canonical" and set(GRAPH_CONVENTIONS) == {"frames", "canonical"}
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(0)))
    with pytest.raises(GraphError, match="trained on 'canonical' graphs"):
        sample_joint_angles(model, RobotGraph.from_robot(robot), T, 2)
    result = GGIK(model).solve(robot, T)  # the solver builds the model's graph itself
    assert result.q.shape == (2, 32, 7)


def test_frames_graphs_are_as_before_and_say_their_convention():
    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    assert graph.convention == "frames" and graph.for_goal_kind("position") is graph
    assert graph.to_dict()["convention"] == "frames" and "frames" in repr(graph)
    canonical = RobotGraph.from_robot(Robot.from_name("panda"), "canonical")
    assert canonical.for_goal_kind("pose") is canonical and canonical.for_goal_kind("position") is not canonical
    assert canonical.for_goal_kind("position").for_goal_kind("position") is canonical.for_goal_kind("position")


def test_graph_batches_of_position_goals_use_the_graph_of_position_goals():
    robot = Robot.from_name("panda").with_tool(geo.translation(torch.tensor([0.0, 0.0, 0.1])))
    graph = RobotGraph.from_robot(robot, "canonical")
    q = robot.sample_q(4, torch.Generator().manual_seed(0))
    batch = GraphBatch.from_graph(graph, q=q, kind="position")
    want = graph.for_goal_kind("position").realize(q)
    assert torch.equal(batch.pos, want)
    torch.testing.assert_close(batch.known_positions[:, -2], want[:, -2], rtol=0, atol=1e-12)  # the tool point


# ---------------------------------------------------------------------------------------------- training
def test_stacked_canonical_batches_match_the_per_robot_path_and_position_goals_use_their_graphs():
    from ggik.data import DataConfig, TrainingData
    from tests.test_stacked import assert_equal_to_per_robot

    cfg = DataConfig(robots={"panda": 1.0, "ur10": 1.0, "puma560": 1.0}, batch_size=60, seed=3, sampler="stacked")
    data = TrainingData(cfg, convention="canonical")
    stack = data.stack()
    assert len(stack) == 6 and all(g.convention == "canonical" for g in stack.graphs)
    assert [g.ee_anchor for g in stack.graphs] == ["canonical"] * 3 + ["tool"] * 3
    robot, q, kind, _ = data.stacked_draws(4)
    position = kind == 2
    assert position.any() and (robot[position] >= 3).all() and (robot[~position] < 3).all()
    assert_equal_to_per_robot(stack, data.examples(4), robot, q, kind)
    for r, k in zip(robot.tolist(), kind.tolist()):  # each example on its own robot's graph of its kind
        own = data.graphs[list(data.graphs)[r % 3]]
        assert stack.graphs[r] is own.for_goal_kind(GOAL_KINDS[k])
    frames = TrainingData(cfg)  # the same draws on the file's graphs
    assert torch.equal(frames.stacked_draws(4)[1], q)


def test_tool_offsets_on_canonical_graphs_move_only_the_tool_point_of_position_goals():
    from ggik.data import DataConfig, TrainingData

    cfg = DataConfig(robots={"panda": 1.0, "ur10": 1.0}, batch_size=64, seed=1, sampler="stacked", tool_offset=0.1)
    data = TrainingData(cfg, convention="canonical")
    robot, q, kind, offset = data.stacked_draws(2)
    assert offset is not None and (offset[kind != 2] == 0).all() and (offset[kind == 2] != 0).any()
    plain = TrainingData(DataConfig(**{**cfg.__dict__, "tool_offset": 0.0}), convention="canonical")
    a, b = data.examples(2), plain.examples(2)
    pose = kind != 2
    torch.testing.assert_close(a.known_distances[pose], b.known_distances[pose], rtol=0, atol=1e-12)
    assert not torch.allclose(a.known_distances[~pose], b.known_distances[~pose])


def test_a_run_on_canonical_graphs_trains_validates_and_its_model_solves_in_any_file(tmp_path):
    from ggik.checkpoint import load_model
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer
    from ggik.typed_config import from_dict, load_yaml

    REPO = __import__("pathlib").Path(__file__).resolve().parents[1]
    data = load_yaml(str(REPO / "train/configs/tiny.yaml"))
    data["model"] = {**data.get("model", {}), "graph": "canonical"}
    data["val"] = {**data.get("val", {}), "every": 2}
    cfg = from_dict(TrainConfig, {**data, "steps": 2})
    Trainer(cfg, tmp_path / "run", progress=False).train()
    model, _ = load_model(tmp_path / "run" / "last.pt")
    assert model.cfg.graph == "canonical"
    robot = Robot.from_name("panda")
    other, how = reframed(robot, 4)
    q = robot.sample_q(2, torch.Generator().manual_seed(0))
    solver = GGIK(model.double())
    a = solver.solve(robot, robot.fk(q), generator=torch.Generator().manual_seed(5))
    b = solver.solve(other, other.fk(how.q_new(q)), generator=torch.Generator().manual_seed(5))
    # the same samples (results are sorted by the file's own tool-point error: compare them as sets)
    torch.testing.assert_close(b.rot_err.sort(-1).values, a.rot_err.sort(-1).values, rtol=0, atol=1e-6)


def test_a_model_of_one_convention_starts_a_run_on_the_other_with_every_weight(tiny_ckpt, tmp_path):
    from ggik.checkpoint import load_checkpoint
    from ggik.training.fine_tune import load_initial_weights

    model = GGIKModel(ModelConfig(**{**load_checkpoint(tiny_ckpt)["config"]["model"], "graph": "canonical"}))
    record, _ = load_initial_weights(model, tiny_ckpt)
    assert "transfer" not in record  # no partial transfer: the convention is not architecture
    state = load_checkpoint(tiny_ckpt)["model"]
    assert all(torch.equal(model.state_dict()[k], v) for k, v in state.items())
    wider = GGIKModel(ModelConfig(**{**load_checkpoint(tiny_ckpt)["config"]["model"], "graph": "canonical", "dim": 24}))
    with pytest.raises(GGIKError, match="model.dim"):
        load_initial_weights(wider, tiny_ckpt)


# ---------------------------------------------------------------------------------------------- the suite's table
def test_file_variants_are_the_same_arm_and_seeded():
    from ggik.evaluation.conventions_table import VARIANTS, file_variant

    robot = Robot.from_name("kr16_2")
    q = robot.sample_q(8, torch.Generator().manual_seed(0))
    for name in VARIANTS:
        other, how = file_variant(robot, name, seed=3)
        torch.testing.assert_close(other.fk(how.q_new(q)), how.pose_new(robot.fk(q)), rtol=0, atol=1e-12)
        again = file_variant(robot, name, seed=3)[1]
        assert all(np.array_equal(getattr(how, f), getattr(again, f)) for f in ("slide", "turn", "rotate", "base"))
    assert np.array_equal(file_variant(robot, "file", 0)[1].tool, np.eye(4))
    tool = file_variant(robot, "tool +10 cm", 0)[1].tool
    assert abs(np.linalg.norm(tool[:3, 3]) - 0.1) < 1e-12 and np.array_equal(tool[:3, :3], np.eye(3))
    with pytest.raises(ValueError, match="unknown file variant"):
        file_variant(robot, "mirrored", 0)


def test_the_conventions_table_is_flat_on_canonical_graphs_for_a_canonical_model(tmp_path):
    from ggik.cli import main
    from ggik.evaluation.conventions_table import conventions_table, on_convention
    from ggik.evaluation.tables import EvalConfig

    model = GGIKModel(ModelConfig(dim=16, hidden=16, enc_layers=1, dec_layers=2, gn_steps=1, graph="canonical"))
    other = on_convention(model, "frames")
    assert other.cfg.graph == "frames" and model.cfg.graph == "canonical" and other.embed is model.embed
    variants = ["file", "zeros turned", "frames slid", "base moved"]
    table = conventions_table(
        model, [Robot.from_name("ur10")], EvalConfig(problems=6, samples=4), variants, progress=False
    )
    assert [row[1] for row in table.rows] == variants
    assert "canonical (trained): raw success 1cm&1deg [%]" in table.columns
    best = [row[table.columns.index("canonical: best of S pos [mm]")] for row in table.rows]
    assert max(best) - min(best) < 1e-6  # the same samples in every file (no tool change among these variants)
    assert main(["eval", "conventions", "--robots", "panda", "-n", "3", "-s", "2", "--variants", "file", "all",
                 "--out-dir", str(tmp_path), "--no-progress"]) == 0  # fmt: skip
    text = (tmp_path / "conventions.md").read_text()
    assert "| panda | all |" in text and "canonical (trained)" in text and "sha256" in text  # the shipped model


# ---------------------------------------------------------------------------------------------- guards
@pytest.mark.parametrize("tilt", [1e-6, 2e-4, 1e-3, 5e-3])
def test_nearly_parallel_axes_of_a_calibrated_file_move_the_graph_by_about_the_tilt(tilt):
    """A calibrated file's axes deviate from parallel by 1e-4-1e-3 rad; the feet of common perpendiculars would then lie
    kilometres away. Below PARALLEL_TOL the pair counts as parallel: the graph moves by about tilt x the arm's size."""
    robot = Robot.from_name("ur10")  # joints 2, 3, 4 parallel
    k = 2  # tilt joint 3's axis about its frame's x by turning its joint frame (the next link's geometry unchanged)
    how = random_reframing(robot, 0)
    rot = np.stack([np.eye(3)] * robot.dof)
    rot[k] = geo.axis_angle_to_matrix(torch.tensor([1.0, 0.0, 0.0], dtype=torch.float64), torch.tensor(tilt)).numpy()
    how = Reframing(np.zeros(robot.dof), np.zeros(robot.dof), rot, np.eye(4), np.eye(4))
    tilted = reframe(robot, how)
    joints = list(tilted.joints)  # the axis reads rot^T a in the turned frame: give it back its old reading
    joints[k + 1] = type(joints[k + 1])(**{**joints[k + 1].__dict__, "axis": robot.joints[k].axis})
    tilted = Robot(joints, name="ur10~tilted")
    exact, bent = RobotGraph.from_robot(robot, "canonical"), RobotGraph.from_robot(tilted, "canonical")
    assert float(bent.D_const.max()) < 3.0
    assert float((bent.D_const - exact.D_const).abs().max()) < 10 * tilt + 1e-9


def test_goal_features_are_refused_on_canonical_graphs():
    with pytest.raises(ValueError, match="goal_features"):
        GGIKModel(ModelConfig(goal_features=True, graph="canonical"))
    GGIKModel(ModelConfig(dim=16, hidden=16, enc_layers=1, dec_layers=2, gn_steps=1, goal_features=True))


def test_goals_made_by_another_graph_of_the_robot_are_mapped_anew():
    robot = Robot.from_name("puma560")
    T = robot.fk(robot.sample_q(4, torch.Generator().manual_seed(2)))
    frames, canonical = RobotGraph.from_robot(robot), RobotGraph.from_robot(robot, "canonical")
    for kind in ("pose", "position+axis", "position"):
        mine = canonical.goals(T, kind)
        theirs = canonical.goals(frames.goals(T, kind))
        torch.testing.assert_close(theirs.in_graph, mine.in_graph, rtol=0, atol=1e-12)
        assert isinstance(theirs, Goals) and theirs.kind == kind
        torch.testing.assert_close(
            canonical.partial(frames.goals(T, kind)).known_positions, canonical.partial(T, kind).known_positions
        )
    tool_graph = canonical.for_goal_kind("position")
    assert tool_graph.ee_anchor == "tool" and tool_graph.for_goal_kind("pose") is canonical
    torch.testing.assert_close(tool_graph.partial(T).known_positions, canonical.partial(T).known_positions)


def _fallback_robot(kind: str, seed: int) -> Robot:
    """Chains that take the canonical rules' fallbacks: one joint (no axis 2: the base frame from u_1 alone), or
    joints 1 and 2 on one line (coincident axes: the same)."""
    from tests.conftest import _chain  # the suite's URDF writer

    g = torch.Generator().manual_seed(seed)
    rpy = lambda: " ".join(f"{v:.4f}" for v in (torch.rand(3, generator=g) * 2 - 1).tolist())  # noqa: E731
    tool = ("tool", "fixed", dict(xyz="0.3 0.1 0.2"))
    if kind == "one-joint":
        specs = [("j1", "revolute", dict(xyz="0.1 0.2 0.3", rpy=rpy(), axis="0 0 1")), tool]
    else:  # joint 2 on joint 1's axis, 0.4 m up it; then two joints off it
        specs = [
            ("j1", "revolute", dict(xyz="0 0 0.1", axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0 0.4", rpy="0 0 0.7", axis="0 0 1")),
            ("j3", "revolute", dict(xyz="0.3 0 0.1", rpy=rpy(), axis="0 1 0")),
            ("j4", "revolute", dict(xyz="0 0.3 0", rpy=rpy(), axis="1 0 0")),
            tool,
        ]
    return Robot.from_urdf(_chain(kind, specs))


@pytest.mark.parametrize("kind", ["one-joint", "coincident-first-axes"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_canonical_fallbacks_give_orthonormal_frames_on_the_axes_and_graphs_that_round_trip(kind, seed):
    robot = _fallback_robot(kind, seed)
    F = canonical_frames(robot)
    R = F[:, :3, :3]
    torch.testing.assert_close(R.transpose(-1, -2) @ R, torch.eye(3, dtype=F.dtype).expand_as(R), rtol=0, atol=1e-12)
    torch.testing.assert_close(torch.linalg.det(R), torch.ones(R.shape[0], dtype=F.dtype), rtol=0, atol=1e-12)
    o, u, _ = axis_lines(robot)
    for i in range(robot.dof):  # each joint frame's origin on its axis, its z along it
        torch.testing.assert_close(R[i, :, 2], u[i], rtol=0, atol=1e-12)
        off = F[i, :3, 3] - o[i]
        torch.testing.assert_close(torch.linalg.cross(off, u[i]), torch.zeros(3, dtype=F.dtype), rtol=0, atol=1e-12)
    graph = RobotGraph.from_robot(robot, "canonical")
    q = robot.sample_q(16, torch.Generator().manual_seed(seed))
    T = robot.fk(q)
    got = robot.fk(graph.joint_angles(graph.realize(q), T))
    torch.testing.assert_close(got, T, rtol=0, atol=1e-9)  # any angles of the same pose: joints 1 and 2 may trade
