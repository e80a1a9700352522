"""CppFlow's benchmark problems (:mod:`benchmarks.cppflow.problems`) solved by :meth:`ggik.GGIK.solve_path`, with their
obstacles, and judged by CppFlow's rules.

Valid, as CppFlow judges a plan (``cppflow/evaluation_utils.py``, ``cppflow/data_types.py``): every waypoint within
0.1 mm and 0.1 deg of its target, every configuration within the joint limits, no revolute joint moving more than
7 deg (a prismatic one 2 cm) between consecutive waypoints, no collision with the obstacles or itself. These are
:class:`ggik.PathConfig`'s defaults, so ggik's own judgement of its result is the verdict; collisions are judged by
ggik's collision model (:meth:`ggik.collision.CollisionModel.from_robot`, capsules where a link has no usable mesh) at
every waypoint and on the motions between them. CppFlow's own per-link capsules and its list of skipped link pairs
(from jstmn/jrl) are not used yet (the study README says what is left).

Per problem: the robot and its DOF, the waypoints and obstacles, valid, the largest position [mm] and rotation [deg]
errors, the largest joint move [deg] (and [cm] for the Fetch's torso), the waypoints in collision, the time to the
first valid trajectory and the call's total time [s]. The Fetch with its prismatic torso (``fetch__*``) is solved
from random starts (the GGIK graph takes revolute chains only); the other robots with the model's samples too.
"""

from __future__ import annotations

import math
from argparse import Namespace

import torch

from benchmarks.cppflow.problems import CppFlowProblem, load_problem
from ggik import GGIK, PathConfig
from ggik.evaluation.report import Table
from ggik.rng import step_generator

__all__ = ["COLUMNS", "solve_problem", "cppflow_table"]

COLUMNS = [
    "problem",
    "robot DOF",
    "waypoints",
    "obstacles",
    "valid",
    "max position error [mm]",
    "max rotation error [deg]",
    "mjac [deg]",
    "mjac [cm]",
    "colliding waypoints",
    "time to valid [s]",
    "total time [s]",
]
CPPFLOW_PATHS = 4242  #: the seed stream of this study (step_generator(seed, CPPFLOW_PATHS, problem index))


def solve_problem(solver: GGIK, problem: CppFlowProblem, config: PathConfig, generator: torch.Generator) -> list:
    """One row of :data:`COLUMNS`: ``problem`` solved by ``solver`` with ``config`` (samples 0 for a prismatic
    chain) among its obstacles."""
    robot = problem.robot
    if "prismatic" in robot.joint_types:
        config = PathConfig(**{**vars(config), "samples": 0, "track_samples": 0})
    obstacles = problem.scene if len(problem.scene) else None
    res = solver.solve_path(robot, problem.poses, config, generator=generator, obstacles=obstacles)
    return [
        problem.name,
        robot.dof,
        problem.poses.shape[0],
        len(problem.scene),
        "yes" if res.valid else "no",
        1e3 * float(res.pos_err.max()),
        math.degrees(float(res.rot_err.max())),
        res.mjac,
        100 * res.mjac_m,
        len(res.collisions),
        res.time_to_valid,
        res.total_time,
    ]


def cppflow_table(args: Namespace, solver: GGIK, names: list[str]) -> Table:
    """The table of the module docstring for problems ``names``; ``args.time_limit`` [s] per problem, and
    ``max_rounds``, ``starts`` and ``samples`` of :class:`ggik.PathConfig` where given (None: its defaults)."""
    from tqdm import tqdm

    given = {k: getattr(args, k) for k in ("max_rounds", "starts", "samples") if getattr(args, k) is not None}
    config = PathConfig(time_limit=args.time_limit, **given)
    settings = ", ".join(f"{k} {v}" for k, v in given.items())
    title = f"CppFlow's benchmark problems, solved by ggik path following ({args.time_limit:g} s limit"
    table = Table(title + (f", {settings})" if settings else ")"), COLUMNS)
    warm = load_problem(names[0])  # one-off costs (first calls, compiled kernels) out of the timings
    solver.solve_path(warm.robot, warm.poses[:5], PathConfig(samples=0, max_rounds=1))
    for index, name in enumerate(tqdm(names, desc="problems", disable=not args.progress, dynamic_ncols=True)):
        generator = step_generator(args.seed, CPPFLOW_PATHS, index)
        table.add(*solve_problem(solver, load_problem(name), config, generator))
    valid = sum(row[4] == "yes" for row in table.rows)
    table.notes.append(f"valid: {valid} of {len(table.rows)} problems (CppFlow's rules; collisions by ggik's model)")
    return table
