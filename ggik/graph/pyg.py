"""Export of GGIK examples as PyTorch Geometric ``Data`` objects, for users of PyG models.

ggik's own model works on dense padded batches (:class:`ggik.graph.GraphBatch`); this is the bridge to the
PyG ecosystem (``torch_geometric.loader.DataLoader`` collates these objects across robots of any DOF).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:  # for annotations only: robot_graph imports this module
    from ggik.graph.robot_graph import RobotGraph

__all__ = ["to_pyg"]


def to_pyg(graph: RobotGraph, q=None, T_goal=None):
    """One example as a ``torch_geometric.data.Data`` (a problem, and its solution if ``q`` is given).

    Pass ``q`` (n,) for a solved example (``T_goal`` is then FK(q)), or ``T_goal`` (4, 4) alone for a
    problem. Fields (N nodes, E = N (N - 1) directed edges; index tensors are named ``*_index`` so
    that batches of robots with different DOF collate correctly):

    ``edge_index`` (2, E) complete graph; ``known_mask`` (E,) bool known edges; ``anchor_mask`` (N,);
    ``node_type``, ``node_frame``, ``node_kind`` (N,) long; ``known_positions`` (N, 3) known positions
    (0 elsewhere); ``known_distances`` (E, 1) known distances (0 elsewhere); ``goal`` (1, 4, 4) F_n in the
    graph frame; ``T_goal`` (1, 4, 4) EE goal in the base link frame; ``num_joints``; and with ``q``:
    ``pos`` (N, 3), ``dist`` (E, 1) and ``q`` (n,) (a batch concatenates them: split by ``num_joints``).
    """
    from torch_geometric.data import Data  # imported here: the rest of ggik does not need PyG

    if q is None and T_goal is None:
        raise ValueError("to_pyg needs q (a solved example) or T_goal (a problem)")
    if q is not None:
        q = graph.robot.check_q(q)
        if q.ndim != 1:
            raise ValueError(f"to_pyg takes one configuration q of shape ({graph.n},), got {tuple(q.shape)}")
        pos, T_goal = graph.realize_with_pose(q)
    elif T_goal.shape != (4, 4):
        raise ValueError(f"to_pyg takes one goal pose of shape (4, 4), got {tuple(T_goal.shape)}")
    problem = graph.partial(T_goal)
    ei = graph.edge_index.to(T_goal.device)
    data = Data(
        edge_index=ei,
        known_mask=problem.known_mask[ei[0], ei[1]],
        anchor_mask=problem.anchor_mask.clone(),
        node_type=graph.node_type.to(T_goal.device),
        node_frame=graph.node_frame.to(T_goal.device),
        node_kind=graph.node_kind.to(T_goal.device),
        known_positions=problem.known_positions,
        known_distances=problem.known_distances[ei[0], ei[1]][:, None],
        goal=problem.goal[None],
        T_goal=T_goal[None],
        num_joints=graph.n,
        num_nodes=graph.num_nodes,
    )
    if q is not None:
        data.pos = pos
        data.dist = torch.linalg.vector_norm(pos[ei[0]] - pos[ei[1]], dim=-1)[:, None]
        data.q = q  # (n,): (1, n) rows of different n would not collate
    return data
