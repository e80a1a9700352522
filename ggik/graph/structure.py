"""The GGIK distance-geometric point set of a revolute chain without goals (:class:`GraphStructure`): its nodes, known
edges, constant frames and the point sets of joint values; :class:`ggik.graph.RobotGraph` adds the goals.

Representation (GGIK, Limoyo, Marić et al.). For a chain of ``n`` revolute joints there are ``n + 1`` frames
``F_0 .. F_n``: ``F_{i-1}`` sits on the axis of joint ``i`` with its z axis along it, so joint ``i`` turns about z of
``F_{i-1}``; ``F_n`` lies on the last axis (the end-effector anchor). Where along each axis, and how the base frame is
turned, is the graph's *convention* (:mod:`ggik.graph.conventions`). Each frame gives two points, ``p_i`` (its origin)
and ``q_i = p_i + L z_i`` with ``L = 1``; two more base points ``x = (L, 0, 0)`` and ``y = (0, -L, 0)`` fix the frame.
Node order: ``[p0, x, y, q0, p1, q1, ..., pn, qn]``, ``N = 2 n + 4`` nodes. All point coordinates are in the *graph
frame* ``F_0``; joint values and EE poses are in the robot's base-link frame, as :meth:`ggik.Robot.fk` returns them.

This module is the bottom of the graph's classes: the joint-angle recovery (:mod:`ggik.graph.angles`), the JSON export
(:mod:`ggik.graph.export`) and the PyG bridge (:mod:`ggik.graph.pyg`) take a :class:`GraphStructure`, and
:mod:`ggik.graph.robot_graph` builds on all of them.
"""

from __future__ import annotations

import torch

from ggik.errors import GraphError
from ggik.graph.conventions import check_convention, graph_frames
from ggik.graph.frames import points_from_frames, rz_left
from ggik.graph.handedness import signed_volumes, skew_links, skew_tolerance
from ggik.graph.problem import EDGE_KINDS
from ggik.kinematics import geometry as geo
from ggik.kinematics.consts import ConstCache
from ggik.kinematics.robot import Robot

__all__ = ["GraphStructure", "CONSTANT_TOL"]

CONSTANT_TOL = 1e-9  #: a point closer than this to an axis [m] is on it (decides constant edges)


class GraphStructure:
    """The GGIK graph of a revolute chain without goals (module docstring); :class:`ggik.graph.RobotGraph` is the one
    to build (:meth:`ggik.graph.RobotGraph.from_robot`).

    Attributes:
        robot: the :class:`ggik.Robot`.
        convention: ``"frames"`` or ``"canonical"`` (:mod:`ggik.graph.conventions`).
        ee_anchor: where p_n is: ``"tool"`` (the foot of the EE origin on the last axis: every "frames" graph, and the
            canonical graph of position goals) or ``"canonical"`` (a fixed distance along the last axis).
        n: number of joints (= ``robot.dof``); N = 2 n + 4 nodes.
        node_names: ("p0", "x", "y", "q0", "p1", "q1", ...).
        node_type: (N,) long, index into :data:`ggik.graph.problem.NODE_TYPES` (x, y, p0, q0 base; pn, qn ee; else
            joint).
        node_frame: (N,) long, frame index i of p_i / q_i (x, y: 0).
        node_kind: (N,) long, 0 = p, 1 = q, 2 = x, 3 = y.
        anchor_mask: (N,) bool, nodes whose position the problem fixes.
        known_mask: (N, N) bool, edges whose length the problem fixes (base, structure, constant
            bounded edges, anchor-goal edges).
        edge_kind: dict (u, v) -> kind for every known pair u < v.
        T_base_graph: (4, 4) pose of the graph frame F_0 in the base link frame.
        T_tool: (4, 4) pose of the EE link in the last graph frame F_n (constant).
        skew_tol: [m^3] the volume at or below which a link's axes meet (:func:`ggik.graph.handedness.skew_tolerance`):
            a property of the arm, the same in its graph of every convention and goal kind.
        Also :attr:`link_volumes` and :attr:`skew_links`, the handedness of the arm (:mod:`ggik.graph.handedness`).
    """

    def __init__(self, robot: Robot, convention: str = "frames", ee_anchor: str = "canonical") -> None:
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
        anchors = ["p0", "x", "y", "q0", f"p{n}", f"q{n}"]
        self.anchor_mask = torch.zeros(N, dtype=torch.bool)
        self.anchor_mask[[idx[a] for a in anchors]] = True

        home = points_from_frames(F_graph)  # the frames at q = 0 are the home frames

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
        volumes = signed_volumes(home, n)  # constants of the arm (ggik.graph.handedness)
        self.skew_tol = skew_tolerance(robot)
        self._skew = skew_links(home, n, self.skew_tol)
        volumes = torch.where(self._skew, volumes, torch.zeros_like(volumes))  # exactly 0 on links that are not skew
        consts = dict(C=C, T_base_graph=T_base_graph, T_tool=T_tool, home=home, D_const=D_const, V=volumes)
        self._consts = ConstCache({k: v.numpy() for k, v in consts.items()})

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
    def link_volumes(self) -> torch.Tensor:
        """(n,) the signed volume V_i of each link i = 1 .. n [m^3] (:mod:`ggik.graph.handedness`), exactly 0 on links
        that are not skew: constants of the arm that every realization of a configuration has, and that its mirror
        images have with another sign."""
        return torch.as_tensor(self._consts.arrays["V"])

    @property
    def skew_links(self) -> torch.Tensor:
        """(n,) bool, the links whose two axes neither meet (``|V_i|`` above :attr:`skew_tol`) nor are parallel
        (:func:`ggik.graph.conventions.axes_parallel`), :func:`ggik.graph.handedness.skew_links`: k of them give 2^k
        distance-equal realizations of every configuration, one of which is the arm."""
        return self._skew.clone()

    @property
    def skew_link_names(self) -> tuple[str, ...]:
        """The skew links by the names of their two joints, ``"joint_a -> joint_b"`` (the last link: ``"joint_n ->
        ee"``)."""
        names = list(self.robot.joint_names) + ["ee"]
        return tuple(f"{names[i]} -> {names[i + 1]}" for i in range(self.n) if bool(self._skew[i]))

    def handedness(self, points: torch.Tensor) -> torch.Tensor:
        """(...,) bool: whether point sets ``points`` (..., N, 3) [m, graph frame] have the arm's handedness, every
        skew link's signed volume with the sign of the arm's (the others are free of handedness); a realization of joint
        values always has it, a mirror image of one in a skew link never."""
        if points.shape[-2:] != (self.num_nodes, 3):
            raise ValueError(f"points must have shape (..., {self.num_nodes}, 3), got {tuple(points.shape)}")
        V = self.link_volumes.to(points)
        right = (signed_volumes(points, self.n) * V > 0) | ~self._skew.to(points.device)
        return right.all(-1)

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
        (p_n of the graph of position goals, :meth:`ggik.graph.RobotGraph.for_goal_kind`)."""
        return float(self.T_tool[:2, 3].norm()) <= 1e-6

    def __repr__(self) -> str:
        counts = ", ".join(f"{k} {sum(1 for e in self.edge_kind.values() if e == k)}" for k in EDGE_KINDS)
        return (
            f"{type(self).__name__}({self.robot.name}, {self.convention}: {self.n} joints, {self.num_nodes} nodes, "
            f"known edges: {counts})"
        )
