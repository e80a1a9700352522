"""The evaluation suite of the GGIK paper, extended: accuracy (Table 1), seeding local solvers (Table 2) and
joint limits, each measured with its baselines in the same process (generalisation to robots outside a
checkpoint's training set: :mod:`ggik.evaluation.generalisation`).

All problems are seeded goals reachable by construction, goal = FK(q), under one of two protocols
(:data:`GOAL_PROTOCOLS`): ours, q uniform within the limits; or the GGIK paper's, q uniform in [-pi, pi] on every joint
but the last, which is 0, limits ignored (:func:`paper_goal_q`; its table beside the paper's Table 1:
:mod:`ggik.evaluation.paper_protocol`). Errors are computed by FK of the recovered joint angles in float64:
position [m, reported in mm], rotation angle [rad, reported in degrees]. Unlike the reference experiments, no rows
are dropped (the reference removed everything above the pooled 99th percentile) and success means 1 cm AND 1 degree.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import torch

from ggik import rng
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.graph import RobotGraph
from ggik.ik.metrics import success_rate
from ggik.ik.refine import RefineInfo, lm_refine, slsqp_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import RawSamples, sample_joint_angles
from ggik.kinematics import Robot
from ggik.kinematics.paper_goals import paper_goal_q, paper_goals
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = [
    "GOAL_PROTOCOLS",
    "EvalConfig",
    "paper_goal_q",
    "angle_mmd",
    "reference_solutions",
    "accuracy_table",
    "seeding_table",
    "limits_table",
    "raw_stats",
    "refined_stats",
    "evaluation_problems",
    "timed",
]

Result = TypeVar("Result")

#: how the evaluation goals are drawn (goal = FK(q)): protocol name -> its q
GOAL_PROTOCOLS = {
    "ours": "q uniform within the joint limits",
    "paper": "the GGIK paper's: q uniform in [-pi, pi] on every joint but the last, which is 0; limits ignored",
}


def timed(fn: Callable[[], Result]) -> tuple[Result, float, float]:
    """(result, wall seconds, CPU seconds of the whole process, all threads) of one call of ``fn``."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


@dataclass
class EvalConfig:
    problems: int = 2000  #: goals per robot
    samples: int = 32  #: S, samples (or random starts) per goal
    seed: int = 0
    mmd_problems: int = 200  #: goals per robot used for the diversity score (it needs a reference set)
    mmd_bandwidth: float = 1.0  #: h of the kernel exp(-|f(a) - f(b)|^2 / (2 h^2)), f(q) = (cos q, sin q)
    slsqp_problems: int = 50  #: SLSQP is slow (scipy, one goal at a time): it sees the first N goals
    #: random starts per goal in the seeding table (None: ``samples``, the paper's protocol); more than ``samples``
    #: compares a few model seeds with many random starts in one run (e.g. 4 samples against 32 random starts)
    random_starts: int | None = None
    #: how the goals are drawn, a key of :data:`GOAL_PROTOCOLS` (:func:`evaluation_problems`)
    protocol: str = "ours"

    def __post_init__(self) -> None:
        if self.protocol not in GOAL_PROTOCOLS:
            raise GGIKError(
                f"unknown goal protocol {self.protocol!r}: expected one of {', '.join(map(repr, GOAL_PROTOCOLS))}"
            )

    @property
    def starts(self) -> int:
        """Random starts per goal of the seeding table."""
        return self.samples if self.random_starts is None else self.random_starts


def _features(q: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.cos(q), torch.sin(q)], -1)


def angle_mmd(
    a: torch.Tensor, b: torch.Tensor, valid_b: torch.Tensor | None = None, bandwidth: float = 1.0
) -> torch.Tensor:
    """Squared maximum mean discrepancy between joint-angle sets, per problem (biased V-statistic).

    Args:
        a: (P, S, dof) samples; b: (P, R, dof) reference solutions; valid_b: (P, R) bool mask of b.
        bandwidth: h of the Gaussian kernel on the embedding f(q) = (cos q, sin q), which treats angles
            that differ by 2 pi as equal.
    Returns:
        (P,) MMD^2 >= 0 (NaN where fewer than 2 valid reference solutions exist).
    """
    fa, fb = _features(a), _features(b)
    wb = torch.ones(b.shape[:2], dtype=a.dtype) if valid_b is None else valid_b.to(a.dtype)
    wa = torch.ones(a.shape[:2], dtype=a.dtype)

    def k(x, y):
        return torch.exp(-(torch.cdist(x, y) ** 2) / (2 * bandwidth**2))

    def mean_k(x, y, wx, wy):
        w = wx[:, :, None] * wy[:, None, :]
        return (k(x, y) * w).sum((-1, -2)) / w.sum((-1, -2)).clamp(min=1e-12)

    mmd = mean_k(fa, fa, wa, wa) + mean_k(fb, fb, wb, wb) - 2 * mean_k(fa, fb, wa, wb)
    return torch.where(wb.sum(-1) >= 2, mmd.clamp(min=0.0), torch.full_like(mmd, float("nan")))


def reference_solutions(
    robot: Robot, T_goal: torch.Tensor, count: int, generator: torch.Generator, cfg: RefineConfig | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Many distinct exact solutions per goal: LM from ``count`` random starts. Returns q (P, R, dof) and converged
    (P, R)."""
    q0 = robot.sample_q(T_goal.shape[0] * count, generator).view(T_goal.shape[0], count, robot.dof)
    q, info = lm_refine(robot, T_goal[:, None], q0, cfg or RefineConfig(max_iters=100))
    return q, info.converged


def _quantile_stats(err: torch.Tensor) -> list[float]:
    """Per-problem mean/min/max/Q1/Q3 over samples (err (P, S)), averaged over problems."""
    q1, q3 = torch.quantile(err, torch.tensor([0.25, 0.75], dtype=err.dtype), dim=-1)
    return [
        err.mean(-1).mean().item(),
        err.min(-1).values.mean().item(),
        err.max(-1).values.mean().item(),
        q1.mean().item(),
        q3.mean().item(),
    ]


def timed_raw_samples(
    model: GGIKModel, robot: Robot, T: torch.Tensor, cfg: EvalConfig
) -> tuple[RobotGraph, RawSamples, float]:
    """The raw samples of the accuracy tables for goals ``T`` (B, 4, 4) of ``robot``: ``cfg.samples`` per goal from the
    accuracy stream of ``cfg.seed``, after a warm-up call that pays the one-off costs. Returns (the model's graph of the
    robot, :class:`RawSamples`, the sampling time [s])."""
    graph = model.graph(robot)
    sample_joint_angles(model, graph, T[:1], cfg.samples)  # warm-up: the first call pays one-off costs
    t0 = time.perf_counter()
    raw = sample_joint_angles(model, graph, T, cfg.samples, generator=step_generator(cfg.seed, rng.ACCURACY_SAMPLES))
    return graph, raw, time.perf_counter() - t0


def raw_stats(raw: RawSamples) -> tuple[list[float], list[float], float]:
    """The accuracy table's metrics of raw samples: (position stats [mm], rotation stats [deg], success [%]).

    Stats as :func:`_quantile_stats` (mean, min = best of S, max, Q1, Q3); success: the best of the S
    samples within 1 cm and 1 degree (:func:`ggik.ik.metrics.success_rate` defaults).
    """
    pos = _quantile_stats(1e3 * raw.pos_err)
    rot = _quantile_stats(torch.rad2deg(raw.rot_err))
    return pos, rot, 100 * success_rate(raw.pos_err, raw.rot_err)


def refined_stats(
    robot: Robot, q: torch.Tensor, info: RefineInfo, refine: RefineConfig
) -> tuple[float, float, float, float]:
    """The seeding table's metrics of refined starts (P, S): (success [%], mean iterations, best pos err [mm],
    best rot err [deg]). Success: some start converged (``refine`` tolerances) within the joint limits."""
    ok = info.converged & robot.within_limits(q)
    best = (info.pos_err / refine.pos_tol + info.rot_err / refine.rot_tol).argmin(-1)
    bp = info.pos_err.gather(-1, best[:, None])[:, 0]
    br = info.rot_err.gather(-1, best[:, None])[:, 0]
    return (
        100 * ok.any(-1).double().mean().item(),
        info.iterations.double().mean().item(),
        1e3 * bp.mean().item(),
        math.degrees(br.mean().item()),
    )


def evaluation_problems(robots: list[Robot], cfg: EvalConfig) -> list[tuple[Robot, torch.Tensor, torch.Tensor]]:
    """The seeded goals of every table: ``cfg.problems`` per robot, (robot, q (P, dof), T_goal (P, 4, 4)) per robot.
    ``cfg.protocol`` "ours": the groups of a :class:`ProblemSet` (q within the limits); "paper": :func:`paper_goal_q`,
    each arm from its own stream, keyed by its name (:func:`ggik.rng.name_key`): an arm's goals are the same alone as
    in any list of arms."""
    if cfg.protocol == "ours":
        return ProblemSet.generate(robots, cfg.problems, cfg.seed).groups()
    return paper_goals(robots, cfg.problems, cfg.seed)


def accuracy_table(
    model: GGIKModel, robots: list[Robot], cfg: EvalConfig, progress: bool = True, figures_dir: str | Path | None = None
) -> Table:
    """Paper Table 1, per robot: error statistics of raw samples, success, samples within limits, MMD diversity.

    With ``figures_dir``, also writes per robot ``accuracy_<robot>_errors.png`` (histograms of all samples'
    errors) and ``accuracy_<robot>_solutions.png`` (stick figures of the S samples of the first goal, the
    paper's Fig. 3).
    """
    from tqdm import tqdm

    table = Table(
        f"Accuracy of raw GGIK samples ({cfg.problems} goals per robot, {cfg.samples} samples each"
        + (", the GGIK paper's goals)" if cfg.protocol == "paper" else ")"),
        [
            "robot",
            "dof",
            "pos mean [mm]",
            "pos min [mm]",
            "pos max [mm]",
            "pos Q1 [mm]",
            "pos Q3 [mm]",
            "rot mean [deg]",
            "rot min [deg]",
            "rot max [deg]",
            "rot Q1 [deg]",
            "rot Q3 [deg]",
            "success 1cm&1deg [%]",
            "samples within limits [%]",
            "MMD^2",
            "sampling time per goal [ms]",
        ],
    )
    for robot, _, T in tqdm(evaluation_problems(robots, cfg), desc="accuracy", disable=not progress):
        graph, raw, dt = timed_raw_samples(model, robot, T, cfg)
        within = robot.within_limits(raw.q)
        m = min(cfg.mmd_problems, T.shape[0])
        ref_q, ref_ok = reference_solutions(robot, T[:m], cfg.samples, step_generator(cfg.seed, rng.ACCURACY_REFERENCE))
        mmd = angle_mmd(raw.q[:m], ref_q, ref_ok, cfg.mmd_bandwidth)
        pos, rot, success = raw_stats(raw)
        table.add(
            robot.name,
            robot.dof,
            *pos,
            *rot,
            success,
            100 * within.double().mean().item(),
            torch.nanmean(mmd).item(),
            1e3 * dt / T.shape[0],
        )
        if figures_dir is not None:
            from ggik.evaluation.plots import plot_error_histograms, plot_solutions

            out = Path(figures_dir)
            plot_error_histograms(
                raw.pos_err.flatten(),
                raw.rot_err.flatten(),
                out / f"accuracy_{robot.name}_errors.png",
                title=f"{robot.name}: raw GGIK samples ({T.shape[0]} goals x {cfg.samples})",
            )
            plot_solutions(
                robot,
                raw.q[0],
                T[0],
                out / f"accuracy_{robot.name}_solutions.png",
                title=f"{robot.name}: {cfg.samples} raw samples for one goal",
            )
    table.notes += [
        f"Goals: FK(q), {GOAL_PROTOCOLS[cfg.protocol]}.",
        "Per goal: mean/min/max/Q1/Q3 over its samples, then averaged over goals; nothing is dropped.",
        "success: the best of the samples within 1 cm and 1 degree. within limits: every joint inside its limits.",
        f"MMD^2: samples vs exact solutions of the same goal (LM from {cfg.samples} random starts, converged ones), "
        f"Gaussian kernel on (cos q, sin q) with bandwidth {cfg.mmd_bandwidth}, first {cfg.mmd_problems} goals; lower "
        "= "
        "closer to the spread of true solutions.",
    ]
    if cfg.protocol == "paper":
        table.notes.append(
            "The paper's goals ignore the limits, but LM keeps its reference solutions within them: MMD^2 is over "
            "the goals with two or more such solutions (n/a with none), and raw success is judged without limits."
        )
    return table


def seeding_table(
    model: GGIKModel, robots: list[Robot], cfg: EvalConfig, refine: RefineConfig | None = None, progress: bool = True
) -> Table:
    """Paper Table 2: LM and SLSQP from R random starts vs from S GGIK samples (strict 1 mm / 0.01 rad); R = S unless
    ``cfg.random_starts`` says otherwise (column "starts per goal")."""
    from tqdm import tqdm

    refine = refine or RefineConfig()
    if cfg.protocol != "ours":
        raise GGIKError(
            f"the seeding table judges success within the joint limits: it takes the goals of protocol 'ours', not "
            f"{cfg.protocol!r} (whose goals may lie outside the limits)"
        )
    if cfg.samples < 1 or cfg.starts < 1:
        raise ValueError(
            f"seeding needs at least one sample and one random start per goal, got {cfg.samples} and {cfg.starts}"
        )
    per_goal = (
        f"{cfg.samples} starts per goal"
        if cfg.starts == cfg.samples
        else f"{cfg.samples} GGIK samples vs {cfg.starts} random starts per goal"
    )
    table = Table(
        f"Seeding local solvers: {per_goal}, strict success = {refine.pos_tol * 1e3:g} mm and "
        f"{refine.rot_tol:g} rad within limits",
        [
            "robot",
            "solver",
            "starts",
            "goals",
            "success [%]",
            "mean iterations",
            "time per goal [ms]",
            "of which sampling [ms]",
            "best pos err [mm]",
            "best rot err [deg]",
            "starts per goal",
        ],
    )
    for robot, _, T in tqdm(evaluation_problems(robots, cfg), desc="seeding", disable=not progress):
        graph = model.graph(robot)
        sample_joint_angles(model, graph, T[:1], cfg.samples)  # warm-up
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, graph, T, cfg.samples, generator=step_generator(cfg.seed, rng.SEEDING_SAMPLES))
        t_sample = (time.perf_counter() - t0) / T.shape[0]
        rand = robot.sample_q(T.shape[0] * cfg.starts, step_generator(cfg.seed, rng.SEEDING_STARTS)).view(
            T.shape[0], cfg.starts, robot.dof
        )
        for solver_name, fn, n in (
            ("LM", lm_refine, T.shape[0]),
            ("SLSQP", slsqp_refine, min(cfg.slsqp_problems, T.shape[0])),
        ):
            fn(robot, T[:1, None], rand[:1], refine)  # warm-up: the first call of a solver in a process loads it
            for start_name, q0, extra in (("random", rand, 0.0), ("GGIK", raw.q, t_sample)):
                t0 = time.perf_counter()
                q, info = fn(robot, T[:n, None], q0[:n], refine)
                dt = (time.perf_counter() - t0) / n
                success, iters, bp, br = refined_stats(robot, q, info, refine)
                table.add(
                    robot.name,
                    solver_name,
                    start_name,
                    n,
                    success,
                    iters,
                    1e3 * (dt + extra),
                    1e3 * extra,
                    bp,
                    br,
                    q0.shape[1],
                )
    table.notes += [
        f"LM: batched damped least squares in torch (all goals x starts at once), at most {refine.max_iters} "
        "iterations; "
        f"SLSQP: scipy, at most {refine.slsqp_max_iters} iterations, ftol {refine.slsqp_ftol:g}, first "
        f"{cfg.slsqp_problems} goals.",
        "time per goal: wall time of the solver call divided by the goals, plus (GGIK rows) the time to sample the "
        "seeds.",
        "mean iterations: over all starts (an element stops at convergence).",
    ]
    return table


def limits_table(model: GGIKModel, robots: list[Robot], cfg: EvalConfig, progress: bool = True) -> Table:
    """Fraction of raw samples within the limits, per joint and per robot."""
    from tqdm import tqdm

    width = max(r.dof for r in robots)
    table = Table(
        f"Raw samples within joint limits ({cfg.problems} goals x {cfg.samples} samples per robot) [%]",
        ["robot", "all joints"] + [f"joint {i + 1}" for i in range(width)],
    )
    for robot, _, T in tqdm(evaluation_problems(robots, cfg), desc="limits", disable=not progress):
        raw = sample_joint_angles(
            model, model.graph(robot), T, cfg.samples, generator=step_generator(cfg.seed, rng.LIMITS_SAMPLES)
        )
        per_joint = robot.joints_within_limits(raw.q).double().mean((0, 1))
        cells = [100 * v for v in per_joint.tolist()] + ["" for _ in range(width - robot.dof)]
        table.add(robot.name, 100 * robot.within_limits(raw.q).double().mean().item(), *cells)
    table.notes.append(
        "Continuous joints count as within limits. Angles are moved into the limits by 2 pi where possible."
    )
    return table
