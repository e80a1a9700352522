"""``ggik solve``: IK solutions of one goal (a pose, a position + tool axis, or a position) with a trained model,
as a table or JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

import torch

from ggik.cli.arguments import add_old_samples_alias, positive_float, positive_int
from ggik.cli.obstacles import add_obstacle_args, obstacle_options
from ggik.cli.robots import add_chain_args, robot_from_options
from ggik.errors import GGIKError
from ggik.ik.solve_config import (
    DEFAULT_RANDOM_STARTS,
    DEFAULT_SAMPLES,
    REFINE_METHODS,
    START_REFINERS,
    STRATEGIES,
    SolveConfig,
)
from ggik.ik.tolerances import SOLVE_TOLERANCES

__all__ = ["add_solve_parser", "cmd_solve"]


def cmd_solve(args: argparse.Namespace) -> int:
    from ggik.ik.solver import GGIK
    from ggik.kinematics.geometry import make_transform, quat_to_matrix

    robot = robot_from_options(args.robot, args.urdf, args.base, args.ee)
    if args.strategy == "random" and args.samples is not None:
        raise GGIKError("-s/--samples: --strategy random samples no model")
    if args.strategy == "samples" and args.random_starts is not None:
        raise GGIKError("--random-starts applies to --strategy model-first and random")
    if args.strategy == "random" and args.oversample is not None:
        raise GGIKError("--oversample: --strategy random samples no model")
    if args.strategy != "samples" and args.refine not in (None, *START_REFINERS):
        raise GGIKError(f"--strategy {args.strategy} refines with {' or '.join(START_REFINERS)}, not {args.refine}")
    config = SolveConfig(
        samples=args.samples,
        refine=args.refine,
        strategy=args.strategy,
        random_starts=args.random_starts,
        pos_tol=args.pos_tol,
        rot_tol=args.rot_tol,
        oversample=args.oversample,
        first_solution=args.first_solution,
    )
    if args.axis is not None and args.position is None:
        raise GGIKError("--axis needs --position (a position + tool axis goal)")
    goal: Any  # a pose (4, 4), a position (3,) or a pair (position, axis)
    if args.pose is not None:
        x, y, z, qw, qx, qy, qz = args.pose
        quat = torch.tensor([qw, qx, qy, qz], dtype=torch.float64)
        if not torch.isfinite(quat).all() or abs(float(quat.norm()) - 1.0) > 1e-3:
            raise GGIKError(f"the quaternion (w x y z) must be a unit quaternion, got norm {float(quat.norm()):.6g}")
        goal, kind = make_transform(quat_to_matrix(quat), torch.tensor([x, y, z], dtype=torch.float64)), "pose"
    elif args.axis is None:
        goal, kind = torch.tensor(args.position, dtype=torch.float64), "position"
    else:
        goal, kind = (
            (torch.tensor(args.position, dtype=torch.float64), torch.tensor(args.axis, dtype=torch.float64)),
            "position+axis",
        )
    solver = GGIK.load_or_pretrained(args.ckpt)
    gen = torch.Generator().manual_seed(args.seed)
    kw = obstacle_options(args)
    obstacles = kw.get("obstacles")
    result = solver.solve(robot, goal, config, generator=gen, goal=kind, **kw)
    rows: list[dict[str, Any]] = [
        {
            "q": [round(v, 6) for v in result.q[0, k].tolist()],
            "pos_err_m": result.pos_err[0, k].item(),
            "rot_err_rad": result.rot_err[0, k].item(),
            "success": bool(result.success[0, k]),
            "within_limits": bool(result.within_limits[0, k]),
            **(
                {}
                if result.clearance is None
                else {"collision_free": bool(result.clearance[0, k] >= 0), "clearance_m": result.clearance[0, k].item()}
            ),
        }
        for k in range(result.q.shape[1])
    ]
    if args.json:
        print(
            json.dumps(
                {
                    "robot": robot.name,
                    "joint_names": list(robot.joint_names),
                    "refine": config.method,
                    "strategy": config.strategy,
                    "goal": kind,
                    "solutions": rows,
                },
                indent=1,
            )
        )
        return 0
    what = {
        "pose": "",
        "position+axis": ", position + axis goal: rot err = angle between the tool axes",
        "position": ", position goal: orientation free",
    }[kind]
    how = {
        "samples": "raw model samples" if config.method is None else f"refined with {config.method}",
        "model-first": f"model first, then random starts where unsolved, refined with {config.method}",
        "random": f"random starts refined with {config.method}",
    }[config.strategy]
    among = "" if obstacles is None else f", among {len(obstacles)} obstacles: ok = within tolerance and collision-free"
    print(f"{robot.name}: {len(rows)} solutions ({how}{what}{among}), best first")
    clear_head = "" if obstacles is None else f" {'clearance [mm]':>14}"
    print(
        f"{'#':>3}  {'pos err [mm]':>12} {'rot err [deg]':>13} {'ok':>3} {'in limits':>9}{clear_head}  "
        f"q [rad] ({', '.join(robot.joint_names)})"
    )
    for k, r in enumerate(rows):
        clear = "" if obstacles is None else f" {1e3 * r['clearance_m']:14.1f}"
        print(
            f"{k:>3}  {1e3 * r['pos_err_m']:12.3f} {torch.rad2deg(torch.tensor(r['rot_err_rad'])).item():13.3f} "
            f"{'yes' if r['success'] else 'no':>3} {'yes' if r['within_limits'] else 'no':>9}{clear}  {r['q']}"
        )
    return 0


def add_solve_parser(sub: Any) -> None:
    """``ggik solve`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("solve", help="solve IK for one goal pose with a trained model")
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file")
    add_chain_args(p)
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
    p.add_argument(
        "-s",
        "--samples",
        type=positive_int,
        metavar="S",
        help=f"model samples (default {DEFAULT_SAMPLES}; not with --strategy random)",
    )
    add_old_samples_alias(p, positive_int)
    p.add_argument(
        "--refine",
        choices=[m for m in REFINE_METHODS if m],
        help="refine every start with a local solver "
        "(default: none for --strategy samples, lm for the others, which also take slsqp)",
    )
    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default="samples",
        help="samples: every model sample (default); model-first: LM from the samples, random restarts only "
        "where they fail; random: LM from random starts, no model",
    )
    p.add_argument(
        "--random-starts",
        type=positive_int,
        metavar="R",
        help=f"random starts of --strategy model-first (for a goal the samples leave unsolved) and random "
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
        help="one solution per goal: LM stops a goal's starts at its first converged one (faster)",
    )
    p.add_argument(
        "--pos-tol",
        type=positive_float,
        metavar="M",
        help=f"success: position error below M [m] (default {SOLVE_TOLERANCES.pos_tol:g})",
    )
    p.add_argument(
        "--rot-tol",
        type=positive_float,
        metavar="RAD",
        help=f"success: rotation error below RAD [rad] (default {SOLVE_TOLERANCES.rot_tol:g})",
    )
    add_obstacle_args(p, "LM keeps the links (and ok means collision-free)")
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_solve)
