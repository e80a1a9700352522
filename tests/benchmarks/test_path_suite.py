"""The generator of the path-following suite (``benchmarks/path_suite``): shapes, home configurations, the script."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
import torch

from benchmarks.common.scripts import REPO
from benchmarks.path_suite.shapes import SHAPES, home_configuration, make_shape
from ggik import Robot
from ggik.kinematics.geometry import pose_errors

pytestmark = pytest.mark.slow
F64 = torch.float64


@pytest.mark.parametrize("kind", SHAPES)
def test_suite_shapes_are_rigid_poses_of_the_documented_length(kind):
    robot = Robot.from_name("panda")
    q_home, reach = home_configuration(robot, torch.Generator().manual_seed(0), n=64)
    assert 0.5 < reach < 1.5 and bool(robot.within_limits(q_home))
    P0 = robot.fk(q_home)
    poses = make_shape(kind, P0, 0.05 if kind not in ("rotation", "tool_roll", "base_arc") else 1.0, robot, q_home)
    assert poses.shape[0] in (100, 150, 200, 300) and poses.dtype == F64
    R = poses[:, :3, :3]
    torch.testing.assert_close(R @ R.transpose(-1, -2), torch.eye(3, dtype=F64).expand_as(R), rtol=0, atol=1e-12)
    pos, rot = pose_errors(poses[1:], poses[:-1])
    assert pos.max() < 0.02 and rot.max() < math.radians(3.0)  # dense waypoints
    if kind in ("circle", "square", "writing", "rotation", "tool_roll", "base_arc"):
        pos0, rot0 = pose_errors(poses[0], P0)
        assert pos0 < 1e-12 and rot0 < 1e-9  # these start at the home (or given) pose
    if kind in ("rotation", "tool_roll"):
        assert (poses[:, :3, 3] - P0[:3, 3]).abs().max() < 1e-12  # a fixed tool point


def test_base_arc_needs_a_robot_and_a_configuration():
    robot = Robot.from_name("panda")
    with pytest.raises(ValueError, match="base_arc.*needs robot and q0"):
        make_shape("base_arc", robot.fk(torch.zeros(7, dtype=F64)), 1.0)


def test_make_paths_refuses_zero_threads(tmp_path):
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    args = ["-m", "benchmarks.path_suite.make_paths", "--threads", "0", "--out", str(tmp_path)]
    done = subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "argument --threads" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.iterdir())


def test_make_paths_writes_a_suite_that_ggik_eval_paths_reads(tmp_path):
    from benchmarks.path_suite.shapes import make_suite
    from ggik.evaluation.path_suite import load_path, read_suite

    entries = make_suite(["ur10"], tmp_path, seed=0, kinds=("line",), log=lambda _: None)
    assert [e.name for e in entries] == ["ur10_line"] and read_suite(tmp_path) == entries
    robot, poses, q_start = load_path(tmp_path, entries[0])
    assert robot.name == "ur10" and poses.shape == (100, 4, 4) and q_start is None
