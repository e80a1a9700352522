"""The GGIK distance-geometric point set of a revolute chain, its partial and complete graphs.

Representation (GGIK, Limoyo, Marić et al.; see ``RobotGraph`` for details). For a chain of ``n``
revolute joints there are ``n + 1`` frames ``F_0 .. F_n``: ``F_{i-1}`` sits on the axis of joint ``i`` with its z
axis along it, so joint ``i`` turns about z of ``F_{i-1}``; ``F_n`` lies on the last axis (the end-effector anchor).
Where along each axis, and how the base frame is turned, is the graph's *convention*
(:mod:`ggik.graph.conventions`): ``"frames"`` takes the file's joint frames and the foot of the end-effector (EE)
origin (the models v1-v9), ``"canonical"`` a function of the joint axes alone. Each frame gives two points, ``p_i``
(its origin) and ``q_i = p_i + L z_i`` with ``L = 1``; two more base points ``x = (L, 0, 0)`` and ``y = (0, -L, 0)``
fix the frame. Node order: ``[p0, x, y, q0, p1, q1, ..., pn, qn]``, ``N = 2 n + 4`` nodes.

All point coordinates are in the *graph frame* ``F_0`` (a frame on the first joint's axis). Users never see it:
``realize`` takes joint values, ``partial`` and ``joint_angles`` take EE goal poses in the robot's base
link frame, exactly as :meth:`Robot.fk` returns them. The EE link may be rotated or offset from the
last joint axis: that constant tool transform is handled here.
"""

from __future__ import annotations

import json

import torch

from ggik.errors import GoalError, GraphError
from ggik.graph.angles import recover_joint_angles, wrap_to_limits
from ggik.graph.conventions import GRAPH_CONVENTIONS, check_convention, graph_frames
from ggik.graph.frames import AXIS_LENGTH, classical_mds, points_from_frames, rz_left
from ggik.graph.goal_kinds import check_goal_kind, goal_poses
from ggik.graph.problem import EDGE_KINDS, NODE_TYPES, Goals, PartialGraph
from ggik.kinematics import geometry as geo
from ggik.kinematics.consts import ConstCache
from ggik.kinematics.robot import Robot

__all__ = ["RobotGraph", "PartialGraph", "Goals", "classical_mds", "points_from_frames", "rz_left", "NODE_TYPES"]
__all__ += ["EDGE_KINDS", "AXIS_LENGTH", "GRAPH_CONVENTIONS", "KindGraphs", "partial_graph"]

CONSTANT_TOL = 1e-9  #: a point closer than this to an axis [m] is on it (decides constant edges)


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


class RobotGraph:
    """GGIK graph of a revolute chain. Build with :meth:`from_robot`.

    Attributes:
        robot: the :class:`Robot`.
        convention: ``"frames"`` or ``"canonical"`` (:mod:`ggik.graph.conventions`).
        ee_anchor: where p_n is: ``"tool"`` (the foot of the EE origin on the last axis: every "frames" graph, and the
            canonical graph of position goals) or ``"canonical"`` (a fixed distance along the last axis).
        n: number of joints (= ``robot.dof``); N = 2 n + 4 nodes.
        node_names: ("p0", "x", "y", "q0", "p1", "q1", ...).
        node_type: (N,) long, index into :data:`NODE_TYPES` (x, y, p0, q0 base; pn, qn ee; else joint).
        node_frame: (N,) long, frame index i of p_i / q_i (x, y: 0).
        node_kind: (N,) long, 0 = p, 1 = q, 2 = x, 3 = y.
        anchor_mask: (N,) bool, nodes whose position the problem fixes.
        known_mask: (N, N) bool, edges whose length the problem fixes (base, structure, constant
            bounded edges, anchor-goal edges).
        edge_kind: dict (u, v) -> kind for every known pair u < v.
        T_base_graph: (4, 4) pose of the graph frame F_0 in the base link frame.
        T_tool: (4, 4) pose of the EE link in the last graph frame F_n (constant).
        kind_graphs: :class:`KindGraphs`, the graphs of this robot and convention that pose each goal kind.
    """

    def __init__(
        self,
        robot: Robot,
        convention: str = "frames",
        ee_anchor: str = "canonical",
        kind_graphs: KindGraphs | None = None,
    ) -> None:
        bad = [(j.name, j.type) for j in robot.joints if j.type == "prismatic"]
        if bad:
            name, _ = bad[0]
            raise GraphError(
                f"{robot.name}: prismatic joint {name!r} cannot be represented by the GGIK graph (revolute joints "
                f"only); lock it at a value, e.g. robot.lock({{{name!r}: 0.0}})"
            )
        mimic = [j.name for j in robot.joints if j.mimic is not None and j.type != "fixed"]
        if mimic:
            raise GraphError(
                f"{robot.name}: mimic joint {mimic[0]!r} cannot be represented by the GGIK graph; lock its source "
                f"joint with robot.lock({{...}})"
            )
        self.robot = robot
        self.convention = check_convention(convention)
        self.ee_anchor = ee_anchor if convention == "canonical" else "tool"
        n = self.n = robot.dof
        N = self.num_nodes = 2 * n + 4

        _, T_ee = robot.joint_frames(torch.zeros(n, dtype=torch.float64))
        F = graph_frames(robot, convention, ee_anchor)  # (n+1, 4, 4) in the base frame
        T_base_graph = F[0].clone()
        F_graph = geo.invert_transform(T_base_graph) @ F
        F_graph[0] = torch.eye(4, dtype=torch.float64)  # exactly, not T^-1 T up to rounding
        C = geo.invert_transform(F_graph[:-1]) @ F_graph[1:]  # (n, 4, 4): F_{i-1}^-1 F_i at home
        T_tool = geo.invert_transform(F[-1]) @ T_ee

        names = ["p0", "x", "y", "q0"] + [f"{c}{i}" for i in range(1, n + 1) for c in "pq"]
        nframe = [0, 0, 0, 0] + [i for i in range(1, n + 1) for _ in "pq"]
        nkind = [0, 2, 3, 1] + [k for _ in range(1, n + 1) for k in (0, 1)]
        ntype = [0, 0, 0, 0] + [2 if i == n else 1 for i in range(1, n + 1) for _ in "pq"]
        self.node_names = tuple(names)
        self.node_type = torch.tensor(ntype)
        self.node_frame = torch.tensor(nframe)
        self.node_kind = torch.tensor(nkind)
        idx = {name: k for k, name in enumerate(names)}
        self._idx = idx
        anchors = ["p0", "x", "y", "q0", f"p{n}", f"q{n}"]
        self.anchor_mask = torch.zeros(N, dtype=torch.bool)
        self.anchor_mask[[idx[a] for a in anchors]] = True

        home = points_from_frames(F_graph)  # the frames at q = 0 are the home frames
        self._home = home

        # Known edges.
        kinds: dict[tuple[int, int], str] = {}

        def add(u: str, v: str, kind: str) -> None:
            a, b = sorted((idx[u], idx[v]))
            kinds.setdefault((a, b), kind)

        base = ["p0", "x", "y", "q0"]
        for a in range(4):
            for b in range(a + 1, 4):
                add(base[a], base[b], "base")
        for i in range(n + 1):
            add(f"p{i}", f"q{i}", "structure")
        for i in range(1, n + 1):
            for u in (f"p{i - 1}", f"q{i - 1}"):
                for v in (f"p{i}", f"q{i}"):
                    add(u, v, "structure")

        def off_axis(point: torch.Tensor, i: int) -> float:
            """Distance [m] of a home point from the axis of joint i (z of F_{i-1})."""
            o, z = home[idx[f"p{i - 1}"]], home[idx[f"q{i - 1}"]] - home[idx[f"p{i - 1}"]]
            r = point - o
            return float(torch.linalg.vector_norm(r - (r @ z) * z))

        # Pairs two bodies apart: their distance varies only with joint i (the points of body i-2 lie on
        # axis i-1), so it is constant iff one of the two points lies on axis i.
        for i in range(1, n + 1):
            before = ["x", "y"] if i == 1 else [f"p{i - 2}", f"q{i - 2}"]
            for u in before:
                for v in (f"p{i}", f"q{i}"):
                    if min(off_axis(home[idx[u]], i), off_axis(home[idx[v]], i)) < CONSTANT_TOL:
                        add(u, v, "bounded")
        for u in base:
            for v in (f"p{n}", f"q{n}"):
                add(u, v, "anchor_goal")
        self.edge_kind = dict(sorted(kinds.items()))
        known = torch.zeros(N, N, dtype=torch.bool)
        for a, b in self.edge_kind:
            known[a, b] = known[b, a] = True
        self.known_mask = known
        goal_dependent = torch.zeros(N, N, dtype=torch.bool)
        for (a, b), kind in self.edge_kind.items():
            if kind == "anchor_goal":
                goal_dependent[a, b] = goal_dependent[b, a] = True
        self._constant_mask = known & ~goal_dependent
        D_home = torch.cdist(home, home)
        D_const = torch.where(self._constant_mask, D_home, torch.zeros_like(D_home))
        consts = dict(C=C, T_base_graph=T_base_graph, T_tool=T_tool, home=home, D_const=D_const)
        self._consts = ConstCache({k: v.numpy() for k, v in consts.items()})
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

    def constants(self, dtype: torch.dtype, device: torch.device | str) -> dict[str, torch.Tensor]:
        """The graph's constant tensors (``home``, ``C``, ``D_const``, ...) in ``dtype`` on ``device`` (cached)."""
        return self._consts.get(dtype, torch.device(device))

    # ------------------------------------------------------------------ properties
    @property
    def T_base_graph(self) -> torch.Tensor:
        return torch.as_tensor(self._consts.arrays["T_base_graph"])

    @property
    def T_tool(self) -> torch.Tensor:
        return torch.as_tensor(self._consts.arrays["T_tool"])

    @property
    def C(self) -> torch.Tensor:
        """(n, 4, 4) the home transforms F_{i-1}^-1 F_i (joint i turns F_i about z of F_{i-1})."""
        return torch.as_tensor(self._consts.arrays["C"])

    @property
    def home(self) -> torch.Tensor:
        """(N, 3) the point set at the zero configuration [m, graph frame]."""
        return torch.as_tensor(self._consts.arrays["home"])

    @property
    def D_const(self) -> torch.Tensor:
        """(N, N) the known distances that no goal changes [m], 0 elsewhere."""
        return torch.as_tensor(self._consts.arrays["D_const"])

    @property
    def constant_mask(self) -> torch.Tensor:
        """(N, N) bool, the known edges whose length no goal changes (all known edges but anchor-goal ones)."""
        return self._constant_mask.clone()

    @property
    def edge_index(self) -> torch.Tensor:
        """(2, N (N - 1)) complete directed graph, row-major: (0,1), (0,2), ..., (1,0), (1,2), ..."""
        N = self.num_nodes
        return (~torch.eye(N, dtype=torch.bool)).nonzero().T.contiguous()

    # ------------------------------------------------------------------ solutions
    def frames(self, q) -> torch.Tensor:
        """Graph frames F_0 .. F_n (..., n + 1, 4, 4) in the graph frame for joint values q (..., n)."""
        q = self.robot.check_q(q)
        c = self._consts.get(q.dtype, q.device)
        T = torch.eye(4, dtype=q.dtype, device=q.device).expand(q.shape[:-1] + (4, 4))
        out = [T]
        for i in range(self.n):
            T = T @ rz_left(q[..., i], c["C"][i])
            out.append(T)
        return torch.stack(out, dim=-3)

    def realize(self, q) -> torch.Tensor:
        """The point set (..., N, 3) [m, graph frame] of joint values q (..., n)."""
        return points_from_frames(self.frames(q))

    def realize_with_pose(self, q) -> tuple[torch.Tensor, torch.Tensor]:
        """Point set (..., N, 3) and EE pose (..., 4, 4) in the base link frame, from one FK pass."""
        frames = self.frames(q)
        return points_from_frames(frames), self.ee_pose(frames)

    def ee_pose(self, frames: torch.Tensor) -> torch.Tensor:
        """EE pose (..., 4, 4) in the base link frame from graph frames (..., n + 1, 4, 4)."""
        c = self._consts.get(frames.dtype, frames.device)
        return c["T_base_graph"] @ frames[..., -1, :, :] @ c["T_tool"]

    @staticmethod
    def distances(points: torch.Tensor) -> torch.Tensor:
        """Complete graph: all pairwise distances (..., N, N) [m] of points (..., N, 3)."""
        diff = points[..., :, None, :] - points[..., None, :, :]
        return torch.linalg.vector_norm(diff, dim=-1)

    # ------------------------------------------------------------------ problems
    def goal_in_graph(self, T_goal: torch.Tensor) -> torch.Tensor:
        """EE goal poses in the base link frame (..., 4, 4) -> pose of F_n in the graph frame (no checks)."""
        c = self._consts.get(T_goal.dtype, T_goal.device)
        return geo.invert_transform(c["T_base_graph"]) @ T_goal @ geo.invert_transform(c["T_tool"])

    @property
    def tool_axis(self) -> torch.Tensor:
        """(3,) the tool axis (q_n - p_n) in the EE frame, see :func:`ggik.graph.goal_kinds.tool_axis`."""
        return self.T_tool[2, :3].clone()

    @property
    def supports_partial_goals(self) -> bool:
        """Whether the EE origin lies on the last joint's axis (within 1 um), so that a position fixes a point of it
        (p_n of the graph of position goals, :meth:`for_goal_kind`)."""
        return float(self.T_tool[:2, 3].norm()) <= 1e-6

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
        """One example as a ``torch_geometric.data.Data``: see :func:`ggik.graph.pyg.to_pyg`."""
        from ggik.graph.pyg import to_pyg

        return to_pyg(self, q=q, T_goal=T_goal)

    # ------------------------------------------------------------------ solutions -> joint angles
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

    # ------------------------------------------------------------------ export
    def to_dict(self, digits: int = 12) -> dict:
        """A JSON-ready, human-diffable description: nodes, known edges with lengths, anchors, frames
        (:func:`ggik.graph.export.graph_dict`)."""
        from ggik.graph.export import graph_dict

        return graph_dict(self, digits)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1) + "\n"

    def __repr__(self) -> str:
        counts = ", ".join(f"{k} {sum(1 for e in self.edge_kind.values() if e == k)}" for k in EDGE_KINDS)
        return (
            f"RobotGraph({self.robot.name}, {self.convention}: {self.n} joints, {self.num_nodes} nodes, "
            f"known edges: {counts})"
        )


def partial_graph(graph: RobotGraph, goals: Goals) -> PartialGraph:
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
