"""Goal kinds: a full pose, a position and a tool axis (roll free), or a position alone.

* ``"pose"`` (default): the EE pose, (..., 4, 4). The graph anchors p_n and q_n and the roll is fixed.
* ``"position+axis"``: the EE origin and the direction of the *tool axis*, with the roll about that axis free.
  The tool axis is the last joint's axis, the graph's direction q_n - p_n; :func:`tool_axis` gives it in the EE
  frame (the EE frame's z axis for most robots, -z for an EE link flipped about x or y). The graph anchors p_n
  and q_n as for a pose (same known distances); only the last joint's angle is left free.
* ``"position"``: the EE origin alone. The graph anchors p_n only; q_n becomes an unknown node whose known
  distances are the structural ones.

Partial goals are held as canonical poses (:func:`goal_poses`): the goal position as translation, and a rotation
that maps the tool axis onto the goal axis (``"position+axis"``, roll about the axis arbitrary but fixed) or the
identity (``"position"``). Every consumer reads only what the kind fixes (:func:`goal_errors`).
"""

from __future__ import annotations

import weakref

import torch

from ggik.errors import GoalError
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot import Robot

__all__ = ["GOAL_KINDS", "check_goal_kind", "tool_axis", "tool_offset", "goal_poses", "goal_errors"]

GOAL_KINDS = ("pose", "position+axis", "position")  #: what ``kind=`` / ``goal=`` takes


def check_goal_kind(kind: str | None) -> str:
    """``kind`` checked (None means ``"pose"``); :class:`GoalError` for anything not in :data:`GOAL_KINDS`."""
    if kind is None:
        return "pose"
    if kind not in GOAL_KINDS:
        raise GoalError(f"goal kind must be one of {GOAL_KINDS}, got {kind!r}")
    return kind


_last_axes: weakref.WeakKeyDictionary[Robot, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = (
    weakref.WeakKeyDictionary()
)


def _last_axis(robot: Robot) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(unit last axis, a point on it, EE pose) at q = 0, base frame; computed once per robot (a solver's every call
    asks for it)."""
    if robot not in _last_axes:
        frames, T_ee = robot.joint_frames(torch.zeros(robot.dof, dtype=torch.float64))
        z = frames[-1, :3, :3] @ robot.joint_axes[-1]
        _last_axes[robot] = (z / torch.linalg.vector_norm(z), frames[-1, :3, 3], T_ee)
    return tuple(t.clone() for t in _last_axes[robot])  # type: ignore[return-value]


def tool_axis(robot: Robot) -> torch.Tensor:
    """(3,) float64: the tool axis (the last joint's axis, q_n - p_n in the graph) as a unit vector in the EE frame.

    Constant: the last joint turns the EE about this axis, so ``R_ee @ tool_axis`` is the axis in the base frame."""
    z, _, T_ee = _last_axis(robot)
    return T_ee[:3, :3].T @ z


def tool_offset(robot: Robot) -> float:
    """Distance [m] of the EE origin from the last joint's axis (0 for most robots: the flange lies on it)."""
    z, o, T_ee = _last_axis(robot)
    r = T_ee[:3, 3] - o
    return float(torch.linalg.vector_norm(r - (r @ z) * z))


def _finite(t: torch.Tensor, name: str) -> torch.Tensor:
    if not torch.isfinite(t).all():
        raise GoalError(f"{name} contains NaN or inf")
    return t


def goal_poses(T_goal, kind: str | None, axis_in_ee: torch.Tensor) -> torch.Tensor:
    """Goals of ``kind`` as canonical poses (..., 4, 4) in the base-link frame (see the module docstring).

    Accepted inputs:
    * ``"pose"``: a rigid pose (..., 4, 4) (``ValueError`` otherwise).
    * ``"position"``: a position (..., 3), or a pose (..., 4, 4) whose rotation is ignored (only its translation
      is read; the rotation block is not checked).
    * ``"position+axis"``: a pair ``(position (..., 3), axis (..., 3))`` (broadcast; the axis is normalised), or a
      rigid pose (..., 4, 4) whose tool axis ``R @ axis_in_ee`` is taken and whose roll is ignored.

    ``axis_in_ee``: the robot's :func:`tool_axis`. :class:`GoalError` for a wrong shape, NaN/inf, an axis shorter
    than 1e-9 or an unknown kind.
    """
    kind = check_goal_kind(kind)
    if kind == "pose":
        return geo.check_pose(T_goal, "T_goal")
    if kind == "position+axis" and isinstance(T_goal, (tuple, list)):
        if len(T_goal) != 2:
            raise GoalError(f"a position+axis goal is a pair (position, axis), got {len(T_goal)} items")
        p, a = (torch.as_tensor(v, dtype=torch.float64) if not isinstance(v, torch.Tensor) else v for v in T_goal)
        if p.shape[-1:] != (3,) or a.shape[-1:] != (3,):
            raise GoalError(f"position and axis must have shape (..., 3), got {tuple(p.shape)} and {tuple(a.shape)}")
        p, a = _finite(p, "the goal position"), _finite(a, "the goal axis")
        norm = torch.linalg.vector_norm(a, dim=-1, keepdim=True)
        if (norm < 1e-9).any():
            raise GoalError("the goal axis has zero length")
        a = (a / norm).to(p.dtype)
        p, a = torch.broadcast_tensors(p, a)
    else:
        T = torch.as_tensor(T_goal)
        if not T.is_floating_point():
            T = T.to(torch.float64)
        if T.ndim >= 2 and T.shape[-2:] == (4, 4):
            if kind == "position":
                p = _finite(T[..., :3, 3], "the goal position")
                return geo.translation(p)
            T = geo.check_pose(T, "T_goal")
            p, a = T[..., :3, 3], T[..., :3, :3] @ axis_in_ee.to(T)
        elif kind == "position" and T.ndim >= 1 and T.shape[-1] == 3:
            p = _finite(T, "the goal position")
            return geo.translation(p)
        else:
            want = "(..., 3) or (..., 4, 4)" if kind == "position" else "(..., 4, 4) or a pair (position, axis)"
            raise GoalError(f"a {kind} goal must have shape {want}, got {tuple(T.shape)}")
    R = geo.rotation_between(axis_in_ee.to(a).expand_as(a), a)
    return geo.make_transform(R, p)


def goal_errors(
    T: torch.Tensor, T_goal: torch.Tensor, kind: str | None, axis_in_ee: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Position error [m] and the rotation error [rad] the goal kind fixes, for EE poses ``T`` and canonical goal
    poses ``T_goal`` (..., 4, 4) (broadcast): the rotation angle (``"pose"``), the angle between the tool axes
    (``"position+axis"``), 0 (``"position"``)."""
    kind = check_goal_kind(kind)
    if kind == "pose":
        return geo.pose_errors(T, T_goal)
    pos = torch.linalg.vector_norm(T[..., :3, 3] - T_goal[..., :3, 3], dim=-1)
    if kind == "position":
        return pos, torch.zeros_like(pos)
    ax = axis_in_ee.to(T)
    a, g = T[..., :3, :3] @ ax, T_goal[..., :3, :3] @ ax
    c = torch.linalg.vector_norm(torch.linalg.cross(a, g, dim=-1), dim=-1)
    return pos, torch.atan2(c, (a * g).sum(-1))
