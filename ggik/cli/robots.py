"""The one robot resolver of the command line: a shipped robot name or a URDF file (with optional base and
end-effector links), used the same way by every command that names robots."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ggik.errors import AmbiguousLinkError, ChainError, GGIKError

if TYPE_CHECKING:
    from ggik.kinematics import Robot


def available_robots() -> list[str]:
    """The shipped robots' names (imported here, so that a parser is built without torch)."""
    from ggik.kinematics import available_robots as names

    return list(names())


__all__ = [
    "is_urdf_spec",
    "resolve_robot",
    "resolve_robots",
    "robots_from_yaml",
    "robot_from_options",
    "add_chain_args",
    "add_lock_arg",
    "parse_locks",
    "check_model_chain",
]


def is_urdf_spec(spec: str) -> bool:
    """Whether a robot spec names a URDF file (an existing file, or a path ending in ``.urdf``)."""
    return Path(spec).is_file() or spec.endswith(".urdf")


def resolve_robot(spec: str, base: str | None = None, ee: str | None = None) -> Robot:
    """A robot from a URDF file (``base``/``ee``: its base and end-effector links, default the URDF root and the
    end of the chain) or the name of a shipped robot (:func:`ggik.kinematics.available_robots`).

    :class:`GGIKError` for ``base``/``ee`` given with a shipped name (its chain is fixed) and for a spec that is
    neither; FileNotFoundError for a missing ``.urdf`` file.
    """
    from ggik.kinematics import Robot

    if is_urdf_spec(spec):
        try:
            return Robot.from_urdf(Path(spec), base_link=base, ee_link=ee)
        except AmbiguousLinkError as exc:  # the library says base_link=/ee_link=; the user typed --base/--ee
            what = "end-effector" if exc.role == "ee" else "base"
            raise GGIKError(
                f"{spec}: the {what} link is ambiguous: give --{exc.role} LINK, one of {exc.candidates}"
            ) from None
    if spec in available_robots():
        if base or ee:
            raise GGIKError(f"--base/--ee apply to URDF files; {spec!r} is a shipped robot with a fixed chain")
        return Robot.from_name(spec)
    raise GGIKError(f"{spec!r} is neither a URDF file nor a shipped robot ({', '.join(available_robots())})")


def is_robots_file(spec: str) -> bool:
    """Whether a robot spec names a YAML file of robots (the form of a training config's ``data.robots``)."""
    return spec.endswith((".yaml", ".yml"))


def robots_from_yaml(spec: str) -> list[Robot]:
    """The robots of a YAML file in the form of ``data.robots`` (a mapping NAME -> weight for a shipped robot, or
    NAME -> {urdf: FILE or FOLDER, base_link, ee_link, lock: {JOINT: VALUE}, weight}; optionally under a top-level
    ``robots:`` or ``data: {robots: ...}``; paths from the working directory), as training takes them."""
    from ggik.kinematics.robot_files import RobotFile, training_robots
    from ggik.typed_config import from_dict, load_yaml

    data = load_yaml(spec)
    data = (data.get("data") or {}).get("robots", data) if "data" in data else data.get("robots", data)
    if not isinstance(data, dict) or not data:
        raise GGIKError(f"{spec}: expected a mapping of robots (NAME: WEIGHT or NAME: {{urdf: FILE, ...}})")
    entries = {k: from_dict(RobotFile, v, f"{spec}: {k}") if isinstance(v, dict) else v for k, v in data.items()}
    try:
        return [tr.robot for tr in training_robots(entries)]
    except GGIKError as exc:
        raise GGIKError(f"{spec}: {exc}") from None


def resolve_robots(specs: Sequence[str], base: str | None = None, ee: str | None = None) -> list[Robot]:
    """:func:`resolve_robot` of every spec; ``base``/``ee`` apply to every URDF file among them (shipped names keep
    their chains); a YAML file stands for its robots (:func:`robots_from_yaml`). :class:`GGIKError` when ``base`` or
    ``ee`` is given and no spec is a URDF file."""
    if (base or ee) and not any(is_urdf_spec(s) for s in specs):
        raise GGIKError("--base/--ee apply to the URDF files among --robots, and none was named")
    out: list[Robot] = []
    for s in specs:
        if is_robots_file(s):
            out += robots_from_yaml(s)
        else:
            out.append(resolve_robot(s, base, ee) if is_urdf_spec(s) else resolve_robot(s))
    return out


def robot_from_options(
    name: str | None, urdf: str | None, base: str | None = None, ee: str | None = None, lock: list[str] | None = None
) -> Robot:
    """The robot of ``--robot NAME`` (a shipped robot) or ``--urdf FILE`` (with ``--base``/``--ee``): exactly one;
    ``lock``: the ``--lock JOINT=VALUE`` options, the joints fixed at those values."""
    if (name is None) == (urdf is None):
        raise GGIKError("give exactly one of --robot NAME or --urdf FILE")
    if name is not None:
        if name not in available_robots():
            raise GGIKError(f"unknown robot {name!r}; shipped robots: {', '.join(sorted(available_robots()))}")
        robot = resolve_robot(name, base, ee)
    else:
        assert urdf is not None  # exactly one of the two is given
        if not is_urdf_spec(urdf):
            raise FileNotFoundError(f"URDF file not found: {urdf}")
        robot = resolve_robot(urdf, base, ee)
    values = parse_locks(lock or [])
    if not values:
        return robot
    try:
        return robot.lock(values)
    except ChainError as exc:
        raise GGIKError(f"--lock: {exc}") from None


def parse_locks(specs: Sequence[str]) -> dict[str, float]:
    """``--lock JOINT=VALUE`` options -> {joint: value [rad or m]}; GGIKError naming the option for a bad one."""
    values: dict[str, float] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not sep or not name or not math.isfinite(value):
            raise GGIKError(f"--lock {spec}: expected JOINT=VALUE with a finite value [rad or m], e.g. --lock j3=0.0")
        if name in values:
            raise GGIKError(f"--lock {spec}: joint {name!r} is locked twice")
        values[name] = value
    return values


def add_lock_arg(parser: argparse.ArgumentParser) -> None:
    """``--lock JOINT=VALUE`` (repeatable) on ``parser``: joints fixed for the solve (prismatic or unwanted ones)."""
    parser.add_argument(
        "--lock",
        action="append",
        metavar="JOINT=VALUE",
        help="fix a joint at a value [rad, or m for a prismatic joint] (repeatable): for prismatic joints, which "
        "the model does not take, or joints the IK should not move",
    )


def check_model_chain(robot: Robot, source: str) -> None:
    """GGIKError naming ``--lock`` when ``robot`` has joints the model cannot take (prismatic, mimic), before the
    model is loaded; ``source`` names the robot as the user gave it (``--urdf arm.urdf``)."""
    for joint in robot.joints:
        if joint.type == "prismatic" or (joint.mimic is not None and joint.type != "fixed"):
            kind = "prismatic" if joint.type == "prismatic" else "a mimic joint"
            raise GGIKError(
                f"{source}: joint {joint.name!r} is {kind}; the model takes revolute joints only: fix it with "
                f"--lock {joint.mimic[0] if joint.mimic else joint.name}=VALUE, or solve without the model "
                "(--strategy random)"
            )


def add_chain_args(parser: argparse.ArgumentParser, of: str | None = None) -> None:
    """Add ``--base`` and ``--ee`` (the chain's links in a URDF file) to ``parser``; ``of``, e.g.
    "every URDF file among --robots", says which files they apply to in the help."""
    which = f" of {of}" if of else ""
    parser.add_argument("--base", help=f"base link{which} (default: the URDF root)")
    parser.add_argument("--ee", help=f"end-effector link{which} (default: the end of the chain, if unambiguous)")
