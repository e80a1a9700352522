"""Where the model pays as a seed: LM from S model samples against LM from S random starts, in one run.

Problem families (each: a robot, goals from uniform random configurations within its limits, a goal kind, a scene):
- ``pose``: pose goals of training arms;
- ``tight``: the same arm with every joint range cut to ``--tight`` of its width about its middle (goals inside it);
- ``axis``: position + tool-axis goals (the roll about the tool axis free);
- ``shelf``: pose goals among the boxes of benchmarks/obstacles' shelf scene, collision-free witnesses, solved with
  the scene as obstacles;
- ``chain12`` / ``chain14``: random 12- and 14-DOF chains (:func:`ggik.random_robot`, outside training);
- ``adapted`` (with ``--adapted MODEL URDF``): an arm outside training after ``ggik adapt``, its adapted model's seeds.
For every family and S of ``--starts``: ``GGIK.solve`` with ``SolveConfig(strategy="random", random_starts=S)`` (LM from
S random starts) and, per model file, ``SolveConfig(samples=S, refine="lm")`` (LM from S model samples), the same
restart policy (none), the same goals and the solver's tolerances (1 mm and 0.01 rad, within limits, clear of the
obstacles: "strict"). Time: the whole call per goal (median of ``--repeats`` calls after a warm-up); "ms per solved
goal" divides it by the strict success rate: the price of a solution. "sampling" is the raw call alone
(``SolveConfig(samples=S)``), the model's share. ``--compile``: each model also with its decoder compiled
(``GGIK(compile_sampler=True)``; the warm-up call compiles).

The code of ``python -m benchmarks.sampler_price.seeds``.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
from pathlib import Path

import torch

from benchmarks.common.measure import median_time
from benchmarks.common.robots import robot_from_arg
from benchmarks.common.scripts import BenchmarkError
from benchmarks.obstacles.scenes import build_scene, reach, scene_goals
from ggik.collision import CollisionModel
from ggik.evaluation.report import Table
from ggik.kinematics.robot import Robot
from ggik.rng import step_generator
from ggik.solver import GGIK, SolveConfig

__all__ = ["FAMILIES", "seeds_table", "tight_limits"]

FAMILIES = ("pose", "tight", "axis", "shelf", "chain12", "chain14", "adapted")
_ARMS = {"pose": ["panda", "ur10", "lbr_iiwa", "kr16_2"], "tight": ["panda", "lbr_iiwa"], "axis": ["panda", "ur10"]}
_GOALS, _NOISE = 0x5EED, 0x5EEE  #: streams of this study's goals and solver draws


def tight_limits(robot: Robot, share: float) -> Robot:
    """``robot`` with every limited joint's range cut to ``share`` of its width about its middle."""
    joints = []
    for j in robot.joints:
        if j.lower is not None and j.upper is not None and j.type in ("revolute", "prismatic"):
            mid, half = (j.lower + j.upper) / 2, share * (j.upper - j.lower) / 2
            j = dataclasses.replace(j, lower=mid - half, upper=mid + half)
        joints.append(j)
    return Robot(joints, name=f"{robot.name}-tight{share:g}")


def _problems(
    family: str, n: int, seed: int, tight: float, args_adapted: list[str] | None
) -> list[tuple[Robot, torch.Tensor, str, object]]:
    """(robot, goals (n, 4, 4), goal kind, scene or None) of ``family`` (``args_adapted``: [model, urdf])."""
    g = step_generator(seed, _GOALS)
    if family == "adapted":
        robot = Robot.from_urdf(args_adapted[1])
        return [(robot, robot.fk(robot.sample_q(n, g)), "pose", None)]
    if family.startswith("chain"):
        robot = robot_from_arg(f"random{family[len('chain') :]}", seed)
        return [(robot, robot.fk(robot.sample_q(n, g)), "pose", None)]
    if family == "shelf":
        robot = Robot.from_name("panda")
        case = build_scene("shelf", reach(robot))
        poses, _ = scene_goals(robot, case, CollisionModel.from_robot(robot), n, seed)
        return [(robot, poses, "pose", case.scene)]
    out = []
    for name in _ARMS[family]:
        robot = Robot.from_name(name)
        robot = tight_limits(robot, tight) if family == "tight" else robot
        kind = "position+axis" if family == "axis" else "pose"
        out.append((robot, robot.fk(robot.sample_q(n, g)), kind, None))
    return out


def _measure(solver: GGIK, robot: Robot, T: torch.Tensor, kind: str, scene, config: SolveConfig, args) -> tuple:
    """(strict success [%], ms per goal) of one configuration on one problem set."""

    def call():
        g = step_generator(args.seed, _NOISE)
        return solver.solve(robot, T, config, generator=g, goal=kind, obstacles=scene)

    result = call()  # warm-up, and the result (the same draws every call)
    ms = 1e3 * median_time(call, args.repeats, warmups=0)[0] / T.shape[0]
    return 100.0 * float(result.success[:, 0].float().mean()), ms


def seeds_table(args: argparse.Namespace) -> Table:
    """The table of ``main``'s options ``args``, measured."""
    if args.tight > 1:
        raise BenchmarkError(f"--tight must be at most 1 (a share of each joint range), got {args.tight}")
    if args.adapted and not all(Path(p).is_file() for p in args.adapted):
        raise BenchmarkError(f"--adapted: no such files {args.adapted}")
    solvers = {}
    for path in [args.ckpt, *args.more_ckpts]:
        if not Path(path).is_file():
            raise BenchmarkError(f"no model file {path}")
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
        solvers[f"{Path(path).stem} ({digest})"] = GGIK.load(path)
        if args.compile:
            solvers[f"{Path(path).stem} ({digest}), compiled"] = GGIK.load(path, compile_sampler=True)
    random_solver = next(iter(solvers.values()))
    random_config = {S: SolveConfig(strategy="random", random_starts=S) for S in args.starts}
    table = Table(
        f"Model seeds against random seeds: LM from S starts, no restarts, {args.goals} goals per problem set",
        ["family", "robot", "goal", "S", "seeds", "strict success [%]", "ms per goal", "ms per solved goal",
         "sampling ms per goal"],
    )  # fmt: skip
    families = [f for f in args.families if f != "adapted" or args.adapted]
    for family in families:
        models = solvers
        if family == "adapted":
            digest = hashlib.sha256(Path(args.adapted[0]).read_bytes()).hexdigest()[:12]
            models = {f"{Path(args.adapted[0]).stem} ({digest})": GGIK.load(args.adapted[0])}
        for robot, T, kind, scene in _problems(family, args.goals, args.seed, args.tight, args.adapted):
            for S in args.starts:
                ok, ms = _measure(random_solver, robot, T, kind, scene, random_config[S], args)
                table.add(family, robot.name, kind, S, "random", ok, ms, ms / max(ok / 100, 1e-9), 0.0)
                print(table.rows[-1], flush=True)
                for label, solver in models.items():
                    ok, ms = _measure(solver, robot, T, kind, scene, SolveConfig(samples=S, refine="lm"), args)
                    _, raw_ms = _measure(solver, robot, T, kind, None, SolveConfig(samples=S), args)
                    per_solved = ms / (ok / 100) if ok > 0 else math.inf
                    table.add(family, robot.name, kind, S, label, ok, ms, per_solved, raw_ms)
                    print(table.rows[-1], flush=True)
    table.notes.append(
        f"{torch.get_num_threads()} torch threads; time: median of {args.repeats} calls after a warm-up, the whole "
        f"solve (sampling, angle recovery, LM, ranking); strict: 1 mm and 0.01 rad, within limits (shelf: and clear "
        f"of its boxes); tight: joint ranges cut to {args.tight:g} of their width; random chains: "
        "benchmarks.common.robots.robot_from_arg('randomN')"
    )
    return table
