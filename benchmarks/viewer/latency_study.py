"""The latency study of ``ggik view`` (what :mod:`benchmarks.viewer.latency` runs): per robot, a viewer on a free local
port, goals moved one after the other and waited for, the time until their solutions are in the scene."""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import time

import torch

from ggik.evaluation.report import Table

__all__ = ["ROBOTS", "SHIPPED", "robot_rows", "latency_table"]

ROBOTS = ("panda", "ur10")  #: two training arms (7 and 6 DOF)
SHIPPED = "ggik/weights/ggik_default.pt"  #: the model ggik view loads (run from the repository root)


def robot_rows(table: Table, robot_name: str, solver, args: argparse.Namespace) -> None:
    from ggik import Robot
    from ggik.viewer.app import Viewer
    from ggik.viewer.config import ViewerConfig

    robot = Robot.from_name(robot_name)
    goals = robot.fk(robot.sample_q(args.goals + 1, torch.Generator().manual_seed(args.seed)))
    for raw in (True, False):
        config = ViewerConfig(port=0, samples=args.samples, show_raw=raw, seed=args.seed)
        with contextlib.redirect_stdout(io.StringIO()):  # viser's banner
            viewer = Viewer(robot, solver, goal=goals[0], config=config)
        try:
            viewer.wait_idle(120)  # the first goal: LM compiles, untimed
            total, solve, submit, solved = [], [], [], 0
            for T in goals[1:]:
                t0 = time.perf_counter()
                viewer.set_goal(T)
                t1 = time.perf_counter()
                if not viewer.wait_idle(60):
                    raise SystemExit(f"{robot_name}: a goal took over 60 s")
                t2 = time.perf_counter()
                outcome = viewer.outcome
                assert outcome is not None and torch.equal(outcome.request.goal, T)
                total.append(1e3 * (t2 - t0))
                submit.append(1e3 * (t1 - t0))
                solve.append(outcome.raw_ms + outcome.refined_ms)
                solved += bool(outcome.distinct)
        finally:
            with contextlib.redirect_stdout(io.StringIO()):
                viewer.close()
        total.sort()
        table.add(
            robot_name, "yes" if raw else "no", args.samples, round(statistics.median(total), 1),
            round(total[int(0.9 * (len(total) - 1))], 1), round(max(total), 1), round(statistics.median(solve), 1),
            round(max(submit), 2), f"{solved}/{len(total)}",
        )  # fmt: skip


def latency_table(args: argparse.Namespace) -> Table:
    from ggik import GGIK

    solver = GGIK.load_or_pretrained(args.ckpt)
    table = Table(
        "Viewer latency: goal moved -> solutions in the scene",
        ["robot", "raw drawn", "samples", "median [ms]", "p90 [ms]", "max [ms]", "of which solving, median [ms]",
         "moving the goal, max [ms]", "goals with a solution"],
    )  # fmt: skip
    for name in args.robots:
        robot_rows(table, name, solver, args)
    table.notes.append(
        f"{args.goals} reachable goals per row, each waited for; torch threads {torch.get_num_threads()}. Solving: "
        "the raw samples' solve (raw drawn) and the refined one (LM from every sample); the rest is drawing (link "
        "poses, one scene update per link). Moving the goal is the interface thread's share: it queues the goal."
    )
    return table
