"""How sparse is the partial graph? Known-edge degree of the free (unknown) nodes, per robot.

A decoder that passes messages along known edges only (instead of the complete graph) does per-sample edge work
proportional to this degree instead of N - 1; the ratio bounds what such a decoder could save.

    python -m benchmarks.known_edge_degree.known_edge_degree            # the nine named robots, full-pose goals
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.common.robots import robot_from_arg
from benchmarks.common.scripts import BenchmarkError
from ggik import RobotGraph, available_robots
from ggik.graph.goal_kinds import GOAL_KINDS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="*", default=None, help="robot names (default: every named robot)")
    ap.add_argument("--kind", default="pose", choices=GOAL_KINDS, help="goal kind of the partial graph")
    args = ap.parse_args(argv)
    try:
        robots = [robot_from_arg(name, 0) for name in args.robots or available_robots()]
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    print(
        "| robot | nodes N | free nodes M | known-edge degree of a free node, mean / max | N - 1 | complete / known |"
    )
    print("|---|---|---|---|---|---|")
    for robot in robots:
        graph = RobotGraph(robot)
        q = torch.zeros(robot.dof, dtype=torch.float64)
        problem = graph.partial(robot.fk(q), kind=args.kind)
        free = ~problem.anchor_mask
        deg = problem.known_mask[free].sum(-1).double()
        n = problem.known_mask.shape[-1]
        print(
            f"| {robot.name} | {n} | {int(free.sum())} | {deg.mean():.1f} / {int(deg.max())} | {n - 1} | "
            f"{(n - 1) / deg.mean():.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
