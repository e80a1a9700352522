"""Hard obstacle paths: scenes built around a witness motion so that the path threads the obstacles, and the first
branch a continuation picks can lead into a dead end.

* ``window``: a wall across the arm's front (a plane x = const) with a rectangular window; the witness is a straight
  joint motion whose end-effector passes from in front of the wall to behind it, and every link that crosses the wall
  plane crosses it inside the window (the window is the bounding rectangle of those crossings, plus a margin). The
  tool, and the links behind it, must thread the window: a configuration branch whose elbow crosses elsewhere cannot.
* ``bars``: two horizontal bars across the end-effector's path, one just above the path at a third of the way and one
  just below it at two thirds: the tool passes under the first and over the second.
* ``insert``: a Cartesian insertion: the tool moves 0.3 R along its own axis at a fixed orientation into a hole in a
  wall square to that axis; the hole is as small as the witness allows (the crossings of its links, plus 0.5 cm). The
  witness is the trajectory ``solve_path`` finds without the wall (so the path is one our search can follow in free
  space); with the wall, only the branches whose wrist and forearm stay clear of it remain.
* ``gates``: two such walls across a joint motion's turning tool path, at a third and two thirds of the way, each square
  to the tool's direction of travel there, their holes as small as the witness allows.
* ``flappy``: a sideways tool path at a fixed orientation through three walls with slots fitted to a witness that is
  not the first trajectory path following finds (:mod:`benchmarks.obstacles.flappy`).
* ``slots`` (no witness): the same path with the tool's axis along the travel and tool-sized slots; whether it can be
  solved is not known, so its rows stay apart.

Every scene with a witness is accepted only if its witness motion is collision-free at every degree (the default
collision model of the solver: capsules of 4 cm along the links, self-collision pairs): each such path has a valid,
collision-free trajectory by construction. The first branches are then blocked (``block``, default 2): balls on up to
two trajectories that path following finds without the obstacles and that leave the witness's branch
(:mod:`benchmarks.obstacles.decoys`), so that following them leads into a collision. Lengths are fractions of the arm's
reach R (:func:`benchmarks.obstacles.scenes.reach`).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from dataclasses import dataclass

import torch

from benchmarks.obstacles.decoys import block_decoys, decoys
from benchmarks.obstacles.flappy import flappy_problem, slot_problem
from benchmarks.obstacles.scenes import _box, reach
from ggik import GGIK, Robot, Scene, SolveConfig
from ggik.collision import Box, Clearance, CollisionModel
from ggik.evaluation.path_baselines import sequential_lm
from ggik.evaluation.report import Table
from ggik.kinematics.geometry import matrix_to_rpy
from ggik.path import PathConfig, solve_path
from ggik.path.motion import motion_clearance

__all__ = ["HARD_SCENES", "NO_WITNESS_SCENES", "HardPath", "hard_paths", "hard_path_table"]
#: path methods, each solving every hard path with the scene's obstacles, time-limited
METHODS = ("GGIK candidates (solve_path)", "random candidates (solve_path, -s 0)", "sequential LM (32 chains)")
HARD_SCENES = ("window", "bars", "insert", "gates", "flappy")  #: each path with a witness
NO_WITNESS_SCENES = ("slots",)  #: paths the suite does not know to be solvable, kept apart in every table
_THICK = 0.02  #: [m] wall and bar thickness
_MARGIN = 0.005  #: [m] free space kept around the witness's links (beyond their capsule radius)


@dataclass
class HardPath:
    """One hard problem: its scene, the waypoints (T, 4, 4) and the witness motion (T, dof) that solves it (None: the
    suite does not know one)."""

    scene_name: str
    scene: Scene
    poses: torch.Tensor
    witness: torch.Tensor | None


def _motion(robot: Robot, gen: torch.Generator, waypoints: int, span: float) -> torch.Tensor:
    """A straight joint motion (waypoints, dof) between two uniform configurations at most ``span`` rad apart per
    joint, and at most 6 deg per joint between waypoints (``span`` is cut to that for few waypoints)."""
    span = min(span, math.radians(6.0) * (waypoints - 1))
    qa = robot.sample_q(1, gen)[0]
    step = span * (torch.rand(robot.dof, generator=gen, dtype=torch.float64) * 2 - 1)
    qb = torch.minimum(torch.maximum(qa + step, robot.lower), robot.upper)
    s = torch.linspace(0, 1, waypoints, dtype=torch.float64)[:, None]
    return qa + s * (qb - qa)


def _window(robot: Robot, model: CollisionModel, motion: torch.Tensor, R: float) -> Scene | None:
    """The window scene of ``motion`` (module docstring), or None when the motion does not cross a wall plane in
    front of the arm, or its crossings need a window wider than 0.5 R."""
    ee = robot.fk(motion)[:, :3, 3]
    x0, x1 = float(ee[0, 0]), float(ee[-1, 0])
    if min(x0, x1) < 0.15 * R or abs(x1 - x0) < 0.2 * R:
        return None
    xw = (x0 + x1) / 2  # the wall plane, halfway along the tool's advance
    a, b = model.capsules_at(robot.link_poses(motion))  # (T, C, 3) each: the capsules' segments
    moving = model.moving
    crossings = []
    for t in range(motion.shape[0]):
        for c in moving.nonzero()[:, 0].tolist():
            p, q = a[t, c], b[t, c]
            lo, hi = min(float(p[0]), float(q[0])), max(float(p[0]), float(q[0]))
            r = float(model.radius[c]) + _THICK / 2 + _MARGIN
            if lo - r <= xw <= hi + r:  # the capsule meets the wall's slab: where, on the plane
                u = 0.5 if hi - lo < 1e-9 else min(max((xw - float(p[0])) / float(q[0] - p[0]), 0.0), 1.0)
                at = p + u * (q - p)
                crossings.append((float(at[1]) - r, float(at[1]) + r, float(at[2]) - r, float(at[2]) + r))
    if not crossings:
        return None
    y0, y1 = min(c[0] for c in crossings), max(c[1] for c in crossings)
    z0, z1 = min(c[2] for c in crossings), max(c[3] for c in crossings)
    if y1 - y0 > 0.5 * R or z1 - z0 > 0.5 * R or z0 < 0.0:
        return None
    X0, X1, big = xw - _THICK / 2, xw + _THICK / 2, 1.2 * R
    walls = (
        _box([X0, -big, -0.01], [X1, y0, big]),  # left of the window
        _box([X0, y1, -0.01], [X1, big, big]),  # right
        _box([X0, y0, -0.01], [X1, y1, z0]),  # below
        _box([X0, y0, z1], [X1, y1, big]),  # above
    )
    return Scene(boxes=walls)


def _bars(robot: Robot, motion: torch.Tensor, R: float) -> Scene | None:
    """The bars scene of ``motion`` (module docstring), or None when the tool's path is too short or too steep."""
    ee = robot.fk(motion)[:, :3, 3]
    d = ee[-1] - ee[0]
    if float(torch.linalg.vector_norm(d[:2])) < 0.25 * R or abs(float(d[2])) > 0.5 * float(torch.linalg.vector_norm(d)):
        return None
    yaw = math.atan2(float(d[0]), -float(d[1]))  # the bar's long axis: horizontal, square to the path's direction
    n = motion.shape[0]
    bars = []
    for where, sign in ((n // 3, 1.0), ((2 * n) // 3, -1.0)):
        c = ee[where] + sign * (0.04 + _THICK / 2 + _MARGIN + 0.02) * torch.tensor([0.0, 0.0, 1.0], dtype=d.dtype)
        bars.append(Box((0.8 * R + _THICK, _THICK, _THICK), tuple(c.tolist()), (0.0, 0.0, yaw)))
    return Scene(boxes=tuple(bars))


def _plane_frame(d: torch.Tensor) -> torch.Tensor:
    """(3, 3) a rotation whose x axis is the unit vector d (the wall's normal); y, z span the wall."""
    helper = torch.tensor([0.0, 0.0, 1.0], dtype=d.dtype) if abs(float(d[2])) < 0.9 else torch.tensor([0.0, 1.0, 0.0])
    y = torch.linalg.cross(helper.to(d), d)
    y = y / torch.linalg.vector_norm(y)
    return torch.stack([d, y, torch.linalg.cross(d, y)], -1)


def _insert(robot: Robot, model: CollisionModel, gen: torch.Generator, waypoints: int, R: float):
    """(scene, poses, witness) of one insertion (module docstring), or None when this draw gives none."""
    qb = robot.sample_q(1, gen)[0]
    Tb = robot.fk(qb)
    d = Tb[:3, 2]  # the tool axis
    L = 0.3 * R
    s = torch.linspace(0, 1, waypoints, dtype=torch.float64)
    poses = Tb.expand(waypoints, 4, 4).clone()
    poses[:, :3, 3] = Tb[:3, 3] - (1 - s)[:, None] * L * d  # from outside, along the axis, into the hole
    if float(poses[:, 2, 3].min()) < 0.05:
        return None
    seed = int(torch.randint(2**31, (1,), generator=gen))  # its own generator: the draws here do not hang on its rounds
    free = solve_path(
        robot, poses, PathConfig(samples=0, time_limit=2.0), generator=torch.Generator().manual_seed(seed)
    )
    if not free.valid:
        return None
    witness = free.q
    walls = _hole_wall(robot, model, witness, Tb[:3, 3] - 0.5 * L * d, d, R)
    if walls is None:
        return None
    scene = Scene(boxes=walls)
    if not bool((motion_clearance(Clearance(robot, model, scene), witness) >= 0).all()):
        return None
    return scene, poses, witness


def _hole_wall(robot: Robot, model: CollisionModel, witness: torch.Tensor, centre: torch.Tensor, d: torch.Tensor,
               R: float) -> tuple[Box, ...] | None:  # fmt: skip
    """Four boxes: a wall through ``centre`` square to the unit vector d, with a square hole around ``centre`` as small
    as the crossings of the witness's link capsules with the wall's slab allow (plus 0.5 cm); None when no link
    crosses it or the hole would be wider than 0.4 R."""
    frame = _plane_frame(d)
    a, b = model.capsules_at(robot.link_poses(witness))
    reach_uv = 0.0
    for c in model.moving.nonzero()[:, 0].tolist():  # every capsule's crossing of the wall's slab, in wall coordinates
        pa, pb = (a[:, c] - centre) @ frame, (b[:, c] - centre) @ frame  # (T, 3) each: x along d
        r = float(model.radius[c]) + _THICK / 2 + _MARGIN
        lo, hi = torch.minimum(pa[:, 0], pb[:, 0]), torch.maximum(pa[:, 0], pb[:, 0])
        meets = (lo - r <= 0) & (hi + r >= 0)
        if bool(meets.any()):
            dx = pb[:, 0] - pa[:, 0]
            u = (-pa[:, 0] / dx.where(dx.abs() > 1e-9, torch.ones(()))).clamp(0, 1)
            at = pa + u[:, None] * (pb - pa)
            reach_uv = max(reach_uv, float(at[meets][:, 1:].abs().max()) + r)
    if reach_uv == 0.0 or reach_uv > 0.2 * R:
        return None
    h, big, t = reach_uv, 1.2 * R, _THICK
    rpy = tuple(matrix_to_rpy(frame).tolist())
    parts = []
    for cy, cz, sy, sz in ((0.0, (h + big) / 2, 2 * big, big - h), (0.0, -(h + big) / 2, 2 * big, big - h),
                           ((h + big) / 2, 0.0, big - h, 2 * h), (-(h + big) / 2, 0.0, big - h, 2 * h)):  # fmt: skip
        at = centre + frame @ torch.tensor([0.0, cy, cz], dtype=torch.float64)
        parts.append(Box((t, sy, sz), tuple(at.tolist()), rpy))
    return tuple(parts)


def _gates(robot: Robot, model: CollisionModel, motion: torch.Tensor, R: float) -> Scene | None:
    """Two walls with holes (:func:`_hole_wall`) across the tool's path at a third and two thirds of the way, each
    square to the tool's direction of travel there (so at different orientations along a turning path)."""
    ee = robot.fk(motion)[:, :3, 3]
    if float(torch.linalg.vector_norm(ee[-1] - ee[0])) < 0.25 * R:
        return None
    walls: tuple[Box, ...] = ()
    for k in (motion.shape[0] // 3, (2 * motion.shape[0]) // 3):
        d = ee[k + 1] - ee[k - 1]
        if float(torch.linalg.vector_norm(d)) < 1e-6:
            return None
        wall = _hole_wall(robot, model, motion, ee[k], d / torch.linalg.vector_norm(d), R)
        if wall is None:
            return None
        walls += wall
    return Scene(boxes=walls)


def _witness_paths(robot: Robot, model: CollisionModel, scene_name: str, R: float, gen: torch.Generator,
                   waypoints: int) -> HardPath | None:  # fmt: skip
    """One path of ``scene_name`` around a witness (module docstring) from one draw of ``gen``, or None."""
    if scene_name == "insert":
        found = _insert(robot, model, gen, waypoints, R)
        return None if found is None else HardPath(scene_name, found[0], found[1], found[2])
    if scene_name == "flappy":
        flappy = flappy_problem(robot, model, gen, waypoints, R)
        return None if flappy is None else HardPath(scene_name, flappy[0], flappy[1], flappy[2])
    if scene_name == "slots":
        slots = slot_problem(robot, model, gen, waypoints, R)
        return None if slots is None else HardPath(scene_name, slots[0], slots[1], None)
    motion = _motion(robot, gen, waypoints, 2.0)
    if scene_name == "window":
        scene = _window(robot, model, motion, R)
    elif scene_name == "bars":
        scene = _bars(robot, motion, R)
    else:
        scene = _gates(robot, model, motion, R)
    if scene is None or not bool((motion_clearance(Clearance(robot, model, scene), motion) >= 0).all()):
        return None
    return HardPath(scene_name, scene, robot.fk(motion), motion)


def hard_paths(
    robot: Robot, model: CollisionModel, scene_name: str, R: float, n: int, waypoints: int, seed: int,
    tries: int = 4000, block: int = 2,
) -> list[HardPath]:  # fmt: skip
    """Up to ``n`` hard paths of ``scene_name`` (:data:`HARD_SCENES`, or :data:`NO_WITNESS_SCENES`) for ``robot``, each
    with its own scene around a collision-free witness of ``waypoints`` configurations (module docstring); ``tries``
    draws at most (a twentieth of them for "insert", "flappy" and "slots", whose draws run a path search). ``block``
    > 0: the first branches are blocked too (:func:`benchmarks.obstacles.decoys.block_decoys` on up to ``block``
    obstacle-free trajectories off the witness's branch), and a path is kept only when at least one was blocked (paths
    without a witness are not blocked)."""
    if scene_name not in HARD_SCENES + NO_WITNESS_SCENES:
        raise ValueError(f"unknown hard scene {scene_name!r}; scenes: {HARD_SCENES + NO_WITNESS_SCENES}")
    gen = torch.Generator().manual_seed(seed)
    out: list[HardPath] = []
    for k in range(tries if scene_name not in ("insert", "flappy", "slots") else max(1, tries // 20)):
        if len(out) == n:
            break
        hp = _witness_paths(robot, model, scene_name, R, gen, waypoints)
        if hp is None:
            continue
        if block and hp.witness is not None:
            first = decoys(robot, hp.poses, hp.witness, block, seed + k)
            scene = block_decoys(robot, model, hp.scene, hp.witness, first) if first else None
            if scene is None:
                continue
            hp = HardPath(hp.scene_name, scene, hp.poses, hp.witness)
        out.append(hp)
    return out


def hard_path_table(args: argparse.Namespace) -> Table:
    """One row per robot, hard scene and method: valid (collision-free) paths, mean, median and max seconds per path,
    and the waypoints where a probe finds no valid configuration at all (:func:`_unsolvable_waypoints`); then one row
    per method over all of them, paths with and without a witness apart."""
    solver = GGIK.load_or_pretrained(args.ckpt)
    table = Table(
        "Hard obstacle paths (scenes around a witness, first branches blocked)",
        [
            "robot",
            "scene",
            "method",
            "paths",
            "valid [%]",
            "mean s per path",
            "median s",
            "max s",
            "rounds, mean",
            "waypoints without any valid IK, mean",
        ],  # fmt: skip
    )
    every = {(group, m): ([], [], []) for group in ("all with a witness", "all without") for m in METHODS}
    for name in args.robots:
        robot = Robot.from_name(name)
        model = solver.collision_model(robot)
        R = reach(robot, seed=args.seed)
        for scene_name in args.scenes:
            found = hard_paths(robot, model, scene_name, R, args.paths, args.waypoints, args.seed, block=args.block)
            probe = [_unsolvable_waypoints(solver, robot, hp, args.seed) for hp in found]
            for method in METHODS:
                valid, seconds, rounds = [], [], []
                for k, hp in enumerate(found):
                    check = Clearance(robot, model, hp.scene)
                    config = PathConfig(
                        time_limit=args.time_limit, samples=0 if method.startswith("random") else PathConfig.samples
                    )
                    gen = torch.Generator().manual_seed(args.seed + k)
                    t = time.perf_counter()
                    if method.startswith("sequential"):
                        result = sequential_lm(robot, hp.poses, 32, config, gen, clearance=check)
                    else:
                        result = solver.solve_path(robot, hp.poses, config, generator=gen, obstacles=hp.scene)
                    seconds.append(time.perf_counter() - t)
                    valid.append(result.valid and float(motion_clearance(check, result.q).min()) >= 0)
                    rounds.append(result.rounds)
                if found:
                    _row(table, name, scene_name, method, valid, seconds, rounds, sum(probe) / len(probe))
                    group = "all without" if scene_name in NO_WITNESS_SCENES else "all with a witness"
                    for store, new in zip(every[group, method], (valid, seconds, rounds)):
                        store.extend(new)  # type: ignore[arg-type]
    for (group, method), (valid, seconds, rounds) in every.items():
        if valid:
            _row(table, "all", group, method, valid, seconds, rounds, None)
    table.notes.append(
        f"{args.waypoints} waypoints per path, time limit {args.time_limit:g} s; valid: 0.1 mm / 0.1 deg, limits, "
        "moves <= 7 deg, collision-free at the waypoints and on the motions between them (every degree); each path "
        "of the scenes window, bars, insert, gates and flappy has a collision-free witness by construction"
        + (
            f", and up to {args.block} obstacle-free trajectories off the witness's branch (the first branches a "
            "continuation finds) collide in its scene (benchmarks/obstacles/decoys.py)."
            if args.block
            else "."
        )
    )
    table.notes.append(
        "slots: tool-sized slots and no witness (the suite does not know whether they can be solved); kept apart, "
        "in their own summary rows."
    )
    return table


def _unsolvable_waypoints(solver: GGIK, robot: Robot, hp: HardPath, seed: int, starts: int = 256) -> int:
    """How many waypoints of ``hp`` have no valid configuration (within the path tolerances and the limits, collision-
    free) that LM with clearance finds from ``starts`` random starts each: above 0, the path is likely impossible
    there (0 for every path with a witness, up to the probe's luck)."""
    tol = PathConfig()
    config = SolveConfig(strategy="random", random_starts=starts, pos_tol=tol.pos_tol, rot_tol=tol.rot_tol)
    gen = torch.Generator().manual_seed(seed)
    result = solver.solve(robot, hp.poses, config, generator=gen, obstacles=hp.scene)
    return int((~result.success.any(-1)).sum())


def _row(table: Table, robot: str, scene: str, method: str, valid: list[bool], seconds: list[float],
         rounds: list[int], unsolvable: float | None) -> None:  # fmt: skip
    n = len(valid)
    table.add(robot, scene, method, n, round(100 * sum(valid) / n, 1), round(sum(seconds) / n, 2),
              round(statistics.median(seconds), 2), round(max(seconds), 2), round(sum(rounds) / n, 1),
              "" if unsolvable is None else round(unsolvable, 1))  # fmt: skip
    print(table.rows[-1], flush=True)
