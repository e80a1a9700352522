"""Refining model samples in point-set space (distance geometry) vs in joint space (LM), at measured cost.

For the same goals and the same S samples per goal (the seeding table's streams), one table per run:
raw samples; the distance-geometric projection (:mod:`ggik.ik.dg_refine`) with a few iteration budgets;
that projection followed by LM; LM from the samples; and LM from S random starts (no model). Every row
reports success by the paper's raw criterion (best of S within 1 cm and 1 degree), strict success (best of S
within the LM tolerances and the joint limits), the share of single samples that are strictly valid, the best
position error and the wall time per goal, sampling included, all measured in this process.
"""

from __future__ import annotations

import torch

from ggik import rng
from ggik.evaluation.report import Table
from ggik.evaluation.tables import EvalConfig, evaluation_problems, timed
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.metrics import success_rate
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["refinement_table"]


def refinement_table(
    model: GGIKModel,
    robots: list[Robot],
    cfg: EvalConfig,
    dg_iterations: tuple[int, ...] = (3, 5, 10),
    refine: RefineConfig | None = None,
    progress: bool = True,
) -> Table:
    """The table of the module docstring: ``cfg.problems`` goals per robot, ``cfg.samples`` samples or starts each."""
    from tqdm import tqdm

    refine = refine or RefineConfig()
    if not dg_iterations or min(dg_iterations) < 1:
        raise ValueError(f"dg_iterations must be positive integers, got {dg_iterations}")
    table = Table(
        f"Refining {cfg.samples} samples per goal: distance geometry (DG) vs LM, {cfg.problems} goals per robot",
        [
            "robot",
            "method",
            "success 1cm&1deg [%]",
            f"strict success {refine.pos_tol * 1e3:g}mm&{refine.rot_tol:g}rad [%]",
            "strict single samples [%]",
            "best pos err [mm]",
            "time per goal [ms]",
        ],
    )
    for robot, _, T in tqdm(evaluation_problems(robots, cfg), desc="refinement", disable=not progress):
        _robot_rows(table, model, robot, T, cfg, dg_iterations, refine)
    table.notes += [
        "Same goals (ggik.data.ProblemSet, the evaluation suite's seed) and the same samples for every row of a robot; "
        "random starts are uniform within the limits.",
        "DG: damped Gauss-Newton on the point set's known distances (anchors fixed), then the usual angle recovery; "
        f"LM: batched Levenberg-Marquardt in joint space, at most {refine.max_iters} iterations.",
        "time per goal: wall time of sampling plus refinement, divided by the goals (one process, batched).",
    ]
    return table


def _robot_rows(
    table: Table,
    model: GGIKModel,
    robot: Robot,
    T: torch.Tensor,
    cfg: EvalConfig,
    dg_iterations: tuple[int, ...],
    refine: RefineConfig,
) -> None:
    """The rows of one robot on its goals T (P, 4, 4), added to ``table``."""
    graph = model.graph(robot)
    P = T.shape[0]
    sample_joint_angles(model, graph, T[:1], cfg.samples)  # warm-up: one-off costs
    raw, t_raw, _ = timed(
        lambda: sample_joint_angles(
            model, graph, T, cfg.samples, generator=step_generator(cfg.seed, rng.SEEDING_SAMPLES)
        )
    )

    def add(method: str, q: torch.Tensor, pos: torch.Tensor, rot: torch.Tensor, seconds: float) -> None:
        strict = (pos < refine.pos_tol) & (rot < refine.rot_tol) & robot.within_limits(q)
        table.add(
            robot.name,
            method,
            100 * success_rate(pos, rot),
            100 * strict.any(-1).double().mean().item(),
            100 * strict.double().mean().item(),
            1e3 * pos.min(-1).values.mean().item(),
            1e3 * seconds / P,
        )

    def lm(q0: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        q, info = lm_refine(robot, T[:, None], q0, refine)
        return q, info.pos_err, info.rot_err

    add("raw samples", raw.q, raw.pos_err, raw.rot_err, t_raw)
    longest = None  # (DG result, seconds) of the largest budget: the start of the DG + LM row
    for k in sorted(dg_iterations):
        out, dt, _ = timed(lambda k=k: dg_refine(graph, raw.points, T, DGConfig(iterations=k)))
        add(f"samples + DG {k} it.", out.q, out.pos_err, out.rot_err, t_raw + dt)
        longest = (out, dt)
    (q, pos, rot), dt, _ = timed(lambda: lm(longest[0].q))
    add(f"samples + DG {max(dg_iterations)} it. + LM", q, pos, rot, t_raw + longest[1] + dt)
    (q, pos, rot), dt, _ = timed(lambda: lm(raw.q))
    add("samples + LM", q, pos, rot, t_raw + dt)
    starts = robot.sample_q(P * cfg.samples, step_generator(cfg.seed, rng.SEEDING_STARTS)).view(
        P, cfg.samples, robot.dof
    )
    (q, pos, rot), dt, _ = timed(lambda: lm(starts))
    add("random starts + LM (no model)", q, pos, rot, dt)
