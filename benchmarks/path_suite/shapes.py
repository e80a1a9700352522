"""The generator of the path-following suite that ``ggik eval paths`` reads (:mod:`ggik.evaluation.path_suite`):
end-effector paths for the ``urdfs/`` robots, written as CSV files plus ``suite.json``.

Per robot, shapes are placed around a *home* configuration (:func:`home_configuration`: the most manipulable of
2048 seeded configurations from the middle 80 % of every joint range whose EE is well inside the workspace),
scaled by the robot's reach (the largest EE distance from the shoulder over those configurations; sizes 8 % of
it), in the plane of the tool's x and y axes:

* ``circle`` (200 waypoints, starts at the home pose, with the home configuration as the start configuration),
  ``square`` (200), ``line`` (100, through the home pose), ``s_curve`` (150, the tool turning by half the
  tangent's turn), ``writing`` (300 waypoints, 5 cursive loops, from the home configuration);
* ``rotation``: a pure rotation about the fixed tool point (150: the tool axis circling a cone that opens to 30
  degrees and closes again);
* ``tool_roll``: a long rotation about the tool axis, 300 degrees (150 waypoints), from the home configuration with
  the last joint 10 degrees from the limit it turns away from (so the last joint alone can do it where its range
  allows; from most other starts continuation runs into that joint's limit);
* ``base_arc``: the home pose carried rigidly about the first joint's axis by 150 degrees (150), starting from a
  configuration whose first joint is 20 degrees from its upper limit: continuation from that configuration runs
  into the limit; the other shoulder branch, or a 2 pi equivalent of the first joint, must be taken.

Every path is checked for reachability before it is written: a valid trajectory (0.1 mm, 0.1 deg, limits, 7 deg)
must exist, found by :func:`ggik.path.solve_path` without a model and with a generous budget (the witness);
a path without one is shrunk (radius x 0.7, or a smaller angle) up to three times, then left out with a note.
For ``base_arc`` the note says whether continuation from the given configuration fails, as it should.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import torch

from benchmarks.common.streams import PATH_SUITE
from ggik.evaluation.path_baselines import sequential_lm
from ggik.evaluation.path_suite import SUITE_FORMAT, SuitePath
from ggik.fileio import atomic_write_text
from ggik.kinematics.geometry import axis_angle_to_matrix, make_transform
from ggik.kinematics.robot import Robot
from ggik.path import PathConfig, solve_path
from ggik.path.files import write_path_csv
from ggik.rng import step_generator

__all__ = ["SHAPES", "home_configuration", "make_shape", "make_suite"]

F64 = torch.float64
SHAPES = ("circle", "square", "line", "s_curve", "writing", "rotation", "tool_roll", "base_arc")  #: the path kinds


def home_configuration(robot: Robot, generator: torch.Generator, n: int = 2048) -> tuple[torch.Tensor, float]:
    """(home (dof,), reach [m]): of ``n`` configurations drawn from the middle 80 % of every joint range, the most
    manipulable (sqrt det J J^T) among those whose EE lies 0.3-0.6 reach from the second joint (the shoulder):
    inside the workspace, not at its rim. The reach is the largest EE distance from the shoulder over all of them."""
    mid, half = (robot.lower + robot.upper) / 2, (robot.upper - robot.lower) / 2
    q = mid + 0.8 * half * (2 * torch.rand(n, robot.dof, generator=generator, dtype=F64) - 1)
    frames, T = robot.joint_frames(q)
    J = robot.jacobian_at(frames, T)  # one FK for both
    manip = torch.linalg.det(J @ J.transpose(-1, -2)).clamp(min=0).sqrt()
    dist = torch.linalg.vector_norm(T[:, :3, 3] - frames[:, min(1, frames.shape[1] - 1), :3, 3], dim=-1)
    reach = float(dist.max())
    inside = (dist > 0.3 * reach) & (dist < 0.6 * reach)
    return q[int(torch.where(inside, manip, manip - manip.max() - 1).argmax())], reach


def _rot(axis: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    return axis_angle_to_matrix(axis.expand(angle.shape + (3,)), angle)


def make_shape(
    kind: str, P0: torch.Tensor, size: float, robot: Robot | None = None, q0: torch.Tensor | None = None
) -> torch.Tensor:
    """(T, 4, 4) poses of path ``kind`` around the pose P0 (4, 4) with size ``size`` [m] (a radius; for
    ``rotation``/``tool_roll``/``base_arc`` the size scales the angle, 1 = full). ``base_arc`` needs ``robot`` and
    the configuration ``q0`` whose first joint axis it turns about."""
    p0, R0 = P0[:3, 3], P0[:3, :3]
    u, v = R0[:, 0], R0[:, 1]

    def planar(x: torch.Tensor, y: torch.Tensor, R: torch.Tensor | None = None) -> torch.Tensor:
        pos = p0 + x[:, None] * u + y[:, None] * v
        return make_transform(R0.expand(len(x), 3, 3) if R is None else R, pos)

    r = size
    if kind == "circle":
        th = torch.linspace(0, 2 * math.pi, 200, dtype=F64)
        return planar(r * (torch.cos(th) - 1), r * torch.sin(th))
    if kind == "square":
        s = torch.linspace(0, 4, 201, dtype=F64)[:-1]
        corners = 2 * r * torch.tensor([[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]], dtype=F64)  # from the home pose round
        i = s.floor().long().clamp(max=3)
        xy = corners[i] + (s - i)[:, None] * (corners[i + 1] - corners[i])
        return planar(xy[:, 0], xy[:, 1])
    if kind == "line":
        s = torch.linspace(-1.5 * r, 1.5 * r, 100, dtype=F64)
        return planar(s, 0.3 * s)
    if kind == "s_curve":
        s = torch.linspace(0, 1, 150, dtype=F64)
        x, y = 3 * r * (s - 0.5), r * torch.sin(2 * math.pi * s)
        heading = 0.5 * torch.atan2(2 * math.pi * r * torch.cos(2 * math.pi * s), torch.full_like(s, 3 * r))
        return planar(x, y, R0 @ _rot(torch.tensor([0.0, 0.0, 1.0], dtype=F64), heading))
    if kind == "writing":
        tau = torch.linspace(0, 5 * 2 * math.pi, 300, dtype=F64)
        a, b = 0.2 * r / math.pi, 0.3 * r  # cursive loops: a prolate trochoid, 5 loops over 2 r
        return planar(a * tau - b * torch.sin(tau), b * (1 - torch.cos(tau)))
    if kind == "rotation":
        phi = torch.linspace(0, 2 * math.pi, 150, dtype=F64)
        tilt = math.radians(30.0) * size * torch.sin(torch.linspace(0, math.pi, 150, dtype=F64)).clamp(min=0)
        axis = torch.stack([torch.cos(phi), torch.sin(phi), torch.zeros_like(phi)], -1)
        return make_transform(R0 @ axis_angle_to_matrix(axis, tilt), p0.expand(150, 3))
    if kind == "tool_roll":
        angle = torch.linspace(0, math.radians(300.0) * size, 150, dtype=F64)
        return make_transform(R0 @ _rot(torch.tensor([0.0, 0.0, 1.0], dtype=F64), angle), p0.expand(150, 3))
    if kind == "base_arc":
        if robot is None or q0 is None:
            raise ValueError("make_shape('base_arc') needs robot and q0 (the first joint's axis)")
        F, _ = robot.joint_frames(q0)
        axis, origin = F[0, :3, :3] @ robot.joint_axes[0], F[0, :3, 3]
        angle = torch.linspace(0, math.radians(150.0) * size, 150, dtype=F64)
        R = _rot(axis, angle)
        pos = origin + ((P0[:3, 3] - origin) @ R.transpose(-1, -2))
        return make_transform(R @ R0, pos)
    raise ValueError(f"unknown path kind {kind!r}; kinds: {', '.join(SHAPES)}")


def _witness(robot: Robot, poses: torch.Tensor, q_start: torch.Tensor | None, seed: int) -> tuple[bool, float]:
    """(a valid trajectory found, its mjac [deg]) by :func:`ggik.path.solve_path` without a model, with a generous
    budget."""
    cfg = PathConfig(samples=0, starts=32, sweep_tracks=16, max_rounds=6, time_limit=30.0)
    res = solve_path(robot, poses, cfg, q_start=q_start, generator=step_generator(seed, PATH_SUITE, 1))
    return res.valid, res.mjac


def make_suite(
    robots: list[str],
    out_dir: str | Path,
    seed: int = 0,
    kinds: tuple[str, ...] = SHAPES,
    log: Callable[[str], None] = print,
) -> list[SuitePath]:
    """Write ``out_dir``/ROBOT_KIND.csv for every robot and kind, and ``suite.json`` listing them (module docstring)."""
    out = Path(out_dir)
    entries: list[SuitePath] = []
    for r_index, name in enumerate(robots):
        robot = Robot.from_name(name)
        q_home, reach = home_configuration(robot, step_generator(seed, PATH_SUITE, 0, r_index))
        for kind in kinds:
            q_start, q_hint = None, q_home
            if kind in ("circle", "writing"):
                q_start = q_home
            if kind == "base_arc":
                if not bool(robot.limited[0]):
                    log(f"{name} {kind}: skipped, the first joint is continuous")
                    continue
                q_hint = q_home.clone()
                q_hint[0] = robot.upper[0] - math.radians(20.0)
            if kind == "tool_roll" and bool(
                robot.limited[-1]
            ):  # the last joint starts 10 deg from the limit it turns away from
                F, T = robot.joint_frames(q_home)
                turns_up = float((F[-1, :3, :3] @ robot.joint_axes[-1]) @ T[:3, 2]) > 0
                q_hint = q_home.clone()
                q_hint[-1] = robot.lower[-1] + math.radians(10.0) if turns_up else robot.upper[-1] - math.radians(10.0)
            size = 1.0 if kind in ("rotation", "tool_roll", "base_arc") else 0.08 * reach
            for attempt in range(4):
                poses = make_shape(kind, robot.fk(q_hint), size, robot, q_hint)
                ok, mjac = _witness(robot, poses, q_start, seed + attempt)
                if ok:
                    break
                size *= 0.7
            if not ok:
                log(f"{name} {kind}: left out, no valid trajectory found after 4 sizes")
                continue
            what = (
                f"size {size:.4g} m" if kind not in ("rotation", "tool_roll", "base_arc") else f"angle scale {size:.3g}"
            )
            note = f"{kind}, {what}; witness (random starts, continuation) valid with mjac {mjac:.2f} deg"
            if kind == "base_arc":
                cont = sequential_lm(robot, poses, 1, q_start=q_hint)
                note += (
                    f"; continuation from the configuration with the first joint 20 deg below its upper limit "
                    f"{'fails' if not cont.valid else 'succeeds'}: q_hint = {[round(v, 6) for v in q_hint.tolist()]}"
                )
            file = f"{name}_{kind}.csv"
            write_path_csv(out / file, poses)
            entries.append(
                SuitePath(
                    name=f"{name}_{kind}",
                    robot=name,
                    kind=kind,
                    file=file,
                    waypoints=int(poses.shape[0]),
                    q_start=None if q_start is None else [round(v, 12) for v in q_start.tolist()],
                    note=note,
                )
            )
            log(f"{name} {kind}: {poses.shape[0]} waypoints, {note}")
    payload = {"format": SUITE_FORMAT, "seed": seed, "paths": [asdict(e) for e in entries]}
    atomic_write_text(out / "suite.json", json.dumps(payload, indent=1) + "\n")
    return entries
