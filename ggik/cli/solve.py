"""``ggik solve``: IK solutions of one goal (a pose, a position + tool axis, or a position), as a table or JSON.

By default the model's samples are refined with LM, random restarts only if they leave the goal unsolved
(``--strategy model-first``), and the distinct solutions are listed, best first, with a summary line. Exit status 0
with a solution, 1 without (the closest attempts listed), 2 for bad input. ``--raw`` lists the model's own samples.
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ggik.cli.arguments import positive_float, positive_int
from ggik.cli.commands import HELP
from ggik.cli.obstacles import add_obstacle_args, obstacle_options, refuse_blocking_scene
from ggik.cli.robots import add_chain_args, add_lock_arg, check_model_chain, robot_from_options
from ggik.cli.solve_output import print_table, solution_rows
from ggik.errors import GGIKError
from ggik.ik.solve_config import DEFAULT_RANDOM_STARTS, DEFAULT_SAMPLES, REFINE_METHODS, STRATEGIES
from ggik.ik.tolerances import PAPER_TOLERANCES, SOLVE_TOLERANCES

__all__ = ["add_solve_parser", "cmd_solve"]

DEFAULT_STRATEGY = "model-first"  #: LM from the samples, random restarts only where they fail: solutions, fast
#: SolveConfig's fields as this command's options (its errors are told in the options' names)
OPTION_OF_FIELD = {
    "samples": "-s/--samples",
    "random_starts": "--random-starts",
    "oversample": "--oversample",
    "refine": "--refine",
    "strategy": "--strategy",
    "first_solution": "--first-solution",
    "pos_tol": "--pos-tol",
    "rot_tol": "--rot-tol",
}


def _config(args: argparse.Namespace) -> Any:
    """The SolveConfig of the options; GGIKError naming the options that do not go together."""
    from ggik.ik.solve_config import SolveConfig

    if args.raw:
        clash = [flag for flag, given in (("--refine", args.refine), ("--strategy", args.strategy)) if given]
        if clash:
            raise GGIKError(f"--raw lists the model's own samples: it takes no {' or '.join(clash)}")
        if args.first_solution:
            raise GGIKError("--first-solution stops LM at a goal's first solution; --raw runs no LM")
        if args.random_starts is not None:
            raise GGIKError("--random-starts: --raw runs no random starts")
    strategy = "samples" if args.raw else (args.strategy or DEFAULT_STRATEGY)
    refine = None if args.raw else (args.refine or "lm")
    pos_tol, rot_tol = args.pos_tol, args.rot_tol
    if args.raw:  # raw samples are judged as everywhere else: the GGIK paper's 1 cm and 1 deg
        pos_tol = PAPER_TOLERANCES.pos_tol if pos_tol is None else pos_tol
        rot_tol = PAPER_TOLERANCES.rot_tol if rot_tol is None else rot_tol
    try:  # the library's checks, its field names told as this command's options
        return SolveConfig(
            samples=args.samples,
            refine=refine,
            strategy=strategy,
            random_starts=args.random_starts,
            pos_tol=pos_tol,
            rot_tol=rot_tol,
            oversample=args.oversample,
            first_solution=args.first_solution,
        )
    except ValueError as exc:
        message = str(exc)
        for field, flag in OPTION_OF_FIELD.items():
            message = message.replace(f"SolveConfig.{field}", flag)
        raise GGIKError(message) from None


def _finite(values: list[float], flag: str) -> None:
    if not all(math.isfinite(v) for v in values):
        raise GGIKError(f"{flag}: every value must be a finite number, got {' '.join(str(v) for v in values)}")


def _goal(args: argparse.Namespace) -> tuple[Any, str]:
    """(goal, kind) of ``--pose``, ``--position`` or ``--position`` + ``--axis``; GGIKError naming the option."""
    import torch

    from ggik.kinematics.geometry import make_transform, quat_to_matrix

    f64 = torch.float64
    if args.axis is not None and args.position is None:
        raise GGIKError("--axis needs --position (a position + tool axis goal)")
    if args.pose is not None:
        _finite(args.pose, "--pose X Y Z QW QX QY QZ")
        x, y, z, *quat = args.pose
        norm = math.sqrt(sum(v * v for v in quat))
        if abs(norm - 1.0) > 1e-3:
            raise GGIKError(f"--pose: the quaternion QW QX QY QZ must have unit length, got norm {norm:.6g}")
        rotation = quat_to_matrix(torch.tensor(quat, dtype=f64) / norm)
        return make_transform(rotation, torch.tensor([x, y, z], dtype=f64)), "pose"
    _finite(args.position, "--position X Y Z")
    if args.axis is None:
        return torch.tensor(args.position, dtype=f64), "position"
    _finite(args.axis, "--axis AX AY AZ")
    if math.sqrt(sum(v * v for v in args.axis)) < 1e-9:
        raise GGIKError("--axis: the tool axis must not be zero")
    return (torch.tensor(args.position, dtype=f64), torch.tensor(args.axis, dtype=f64)), "position+axis"


def cmd_solve(args: argparse.Namespace) -> int:
    """The command: the same call as :meth:`ggik.GGIK.solve` of its options (the solver's own settings, LM backends
    included: what the library runs, the command runs), then the listing."""
    import torch

    from ggik.solver import GGIK

    config = _config(args)
    robot = robot_from_options(args.robot, args.urdf, args.base, args.ee, args.lock)
    if config.strategy != "random":
        check_model_chain(robot, f"--robot {args.robot}" if args.robot else f"--urdf {args.urdf}")
    goal, kind = _goal(args)
    solver = GGIK.load_or_pretrained(args.ckpt)
    kw = obstacle_options(args)
    check = None
    if kw:
        from ggik.collision import Clearance

        model = solver.collision_model(robot, kw["collision"])  # CollisionFileError for a bad --collision / --srdf
        check = Clearance(robot, model, kw["obstacles"], kw["collision"].without_files())
        refuse_blocking_scene(check, args.obstacles, args.seed)
    result = solver.solve(robot, goal, config, generator=torch.Generator().manual_seed(args.seed), goal=kind, **kw)
    tol = config.tolerances(SOLVE_TOLERANCES)
    listing = solution_rows(robot, result, check, tol, raw=config.method is None, every=args.all)
    if args.json:
        print(
            json.dumps(
                {
                    "robot": robot.name,
                    "joint_names": list(robot.joint_names),
                    "goal": kind,
                    "strategy": config.strategy,
                    "refine": config.method,
                    "solved": listing.solved,
                    "summary": listing.summary,
                    "solutions": listing.rows,
                },
                indent=1,
                allow_nan=False,
            )
        )
    else:
        print_table(robot, config, kind, listing, among=None if check is None else len(kw["obstacles"]))
    return 0 if listing.solved else 1


def add_solve_parser(sub: Any) -> None:
    """``ggik solve`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser(
        "solve",
        help=HELP["solve"],
        description="IK solutions of one goal with a trained model. By default LM refines the model's samples "
        "(random restarts only if they leave the goal unsolved) and the distinct solutions are listed, best first, "
        "then a summary line. Exit status 0: a solution; 1: none (the closest attempts are listed); 2: bad input.",
    )
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file")
    add_chain_args(p)
    add_lock_arg(p)
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument(
        "--pose",
        nargs=7,
        type=float,
        metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
        help="EE goal in the base-link frame: position [m] and unit quaternion (w x y z)",
    )
    goal.add_argument(
        "--position",
        nargs=3,
        type=float,
        metavar=("X", "Y", "Z"),
        help="EE position goal [m] in the base-link frame, orientation free (or tool axis only, --axis)",
    )
    p.add_argument(
        "--axis",
        nargs=3,
        type=float,
        metavar=("AX", "AY", "AZ"),
        help="with --position: the tool axis (the last joint's axis; the EE z axis for most robots) in the "
        "base-link frame, roll about it free (rot err = angle between the axes)",
    )
    p.add_argument("-s", "--samples", type=positive_int, metavar="S", help=f"model samples (default {DEFAULT_SAMPLES})")
    p.add_argument(
        "--raw",
        action="store_true",
        help="list the model's own samples (no LM; ok: within the tolerances, by default the GGIK paper's 1 cm "
        "and 1 deg), not refined solutions",
    )
    p.add_argument(
        "--refine",
        choices=[m for m in REFINE_METHODS if m],
        help="the local solver that refines every start (default lm)",
    )
    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        help="model-first (default): LM from the samples, random restarts only if they fail; samples: every "
        "sample refined; random: random starts refined by --refine (lm, slsqp, dg: their point sets projected, dg+lm), "
        "no model",
    )
    p.add_argument(
        "--random-starts",
        type=positive_int,
        metavar="R",
        help="random starts of --strategy model-first (for a goal the samples leave unsolved) and random "
        f"(default {DEFAULT_RANDOM_STARTS})",
    )
    p.add_argument(
        "--oversample",
        type=positive_int,
        metavar="K",
        help="draw K times the samples and keep those that best satisfy the known distances (default 1)",
    )
    p.add_argument(
        "--first-solution",
        action="store_true",
        help="one solution is enough: LM stops at the first converged start (faster)",
    )
    p.add_argument(
        "--pos-tol",
        type=positive_float,
        metavar="M",
        help=f"success: position error below M [m] ({SOLVE_TOLERANCES.pos_tol:g}; --raw {PAPER_TOLERANCES.pos_tol:g})",
    )
    p.add_argument(
        "--rot-tol",
        type=positive_float,
        metavar="RAD",
        help=f"success: rotation error below RAD [rad] ({SOLVE_TOLERANCES.rot_tol:g}; --raw "
        f"{PAPER_TOLERANCES.rot_tol:.4g})",
    )
    p.add_argument(
        "--all",
        action="store_true",
        help="list every result (duplicates and failures too), not only the distinct solutions",
    )
    add_obstacle_args(p, "LM keeps the links (and ok means collision-free)")
    p.add_argument("--ckpt", help="model file (default: the shipped model)")
    p.add_argument("--seed", type=int, default=0, help="seed of the samples and random starts (default 0)")
    p.add_argument("--json", action="store_true", help="print JSON (the same rows and summary) instead of a table")
    p.set_defaults(func=cmd_solve)
