"""Rigid-body geometry in torch: rotations, homogeneous transforms, pose errors.

Conventions used everywhere in ggik:

* lengths in metres, angles in radians;
* a pose is a homogeneous matrix ``T`` of shape ``(..., 4, 4)`` with rotation ``T[..., :3, :3]`` and
  translation ``T[..., :3, 3]``; ``T_a_b`` maps coordinates in frame ``b`` to frame ``a``;
* roll-pitch-yaw as in URDF: ``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (fixed axes x, y, z);
* quaternions are ``(w, x, y, z)``, unit norm.

Every function is batched over leading dimensions, differentiable, and follows the dtype and device
of its inputs.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = [
    "broadcast_shapes",
    "skew",
    "axis_angle_to_matrix",
    "rot_x",
    "rot_y",
    "rot_z",
    "rpy_to_matrix",
    "matrix_to_rpy",
    "make_transform",
    "translation",
    "invert_transform",
    "rotation_angle",
    "rotation_between",
    "perpendicular_unit",
    "quat_to_matrix",
    "matrix_to_quat",
    "SHEPPERD_MAP",
    "matrix_to_rotvec",
    "pose_errors",
    "check_pose",
    "is_rigid",
    "RIGID_TOL",
    "project_to_so3",
    "kabsch",
]


def broadcast_shapes(*shapes: tuple[int, ...]) -> torch.Size:
    """The broadcast of ``shapes`` (RuntimeError when they do not broadcast), as ``torch.broadcast_shapes`` gives it.

    torch's own imports sympy on its first call (0.4 s of a command's start-up, torch 2.13); this is numpy's rule."""
    import numpy as np

    try:
        return torch.Size(np.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError as exc:
        raise RuntimeError(f"shapes {[tuple(s) for s in shapes]} do not broadcast") from exc


def skew(v: torch.Tensor) -> torch.Tensor:
    """Cross-product matrix ``[v]x`` of vectors ``v`` (..., 3) -> (..., 3, 3)."""
    zero = torch.zeros_like(v[..., 0])
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    return torch.stack(
        [
            torch.stack([zero, -z, y], dim=-1),
            torch.stack([z, zero, -x], dim=-1),
            torch.stack([-y, x, zero], dim=-1),
        ],
        dim=-2,
    )


def axis_angle_to_matrix(axis: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    """Rotation by ``angle`` (...) [rad] about the *unit* ``axis`` (..., 3) -> (..., 3, 3) (Rodrigues)."""
    K = skew(axis)
    s = torch.sin(angle)[..., None, None]
    c = torch.cos(angle)[..., None, None]
    eye = torch.eye(3, dtype=K.dtype, device=K.device)
    return eye + s * K + (1.0 - c) * (K @ K)


def _elementary(angle: torch.Tensor, i: int, j: int) -> torch.Tensor:
    c, s = torch.cos(angle), torch.sin(angle)
    R = torch.zeros(angle.shape + (3, 3), dtype=angle.dtype, device=angle.device)
    k = 3 - i - j
    R[..., k, k] = 1.0
    R[..., i, i] = c
    R[..., j, j] = c
    R[..., i, j] = -s
    R[..., j, i] = s
    return R


def rot_x(angle: torch.Tensor) -> torch.Tensor:
    """Rotation about x by ``angle`` (...) -> (..., 3, 3)."""
    return _elementary(angle, 1, 2)


def rot_y(angle: torch.Tensor) -> torch.Tensor:
    """Rotation about y by ``angle`` (...) -> (..., 3, 3)."""
    return _elementary(angle, 2, 0)


def rot_z(angle: torch.Tensor) -> torch.Tensor:
    """Rotation about z by ``angle`` (...) -> (..., 3, 3)."""
    return _elementary(angle, 0, 1)


def rpy_to_matrix(rpy: torch.Tensor) -> torch.Tensor:
    """URDF roll-pitch-yaw (..., 3) -> rotation (..., 3, 3), ``Rz(y) @ Ry(p) @ Rx(r)``."""
    return rot_z(rpy[..., 2]) @ rot_y(rpy[..., 1]) @ rot_x(rpy[..., 0])


def matrix_to_rpy(R: torch.Tensor) -> torch.Tensor:
    """Inverse of :func:`rpy_to_matrix`: rotation (..., 3, 3) -> (..., 3) roll, pitch, yaw.

    Pitch is in [-pi/2, pi/2]. At the gimbal lock (|pitch| = pi/2) roll is set to 0 and the
    whole rotation about z goes to yaw, so ``rpy_to_matrix(matrix_to_rpy(R)) == R`` always holds.

    Yaw is read first; pitch and roll are then read from ``Rz(-yaw) R = Ry(pitch) Rx(roll)``, whose
    entries are O(1) even near the gimbal lock, so the round trip stays exact to rounding there too
    (reading roll from ``R[2, 1:]`` ~ cos(pitch) loses up to 1e-16 / cos(pitch) in the matrix).
    """
    cp = torch.sqrt(R[..., 0, 0] ** 2 + R[..., 1, 0] ** 2)
    locked = cp < 1e-14
    yaw_free = torch.atan2(R[..., 1, 0], R[..., 0, 0])
    # Gimbal lock: R = Rz(y) Ry(+-pi/2); R[0,1] = -sin(y) (both signs), R[1,1] = cos(y).
    yaw_locked = torch.atan2(-R[..., 0, 1], R[..., 1, 1])
    yaw = torch.where(locked, yaw_locked, yaw_free)
    cy, sy = torch.cos(yaw), torch.sin(yaw)
    # M = Rz(-yaw) R = Ry(pitch) Rx(roll): M[0,0] = cos p, M[2,0] = -sin p, M[1,1] = cos r, M[1,2] = -sin r.
    m00 = cy * R[..., 0, 0] + sy * R[..., 1, 0]
    m11 = cy * R[..., 1, 1] - sy * R[..., 0, 1]
    m12 = cy * R[..., 1, 2] - sy * R[..., 0, 2]
    pitch = torch.atan2(-R[..., 2, 0], m00)
    roll = torch.atan2(-m12, m11)
    return torch.stack([roll, pitch, yaw], dim=-1)


def make_transform(R: torch.Tensor | None = None, t: torch.Tensor | None = None) -> torch.Tensor:
    """Homogeneous transform (..., 4, 4) from rotation (..., 3, 3) and/or translation (..., 3)."""
    ref = R if R is not None else t
    if ref is None:
        raise ValueError("make_transform needs a rotation, a translation or both")
    batch = ref.shape[:-2] if R is not None else ref.shape[:-1]
    T = torch.zeros(batch + (4, 4), dtype=ref.dtype, device=ref.device)
    T[..., :3, :3] = R if R is not None else torch.eye(3, dtype=ref.dtype, device=ref.device)
    if t is not None:
        T[..., :3, 3] = t
    T[..., 3, 3] = 1.0
    return T


def translation(t: torch.Tensor) -> torch.Tensor:
    """Pure translation (..., 3) -> (..., 4, 4)."""
    return make_transform(None, t)


def invert_transform(T: torch.Tensor) -> torch.Tensor:
    """Inverse of rigid transforms (..., 4, 4) using R^T (exact for rigid inputs)."""
    Rt = T[..., :3, :3].transpose(-1, -2)
    return make_transform(Rt, -(Rt @ T[..., :3, 3:4])[..., 0])


def rotation_angle(R: torch.Tensor) -> torch.Tensor:
    """Angle [rad] in [0, pi] of rotations (..., 3, 3), accurate near 0 and pi.

    Uses ``atan2(|axial vector|, (trace - 1) / 2)``, which keeps full precision for small angles
    (arccos of the trace loses half the digits there).
    """
    axial = torch.stack(
        [R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]],
        dim=-1,
    )
    sin_ = 0.5 * torch.linalg.vector_norm(axial, dim=-1)
    cos_ = 0.5 * (R[..., 0, 0] + R[..., 1, 1] + R[..., 2, 2] - 1.0)
    return torch.atan2(sin_, cos_)


def perpendicular_unit(a: torch.Tensor) -> torch.Tensor:
    """A unit vector (..., 3) perpendicular to the unit vectors ``a`` (..., 3): a x e_x, or a x e_y where a is
    within ~26 deg of the x axis (so that the cross product never comes near zero)."""
    helper = torch.zeros_like(a)
    near_x = a[..., 0].abs() >= 0.9
    helper[..., 0] = (~near_x).to(a.dtype)
    helper[..., 1] = near_x.to(a.dtype)
    perp = torch.linalg.cross(a, helper, dim=-1)
    return perp / torch.linalg.vector_norm(perp, dim=-1, keepdim=True)


def rotation_between(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """A rotation (..., 3, 3) that maps unit vector ``a`` onto unit vector ``b`` (both (..., 3)).

    Well defined for every pair, including opposite vectors (then a half turn about an axis
    perpendicular to ``a``) and any oblique or negative direction.
    """
    v = torch.linalg.cross(a, b)
    s = torch.linalg.vector_norm(v, dim=-1)
    c = (a * b).sum(-1)
    perp = perpendicular_unit(a)  # the axis for (anti)parallel vectors: any unit axis perpendicular to a
    degenerate = (s < 1e-12)[..., None]
    axis = torch.where(degenerate, perp, v / torch.where(degenerate, torch.ones_like(v), s[..., None]))
    angle = torch.atan2(s, c)
    return axis_angle_to_matrix(axis, angle)


def quat_to_matrix(q: torch.Tensor) -> torch.Tensor:
    """Unit quaternion (w, x, y, z) (..., 4) -> rotation (..., 3, 3). The input is normalised."""
    q = q / torch.linalg.vector_norm(q, dim=-1, keepdim=True)
    w, x, y, z = q.unbind(-1)
    return torch.stack(
        [
            torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        dim=-2,
    )


def _quat_candidate_map() -> tuple[torch.Tensor, torch.Tensor]:
    """(16, 9) weights and (16,) constants of Shepperd's 4 x 4 matrix, ``K = 1 + (terms linear in R)``, row k = 4 q_k q:
    ``K[0] = (1 + tr, r21 - r12, r02 - r20, r10 - r01)``, ``K[1] = (r21 - r12, 1 + r00 - r11 - r22, r01 + r10,
    r02 + r20)``, ``K[2] = (r02 - r20, r01 + r10, 1 - r00 + r11 - r22, r12 + r21)``, ``K[3] = (r10 - r01, r02 + r20,
    r12 + r21, 1 - r00 - r11 + r22)``."""
    W = torch.zeros(4, 4, 3, 3, dtype=torch.float64)
    diag_signs = [(1, 1, 1), (1, -1, -1), (-1, 1, -1), (-1, -1, 1)]
    for k, signs in enumerate(diag_signs):
        for i in range(3):
            W[k, k, i, i] = signs[i]
    skew = {1: (2, 1), 2: (0, 2), 3: (1, 0)}  # q_k (k = x, y, z) * 4 w: r_ab - r_ba
    for k, (a, b) in skew.items():
        W[0, k, a, b] = W[k, 0, a, b] = 1.0
        W[0, k, b, a] = W[k, 0, b, a] = -1.0
    for k, m, (a, b) in ((1, 2, (0, 1)), (1, 3, (0, 2)), (2, 3, (1, 2))):  # 4 q_k q_m: r_ab + r_ba
        for x, y in ((k, m), (m, k)):
            W[x, y, a, b] = W[x, y, b, a] = 1.0
    return W.reshape(16, 9), torch.eye(4, dtype=torch.float64).reshape(16)


#: (weights (16, 9), constants (16,)) float64: Shepperd's 4 x 4 candidate matrix = constants + weights @ R.flatten()
SHEPPERD_MAP = _quat_candidate_map()
_quat_map_cache: dict[tuple[torch.dtype, torch.device], tuple[torch.Tensor, torch.Tensor]] = {}


def matrix_to_quat(R: torch.Tensor) -> torch.Tensor:
    """Rotation (..., 3, 3) -> unit quaternion (w, x, y, z) (..., 4) with w >= 0.

    Shepperd's method: the largest of the four squared components is computed first, so the result
    is accurate for every rotation. The 4 x 4 matrix of candidates (row k = 4 q_k q) is one linear map of R's
    entries (:func:`_quat_candidate_map`): a few tensor operations whatever the batch.
    """
    key = (R.dtype, R.device)
    if key not in _quat_map_cache:
        _quat_map_cache[key] = (SHEPPERD_MAP[0].to(R), SHEPPERD_MAP[1].to(R))
    W, c = _quat_map_cache[key]
    cands = torch.addmm(c, R.reshape(-1, 9), W.T).reshape(R.shape[:-2] + (4, 4))
    best = torch.diagonal(cands, dim1=-2, dim2=-1).argmax(-1)
    row = torch.gather(cands, -2, best[..., None, None].expand(best.shape + (1, 4)))[..., 0, :]
    q = row / torch.linalg.vector_norm(row, dim=-1, keepdim=True)
    return torch.where(q[..., :1] < 0, -q, q)


def matrix_to_rotvec(R: torch.Tensor) -> torch.Tensor:
    """Rotation (..., 3, 3) -> rotation vector (..., 3) (axis * angle, angle in [0, pi]), via the quaternion."""
    q = matrix_to_quat(R)
    v = q[..., 1:]
    s = torch.linalg.vector_norm(v, dim=-1, keepdim=True)
    angle = 2.0 * torch.atan2(s, q[..., :1])
    # angle / s -> 2 / w as s -> 0 (small rotations): keep it finite and exact in the limit.
    scale = torch.where(s > 1e-12, angle / s.clamp(min=1e-300), 2.0 / q[..., :1].clamp(min=1e-12))
    return v * scale


def pose_errors(T: torch.Tensor, T_goal: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Position error [m] and rotation error [rad] between poses (..., 4, 4), broadcast.

    ``pos_err = |t - t_goal|``, ``rot_err = angle(R^T R_goal)`` in [0, pi].
    """
    pos = torch.linalg.vector_norm(T[..., :3, 3] - T_goal[..., :3, 3], dim=-1)
    rot = rotation_angle(T[..., :3, :3].transpose(-1, -2) @ T_goal[..., :3, :3])
    return pos, rot


RIGID_TOL = 1e-6  #: the tolerance of :func:`check_pose` and :func:`is_rigid` on a pose's bottom row and rotation block


def is_rigid(T: np.ndarray, tol: float = RIGID_TOL) -> bool:
    """Whether one pose T (4, 4), a numpy array, passes :func:`check_pose`'s tests (finite, bottom row (0, 0, 0, 1),
    rotation block orthonormal with determinant +1, within ``tol``), without torch's per-call work."""
    if not np.isfinite(T).all() or np.abs(T[3] - (0.0, 0.0, 0.0, 1.0)).max() > tol:
        return False
    R = T[:3, :3]
    return bool(np.abs(R.T @ R - np.eye(3)).max() <= tol and abs(np.linalg.det(R) - 1.0) <= tol)


def check_pose(T: torch.Tensor, name: str = "pose", tol: float = RIGID_TOL) -> torch.Tensor:
    """Validate homogeneous rigid transforms (..., 4, 4); return them unchanged.

    Raises ``ValueError`` naming ``name`` for a wrong shape, NaN/inf, a bottom row other than
    (0, 0, 0, 1), or a rotation block that is not orthonormal with determinant +1 (within ``tol``).
    """
    if not isinstance(T, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (..., 4, 4), got {type(T).__name__}")
    if T.ndim < 2 or T.shape[-2:] != (4, 4):
        raise ValueError(f"{name} must have shape (..., 4, 4), got {tuple(T.shape)}")
    if not torch.isfinite(T).all():
        raise ValueError(f"{name} contains NaN or inf")
    if T.numel() == 0:  # an empty batch: nothing to check
        return T
    bottom = torch.tensor([0.0, 0.0, 0.0, 1.0], dtype=T.dtype, device=T.device)
    if (T[..., 3, :] - bottom).abs().max() > tol:
        raise ValueError(f"{name} is not homogeneous: its last row must be (0, 0, 0, 1)")
    R = T[..., :3, :3]
    eye = torch.eye(3, dtype=T.dtype, device=T.device)
    orth = (R.transpose(-1, -2) @ R - eye).abs().amax(dim=(-1, -2))
    det = torch.linalg.det(R)
    bad = (orth > tol) | ((det - 1.0).abs() > tol)
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0]) if bad.ndim else ()
        raise ValueError(
            f"{name} is not a rigid transform{' at index ' + str(idx) if idx else ''}: its rotation block "
            f"must be orthonormal with determinant +1 (max |R^T R - I| = {orth.max().item():.3g}, "
            f"det = {det.reshape(-1)[0].item():.6g}, tolerance {tol:g})"
        )
    return T


def project_to_so3(M: torch.Tensor) -> torch.Tensor:
    """Nearest rotation (Frobenius norm) to matrices (..., 3, 3), determinant forced to +1."""
    U, _, Vh = torch.linalg.svd(M)
    d = torch.linalg.det(U @ Vh)
    D = torch.diag_embed(
        torch.stack([torch.ones_like(d), torch.ones_like(d), torch.sign(d) + (d == 0).to(d.dtype)], -1)
    )
    return U @ D @ Vh


def kabsch(
    src: torch.Tensor, tgt: torch.Tensor, weights: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Proper rigid motion (R, t) minimising sum_k w_k |R src_k + t - tgt_k|^2.

    Args:
        src, tgt: (..., K, 3) corresponding points (K >= 3, not all collinear for a unique answer).
        weights: optional (K,) or (..., K) non-negative weights.
    Returns:
        R (..., 3, 3) with det +1 (no reflections), t (..., 3).
    """
    if weights is None:
        weights = torch.ones(src.shape[-2], dtype=src.dtype, device=src.device)
    w = (weights / weights.sum(-1, keepdim=True))[..., None]
    cs = (w * src).sum(-2, keepdim=True)
    ct = (w * tgt).sum(-2, keepdim=True)
    H = ((src - cs) * w).transpose(-1, -2) @ (tgt - ct)
    U, _, Vh = torch.linalg.svd(H)
    d = torch.sign(torch.linalg.det(Vh.transpose(-1, -2) @ U.transpose(-1, -2)))
    d = torch.where(d == 0, torch.ones_like(d), d)
    D = torch.diag_embed(torch.stack([torch.ones_like(d), torch.ones_like(d), d], -1))
    R = Vh.transpose(-1, -2) @ D @ U.transpose(-1, -2)
    t = ct[..., 0, :] - (R @ cs[..., 0, :, None])[..., 0]
    return R, t
