"""Layer 1, kinematics: rigid-body geometry, URDF reading, serial chains (:class:`Robot`), random robots.

Everything here is float64-exact torch (batched, differentiable) and knows nothing of graphs or models.
"""

from ggik.kinematics.random_robots import random_robot, randomize_links
from ggik.kinematics.robot import Robot, available_robots

__all__ = ["Robot", "available_robots", "random_robot", "randomize_links"]
