"""The robots and the model a study runs on: shipped robots and URDF files through the library's one resolver
(:func:`ggik.cli.robots.resolve_robot`), plus ``randomN`` (a seeded random N-DOF robot); the checkpoint under test."""

from __future__ import annotations

import re
from pathlib import Path

from benchmarks.common.scripts import BenchmarkError, bench_device
from benchmarks.common.streams import BENCH_RANDOM_ROBOT
from ggik.checkpoint import load_model
from ggik.cli.robots import resolve_robot
from ggik.errors import GGIKError
from ggik.kinematics import Robot, available_robots, random_robot
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["default_robots", "robot_from_arg", "load_bench_model"]

_RANDOM = re.compile(r"^random(\d+)$")


def default_robots() -> list[str]:
    """The five GGIK paper robots first, then the rest of urdfs/."""
    paper = available_robots(paper_only=True)
    return paper + [r for r in available_robots() if r not in paper]


def robot_from_arg(name: str, seed: int) -> Robot:
    """A shipped robot by name, a URDF file, or ``randomN``: a random N-DOF robot (:func:`ggik.random_robot`,
    drawn from the stream ``step_generator(seed, BENCH_RANDOM_ROBOT, N)``).

    Raises :class:`BenchmarkError` (listing the shipped robots for an unknown name).
    """
    m = _RANDOM.match(name)
    if m:
        dof = int(m.group(1))
        if dof < 2:
            raise BenchmarkError(f"{name}: a random robot needs at least 2 DOF")
        return random_robot(dof, step_generator(seed, BENCH_RANDOM_ROBOT, dof), name=name)
    try:
        return resolve_robot(name)
    except (GGIKError, FileNotFoundError) as exc:  # lists the shipped robots
        raise BenchmarkError(f"{exc} (or randomN for a random N-DOF robot)") from None


def load_bench_model(path: str | Path, device: str = "cpu") -> tuple[GGIKModel, dict]:
    """(model in eval mode on ``device``, checkpoint dict) of a ``ggik train`` checkpoint; :class:`BenchmarkError`
    (``--ckpt: ...`` or ``--device: ...``) for a missing or unusable file or a device this machine does not have."""
    dev = bench_device(device)
    try:
        model, ckpt = load_model(path)
    except (FileNotFoundError, GGIKError) as exc:
        raise BenchmarkError(f"--ckpt: {exc}") from None
    return model.to(dev), ckpt
