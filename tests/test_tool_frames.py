"""A tool frame turned against the file's end effector, or moved off the last joint axis, poses the same GGIK problem
(the graph's last frame is the EE origin's foot on the last axis, the goal is mapped through the tool exactly), so the
model's samples are the same joint angles; a tool moved along the last axis is another graph. Over random robots and
tools; the tool-frame study's helpers (benchmarks/tool_frames)."""

from __future__ import annotations

import math

import pytest
import torch

from ggik import Robot, RobotGraph, random_robot
from ggik.errors import ChainError
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import geometry as geo
from ggik.nn.cvae import GGIKModel, ModelConfig


def same_graph(a: RobotGraph, b: RobotGraph) -> bool:
    """Same nodes, roles, anchors, known edges and constant known distances (the study's check, kept here too)."""
    roles = ("node_type", "node_kind", "anchor_mask", "known_mask")
    if a.num_nodes != b.num_nodes or not all(torch.equal(getattr(a, k), getattr(b, k)) for k in roles):
        return False
    return bool(torch.allclose(a.D_const, b.D_const, atol=1e-9, rtol=0))


def random_rotation(g: torch.Generator) -> torch.Tensor:
    axis = torch.randn(3, generator=g, dtype=torch.float64)
    return geo.axis_angle_to_matrix(axis / axis.norm(), torch.rand((), generator=g, dtype=torch.float64) * math.pi)


@pytest.mark.parametrize("seed", range(4))
def test_a_turned_tool_or_one_off_the_axis_is_the_same_problem_and_along_it_is_not(seed):
    g = torch.Generator().manual_seed(seed)
    robot = random_robot(6 + seed % 2, g) if seed < 2 else Robot.from_name(["ur10", "panda"][seed % 2])
    own = RobotGraph.from_robot(robot)
    turned = robot.with_tool(geo.make_transform(random_rotation(g)))
    assert same_graph(own, RobotGraph.from_robot(turned))
    axis, across = own.tool_axis, geo.perpendicular_unit(own.tool_axis)
    off = robot.with_tool(geo.make_transform(random_rotation(g), 0.03 * across))
    assert same_graph(own, RobotGraph.from_robot(off))
    along = robot.with_tool(geo.translation(0.07 * axis))
    assert not same_graph(own, RobotGraph.from_robot(along))


def test_the_model_samples_the_same_angles_for_a_turned_tool():
    torch.manual_seed(0)
    model = GGIKModel(
        ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=2, prior_components=2, gn_steps=1)
    )
    robot = Robot.from_name("ur10")
    tool = geo.make_transform(random_rotation(torch.Generator().manual_seed(3)))
    turned = robot.with_tool(tool)
    q = robot.sample_q(4, torch.Generator().manual_seed(1))
    a = sample_joint_angles(
        model.eval(), RobotGraph.from_robot(robot), robot.fk(q), 5, generator=torch.Generator().manual_seed(2)
    )
    b = sample_joint_angles(
        model, RobotGraph.from_robot(turned), turned.fk(q), 5, generator=torch.Generator().manual_seed(2)
    )
    torch.testing.assert_close(a.q, b.q, rtol=0, atol=1e-6)
    torch.testing.assert_close(a.pos_err, b.pos_err, rtol=0, atol=1e-6)


def test_with_tool_appends_a_fixed_link_and_refuses_bad_tools():
    robot = Robot.from_name("panda")
    tool = geo.make_transform(random_rotation(torch.Generator().manual_seed(5)), torch.tensor([0.0, 0.01, 0.1]))
    tooled = robot.with_tool(tool, "gripper")
    assert tooled.ee_link == "gripper" and tooled.dof == robot.dof and tooled.joint_names == robot.joint_names
    q = robot.sample_q(6, torch.Generator().manual_seed(6))
    torch.testing.assert_close(tooled.fk(q), robot.fk(q) @ tool, rtol=0, atol=1e-12)
    with pytest.raises(ValueError):
        robot.with_tool(torch.ones(4, 4))
    with pytest.raises(ValueError, match="one \\(4, 4\\)"):
        robot.with_tool(torch.eye(4).expand(2, 4, 4))
    with pytest.raises(ChainError, match="already on the chain"):
        robot.with_tool(torch.eye(4), robot.ee_link)
