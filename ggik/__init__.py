"""ggik: robot-agnostic generative inverse kinematics (GGIK) on distance-geometric graphs.

Quick start::

    import torch
    from ggik import Robot, RobotGraph
    robot = Robot.from_name("panda")             # or Robot.from_urdf("my_arm.urdf")
    q = robot.sample_q(4)                        # (4, 7) joint angles [rad]
    T = robot.fk(q)                              # (4, 4, 4) EE poses in the base-link frame
    graph = RobotGraph.from_robot(robot)
    points = graph.realize(q)                    # (4, 18, 3) GGIK point sets
    q_back = graph.joint_angles(points, T)       # (4, 7), same EE poses
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ggik.errors import ChainError, GGIKError, GraphError, URDFError
from ggik.version import __version__

#: public name -> the module that defines it, imported on first use (PEP 562): ``import ggik`` and the command
#: line's ``ggik --help`` do not pay for torch until a name that needs it is used
_LAZY = {
    "CollisionConfig": "ggik.collision",
    "CollisionModel": "ggik.collision",
    "Scene": "ggik.collision",
    "PartialGraph": "ggik.graph",
    "RobotGraph": "ggik.graph",
    "GGIK": "ggik.solver",
    "IKResult": "ggik.ik",
    "PathConfig": "ggik.path",
    "PathResult": "ggik.path",
    "RefineConfig": "ggik.ik",
    "SolveConfig": "ggik.ik",
    "Tolerances": "ggik.ik",
    "Robot": "ggik.kinematics",
    "available_robots": "ggik.kinematics",
    "random_robot": "ggik.kinematics",
    "randomize_links": "ggik.kinematics",
    "GGIKModel": "ggik.nn.cvae",
    "ModelConfig": "ggik.nn.cvae",
    "view": "ggik.viewer",
}

if TYPE_CHECKING:
    from ggik.collision import CollisionConfig, CollisionModel, Scene
    from ggik.graph import PartialGraph, RobotGraph
    from ggik.ik import IKResult, RefineConfig, SolveConfig, Tolerances
    from ggik.kinematics import Robot, available_robots, random_robot, randomize_links
    from ggik.nn.cvae import GGIKModel, ModelConfig
    from ggik.path import PathConfig, PathResult
    from ggik.solver import GGIK
    from ggik.viewer import view


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ggik' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Robot",
    "RobotGraph",
    "GGIK",
    "IKResult",
    "SolveConfig",
    "RefineConfig",
    "Tolerances",
    "PathConfig",
    "PathResult",
    "GGIKModel",
    "ModelConfig",
    "PartialGraph",
    "Scene",
    "CollisionModel",
    "CollisionConfig",
    "random_robot",
    "randomize_links",
    "available_robots",
    "view",
    "GGIKError",
    "URDFError",
    "ChainError",
    "GraphError",
    "__version__",
]
