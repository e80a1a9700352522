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

from ggik.collision import CollisionConfig, CollisionModel, Scene
from ggik.errors import ChainError, GGIKError, GraphError, URDFError
from ggik.graph import PartialGraph, RobotGraph
from ggik.ik import GGIK, IKResult, PathConfig, PathResult, RefineConfig, SolveConfig, Tolerances
from ggik.kinematics import Robot, available_robots, random_robot, randomize_links
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.version import __version__

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
    "GGIKError",
    "URDFError",
    "ChainError",
    "GraphError",
    "__version__",
]
