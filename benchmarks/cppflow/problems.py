"""CppFlow's published benchmark problems (``data/``, from jstmn/cppflow: ``SOURCE.md``) as ggik inputs.

A problem file names a robot, a target path (``data/paths/NAME.csv``: rows ``x, y, z, qw, qx, qy, qz``, the end
effector's poses, metres), the path's offset (a translation ``path_xyz_offset`` and a rotation ``path_R_offset``,
taken in the frame ``path_offset_frame``: ``"world"``, the robot's base link, or a link of the chain at the zero
configuration), and obstacles: cubes (``size_x/y/z``, centre ``x, y, z`` plus ``obstacle_xyz_offset``, ``roll,
pitch, yaw`` all zero in every file) in the world frame. CppFlow's own loader (``cppflow/data_type_utils.py``:
``offset_target_path``, ``get_obstacles``) is the specification followed here: the offset frame's position (not its
rotation, which it requires to be the identity) is added to every waypoint, and each waypoint's rotation is
post-multiplied by ``path_R_offset``.

The robots are the URDF files CppFlow's robot library (jstmn/jrl) uses: the Panda (``panda_link0`` ->
``panda_hand``, ``urdfs/panda_arm_hand_formatted.urdf``) and the Fetch (``base_link`` -> ``gripper_link``,
``benchmarks/adapt/urdfs/fetch_formatted.urdf``), whose prismatic ``torso_lift_joint`` jrl plans as a joint
(``"fetch"``, 8 DOF, moves judged by CppFlow's 2 cm rule) or leaves at 0 (``"fetch_arm"``, locked here at 0.0 m).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import torch
import yaml

from benchmarks.common.scripts import REPO, BenchmarkError
from ggik import Robot
from ggik.collision import Box, Scene
from ggik.kinematics.geometry import make_transform, quat_to_matrix

__all__ = [
    "CppFlowProblem",
    "PROBLEMS",
    "OBSTACLE_PROBLEMS",
    "load_problem",
    "cppflow_robot",
]

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
#: the problems of CppFlow's benchmark (its ALL_PROBLEM_FILENAMES; the rot_yz variants it leaves out are left out)
PROBLEMS = (
    "fetch_arm__hello",
    "fetch_arm__circle",
    "fetch_arm__rot_yz2",
    "fetch_arm__s",
    "fetch_arm__square",
    "fetch__circle",
    "fetch__hello",
    "fetch__rot_yz2",
    "fetch__s",
    "fetch__square",
    "panda__1cube",
    "panda__2cubes",
    "panda__flappy_bird",
)
#: the problems with obstacles (CppFlow's ALL_OBS_PROBLEM_FILENAMES)
OBSTACLE_PROBLEMS = tuple(p for p in PROBLEMS if not p.endswith(("hello", "rot_yz2")))
_F64 = torch.float64


@dataclass(frozen=True)
class CppFlowProblem:
    """One problem: ``robot``, the target ``poses`` (T, 4, 4) in its base-link frame [m], the obstacles ``scene``
    (boxes in the base-link frame; empty without obstacles) and the file it came from."""

    name: str
    robot: Robot
    poses: torch.Tensor
    scene: Scene
    source: Path


def cppflow_robot(name: str) -> Robot:
    """The robot CppFlow's problems name: ``"panda"``, ``"fetch"`` (8 DOF, prismatic torso) or ``"fetch_arm"``."""
    if name == "panda":
        return Robot.from_urdf(HERE / "urdfs" / "panda_arm_hand_formatted.urdf", "panda_link0", "panda_hand")
    fetch = REPO / "benchmarks" / "adapt" / "urdfs" / "fetch_formatted.urdf"
    if name == "fetch":
        return Robot.from_urdf(fetch, "base_link", "gripper_link")
    if name == "fetch_arm":
        return Robot.from_urdf(fetch, "base_link", "gripper_link").lock({"torso_lift_joint": 0.0})
    raise BenchmarkError(f"unknown CppFlow robot {name!r}: panda, fetch or fetch_arm")


def load_problem(name: str) -> CppFlowProblem:
    """The problem ``data/problems/NAME.yaml`` (module docstring); BenchmarkError for an unknown name."""
    path = DATA / "problems" / f"{name}.yaml"
    if not path.is_file():
        raise BenchmarkError(f"unknown CppFlow problem {name!r}; problems: {', '.join(PROBLEMS)}")
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    robot = cppflow_robot(spec["robot"])
    rows = _path_rows(DATA / "paths" / f"{spec['path_name']}.csv")
    frame = spec["path_offset_frame"]
    if frame == "world":
        origin = torch.zeros(3, dtype=_F64)
    elif frame in robot.link_names:
        origin = robot.link_poses(torch.zeros(robot.dof, dtype=_F64))[robot.link_names.index(frame), :3, 3]
    else:
        raise BenchmarkError(f"{name}: path_offset_frame {frame!r} is not a link of {robot.name}")
    position = rows[:, :3] + origin + torch.tensor(spec["path_xyz_offset"], dtype=_F64)
    quat = rows[:, 3:7] / rows[:, 3:7].norm(dim=-1, keepdim=True)
    rotation = quat_to_matrix(quat) @ torch.tensor(spec["path_R_offset"], dtype=_F64)
    return CppFlowProblem(name, robot, make_transform(rotation, position), _scene(spec, robot), path)


def _path_rows(path: Path) -> torch.Tensor:
    """(T, 7) x, y, z, qw, qx, qy, qz of a CppFlow path file (a header row, then an index column)."""
    with path.open(newline="") as f:
        rows = list(csv.reader(f))[1:]
    return torch.tensor([[float(v) for v in row[1:8]] for row in rows], dtype=_F64)


def _scene(spec: dict, robot: Robot) -> Scene:
    """The cubes of a problem as boxes in the base-link frame (CppFlow's world frame is the robot's base link)."""
    boxes = []
    shift = spec.get("obstacle_xyz_offset", [0.0, 0.0, 0.0])
    for entries in spec.get("obstacles") or []:
        cube = {k: float(v) for entry in entries for k, v in entry.items()}  # its YAML: a list of one-key maps
        xyz = tuple(cube[k] + float(s) for k, s in zip("xyz", shift))
        rpy = (cube["roll"], cube["pitch"], cube["yaw"])
        boxes.append(Box((cube["size_x"], cube["size_y"], cube["size_z"]), xyz, rpy))
    return Scene(boxes=tuple(boxes), frame=robot.base_link, source="CppFlow")
