"""Many arms at once: every link mesh is one batched scene node whose instances are the arms drawn, so that a new set
of solutions costs one message per link however many arms it holds.

An arm is a configuration ``q`` (dof,) [rad] drawn with a colour, an opacity and an offset (a translation of its base
[m], for the "side by side" layout). Instances are posed by :meth:`ggik.Robot.link_poses` in the base-link frame,
which the viewer's world frame is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ggik.kinematics.geometry import matrix_to_quat
from ggik.kinematics.robot import Robot
from ggik.viewer.meshes import LinkMesh

__all__ = ["ArmSet", "ArmLayer"]


@dataclass
class ArmSet:
    """Arms to draw: ``q`` (N, dof) [rad], ``colors`` (N, 3) uint8 RGB, ``opacities`` (N,) in 0-1, ``offsets`` (N, 3)
    [m] added to every link position of an arm."""

    q: torch.Tensor
    colors: np.ndarray
    opacities: np.ndarray
    offsets: np.ndarray

    @classmethod
    def empty(cls, dof: int) -> ArmSet:
        return cls(torch.zeros(0, dof, dtype=torch.float64), np.zeros((0, 3), np.uint8), np.zeros(0), np.zeros((0, 3)))

    @classmethod
    def concat(cls, sets: list[ArmSet], dof: int) -> ArmSet:
        if not sets:
            return cls.empty(dof)
        return cls(
            torch.cat([s.q for s in sets]),
            np.concatenate([s.colors for s in sets]).astype(np.uint8),
            np.concatenate([s.opacities for s in sets]),
            np.concatenate([s.offsets for s in sets]),
        )

    def __len__(self) -> int:
        return int(self.q.shape[0])


class ArmLayer:
    """The batched link nodes ``{prefix}/{link}`` of one robot in a viser scene (``scene``: ``server.scene``).

    :meth:`draw` replaces the arms shown; the scene nodes are re-created only when the number of arms changes, else
    only their poses, colours and opacities are sent.
    """

    def __init__(self, scene: Any, robot: Robot, meshes: list[LinkMesh], prefix: str) -> None:
        self.scene, self.robot, self.meshes, self.prefix = scene, robot, meshes, prefix
        self.index = {name: k for k, name in enumerate(robot.link_names)}
        self.handles: dict[str, Any] = {}
        self.count = -1  #: arms in the nodes now (-1: none made yet)
        self.shown = ArmSet.empty(robot.dof)

    def draw(self, arms: ArmSet) -> None:
        """Show ``arms`` (nothing when empty: the nodes are hidden)."""
        self.shown = arms
        n = len(arms)
        if n == 0:
            for handle in self.handles.values():
                handle.visible = False
            return
        poses = self.robot.link_poses(arms.q.to(torch.float64)).numpy()  # (N, L, 4, 4)
        quats = matrix_to_quat(torch.from_numpy(poses[..., :3, :3])).numpy()  # (N, L, 4) w, x, y, z
        opacities = np.clip(arms.opacities, 0.0, 1.0).astype(np.float32)
        transparent = bool((opacities < 1.0).any())
        for mesh in self.meshes:
            k = self.index[mesh.link]
            positions = (poses[:, k, :3, 3] + arms.offsets).astype(np.float32)
            name = f"{self.prefix}/{mesh.link}"
            if n != self.count or name not in self.handles:
                self.handles[name] = self.scene.add_batched_meshes_simple(
                    name,
                    mesh.vertices,
                    mesh.faces,
                    batched_wxyzs=quats[:, k].astype(np.float32),
                    batched_positions=positions,
                    batched_colors=arms.colors,
                    batched_opacities=opacities,
                    opacity=1.0 if transparent else None,
                    lod="off",
                    cast_shadow=False,
                    receive_shadow=False,
                )
            else:
                handle = self.handles[name]
                handle.batched_wxyzs = quats[:, k].astype(np.float32)
                handle.batched_positions = positions
                handle.batched_colors = arms.colors
                handle.batched_opacities = opacities
                handle.opacity = 1.0 if transparent else None
                handle.visible = True
        self.count = n

    def remove(self) -> None:
        """Remove every node of the layer."""
        for handle in self.handles.values():
            handle.remove()
        self.handles.clear()
        self.count = -1
