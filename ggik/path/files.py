"""Path and trajectory files: CSV, one waypoint (or one configuration) per line.

A *path file* holds EE waypoints in the robot's base-link frame, one per line: ``x,y,z,qw,qx,qy,qz`` (position
[m], unit quaternion (w, x, y, z)). Allowed extras: a header line (the first line, when none of its fields is a
number: a first line with some numbers is a waypoint, and a bad one an error), an index column first (eight
columns: the first one is ignored), blank lines and ``#`` comment lines. Quaternions are normalised when their norm
is within ``QUAT_TOL`` of 1; anything else is a :class:`ggik.errors.PathFileError` naming the file and line.

A *trajectory file* holds one configuration per waypoint: a header of joint names (the same rule), then the joint
values [rad or m] of each waypoint. Both are written atomically (:func:`ggik.fileio.atomic_write_text`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from pathlib import Path

import torch

from ggik.errors import PathFileError
from ggik.fileio import atomic_write_text
from ggik.kinematics.geometry import check_pose, make_transform, matrix_to_quat, quat_to_matrix

__all__ = ["read_path_csv", "write_path_csv", "read_trajectory_csv", "write_trajectory_csv", "QUAT_TOL", "PATH_COLUMNS"]

QUAT_TOL = 1e-3  #: a quaternion whose norm differs from 1 by more than this is an error, not a rounding
PATH_COLUMNS = ("x", "y", "z", "qw", "qx", "qy", "qz")  #: the columns of a path file


def _rows(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, fields) of every non-blank, non-comment line."""
    if not path.is_file():
        raise FileNotFoundError(f"path file not found: {path}")
    text = path.read_text(encoding="utf-8")
    out = []
    for number, fields in enumerate(csv.reader(io.StringIO(text)), start=1):
        fields = [f.strip() for f in fields]
        if not any(fields) or fields[0].startswith("#"):
            continue
        out.append((number, fields))
    return out


def _numbers(fields: list[str]) -> list[float] | None:
    """The fields as floats, or None when one of them is not a number."""
    try:
        return [float(f) for f in fields]
    except ValueError:
        return None


def _without_header(rows: list[tuple[int, list[str]]]) -> list[tuple[int, list[str]]]:
    """``rows`` less the first one when it is a header: none of its fields is a number."""
    if rows and all(_numbers([f]) is None for f in rows[0][1]):
        return rows[1:]
    return rows


def read_path_csv(path: str | Path) -> torch.Tensor:
    """(T, 4, 4) float64 EE poses from a path file (module docstring); :class:`PathFileError` for a malformed file,
    FileNotFoundError for a missing one."""
    path = Path(path)
    rows = _without_header(_rows(path))
    if not rows:
        raise PathFileError(f"{path}: no waypoints (expected lines x,y,z,qw,qx,qy,qz)")
    values = []
    for number, fields in rows:
        where = f"{path}, line {number}"
        if len(fields) not in (7, 8):
            raise PathFileError(
                f"{where}: expected 7 columns x,y,z,qw,qx,qy,qz (or 8 with an index first), found {len(fields)}"
            )
        nums = _numbers(fields)
        if nums is None:
            raise PathFileError(f"{where}: not a number in {','.join(fields)!r}")
        nums = nums[-7:]
        if not all(math.isfinite(v) for v in nums):
            raise PathFileError(f"{where}: NaN or inf in {','.join(fields)!r}")
        norm = math.sqrt(sum(v * v for v in nums[3:]))
        if abs(norm - 1.0) > QUAT_TOL:
            raise PathFileError(
                f"{where}: the quaternion (qw, qx, qy, qz) must be a unit quaternion, its norm is {norm:.6g}"
            )
        values.append(nums)
    v = torch.tensor(values, dtype=torch.float64)
    return make_transform(quat_to_matrix(v[:, 3:]), v[:, :3])


def write_path_csv(path: str | Path, poses: torch.Tensor) -> Path:
    """Write EE poses (T, 4, 4) [m] (base-link frame) as a path file with a header (quaternions with w >= 0);
    ValueError for another shape or a pose that is not a rigid transform."""
    poses = check_pose(torch.as_tensor(poses, dtype=torch.float64), "poses")
    if poses.ndim != 3:
        raise ValueError(f"poses must have shape (T, 4, 4), got {tuple(poses.shape)}")
    quat = matrix_to_quat(poses[:, :3, :3])
    lines = [",".join(PATH_COLUMNS)]
    lines += [",".join(f"{v:.12g}" for v in p[:3, 3].tolist() + q.tolist()) for p, q in zip(poses, quat)]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def write_trajectory_csv(path: str | Path, q: torch.Tensor, joint_names: Sequence[str]) -> Path:
    """Write a trajectory (T, dof) [rad or m] with a header of joint names, one row per waypoint."""
    q = torch.as_tensor(q, dtype=torch.float64)
    if q.ndim != 2 or q.shape[1] != len(joint_names):
        raise ValueError(f"q must have shape (T, {len(joint_names)}), got {tuple(q.shape)}")
    lines = [",".join(joint_names)] + [",".join(f"{v:.12g}" for v in row) for row in q.tolist()]
    return atomic_write_text(path, "\n".join(lines) + "\n")


def read_trajectory_csv(path: str | Path, dof: int | None = None) -> torch.Tensor:
    """(T, dof) float64 joint values of a trajectory file (a header line is skipped); :class:`PathFileError` for
    rows of another length than ``dof`` (default: the first row's), non-numbers or NaN."""
    path = Path(path)
    rows = _without_header(_rows(path))
    if not rows:
        raise PathFileError(f"{path}: no configurations")
    dof = dof or len(rows[0][1])
    values = []
    for number, fields in rows:
        nums = _numbers(fields)
        if len(fields) != dof or nums is None or not all(math.isfinite(v) for v in nums):
            raise PathFileError(f"{path}, line {number}: expected {dof} finite numbers, found {','.join(fields)!r}")
        values.append(nums)
    return torch.tensor(values, dtype=torch.float64)
