"""Obstacles and collision checking: scenes, robot collision models, signed distances, clearance for the solvers.

from ggik.collision import Scene, CollisionModel, Clearance
scene = Scene.from_file("table.yaml")                 # boxes, spheres, capsules in the base-link frame
model = CollisionModel.from_robot(robot)              # capsules per link, self-collision pairs
model = CollisionModel.from_file("arm.yaml", robot)   # or by hand: a collision file (ggik robot collision writes one)
model = CollisionModel.from_robot(robot, srdf="arm.srdf")  # an SRDF's disabled pairs instead of sampled ones
model = CollisionModel.from_meshes(robot, srdf="arm.srdf")  # capsules fitted to the URDF's meshes
check = Clearance(robot, model, scene)
check.min_clearance(q)                                # (...,) [m], negative = in collision
"""

from ggik.collision.clearance import Clearance, CollisionConfig
from ggik.collision.collision_file import CollisionFileError
from ggik.collision.distance import point_box, segment_box, segment_segment
from ggik.collision.mesh_fit import MeshFitConfig
from ggik.collision.robot_model import DEFAULT_LINK_RADIUS, CollisionModel
from ggik.collision.scene import Box, Capsule, Scene, SceneError, Sphere

__all__ = [
    "Scene",
    "Box",
    "Sphere",
    "Capsule",
    "SceneError",
    "CollisionModel",
    "CollisionFileError",
    "MeshFitConfig",
    "DEFAULT_LINK_RADIUS",
    "Clearance",
    "CollisionConfig",
    "segment_segment",
    "segment_box",
    "point_box",
]
