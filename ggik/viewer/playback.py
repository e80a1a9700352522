"""Path playback: a joint trajectory (the CSV ``ggik path --out`` writes, or a :class:`ggik.PathResult`) animated with
a slider and a play button, the tool path drawn as a line through every waypoint's end-effector position.

:func:`read_trajectory` checks the file against the robot: one column per joint (a header of joint names, when
there is one, must name the robot's joints in order), finite values, within the joint limits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ggik.errors import GGIKError, PathFileError
from ggik.kinematics.robot import Robot
from ggik.path.files import read_trajectory_csv

__all__ = ["read_trajectory", "check_trajectory", "Playback", "LIMIT_TOL"]

LIMIT_TOL = 1e-6  #: [rad or m] how far outside a joint limit a trajectory value may lie (rounding of the file)


def _header(path: Path) -> list[str] | None:
    """The first non-blank, non-comment line's fields when none is a number (a header), else None."""
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = [f.strip() for f in line.split(",")]
        if not any(fields) or fields[0].startswith("#"):
            continue
        try:
            [float(f) for f in fields]
        except ValueError:
            return fields
        return None
    return None


def check_trajectory(robot: Robot, q: torch.Tensor, where: str) -> torch.Tensor:
    """``q`` (T, dof) as float64 if it fits ``robot``: the right number of joints, finite, within the joint limits
    (:data:`LIMIT_TOL`); GGIKError naming ``where``, the waypoint (from 1) and the joints otherwise."""
    q = torch.as_tensor(q, dtype=torch.float64)
    if q.ndim != 2 or q.shape[1] != robot.dof or q.shape[0] == 0:
        raise GGIKError(
            f"{where}: a trajectory of {robot.name} has {robot.dof} columns ({', '.join(robot.joint_names)}), "
            f"got shape {tuple(q.shape)}"
        )
    if not torch.isfinite(q).all():
        raise GGIKError(f"{where}: NaN or inf at waypoint {int((~torch.isfinite(q)).any(1).nonzero()[0]) + 1}")
    outside = robot.limited & ((q < robot.lower - LIMIT_TOL) | (q > robot.upper + LIMIT_TOL))
    if outside.any():
        t, j = (int(v) for v in outside.nonzero()[0])
        raise GGIKError(
            f"{where}: waypoint {t + 1}: {robot.joint_names[j]} = {float(q[t, j]):.6g} is outside its limits "
            f"[{float(robot.lower[j]):.6g}, {float(robot.upper[j]):.6g}] ({int(outside.any(1).sum())} waypoints "
            "outside): is it a trajectory of this robot?"
        )
    return q


def read_trajectory(robot: Robot, path: str | Path) -> torch.Tensor:
    """(T, dof) float64 joint values of a trajectory file (:func:`ggik.path.files.read_trajectory_csv`: a header
    of joint names, then one configuration per waypoint), checked against ``robot`` (:func:`check_trajectory`).
    FileNotFoundError for a missing file, PathFileError or GGIKError for one that does not fit."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"trajectory file not found: {path}")
    header = _header(path)
    if header is not None and len(header) != robot.dof:
        raise PathFileError(
            f"{path}: {len(header)} columns ({', '.join(header)}); {robot.name} has {robot.dof} joints "
            f"({', '.join(robot.joint_names)})"
        )
    if header is not None and tuple(header) != tuple(robot.joint_names):
        raise PathFileError(f"{path}: the header names {header}, not {robot.name}'s joints {list(robot.joint_names)}")
    q = read_trajectory_csv(path, robot.dof)
    return check_trajectory(robot, q, str(path))


class Playback:
    """A trajectory's animation: a "Path" folder in ``gui`` with a waypoint slider, play/pause and the path's length;
    the tool path drawn in ``scene`` as a line ``/path/tool``. ``show(q)`` draws one configuration (dof,).

    Args:
        q: (T, dof) the trajectory [rad or m]; ``tool_points``: (T, 3) its EE positions [m] (base-link frame).
    """

    def __init__(
        self,
        gui: Any,
        scene: Any,
        q: torch.Tensor,
        tool_points: np.ndarray,
        color: tuple[int, int, int],
        fps: float,
        show: Callable[[torch.Tensor], None],
    ) -> None:
        self.q, self.show_q, self.fps = q, show, fps
        self.playing = threading.Event()
        self.stopped = threading.Event()
        points = np.asarray(tool_points, dtype=np.float32)
        if len(points) > 1:
            segments = np.stack([points[:-1], points[1:]], axis=1)  # (T-1, 2, 3)
            self.line = scene.add_line_segments("/path/tool", segments, colors=color, thickness=0.006)
        self.marks = scene.add_point_cloud("/path/waypoints", points, colors=color, point_size=0.012)
        with gui.add_folder("Path"):
            self.slider = gui.add_slider("waypoint", min=1, max=max(len(q), 2), step=1, initial_value=1)
            self.play = gui.add_button("play / pause")
            gui.add_markdown(f"{len(q)} waypoints, {fps:g} per second")
        self.slider.on_update(lambda _event: self.show_q(self.q[min(int(self.slider.value), len(self.q)) - 1]))
        self.play.on_click(lambda _event: self.toggle())
        self.thread = threading.Thread(target=self.run, name="ggik-view-playback", daemon=True)
        self.thread.start()
        self.show_q(self.q[0])

    def toggle(self) -> None:
        if self.playing.is_set():
            self.playing.clear()
        else:
            self.playing.set()

    def run(self) -> None:
        while not self.stopped.is_set():
            if not self.playing.wait(0.2):
                continue
            self.slider.value = int(self.slider.value) % len(self.q) + 1  # calls show_q through the slider
            self.stopped.wait(1.0 / self.fps)

    def stop(self) -> None:
        self.stopped.set()
        self.playing.set()
        self.thread.join(2.0)
