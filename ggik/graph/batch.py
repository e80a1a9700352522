"""Dense, padded batches of GGIK problems (and solutions) for the model.

GGIK graphs are small and complete (16 to ~64 nodes), so the model works on dense tensors
(batch, nodes, nodes) rather than sparse edge lists: at these sizes, batched matrix products over all node
pairs train faster on a CPU than the same layer as gather/scatter message passing (PyG ``MessagePassing``; the
training-speed study in ``benchmarks/`` measures both). Robots with different DOF share a batch by padding to
the largest node count; ``node_mask`` marks real nodes.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

import torch

from ggik.graph.handedness import link_slots
from ggik.graph.robot_graph import Goals, RobotGraph

__all__ = ["GraphBatch", "node_volumes"]


@dataclass
class GraphBatch:
    """B problems padded to N nodes. Coordinates are in each robot's graph frame [m].

    Attributes:
        node_mask: (B, N) bool, real (not padding) nodes.
        anchor_mask: (B, N) bool, nodes whose positions the problem fixes.
        node_type, node_kind, node_frame: (B, N) long node roles (see :class:`RobotGraph`).
        num_joints: (B,) long, DOF of each problem's robot.
        known_positions: (B, N, 3) known positions, 0 for unknown and padding nodes.
        known_distances: (B, N, N) known distances, 0 elsewhere.
        known_mask: (B, N, N) bool, edges with known distances.
        goal: (B, 4, 4) pose of the last graph frame in the graph frame.
        T_goal: (B, 4, 4) EE goal in the robot's base-link frame.
        pos: (B, N, 3) true positions of a solution, or None for pure problems.
        q: (B, dof_max) joint values of that solution (0-padded), or None.
        node_volume: (B, N) at node p_i (i = 1 .. n, index 2 i + 2) the signed volume V_i of link i [m^3]
            (:attr:`RobotGraph.link_volumes`: 0 on links that are not skew), 0 on every other node; None in a batch
            made without it. :meth:`link_volumes` reads it per link.
    """

    node_mask: torch.Tensor
    anchor_mask: torch.Tensor
    node_type: torch.Tensor
    node_kind: torch.Tensor
    node_frame: torch.Tensor
    num_joints: torch.Tensor
    known_positions: torch.Tensor
    known_distances: torch.Tensor
    known_mask: torch.Tensor
    goal: torch.Tensor
    T_goal: torch.Tensor
    pos: torch.Tensor | None = None
    q: torch.Tensor | None = None
    node_volume: torch.Tensor | None = None

    def link_volumes(self) -> torch.Tensor:
        """(B, L) the arm's signed volume of every link slot l = 1 .. L = (N - 4) // 2 [m^3] (0 where not skew, on
        padding, and everywhere in a batch without ``node_volume``)."""
        slots = link_slots(self.num_nodes)
        if self.node_volume is None:
            return self.known_positions.new_zeros(self.batch_size, slots)
        return self.node_volume[:, 4::2][:, :slots]

    @property
    def batch_size(self) -> int:
        return self.node_mask.shape[0]

    @property
    def num_nodes(self) -> int:
        return self.node_mask.shape[1]

    @classmethod
    def from_graph(
        cls,
        graph: RobotGraph,
        T_goal: torch.Tensor | Goals | None = None,
        q: torch.Tensor | None = None,
        kind: str | None = None,
    ) -> GraphBatch:
        """Problems of one robot: goals ``T_goal`` (B, 4, 4) in the base-link frame (or checked :class:`Goals`),
        or solved examples from ``q`` (B, dof); ``kind`` is the goal kind (None: ``"pose"``, or that of
        :class:`Goals`), see :meth:`RobotGraph.goals`. The points of solved examples are those of the graph that poses
        goals of that kind (:meth:`RobotGraph.for_goal_kind`)."""
        graph = graph.for_goal_kind(T_goal.kind if isinstance(T_goal, Goals) else kind)
        if q is not None:
            q = graph.robot.check_q(q)
            if q.ndim != 2:
                raise ValueError(f"q must have shape (B, {graph.n}), got {tuple(q.shape)}")
            pos, T_goal = graph.realize_with_pose(q)
        elif T_goal is None:
            raise ValueError("GraphBatch.from_graph needs T_goal (problems) or q (solved examples)")
        else:
            if not isinstance(T_goal, Goals) and T_goal.ndim != 3:
                raise ValueError(f"T_goal must have shape (B, 4, 4), got {tuple(T_goal.shape)}")
            pos = None
        goals = graph.goals(T_goal, kind)
        if len(goals.shape) != 1:
            raise ValueError(f"goals must have one batch dimension (B, 4, 4), got batch shape {tuple(goals.shape)}")
        problem = graph.partial(goals)
        T_goal = goals.in_base
        B, N, dev = T_goal.shape[0], graph.num_nodes, T_goal.device

        def per_node(t: torch.Tensor) -> torch.Tensor:
            return t.to(dev).expand(B, N).clone()

        return cls(
            node_mask=torch.ones(B, N, dtype=torch.bool, device=dev),
            anchor_mask=per_node(problem.anchor_mask),
            node_type=per_node(graph.node_type),
            node_kind=per_node(graph.node_kind),
            node_frame=per_node(graph.node_frame),
            num_joints=torch.full((B,), graph.n, dtype=torch.long, device=dev),
            known_positions=problem.known_positions,
            known_distances=problem.known_distances,
            known_mask=problem.known_mask.expand(B, N, N).clone(),
            goal=problem.goal,
            T_goal=T_goal,
            pos=pos,
            q=q,
            node_volume=per_node(node_volumes(graph).to(problem.known_positions.dtype)),
        )

    @classmethod
    def cat(cls, batches: list[GraphBatch]) -> GraphBatch:
        """Concatenate batches along B, padding nodes (and q) to the largest size."""
        if not batches:
            raise ValueError("GraphBatch.cat needs at least one batch")
        N = max(b.num_nodes for b in batches)
        has_pos = [b.pos is not None for b in batches]
        if any(has_pos) and not all(has_pos):
            raise ValueError("cannot concatenate solved examples with pure problems")
        if any(b.node_volume is None for b in batches) and not all(b.node_volume is None for b in batches):
            batches = [b if b.node_volume is not None else replace(b, node_volume=_zero_volumes(b)) for b in batches]
        dof = max((b.q.shape[1] for b in batches if b.q is not None), default=0)
        out: dict[str, Any] = {}  # field name -> padded tensor (or None): keyword arguments of cls
        for f in fields(cls):
            parts = [getattr(b, f.name) for b in batches]
            if parts[0] is None:
                out[f.name] = None
                continue
            padded = []
            for b, t in zip(batches, parts):
                pad = N - b.num_nodes
                if f.name == "q":
                    t = torch.nn.functional.pad(t, (0, dof - t.shape[1]))
                elif f.name in ("known_distances", "known_mask"):
                    t = torch.nn.functional.pad(t, (0, pad, 0, pad))
                elif f.name in ("known_positions", "pos"):
                    t = torch.nn.functional.pad(t, (0, 0, 0, pad))
                elif t.ndim == 2:  # per-node (B, N) fields
                    t = torch.nn.functional.pad(t, (0, pad))
                padded.append(t)
            out[f.name] = torch.cat(padded, dim=0)
        return cls(**out)

    def to(self, device: torch.device | str | None = None, dtype: torch.dtype | None = None) -> GraphBatch:
        """Move to ``device``; floating tensors take ``dtype`` if given."""
        changes = {}
        for f in fields(self):
            t = getattr(self, f.name)
            if t is None:
                continue
            changes[f.name] = t.to(
                device=device, dtype=dtype if (dtype is not None and t.is_floating_point()) else None
            )
        return replace(self, **changes)

    def select(self, index: torch.Tensor | slice) -> GraphBatch:
        """The sub-batch of problems ``index`` (padding kept)."""
        parts: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        parts = {k: None if t is None else t[index] for k, t in parts.items()}
        return replace(self, **parts)

    def trimmed(self) -> GraphBatch:
        """The same problems without the node columns that are padding in every problem (a sub-batch of small robots
        taken from a batch padded for larger ones). Returns ``self`` when no column can go: none is padding everywhere,
        or the padding is not at the end of each problem's nodes. One host sync (the largest real node count)."""
        n = int(self.node_mask.sum(1).max())
        if n == self.num_nodes or bool(self.node_mask[:, n:].any()):
            return self
        per_node = (
            "node_mask",
            "anchor_mask",
            "node_type",
            "node_kind",
            "node_frame",
            "known_positions",
            "pos",
            "node_volume",
        )
        changes: dict[str, Any] = {k: getattr(self, k)[:, :n] for k in per_node if getattr(self, k) is not None}
        changes.update({k: getattr(self, k)[:, :n, :n] for k in ("known_distances", "known_mask")})
        return replace(self, **changes)


def node_volumes(graph: RobotGraph) -> torch.Tensor:
    """(N,) the graph's link volumes at the nodes p_i (index 2 i + 2), 0 elsewhere (:attr:`GraphBatch.node_volume`)."""
    out = torch.zeros(graph.num_nodes, dtype=torch.float64)
    out[4::2] = graph.link_volumes
    return out


def _zero_volumes(batch: GraphBatch) -> torch.Tensor:
    return batch.known_positions.new_zeros(batch.node_mask.shape)
