"""How sparse is the partial graph? Known-edge degree of the free (unknown) nodes, per robot (issue 12).

A decoder that passes messages along known edges only (instead of the complete graph) does per-sample edge work
proportional to this degree instead of N - 1; the ratio bounds what such a decoder could save.

    python eval/known_edge_degree.py            # the nine named robots, full-pose goals
"""
from __future__ import annotations

import argparse

import torch

from ggik import Robot, RobotGraph, available_robots


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="*", default=None, help="robot names (default: every named robot)")
    ap.add_argument("--kind", default="pose", help="goal kind of the partial graph")
    args = ap.parse_args(argv)
    print("| robot | nodes N | free nodes M | known-edge degree of a free node, mean / max | N - 1 | complete / known |")
    print("|---|---|---|---|---|---|")
    for name in args.robots or available_robots():
        graph = RobotGraph(Robot.from_name(name))
        q = torch.zeros(graph.robot.dof, dtype=torch.float64)
        problem = graph.partial(graph.robot.fk(q), kind=args.kind)
        free = ~problem.anchor_mask
        deg = problem.known_mask[free].sum(-1).double()
        n = problem.known_mask.shape[-1]
        print(f"| {name} | {n} | {int(free.sum())} | {deg.mean():.1f} / {int(deg.max())} | {n - 1} | {(n - 1) / deg.mean():.1f}x |")


if __name__ == "__main__":
    main()
