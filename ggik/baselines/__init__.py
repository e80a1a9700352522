"""Learned IK baselines of the GGIK comparisons, trainable on a CPU: the distal teacher (:mod:`.distal`) and IKNet
(:mod:`.iknet`).

Each is a per-robot model with ``fit(robot, config)``, ``solve(robot, T_goal) -> IKResult`` and ``save`` / ``load``
(a ``ggik-baseline/1`` file, :mod:`.model_file`).
"""

from ggik.baselines.distal import DistalConfig, DistalTeacher
from ggik.baselines.iknet import IKNet
from ggik.baselines.iknet_config import IKNetConfig

__all__ = ["DistalConfig", "DistalTeacher", "IKNet", "IKNetConfig"]
