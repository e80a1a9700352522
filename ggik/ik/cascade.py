"""Model first, random restarts where it fails, as functions of one robot's full-pose goals with per-goal stage and
iteration counts: :func:`lm_cascade` and its baseline :func:`lm_random_starts` (what the cascade benchmark measures).

Both are the strategies ``"model-first"`` and ``"random"`` of :meth:`ggik.GGIK.solve` (:mod:`ggik.ik.strategies`, the
one implementation) with LM, reduced to one solution per goal: the first in the solver's order (successful, within
the limits, then by ``pos / pos_tol + rot / rot_tol``), so that the cascade and the baseline answer the same question.
Stage 1 runs LM from S model samples per goal (S small, e.g. 1-4); stage 2 gives only the goals that stage 1 left
without a strict-valid solution (within the tolerances *and* the joint limits) R uniform random starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik.graph.robot_graph import RobotGraph
from ggik.ik.refine_config import RefineConfig
from ggik.ik.strategies import (
    ModelDraw,
    Refinement,
    StrategyOutcome,
    model_first_strategy,
    random_strategy,
    starts_then_restarts,
)
from ggik.kinematics import Robot
from ggik.kinematics.geometry import check_pose
from ggik.nn.cvae import GGIKModel

__all__ = ["CascadeResult", "lm_cascade", "lm_random_first", "lm_random_starts"]


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


def _best_per_goal(outcome: StrategyOutcome) -> CascadeResult:
    """The first solution of each goal of a strategy's outcome, success meaning strict-valid."""
    r = outcome.result
    return CascadeResult(
        q=r.q[:, 0],
        pos_err=r.pos_err[:, 0],
        rot_err=r.rot_err[:, 0],
        success=(r.success & r.within_limits)[:, 0],
        first_stage=outcome.first_stage,
        iterations=outcome.iterations,
    )


def lm_random_starts(
    robot: Robot,
    T_goal: torch.Tensor,
    random_starts: int = 32,
    cfg: RefineConfig | None = None,
    generator: torch.Generator | None = None,
) -> CascadeResult:
    """The baseline: LM from ``random_starts`` uniform random configurations per goal (``robot.sample_q``), T_goal
    (B, 4, 4) in the base-link frame; one batched LM run; the best solution per goal."""
    T = _check_poses(T_goal)
    R = _check_count(random_starts, "random_starts")
    return _best_per_goal(random_strategy(robot, T, "pose", R, Refinement("lm", cfg or RefineConfig()), generator))


def lm_cascade(
    model: GGIKModel,
    robot: Robot | RobotGraph,
    T_goal: torch.Tensor,
    num_samples: int = 1,
    random_starts: int = 32,
    cfg: RefineConfig | None = None,
    generator: torch.Generator | None = None,
    start_generator: torch.Generator | None = None,
) -> CascadeResult:
    """LM from ``num_samples`` model samples per goal, then LM from ``random_starts`` random starts for the goals still
    unsolved; T_goal (B, 4, 4) full poses in the base-link frame.

    ``generator`` draws the model's sampling noise, ``start_generator`` the random starts of stage 2 (the starts
    :func:`lm_random_starts` draws from it, of which the unsolved goals' are refined:
    :func:`ggik.ik.strategies.starts_then_restarts`); :meth:`ggik.GGIK.solve`'s "model-first" is this with
    ``start_generator`` a copy of ``generator`` before the noise (:func:`ggik.ik.strategies.restart_generator`).
    ``robot``: the robot, or its :class:`RobotGraph` if already built. Returns the best solution per goal
    (:class:`CascadeResult`; ``first_stage`` marks the goals the model's samples solved).
    """
    T = _check_poses(T_goal)
    S = _check_count(num_samples, "num_samples")
    R = _check_count(random_starts, "random_starts")
    graph = model.check_graph(robot if isinstance(robot, RobotGraph) else model.graph(robot))
    goals = graph.goals(T, "pose")
    refinement = Refinement("lm", cfg or RefineConfig())
    outcome = model_first_strategy(ModelDraw(model, graph, S), goals, R, refinement, generator, start_generator)
    return _best_per_goal(outcome)


def lm_random_first(
    robot: Robot,
    T_goal: torch.Tensor,
    first_starts: int = 1,
    random_starts: int = 32,
    cfg: RefineConfig | None = None,
    generator: torch.Generator | None = None,
) -> CascadeResult:
    """The cascade without a model, the control of :func:`lm_cascade` at equal structure: LM from ``first_starts``
    uniform random starts per goal, then LM from ``random_starts`` random starts for the goals still unsolved (drawn
    from the same ``generator`` after the first stage's, ``random_starts`` for every goal, those of the unsolved goals
    refined: :func:`ggik.ik.strategies.starts_then_restarts`); T_goal (B, 4, 4) full poses in the base-link frame.
    ``first_stage`` marks the goals the first stage solved."""
    T = _check_poses(T_goal)
    S = _check_count(first_starts, "first_starts")
    R = _check_count(random_starts, "random_starts")
    q0 = robot.sample_q(T.shape[0] * S, generator).view(T.shape[0], S, robot.dof)
    refinement = Refinement("lm", cfg or RefineConfig())
    return _best_per_goal(starts_then_restarts(robot, T, "pose", q0, R, refinement, generator))
