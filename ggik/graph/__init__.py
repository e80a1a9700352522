"""Layer 3, the GGIK graph: a robot's distance-geometric point set (:class:`RobotGraph`), goals checked once
and mapped into the graph frame (:class:`Goals`), the graphs that pose each goal kind (:class:`KindGraphs`), IK
problems as partial graphs (:class:`PartialGraph`), and dense padded batches for the model (:class:`GraphBatch`)."""

from ggik.graph.batch import GraphBatch
from ggik.graph.problem import PartialGraph
from ggik.graph.robot_graph import Goals, KindGraphs, RobotGraph

__all__ = ["RobotGraph", "KindGraphs", "Goals", "PartialGraph", "GraphBatch"]
