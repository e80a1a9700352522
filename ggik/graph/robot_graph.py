"""The GGIK graph of a robot that poses goals (:class:`RobotGraph`), the goals it checks once (:class:`Goals`), the
graphs that pose each goal kind (:class:`KindGraphs`) and the partial graph of goals (:func:`partial_graph`).

The representation (nodes, known edges, constant frames, point sets of joint values) is
:class:`ggik.graph.structure.GraphStructure`'s, which :class:`RobotGraph` extends. All point coordinates are in the
*graph frame* ``F_0`` (a frame on the first joint's axis). Users never see it: ``realize`` takes joint values,
``partial`` and ``joint_angles`` take EE goal poses in the robot's base link frame, exactly as :meth:`ggik.Robot.fk`
returns them. The EE link may be rotated or offset from the last joint axis: that constant tool transform is handled
here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import torch

from ggik.errors import GoalError, GraphError
from ggik.graph.angles import recover_joint_angles, wrap_to_limits
from ggik.graph.conventions import GRAPH_CONVENTIONS
from ggik.graph.export import graph_dict
from ggik.graph.frames import AXIS_LENGTH, classical_mds, points_from_frames, rz_left
from ggik.graph.goal_kinds import check_goal_kind, goal_poses
from ggik.graph.problem import EDGE_KINDS, NODE_TYPES, PartialGraph
from ggik.graph.pyg import pyg_data
from ggik.graph.structure import GraphStructure
from ggik.kinematics.robot import Robot

__all__ = ["RobotGraph", "PartialGraph", "Goals", "classical_mds", "points_from_frames", "rz_left", "NODE_TYPES"]
__all__ += ["EDGE_KINDS", "AXIS_LENGTH", "GRAPH_CONVENTIONS", "KindGraphs", "partial_graph", "GraphStructure"]


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


class KindGraphs:
    """The graphs of one robot and convention that pose each goal kind, each built once and shared by all of them.

    On canonical graphs ``"position"`` goals fix the tool point, not the canonical EE anchor, so they are posed by a
    graph of their own whose p_n is the tool point (``ee_anchor="tool"``); the other kinds by the canonical graph. A
    ``"frames"`` graph poses every kind (its p_n is the tool point already)."""

    def __init__(self, graph: RobotGraph) -> None:
        self.robot, self.convention = graph.robot, graph.convention
        self.by_anchor: dict[str, RobotGraph] = {graph.ee_anchor: graph}  #: ee_anchor -> its graph

    def anchor(self, kind: str | None) -> str:
        """The ``ee_anchor`` of the graph that poses goals of ``kind``."""
        return "tool" if self.convention != "canonical" or check_goal_kind(kind) == "position" else "canonical"

    def graph(self, kind: str | None) -> RobotGraph:
        """The graph that poses goals of ``kind`` (built on first use)."""
        want = self.anchor(kind)
        if want not in self.by_anchor:
            RobotGraph(self.robot, self.convention, ee_anchor=want, kind_graphs=self)
        return self.by_anchor[want]

    def adopt(self, graph: RobotGraph) -> KindGraphs:
        """Register ``graph`` (of this robot and convention) as the graph of its anchor; returns self."""
        self.by_anchor[graph.ee_anchor] = graph
        return self


class RobotGraph(GraphStructure):
    """GGIK graph of a revolute chain, which poses goals. Build with :meth:`from_robot`.

    Attributes: those of :class:`ggik.graph.structure.GraphStructure` (the nodes, known edges and constant frames),
    and ``kind_graphs``: :class:`KindGraphs`, the graphs of this robot and convention that pose each goal kind.
    """

    def __init__(
        self,
        robot: Robot,
        convention: str = "frames",
        ee_anchor: str = "canonical",
        kind_graphs: KindGraphs | None = None,
    ) -> None:
        super().__init__(robot, convention, ee_anchor)
        #: the graphs of this robot and convention that pose each goal kind (this one among them)
        self.kind_graphs = KindGraphs(self) if kind_graphs is None else kind_graphs.adopt(self)

    @classmethod
    def from_robot(cls, robot: Robot, convention: str = "frames") -> RobotGraph:
        """The graph of ``robot`` in ``convention`` (:data:`ggik.graph.conventions.GRAPH_CONVENTIONS`): ``"frames"``
        (the joint frames of the file, the models v1-v9) or ``"canonical"`` (a function of the joint axes alone: the
        same graph for every file of one arm, :mod:`ggik.graph.conventions`). A model works on the graphs of the
        convention it was trained on (``model.cfg.graph``). Raises :class:`GraphError` for prismatic or mimic joints
        on the chain or an unknown convention."""
        return cls(robot, convention)

    def for_goal_kind(self, kind: str | None) -> RobotGraph:
        """The graph that poses goals of ``kind`` (:class:`KindGraphs`): this graph or another of its robot and
        convention. :meth:`goals` maps goals into that graph's frame (and names it: ``Goals.graph``), and
        :meth:`partial` and :meth:`joint_angles` work on it; :meth:`realize` cannot tell kinds apart, so code that makes
        the points of examples asks for the graph of their kind (:meth:`ggik.graph.GraphBatch.from_graph` does)."""
        return self.kind_graphs.graph(kind)

    def goals(self, T_goal, kind: str | None = None) -> Goals:
        """Check EE goals ``T_goal`` of ``kind`` (None: ``"pose"``) in the base link frame; map them to the graph frame.

        The one place where goals are checked: ``ValueError`` for a wrong shape, NaN/inf or a non-rigid pose. Inputs
        per kind: :func:`ggik.graph.goal_kinds.goal_poses` (a pose with kind ``"position"`` has its rotation ignored).
        A :class:`Goals` mapped by the graph that poses its kind is returned as it is, another is mapped into that
        graph's frame (:class:`GoalError` if ``kind`` names another kind). Partial kinds need
        the EE origin on the last joint's axis (:attr:`supports_partial_goals`; :class:`GraphError` otherwise).
        """
        if isinstance(T_goal, Goals):
            if kind is not None and check_goal_kind(kind) != T_goal.kind:
                raise GoalError(f"goals of kind {T_goal.kind!r} given where {kind!r} was asked for")
            posing = self.for_goal_kind(T_goal.kind)
            if T_goal.graph is posing:  # checked and mapped once
                return T_goal
            # checked by another graph (another convention) or made by hand: mapped into this one's frame
            return Goals(T_goal.in_base, posing.goal_in_graph(T_goal.in_base), T_goal.kind, posing)
        kind = check_goal_kind(kind)
        if kind != "pose" and not self.supports_partial_goals:
            raise GraphError(
                f"{self.robot.name}: the EE origin lies {float(self.T_tool[:2, 3].norm()):.3g} m off the last "
                f"joint axis, so a {kind} goal does not fix p_n; use a pose goal or an EE link on that axis"
            )
        graph = self.for_goal_kind(kind)
        T_goal = goal_poses(T_goal, kind, graph.tool_axis)
        return Goals(in_base=T_goal, in_graph=graph.goal_in_graph(T_goal), kind=kind, graph=graph)

    def partial(self, T_goal, kind: str | None = None) -> PartialGraph:
        """The IK problem for EE goals ``T_goal`` of ``kind`` (see :meth:`goals`; or checked :class:`Goals`).

        ``"pose"`` and ``"position+axis"`` anchor p_n and q_n (same known distances); ``"position"`` anchors p_n
        only: q_n's position is 0 and its distances to the base points unknown. Raises ``ValueError`` for bad goals.
        """
        goals = self.goals(T_goal, kind)
        return partial_graph(goals.graph or self, goals)

    def to_pyg(self, q=None, T_goal=None):
        """One example as a ``torch_geometric.data.Data`` (a problem, and its solution if ``q`` is given), for users
        of PyG models: pass ``q`` (n,) for a solved example (``T_goal`` is then FK(q)), or ``T_goal`` (4, 4) [m,
        base-link frame] alone for a problem. The fields: :func:`ggik.graph.pyg.pyg_data`."""
        if q is None and T_goal is None:
            raise ValueError("to_pyg needs q (a solved example) or T_goal (a problem)")
        solution = None
        if q is not None:
            q = self.robot.check_q(q)
            if q.ndim != 1:
                raise ValueError(f"to_pyg takes one configuration q of shape ({self.n},), got {tuple(q.shape)}")
            pos, T_goal = self.realize_with_pose(q)
            solution = (pos, q)
        elif T_goal.shape != (4, 4):
            raise ValueError(f"to_pyg takes one goal pose of shape (4, 4), got {tuple(T_goal.shape)}")
        return pyg_data(self, self.partial(T_goal), T_goal, solution)

    def joint_angles(self, points: torch.Tensor, T_goal: torch.Tensor | Goals) -> torch.Tensor:
        """Joint values (..., n) from (noisy) point sets (..., N, 3) and EE goals (..., 4, 4) (base frame, or
        :class:`Goals` of any kind): :func:`ggik.graph.angles.recover_joint_angles` on the graph that poses the goals'
        kind (:meth:`for_goal_kind`), with the goals checked and mapped once (:meth:`goals`)."""
        if points.shape[-2:] != (self.num_nodes, 3):
            raise ValueError(f"points must have shape (..., {self.num_nodes}, 3), got {tuple(points.shape)}")
        goals = self.goals(T_goal)
        return recover_joint_angles(goals.graph or self, points, goals)

    def wrap_to_limits(self, theta: torch.Tensor) -> torch.Tensor:
        """Angles (..., n) moved into the joint limits where a 2 pi equivalent lies inside
        (:func:`ggik.graph.angles.wrap_to_limits`)."""
        return wrap_to_limits(self.robot, theta)

    def to_dict(self, digits: int = 12) -> dict:
        """A JSON-ready, human-diffable description: nodes, known edges with lengths, anchors, frames
        (:func:`ggik.graph.export.graph_dict`)."""
        return graph_dict(self, digits)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"


def partial_graph(graph: GraphStructure, goals: Goals) -> PartialGraph:
    """The partial graph of checked ``goals`` on ``graph``, the graph that poses their kind
    (:meth:`RobotGraph.partial`)."""
    G = goals.in_graph
    c = graph.constants(G.dtype, G.device)
    batch = G.shape[:-2]
    pos = torch.zeros(batch + (graph.num_nodes, 3), dtype=G.dtype, device=G.device)
    pos[..., :4, :] = c["home"][:4]
    pos[..., -2, :] = G[..., :3, 3]
    pos[..., -1, :] = G[..., :3, 3] + AXIS_LENGTH * G[..., :3, 2]
    D_goal = graph.distances(pos)
    anchors, known = graph.anchor_mask.clone(), graph.known_mask.clone()
    if goals.kind == "position":
        pos[..., -1, :] = 0.0
        anchors[-1] = False
        known[:4, -1] = known[-1, :4] = False
    goal_mask = (known & ~graph.constant_mask).to(G.device)
    D = torch.where(goal_mask, D_goal, c["D_const"].expand_as(D_goal))
    anchors, known = anchors.to(G.device), known.to(G.device)
    return PartialGraph(known_positions=pos, known_distances=D, anchor_mask=anchors, known_mask=known, goal=G)
