"""The file of a learned IK baseline (:mod:`ggik.baselines`): kind, config, weights and the robot it was trained for.

Format ``ggik-baseline/1`` (:data:`BASELINE_FORMAT`), a ``torch.save`` dict of tensors and plain data read with
``weights_only=True``: ``kind`` (e.g. "distal-teacher"), ``config`` (the model's config as a dict), ``state`` (its
weights), ``robot`` (the chain as a kinematics-only URDF, its name and a fingerprint of its kinematics), ``training``
(how it was trained: samples, steps, CPU seconds) and the ggik version. Written atomically. A learned baseline is a
per-robot model: :func:`check_robot` refuses a robot whose kinematics differ from the one it was trained for.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ggik.errors import GGIKError
from ggik.fileio import atomic_write, load_torch_file
from ggik.kinematics.robot import Robot
from ggik.version import __version__

__all__ = ["BASELINE_FORMAT", "robot_fingerprint", "check_robot", "save_baseline", "load_baseline"]

BASELINE_FORMAT = "ggik-baseline/1"


def robot_fingerprint(robot: Robot) -> str:
    """A short hash of the chain's kinematics (its constants and limits, rounded to 1e-9): equal for the same arm."""
    consts, _ = robot.chain_constants()
    h = hashlib.sha256()
    for key in sorted(consts):
        h.update(key.encode())
        h.update(np.round(np.asarray(consts[key], dtype=np.float64), 9).tobytes())
    h.update(np.round(torch.cat([robot.lower, robot.upper]).numpy(), 9).tobytes())
    return h.hexdigest()[:16]


def check_robot(robot: Robot, payload_robot: dict[str, Any], kind: str) -> None:
    """GGIKError unless ``robot`` has the kinematics the model was trained for (a learned baseline is per robot)."""
    if not isinstance(robot, Robot):
        raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
    if robot_fingerprint(robot) != payload_robot["fingerprint"]:
        raise GGIKError(
            f"this {kind} model was trained for {payload_robot['name']!r} ({payload_robot['dof']} DOF); "
            f"{robot.name!r} has other kinematics: train one for it"
        )


def save_baseline(
    path: str | Path, kind: str, config: dict, module: torch.nn.Module, robot: Robot, training: dict
) -> Path:
    """Write a baseline file (module docstring) atomically; returns its path."""
    payload = {
        "format": BASELINE_FORMAT,
        "kind": kind,
        "version": __version__,
        "config": dict(config),
        "state": {k: v.detach().cpu() for k, v in module.state_dict().items()},
        "robot": {
            "name": robot.name,
            "dof": robot.dof,
            "urdf": robot.to_urdf(),
            "base_link": robot.base_link,
            "ee_link": robot.ee_link,
            "fingerprint": robot_fingerprint(robot),
        },
        "training": dict(training),
    }
    buf = io.BytesIO()
    torch.save(payload, buf)
    return atomic_write(path, lambda f: f.write(buf.getvalue()))


def load_baseline(path: str | Path, kind: str) -> dict:
    """Read a baseline file of ``kind`` (FileNotFoundError; GGIKError for a corrupt file, another format or kind)."""
    payload = load_torch_file(path, BASELINE_FORMAT, f"{kind} model")
    if payload.get("kind") != kind:
        raise GGIKError(f"{path}: a {payload.get('kind')!r} model, not a {kind!r} model")
    missing = sorted({"config", "state", "robot", "training"} - set(payload))
    if missing:
        raise GGIKError(f"{path}: an incomplete {kind} model file (missing {missing})")
    return payload


def robot_of(payload: dict) -> Robot:
    """The robot a baseline file was trained for, rebuilt from its stored URDF."""
    r = payload["robot"]
    robot = Robot.from_urdf(r["urdf"], base_link=r["base_link"], ee_link=r["ee_link"])
    robot.name = r["name"]
    return robot
