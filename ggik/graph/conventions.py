"""Where the graph frames of a chain sit: the graph *conventions* of :class:`ggik.graph.RobotGraph`.

A graph needs ``n + 1`` frames at the zero configuration, in the robot's base-link frame: ``F_{i-1}`` (i = 1 .. n)
rigid with link ``i - 1``, its origin on the axis of joint ``i`` and its z axis along that axis (the joint's own
sense of rotation), and ``F_n`` rigid with the last link, its origin on the last axis (the end-effector anchor). Any
such frames describe the same kinematics; they differ in which points the graph holds and so in the problem the model
sees. Two conventions:

* ``"frames"`` (:func:`file_frames`): each ``F_{i-1}`` is the URDF frame of
  joint ``i`` turned so that z is its axis, and ``F_n`` the foot on the last axis of the end-effector (EE) origin. The
  graph follows where a file puts its joint frames and its tool, so two files of one arm can pose two problems.
* ``"canonical"`` (:func:`canonical_frames`): a function of the joint axes as lines in space and of joint 1's limits
  only. What a file adds (where a joint frame sits along its axis, the joint's zero angle, how its frames are turned,
  the base mounting, the fixed transform from the last joint to the tool) moves no point of the graph and changes
  none of its distances; it becomes an exact map of the goal (``T_base_graph``, ``T_tool``) and of the angles (the
  joint values stay the file's own: each home transform ``C_i`` absorbs the zero angle).

The canonical rules (``u_i`` the unit axis of joint i, ``c_i`` the canonical point on it; ``p_{i-1} = c_i``):

1. Two consecutive axes i, i + 1 that are not parallel: ``c_i`` is the foot on axis i of their common perpendicular
   (the intersection point when they meet), as Denavit-Hartenberg parameters place frame ``i - 1``.
2. Axis i parallel to axis i + 1 (the sine of their angle under :data:`PARALLEL_TOL`, 0.57 deg), and the last axis:
   ``c_i`` is the projection of ``c_{i-1}`` onto axis i. A chain that begins with parallel axes takes its first
   points backwards from the first axis placed by rule 1 (``c_i`` the projection of ``c_{i+1}``). A chain whose axes
   are all parallel (a planar arm) has no canonical height: ``c_1`` is the projection of the base-link origin (the
   one case where the mounting shows).
3. The EE anchor ``p_n = c_n + s u_n`` with ``s`` = :data:`EE_ANCHOR_OFFSET`, whatever the tool: a pose goal (and a
   position + tool-axis goal) fixes it exactly. A *position* goal fixes only the tool point; for it the graph is
   built with ``ee_anchor="tool"``: ``p_n`` is the foot of the EE origin on the last axis (the tool point, part of the
   structure), everything else as above (:meth:`ggik.graph.RobotGraph.for_goal_kind`).
4. The base frame ``F_0``: origin ``c_1``, z ``u_1``, x along the common perpendicular of axes 1 and 2 (``u_2 x u_1``
   normalised when they are not parallel, the sign that keeps the base orientation of five of the nine training
   files; the perpendicular from axis 1 towards axis 2 when they are parallel), taken with joint 1 at the middle of
   its limits, so that turning joint 1's zero angle (which shifts its limits) moves nothing. An unlimited joint 1
   takes its zero angle instead (its range has no middle); coincident axes 1 and 2 fall back to a frame built from
   ``u_1`` alone (neither case is invariant to the file).
5. The other frames are turned by the shortest rotation from the base link's z to their axis (their x axis moves no
   point); ``F_n`` has the rotation of ``F_{n-1}``, so ``C_n`` is a translation along the last axis. So the roll of a
   goal about the last axis, in the graph frame, still depends on the file: it moves no point and enters no distance,
   but a model that reads the goal's rotation (``ModelConfig.goal_features``) would see it, and is refused on
   canonical graphs.

A joint's sense of rotation is kinematics, not convention: a file that flips an axis (and negates its angles and
limits) poses another graph.
"""

from __future__ import annotations

import torch

from ggik.errors import GraphError
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot import Robot

__all__ = [
    "GRAPH_CONVENTIONS",
    "EE_ANCHORS",
    "PARALLEL_TOL",
    "axes_parallel",
    "EE_ANCHOR_OFFSET",
    "check_convention",
    "axis_lines",
    "canonical_points",
    "file_frames",
    "canonical_frames",
    "graph_frames",
]

GRAPH_CONVENTIONS = ("frames", "canonical")  #: values of ``RobotGraph.from_robot(..., convention=)``
EE_ANCHORS = ("canonical", "tool")  #: where the canonical convention puts p_n (rule 3)
#: two axes whose angle's sine is below this (0.57 deg) are parallel: a calibrated file's axes deviate by 1e-4-1e-3 rad,
#: and the foot of the common perpendicular of two lines at a small angle t lies about (their distance) / t away, so
#: below this angle rule 2 (a projection, which moves with the tilt by tilt x distance) takes over from rule 1. The one
#: rule of parallel axes (:func:`axes_parallel`): the skew links (:mod:`ggik.graph.handedness`) follow it too
PARALLEL_TOL = 1e-2
EE_ANCHOR_OFFSET = 0.1  #: s [m], distance of the canonical EE anchor p_n from c_n along the last axis (rule 3)
_COINCIDENT_TOL = 1e-9  #: parallel axes closer than this [m] are one line


def check_convention(convention: str) -> str:
    """``convention`` if it is one of :data:`GRAPH_CONVENTIONS`, else ``GraphError`` naming them."""
    if convention not in GRAPH_CONVENTIONS:
        raise GraphError(f"unknown graph convention {convention!r}; use one of {GRAPH_CONVENTIONS}")
    return convention


def axis_lines(robot: Robot, q: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The joint axes as lines at joint values ``q`` (dof,) (default 0), in the base-link frame [m]: a point on each
    (n, 3), the unit directions (n, 3), and the EE pose (4, 4)."""
    q = torch.zeros(robot.dof, dtype=torch.float64) if q is None else q
    frames, T_ee = robot.joint_frames(q)
    u = (frames[:, :3, :3] @ robot.joint_axes[:, :, None])[..., 0]
    return frames[:, :3, 3], u / torch.linalg.vector_norm(u, dim=-1, keepdim=True), T_ee


def axes_parallel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """(...,) bool: whether axes of unit directions ``a``, ``b`` (..., 3) are parallel (or antiparallel), the sine of
    their angle ``|a x b|`` under :data:`PARALLEL_TOL`: the canonical points' rule 2 and the skew links
    (:func:`ggik.graph.handedness.skew_links`) alike."""
    return torch.linalg.vector_norm(torch.linalg.cross(a, b, dim=-1), dim=-1) < PARALLEL_TOL


def _project(point: torch.Tensor, o: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The foot on the line (o, u) of the perpendicular from ``point``."""
    return o + ((point - o) @ u) * u


def _foot(o1: torch.Tensor, u1: torch.Tensor, o2: torch.Tensor, u2: torch.Tensor) -> torch.Tensor:
    """The foot on line 1 of the common perpendicular of two non-parallel lines (o, u unit)."""
    b, w = float(u1 @ u2), o1 - o2
    t = (b * float(u2 @ w) - float(u1 @ w)) / (1.0 - b * b)
    return o1 + t * u1


def _rotation_to(u: torch.Tensor) -> torch.Tensor:
    ez = torch.tensor([0.0, 0.0, 1.0], dtype=u.dtype)
    return geo.rotation_between(ez.expand(u.shape), u)


def file_frames(robot: Robot) -> torch.Tensor:
    """(n + 1, 4, 4) graph frames of the ``"frames"`` convention, in the base-link frame at q = 0: the joint frames
    turned so that z is the axis, and ``F_n`` on the last axis at the foot of the EE origin."""
    frames, T_ee = robot.joint_frames(torch.zeros(robot.dof, dtype=torch.float64))
    J = frames.clone()
    J[:, :3, :3] = frames[:, :3, :3] @ _rotation_to(robot.joint_axes)
    d = float((geo.invert_transform(J[-1]) @ T_ee)[2, 3])
    F_n = J[-1] @ geo.translation(torch.tensor([0.0, 0.0, d], dtype=torch.float64))
    return torch.cat([J, F_n[None]], dim=0)


def canonical_points(o: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """(n, 3) the canonical point c_i on each axis (rules 1-2) of axes given as lines (points o (n, 3), unit
    directions u (n, 3)) of one configuration, in one frame [m]."""
    n = o.shape[0]
    c: list[torch.Tensor | None] = [None] * n
    for i in range(n - 1):
        if not bool(axes_parallel(u[i], u[i + 1])):
            c[i] = _foot(o[i], u[i], o[i + 1], u[i + 1])
    first = next((i for i in range(n) if c[i] is not None), None)
    if first is None:  # all axes parallel: a planar chain has no canonical height
        first, c[0] = 0, _project(torch.zeros(3, dtype=o.dtype), o[0], u[0])
    for i in range(first - 1, -1, -1):
        c[i] = _project(c[i + 1], o[i], u[i])  # type: ignore[arg-type]
    for i in range(first + 1, n):
        if c[i] is None:
            c[i] = _project(c[i - 1], o[i], u[i])  # type: ignore[arg-type]
    return torch.stack(c)  # type: ignore[arg-type]


def _base_x(robot: Robot, c1: torch.Tensor, u1: torch.Tensor) -> torch.Tensor | None:
    """Rule 4: the canonical x axis of F_0 (3,), or None where there is none (one axis, or axes 1 and 2 one line)."""
    if robot.dof < 2:
        return None
    q = torch.zeros(robot.dof, dtype=torch.float64)
    if bool(robot.limited[0]):
        q[0] = 0.5 * (robot.lower[0] + robot.upper[0])
    o, u, _ = axis_lines(robot, q)
    if bool(axes_parallel(u1, u[1])):
        x = _project(c1, o[1], u[1]) - c1
        if float(torch.linalg.vector_norm(x)) < _COINCIDENT_TOL:
            return None
    else:
        x = torch.linalg.cross(u[1], u1)
    x = x - (x @ u1) * u1
    return x / torch.linalg.vector_norm(x)


def canonical_frames(robot: Robot, ee_anchor: str = "canonical") -> torch.Tensor:
    """(n + 1, 4, 4) graph frames of the ``"canonical"`` convention (rules 1-5 of this module), in the base-link frame
    at q = 0. ``ee_anchor``: ``"canonical"`` (p_n at :data:`EE_ANCHOR_OFFSET` along the last axis from c_n) or
    ``"tool"`` (p_n at the foot of the EE origin on the last axis, for position goals)."""
    if ee_anchor not in EE_ANCHORS:
        raise GraphError(f"unknown EE anchor {ee_anchor!r}; use one of {EE_ANCHORS}")
    o, u, T_ee = axis_lines(robot)
    c = canonical_points(o, u)
    R = _rotation_to(u)  # (n, 3, 3)
    x0 = _base_x(robot, c[0], u[0])
    if x0 is not None:
        R[0] = torch.stack([x0, torch.linalg.cross(u[0], x0), u[0]], dim=-1)
    F = geo.make_transform(R, c)
    if ee_anchor == "canonical":
        along = EE_ANCHOR_OFFSET
    else:
        along = float((T_ee[:3, 3] - c[-1]) @ u[-1])
    F_n = F[-1] @ geo.translation(torch.tensor([0.0, 0.0, along], dtype=torch.float64))
    return torch.cat([F, F_n[None]], dim=0)


def graph_frames(robot: Robot, convention: str = "frames", ee_anchor: str = "canonical") -> torch.Tensor:
    """(n + 1, 4, 4) graph frames of ``robot`` at q = 0 in its base-link frame, by ``convention``."""
    if check_convention(convention) == "frames":
        return file_frames(robot)
    return canonical_frames(robot, ee_anchor)
