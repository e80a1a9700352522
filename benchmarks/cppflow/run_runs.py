"""CppFlow's benchmark problems (:mod:`benchmarks.cppflow.problems`) solved by :meth:`ggik.GGIK.solve_path`, with their
obstacles, and judged by CppFlow's rules.

Valid, as CppFlow judges a plan (``cppflow/evaluation_utils.py``, ``cppflow/data_types.py``): every waypoint within
0.1 mm and 0.1 deg of its target, every configuration within the joint limits, no revolute joint moving more than
7 deg (a prismatic one 2 cm) between consecutive waypoints (:class:`ggik.PathConfig`'s defaults), and no waypoint in
collision with the obstacles or itself by CppFlow's own capsules and skipped pairs
(:func:`benchmarks.cppflow.capsules.cppflow_collision_model`). Beside it, the verdict with ggik's collision model
(:meth:`ggik.collision.CollisionModel.from_robot`) at every waypoint and on the motions between them. The solver keeps
clear by the model ``--collision-model`` names (CppFlow's by default); its time to the first valid trajectory is by that
model's verdict.

Per problem: the robot and its DOF, the waypoints and obstacles, valid, the largest position [mm] and rotation [deg]
errors, the largest joint move [deg] (and [cm] for the Fetch's torso), the waypoints in collision, the time to the
first valid trajectory and the call's total time [s]. The Fetch with its prismatic torso (``fetch__*``) is solved
from random starts (the GGIK graph takes revolute chains only); the other robots with the model's samples too.
"""

from __future__ import annotations

import math
import statistics
from argparse import Namespace
from dataclasses import replace

import torch

from benchmarks.cppflow.capsules import cppflow_collision_model
from benchmarks.cppflow.options import problem_names
from benchmarks.cppflow.problems import PROBLEMS, CppFlowProblem, load_problem
from ggik import GGIK, PathConfig
from ggik.collision import Clearance, CollisionModel
from ggik.evaluation.report import Table
from ggik.path.motion import motion_clearance
from ggik.rng import step_generator

__all__ = ["RUN_COLUMNS", "COLUMNS", "solve_problem", "cppflow_table"]

RUN_COLUMNS = [
    "problem",
    "robot DOF",
    "waypoints",
    "obstacles",
    "valid (CppFlow's capsules)",
    "valid (ggik's collision model)",
    "max position error [mm]",
    "max rotation error [deg]",
    "mjac [deg]",
    "mjac [cm]",
    "colliding waypoints (CppFlow's capsules)",
    "colliding waypoints and motions (ggik's model)",
    "time to valid [s]",
    "total time [s]",
]
COLUMNS = RUN_COLUMNS + [
    "valid runs (CppFlow's capsules)",
    "median time to valid over valid runs [s]",
    "max time to valid over valid runs [s]",
]
CPPFLOW_PATHS = 4242  #: the seed stream of this study (step_generator(seed, CPPFLOW_PATHS, problem index))


def solve_problem(
    solver: GGIK,
    problem: CppFlowProblem,
    config: PathConfig,
    generator: torch.Generator,
    keep_clear: str | CollisionModel = "cppflow",
) -> list:
    """One run, as :data:`RUN_COLUMNS`: ``problem`` solved by ``solver`` with ``config``
    (samples 0 for a prismatic chain) among its obstacles (self-collision too, also without obstacles), kept clear by
    the collision model ``keep_clear`` ("cppflow", "ggik" or a model of the problem's robot)."""
    robot = problem.robot
    if "prismatic" in robot.joint_types:
        config = replace(config, samples=0, track_samples=0)
    family = "panda" if problem.name.startswith("panda") else "fetch"
    cppflow = Clearance(robot, cppflow_collision_model(robot, family), problem.scene)
    ggik = Clearance(robot, solver.collision_model(robot), problem.scene)
    if isinstance(keep_clear, CollisionModel):
        keep = Clearance(robot, keep_clear, problem.scene)
    else:
        keep = ggik if keep_clear == "ggik" else cppflow
    res = solver.solve_path(robot, problem.poses, config, generator=generator, obstacles=keep)
    theirs = (cppflow.min_clearance(res.q) < 0).nonzero()[:, 0].tolist()  # CppFlow checks the waypoints
    ours = (motion_clearance(ggik, res.q) < 0).nonzero()[:, 0].tolist()
    moves_ok = not res.unreached and not res.large_moves
    return [
        problem.name,
        robot.dof,
        problem.poses.shape[0],
        len(problem.scene),
        "yes" if moves_ok and not theirs else "no",
        "yes" if moves_ok and not ours else "no",
        1e3 * float(res.pos_err.max()),
        math.degrees(float(res.rot_err.max())),
        res.mjac,
        100 * res.mjac_m,
        len(theirs),
        len(ours),
        res.time_to_valid,
        res.total_time,
    ]


def cppflow_table(args: Namespace, solver: GGIK, names: list[str]) -> Table:
    """The table of the module docstring for problems ``names``; ``args.time_limit`` [s] per problem, and
    ``max_rounds``, ``starts`` and ``samples`` of :class:`ggik.PathConfig` where given (None: its defaults). Every
    problem runs ``args.reruns`` times (seeds ``step_generator(seed, CPPFLOW_PATHS, index, run)``, the index in
    :data:`~benchmarks.cppflow.problems.PROBLEMS`, whatever the selection); a row shows the first run, then how many
    runs were valid by CppFlow's rules and the median and largest of their times to valid (the solver's own
    verdict, which also checks the motions between waypoints: a run valid by CppFlow's rules alone has none).
    BenchmarkError for a name not in PROBLEMS."""
    from tqdm import tqdm

    names = problem_names(names)  # BenchmarkError for a name not in PROBLEMS
    given = {k: getattr(args, k) for k in ("max_rounds", "starts", "samples") if getattr(args, k) is not None}
    config = PathConfig(time_limit=args.time_limit, **given)
    settings = ", ".join(f"{k} {v}" for k, v in given.items())
    title = f"CppFlow's benchmark problems, solved by ggik path following ({args.reruns} runs, {args.time_limit:g} s"
    table = Table(title + (f" limit, {settings})" if settings else " limit)"), COLUMNS)
    warm = load_problem(names[0])  # one-off costs (first calls, compiled kernels) out of the timings
    solver.solve_path(warm.robot, warm.poses[:5], PathConfig(samples=0, max_rounds=1))
    names_of = ("valid (CppFlow's capsules)", "valid (ggik's collision model)", "time to valid [s]")
    valid, ggik_valid, time_to_valid = (RUN_COLUMNS.index(c) for c in names_of)
    every: list[float] = []  # the times to valid of every valid run that has one
    n_valid = 0
    for name in tqdm(names, desc="problems", disable=not args.progress, dynamic_ncols=True):
        index, problem = list(PROBLEMS).index(name), load_problem(name)
        seeds = [step_generator(args.seed, CPPFLOW_PATHS, index, run) for run in range(args.reruns)]
        runs = [solve_problem(solver, problem, config, g, args.collision_model) for g in seeds]
        ok = [row for row in runs if row[valid] == "yes"]
        times = sorted(t for t in (row[time_to_valid] for row in ok) if math.isfinite(t))
        every, n_valid = every + times, n_valid + len(ok)
        median = statistics.median(times) if times else math.nan
        table.add(*runs[0], f"{len(ok)}/{len(runs)}", median, times[-1] if times else math.nan)
    theirs, ours = (sum(row[k] == "yes" for row in table.rows) for k in (valid, ggik_valid))
    table.notes.append(
        f"first runs valid: {theirs} of {len(table.rows)} problems by CppFlow's rules with its capsules, {ours} with "
        f"ggik's collision model; the solver kept clear by {args.collision_model}'s"
    )
    total = len(table.rows) * args.reruns
    middle = f"{statistics.median(every):.3g} s" if every else "n/a"
    table.notes.append(
        f"all runs: {n_valid} of {total} valid by CppFlow's rules; median time to valid over them {middle} (a run the "
        "solver itself did not call valid, e.g. for a motion between waypoints in collision, has no time: "
        f"{n_valid - len(every)} of them)"
    )
    return table
