"""Training robots from URDF files: the entries of ``data.robots`` that name a file (or a folder of files) instead of a
robot shipped in ``urdfs/``.

A ``data.robots`` entry is either ``NAME: WEIGHT`` (a shipped robot) or
``NAME: {urdf: FILE, base_link: L, ee_link: L, lock: {JOINT: VALUE}, weight: W}`` (:class:`RobotFile`). A FILE that
is a folder stands for every ``*.urdf`` in it (sorted), each one robot ``NAME.STEM`` of weight W, its chain found as
:meth:`ggik.kinematics.Robot.from_urdf` finds it (``base_link``/``ee_link`` apply to every file).

A model stays self-contained: the checkpoint keeps each file's text and sha256 (:func:`file_record`), and a resumed
run or a model file rebuilds the robot from that text (:func:`robot_from_record`), not from the path.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ggik.errors import ChainError, GGIKError
from ggik.kinematics.robot import Robot, available_robots
from ggik.typed_config import from_dict

__all__ = [
    "RobotFile",
    "TrainingRobot",
    "training_robots",
    "file_record",
    "robot_from_record",
    "kinematic_signature",
    "chain_options",
    "chain_differences",
]


@dataclass
class RobotFile:
    """A training robot from a URDF file (a ``data.robots`` entry given as a mapping)."""

    urdf: str  #: the URDF file, or a folder of ``*.urdf`` files (a path; relative paths from the working directory)
    base_link: str | None = None  #: the chain's first link (default: the URDF root)
    ee_link: str | None = None  #: the end-effector link (default: the one leaf below the base, if unambiguous)
    #: joints fixed at a value [rad or m]: prismatic and mimic joints, which the graph cannot take, must be locked
    lock: dict[str, float] = field(default_factory=dict)
    weight: float = 1.0  #: share of the batch, as a shipped robot's weight (each file of a folder weighs this)


@dataclass(frozen=True)
class TrainingRobot:
    """One resolved training robot: the :class:`Robot`, its weight, and (robots from files) its :func:`file_record`."""

    name: str
    robot: Robot
    weight: float
    record: dict | None = None  #: None for a shipped robot


def file_record(path: str, data: bytes, entry: RobotFile, entry_name: str) -> dict:
    """What a checkpoint keeps of a robot from a file: the path as given, the file's text and the sha256 of its bytes,
    the chain (``base_link``, ``ee_link``, ``lock``), the weight, and the ``data.robots`` entry it came from (a
    folder's files share one). The text is read as UTF-8 (a byte-order mark dropped); GGIKError naming the entry for
    a file that is not UTF-8 text."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GGIKError(
            f"data.robots.{entry_name}: {path} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return {
        "path": path,
        "sha256": hashlib.sha256(data).hexdigest(),
        "urdf": text,
        **chain_options(entry),
        "weight": float(entry.weight),
        "entry": entry_name,
    }


def chain_options(entry: RobotFile) -> dict:
    """The chain options of ``entry`` as records keep them: ``base_link``, ``ee_link`` and ``lock`` (joint -> value
    as a float)."""
    lock = {joint: float(value) for joint, value in entry.lock.items()}
    return {"base_link": entry.base_link, "ee_link": entry.ee_link, "lock": lock}


def chain_differences(kept: dict, asked: dict) -> list[tuple[str, object, object]]:
    """(option, ``asked``'s value, ``kept``'s value) for each chain option (:func:`chain_options`) on which a record
    ``kept`` (a :func:`file_record`, an adaptation's state) and ``asked`` differ; locks compared as floats, a missing
    option read as None (no lock: {})."""
    out = []
    for key in ("base_link", "ee_link", "lock"):
        was, now = kept.get(key), asked.get(key)
        if key == "lock":
            was, now = ({j: float(v) for j, v in (d or {}).items()} for d in (was, now))
        if was != now:
            out.append((key, now, was))
    return out


def robot_from_record(name: str, record: dict) -> Robot:
    """The robot ``name`` of a :func:`file_record` (from the kept text, not the path)."""
    entry = RobotFile(record["path"], record.get("base_link"), record.get("ee_link"), dict(record.get("lock") or {}))
    return _chain(name, record["path"], record["urdf"], entry)


def _chain(name: str, path: str, text: str, entry: RobotFile) -> Robot:
    """The chain of one file's text; GGIKError naming the entry and the file for any fault."""
    where = f"data.robots.{name} ({path})"
    if not text.lstrip().startswith("<"):  # Robot.from_urdf would take the text for a path
        raise GGIKError(f"{where}: not a URDF document (no XML element at its start: {text.lstrip()[:40]!r})")
    try:
        robot = Robot.from_urdf(text, base_link=entry.base_link, ee_link=entry.ee_link)
    except GGIKError as exc:
        raise GGIKError(f"{where}: {exc}") from None
    if entry.lock:
        try:
            robot = robot.lock(entry.lock)
        except ChainError as exc:
            raise GGIKError(f"{where}: lock: {exc}") from None
    for joint in robot.joints:  # what the GGIK graph cannot take (the graph's own error names no entry)
        if joint.type == "prismatic" or (joint.mimic is not None and joint.type != "fixed"):
            what = "prismatic" if joint.type == "prismatic" else "a mimic joint"
            source = joint.mimic[0] if joint.mimic else joint.name
            raise GGIKError(
                f"{where}: joint {joint.name!r} is {what}; the model takes revolute joints only: add "
                f"lock: {{{source}: VALUE}} to the entry"
            )
    robot.name = name
    robot.source = path
    return robot


def _files(name: str, entry: RobotFile) -> list[tuple[str, str]]:
    """(robot name, path) of an entry: the file, or each ``*.urdf`` of a folder as ``NAME.STEM``."""
    path = Path(entry.urdf)
    if path.is_dir():
        files = sorted(path.glob("*.urdf"))
        if not files:
            raise GGIKError(f"data.robots.{name}: folder {entry.urdf} holds no *.urdf file")
        return [(f"{name}.{f.stem}", str(f)) for f in files]
    if not path.is_file():
        raise GGIKError(f"data.robots.{name}: URDF file {entry.urdf} not found (a path from {Path.cwd().name}/)")
    return [(name, entry.urdf)]


def kinematic_signature(robot: Robot) -> tuple:
    """What makes two chains the same arm, names aside: joint types, origins, axes, limits and mimic rules (source
    joint by its place on the chain, multiplier, offset), rounded to 1e-9, of every joint, fixed ones merged into the
    next moving joint's origin. A continuous joint and a revolute one limited to [-pi, pi] are different arms."""
    out: list = []
    pending = np.eye(4)
    moving = [j.name for j in robot.joints if j.type != "fixed"]
    for j in robot.joints:
        if j.type == "fixed":
            pending = pending @ np.asarray(j.origin)
            continue
        T = pending @ np.asarray(j.origin)
        pending = np.eye(4)
        limits = tuple(None if v is None else round(float(v), 9) for v in (j.lower, j.upper))
        mimic = None if j.mimic is None else (moving.index(j.mimic[0]), round(j.mimic[1], 9), round(j.mimic[2], 9))
        out.append((j.type, tuple(np.round(T, 9).ravel()), tuple(np.round(j.axis, 9)), limits, mimic))
    out.append(tuple(np.round(pending, 9).ravel()))
    return tuple(out)


def _entry(name: str, value: object) -> RobotFile | float:
    """One ``data.robots`` value, checked: a weight (a number) or a :class:`RobotFile` (or its mapping form)."""
    if isinstance(value, dict):
        value = from_dict(RobotFile, value, f"data.robots.{name}")
    if isinstance(value, RobotFile):
        weight = value.weight
    elif isinstance(value, bool) or not isinstance(value, (int, float)):
        raise GGIKError(f"data.robots.{name}: expected a weight or {{urdf: FILE, ...}}, got {value!r}")
    else:
        weight = value
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < math.inf:
        raise GGIKError(f"data.robots.{name}: weight must be a finite number >= 0, got {weight!r}")
    return value if isinstance(value, RobotFile) else float(value)


def _read(name: str, path: str) -> bytes:
    """The bytes of an entry's file; GGIKError naming the entry for a file that cannot be read."""
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise GGIKError(f"data.robots.{name}: cannot read {path}: {exc.strerror or exc}") from None


def _same_chain(name: str, record: dict, entry: RobotFile) -> None:
    """GGIKError naming the entry where a resumed run's ``entry`` asks for another chain than the kept ``record``'s."""
    differ = chain_differences(record, chain_options(entry))
    if differ:
        key, value, was = differ[0]
        raise GGIKError(
            f"data.robots.{name}: {key} {value!r}, but the run kept the file with {key} {was!r}; a resumed run "
            "trains on the chains it started with (start a new run for another chain)"
        )


def training_robots(robots: dict, stored: dict | None = None) -> list[TrainingRobot]:
    """The robots of a ``data.robots`` mapping (NAME -> weight, or -> :class:`RobotFile` or its dict form), in order.

    ``stored``: {name: :func:`file_record`} a checkpoint kept of this run's robots from files: those are rebuilt from
    the kept text (a resumed run trains on the files it started with, wherever it resumes; a folder entry on the files
    it held then; its chain options must be the kept ones). Raises GGIKError naming the entry: an unknown shipped
    name, a missing or unreadable file or folder, a file that is not UTF-8 URDF text, an unknown link, a joint the
    graph cannot take without ``lock``, a bad weight or key, a name given twice, or the same arm twice (equal
    :func:`kinematic_signature`).
    """
    stored = stored or {}
    shipped = available_robots()
    out: list[TrainingRobot] = []
    for name, raw in robots.items():
        value = _entry(name, raw)
        if not isinstance(value, RobotFile):
            if name not in shipped:
                raise GGIKError(
                    f"data.robots.{name}: unknown shipped robot; shipped robots: {shipped}; a robot from a file is "
                    f"given as {name}: {{urdf: FILE, base_link: L, ee_link: L, lock: {{JOINT: VALUE}}, weight: W}}"
                )
            out.append(TrainingRobot(name, Robot.from_name(name), value))
            continue
        kept = {k: r for k, r in stored.items() if r.get("entry", k) == name}
        members = [(k, r["path"]) for k, r in kept.items()] if kept else _files(name, value)
        for robot_name, path in members:
            if robot_name in kept:
                _same_chain(name, kept[robot_name], value)
            record = kept.get(robot_name) or file_record(path, _read(name, path), value, name)
            record = {**record, "weight": value.weight}  # a resumed run may change weights (--set), not robots
            out.append(TrainingRobot(robot_name, _chain(robot_name, path, record["urdf"], value), value.weight, record))
    names: set[str] = set()
    seen: dict[tuple, str] = {}
    for tr in out:
        if tr.name in names:
            raise GGIKError(f"data.robots: two robots are named {tr.name!r} (a folder's NAME.STEM and an entry?)")
        names.add(tr.name)
        sig = kinematic_signature(tr.robot)
        if sig in seen:
            raise GGIKError(
                f"data.robots: {tr.name} and {seen[sig]} are the same arm (equal joints, axes and limits); "
                "give it once, with the sum of their weights"
            )
        seen[sig] = tr.name
    return out
