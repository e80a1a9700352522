"""``ggik solve``: IK solutions of one goal (a pose, a position + tool axis, or a position) with a trained model,
as a table or JSON."""
from __future__ import annotations

import argparse
import json
from typing import Any

import torch

from ggik.cli.robots import add_chain_args, robot_from_options
from ggik.errors import GGIKError

__all__ = ["add_solve_parser", "cmd_solve"]


def cmd_solve(args: argparse.Namespace) -> int:
    from ggik.ik.solver import GGIK
    from ggik.kinematics.geometry import make_transform, quat_to_matrix

    robot = robot_from_options(args.robot, args.urdf, args.base, args.ee)
    if args.n < 1:
        raise GGIKError(f"-n (number of samples) must be at least 1, got {args.n}")
    if args.axis is not None and args.position is None:
        raise GGIKError("--axis needs --position (a position + tool axis goal)")
    if args.pose is not None:
        x, y, z, qw, qx, qy, qz = args.pose
        quat = torch.tensor([qw, qx, qy, qz], dtype=torch.float64)
        if not torch.isfinite(quat).all() or abs(float(quat.norm()) - 1.0) > 1e-3:
            raise GGIKError(f"the quaternion (w x y z) must be a unit quaternion, got norm {float(quat.norm()):.6g}")
        goal, kind = make_transform(quat_to_matrix(quat), torch.tensor([x, y, z], dtype=torch.float64)), "pose"
    elif args.axis is None:
        goal, kind = torch.tensor(args.position, dtype=torch.float64), "position"
    else:
        goal, kind = (torch.tensor(args.position, dtype=torch.float64), torch.tensor(args.axis, dtype=torch.float64)), "position+axis"
    solver = GGIK.load_or_pretrained(args.ckpt)
    gen = torch.Generator().manual_seed(args.seed)
    result = solver.solve(robot, goal, num_samples=args.n, refine=args.refine, generator=gen, goal=kind)
    rows = [
        {
            "q": [round(v, 6) for v in result.q[0, k].tolist()],
            "pos_err_m": result.pos_err[0, k].item(),
            "rot_err_rad": result.rot_err[0, k].item(),
            "success": bool(result.success[0, k]),
            "within_limits": bool(result.within_limits[0, k]),
        }
        for k in range(result.q.shape[1])
    ]
    if args.json:
        print(json.dumps({"robot": robot.name, "joint_names": list(robot.joint_names), "refine": args.refine, "goal": kind,
                          "solutions": rows}, indent=1))
        return 0
    what = {"pose": "", "position+axis": ", position + axis goal: rot err = angle between the tool axes",
            "position": ", position goal: orientation free"}[kind]
    print(f"{robot.name}: {len(rows)} solutions ({'raw model samples' if args.refine is None else 'refined with ' + args.refine}"
          f"{what}), best first")
    print(f"{'#':>3}  {'pos err [mm]':>12} {'rot err [deg]':>13} {'ok':>3} {'in limits':>9}  q [rad] ({', '.join(robot.joint_names)})")
    for k, r in enumerate(rows):
        print(f"{k:>3}  {1e3 * r['pos_err_m']:12.3f} {torch.rad2deg(torch.tensor(r['rot_err_rad'])).item():13.3f} "
              f"{'yes' if r['success'] else 'no':>3} {'yes' if r['within_limits'] else 'no':>9}  {r['q']}")
    return 0


def add_solve_parser(sub: Any) -> None:
    """``ggik solve`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("solve", help="solve IK for one goal pose with a trained model")
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file")
    add_chain_args(p)
    goal = p.add_mutually_exclusive_group(required=True)
    goal.add_argument("--pose", nargs=7, type=float, metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
                      help="EE goal in the base-link frame: position [m] and unit quaternion (w x y z)")
    goal.add_argument("--position", nargs=3, type=float, metavar=("X", "Y", "Z"),
                      help="EE position goal [m] in the base-link frame, orientation free (or tool axis only, --axis)")
    p.add_argument("--axis", nargs=3, type=float, metavar=("AX", "AY", "AZ"),
                   help="with --position: the tool axis (the last joint's axis; the EE z axis for most robots) in the "
                        "base-link frame, roll about it free (rot err = angle between the axes)")
    p.add_argument("-n", type=int, default=32, help="number of samples")
    p.add_argument("--refine", choices=["lm", "slsqp", "dg", "dg+lm"], help="refine every sample with a local solver")
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=cmd_solve)
