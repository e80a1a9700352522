"""Raw (unrefined) success of a checkpoint against random joint configurations, on fixed problems.

For each robot: P seeded problems (q uniform within the limits, goal = FK(q)); S samples per problem from the
model (angles recovered with ``RobotGraph.joint_angles``) and, as the baseline, S joint configurations drawn
uniformly within the limits (stream ``RAW_SUCCESS_BASELINE`` of :mod:`benchmarks.common.streams`). Success = the
best of the S within 1 cm AND 1 degree (:func:`ggik.ik.metrics.success_rate`).
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.common.robots import load_bench_model, robot_from_arg
from benchmarks.common.streams import RAW_SUCCESS_BASELINE
from ggik.data import ProblemSet
from ggik.evaluation.report import model_stamp
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.kinematics.geometry import pose_errors
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["RawSuccessRow", "raw_success_rows", "raw_success_report"]


@dataclass
class RawSuccessRow:
    """One robot and one kind of candidates, or the robot's sampling time (``seconds`` set, the errors None)."""

    robot: str
    label: str  #: "GGIK samples", "uniform random configurations" or "sampling time"
    success: float = float("nan")  #: fraction of problems solved (best of S within 1 cm and 1 degree)
    pos_mean_mm: float | None = None  #: position error of all candidates, mean [mm]
    pos_best_mm: float | None = None  #: best-of-S position error, mean over problems [mm]
    rot_best_deg: float | None = None  #: smallest rotation error of the S, mean over problems [deg]
    seconds: float | None = None  #: wall time of the model's sampling + angle recovery for all problems [s]


def raw_success_rows(
    model: GGIKModel, robots: list[Robot], problems: int, samples: int, seed: int
) -> list[RawSuccessRow]:
    """Per robot: the rows of the model's samples, of the uniform baseline, and the sampling time."""
    rows = []
    for robot, _, T_goal in ProblemSet.generate(robots, problems, seed).groups():
        graph = model.graph(robot)
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, graph, T_goal, samples, generator=torch.Generator().manual_seed(seed))
        dt = time.perf_counter() - t0
        g = step_generator(seed, RAW_SUCCESS_BASELINE)
        q_rand = robot.sample_q(len(T_goal) * samples, g).view(len(T_goal), samples, robot.dof)
        rp, rr = pose_errors(robot.fk(q_rand), T_goal[:, None])
        for label, pos, rot in (("GGIK samples", raw.pos_err, raw.rot_err), ("uniform random configurations", rp, rr)):
            rows.append(
                RawSuccessRow(
                    robot.name,
                    label,
                    success_rate(pos, rot),
                    1e3 * pos.mean().item(),
                    1e3 * pos.min(-1).values.mean().item(),
                    torch.rad2deg(rot.min(-1).values).mean().item(),
                )
            )
        rows.append(RawSuccessRow(robot.name, "sampling time", seconds=dt))
    return rows


def raw_success_report(
    checkpoint: str | Path, robots: list[str], problems: int = 200, samples: int = 32, seed: int = 0, command: str = ""
) -> str:
    """The Markdown table of :func:`raw_success_rows` for the checkpoint and the named robots, headed by ``command``
    and the checkpoint's training budget."""
    model, ckpt = load_bench_model(checkpoint)
    rows = raw_success_rows(model, [robot_from_arg(r, seed) for r in robots], problems, samples, seed)
    lines = [
        f"# Raw success: best of {samples} within 1 cm and 1 degree, {problems} problems per robot",
        "",
        f"Command: `{command}`",
        f"Model: {model_stamp(checkpoint)}",
        f"Checkpoint: step {ckpt['step']}, {ckpt['examples']:,} training examples, {ckpt['wall_s'] / 60:.1f} min of "
        "training; "
        f"torch {torch.__version__}, {os.cpu_count()} CPUs ({platform.machine()}), seed {seed}.",
        "",
        "| robot | candidates | success | mean position error, all [mm] | best-of-S position error [mm] | best-of-S "
        "rotation error [deg] |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.seconds is not None:
            lines.append(
                f"| {r.robot} | {r.label}: {r.seconds:.2f} s for {problems} x {samples} samples (incl. angle "
                "recovery) | | | | |"
            )
        else:
            lines.append(
                f"| {r.robot} | {r.label} | {100 * r.success:.1f} % | {r.pos_mean_mm:.0f} | {r.pos_best_mm:.0f} | "
                f"{r.rot_best_deg:.1f} |"
            )
    return "\n".join(lines) + "\n"
