"""The rules around handedness (ggik.graph.handedness and the parts that use it): one rule of parallel axes for the
canonical points and the skew links, a skew tolerance that is a property of the arm, the DG projection with volumes on
partial goals, the volume weights' gradient, and the options that skipped or trained handedness parts silently.
Float64, one code path: 1e-12."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
import torch
from conftest import REPO_ROOT, shared_path
from test_adapt import QUICK, TickClock
from test_conventions import reframed

import ggik.training.adapt as adapt_module
from ggik import Robot, RobotGraph
from ggik.checkpoint import load_model, read_checkpoint
from ggik.errors import GGIKError
from ggik.graph import GraphBatch
from ggik.graph.conventions import PARALLEL_TOL, axis_lines
from ggik.graph.frames import AXIS_LENGTH
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.graph.handedness import signed_volumes, skew_tolerance
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot_files import RobotFile
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.nn.decoders import GaussNewtonFollow, clamp_through
from ggik.training.adapt import adapt
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml

F64 = torch.float64
TOL = 1e-12
CONVENTIONS = ("frames", "canonical")
#: the files of the UR family at hand: ours, the adaptation study's public UR5, the public UR10 of ../shared
UR_FILES = {
    "ur10": lambda: Robot.from_name("ur10"),
    "ur5_formatted": lambda: Robot.from_urdf(REPO_ROOT / "benchmarks/adapt/urdfs/ur5_formatted.urdf"),
    "ur10_mod": lambda: Robot.from_urdf(shared_path("reference-urdfs", "ur10_mod.urdf")),
}
ELBOW = 2  #: the UR elbow: its axis is parallel to the shoulder's (0.61 / 0.43 m away) and to wrist 1's


def graphs(robot: Robot) -> list[RobotGraph]:
    """The graph of every convention and goal kind of ``robot``."""
    return [RobotGraph.from_robot(robot, c).for_goal_kind(k) for c in CONVENTIONS for k in GOAL_KINDS]


def tilted(robot: Robot, joint: int, tilt: float, oblique: bool = False) -> tuple[Robot, float]:
    """``robot`` as a calibrated file would give it: joint ``joint``'s axis u turned by ``tilt`` [rad] about the unit
    common normal e from the previous joint's (parallel) axis, so that the pair's moment is a sin(tilt), the most a
    tilt gives (the common normal stays where it was); ``oblique``: about (e + u x e) / sqrt(2), a moment of
    a sin(tilt) / sqrt(2), and the common normal's foot a / tilt away. Returns (the robot, a [m])."""
    o, u, _ = axis_lines(robot)
    d = o[joint] - o[joint - 1]
    d = d - (d @ u[joint]) * u[joint]
    e = d / d.norm()
    about = (e + torch.linalg.cross(u[joint], e)) / math.sqrt(2.0) if oblique else e
    frames, _ = robot.joint_frames(torch.zeros(robot.dof, dtype=F64))
    turn = geo.axis_angle_to_matrix(frames[joint, :3, :3].T @ about, torch.tensor(tilt, dtype=F64))
    name = robot.joint_names[joint]
    joints = [
        dataclasses.replace(j, axis=(turn @ torch.as_tensor(j.axis, dtype=F64)).numpy()) if j.name == name else j
        for j in robot.joints
    ]
    return Robot(joints, name=f"{robot.name}~{tilt:g}"), float(d.norm())


# ---------------------------------------------------------------------------------------------- one rule
@pytest.mark.parametrize("tilt", [1e-4, 1e-3, 5e-3, 9.9e-3])
@pytest.mark.parametrize("name", sorted(UR_FILES))
def test_a_calibration_tilt_under_the_parallel_tolerance_makes_no_skew_link(name, tilt):
    """A UR file with its elbow axis tilted by 1e-4 to 1e-2 rad, under PARALLEL_TOL: its two links from the elbow
    have volumes of a x tilt (0.04-6 mm x L^2 at a = 0.4-0.6 m), from 1e-3 rad on about 10x the arm's skew tolerance,
    which a bare volume test calls skew; their axes are parallel by the conventions' rule, so they are not skew: the
    tilted file has the untilted one's handedness (none) in every graph."""
    robot = UR_FILES[name]()
    bent, a = tilted(robot, ELBOW, tilt)
    for exact, graph in zip(graphs(robot), graphs(bent)):
        assert not exact.skew_links.any()
        assert torch.equal(graph.skew_links, exact.skew_links), (graph.convention, graph.ee_anchor, tilt)
        assert not graph.link_volumes.any()
        volumes = signed_volumes(graph.home, graph.n).abs()
        assert abs(float(volumes[ELBOW - 1]) - a * math.sin(tilt) * AXIS_LENGTH**2) <= TOL
        if tilt >= 1e-3:
            assert float(volumes[ELBOW - 1]) > 5 * graph.skew_tol, "the tilt's volume alone would count as skew"


@pytest.mark.parametrize("name", sorted(UR_FILES))
def test_the_parallel_tolerance_is_where_both_the_canonical_points_and_the_skew_links_change(name):
    """One threshold. A tilt about the common normal: just under PARALLEL_TOL the links from the elbow are flat, just
    over it they are skew in every graph, with volumes a sin(tilt) L^2. An oblique tilt: just under it the canonical
    points project (rule 2: the graph within tilt x size of the file's), just over it they take the common normal's
    foot (rule 1: tens of metres off, about a / tilt)."""
    robot = UR_FILES[name]()
    for factor, over in ((1 - 1e-3, False), (1 + 1e-3, True)):
        tilt = math.asin(factor * PARALLEL_TOL)
        bent, a = tilted(robot, ELBOW, tilt)
        expected = torch.zeros(robot.dof, dtype=torch.bool)
        expected[ELBOW - 1 : ELBOW + 1] = over
        for graph in graphs(bent):
            assert torch.equal(graph.skew_links, expected), (graph.convention, graph.ee_anchor, factor)
            if over:
                assert abs(abs(float(graph.link_volumes[ELBOW - 1])) - a * math.sin(tilt) * AXIS_LENGTH**2) <= TOL
        oblique = RobotGraph.from_robot(tilted(robot, ELBOW, tilt, oblique=True)[0], "canonical")
        assert (float(oblique.D_const.max()) > 10.0) == over, float(oblique.D_const.max())


# ---------------------------------------------------------------------------------------------- a property of the arm
def long_tool_arm(offset: float) -> Robot:
    """Axes 3 and 4 at right angles ``offset`` [m] apart, the others meeting or parallel, and a tool 1.5 m along the
    last axis: the graph of position goals ends at the tool point, 1.5 m from the last canonical point, that of pose
    goals 0.1 m from it (EE_ANCHOR_OFFSET)."""
    return Robot.from_dh(
        [0.0, 0.4, offset, 0.0, 0.0, 0.0],
        [0.3, 0.0, 0.0, 0.45, 0.0, 1.5],
        [math.pi / 2, 0.0, math.pi / 2, -math.pi / 2, math.pi / 2, 0.0],
    )


def test_the_skew_tolerance_is_a_property_of_the_arm():
    """The same tolerance, exactly, in the graph of every convention and goal kind (the size of the arm leaves the EE
    anchor out), and so the same skew links: a 0.1 mm normal at right angles on an arm of 0.45 m is skew in all of
    them (it was not in the graph of position goals, whose 1.5 m tool made the arm 3x as large)."""
    robot = long_tool_arm(1e-4)
    tol = skew_tolerance(robot)
    assert tol == pytest.approx(1e-4 * AXIS_LENGTH**2 * 0.45, rel=1e-6)  # c_3 - c_2: 0.45 m, 0.1 mm aside
    expected = torch.tensor([False, False, True, False, False, False])
    for graph in graphs(robot):
        assert graph.skew_tol == tol, (graph.convention, graph.ee_anchor)
        assert torch.equal(graph.skew_links, expected), (graph.convention, graph.ee_anchor)
        assert abs(abs(float(graph.link_volumes[2])) - 1e-4 * AXIS_LENGTH**2) <= TOL


@pytest.mark.parametrize("name", ["panda", "kr16_2", "irb140", "ur10"])
def test_every_file_and_graph_of_an_arm_has_its_tolerance(name):
    """A reframed file (joint frames slid and turned, another base mounting and tool) has the arm's tolerance to
    rounding, in every graph."""
    robot = Robot.from_name(name)
    tol = skew_tolerance(robot)
    for file in (robot, reframed(robot, 3)[0]):
        for graph in graphs(file):
            assert abs(graph.skew_tol - tol) <= 1e-12 * tol, (graph.convention, graph.ee_anchor)


# ---------------------------------------------------------------------------------------------- DG on partial goals
PARTIAL = ("position", "position+axis")


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("kind", PARTIAL)
def test_the_projection_with_volumes_solves_partial_goals_from_near_solution_starts(kind, convention):
    """The Panda (3 skew links), FK goals of a partial kind, starts 1 cm off the solution per node: every projection
    meets the goal exactly (its kind's errors under 1e-8; measured 8e-10) and has the arm's handedness, reported."""
    graph = RobotGraph.from_robot(Robot.from_name("panda"), convention)
    posing = graph.for_goal_kind(kind)
    assert int(posing.skew_links.sum()) == 3
    g = torch.Generator().manual_seed(3)
    q = graph.robot.sample_q(6, g)
    goals = graph.goals(graph.robot.fk(q), kind)
    X = posing.realize(q)[:, None].expand(-1, 4, -1, -1)
    X = X + 0.01 * torch.randn(6, 4, posing.num_nodes, 3, generator=g, dtype=F64)
    cfg = DGConfig()
    out = dg_refine(graph, X, goals, cfg)
    assert out.handed.shape == (6, 4) and out.handed.all()
    assert torch.equal(out.handed, posing.handedness(out.points))
    assert out.cost.max() <= cfg.tol
    assert out.pos_err.max() < 1e-8 and out.rot_err.max() < 1e-8, (out.pos_err.max(), out.rot_err.max())


@pytest.mark.parametrize("kind", PARTIAL)
def test_the_projection_uses_the_volumes_on_partial_goals(kind):
    """From random starts on the Panda's canonical graph (8 goals x 16 starts, the default 10 steps): with distances
    alone, converged projections are mirror images (most of them: 50 of 55 for position goals, 12 of 16 with the
    axis) and these miss the goal; with the volumes none is, and more samples reach it (67 against 6, 18 against 6)."""
    graph = RobotGraph.from_robot(Robot.from_name("panda"), "canonical")
    robot = graph.robot
    g = torch.Generator().manual_seed(11)
    goals = graph.goals(robot.fk(robot.sample_q(8, g)), kind)
    X = graph.for_goal_kind(kind).realize(robot.sample_q(8 * 16, g).view(8, 16, robot.dof))
    runs = {v: dg_refine(graph, X, goals, DGConfig(volumes=v)) for v in (False, True)}
    success = {v: (r.pos_err < 0.01) & (r.rot_err < math.radians(1.0)) for v, r in runs.items()}
    converged = {v: r.cost < 1e-10 for v, r in runs.items()}
    mirrors = converged[False] & ~runs[False].handed
    assert mirrors.any() and not success[False][mirrors].any()
    assert converged[True].any() and runs[True].handed[converged[True]].all()
    assert success[True].sum() >= 2 * success[False].sum(), (int(success[True].sum()), int(success[False].sum()))


# ---------------------------------------------------------------------------------------------- the volume weight
def test_a_negative_volume_weight_is_zero_and_keeps_its_gradient():
    """The moves' volume weight is max(0, c) in value (the step at c < 0 is exactly the step at c = 0) with the
    gradient of c everywhere (clamp_min's is 0 below 0): the gradient at c = -0.3 is the one at c = 0."""
    graph = RobotGraph.from_robot(Robot.from_name("panda"), "canonical")
    q = graph.robot.sample_q(3, torch.Generator().manual_seed(4))
    problem = graph.partial(graph.robot.fk(q))
    X = graph.realize(q) + 0.05 * torch.randn(3, 18, 3, generator=torch.Generator().manual_seed(5), dtype=F64)
    args = (X, problem.known_distances, problem.known_mask.expand(3, -1, -1), (~problem.anchor_mask).expand(3, -1))
    volumes = graph.link_volumes.expand(3, -1)
    h = torch.zeros(3, 18, 4, dtype=F64)
    steps, grads = [], []
    for c in (-0.3, 0.0):
        gn = GaussNewtonFollow(4, 1, volumes=True).double()
        with torch.no_grad():
            gn.volume_weight.fill_(c)
        out = gn(h, *args, volumes)
        # a flipped volume pulls the step one way: the cost of the distance to a point set with flipped links
        ((out - X.flip(-1)) ** 2).sum().backward()
        steps.append(out.detach())
        grads.append(gn.volume_weight.grad.clone())
    assert torch.equal(steps[0], steps[1])
    assert grads[0].abs().min() > 0, "no gradient through a negative weight"
    torch.testing.assert_close(grads[0], grads[1], rtol=1e-12, atol=0)
    c = torch.tensor([-2.0, -1e-300, 0.0, 1e-300, 0.5], dtype=F64, requires_grad=True)
    assert torch.equal(clamp_through(c), c.detach().clamp_min(0.0))
    clamp_through(c).sum().backward()
    assert torch.equal(c.grad, torch.ones_like(c))


MODEL_FILES = (
    "ggik/weights/ggik_default.pt",
    "benchmarks/handedness/results/unlimited/export_cont.pt",
    "train/checkpoints/paper/export.pt",
)


@pytest.mark.parametrize("path", MODEL_FILES)
def test_model_files_keep_their_volume_weights_and_samples(path):
    """Each model file reads as written: its moves' volume weights are max(0, c) of its stored c (the paper run's
    holds a c of -0.0011, weight 0), and it samples exactly as the same model with its c clamped to 0 in the file."""
    stored = read_checkpoint(REPO_ROOT / path)["model"].get("gn_follow.volume_weight")
    model, _ = load_model(REPO_ROOT / path)
    gn = model.gn_follow
    if stored is None:
        assert gn is None or gn.volume_weight is None
        return
    assert torch.equal(clamp_through(gn.volume_weight.detach()), stored.clamp_min(0.0))
    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot, model.cfg.graph)
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(6)))
    batch = GraphBatch.from_graph(graph, T).to(dtype=torch.float32)
    samples = []
    for clamp in (False, True):
        if clamp:
            with torch.no_grad():
                gn.volume_weight.clamp_(min=0.0)
        with torch.no_grad():
            samples.append(model.sample(batch, 3, generator=torch.Generator().manual_seed(7)))
    assert torch.equal(samples[0], samples[1])


# ---------------------------------------------------------------------------------------------- options
def test_volume_inputs_with_the_node_decoder_is_an_error():
    with pytest.raises(GGIKError, match="volume_inputs"):
        GGIKModel(ModelConfig(dim=8, hidden=16, decoder="node", dec_layers=1, gn_steps=1, volume_inputs=True))
    assert GGIKModel(ModelConfig(dim=8, hidden=16, dec_layers=1, gn_steps=1, volume_inputs=True)).dec_volumes


@pytest.fixture(scope="module")
def handed_ckpt(tmp_path_factory) -> str:
    """``last.pt`` of 3 steps of train/configs/tiny.yaml with ``model.volume_inputs``: a base model whose decoder
    layers read the volumes (trained on the Panda, 3 skew links: their parts are no longer 0)."""
    run = tmp_path_factory.mktemp("handed_run")
    recipe = load_yaml(str(REPO_ROOT / "train/configs/tiny.yaml"))
    recipe = {**recipe, "steps": 3, "model": {**recipe["model"], "volume_inputs": True}}
    Trainer(from_dict(TrainConfig, recipe), run, progress=False).train()
    return str(run / "last.pt")


def test_a_frozen_decoder_keeps_its_volume_inputs(handed_ckpt, tmp_path, monkeypatch):
    """``freeze=["decoder"]``: the decoder layers' link-volume inputs (``dec_volumes``) are the decoder's, and stay
    as they were over the adaptation's steps while the parts not frozen move."""
    monkeypatch.setattr(adapt_module, "_clock", TickClock())
    arm = tmp_path / "arm.urdf"
    arm.write_text(Robot.from_name("kr16_2").to_urdf())
    run = tmp_path / "run"
    res = adapt(RobotFile(str(arm)), tmp_path / "m.pt", dataclasses.replace(QUICK, freeze=["decoder"]), handed_ckpt,
                run, progress=False)  # fmt: skip
    assert res.steps > 0
    base, last = read_checkpoint(handed_ckpt)["model"], read_checkpoint(Path(run) / "last.pt")["model"]
    frozen = [k for k in base if k.startswith("dec_volumes.")]
    assert frozen and any(base[k].any() for k in frozen)
    changed = [k for k in frozen if not torch.equal(base[k], last[k])]
    assert not changed, changed
    assert not all(torch.equal(base[k], last[k]) for k in base if k.startswith("enc_partial."))
