"""Tool paths through slots in walls at a fixed tool orientation (the "flappy bird" problems of the path-planning
literature), generated for any arm from its reach R, where the first branch leads into a wall.

A path: the tool keeps the orientation of a random configuration whose tool is in front of the arm (0.45-0.75 R from
the base axis, 0.15-0.6 R above the base) and moves sideways, square to the line from the base, over 0.6 R, its height
a sine of amplitude 0.08 R (one and a half periods). The path must be one that path following solves without walls;
the *first* trajectory it finds there (random starts) is the branch a continuation follows first, and the witness is
another valid trajectory off that branch (:func:`benchmarks.obstacles.decoys.decoys`).

Walls: three 2 cm plates square to the travel direction at a quarter, half and three quarters of the way, from 0.3 R
inside the tool's distance from the base axis to 0.2 R beyond it, from the table (1 cm below the base) up to 1.2 R,
each with a horizontal slot as low as the witness's links allow (their crossings of the plate, every degree of the
motion, plus 5 mm). A problem is kept only when the witness is collision-free at every degree and the first trajectory
collides: following the first branch leads into a wall.

:func:`slot_problem` makes the same path with tool-sized slots and no witness (the suite does not know whether it can
be solved): it shows what a failing search reports.
"""

from __future__ import annotations

import math

import torch

from benchmarks.obstacles.decoys import decoys, dense_motion
from ggik import Robot
from ggik.collision import Box, Clearance, CollisionModel, Scene
from ggik.kinematics.geometry import matrix_to_rpy
from ggik.path import PathConfig, solve_path
from ggik.path.motion import motion_clearance

__all__ = ["flappy_problem", "slot_problem"]

_THICK = 0.02  #: [m] wall thickness
_MARGIN = 0.005  #: [m] free space kept around the witness's links in a slot (beyond their capsule radius)


def _wall(centre_xy: torch.Tensor, travel: torch.Tensor, radial: torch.Tensor, inner: float, outer: float,
          slot: tuple[float, float], R: float) -> list[Box]:  # fmt: skip
    """Two boxes: a plate square to ``travel`` through ``centre_xy`` (on the tool's path), spanning ``radial``
    offsets [inner, outer] from the base axis, from the table to 1.2 R, less the slot (z_low, z_high)."""
    up = torch.tensor([0.0, 0.0, 1.0], dtype=travel.dtype)
    rpy = tuple(matrix_to_rpy(torch.stack([travel, torch.linalg.cross(up, travel), up], -1)).tolist())
    # the plate's frame (a rotation): x along travel, y = z x x (along -radial), z up; its centre on the line through
    # the base along ``radial``
    along = float(centre_xy @ travel[:2])
    mid = along * travel + (inner + outer) / 2 * radial
    width = outer - inner
    hi_bottom, lo_top = slot
    top, bottom = 1.2 * R, -0.01
    boxes = []
    for z0, z1 in ((bottom, hi_bottom), (lo_top, top)):
        if z1 - z0 > 1e-3:
            xyz = (float(mid[0]), float(mid[1]), (z0 + z1) / 2)
            boxes.append(Box((_THICK, width, z1 - z0), xyz, rpy))
    return boxes


def _slot(robot: Robot, model: CollisionModel, witness: torch.Tensor, centre_xy: torch.Tensor, travel: torch.Tensor,
          radial: torch.Tensor, inner: float, outer: float) -> tuple[float, float] | None:  # fmt: skip
    """(z_low, z_high) [m] of the slot a plate through ``centre_xy`` square to ``travel`` needs so that the witness's
    link capsules (every degree of its motion) cross the plate's slab within it, plus ``_MARGIN``; None when no link
    crosses the plate."""
    a, b = model.capsules_at(robot.link_poses(dense_motion(witness)))  # (N, C, 3)
    moving = model.moving
    a, b, r = a[:, moving], b[:, moving], model.radius[moving]
    along = float(centre_xy @ travel[:2])
    xa, xb = a @ travel - along, b @ travel - along  # (N, C) signed distance from the plate's mid-plane
    reach_ = r + _THICK / 2 + _MARGIN
    n = 16
    u = torch.linspace(0, 1, n, dtype=a.dtype)
    pts = a[..., None, :] + u[:, None] * (b - a)[..., None, :]  # (N, C, n, 3)
    x = xa[..., None] + u * (xb - xa)[..., None]
    rad = pts @ radial
    hit = (x.abs() <= reach_[:, None]) & (rad >= inner - reach_[:, None]) & (rad <= outer + reach_[:, None])
    if not bool(hit.any()):
        return None
    z = pts[..., 2]
    grow = reach_[:, None].expand_as(z)
    return float((z - grow)[hit].min()), float((z + grow)[hit].max())


def _sideways_path(robot: Robot, gen: torch.Generator, waypoints: int, R: float):
    """(poses (waypoints, 4, 4), travel (3,), radial (3,), rho [m]) of one sideways tool path (module docstring), or
    None when this draw's tool is not in front of the arm."""
    q0 = robot.sample_q(1, gen)[0]
    T0 = robot.fk(q0)
    p0 = T0[:3, 3]
    rho = float(torch.linalg.vector_norm(p0[:2]))
    if not (0.45 * R <= rho <= 0.75 * R and 0.15 * R <= float(p0[2]) <= 0.6 * R):
        return None
    radial = torch.cat([p0[:2] / rho, torch.zeros(1, dtype=p0.dtype)])
    travel = torch.stack([-radial[1], radial[0], torch.zeros((), dtype=p0.dtype)])
    s = torch.linspace(0, 1, waypoints, dtype=torch.float64)
    pos = p0 + (s[:, None] - 0.5) * (0.6 * R) * travel
    pos[:, 2] = float(p0[2]) + 0.08 * R * torch.sin(3 * math.pi * s)
    poses = T0.expand(waypoints, 4, 4).clone()
    poses[:, :3, 3] = pos
    return poses, travel, radial, rho


def _first_trajectory(robot: Robot, poses: torch.Tensor, gen: torch.Generator) -> torch.Tensor | None:
    """The trajectory path following finds first without obstacles (random starts), or None when it finds none."""
    seed = int(torch.randint(2**31, (1,), generator=gen))
    found = solve_path(
        robot, poses, PathConfig(samples=0, time_limit=2.0), generator=torch.Generator().manual_seed(seed)
    )
    return found.q if found.valid else None


def flappy_problem(robot: Robot, model: CollisionModel, gen: torch.Generator, waypoints: int, R: float,
                   inner: float = 0.3) -> tuple[Scene, torch.Tensor, torch.Tensor] | None:  # fmt: skip
    """(scene, poses (waypoints, 4, 4), witness (waypoints, dof)) of one flappy problem (module docstring), or None
    when this draw gives none."""
    path = _sideways_path(robot, gen, waypoints, R)
    if path is None:
        return None
    poses, travel, radial, rho = path
    first = _first_trajectory(robot, poses, gen)
    if first is None:  # the path itself (without the walls) must be one an arm can follow
        return None
    others = decoys(robot, poses, first, 3, int(torch.randint(2**31, (1,), generator=gen)))
    if not others:  # one branch only: nothing to hide the witness from
        return None
    witness = others[0]
    boxes: list[Box] = []
    for f in (0.25, 0.5, 0.75):
        k = int(round(f * (waypoints - 1)))
        slot = _slot(robot, model, witness, poses[k, :2, 3], travel, radial, rho - inner * R, rho + 0.2 * R)
        if slot is None:
            return None
        boxes += _wall(poses[k, :2, 3], travel, radial, rho - inner * R, rho + 0.2 * R, slot, R)
    scene = Scene(boxes=tuple(boxes))
    check = Clearance(robot, model, scene)
    if not bool((motion_clearance(check, witness) >= 0).all()):
        return None
    if bool((motion_clearance(check, first) >= 0).all()):  # the first branch must lead into a wall
        return None
    return scene, poses, witness


def slot_problem(robot: Robot, model: CollisionModel, gen: torch.Generator, waypoints: int, R: float,
                 gap: float = 0.03, inner: float = 0.1) -> tuple[Scene, torch.Tensor] | None:  # fmt: skip
    """(scene, poses (waypoints, 4, 4)) of a tool-sized slot problem without a witness: the sideways path of the module
    docstring, but with the tool's axis along the direction of travel, and plates only ``inner`` R deep (from
    ``inner`` R inside the tool's distance from the base axis), each with a slot of the tool's capsule radius plus
    ``gap`` [m] above and below the tool's height there. The tool must thread the slots with its wrist behind it; no
    witness is built, so the suite does not know whether a valid trajectory exists. None when this draw gives no path
    that path following solves without the plates."""
    path = _sideways_path(robot, gen, waypoints, R)
    if path is None:
        return None
    poses, travel, radial, rho = path
    up = torch.tensor([0.0, 0.0, 1.0], dtype=poses.dtype)
    poses[:, :3, :3] = torch.stack([up, torch.linalg.cross(travel, up), travel], -1)  # tool axis along the travel
    if _first_trajectory(robot, poses, gen) is None:
        return None
    half = float(model.radius.max()) + gap
    boxes: list[Box] = []
    for f in (0.25, 0.5, 0.75):
        k = int(round(f * (waypoints - 1)))
        z = float(poses[k, 2, 3])
        boxes += _wall(poses[k, :2, 3], travel, radial, rho - inner * R, rho + 0.2 * R, (z - half, z + half), R)
    return Scene(boxes=tuple(boxes)), poses
