"""Goal kinds: "pose", "position+axis" (roll about the tool axis free) and "position"."""

from __future__ import annotations

import json

import pytest
import torch
from conftest import HAND_URDFS

from ggik import GGIK, Robot, RobotGraph, SolveConfig, random_robot
from ggik.cli import main
from ggik.errors import GGIKError, GoalError, GraphError
from ggik.graph.goal_kinds import GOAL_KINDS, goal_errors, goal_poses, tool_axis, tool_offset
from ggik.ik.refine import goal_residual, lm_refine, slsqp_refine
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics.geometry import axis_angle_to_matrix
from ggik.nn.cvae import GGIKModel, ModelConfig

F64 = torch.float64
KINDS = ("pose", "position+axis", "position")
ROWS = {"pose": 6, "position+axis": 5, "position": 3}


def robots():
    out = [
        Robot.from_name("panda"),
        Robot.from_name("kr16_2"),
        random_robot(6, torch.Generator().manual_seed(3)),
        random_robot(7, torch.Generator().manual_seed(4)),
    ]
    out += [Robot.from_urdf(HAND_URDFS[k]) for k in ("no_flange", "urdf_defaults")]  # EE frame rotated off z
    return out


ROBOTS = robots()
IDS = [r.name + str(i) for i, r in enumerate(ROBOTS)]


def within(robot, n, gen):
    lo = torch.where(robot.limited, robot.lower, torch.full_like(robot.lower, -3.0))
    hi = torch.where(robot.limited, robot.upper, torch.full_like(robot.upper, 3.0))
    return lo + (hi - lo) * torch.rand(n, robot.dof, generator=gen, dtype=F64)


@pytest.mark.parametrize("robot", ROBOTS, ids=IDS)
def test_tool_axis_is_qn_minus_pn(robot):
    g = RobotGraph.from_robot(robot)
    assert torch.allclose(g.tool_axis, tool_axis(robot), atol=1e-9)
    q = within(robot, 5, torch.Generator().manual_seed(0))
    pts, T = g.realize_with_pose(q)
    axis_base = T[..., :3, :3] @ g.tool_axis
    assert torch.allclose(axis_base, (pts[:, -1] - pts[:, -2]) @ g.T_base_graph[:3, :3].T, atol=1e-9)
    if robot.name == "panda":
        assert torch.allclose(g.tool_axis, torch.tensor([0.0, 0.0, 1.0], dtype=F64))


@pytest.mark.parametrize("robot", ROBOTS, ids=IDS)
@pytest.mark.parametrize("kind", KINDS)
def test_partial_graph_per_kind(robot, kind):
    g = RobotGraph.from_robot(robot)
    q = within(robot, 4, torch.Generator().manual_seed(1))
    pts, T = g.realize_with_pose(q)
    P, full = g.partial(T, kind=kind), g.partial(T)
    N = g.num_nodes
    assert P.known_positions.shape == (4, N, 3) and P.known_distances.shape == (4, N, N) and P.goal.shape == (4, 4, 4)
    expect_anchor = g.anchor_mask.clone()
    if kind == "position":
        expect_anchor[-1] = False
    assert torch.equal(P.anchor_mask, expect_anchor)
    km = P.known_mask
    assert torch.equal(km, km.T)
    # known distances and anchor positions are those of the true point set
    assert torch.allclose(P.known_distances * km, g.distances(pts) * km, atol=1e-9)
    assert torch.allclose(P.known_positions[:, P.anchor_mask], pts[:, P.anchor_mask], atol=1e-9)
    if kind == "position":
        assert not km[:4, -1].any() and km[-1, -2] and km[-1, -3] and km[-1, -4]  # only structural edges at q_n
        assert torch.equal(km | (full.known_mask & ~km), full.known_mask)
        assert int((full.known_mask & ~km).sum()) == 8 and (P.known_positions[:, -1] == 0).all()
        assert (P.known_distances[:, :4, -1] == 0).all()
    else:
        assert torch.equal(km, full.known_mask) and torch.allclose(P.known_distances, full.known_distances, atol=1e-9)


@pytest.mark.parametrize("robot", ROBOTS[:3], ids=IDS[:3])
def test_goal_inputs_and_roll_invariance(robot):
    g = RobotGraph.from_robot(robot)
    q = within(robot, 3, torch.Generator().manual_seed(2))
    T = robot.fk(q)
    p, a = T[:, :3, 3], T[:, :3, :3] @ g.tool_axis
    # a pose passed as "position" ignores its rotation; a (B, 3) position gives the same goals
    T_rot = T.clone()
    T_rot[:, :3, :3] = (
        axis_angle_to_matrix(torch.tensor([1.0, 0.0, 0.0], dtype=F64), torch.tensor(1.0, dtype=F64)) @ T[:, :3, :3]
    )
    for goal in (T_rot, p):
        G = g.goals(goal, "position")
        assert G.kind == "position" and torch.allclose(G.in_base, g.goals(T, "position").in_base)
    # position+axis: a pose, or (position, axis); turning the goal about its tool axis changes nothing
    roll = axis_angle_to_matrix(a, torch.tensor([0.7, -2.0, 3.0], dtype=F64))
    T_roll = T.clone()
    T_roll[:, :3, :3] = roll @ T[:, :3, :3]
    ref = g.partial(T, kind="position+axis")
    for goal in (T_roll, (p, 2.5 * a)):
        other = g.partial(goal, kind="position+axis")
        assert torch.allclose(other.known_distances, ref.known_distances, atol=1e-9)
        assert torch.allclose(other.known_positions, ref.known_positions, atol=1e-9)
    canon = goal_poses(T, "position+axis", g.tool_axis)
    for q_try in (q, within(robot, 3, torch.Generator().manual_seed(9))):
        Tq = robot.fk(q_try)
        r1 = goal_residual(Tq, canon, 0.1, "position+axis", g.tool_axis)
        r2 = goal_residual(Tq, goal_poses(T_roll, "position+axis", g.tool_axis), 0.1, "position+axis", g.tool_axis)
        assert torch.allclose(r1.norm(dim=-1), r2.norm(dim=-1), atol=1e-9)
        e1, e2 = (
            goal_errors(Tq, canon, "position+axis", g.tool_axis),
            goal_errors(Tq, T_roll, "position+axis", g.tool_axis),
        )
        assert torch.allclose(e1[1], e2[1], atol=1e-9)
    assert goal_errors(T_roll, T, "position+axis", g.tool_axis)[1].max() < 1e-6
    assert goal_errors(T_rot, T, "position", g.tool_axis)[1].abs().max() == 0


def test_bad_goal_inputs():
    robot = Robot.from_name("panda")
    g = RobotGraph.from_robot(robot)
    T = robot.fk(torch.zeros(robot.dof, dtype=F64))
    p = T[:3, 3]
    for bad, kind in [
        ((p, torch.zeros(3, dtype=F64)), "position+axis"),
        ((p, torch.tensor([float("nan"), 0, 1.0])), "position+axis"),
        (torch.tensor([float("nan"), 0.0, 0.0]), "position"),
        (T, "orientation"),
        (torch.zeros(2, dtype=F64), "position"),
        ((p,), "position+axis"),
        (p, "position+axis"),
    ]:
        with pytest.raises(GoalError):
            g.partial(bad, kind=kind)
    assert issubclass(GoalError, GGIKError) and issubclass(GoalError, ValueError)
    with pytest.raises(ValueError):
        g.partial(p, kind="pose")
    with pytest.raises(GoalError):
        lm_refine(robot, T, torch.zeros(robot.dof, dtype=F64), kind="nope")
    with pytest.raises(GoalError):
        g.partial(g.goals(T, "position"), kind="pose")  # Goals of another kind
    # an EE origin off the last axis: partial goals do not fix p_n in the graph (LM still works, below)
    off = Robot.from_urdf(HAND_URDFS["tool_frame"])
    assert tool_offset(off) > 0.1
    with pytest.raises(GraphError):
        RobotGraph.from_robot(off).goals(off.fk(torch.zeros(off.dof, dtype=F64)), "position")


@pytest.mark.parametrize("robot", ROBOTS + [Robot.from_urdf(HAND_URDFS["tool_frame"])], ids=IDS + ["tool_frame"])
@pytest.mark.parametrize("kind", KINDS)
def test_lm_converges_from_nearby_starts(robot, kind):
    gen = torch.Generator().manual_seed(5)
    q = within(robot, 12, gen)
    T = robot.fk(q)
    q0 = q + 0.1 * torch.randn(q.shape, generator=gen, dtype=F64)
    axis = tool_axis(robot)
    canon = goal_poses(T, kind, axis)
    assert goal_residual(robot.fk(q0), canon, 0.1, kind, axis).shape == (12, ROWS[kind])
    assert goal_residual(T, canon, 0.1, kind, axis).abs().max() < 1e-9
    cfg = RefineConfig(max_iters=60)
    qs, info = lm_refine(robot, T, q0, cfg, kind=kind)
    assert info.converged.float().mean() >= 0.9
    pos, rot = goal_errors(robot.fk(qs), T, kind, axis)
    ok = info.converged
    assert (pos[ok] < cfg.pos_tol).all() and (rot[ok] < cfg.rot_tol).all()
    assert torch.allclose(pos, info.pos_err) and torch.allclose(rot, info.rot_err)  # LM reports the kind's errors
    qs2, info2 = slsqp_refine(robot, T[:3], q0[:3], cfg, kind=kind)
    assert info2.converged.all()


def test_position_axis_solutions_differ_only_in_roll():
    robot = Robot.from_name("panda")
    gen = torch.Generator().manual_seed(6)
    q = within(robot, 8, gen)
    T = robot.fk(q)
    q0 = q + 0.1 * torch.randn(q.shape, generator=gen, dtype=F64)
    q0[:, -1] = q[:, -1] + 1.0  # the roll starts far off: position+axis does not pull it back
    qs, info = lm_refine(robot, T, q0, kind="position+axis")
    assert info.converged.all()
    _, rot_pose = goal_errors(robot.fk(qs), T, "pose", tool_axis(robot))
    assert (rot_pose > 0.5).all()


@pytest.fixture(scope="module")
def solver():
    return GGIK.pretrained()


@pytest.mark.parametrize("kind", KINDS)
def test_solve_each_kind_with_lm(solver, kind):
    robot = Robot.from_name("panda")
    q = within(robot, 3, torch.Generator().manual_seed(7))
    T = robot.fk(q)
    goal = {"pose": T, "position+axis": (T[:, :3, 3], T[:, :3, 2]), "position": T[:, :3, 3]}[kind]
    raw = solver.solve(robot, goal, SolveConfig(samples=8), goal=kind, generator=torch.Generator().manual_seed(0))
    assert raw.q.shape == (3, 8, robot.dof) and torch.isfinite(raw.pos_err).all()
    res = solver.solve(
        robot, goal, SolveConfig(samples=8, refine="lm"), goal=kind, generator=torch.Generator().manual_seed(0)
    )
    assert res.success[:, 0].all()
    pos, rot = goal_errors(robot.fk(res.best()), goal_poses(goal, kind, tool_axis(robot)), kind, tool_axis(robot))
    assert (pos < 1e-3).all() and (rot < 1e-2).all()
    one = solver.solve(
        robot, goal[0] if kind != "position+axis" else (goal[0][0], goal[1][0]), SolveConfig(samples=2), goal=kind
    )
    assert one.q.shape == (1, 2, robot.dof)


@pytest.mark.parametrize("kind", ("position+axis", "position"))
def test_solve_tiny_model_and_joint_angles_use_sampled_qn(kind):
    robot = random_robot(6, torch.Generator().manual_seed(11))
    model = GGIKModel(
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
    solver = GGIK(model, tolerances=RefineConfig(max_iters=100))  # untrained: its samples are random starts
    q = within(robot, 2, torch.Generator().manual_seed(8))
    T = robot.fk(q)
    raw = solver.solve(robot, T, SolveConfig(samples=16), goal=kind, generator=torch.Generator().manual_seed(0))
    res = solver.solve(
        robot, T, SolveConfig(samples=16, refine="lm"), goal=kind, generator=torch.Generator().manual_seed(0)
    )
    assert res.q.shape == (2, 16, robot.dof) and (res.pos_err[:, 0] <= raw.pos_err[:, 0] + 1e-12).all()
    assert res.success[0, 0]  # the untrained model's samples are collapsed near the limits: the 2nd goal may fail
    # both report the errors of the goal kind, not of the pose the goals were made from
    axis = tool_axis(robot)
    for out in (raw, res):
        pos, rot = goal_errors(robot.fk(out.q), T[:, None], kind, axis)
        assert torch.allclose(out.pos_err, pos) and torch.allclose(out.rot_err, rot)
    # exact points -> exact joints 1..n-1 and a position/axis match; joint n (the free roll) is 0
    g = RobotGraph.from_robot(robot)
    pts = g.realize(q)
    qa = g.joint_angles(pts, g.goals(T, kind))
    assert torch.allclose(qa[:, :-1], g.wrap_to_limits(q)[:, :-1], atol=1e-7) and (qa[:, -1] == 0).all()
    pos, rot = goal_errors(robot.fk(qa), T, kind, g.tool_axis)
    assert pos.max() < 1e-9 and rot.max() < 1e-6


def test_cli_position_and_axis(capsys):
    robot = Robot.from_name("panda")
    T = robot.fk(within(robot, 1, torch.Generator().manual_seed(12))[0])
    p, a = T[:3, 3].tolist(), T[:3, 2].tolist()
    for extra, kind in (([], "position"), (["--axis", *map(str, a)], "position+axis")):
        assert (
            main(
                ["solve", "--robot", "panda", "--position", *map(str, p), *extra, "-s", "4", "--refine", "lm", "--json"]
            )
            == 0
        )
        out = json.loads(capsys.readouterr().out)
        assert out["goal"] == kind and out["solutions"][0]["ok"] and out["solved"]
        q = torch.tensor(out["solutions"][0]["q"], dtype=F64)
        pos, rot = goal_errors(robot.fk(q), T, kind, tool_axis(robot))
        assert pos < 1.1e-3 and rot < 1e-2
    assert main(["solve", "--robot", "panda", "--position", *map(str, p), "--axis", "0", "0", "0"]) == 2
    assert "--axis: the tool axis must not be zero" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["solve", "--robot", "panda", "--position", "0", "0", "0.5", "--pose", "0", "0", "0", "1", "0", "0", "0"])
    assert GOAL_KINDS == KINDS
