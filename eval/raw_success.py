"""Raw (unrefined) success of a checkpoint against random joint configurations, on fixed problems.

For each robot: P seeded problems (q uniform within the limits, goal = FK(q)); S samples per problem
from the model (angles recovered with ``RobotGraph.joint_angles``) and, as the baseline, S joint
configurations drawn uniformly within the limits. Success = the best of the S within 1 cm AND 1 degree.

Usage: ``python eval/raw_success.py CKPT [--robots panda] [-n 200] [-s 32] [--seed 0] [--out FILE.md]``
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

from ggik import Robot, RobotGraph
from ggik.data import ProblemSet
from ggik.rng import step_generator
from ggik.kinematics.geometry import pose_errors
from ggik.ik.sampling import sample_joint_angles
from ggik.ik.metrics import success_rate
from ggik.checkpoint import load_model


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--robots", nargs="*", default=["panda"])
    ap.add_argument("-n", type=int, default=200, help="problems per robot")
    ap.add_argument("-s", "--samples", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the Markdown table here")
    args = ap.parse_args(argv)

    model, ckpt = load_model(args.checkpoint)
    problems = ProblemSet.generate([Robot.from_name(r) for r in args.robots], args.n, args.seed)
    rows = []
    for robot, q, T_goal in problems.groups():
        graph = RobotGraph.from_robot(robot)
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, graph, T_goal, args.samples, generator=torch.Generator().manual_seed(args.seed))
        dt = time.perf_counter() - t0
        g = step_generator(args.seed, 0xBA5E)
        q_rand = robot.sample_q(len(T_goal) * args.samples, g).view(len(T_goal), args.samples, robot.dof)
        rp, rr = pose_errors(robot.fk(q_rand), T_goal[:, None])
        for label, pos, rot in (("GGIK samples", raw.pos_err, raw.rot_err), ("uniform random configurations", rp, rr)):
            rows.append(
                (robot.name, label, success_rate(pos, rot), 1e3 * pos.mean().item(), 1e3 * pos.min(-1).values.mean().item(),
                 torch.rad2deg(rot.min(-1).values).mean().item())
            )
        rows.append((robot.name, "sampling time", dt, None, None, None))
    lines = [
        f"# Raw success: best of {args.samples} within 1 cm and 1 degree, {args.n} problems per robot",
        "",
        f"Command: `python eval/raw_success.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
        f"Checkpoint: step {ckpt['step']}, {ckpt['examples']:,} training examples, {ckpt['wall_s'] / 60:.1f} min of training; "
        f"torch {torch.__version__}, {os.cpu_count()} CPUs ({platform.machine()}), seed {args.seed}.",
        "",
        "| robot | candidates | success | mean position error, all [mm] | best-of-S position error [mm] | best-of-S rotation error [deg] |",
        "|---|---|---|---|---|---|",
    ]
    for name, label, succ, mean, best, rot in rows:
        if mean is None:
            lines.append(f"| {name} | {label}: {succ:.2f} s for {args.n} x {args.samples} samples (incl. angle recovery) | | | | |")
        else:
            lines.append(f"| {name} | {label} | {100 * succ:.1f} % | {mean:.0f} | {best:.0f} | {rot:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
