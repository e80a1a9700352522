"""The obstacle benchmark: IK goals and paths in clutter (:mod:`benchmarks.obstacles.scenes`), each method run on the
same goals in one process, timed alone.

IK methods (S candidates per goal, LM budget and tolerances of ``GGIK.solve``'s defaults: 1 mm, 0.01 rad):

* **GGIK + LM, clearance**: S model samples, each refined by LM with the clearance rows (``obstacles=scene``);
* **random + LM, clearance**: S uniform random starts, the same LM (``strategy="random"``, ``obstacles=scene``);
* **random + LM, then checked**: S random starts refined by plain LM, the solutions then checked for collisions: what
  a collision-unaware solver returns;
* **GGIK + DG, obstacle projection** / **then checked**: S model samples projected onto the known distances
  (``refine="dg"``), with and without pushing the joint points out of the obstacles between the steps
  (:func:`ggik.ik.dg_refine.push_out`): whether the graph form of obstacles helps the distance-geometric refiner;
* **reference**: ``reference_starts`` random starts with the clearance rows, on the first ``reference_goals`` goals:
  the brute-force answer to "does this goal have a collision-free solution", found or not.

A solution is *valid* when its pose is within the tolerances, within the joint limits and collision-free (clearance
>= 0 over every robot-obstacle and self-collision pair of the default collision model). Per robot, scene and method:
goals with a valid solution, distinct valid solutions per goal (0.1 rad apart), wall time per goal (one batched call),
and the median clearance of each goal's best valid solution.

Paths (a second table, ``--out`` + ``_paths``): ``GGIK.solve_path`` with obstacles (model samples and random starts),
the same with random starts only, sequential LM (32 chains warm-started waypoint by waypoint,
:func:`ggik.evaluation.path_baselines.sequential_lm`) with the same clearance, and ``solve_path`` without obstacles
(then checked): valid (poses, limits, moves, and
collision-free at waypoints and motions), the lowest clearance, time. A figure per robot and scene (``--figures``):
the collision model at a solution, the obstacles and a valid path's EE trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.common.scripts import BenchmarkError
from benchmarks.obstacles.scenes import SCENES, SceneCase, build_scene, reach, scene_goals, scene_paths
from ggik import GGIK, IKResult, PathConfig, Robot, SolveConfig
from ggik.collision import Clearance, CollisionConfig
from ggik.errors import GGIKError
from ggik.evaluation.path_baselines import sequential_lm
from ggik.evaluation.report import Table
from ggik.ik.metrics import count_distinct
from ggik.path.motion import motion_clearance

__all__ = ["ObstacleStudy", "IK_METHODS", "PATH_METHODS", "obstacle_tables"]

IK_METHODS = (
    "GGIK + LM, clearance",
    "random + LM, clearance",
    "random + LM, then checked",
    "GGIK + DG, obstacle projection",
    "GGIK + DG, then checked",
)
PATH_METHODS = (
    "GGIK paths, clearance",
    "random-start paths, clearance",
    "sequential LM, clearance",
    "GGIK paths, then checked",
)


@dataclass
class ObstacleStudy:
    """The options of a run (the script's arguments)."""

    robots: list[str]
    scenes: list[str]
    goals: int = 30
    samples: int = 32
    reference_goals: int = 10
    reference_starts: int = 512
    paths: int = 10
    waypoints: int = 30
    path_time_limit: float = 10.0
    seed: int = 0
    figures: Path | None = None


def _valid(result: IKResult, robot: Robot, check: Clearance) -> torch.Tensor:
    """(B, S) pose within the tolerances, within the limits and collision-free (checked here for every method)."""
    pose_ok = result.pos_err < 1e-3
    pose_ok &= result.rot_err < 1e-2
    return pose_ok & robot.within_limits(result.q) & check.collision_free(result.q)


def _ik_row(robot: Robot, result: IKResult, check: Clearance, seconds: float) -> list:
    """[solved %, distinct valid per goal, ms per goal, median obstacle clearance of each solved goal's best [mm]]."""
    valid = _valid(result, robot, check)
    solved = valid.any(-1)
    distinct = count_distinct(result.q, valid, ~robot.limited)
    obstacles_only = Clearance(robot, check.model, check.scene, CollisionConfig(self_collision=False))
    clear = obstacles_only.min_clearance(result.q)
    best = torch.where(valid, clear, -torch.inf).max(-1).values[solved]
    return [
        round(100 * float(solved.float().mean()), 1),
        round(float(distinct.mean()), 2),
        round(1e3 * seconds / result.q.shape[0], 2),
        round(1e3 * float(best.median()), 1) if best.numel() else float("nan"),
    ]


def _solve(
    solver: GGIK, robot: Robot, T: torch.Tensor, method: str, S: int, scene, seed: int
) -> tuple[IKResult, float]:
    gen = torch.Generator().manual_seed(seed)
    if method == "GGIK + LM, clearance":
        config, kw = SolveConfig(samples=S, refine="lm"), {"obstacles": scene}
    elif method.startswith("GGIK + DG"):
        config, kw = SolveConfig(samples=S, refine="dg"), {"obstacles": scene} if "projection" in method else {}
    elif method == "random + LM, clearance":
        config, kw = SolveConfig(strategy="random", random_starts=S), {"obstacles": scene}
    else:
        config, kw = SolveConfig(strategy="random", random_starts=S), {}
    t = time.perf_counter()
    result = solver.solve(robot, T, config, generator=gen, **kw)
    return result, time.perf_counter() - t


def obstacle_tables(study: ObstacleStudy, solver: GGIK, command: str, out: str | None, stamp: str | None) -> Table:
    """The IK table (returned: a row per robot, scene and method) and the path table (printed, and written to
    ``out``_paths when given; ``stamp``: the model's, for its header); a figure per robot and scene when
    ``study.figures`` is set."""
    unknown = sorted(set(study.scenes) - set(SCENES))
    if unknown:
        raise BenchmarkError(f"--scenes: unknown {unknown}; scenes: {list(SCENES)}")
    ik = Table(
        "IK among obstacles: goals in clutter, collision-free solutions",
        ["robot", "scene", "method", "goals", "solved [%]", "distinct valid per goal", "ms per goal",
         "median obstacle clearance of the best [mm]"],
    )  # fmt: skip
    paths = Table(
        "Paths among obstacles: reaches into the scene's region",
        ["robot", "scene", "method", "paths", "valid [%]", "lowest clearance [mm]", "mean s per path", "max s"],
    )
    for name in study.robots:
        try:
            robot = Robot.from_name(name)
        except GGIKError as exc:
            raise BenchmarkError(f"--robots: {exc}") from None
        model = solver.collision_model(robot)
        R = reach(robot, seed=study.seed)
        for scene_name in study.scenes:
            case = build_scene(scene_name, R)
            check = Clearance(robot, model, case.scene)
            T, witnesses = scene_goals(robot, case, model, study.goals, study.seed)
            if T.shape[0] == 0:
                raise BenchmarkError(f"{name}: no collision-free goal in the {scene_name} scene's region")
            shown = None
            for method in IK_METHODS:
                result, seconds = _solve(solver, robot, T, method, study.samples, case.scene, study.seed)
                ik.add(name, scene_name, method, T.shape[0], *_ik_row(robot, result, check, seconds))
                shown = result if shown is None else shown
            ref_T = T[: study.reference_goals]
            result, seconds = _solve(solver, robot, ref_T, "random + LM, clearance", study.reference_starts,
                                     case.scene, study.seed + 1)  # fmt: skip
            ik.add(name, scene_name, f"reference ({study.reference_starts} random starts)", ref_T.shape[0],
                   *_ik_row(robot, result, check, seconds))  # fmt: skip
            trajectory = _path_rows(paths, study, solver, robot, case, check, witnesses)
            if study.figures is not None and shown is not None:
                from benchmarks.obstacles.figures import plot_scene

                plot_scene(robot, model, case, shown.q[0, 0], trajectory, study.figures / f"{name}_{scene_name}.png")
    notes = [
        "goals: EE poses of uniform configurations that are collision-free with the EE in the scene's region (each "
        f"has a valid solution by construction); S = {study.samples} candidates per goal; the reference runs on the "
        f"first {study.reference_goals} goals.",
        "valid: pose within 1 mm and 0.01 rad, within the joint limits, collision-free (default collision model: "
        "link capsules of 4 cm, self-collision pairs). distinct: valid solutions at least 0.1 rad apart. ms per goal: "
        "one batched call for all goals of the row, divided by the goals. Obstacle clearance: of each solved goal's "
        "valid solution furthest from the obstacles (self-collision pairs left out), median over the goals.",
    ]
    ik.notes += notes
    paths.notes += [
        f"paths: a joint-space straight motion into the region, collision-free at every degree, its EE poses as "
        f"{study.waypoints} waypoints (a collision-free trajectory exists by construction); valid: 0.1 mm / 0.1 deg, "
        "limits, moves <= 7 deg, collision-free at waypoints and on the motions between them (checked every degree); "
        f"time limit {study.path_time_limit:g} s per path; lowest clearance over every path of the row."
    ]
    print(paths.markdown(command, study.seed, stamp))
    if out is not None:
        print("wrote", *paths.write(f"{Path(out)}_paths", command, study.seed, stamp))
    return ik


def _path_rows(table: Table, study: ObstacleStudy, solver: GGIK, robot: Robot, case: SceneCase, check: Clearance,
               witnesses: torch.Tensor) -> torch.Tensor | None:  # fmt: skip
    """Rows of the path methods for ``case``; returns the first valid trajectory of the first method (for a figure)."""
    paths = scene_paths(robot, case, check.model, witnesses, study.paths, study.waypoints, study.seed)
    shown = None
    for method in PATH_METHODS:
        valid, clear, seconds = [], [], []
        for k, (poses, _) in enumerate(paths):
            config = PathConfig(
                time_limit=study.path_time_limit, samples=0 if method.startswith("random") else PathConfig.samples
            )
            kw = {} if method.endswith("checked") else {"obstacles": case.scene}
            gen = torch.Generator().manual_seed(study.seed + k)
            t = time.perf_counter()
            if method.startswith("sequential"):
                result = sequential_lm(robot, poses, 32, config, gen, clearance=check)
            else:
                result = solver.solve_path(robot, poses, config, generator=gen, **kw)
            seconds.append(time.perf_counter() - t)
            c = float(motion_clearance(check, result.q).min())
            valid.append(result.valid and c >= 0)
            clear.append(c)
            if shown is None and valid[-1]:
                shown = result.q
        if paths:
            n = len(paths)
            table.add(robot.name, case.name, method, n, round(100 * sum(valid) / n, 1), round(1e3 * min(clear), 1),
                      round(sum(seconds) / n, 2), round(max(seconds), 2))  # fmt: skip
    return shown
