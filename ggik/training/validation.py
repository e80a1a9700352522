"""Validation during training: a fixed set of problems (the training robots, and from the validation stream
``val.random_robots`` random robots, ``val.randomized_robots`` link-randomised and ``val.reframed_robots`` reframed
training robots), and per robot and goal kind the posterior loss terms and raw success of the model, with means per
family of robots (:data:`FAMILIES`)."""

from __future__ import annotations

import re

import torch

from ggik.data import ProblemSet, robot_entry
from ggik.errors import GGIKError
from ggik.graph import GraphBatch, RobotGraph
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot, random_robot
from ggik.kinematics.paper_goals import paper_goals
from ggik.kinematics.random_robots import randomize_links
from ggik.kinematics.reframe import random_reframing, reframe
from ggik.kinematics.robot_files import training_robots
from ggik.nn.cvae import GGIKModel
from ggik.rng import VALIDATION_ROBOTS, step_generator
from ggik.training.config import TrainConfig

__all__ = [
    "FAMILIES",
    "ValidationGroup",
    "family",
    "success_summary",
    "validation_problems",
    "validation_problems_file",
    "validation_groups",
    "validate",
]

#: one robot of the validation set: (robot, its graph, q (P, dof) [rad or m], T_goal (P, 4, 4) in its base frame)
ValidationGroup = tuple[Robot, RobotGraph, torch.Tensor, torch.Tensor]


#: the families of validation robots, by the pattern of their names ("named": the training robots)
FAMILIES = {"random": r"val_random\d+", "randomized": r"val_randomized_\d+_.+", "reframed": r"val_reframed_\d+_.+"}


def family(robot_name: str) -> str:
    """The family (a key of :data:`FAMILIES`, or "named") of a validation robot, from its name."""
    found = [f for f, pattern in FAMILIES.items() if re.fullmatch(pattern, robot_name)]
    return found[0] if found else "named"


def validation_problems(cfg: TrainConfig, named: list[Robot] | None = None) -> ProblemSet:
    """The validation problems of a run: ``val.problems_per_robot`` per training robot (``data.robots``), per random
    robot (``val.random_robots``, DOFs from ``data.random_dofs``), per link-randomised training robot
    (``val.randomized_robots``, the training robots in turn) and per reframed training robot (``val.reframed_robots``),
    all drawn from ``val.seed`` (the random robots first: the set of a run made before the other families is
    unchanged). ``named``: the training robots, resolved (default: those of ``data.robots``,
    :func:`ggik.kinematics.robot_files.training_robots`)."""
    v = cfg.val
    counts = {"random_robots": v.random_robots, "randomized_robots": v.randomized_robots}
    counts["reframed_robots"] = v.reframed_robots
    bad = {k: n for k, n in counts.items() if n < 0}
    if bad or not 0.0 <= v.randomize_fraction < 1.0:
        raise GGIKError(
            f"val: robot counts must be >= 0 and randomize_fraction in [0, 1), got {counts}, {v.randomize_fraction}"
        )
    if named is None:
        named = [tr.robot for tr in training_robots(cfg.data.robots)]
    if (v.randomized_robots or v.reframed_robots) and not named:
        raise GGIKError("val.randomized_robots and val.reframed_robots need training robots (data.robots)")
    g = step_generator(v.seed, VALIDATION_ROBOTS)
    dofs = cfg.data.random_dofs or [7]
    robots = named + [random_robot(dofs[i % len(dofs)], g, name=f"val_random{i}") for i in range(v.random_robots)]
    for i in range(v.randomized_robots):
        base = named[i % len(named)]
        robot = randomize_links(base, v.randomize_fraction, g)
        robots.append(Robot(robot.joints, name=f"val_randomized_{i}_{base.name}"))
    for i in range(v.reframed_robots):
        base = named[i % len(named)]
        robots.append(reframe(base, random_reframing(base, g), name=f"val_reframed_{i}_{base.name}"))
    if v.protocol == "ours":
        return ProblemSet.generate(robots, v.problems_per_robot, v.seed)
    if v.protocol != "paper":
        raise GGIKError(f"val.protocol must be 'ours' or 'paper', got {v.protocol!r}")
    groups = paper_goals(robots, v.problems_per_robot, v.seed)
    dof_max = max(r.dof for r in robots)
    q = torch.cat([torch.nn.functional.pad(q, (0, dof_max - r.dof)) for r, q, _ in groups])
    index = torch.arange(len(robots)).repeat_interleave(v.problems_per_robot)
    return ProblemSet([robot_entry(r) for r in robots], index, q, torch.cat([T for _, _, T in groups]), v.seed)


def validation_problems_file(cfg: TrainConfig) -> str:
    """The file name of a run's validation problems (:func:`validation_problems`) in its folder, one per protocol:
    a run that changes ``val.protocol`` keeps both sets and validates on the one its config names."""
    return "val_problems.pt" if cfg.val.protocol == "ours" else f"val_problems_{cfg.val.protocol}.pt"


def validation_groups(problems: ProblemSet, convention: str = "frames") -> list[ValidationGroup]:
    """The problems per robot, with each robot's graph (in ``convention``, the model's) built once."""
    return [(r, RobotGraph.from_robot(r, convention), q, T) for r, q, T in problems.groups()]


@torch.no_grad()
def validate(model: GGIKModel, groups: list[ValidationGroup], cfg: TrainConfig, device: torch.device) -> dict:
    """Per robot and goal kind of ``val.goal_kinds``: posterior loss terms and raw success (best of ``val.samples``
    within 1 cm and 1 degree, the rotation the kind fixes). Keys ``val/<robot>/<metric>`` for poses,
    ``val/<robot>/<kind>/...`` for the other kinds (robots whose EE is off the last axis are left out of those),
    the means over robots ``val/[<kind>/]success_mean`` and ``pos_err_best_mean_m``, and the same means per family of
    robots (:func:`family`) ``val/family/<family>/[<kind>/]success_mean`` and ``.../pos_err_best_mean_m``. Robots with
    skew links (mirror images, :attr:`ggik.graph.RobotGraph.skew_links`) also get ``val/<robot>/[<kind>/]right_handed``,
    the share of raw samples (point sets) with the arm's handedness, and their mean ``val/[<kind>/]right_handed_mean``:
    a model learning handedness shows it there long before its raw success moves; ``val/protocol``, how the goals were
    drawn (``val.protocol``). Leaves
    ``model`` in eval mode; the forward pass runs under bfloat16 autocast when ``cfg.bf16``."""
    model.eval()
    record: dict = {"val/protocol": cfg.val.protocol}  # how the goals were drawn (ValConfig.protocol)
    for kind in cfg.val.goal_kinds:
        key = "" if kind == "pose" else f"{kind}/"
        successes, best_errors, families, right_handed = [], [], [], []
        for robot, graph, q, T_goal in groups:
            if kind != "pose" and not graph.supports_partial_goals:
                continue
            batch = GraphBatch.from_graph(graph, q=q, kind=kind).to(device, torch.float32)
            with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cfg.bf16):
                out = model(batch)
            g = torch.Generator(device=device).manual_seed(cfg.val.seed)
            raw = sample_joint_angles(model, graph, graph.goals(T_goal, kind), cfg.val.samples, generator=g)
            succ = success_rate(raw.pos_err, raw.rot_err)
            successes.append(succ)
            families.append(family(robot.name))
            best = raw.pos_err.min(-1).values
            best_errors.append(best.mean().item())
            record.update(
                {
                    f"val/{robot.name}/{key}free_se": out["free_se"].float().mean().item(),
                    f"val/{robot.name}/{key}kl": out["kl"].float().mean().item(),
                    f"val/{robot.name}/{key}success": succ,
                    f"val/{robot.name}/{key}pos_err_mean_m": raw.pos_err.mean().item(),
                    f"val/{robot.name}/{key}pos_err_best_m": best.mean().item(),
                }
            )
            if bool(graph.skew_links.any()):  # an arm with mirror images: the share of samples that are the arm
                right_handed.append(graph.handedness(raw.points).float().mean().item())
                record[f"val/{robot.name}/{key}right_handed"] = right_handed[-1]
        if successes:
            record[f"val/{key}success_mean"] = sum(successes) / len(successes)
            record[f"val/{key}pos_err_best_mean_m"] = sum(best_errors) / len(best_errors)
        if right_handed:
            record[f"val/{key}right_handed_mean"] = sum(right_handed) / len(right_handed)
        for fam in sorted(set(families)):
            mine = [i for i, f in enumerate(families) if f == fam]
            record[f"val/family/{fam}/{key}success_mean"] = sum(successes[i] for i in mine) / len(mine)
            record[f"val/family/{fam}/{key}pos_err_best_mean_m"] = sum(best_errors[i] for i in mine) / len(mine)
    return record


def success_summary(record: dict) -> str:
    """The raw success means of a :func:`validate` record in one line: "pose 0.733, position 0.567, family/random
    0.012, ..." (the family of the training robots alone, the mean over all robots, is not repeated)."""
    one_family = not any(k.startswith("val/family/") and "/named/" not in k for k in record)
    parts = []
    for key, value in record.items():
        if key.endswith("success_mean") and not (one_family and key.startswith("val/family/")):
            name = key.removeprefix("val/").removesuffix("success_mean").rstrip("/") or "pose"
            parts.append(f"{name} {value:.3f}")
    return ", ".join(parts)
