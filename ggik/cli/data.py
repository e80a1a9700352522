"""``ggik data make`` and ``ggik data show``: seeded problem sets (goal poses with known solutions)."""

from __future__ import annotations

import argparse
from typing import Any

import torch

from ggik.cli.arguments import positive_int
from ggik.cli.commands import HELP
from ggik.cli.robots import add_chain_args, resolve_robots
from ggik.errors import GGIKError

__all__ = ["add_data_parser", "cmd_data_make", "cmd_data_show"]


def cmd_data_make(args: argparse.Namespace) -> int:
    from ggik.data import ProblemSet
    from ggik.kinematics import random_robot

    robots = resolve_robots(args.robots or [], args.base, args.ee)
    g = torch.Generator().manual_seed(args.seed)
    robots += [random_robot(dof, g, name=f"random{dof}_{i}") for i, dof in enumerate(args.random or [])]
    if not robots:
        raise GGIKError("name robots (--robots) and/or random robot DOFs (--random)")
    problems = ProblemSet.generate(robots, args.n, args.seed)
    problems.save(args.output)
    print(f"wrote {args.output}: {len(problems)} problems, robots {[r.name for r in robots]}, seed {args.seed}")
    return 0


def cmd_data_show(args: argparse.Namespace) -> int:
    from ggik.data import ProblemSet

    problems = ProblemSet.load(args.file)
    print(f"{args.file}: {len(problems)} problems, seed {problems.seed}")
    for i, entry in enumerate(problems.robots):
        kind = "shipped" if not entry["urdf"] else "URDF inside the file"
        print(f"  {entry['name']:<20} {int((problems.robot_index == i).sum()):>6} problems ({kind})")
    return 0


def add_data_parser(sub: Any) -> None:
    """``ggik data make|show`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    data = sub.add_parser("data", help=HELP["data"]).add_subparsers(dest="action", required=True)
    p = data.add_parser("make", help="write a seeded problem set (goal poses with known solutions)")
    p.add_argument(
        "--robots", nargs="*", help="URDF files, shipped robot names, or YAML files of robots (the form of data.robots)"
    )
    add_chain_args(p, of="every URDF file among --robots")
    p.add_argument("--random", nargs="*", type=positive_int, metavar="DOF", help="DOFs of random robots to add")
    p.add_argument("-n", "--goals", dest="n", type=positive_int, default=200, help="problems (goals) per robot")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True, metavar="FILE.pt", help="the problem set file to write")
    p.set_defaults(func=cmd_data_make)
    p = data.add_parser("show", help="summarise a problem set file")
    p.add_argument("file")
    p.set_defaults(func=cmd_data_show)
