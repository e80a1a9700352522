"""How a changed tool frame (the end-effector link moved or turned against the training file's) changes the model's
accuracy: the same arm with a fixed tool transform appended, on the same joint configurations.

For each robot and tool: whether the GGIK graph is the training robot's (same known distances, node roles and
anchors: then the model sees the same problem and its samples are the same up to the exact goal mapping), and raw
accuracy on 100 pose goals (the goal of configuration q is the new EE's pose, FK(q) @ tool): best of 32 samples [mm]
and raw success (within 1 cm and 1 deg). Tools: the file's own EE; turned 90 deg about the tool axis and about an axis
across it; moved 5 and 10 cm along the tool axis (as a flange-to-tool offset); moved 10 cm along the axis and turned
(a ``tool0``-like frame); moved 2 cm off the axis.

Run by ``python -m benchmarks.tool_frames.tool_frames [--ckpt CKPT] [--robots ur10 lbr_iiwa kr16_2 panda] [-n 100]
[--threads 2] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import math

import torch

from benchmarks.common.robots import load_bench_model
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table
from ggik.graph.robot_graph import RobotGraph
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot import Robot
from ggik.rng import step_generator

__all__ = ["same_graph", "tools", "tool_frame_table"]


def same_graph(a: RobotGraph, b: RobotGraph, tol: float = 1e-9) -> bool:
    """Whether two graphs pose the same problems: same nodes, roles, anchors, known edges and their constant lengths."""
    if a.num_nodes != b.num_nodes:
        return False
    same = all(
        torch.equal(getattr(a, k), getattr(b, k)) for k in ("node_type", "node_kind", "anchor_mask", "known_mask")
    )
    return same and bool(torch.allclose(a.D_const, b.D_const, atol=tol, rtol=0))


def tools(graph: RobotGraph) -> dict[str, torch.Tensor]:
    """Tool transforms (4, 4) in the EE frame: rotations about the tool axis and across it, offsets along and off it."""
    axis = graph.tool_axis  # (3,) in the EE frame
    across = geo.perpendicular_unit(axis)
    turn = lambda a, deg: geo.make_transform(geo.axis_angle_to_matrix(a, torch.tensor(math.radians(deg))))  # noqa: E731
    move = lambda v: geo.translation(v)  # noqa: E731
    return {
        "own EE": torch.eye(4, dtype=torch.float64),
        "turned 90 deg about the tool axis": turn(axis, 90.0),
        "turned 90 deg across the tool axis": turn(across, 90.0),
        "5 cm along the tool axis": move(0.05 * axis),
        "10 cm along the tool axis": move(0.10 * axis),
        "10 cm along the axis and turned (tool0-like)": move(0.10 * axis) @ turn(across, 90.0),
        "2 cm off the tool axis": move(0.02 * across),
    }


TOOLS = (
    "own EE",
    "turned 90 deg about the tool axis",
    "turned 90 deg across the tool axis",
    "5 cm along the tool axis",
    "10 cm along the tool axis",
    "10 cm along the axis and turned (tool0-like)",
    "2 cm off the tool axis",
)


def tool_frame_table(args: argparse.Namespace) -> Table:
    """The table of ``main``'s options ``args``, measured."""
    model, _ = load_bench_model(args.ckpt)
    table = Table(
        f"Tool frames: the same arm with its EE moved or turned ({args.goals} pose goals, {args.samples} samples)",
        ["robot", "tool", "same graph as the file's", "best of S [mm]", "raw success 1cm&1deg [%]"],
    )
    for name in args.robots:
        base = Robot.from_name(name)
        own = model.graph(base)
        q = base.sample_q(args.goals, step_generator(args.seed, SAMPLING_GOALS))
        for label, tool in tools(own).items():
            robot = base if label == "own EE" else base.with_tool(tool)
            graph = model.graph(robot)
            T = robot.fk(q)
            raw = sample_joint_angles(
                model, graph, T, args.samples, generator=step_generator(args.seed, SAMPLING_NOISE)
            )
            best = 1e3 * float(raw.pos_err.min(1).values.mean())
            ok = 100 * success_rate(raw.pos_err, raw.rot_err)
            table.add(name, label, "yes" if same_graph(own, graph) else "no", best, ok)
            print(table.rows[-1], flush=True)
    table.notes.append(
        f"{torch.get_num_threads()} torch threads; the same configurations (stream SAMPLING_GOALS) and noise stream "
        "for every tool; position errors are of the new EE's origin"
    )
    return table
