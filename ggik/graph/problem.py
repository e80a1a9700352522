"""An IK problem in graph form: the partial graph (:class:`PartialGraph`), and the names of the graph's node types
and known-edge kinds. The goals it is made of are :class:`ggik.graph.Goals` (:mod:`ggik.graph.robot_graph`: they name
the graph that posed them)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["PartialGraph", "NODE_TYPES", "EDGE_KINDS"]


NODE_TYPES = ("base", "joint", "ee")  #: node type ids 0, 1, 2
EDGE_KINDS = ("base", "structure", "bounded", "anchor_goal")  #: kinds of known edges in the partial graph


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
