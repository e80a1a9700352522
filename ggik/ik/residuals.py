"""The residuals of local IK: the goal error of each goal kind as a vector, its Jacobian rows, and the errors read
off it (:mod:`ggik.ik.refine`'s LM iterates on them).

Conventions: residual = goal - current, in the base-link frame; position rows in metres, rotation rows weighted by
``rot_weight`` [m/rad] so that they are comparable.
"""

from __future__ import annotations

import torch

from ggik.graph.goal_kinds import check_goal_kind
from ggik.kinematics.geometry import matrix_to_rotvec, perpendicular_unit

__all__ = [
    "pose_residual",
    "goal_residual",
    "goal_axis_basis",
    "residual_rows",
    "residual_errors",
    "pose_row_weights",
    "pose_weights",
    "weighted_rows",
]


def pose_residual(T: torch.Tensor, T_goal: torch.Tensor, rot_weight: float) -> torch.Tensor:
    """(..., 6) residual [p_goal - p; w * log(R_goal R^T)] in the base frame (rotation vector = angle * axis).

    The rotation vector, unlike the axial vector sin(angle) * axis, does not vanish at a half turn,
    so the solver has no spurious fixed point 180 degrees away from the goal.
    """
    dp = T_goal[..., :3, 3] - T[..., :3, 3]
    rotvec = matrix_to_rotvec(T_goal[..., :3, :3] @ T[..., :3, :3].transpose(-1, -2))
    return torch.cat([dp, rot_weight * rotvec], -1)


def goal_axis_basis(T_goal: torch.Tensor, axis_in_ee: torch.Tensor) -> torch.Tensor:
    """(..., 3, 2) the basis B of :func:`goal_residual` for ``"position+axis"`` goals ``T_goal`` (..., 4, 4): constant
    per goal, so a solver computes it once."""
    return _axis_basis(T_goal[..., :3, :3] @ axis_in_ee.to(T_goal))


def _axis_basis(g: torch.Tensor) -> torch.Tensor:
    """(..., 3, 2) an orthonormal basis of the plane perpendicular to unit vectors g (..., 3)."""
    u = perpendicular_unit(g)
    return torch.stack([u, torch.linalg.cross(g, u, dim=-1)], -1)


def goal_residual(
    T: torch.Tensor,
    T_goal: torch.Tensor,
    rot_weight: float,
    kind: str = "pose",
    axis_in_ee: torch.Tensor | None = None,
    basis: torch.Tensor | None = None,
) -> torch.Tensor:
    """The residual of ``kind``: (..., 6) :func:`pose_residual`, (..., 3) ``p_goal - p``, or (..., 5) for
    ``"position+axis"``: ``[p_goal - p; w * B^T rho]`` with rho the rotation vector of the shortest rotation taking
    the tool axis ``a = R axis_in_ee`` onto the goal axis ``g = R_goal axis_in_ee`` (angle * unit(a x g); a half
    turn about an axis of B when opposite) and B (3, 2) a basis of the plane perpendicular to g (rho lies in it,
    so both rows keep its whole length). ``T``, ``T_goal``: (..., 4, 4) EE and canonical goal poses; ``basis``: B when
    the caller computed it once (:func:`goal_axis_basis`)."""
    kind = check_goal_kind(kind)
    if kind == "pose":
        return pose_residual(T, T_goal, rot_weight)
    dp = T_goal[..., :3, 3] - T[..., :3, 3]
    if kind == "position":
        return dp
    if axis_in_ee is None:
        raise ValueError("a position+axis residual needs the tool axis (axis_in_ee)")
    ax = axis_in_ee.to(T)
    a, g = T[..., :3, :3] @ ax, T_goal[..., :3, :3] @ ax
    B = _axis_basis(g) if basis is None else basis
    c = torch.linalg.cross(a, g, dim=-1)
    s, d = torch.linalg.vector_norm(c, dim=-1), (a * g).sum(-1)
    small = s < 1e-12
    rho = c * (torch.atan2(s, d) / torch.where(small, torch.ones_like(s), s))[..., None]
    rho = torch.where(
        (small & (d < 0))[..., None], torch.pi * B[..., 0], torch.where(small[..., None], torch.zeros_like(c), rho)
    )
    return torch.cat([dp, rot_weight * (rho[..., None, :] @ B)[..., 0, :]], -1)


def residual_rows(
    J: torch.Tensor, T_goal: torch.Tensor, rot_weight: float, kind: str = "pose", axis_in_ee: torch.Tensor | None = None
) -> torch.Tensor:
    """The Jacobian (..., 3|5|6, dof) of :func:`goal_residual`'s model from the geometric Jacobian J (..., 6, dof)
    (base frame): the weighted rows for ``"pose"``, the linear rows for ``"position"``, and the linear rows and
    ``w B^T J_w`` for ``"position+axis"`` (a turn about the goal axis does not move it)."""
    kind = check_goal_kind(kind)
    if kind == "position+axis" and axis_in_ee is None:
        raise ValueError("position+axis residual rows need the tool axis (axis_in_ee)")
    B = goal_axis_basis(T_goal, axis_in_ee) if kind == "position+axis" else None  # type: ignore[arg-type]
    return weighted_rows(J, kind, rot_weight, B, pose_row_weights(kind, rot_weight, J))


def pose_row_weights(kind: str, rot_weight: float, like: torch.Tensor) -> torch.Tensor | None:
    """(6, 1) the weights of the pose rows (None for the other kinds)."""
    return pose_weights(rot_weight, like) if kind == "pose" else None


def pose_weights(rot_weight: float, like: torch.Tensor) -> torch.Tensor:
    """(6, 1) the weights of a pose residual's rows: 1 for the position, ``rot_weight`` [m/rad] for the rotation."""
    return torch.tensor([1.0] * 3 + [rot_weight] * 3, dtype=like.dtype, device=like.device)[:, None]


def weighted_rows(
    J: torch.Tensor, kind: str, rot_weight: float, B: torch.Tensor | None, w: torch.Tensor | None
) -> torch.Tensor:
    """:func:`residual_rows` from the goals' constants computed once: B (position+axis) and the pose row weights w."""
    if w is not None:
        return J * w
    if B is None:
        return J[..., :3, :]
    return torch.cat([J[..., :3, :], rot_weight * (B.transpose(-1, -2) @ J[..., 3:, :])], -2)


def residual_errors(e: torch.Tensor, kind: str, rot_weight: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The (position [m], rotation [rad]) errors of :func:`ggik.graph.goal_kinds.goal_errors`, read off a residual
    e (..., 3|5|6) of :func:`goal_residual` (same values up to float rounding): the position rows' length, and the
    rotation rows' length / ``rot_weight`` (a rotation vector's length is its angle; for "position+axis", rho lies in
    the plane of B, so ``|B^T rho| = |rho|``, the angle between the axes)."""
    pos = torch.linalg.vector_norm(e[..., :3], dim=-1)
    if kind == "position":
        return pos, torch.zeros_like(pos)
    return pos, torch.linalg.vector_norm(e[..., 3:], dim=-1) / rot_weight
