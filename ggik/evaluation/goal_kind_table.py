"""Raw and refined IK per goal kind (``ggik eval goals``): pose, position + tool axis and position, side by side.

Per robot, ``problems`` seeded goals reachable by construction (q uniform within the limits, goal = FK(q): the
evaluation suite's goals, :func:`ggik.evaluation.tables.evaluation_problems`), each expressed as a goal of every
kind asked for (:meth:`ggik.graph.RobotGraph.goals`: the pose; its position and tool axis; its position). Per
(robot, kind), all in one process:

* **raw** (the model alone, no joint-space solver): S samples per goal, joint angles recovered from the point sets
  as the solver does (:func:`ggik.ik.sampling.sample_joint_angles`), errors by
  :func:`ggik.graph.goal_kinds.goal_errors` (the rotation error the kind fixes: the full rotation for a pose, the
  angle between the tool axes for position + axis, none for a position). Success = the best of the S within
  1 cm & 1 deg, 2 cm & 2 deg, 5 cm & 5 deg (the angle only where the kind fixes one); best-of-S and
  mean-over-samples errors; sampling time per goal (angle recovery included).
* **IKNet protocol** (position goals only): ``iknet_samples`` samples per target; the mean distance [cm] of the
  samples' EE positions to the target and the share [%] of samples within 10, 2 and 1 cm.
* **refined**: LM (:func:`ggik.ik.refine.lm_refine` with the goal's kind) from the S samples vs from S uniform
  random starts within the limits, same goals: strict success (some start converged within 1 mm, and 0.01 rad
  where the kind fixes an angle, inside the joint limits), time per goal (the sampling included for the model's
  starts), mean LM iterations over all starts.
* **diversity** of the solutions that reach the goal (strict ones after LM, and the raw samples within 1 cm and
  1 deg, the raw success criterion of the kind): distinct solutions per goal (:func:`ggik.ik.metrics.count_distinct`)
  and the mean per-joint standard deviation (:func:`joint_spread`). For partial kinds the last joint is left
  out: it turns the EE about the tool axis, which moves neither the EE origin nor the axis, so its value is
  arbitrary (0 in the raw samples, wherever a random start put it after LM) and would make every random start
  look distinct.

Streams: every kind of a robot uses the same goals, the seeding table's model-sample stream (``rng.SEEDING_SAMPLES``)
and its random starts (``rng.SEEDING_STARTS``), so the pose rows repeat ``ggik eval seeding``'s LM rows for the
same seed, goals and S; the IKNet samples come from ``rng.GOAL_KINDS_IKNET``.

A (robot, kind) the graph cannot pose (a robot whose EE origin lies off the last joint axis refuses partial
kinds; a chain with unlocked prismatic joints refuses every kind, both with :class:`ggik.errors.GraphError`) gives
a row with ``status`` "skipped: <reason>" and NaN metrics instead of stopping the run.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import torch

from ggik import rng
from ggik.errors import GraphError
from ggik.evaluation.tables import EvalConfig, evaluation_problems, timed
from ggik.graph import Goals, RobotGraph
from ggik.graph.goal_kinds import GOAL_KINDS, check_goal_kind
from ggik.ik.metrics import count_distinct, success_rate
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["COLUMNS", "RAW_TOLERANCES", "IKNET_RADII_CM", "goal_kind_rows", "joint_spread"]

RAW_TOLERANCES = (1, 2, 5)  #: raw success criteria: best of S within k cm and k deg
IKNET_RADII_CM = (10, 2, 1)  #: the IKNet protocol's shares of samples within these distances [cm]
NAN = float("nan")
IKNET_CHUNK = 64  #: goals per sampling call of the IKNet columns (bounds the point sets held at once)
STARTS = ("samples", "random")  #: LM starts: the model's samples, S uniform random configurations

#: the keys of every row, in order (also the CSV's columns)
COLUMNS: list[str] = (
    ["robot", "dof", "kind", "status", "goals", "samples"]
    + [f"raw success {k}cm&{k}deg [%]" for k in RAW_TOLERANCES]
    + ["raw best pos [mm]", "raw mean pos [mm]", "raw best rot [deg]", "raw mean rot [deg]", "sampling [ms/goal]"]
    + ["iknet samples", "iknet mean dist [cm]"]
    + [f"iknet within {r}cm [%]" for r in IKNET_RADII_CM]
    + [c for s in STARTS for c in (f"LM from {s} success [%]", f"LM from {s} [ms/goal]", f"LM from {s} iterations")]
    + [
        c
        for s in ("raw 1cm&1deg", "LM from samples", "LM from random")
        for c in (f"distinct {s}", f"joint std {s} [rad]")
    ]
)


def joint_spread(q: torch.Tensor, keep: torch.Tensor, unbounded: torch.Tensor) -> torch.Tensor:
    """(P,) float64: the mean over joints of the standard deviation [rad] of the kept rows of ``q`` (P, S, dof), per
    goal; NaN for a goal with fewer than 2 kept rows. Unbounded joints are first moved by multiples of 2 pi next to
    the goal's first kept value, so wraps do not count as spread."""
    w = keep.to(torch.float64)[..., None]
    first = keep.to(torch.float64).argmax(-1)  # the first kept row (0 when none is: then masked out anyway)
    ref = q.gather(1, first[:, None, None].expand(-1, 1, q.shape[-1]))
    d = q - ref
    x = torch.where(unbounded, ref + torch.atan2(torch.sin(d), torch.cos(d)), q)
    n = w.sum(1)
    mean = (x * w).sum(1) / n.clamp(min=1)
    var = (((x - mean[:, None]) ** 2) * w).sum(1) / n.clamp(min=1)
    return torch.where(n[:, 0] >= 2, var.sqrt().mean(-1), torch.full_like(n[:, 0], NAN))


def _diversity(q: torch.Tensor, keep: torch.Tensor, robot: Robot, kind: str) -> tuple[float, float]:
    """(mean distinct solutions per goal, mean joint std over the goals with >= 2 solutions) of ``q`` (P, S, dof)."""
    joints = robot.dof if kind == "pose" else robot.dof - 1  # partial kinds: the free roll is no solution feature
    q, unbounded = q[..., :joints], ~robot.limited[:joints]
    spread = joint_spread(q, keep, unbounded)
    mean_spread = torch.nanmean(spread).item() if bool(torch.isfinite(spread).any()) else NAN
    return count_distinct(q, keep, unbounded).mean().item(), mean_spread


def _empty_row(robot: Robot, kind: str, status: str, problems: int, samples: int) -> dict:
    row: dict[str, object] = dict.fromkeys(COLUMNS, NAN)
    row.update(robot=robot.name, dof=robot.dof, kind=kind, status=status, goals=problems, samples=samples)
    return row


def _raw_columns(row: dict, pos: torch.Tensor, rot: torch.Tensor, fixes_rotation: bool) -> None:
    """The raw columns of errors (P, S) [m], [rad]; rotation criteria and columns only where the kind fixes one."""
    if not fixes_rotation:
        rot = torch.zeros_like(pos)
    for k in RAW_TOLERANCES:
        row[f"raw success {k}cm&{k}deg [%]"] = 100 * success_rate(pos, rot, pos_tol=k / 100, rot_tol_deg=k)
    row["raw best pos [mm]"] = 1e3 * pos.min(-1).values.mean().item()
    row["raw mean pos [mm]"] = 1e3 * pos.mean().item()
    if fixes_rotation:
        row["raw best rot [deg]"] = math.degrees(rot.min(-1).values.mean().item())
        row["raw mean rot [deg]"] = math.degrees(rot.mean().item())


def _iknet_columns(row: dict, model: GGIKModel, graph: RobotGraph, goals: Goals, count: int, seed: int) -> None:
    """The IKNet protocol: ``count`` samples per target, distances of their EE positions to it."""
    g = step_generator(seed, rng.GOAL_KINDS_IKNET)
    pos = torch.cat(
        [
            sample_joint_angles(model, graph, goals[a : a + IKNET_CHUNK], count, generator=g).pos_err
            for a in range(0, goals.shape[0], IKNET_CHUNK)
        ]
    )
    row["iknet samples"] = count
    row["iknet mean dist [cm]"] = 100 * pos.mean().item()
    for r in IKNET_RADII_CM:
        row[f"iknet within {r}cm [%]"] = 100 * (pos < r / 100).double().mean().item()


def _measure(
    model: GGIKModel,
    graph: RobotGraph,
    goals: Goals,
    row: dict,
    samples: int,
    seed: int,
    iknet_samples: int,
    refine: RefineConfig,
) -> None:
    """Fill ``row`` with every measured column of one robot and goal kind (goals (P,) of that kind)."""
    robot, kind, P = graph.robot, goals.kind, goals.shape[0]
    fixes_rotation = kind != "position"
    sample_joint_angles(model, graph, goals[:1], samples)  # warm-up: the first call pays one-off costs
    raw, t_sample, _ = timed(
        lambda: sample_joint_angles(model, graph, goals, samples, generator=step_generator(seed, rng.SEEDING_SAMPLES))
    )
    _raw_columns(row, raw.pos_err, raw.rot_err, fixes_rotation)
    row["sampling [ms/goal]"] = 1e3 * t_sample / P
    reached = (raw.pos_err < 0.01) & ((raw.rot_err < math.radians(1.0)) | (not fixes_rotation))
    row["distinct raw 1cm&1deg"], row["joint std raw 1cm&1deg [rad]"] = _diversity(raw.q, reached, robot, kind)
    if kind == "position":
        _iknet_columns(row, model, graph, goals, iknet_samples, seed)
    random_starts = robot.sample_q(P * samples, step_generator(seed, rng.SEEDING_STARTS)).view(P, samples, robot.dof)
    for name, q0, extra_s in (("samples", raw.q, t_sample), ("random", random_starts, 0.0)):
        (q, info), dt, _ = timed(functools.partial(lm_refine, robot, goals[:, None], q0, refine))
        strict = info.converged & robot.within_limits(q)
        row[f"LM from {name} success [%]"] = 100 * strict.any(-1).double().mean().item()
        row[f"LM from {name} [ms/goal]"] = 1e3 * (dt + extra_s) / P
        row[f"LM from {name} iterations"] = info.iterations.double().mean().item()
        row[f"distinct LM from {name}"], row[f"joint std LM from {name} [rad]"] = _diversity(q, strict, robot, kind)


def goal_kind_rows(
    model: GGIKModel,
    robots: Sequence[Robot],
    kinds: Sequence[str] = GOAL_KINDS,
    cfg: EvalConfig | None = None,
    iknet_samples: int = 100,
    refine: RefineConfig | None = None,
    progress: bool = True,
) -> list[dict]:
    """The measurements of the module docstring: one row (a dict keyed by :data:`COLUMNS`) per (robot, kind), robots
    in order, kinds in the order given.

    ``cfg``: ``problems`` goals per robot, ``samples`` (S) model samples and random LM starts per goal, the ``seed``
    (default ``EvalConfig(problems=200)``); ``iknet_samples``
    samples per target for the IKNet columns (position goals only; NaN in the other rows), ``refine`` the LM
    budget and strict tolerances (default :class:`RefineConfig`: 1 mm, 0.01 rad, 30 iterations). Metrics that do not
    apply to a row are NaN. A tqdm progress bar over the (robot, kind) pairs unless ``progress`` is false.
    Raises :class:`ggik.errors.GoalError` for an unknown kind and ``ValueError`` for counts below 1, before any work.
    """
    from tqdm import tqdm

    cfg = EvalConfig(problems=200) if cfg is None else cfg
    problems, samples, seed = cfg.problems, cfg.samples, cfg.seed
    kinds = [check_goal_kind(k) for k in kinds]
    if not kinds or not robots:
        raise ValueError("goal_kind_rows needs at least one robot and one goal kind")
    if len(set(kinds)) != len(kinds):
        raise ValueError(f"goal kinds given twice: {kinds}")
    for name, value in (("problems", problems), ("samples", samples), ("iknet_samples", iknet_samples)):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    refine = refine or RefineConfig()
    rows = []
    groups = evaluation_problems(list(robots), cfg)
    with tqdm(total=len(groups) * len(kinds), desc="goal kinds", disable=not progress) as bar:
        for robot, _, T in groups:
            graph: RobotGraph | None = None
            refused = ""  # why the robot has no graph
            try:
                graph = model.graph(robot)
            except GraphError as exc:
                refused = str(exc)
            for kind in kinds:
                bar.set_postfix_str(f"{robot.name} {kind}")
                try:
                    if graph is None:
                        raise GraphError(refused)
                    goals = graph.goals(T, kind).to(torch.float64, "cpu")
                except GraphError as exc:  # e.g. a partial kind on a robot whose EE is off the last joint axis
                    rows.append(_empty_row(robot, kind, "skipped: " + str(exc).replace("|", "/"), problems, samples))
                    bar.update()
                    continue
                row = _empty_row(robot, kind, "ok", problems, samples)
                _measure(model, graph, goals, row, samples, seed, iknet_samples, refine)
                rows.append(row)
                bar.update()
    return rows
