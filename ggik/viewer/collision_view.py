"""The robot's collision model in the viewer (``ggik view --show-collision``, :attr:`ViewerConfig.show_collision`).

Every capsule of the :class:`ggik.collision.CollisionModel` the solves keep clear (a collision file and SRDF of
``--collision`` / ``--srdf``, else the model ggik builds from the URDF) is one translucent mesh node
``/collision/{k}_{link}_{capsule|sphere}`` (k: the capsule's index in the model; a sphere is a capsule whose ends
coincide, drawn as a ball). Its triangles are fixed in its link's frame and the node is posed with that link at the
displayed configuration (:meth:`CollisionLayer.show`): red (``collision_hit_color``) where the capsule overlaps an
obstacle or, in one of the model's self-collision pairs, another link (a signed distance below 0, as
:meth:`ggik.collision.Clearance.distances` says), else ``collision_color``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ggik.collision import Clearance, CollisionConfig, CollisionModel, Scene
from ggik.kinematics.geometry import matrix_to_quat
from ggik.kinematics.robot import Robot
from ggik.viewer.config import ViewerConfig
from ggik.viewer.meshes import capsule_mesh

__all__ = ["CollisionLayer", "PREFIX"]

PREFIX = "/collision"  #: the scene folder of the capsule nodes


class CollisionLayer:
    """The capsule nodes of ``model`` (built for ``robot``) in a viser scene (``scene``: ``server.scene``).

    Args:
        obstacles: the scene whose obstacles turn a capsule red (None: self-collision alone).
        settings: the :class:`ggik.CollisionConfig` of the solves (only ``self_collision`` matters here: its files
            already made ``model``; None: the defaults).
        config: the viewer's colours and opacity (``collision_color``, ``collision_hit_color``,
            ``collision_opacity``).

    Attributes:
        vertices: per capsule (V_k, 3) float64 [m] its triangles' corners in its link's frame; ``faces`` (F_k, 3).
        nodes: the node names, one per capsule of the model, in its order.
        poses: (L, 4, 4) float64 the link poses [m] (base-link frame) of the configuration shown (None: none yet).
        hits: (C,) bool, the capsules in collision there.
        q: (dof,) the configuration [rad] last given to :meth:`show` (None: none, or hidden).
        enabled: the capsules are drawn (False: :meth:`show` keeps ``q`` but hides them; the panel's checkbox).
    """

    def __init__(
        self,
        scene: Any,
        robot: Robot,
        model: CollisionModel,
        obstacles: Scene | None,
        settings: CollisionConfig | None,
        config: ViewerConfig,
    ) -> None:
        model.check_robot(robot)
        self.scene, self.robot, self.model, self.config = scene, robot, model, config
        settings = (settings or CollisionConfig()).without_files()
        self.clearance = Clearance(robot, model, obstacles, settings)  # SceneError for a frame the robot lacks
        self.vertices: list[np.ndarray] = []
        self.faces: list[np.ndarray] = []
        self.nodes: list[str] = []
        self.handles: list[Any] = []
        for k in range(len(model.source)):
            a, b = model.a[k].numpy(), model.b[k].numpy()
            kind = "sphere" if bool(torch.equal(model.a[k], model.b[k])) else "capsule"
            vertices, faces = capsule_mesh(a, b, float(model.radius[k]))
            self.vertices.append(np.asarray(vertices, dtype=np.float64))
            self.faces.append(np.asarray(faces, dtype=np.uint32))
            self.nodes.append(f"{PREFIX}/{k}_{model.link_names[int(model.link[k])]}_{kind}")
        self.poses: np.ndarray | None = None
        self.hits = np.zeros(len(self.nodes), dtype=bool)
        self.q: torch.Tensor | None = None
        self.enabled = True

    def enable(self, on: bool) -> None:
        """Draw the capsules (on the configuration last shown) or hide them."""
        self.enabled = bool(on)
        self.show(self.q)

    def in_collision(self, q: torch.Tensor) -> np.ndarray:
        """(C,) bool: each capsule's pairs (with the obstacles, and its self-collision pairs) that overlap at joint
        values ``q`` (dof,) [rad]."""
        c = self.clearance
        d = c.distances(q.to(torch.float64))  # (P,): capsule-obstacle pairs, capsule-box pairs, self pairs
        first = torch.cat([c.cap_pairs[:, 0], c.box_pairs[:, 0], c.self_pairs[:, 0]])
        over = d < 0
        hits = torch.zeros(len(self.nodes), dtype=torch.bool)
        hits[first[over]] = True
        hits[c.self_pairs[:, 1][over[c.obstacle_pairs :]]] = True
        return hits.numpy()

    def show(self, q: torch.Tensor | None) -> None:
        """Pose every capsule with its link at joint values ``q`` (dof,) [rad], coloured by :meth:`in_collision`;
        None hides them (so does :attr:`enabled` False)."""
        self.q = q
        if q is None or not self.enabled:
            for handle in self.handles:
                handle.visible = False
            return
        q = q.reshape(-1).to(torch.float64)
        poses = self.robot.link_poses(q)  # (L, 4, 4)
        quats = matrix_to_quat(poses[:, :3, :3]).numpy()
        self.poses, self.hits = poses.numpy(), self.in_collision(q)
        c = self.config
        for k, name in enumerate(self.nodes):
            link = int(self.model.link[k])
            color = c.collision_hit_color if self.hits[k] else c.collision_color
            wxyz, position = quats[link], self.poses[link, :3, 3]
            if len(self.handles) <= k:
                self.handles.append(
                    self.scene.add_mesh_simple(
                        name,
                        self.vertices[k].astype(np.float32),
                        self.faces[k],
                        color=color,
                        opacity=c.collision_opacity,
                        wxyz=wxyz,
                        position=position,
                        cast_shadow=False,
                        receive_shadow=False,
                    )
                )
                continue
            handle = self.handles[k]
            handle.wxyz, handle.position, handle.color, handle.visible = wxyz, position, color, True

    def world_vertices(self, k: int) -> np.ndarray:
        """(V_k, 3) float64 [m] capsule ``k``'s mesh in the base-link frame at the configuration shown."""
        if self.poses is None:
            raise ValueError("no configuration shown yet")
        T = self.poses[int(self.model.link[k])]
        return self.vertices[k] @ T[:3, :3].T + T[:3, 3]

    def shown(self) -> list[str]:
        """The names of the capsule nodes drawn now."""
        return [name for name, handle in zip(self.nodes, self.handles) if handle.visible]
