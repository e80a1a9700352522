"""A graph (:class:`ggik.graph.structure.GraphStructure`, e.g. a :class:`ggik.graph.RobotGraph`) as JSON, format
``ggik-graph/1``."""

from __future__ import annotations

import torch

from ggik.graph.frames import AXIS_LENGTH
from ggik.graph.problem import EDGE_KINDS, NODE_TYPES
from ggik.graph.structure import GraphStructure

__all__ = ["graph_dict"]


def graph_dict(graph: GraphStructure, digits: int = 12) -> dict:
    """A JSON-ready, human-diffable description of ``graph``: nodes (with their home positions [m, graph frame]), known
    edges with lengths [m], anchors, the constant frames. Lengths and coordinates rounded to ``digits`` decimals."""
    rnd = lambda x: round(float(x), digits) + 0.0  # noqa: E731  (+0.0 turns -0.0 into 0.0)
    home = graph.home
    nodes = [
        {
            "name": name,
            "type": NODE_TYPES[int(graph.node_type[k])],
            "frame": int(graph.node_frame[k]),
            "anchor": bool(graph.anchor_mask[k]),
            "home": [rnd(v) for v in home[k]],
        }
        for k, name in enumerate(graph.node_names)
    ]
    edges = []
    for (a, b), kind in graph.edge_kind.items():
        length = None if kind == "anchor_goal" else rnd(torch.linalg.vector_norm(home[a] - home[b]))
        edges.append({"u": graph.node_names[a], "v": graph.node_names[b], "kind": kind, "length": length})
    return {
        "format": "ggik-graph/1",
        "robot": graph.robot.name,
        "convention": graph.convention,
        "ee_anchor": graph.ee_anchor,
        "base_link": graph.robot.base_link,
        "ee_link": graph.robot.ee_link,
        "dof": graph.n,
        "joint_names": list(graph.robot.joint_names),
        "axis_length": AXIS_LENGTH,
        "num_nodes": graph.num_nodes,
        "anchors": [graph.node_names[k] for k in range(graph.num_nodes) if graph.anchor_mask[k]],
        "nodes": nodes,
        "known_edges": edges,
        "counts": {kind: sum(1 for k in graph.edge_kind.values() if k == kind) for kind in EDGE_KINDS},
        "T_base_graph": [[rnd(v) for v in row] for row in graph.T_base_graph],
        "T_tool": [[rnd(v) for v in row] for row in graph.T_tool],
    }
