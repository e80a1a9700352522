"""``ggik path``: a joint trajectory along an end-effector path (a CSV of waypoints), and ``ggik eval paths``, the
path-following benchmark on the committed suite."""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path
from typing import Any

import torch

from ggik.cli.arguments import (
    add_out_dir_arg,
    add_threads_arg,
    figures_possible,
    non_negative_int,
    positive_float,
    positive_int,
    set_threads,
)
from ggik.cli.commands import HELP
from ggik.cli.obstacles import add_obstacle_args, obstacle_options, refuse_blocking_scene
from ggik.cli.robots import add_chain_args, add_lock_arg, check_model_chain, robot_from_options
from ggik.errors import GGIKError
from ggik.path.config import PathConfig

PATH_DEFAULTS = PathConfig()  #: the defaults the options of ``ggik path`` show

__all__ = ["add_path_parser", "cmd_path", "add_eval_paths_parser", "cmd_eval_paths"]


def _start(robot: Any, values: list[float] | None) -> Any:
    """``--start`` as a (dof,) tensor, by the library's check (:func:`ggik.path.solve.check_start`)."""
    from ggik.path.solve import check_start

    if values is None:
        return None
    try:
        return check_start(robot, values, "--start")
    except ValueError as exc:
        raise GGIKError(str(exc)) from None


def cmd_path(args: argparse.Namespace) -> int:
    from ggik.cli.path_output import ProgressBar, path_summary, print_path_summary
    from ggik.collision import Clearance
    from ggik.path import solve_path
    from ggik.path.files import read_path_csv, write_trajectory_csv
    from ggik.solver import GGIK

    robot = robot_from_options(args.robot, args.urdf, args.base, args.ee, args.lock)
    if args.samples > 0:
        check_model_chain(robot, f"--robot {args.robot}" if args.robot else f"--urdf {args.urdf}")
    config = PathConfig(samples=args.samples, time_limit=args.time_limit, pos_tol=args.pos_tol, rot_tol=args.rot_tol)
    poses = read_path_csv(args.path)
    q_start = _start(robot, args.start)
    if args.out is not None:  # before the search: a path the trajectory cannot be written to is bad input
        out = Path(args.out)
        if out.is_dir() or not out.parent.is_dir():
            raise GGIKError(f"--out {args.out}: not a file in an existing folder")
    gen = torch.Generator().manual_seed(args.seed)
    kw = obstacle_options(args)
    solver = GGIK.load_or_pretrained(args.ckpt) if args.samples > 0 else None  # -s 0: no model is loaded
    check = None
    if kw:
        cfg = kw["collision"]  # CollisionFileError for a bad --collision / --srdf, when the model is made
        model = solver.collision_model(robot, cfg) if solver is not None else cfg.collision_model(robot)
        check = Clearance(robot, model, kw["obstacles"], cfg.without_files())
        refuse_blocking_scene(check, args.obstacles, args.seed)
    progress = None if args.json or args.no_progress else ProgressBar(args.time_limit)
    try:
        if solver is not None:
            result = solver.solve_path(robot, poses, config, q_start=q_start, generator=gen, progress=progress, **kw)
        else:
            result = solve_path(
                robot, poses, config, q_start=q_start, generator=gen, clearance=check, progress=progress
            )
    finally:
        if progress is not None:
            progress.close()
    if args.out:
        write_trajectory_csv(args.out, result.q, robot.joint_names)
    summary = path_summary(robot, poses, result, check)
    if args.json:
        payload = {**summary, "joint_names": list(robot.joint_names), "q": result.q.tolist()}
        print(json.dumps(payload, indent=1, allow_nan=False))
    else:
        print_path_summary(summary, args.path, args.samples, args.out, list(robot.joint_names))
    return 0 if result.valid else 1


def add_path_parser(sub: Any) -> None:
    """``ggik path`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser(
        "path",
        help=HELP["path"],
        description="Follow an end-effector path: every waypoint within --pos-tol and --rot-tol (default "
        f"{1e3 * PATH_DEFAULTS.pos_tol:g} mm and {math.degrees(PATH_DEFAULTS.rot_tol):g} deg), within the joint "
        f"limits, no joint moving more than {math.degrees(PATH_DEFAULTS.max_jump):g} deg between waypoints. Exit "
        "status 0: valid; 1: no valid trajectory found (the best one is written, failing waypoints named).",
    )
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file")
    add_chain_args(p)
    add_lock_arg(p)
    p.add_argument(
        "--path",
        required=True,
        help="CSV, one waypoint per line: x,y,z,qw,qx,qy,qz in the base-link frame "
        "[m] (header line and an index column first allowed)",
    )
    p.add_argument("--out", help="write the trajectory here (CSV: joint names, then one row per waypoint)")
    p.add_argument(
        "--time-limit",
        type=positive_float,
        default=PATH_DEFAULTS.time_limit,
        metavar="SECONDS",
        help=f"no new round of candidates starts after it (default {PATH_DEFAULTS.time_limit:g})",
    )
    p.add_argument(
        "-s",
        "--samples",
        type=non_negative_int,
        default=PATH_DEFAULTS.samples,
        metavar="S",
        help=f"model samples among the {PATH_DEFAULTS.starts} start seeds per start waypoint (default "
        f"{PATH_DEFAULTS.samples}; 0: random starts only, no model loaded)",
    )
    p.add_argument(
        "--pos-tol",
        type=positive_float,
        default=PATH_DEFAULTS.pos_tol,
        metavar="M",
        help=f"a waypoint is reached within M [m] (default {PATH_DEFAULTS.pos_tol:g})",
    )
    p.add_argument(
        "--rot-tol",
        type=positive_float,
        default=PATH_DEFAULTS.rot_tol,
        metavar="RAD",
        help=f"... and RAD [rad] (default {PATH_DEFAULTS.rot_tol:.6g}, 0.1 deg)",
    )
    p.add_argument(
        "--start", nargs="+", type=float, metavar="Q", help="the configuration the robot starts from (dof values [rad])"
    )
    add_obstacle_args(p, "every waypoint and every motion between them stays")
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON (summary and trajectory) instead of a table; waypoints numbered from 1, as in the table",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar (shown on stderr after a second)")
    p.set_defaults(func=cmd_path)


def cmd_eval_paths(args: argparse.Namespace) -> int:
    from ggik.evaluation.path_benchmark import PathBenchmark, run_path_benchmark

    set_threads(args.threads)
    opts = PathBenchmark(
        suite=args.suite,
        robots=args.robots,
        paths=args.paths,
        methods=args.methods,
        samples=args.samples,
        chains=args.chains,
        time_limit=args.time_limit,
        seed=args.seed,
        figures=not args.no_figures and figures_possible(sys.stdout),
        progress=not args.no_progress,
        ckpt=args.ckpt,
    )
    table = run_path_benchmark(opts, Path(args.out_dir), command="ggik " + shlex.join(args.argv))
    print(table.markdown("ggik " + shlex.join(args.argv), args.seed))
    return 0


def add_eval_paths_parser(ev_sub: Any) -> None:
    """``ggik eval paths`` under ``ev_sub``, the subcommands of ``ggik eval``."""
    from ggik.evaluation.path_benchmark import METHODS

    p = ev_sub.add_parser("paths", help="path following on the committed suite (eval/paths): GGIK vs baselines")
    p.add_argument(
        "--suite", default="eval/paths", help="folder with suite.json and the path CSVs (benchmarks/path_suite)"
    )
    p.add_argument("--robots", nargs="*", help="only these robots of the suite")
    p.add_argument("--paths", nargs="*", help="only these paths (names in suite.json)")
    p.add_argument(
        "--methods",
        nargs="+",
        choices=METHODS,
        default=list(METHODS),
        metavar="METHOD",
        help=f"subset of: {', '.join(repr(m) for m in METHODS)}",
    )
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument(
        "-s",
        "--samples",
        type=positive_int,
        default=PATH_DEFAULTS.samples,
        metavar="S",
        help=f"model samples per start waypoint (GGIK method; default {PATH_DEFAULTS.samples})",
    )
    p.add_argument("--chains", type=positive_int, default=32, help="parallel chains of the sequential-LM baseline")
    p.add_argument(
        "--time-limit",
        type=positive_float,
        default=PATH_DEFAULTS.time_limit,
        metavar="SECONDS",
        help="per path and method",
    )
    p.add_argument("--seed", type=int, default=0)
    add_threads_arg(p)
    add_out_dir_arg(p, "paths", "paths.md and .csv, paths_summary.md and .csv, and the figures paths/NAME.png")
    p.add_argument("--no-figures", action="store_true", help="write the tables only")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval_paths)
