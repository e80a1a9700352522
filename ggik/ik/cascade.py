"""Model first, random restarts where it fails: a two-stage LM solve of full-pose goals for one robot.

Stage 1 runs LM (:func:`ggik.ik.refine.lm_refine`) from S model samples per goal (S small, e.g. 1-4: sampling costs
about 0.4-1 ms per sample and goal on a 2-core CPU, README "Where the model stands"); stage 2 gives only the goals
that stage 1 left without a strict-valid solution (within the tolerances *and* the joint limits) R uniform random
starts and runs LM again. :func:`lm_random_starts` is the baseline it is measured against (R random starts for every
goal, one LM run); ``eval/bench_cascade.py`` times both in one process.

Both return one solution per goal (the best by ``pos / pos_tol + rot / rot_tol`` among the strict-valid ones, or
among all when none is), so that a cascade and the baseline answer the same question: a solution for each goal.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.graph.robot_graph import RobotGraph
from ggik.ik.refine import RefineConfig, RefineInfo, lm_refine
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
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
    T = torch.as_tensor(T_goal)
    if T.ndim != 3 or T.shape[-2:] != (4, 4):
        raise ValueError(f"T_goal must be full poses of shape (B, 4, 4), got {tuple(T.shape)}")
    return T.to(torch.float64)


def _check_count(value: int, name: str) -> int:
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _best_per_goal(robot: Robot, q: torch.Tensor, info: RefineInfo, cfg: RefineConfig) -> CascadeResult:
    """The best of each goal's refined starts q (B, K, dof): strict-valid first, then by the scaled errors."""
    ok = info.converged & robot.within_limits(q)  # (B, K)
    score = info.pos_err / cfg.pos_tol + info.rot_err / cfg.rot_tol + (~ok).to(q.dtype) * 1e12
    k = score.argmin(-1)  # (B,)
    take = lambda t: t.gather(1, k[:, None])[:, 0]  # noqa: E731
    return CascadeResult(q=q.gather(1, k[:, None, None].expand(-1, 1, q.shape[-1]))[:, 0], pos_err=take(info.pos_err),
                         rot_err=take(info.rot_err), success=take(ok), first_stage=torch.zeros_like(k, dtype=torch.bool),
                         iterations=info.iterations.to(torch.float64).sum(-1))


def lm_random_starts(robot: Robot, T_goal: torch.Tensor, random_starts: int = 32, cfg: RefineConfig | None = None,
                     generator: torch.Generator | None = None) -> CascadeResult:
    """The baseline: LM from ``random_starts`` uniform random configurations per goal (``robot.sample_q``), T_goal
    (B, 4, 4) in the base-link frame; one batched LM run; the best solution per goal."""
    T = _check_poses(T_goal)
    R = _check_count(random_starts, "random_starts")
    cfg = cfg or RefineConfig()
    q0 = robot.sample_q(T.shape[0] * R, generator).view(T.shape[0], R, robot.dof)
    q, info = lm_refine(robot, T[:, None], q0, cfg)
    return _best_per_goal(robot, q, info, cfg)


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
    raw = sample_joint_angles(model, graph, T, S, generator=generator)
    q, info = lm_refine(robot, T[:, None], raw.q, cfg)
    out = _best_per_goal(robot, q, info, cfg)
    out.first_stage = out.success.clone()
    todo = (~out.success).nonzero()[:, 0]
    if todo.numel():
        again = lm_random_starts(robot, T[todo], R, cfg, start_generator)
        score = lambda r, i: r.pos_err[i] / cfg.pos_tol + r.rot_err[i] / cfg.rot_tol  # noqa: E731
        better = again.success | (score(again, slice(None)) < score(out, todo))  # solved, or the closer miss
        idx = todo[better]
        for name in ("q", "pos_err", "rot_err", "success"):
            getattr(out, name)[idx] = getattr(again, name)[better]
        out.iterations[todo] += again.iterations
    return out
