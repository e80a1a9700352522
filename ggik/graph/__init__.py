"""Layer 3, the GGIK graph: a robot's distance-geometric point set (:class:`RobotGraph`), goals checked once
and mapped into the graph frame (:class:`Goals`), IK problems as partial graphs (:class:`PartialGraph`),
and dense padded batches for the model (:class:`GraphBatch`)."""

from ggik.graph.batch import GraphBatch
from ggik.graph.problem import Goals, PartialGraph
from ggik.graph.robot_graph import RobotGraph

__all__ = ["RobotGraph", "Goals", "PartialGraph", "GraphBatch"]
