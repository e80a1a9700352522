"""The path-following suite of ``ggik eval paths``: end-effector paths for the ``urdfs/`` robots, stored as one CSV
per path plus ``suite.json`` (in ``eval/paths/``), and read back here.

The suite's shapes (circle, square, line, S curve, cursive writing, a rotation about the tool point, a long roll about
the tool axis, an arc about the first joint from near its limit) and the reachability check every path passed are
written by the lab's generator, ``python -m benchmarks.path_suite.make_paths`` (``benchmarks/path_suite/``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from ggik.errors import GGIKError
from ggik.kinematics.robot import Robot
from ggik.path.files import read_path_csv

__all__ = ["PathSuiteError", "SuitePath", "SUITE_FORMAT", "read_suite", "load_path"]

F64 = torch.float64
SUITE_FORMAT = "ggik-path-suite-1"  #: the "format" of suite.json


class PathSuiteError(GGIKError):
    """A path suite or a path-benchmark option that cannot be used (not a suite file, an unknown method, a bad count);
    the message names the file or option at fault."""


@dataclass
class SuitePath:
    """One entry of ``suite.json``: path ``name`` of ``robot`` (a shipped robot), its CSV ``file`` (beside the JSON),
    ``waypoints``, the start configuration ``q_start`` [rad] (or None) and a ``note`` (shape, size, reachability)."""

    name: str
    robot: str
    kind: str
    file: str
    waypoints: int
    q_start: list[float] | None
    note: str


def read_suite(suite_dir: str | Path) -> list[SuitePath]:
    """The entries of ``suite_dir``/suite.json (FileNotFoundError naming the generator when it is missing,
    :class:`PathSuiteError` when it is not a suite)."""
    path = Path(suite_dir) / "suite.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} not found; write the suite with python -m benchmarks.path_suite.make_paths --out {suite_dir}"
        )
    payload = json.loads(path.read_text(encoding="utf-8"))
    if payload.get("format") != SUITE_FORMAT:
        raise PathSuiteError(f"{path}: not a path suite (format {payload.get('format')!r}, expected {SUITE_FORMAT!r})")
    return [SuitePath(**e) for e in payload["paths"]]


def load_path(suite_dir: str | Path, entry: SuitePath) -> tuple[Robot, torch.Tensor, torch.Tensor | None]:
    """(robot, poses (T, 4, 4), q_start (dof,) or None) of a suite entry."""
    q_start = None if entry.q_start is None else torch.tensor(entry.q_start, dtype=F64)
    return Robot.from_name(entry.robot), read_path_csv(Path(suite_dir) / entry.file), q_start
