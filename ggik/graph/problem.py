"""An IK problem in graph form: the goal poses (checked once, in both frames) and the partial graph.

:class:`Goals` is the one place where an end-effector goal is checked (shape, finite, rigid) and mapped
into the graph frame; :meth:`ggik.RobotGraph.goals` builds it, and every later step (partial graph,
model batch, angle recovery) takes it instead of re-checking and re-mapping the raw poses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # a Goals names the graph that posed it; robot_graph imports this module
    from ggik.graph.robot_graph import RobotGraph

__all__ = ["Goals", "PartialGraph", "NODE_TYPES", "EDGE_KINDS"]


NODE_TYPES = ("base", "joint", "ee")  #: node type ids 0, 1, 2
EDGE_KINDS = ("base", "structure", "bounded", "anchor_goal")  #: kinds of known edges in the partial graph


@dataclass(frozen=True)
class Goals:
    """EE goal poses of one robot, batched over leading dims ``...``. Build with :meth:`ggik.RobotGraph.goals`.

    Attributes:
        in_base: (..., 4, 4) EE goal poses in the robot's base-link frame (as :meth:`ggik.Robot.fk` returns).
        in_graph: (..., 4, 4) the same goals as poses of the last graph frame F_n in the graph frame F_0
            (the constant base-to-graph and tool transforms removed).
        kind: the goal kind, one of :data:`ggik.graph.goal_kinds.GOAL_KINDS`. For ``"position+axis"`` and
            ``"position"`` the poses are canonical (:func:`ggik.graph.goal_kinds.goal_poses`): only the position
            and, for ``"position+axis"``, the tool axis are goals; the rest of the rotation is a placeholder.
        graph: the :class:`ggik.RobotGraph` whose graph frame ``in_graph`` is in: the graph that poses this kind
            (:meth:`ggik.RobotGraph.for_goal_kind`); None: not known (mapped by the next graph that takes them).
    """

    in_base: torch.Tensor
    in_graph: torch.Tensor
    kind: str = "pose"
    graph: RobotGraph | None = field(default=None, compare=False, repr=False)

    @property
    def shape(self) -> torch.Size:
        """The batch shape ``...``."""
        return self.in_base.shape[:-2]

    def __getitem__(self, index) -> Goals:
        """Index the batch dims of both poses alike, e.g. ``goals[a:b]`` or ``goals[:, None]``."""
        if not isinstance(index, tuple):
            index = (index,)
        return Goals(self.in_base[index], self.in_graph[index], self.kind, self.graph)

    def to(self, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Goals:
        in_base, in_graph = self.in_base.to(device=device, dtype=dtype), self.in_graph.to(device=device, dtype=dtype)
        return Goals(in_base, in_graph, self.kind, self.graph)


@dataclass
class PartialGraph:
    """An IK problem as a partial graph (batched over leading dims ``...``).

    Attributes:
        known_positions: (..., N, 3) known node positions in the graph frame [m]; unknown nodes are 0.
        known_distances: (..., N, N) known distances [m]; unknown entries are 0.
        anchor_mask: (N,) bool, nodes with known positions (p0, x, y, q0, pn, qn; no qn for a position goal).
        known_mask: (N, N) bool, symmetric, edges with known distances.
        goal: (..., 4, 4) pose of the last graph frame F_n in the graph frame.
    """

    known_positions: torch.Tensor
    known_distances: torch.Tensor
    anchor_mask: torch.Tensor
    known_mask: torch.Tensor
    goal: torch.Tensor

    @property
    def positions(self) -> torch.Tensor:
        """Alias of :attr:`known_positions` (the name before ggik 0.1.1)."""
        return self.known_positions

    @property
    def distances(self) -> torch.Tensor:
        """Alias of :attr:`known_distances` (the name before ggik 0.1.1)."""
        return self.known_distances
