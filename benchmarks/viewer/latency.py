"""Latency of ``ggik view``: from a goal moved (as a drag of the gizmo delivers it) to its solutions in the scene.

    python -m benchmarks.viewer.latency --threads 2 --out benchmarks/viewer/results/latency

For each robot, a viewer on a free local port (no browser: the time measured ends when the scene nodes are updated,
before the browser draws them), the default panel: 32 samples, LM from every sample, the raw samples drawn (a second
sampling pass) and, in a second row, without them. ``--goals`` reachable goals (end-effector poses of random
configurations) are moved to one after the other, each waited for; one untimed goal first (LM compiles). Also timed:
the call that moves the goal, which is all the interface thread does (the solve runs on the worker thread). Target
(issue 40): a dragged goal answered within 100 ms on 2 cores for 32 samples + LM on a training arm. Run it alone.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time

import torch

from benchmarks.common.scripts import positive_int, run_model_study
from ggik.evaluation.report import Table

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckpt", default=SHIPPED, help=f"model file (default {SHIPPED}, the shipped model)")
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), help=f"shipped robots (default {' '.join(ROBOTS)})")
    ap.add_argument("--goals", type=positive_int, default=30, help="timed goals per row (default 30)")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal (default 32)")
    return run_model_study(__file__, ap, argv, latency_table)


if __name__ == "__main__":
    sys.exit(main())
