"""The conventions table (``ggik eval conventions``): one model's raw success on the same arms written as other files
would write them, on graphs of each convention.

Another URDF file of an arm may put its joint frames elsewhere along their axes, turn their zero angles and frames,
mount the base elsewhere and end at another tool (:mod:`ggik.kinematics.reframe`). Per robot, every file variant of
:data:`VARIANTS` (built from the robot and seeded transforms, so no other arm's file is needed) is asked the same arm
poses (goal = the variant's FK of the same configurations, :meth:`Reframing.pose_new`), and the model samples on the
graphs of each convention: ``"frames"`` (the file's own joint frames; the models v1-v9) and ``"canonical"`` (the joint
axes alone, :mod:`ggik.graph.conventions`). The model's weights are the same in both; on a convention it was not
trained on it reads another problem than the one it learned (so its level there says how much training that
convention needs), but the canonical graph is the same for every file of an arm by construction (a continuous joint 1
excepted): its samples are the same point sets, and success differs only where a longer tool turns an orientation
error into a larger position error. Pose goals; raw
samples only (no joint-space solver): success = the best of S within 1 cm and 1 degree, as the accuracy table.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import torch
from tqdm import tqdm

from ggik import rng
from ggik.evaluation.report import Table
from ggik.evaluation.tables import EvalConfig, evaluation_problems, raw_stats
from ggik.graph.conventions import GRAPH_CONVENTIONS, check_convention
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.kinematics import geometry as geo
from ggik.kinematics.reframe import Reframing, random_reframing, reframe
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["VARIANTS", "file_variant", "conventions_table", "on_convention"]

TOOL_OFFSET = 0.1  #: [m] along the tool axis: the public Panda, iiwa and LWA4P files end 45-103 mm past ours


def _identity(robot: Robot) -> Reframing:
    dof = robot.dof
    return Reframing(np.zeros(dof), np.zeros(dof), np.stack([np.eye(3)] * dof), np.eye(4), np.eye(4))


def _tool_along(robot: Robot, g: torch.Generator, turned: bool) -> np.ndarray:
    """A tool :data:`TOOL_OFFSET` along the last joint's axis (its direction in the EE frame), turned at random."""
    frames, T_ee = robot.joint_frames(torch.zeros(robot.dof, dtype=torch.float64))
    axis_base = frames[-1, :3, :3] @ robot.joint_axes[-1]
    axis = T_ee[:3, :3].T @ axis_base
    R = torch.eye(3, dtype=torch.float64)
    if turned:
        w = torch.randn(3, generator=g, dtype=torch.float64)
        R = geo.axis_angle_to_matrix(w / w.norm(), math.pi * torch.rand((), generator=g, dtype=torch.float64))
    return geo.make_transform(R, TOOL_OFFSET * axis).numpy()


def _variant(
    build: Callable[[Robot, torch.Generator, Reframing], Reframing],
) -> Callable[[Robot, torch.Generator], Reframing]:
    return lambda robot, g: build(robot, g, _identity(robot))


def _random_part(field: str) -> Callable[[Robot, torch.Generator], Reframing]:
    """One part (``field`` of :class:`Reframing`) of a :func:`random_reframing`, the rest left as the file has it."""
    return _variant(lambda r, g, i: replace(i, **{field: getattr(random_reframing(r, g), field)}))


#: file variants: name -> (what it changes, how it is drawn from a robot and a generator)
VARIANTS: dict[str, tuple[str, Callable[[Robot, torch.Generator], Reframing]]] = {
    "file": ("the file as it is (urdfs/)", _variant(lambda r, g, i: i)),
    "tool +10 cm": (
        "a tool 10 cm further along the last axis (as the public Panda, iiwa and LWA4P files end)",
        _variant(lambda r, g, i: replace(i, tool=_tool_along(r, g, turned=False))),
    ),
    "tool turned": (
        "a tool 10 cm along the last axis, turned at random (a tool0-like frame)",
        _variant(lambda r, g, i: replace(i, tool=_tool_along(r, g, turned=True))),
    ),
    "frames slid": (
        "every joint frame moved along its axis by U[-0.3, 0.3] m (as the public UR10 file's)",
        _random_part("slide"),
    ),
    "zeros turned": (
        "every joint's zero angle turned by U[-pi, pi] (its limits with it)",
        _random_part("turn"),
    ),
    "frames turned": (
        "every joint frame turned by a uniform rotation (its axis reads otherwise)",
        _random_part("rotate"),
    ),
    "base moved": (
        "the base link mounted elsewhere (a uniform rotation, a translation U[-0.5, 0.5]^3 m)",
        _random_part("base"),
    ),
    "all": (
        "all of the above at once (random_reframing; the tool also moved off the last axis)",
        lambda r, g: random_reframing(r, g),
    ),
}


def file_variant(robot: Robot, name: str, seed: int) -> tuple[Robot, Reframing]:
    """Variant ``name`` of :data:`VARIANTS` of ``robot`` drawn from ``seed``: (the new file's robot, the exact map)."""
    if name not in VARIANTS:
        raise ValueError(f"unknown file variant {name!r}; variants: {list(VARIANTS)}")
    key = list(VARIANTS).index(name)
    g = step_generator(seed, rng.CONVENTION_VARIANTS, key, sum(map(ord, robot.name)))
    how = VARIANTS[name][1](robot, g)
    return reframe(robot, how, name=robot.name if name == "file" else f"{robot.name}~{name}"), how


def on_convention(model: GGIKModel, convention: str) -> GGIKModel:
    """``model``'s weights (shared, not copied) working on graphs of ``convention``: the same network, another
    problem unless it is the convention it was trained on."""
    check_convention(convention)
    if model.cfg.graph == convention:
        return model
    other = copy.copy(model)  # nn.Module: the parameters are shared
    other.cfg = replace(model.cfg, graph=convention)
    return other


def conventions_table(
    model: GGIKModel,
    robots: list[Robot],
    cfg: EvalConfig,
    variants: Sequence[str] = tuple(VARIANTS),
    conventions: Sequence[str] = GRAPH_CONVENTIONS,
    progress: bool = True,
) -> Table:
    """Raw success and best-of-S position error per robot, file variant and graph convention (module docstring)."""
    for name in variants:
        if name not in VARIANTS:
            raise ValueError(f"unknown file variant {name!r}; variants: {list(VARIANTS)}")
    models = {c: on_convention(model, check_convention(c)) for c in conventions}
    columns = ["robot", "file variant"]
    for c in conventions:
        trained = " (trained)" if c == model.cfg.graph else ""
        columns += [f"{c}{trained}: raw success 1cm&1deg [%]", f"{c}: best of S pos [mm]"]
    table = Table(
        f"Raw success on other files of the same arms ({cfg.problems} pose goals per robot and file, "
        f"{cfg.samples} samples each), on graphs of each convention",
        columns,
    )
    groups = evaluation_problems(robots, cfg)
    bar = tqdm(total=len(groups) * len(variants), desc="conventions", disable=not progress)
    spread: dict[str, list[list[float]]] = {c: [] for c in conventions}
    for robot, _, T in groups:
        per_robot: dict[str, list[float]] = {c: [] for c in conventions}
        for name in variants:
            other, how = file_variant(robot, name, cfg.seed)
            T_other = how.pose_new(T)
            cells: list = [robot.name, name]
            for c in conventions:
                m = models[c]
                raw = sample_joint_angles(
                    m, m.graph(other), T_other, cfg.samples, generator=step_generator(cfg.seed, rng.CONVENTION_SAMPLES)
                )
                pos, _, success = raw_stats(raw)
                cells += [success, pos[1]]
                per_robot[c].append(success)
            table.add(*cells)
            bar.update(1)
        for c in conventions:
            spread[c].append(per_robot[c])
    bar.close()
    table.notes += [f"{name}: {VARIANTS[name][0]}." for name in variants]
    table.notes += [
        "The same arm poses in every file (goal = the variant's FK of the same configurations); position errors are "
        "of each file's own EE point, so a file with a longer tool sees an orientation error as a larger position "
        "error: success differs within that lever arm even where the samples are the same.",
        f"Model weights: the same in every column; '(trained)' marks the convention the model was trained on "
        f"({model.cfg.graph!r}). On the other convention it reads graphs it never saw.",
    ]
    for c in conventions:
        ranges = [max(v) - min(v) for v in spread[c] if v]
        if ranges:
            table.notes.append(
                f"{c}: spread of raw success over a robot's files (max - min), mean over robots "
                f"{sum(ranges) / len(ranges):.1f} points, largest {max(ranges):.1f}."
            )
    table.notes.append(
        "Files: built from urdfs/ by ggik.kinematics.reframe with seeded transforms "
        "(ggik.evaluation.conventions_table.file_variant); no other arm's file is used."
    )
    return table
