"""Model first, random restarts where it fails: a two-stage LM solve of full-pose goals for one robot.

Stage 1 runs LM (:func:`ggik.ik.refine.lm_refine`) from S model samples per goal (S small, e.g. 1-4: sampling costs
about 0.4-1 ms per sample and goal on a 2-core CPU, README "Where the model stands"); stage 2 gives only the goals
that stage 1 left without a strict-valid solution (within the tolerances *and* the joint limits) R uniform random
starts and runs LM again. :func:`lm_random_starts` is the baseline it is measured against (R random starts for every
goal, one LM run); ``eval/bench_cascade.py`` times both in one process.

Both return one solution per goal (the first in :class:`ggik.GGIK`'s order: successful, within the limits, then by
``pos / pos_tol + rot / rot_tol``), so that a cascade and the baseline answer the same question: a solution for each goal.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.graph.robot_graph import RobotGraph
from ggik.ik.refine import RefineConfig, lm_refine
from ggik.ik.sampling import sample_joint_angles
from ggik.ik.solver import sort_best_first
from ggik.kinematics import Robot
from ggik.kinematics.geometry import check_pose
from ggik.nn.cvae import GGIKModel

__all__ = ["CascadeResult", "lm_cascade", "lm_random_starts"]


@dataclass
class CascadeResult:
    """One solution per goal (B goals).

    Attributes:
        q: (B, dof) joint values [rad]; pos_err: (B,) [m]; rot_err: (B,) [rad].
        success: (B,) bool, strict-valid: within the tolerances and the joint limits.
        first_stage: (B,) bool, solved by the first stage (LM from the model samples; all False for the baseline).
        iterations: (B,) float, LM iterations summed over the goal's starts and stages.
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    success: torch.Tensor
    first_stage: torch.Tensor
    iterations: torch.Tensor


def _check_poses(T_goal: torch.Tensor) -> torch.Tensor:
    """(B, 4, 4) float64 rigid poses (:func:`ggik.kinematics.geometry.check_pose`: shape, NaN/inf, rigidity)."""
    T = check_pose(torch.as_tensor(T_goal, dtype=torch.float64), "T_goal")
    if T.ndim != 3:
        raise ValueError(f"T_goal must be full poses of shape (B, 4, 4), got {tuple(T.shape)}")
    return T


def _check_count(value: int, name: str) -> int:
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _best_per_goal(robot: Robot, q: torch.Tensor, pos: torch.Tensor, rot: torch.Tensor, iterations: torch.Tensor,
                   cfg: RefineConfig) -> CascadeResult:
    """The first of each goal's candidates q (B, K, dof) in :func:`ggik.ik.solver.sort_best_first`'s order (the
    solver's: successful, then within the limits, then by the scaled errors); ``iterations`` (B,) is passed through."""
    ranked = sort_best_first(q, pos, rot, (pos < cfg.pos_tol) & (rot < cfg.rot_tol), robot.within_limits(q),
                             cfg.pos_tol, cfg.rot_tol)
    return CascadeResult(q=ranked.q[:, 0], pos_err=ranked.pos_err[:, 0], rot_err=ranked.rot_err[:, 0],
                         success=(ranked.success & ranked.within_limits)[:, 0],
                         first_stage=torch.zeros(q.shape[0], dtype=torch.bool), iterations=iterations)


def _refined(robot: Robot, T: torch.Tensor, q0: torch.Tensor, cfg: RefineConfig) -> CascadeResult:
    """LM from starts q0 (B, K, dof) towards T (B, 4, 4); the best solution per goal."""
    q, info = lm_refine(robot, T[:, None], q0, cfg)
    return _best_per_goal(robot, q, info.pos_err, info.rot_err, info.iterations.to(torch.float64).sum(-1), cfg)


def lm_random_starts(robot: Robot, T_goal: torch.Tensor, random_starts: int = 32, cfg: RefineConfig | None = None,
                     generator: torch.Generator | None = None) -> CascadeResult:
    """The baseline: LM from ``random_starts`` uniform random configurations per goal (``robot.sample_q``), T_goal
    (B, 4, 4) in the base-link frame; one batched LM run; the best solution per goal."""
    T = _check_poses(T_goal)
    R = _check_count(random_starts, "random_starts")
    cfg = cfg or RefineConfig()
    return _refined(robot, T, robot.sample_q(T.shape[0] * R, generator).view(T.shape[0], R, robot.dof), cfg)


def lm_cascade(model: GGIKModel, robot: Robot, T_goal: torch.Tensor, num_samples: int = 1, random_starts: int = 32,
               cfg: RefineConfig | None = None, generator: torch.Generator | None = None,
               start_generator: torch.Generator | None = None, graph: RobotGraph | None = None) -> CascadeResult:
    """LM from ``num_samples`` model samples per goal, then LM from ``random_starts`` random starts for the goals still
    unsolved; T_goal (B, 4, 4) full poses in the base-link frame.

    ``generator`` draws the model's sampling noise, ``start_generator`` the random starts of stage 2 (drawn for the
    unsolved goals only, in goal order). ``graph``: the robot's :class:`RobotGraph`, if already built. Returns the
    best solution per goal (:class:`CascadeResult`; ``first_stage`` marks the goals the model's samples solved).
    """
    T = _check_poses(T_goal)
    S = _check_count(num_samples, "num_samples")
    R = _check_count(random_starts, "random_starts")
    cfg = cfg or RefineConfig()
    graph = graph or RobotGraph.from_robot(robot)
    out = _refined(robot, T, sample_joint_angles(model, graph, T, S, generator=generator).q, cfg)
    out.first_stage = out.success.clone()
    todo = (~out.success).nonzero()[:, 0]
    if todo.numel():  # each unsolved goal keeps the better of its two answers, in the same order
        again = lm_random_starts(robot, T[todo], R, cfg, start_generator)
        pair = lambda name: torch.stack([getattr(out, name)[todo], getattr(again, name)], 1)  # noqa: E731
        best = _best_per_goal(robot, pair("q"), pair("pos_err"), pair("rot_err"), out.iterations[todo] + again.iterations, cfg)
        for name in ("q", "pos_err", "rot_err", "success", "iterations"):
            getattr(out, name)[todo] = getattr(best, name)
    return out
