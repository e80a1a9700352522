"""The one robot resolver of the command line: a shipped robot name or a URDF file (with optional base and
end-effector links), used the same way by every command that names robots."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from ggik.errors import GGIKError
from ggik.kinematics import Robot, available_robots

__all__ = ["is_urdf_spec", "resolve_robot", "resolve_robots", "robot_from_options", "add_chain_args"]


def is_urdf_spec(spec: str) -> bool:
    """Whether a robot spec names a URDF file (an existing file, or a path ending in ``.urdf``)."""
    return Path(spec).is_file() or spec.endswith(".urdf")


def resolve_robot(spec: str, base: str | None = None, ee: str | None = None) -> Robot:
    """A robot from a URDF file (``base``/``ee``: its base and end-effector links, default the URDF root and the
    end of the chain) or the name of a shipped robot (:func:`ggik.kinematics.available_robots`).

    :class:`GGIKError` for ``base``/``ee`` given with a shipped name (its chain is fixed) and for a spec that is
    neither; FileNotFoundError for a missing ``.urdf`` file.
    """
    if is_urdf_spec(spec):
        return Robot.from_urdf(Path(spec), base_link=base, ee_link=ee)
    if spec in available_robots():
        if base or ee:
            raise GGIKError(f"--base/--ee apply to URDF files; {spec!r} is a shipped robot with a fixed chain")
        return Robot.from_name(spec)
    raise GGIKError(f"{spec!r} is neither a URDF file nor a shipped robot ({', '.join(available_robots())})")


def resolve_robots(specs: Sequence[str], base: str | None = None, ee: str | None = None) -> list[Robot]:
    """:func:`resolve_robot` of every spec; ``base``/``ee`` apply to every URDF file among them (shipped names keep
    their chains). :class:`GGIKError` when ``base`` or ``ee`` is given and no spec is a URDF file."""
    if (base or ee) and not any(is_urdf_spec(s) for s in specs):
        raise GGIKError("--base/--ee apply to the URDF files among --robots, and none was named")
    return [resolve_robot(s, base, ee) if is_urdf_spec(s) else resolve_robot(s) for s in specs]


def robot_from_options(name: str | None, urdf: str | None, base: str | None = None, ee: str | None = None) -> Robot:
    """The robot of ``--robot NAME`` (a shipped robot) or ``--urdf FILE`` (with ``--base``/``--ee``): exactly one."""
    if (name is None) == (urdf is None):
        raise GGIKError("give exactly one of --robot NAME or --urdf FILE")
    if name is not None:
        if name not in available_robots():
            raise GGIKError(f"unknown robot {name!r}; shipped robots: {', '.join(sorted(available_robots()))}")
        return resolve_robot(name, base, ee)
    assert urdf is not None  # exactly one of the two is given
    if not is_urdf_spec(urdf):
        raise FileNotFoundError(f"URDF file not found: {urdf}")
    return resolve_robot(urdf, base, ee)


def add_chain_args(parser: argparse.ArgumentParser, of: str | None = None) -> None:
    """Add ``--base`` and ``--ee`` (the chain's links in a URDF file) to ``parser``; ``of``, e.g.
    "every URDF file among --robots", says which files they apply to in the help."""
    which = f" of {of}" if of else ""
    parser.add_argument("--base", help=f"base link{which} (default: the URDF root)")
    parser.add_argument("--ee", help=f"end-effector link{which} (default: the end of the chain, if unambiguous)")
