"""Figures of path following (matplotlib, optional; rendered like :mod:`ggik.evaluation.plots`).

:func:`plot_path`: one figure per path: joint values [deg; prismatic joints in m] over the waypoints (left; limits
as dotted lines in the joint's colour) and the EE path in 3D (right, equal axes: the waypoints, the trajectory's FK
positions, and the tool z axis at every tenth waypoint), in the robot's base-link frame.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from ggik.evaluation.plots import new_figure, save_figure
from ggik.kinematics.robot import Robot

__all__ = ["plot_path"]


def plot_path(
    robot: Robot,
    poses: torch.Tensor,
    q: torch.Tensor,
    path: str | Path,
    title: str | None = None,
    valid: bool | None = None,
) -> Path:
    """Write the figure of the module docstring for waypoints ``poses`` (T, 4, 4) and trajectory ``q`` (T, dof) to
    ``path`` (.png); ``valid`` (if given) is shown in the title."""
    poses = torch.as_tensor(poses, dtype=torch.float64)
    q = torch.as_tensor(q, dtype=torch.float64)
    if q.ndim != 2 or q.shape != (poses.shape[0], robot.dof):
        raise ValueError(f"q must have shape ({poses.shape[0]}, {robot.dof}), got {tuple(q.shape)}")
    fig, canvas = new_figure((12, 4.8))
    ax = fig.add_subplot(1, 2, 1)
    t = range(q.shape[0])
    for j in range(robot.dof):
        scale = 1.0 if robot.joint_types[j] == "prismatic" else 180.0 / math.pi
        (line,) = ax.plot(t, (q[:, j] * scale).numpy(), lw=1.2, label=robot.joint_names[j])
        if bool(robot.limited[j]):
            for bound in (robot.lower[j], robot.upper[j]):
                ax.axhline(float(bound) * scale, color=line.get_color(), ls=":", lw=0.6)
    ax.set_xlabel("waypoint")
    ax.set_ylabel("joint value [deg; prismatic: m]")
    ax.legend(fontsize=6, ncol=2, loc="best")
    ax.grid(alpha=0.3)
    ax3 = fig.add_subplot(1, 2, 2, projection="3d")
    p = poses[:, :3, 3].numpy()
    reached = robot.fk(q)[:, :3, 3].numpy()
    ax3.plot(p[:, 0], p[:, 1], p[:, 2], "k-", lw=2.5, alpha=0.35, label="waypoints")
    ax3.plot(reached[:, 0], reached[:, 1], reached[:, 2], "C3-", lw=1.0, label="FK(q)")
    span = float((p.max(0) - p.min(0)).max())
    z = poses[::10, :3, 2].numpy() * max(0.15 * span, 0.02)
    ax3.quiver(p[::10, 0], p[::10, 1], p[::10, 2], z[:, 0], z[:, 1], z[:, 2], color="C0", lw=0.6, label="tool z")
    center, half = (p.max(0) + p.min(0)) / 2, max(0.55 * span, 0.02)  # equal axes: a cube around the path
    ax3.set_xlim(center[0] - half, center[0] + half)
    ax3.set_ylim(center[1] - half, center[1] + half)
    ax3.set_zlim(center[2] - half, center[2] + half)
    ax3.set_xlabel("x [m]")
    ax3.set_ylabel("y [m]")
    ax3.set_zlabel("z [m]")
    ax3.legend(fontsize=7)
    head = title or f"{robot.name}: {poses.shape[0]} waypoints"
    if valid is not None:
        head += " (valid)" if valid else " (NOT valid)"
    fig.suptitle(head)
    fig.tight_layout()
    return save_figure(fig, canvas, path)
