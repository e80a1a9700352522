"""Export of GGIK examples as PyTorch Geometric ``Data`` objects, for users of PyG models.

ggik's own model works on dense padded batches (:class:`ggik.graph.GraphBatch`); this is the bridge to the
PyG ecosystem (``torch_geometric.loader.DataLoader`` collates these objects across robots of any DOF).
"""

from __future__ import annotations

from typing import Any

import torch

from ggik.graph.problem import PartialGraph
from ggik.graph.structure import GraphStructure

__all__ = ["pyg_data"]


def pyg_data(
    graph: GraphStructure,
    problem: PartialGraph,
    T_goal: torch.Tensor,
    solution: tuple[torch.Tensor, torch.Tensor] | None,
) -> Any:
    """One example as a ``torch_geometric.data.Data`` (:meth:`ggik.graph.RobotGraph.to_pyg` checks its inputs and
    makes the parts): the partial graph ``problem`` of one goal ``T_goal`` (4, 4) [m, base-link frame] on ``graph``,
    and ``solution`` (its point set (N, 3) [m, graph frame], its joint values (n,)) or None for a problem.

    Fields (N nodes, E = N (N - 1) directed edges; index tensors are named ``*_index`` so that batches of robots with
    different DOF collate correctly): ``edge_index`` (2, E) complete graph; ``known_mask`` (E,) bool known edges;
    ``anchor_mask`` (N,); ``node_type``, ``node_frame``, ``node_kind`` (N,) long; ``known_positions`` (N, 3) known
    positions (0 elsewhere); ``known_distances`` (E, 1) known distances (0 elsewhere); ``goal`` (1, 4, 4) F_n in the
    graph frame; ``T_goal`` (1, 4, 4) EE goal in the base link frame; ``num_joints``; and with a solution: ``pos``
    (N, 3), ``dist`` (E, 1) and ``q`` (n,) (a batch concatenates them: split by ``num_joints``).
    """
    from torch_geometric.data import Data  # imported here: the rest of ggik does not need PyG

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
    if solution is not None:
        pos, q = solution
        data.pos = pos
        data.dist = torch.linalg.vector_norm(pos[ei[0]] - pos[ei[1]], dim=-1)[:, None]
        data.q = q  # (n,): (1, n) rows of different n would not collate
    return data
