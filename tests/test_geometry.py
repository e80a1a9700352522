"""ggik.geometry: rotations, quaternions, angles, Kabsch, rotation_between, pose checks (float64)."""

from __future__ import annotations

import math

import pytest
import torch

from ggik.kinematics import geometry as geo

F64 = torch.float64


def random_rotations(n: int, gen: torch.Generator) -> torch.Tensor:
    """Uniform random rotations (n, 3, 3) from normalised Gaussian quaternions."""
    return geo.quat_to_matrix(torch.randn(n, 4, generator=gen, dtype=F64))


def noisy(R: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """The same rotations, recomputed through a random product so every entry carries rounding noise."""
    A = random_rotations(R.shape[0], gen)
    return A.transpose(-1, -2) @ (A @ R)


def assert_rotation(R: torch.Tensor, tol: float = 1e-12) -> None:
    eye = torch.eye(3, dtype=R.dtype)
    assert (R.transpose(-1, -2) @ R - eye).abs().max() < tol
    assert (torch.linalg.det(R) - 1).abs().max() < tol


# ---------------------------------------------------------------------------------------------- rpy
def test_rpy_matches_urdf_convention(rng):
    """rpy_to_matrix is Rz(yaw) Ry(pitch) Rx(roll) written out with numpy-free elementary rotations."""
    rpy = (torch.rand(200, 3, generator=rng, dtype=F64) * 2 - 1) * math.pi
    r, p, y = rpy.unbind(-1)

    def elem(angle, axis):
        c, s = torch.cos(angle), torch.sin(angle)
        one, zero = torch.ones_like(c), torch.zeros_like(c)
        rows = {
            "x": [[one, zero, zero], [zero, c, -s], [zero, s, c]],
            "y": [[c, zero, s], [zero, one, zero], [-s, zero, c]],
            "z": [[c, -s, zero], [s, c, zero], [zero, zero, one]],
        }[axis]
        return torch.stack([torch.stack(row, -1) for row in rows], -2)

    expected = elem(y, "z") @ elem(p, "y") @ elem(r, "x")
    torch.testing.assert_close(geo.rpy_to_matrix(rpy), expected, rtol=0, atol=1e-15)


def test_rpy_round_trip_random(rng):
    R = noisy(random_rotations(2000, rng), rng)
    rpy = geo.matrix_to_rpy(R)
    assert (rpy[:, 1].abs() <= math.pi / 2).all()
    assert (rpy.abs() <= math.pi).all()
    torch.testing.assert_close(geo.rpy_to_matrix(rpy), R, rtol=0, atol=1e-14)


def test_rpy_recovers_angles_away_from_gimbal_lock(rng):
    rpy = torch.rand(500, 3, generator=rng, dtype=F64) * 2 - 1
    rpy = rpy * torch.tensor([math.pi, 1.4, math.pi], dtype=F64)  # |pitch| < 1.4 < pi/2
    torch.testing.assert_close(geo.matrix_to_rpy(geo.rpy_to_matrix(rpy)), rpy, rtol=0, atol=1e-13)


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["pitch+pi/2", "pitch-pi/2"])
def test_rpy_at_gimbal_lock(sign, rng):
    """At |pitch| = pi/2 roll is 0, the rotation about z goes to yaw, and the matrix round-trips."""
    n = 300
    rpy = torch.rand(n, 3, generator=rng, dtype=F64) * 2 * math.pi - math.pi
    rpy[:, 1] = sign * math.pi / 2
    R = geo.rpy_to_matrix(rpy)
    for M in (R, noisy(R, rng)):
        out = geo.matrix_to_rpy(M)
        assert out[:, 0].abs().max() < 1e-12
        torch.testing.assert_close(out[:, 1], torch.full((n,), sign * math.pi / 2, dtype=F64), rtol=0, atol=1e-12)
        torch.testing.assert_close(geo.rpy_to_matrix(out), M, rtol=0, atol=1e-14)


@pytest.mark.parametrize("eps", [1e-13, 1e-12, 1e-10, 1e-8, 1e-6], ids=lambda e: f"eps{e:g}")
@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["pitch+", "pitch-"])
def test_rpy_round_trip_near_gimbal_lock(eps, sign, rng):
    """|pitch| = pi/2 - eps with rounding noise in R: the matrix must still round-trip to ~1e-14."""
    n = 300
    rpy = torch.rand(n, 3, generator=rng, dtype=F64) * 2 * math.pi - math.pi
    rpy[:, 1] = sign * (math.pi / 2 - eps)
    R = noisy(geo.rpy_to_matrix(rpy), rng)
    torch.testing.assert_close(geo.rpy_to_matrix(geo.matrix_to_rpy(R)), R, rtol=0, atol=1e-13)


# ---------------------------------------------------------------------------------------------- quaternions
def test_quaternion_round_trip(rng):
    q = torch.randn(2000, 4, generator=rng, dtype=F64)
    q = q / q.norm(dim=-1, keepdim=True)
    q = torch.where(q[:, :1] < 0, -q, q)
    R = geo.quat_to_matrix(q)
    assert_rotation(R)
    out = geo.matrix_to_quat(R)
    assert (out[:, 0] >= 0).all()
    torch.testing.assert_close(out.norm(dim=-1), torch.ones(2000, dtype=F64), rtol=0, atol=1e-15)
    torch.testing.assert_close(out, q, rtol=0, atol=1e-14)
    torch.testing.assert_close(geo.quat_to_matrix(out), R, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "axis",
    [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (0.3, -0.5, -0.8)],
    ids=["x", "y", "z", "oblique"],
)
def test_quaternion_half_turns_and_identity(axis):
    """Half turns (w = 0, the hard case of Shepperd's method) and the identity."""
    a = torch.tensor(axis, dtype=F64)
    a = a / a.norm()
    R = geo.axis_angle_to_matrix(a, torch.tensor(math.pi, dtype=F64))
    q = geo.matrix_to_quat(R)
    assert q[0].abs() < 1e-15
    assert torch.allclose(q[1:], a, atol=1e-14) or torch.allclose(q[1:], -a, atol=1e-14)
    torch.testing.assert_close(geo.quat_to_matrix(q), R, rtol=0, atol=1e-14)
    ident = geo.matrix_to_quat(torch.eye(3, dtype=F64))
    torch.testing.assert_close(ident, torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=F64), rtol=0, atol=0)


def test_quaternion_of_axis_angle(rng):
    """q = (cos(t/2), sin(t/2) axis) for rotations about random axes by t in [0, pi)."""
    axis = torch.randn(500, 3, generator=rng, dtype=F64)
    axis = axis / axis.norm(dim=-1, keepdim=True)
    angle = torch.rand(500, generator=rng, dtype=F64) * math.pi * 0.999
    q = geo.matrix_to_quat(geo.axis_angle_to_matrix(axis, angle))
    expected = torch.cat([torch.cos(angle / 2)[:, None], torch.sin(angle / 2)[:, None] * axis], -1)
    torch.testing.assert_close(q, expected, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------------- angles
@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-9, 1e-6, 0.5, 2.0, math.pi - 1e-6, math.pi - 1e-9, math.pi])
def test_rotation_angle_precision(angle, rng):
    axis = torch.randn(50, 3, generator=rng, dtype=F64)
    axis = axis / axis.norm(dim=-1, keepdim=True)
    R = geo.axis_angle_to_matrix(axis, torch.full((50,), angle, dtype=F64))
    got = geo.rotation_angle(R)
    # Absolute precision near pi, relative precision near 0 (arccos of the trace would give ~1e-8 there).
    tol = 1e-15 * max(angle, 1e-3) if angle < 1e-3 else 1e-13
    torch.testing.assert_close(got, torch.full((50,), angle, dtype=F64), rtol=0, atol=tol)
    assert (got >= 0).all() and (got <= math.pi).all()


def test_pose_errors(rng):
    T = geo.make_transform(random_rotations(100, rng), torch.randn(100, 3, generator=rng, dtype=F64))
    axis = torch.randn(100, 3, generator=rng, dtype=F64)
    axis = axis / axis.norm(dim=-1, keepdim=True)
    angle = torch.rand(100, generator=rng, dtype=F64) * 3.0
    shift = torch.randn(100, 3, generator=rng, dtype=F64)
    T2 = T.clone()
    T2[:, :3, :3] = T[:, :3, :3] @ geo.axis_angle_to_matrix(axis, angle)
    T2[:, :3, 3] += shift
    pos, rot = geo.pose_errors(T, T2)
    torch.testing.assert_close(pos, shift.norm(dim=-1), rtol=0, atol=1e-14)
    torch.testing.assert_close(rot, angle, rtol=0, atol=1e-13)
    pos0, rot0 = geo.pose_errors(T, T)
    assert pos0.max() == 0 and rot0.max() < 1e-15


def test_invert_transform(rng):
    T = geo.make_transform(random_rotations(100, rng), torch.randn(100, 3, generator=rng, dtype=F64))
    torch.testing.assert_close(
        geo.invert_transform(T) @ T, torch.eye(4, dtype=F64).expand(100, 4, 4), rtol=0, atol=1e-14
    )
    torch.testing.assert_close(geo.invert_transform(T), torch.linalg.inv(T), rtol=0, atol=1e-13)


# ---------------------------------------------------------------------------------------------- Kabsch
@pytest.mark.parametrize("k", [3, 4, 20], ids=lambda k: f"{k}pts")
def test_kabsch_recovers_rigid_motion(k, rng):
    batch = 64
    src = torch.randn(batch, k, 3, generator=rng, dtype=F64)
    R = random_rotations(batch, rng)
    t = torch.randn(batch, 3, generator=rng, dtype=F64) * 3
    tgt = src @ R.transpose(-1, -2) + t[:, None, :]
    R_hat, t_hat = geo.kabsch(src, tgt)
    torch.testing.assert_close(R_hat, R, rtol=0, atol=1e-12)
    torch.testing.assert_close(t_hat, t, rtol=0, atol=1e-12)
    assert_rotation(R_hat)


def test_kabsch_never_returns_a_reflection(rng):
    """Mirrored targets: the best *proper* rotation (det +1) is returned, not the reflection."""
    src = torch.randn(32, 10, 3, generator=rng, dtype=F64)
    mirror = torch.diag(torch.tensor([1.0, 1.0, -1.0], dtype=F64))
    R, _ = geo.kabsch(src, src @ mirror)
    assert_rotation(R)


def test_kabsch_weights_ignore_outliers(rng):
    src = torch.randn(8, 3, generator=rng, dtype=F64)
    R = random_rotations(1, rng)[0]
    t = torch.tensor([0.3, -1.0, 2.0], dtype=F64)
    tgt = src @ R.T + t
    tgt[-1] += 5.0  # an outlier with zero weight
    w = torch.ones(8, dtype=F64)
    w[-1] = 0.0
    R_hat, t_hat = geo.kabsch(src, tgt, w)
    torch.testing.assert_close(R_hat, R, rtol=0, atol=1e-12)
    torch.testing.assert_close(t_hat, t, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- rotation_between
def _check_between(a: torch.Tensor, b: torch.Tensor) -> None:
    R = geo.rotation_between(a, b)
    assert_rotation(R, 1e-14)
    torch.testing.assert_close((R @ a[..., None])[..., 0], b, rtol=0, atol=1e-14)


def test_rotation_between_random(rng):
    a = torch.randn(1000, 3, generator=rng, dtype=F64)
    b = torch.randn(1000, 3, generator=rng, dtype=F64)
    _check_between(a / a.norm(dim=-1, keepdim=True), b / b.norm(dim=-1, keepdim=True))


def test_perpendicular_unit_random_and_axis_aligned(rng):
    a = torch.randn(1000, 3, generator=rng, dtype=F64)
    a = torch.cat([a / a.norm(dim=-1, keepdim=True), torch.eye(3, dtype=F64), -torch.eye(3, dtype=F64)])
    p = geo.perpendicular_unit(a)
    torch.testing.assert_close(p.norm(dim=-1), torch.ones(len(a), dtype=F64), rtol=0, atol=1e-12)
    assert (p * a).sum(-1).abs().max() < 1e-12


def test_rotation_between_is_the_minimal_rotation(rng):
    """The rotation angle equals the angle between the vectors, and a x b is kept fixed."""
    a = torch.randn(200, 3, generator=rng, dtype=F64)
    b = torch.randn(200, 3, generator=rng, dtype=F64)
    a, b = a / a.norm(dim=-1, keepdim=True), b / b.norm(dim=-1, keepdim=True)
    R = geo.rotation_between(a, b)
    torch.testing.assert_close(geo.rotation_angle(R), torch.arccos((a * b).sum(-1).clamp(-1, 1)), rtol=0, atol=1e-7)
    n = torch.linalg.cross(a, b)
    torch.testing.assert_close((R @ n[..., None])[..., 0], n, rtol=0, atol=1e-14)


@pytest.mark.parametrize(
    "vec",
    [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0), (1.0, 0.0, 0.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.3, -0.5, -0.8)],
    ids=["+z", "-z", "+x", "-x", "-y", "oblique"],
)
def test_rotation_between_parallel_and_antiparallel(vec):
    a = torch.tensor(vec, dtype=F64)
    a = a / a.norm()
    torch.testing.assert_close(geo.rotation_between(a, a), torch.eye(3, dtype=F64), rtol=0, atol=1e-15)
    _check_between(a, -a)
    R = geo.rotation_between(a, -a)
    torch.testing.assert_close(geo.rotation_angle(R), torch.tensor(math.pi, dtype=F64), rtol=0, atol=1e-15)


def test_rotation_between_z_and_nearly_antiparallel_axes(rng):
    """The graph aligns +z with URDF axes: axes within 1e-9 of -z must still be hit to rounding."""
    b = torch.tensor([0.0, 0.0, -1.0], dtype=F64) + 1e-9 * torch.randn(200, 3, generator=rng, dtype=F64)
    ez = torch.tensor([0.0, 0.0, 1.0], dtype=F64).expand(200, 3)
    _check_between(ez, b / b.norm(dim=-1, keepdim=True))


def test_rotation_between_nearly_antiparallel_general(rng):
    """For general a, b = -a + O(s) the axis a x b / s carries ~1e-16 / s of rounding: R a = b to ~1e-16 / s."""
    a = torch.randn(200, 3, generator=rng, dtype=F64)
    a = a / a.norm(dim=-1, keepdim=True)
    b = -a + 1e-6 * torch.randn(200, 3, generator=rng, dtype=F64)
    b = b / b.norm(dim=-1, keepdim=True)
    R = geo.rotation_between(a, b)
    assert_rotation(R, 1e-14)
    torch.testing.assert_close((R @ a[..., None])[..., 0], b, rtol=0, atol=1e-9)


# ---------------------------------------------------------------------------------------------- check_pose
def test_check_pose_accepts_rigid_transforms(rng):
    T = geo.make_transform(random_rotations(10, rng), torch.randn(10, 3, generator=rng, dtype=F64))
    assert geo.check_pose(T) is T
    assert torch.equal(geo.check_pose(T[0], tol=1e-12), T[0])


def _with(T: torch.Tensor, index: tuple[int, ...], value: float) -> torch.Tensor:
    out = T.clone()
    out[index] = value
    return out


@pytest.mark.parametrize(
    "make_bad, match",
    [
        (lambda T: T[..., :3, :], r"T_goal must have shape \(\.\.\., 4, 4\), got \(5, 3, 4\)"),
        (lambda T: T[0, :3, :3], r"must have shape \(\.\.\., 4, 4\), got \(3, 3\)"),
        (lambda T: _with(T, (2, 0, 3), float("nan")), "T_goal contains NaN or inf"),
        (lambda T: _with(T, (1, 1, 1), float("inf")), "T_goal contains NaN or inf"),
        (
            lambda T: T * torch.tensor([1.0, 1.0, 1.01, 1.0], dtype=F64)[:, None],
            r"T_goal is not a rigid transform at index \(0,\)",
        ),
        (lambda T: T @ torch.diag(torch.tensor([1.0, 1.0, -1.0, 1.0], dtype=F64)), "determinant \\+1"),
        (lambda T: _with(T, (4, 3, 0), 0.5), "last row must be"),
    ],
    ids=["3x4", "3x3", "nan", "inf", "scaled", "reflection", "bottom-row"],
)
def test_check_pose_rejects(make_bad, match, rng):
    T = geo.make_transform(random_rotations(5, rng), torch.randn(5, 3, generator=rng, dtype=F64))
    with pytest.raises(ValueError, match=match):
        geo.check_pose(make_bad(T), "T_goal")


def test_check_pose_rejects_non_tensor():
    with pytest.raises(TypeError, match="must be a torch.Tensor"):
        geo.check_pose([[1.0, 0.0], [0.0, 1.0]])


def test_helpers_follow_dtype(rng):
    R64 = random_rotations(4, rng)
    R32 = R64.float()
    for fn in (geo.matrix_to_rpy, geo.matrix_to_quat, geo.rotation_angle):
        assert fn(R32).dtype == torch.float32 and fn(R64).dtype == F64
    torch.testing.assert_close(geo.matrix_to_quat(R32).double(), geo.matrix_to_quat(R64), rtol=0, atol=1e-6)
