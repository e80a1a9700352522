"""What the learned baselines share: config checks, the trained-model holder with its file round trip, and the
ranking of answers into an :class:`ggik.IKResult`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, ClassVar

import torch

from ggik.baselines.model_file import check_robot, load_baseline, robot_of, save_baseline
from ggik.errors import GGIKError
from ggik.ik.result import IKResult, sort_best_first
from ggik.kinematics.geometry import pose_errors
from ggik.kinematics.robot import Robot

__all__ = ["check_config", "config_from_dict", "training_pairs", "TrainedBaseline"]


def check_config(config: Any, counts: tuple[str, ...], numbers: tuple[str, ...], positive: bool) -> None:
    """ValueError naming the field unless each of ``counts`` is an integer >= 1 and each of ``numbers`` a finite number
    > 0 (``positive``) or >= 0, and ``goal`` is "pose" or "position"."""
    kind = type(config).__name__
    if config.goal not in ("pose", "position"):
        raise ValueError(f"{kind}.goal must be 'pose' or 'position', got {config.goal!r}")
    for name in counts:
        value = getattr(config, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{kind}.{name} must be an integer >= 1, got {value!r}")
    for name in numbers:
        value = getattr(config, name)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value < float("inf")
        if not ok or not (value > 0 if positive else value >= 0):
            raise ValueError(f"{kind}.{name} must be a finite number {'>' if positive else '>='} 0, got {value!r}")


def config_from_dict(cls: Any, data: dict) -> Any:
    """The config ``cls`` that a model file recorded (GGIKError for unknown keys: a file of a newer ggik)."""
    unknown = sorted(set(data) - {f.name for f in fields(cls)})
    if unknown:
        raise GGIKError(f"a {cls.__name__} with unknown keys {unknown} (written by a newer ggik?)")
    return cls(**data)


def training_pairs(robot: Robot, samples: int, seed: int) -> tuple[torch.Generator, torch.Tensor, torch.Tensor, float]:
    """The training set of a baseline, seeded (torch's global seed too, for the network's init): (the generator, to
    draw batches with; joint values q (samples, dof) uniform within the limits; their EE poses (samples, 4, 4), both
    float32; the reach scale [m], the largest EE distance from the base)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    q = robot.sample_q(samples, gen)
    goals = robot.fk(q).to(torch.float32)
    scale = float(goals[:, :3, 3].norm(dim=-1).max().clamp(min=1e-6))
    return gen, q.to(torch.float32), goals, scale


class TrainedBaseline(ABC):
    """A trained per-robot network: ``net`` (eval mode), its ``config``, the ``robot`` it was trained for, the reach
    ``scale`` [m] of its inputs and its ``training`` record (with the robot's fingerprint). Subclasses set ``kind``,
    ``config_type`` and :meth:`build` (the untrained network of a config)."""

    kind: ClassVar[str]
    config_type: ClassVar[Any]

    def __init__(self, net: torch.nn.Module, config: Any, robot: Robot, scale: float, training: dict) -> None:
        self.net, self.config, self.robot, self.scale, self.training = net.eval(), config, robot, scale, training

    @staticmethod
    @abstractmethod
    def build(config: Any, dof: int) -> torch.nn.Module:
        """The untrained network of ``config`` for an arm of ``dof`` joints (each baseline defines its own)."""

    def check(self, robot: Robot) -> None:
        """GGIKError unless ``robot`` is the arm this model was trained for."""
        check_robot(
            robot,
            {"name": self.robot.name, "dof": self.robot.dof, "fingerprint": self.training["fingerprint"]},
            self.kind,
        )

    def ranked(self, robot: Robot, q: torch.Tensor, T: torch.Tensor, pos_tol: float, rot_tol: float) -> IKResult:
        """The answers q (B, S, dof) for goal poses T (B, 4, 4) as an IKResult sorted best first (rot_err 0 for a
        position model; success at the tolerances [m, rad])."""
        pos, rot = pose_errors(robot.fk(q), T[:, None])
        if self.config.goal == "position":
            rot = torch.zeros_like(rot)
        ok = (pos < pos_tol) & (rot < rot_tol)
        return sort_best_first(q, pos, rot, ok, robot.within_limits(q), pos_tol, rot_tol)

    def save(self, path: str | Path) -> Path:
        """Write this model to ``path`` (atomically)."""
        return save_baseline(
            path, self.kind, {**asdict(self.config), "scale": self.scale}, self.net, self.robot, self.training
        )

    @classmethod
    def load(cls, path: str | Path) -> Any:
        """A model written by :meth:`save` (GGIKError for a corrupt file or another kind of model)."""
        payload = load_baseline(path, cls.kind)
        config = dict(payload["config"])
        scale = float(config.pop("scale"))
        cfg = config_from_dict(cls.config_type, config)
        robot = robot_of(payload)
        net = cls.build(cfg, robot.dof)
        try:
            net.load_state_dict(payload["state"])
        except RuntimeError as exc:
            raise GGIKError(f"{path}: weights that do not fit the recorded config ({exc})") from None
        return cls(net, cfg, robot, scale, {**payload["training"], "fingerprint": payload["robot"]["fingerprint"]})
