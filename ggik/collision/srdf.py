"""SRDF files: the disabled-collision pairs of motion-planning stacks (MoveIt's Setup Assistant writes them).

ggik reads one element of an SRDF, ``<disable_collisions link1="A" link2="B" reason="Never"/>`` (children of the root
``<robot>``; every other element - groups, end effectors, virtual joints - is ignored): with ``srdf=`` /
``--srdf FILE`` the pairs of capsules on two such links are not checked for self-collision, and these pairs replace the
sampled rule of :mod:`ggik.collision.robot_model` (links less than two moving joints apart are never checked, whatever
the SRDF says). Link names are checked against the robot's URDF (``Robot.urdf_links``): a link that is not in
the URDF at all is a :class:`~ggik.collision.collision_file.CollisionFileError` naming the file and the link; a link of
the URDF that is not on the solved chain (a gripper's finger, a sensor) has no capsule in the model, so its pairs are
ignored, with a note (:attr:`CollisionModel.notes`, shown by ``ggik robot show`` / ``ggik robot collision``). A robot
built without a URDF (:meth:`ggik.Robot.from_dh`) knows only its chain's links.

:func:`srdf_text` writes the pairs a model leaves out as an SRDF (``ggik robot collision ARM --srdf-out FILE``). The
file is parsed with the standard library's ``xml.etree`` (as ggik's URDF reader): read SRDF files you trust.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from ggik.collision.collision_file import CollisionFileError, ModelLike
from ggik.fileio import atomic_write_text
from ggik.kinematics.robot import Robot

__all__ = ["SRDF", "read_srdf", "srdf_text", "write_srdf"]


@dataclass(frozen=True)
class SRDF:
    """The disabled pairs of an SRDF that apply to a robot's chain: ``disabled`` {(link1, link2): reason} (both links on
    the chain), ``source`` the file, ``notes`` what was ignored (pairs naming links off the chain)."""

    source: str
    disabled: dict[tuple[str, str], str]
    notes: tuple[str, ...] = ()


def read_srdf(path: str | Path, robot: Robot, attached: tuple[str, ...] = ()) -> SRDF:
    """The ``<disable_collisions>`` pairs of SRDF ``path`` for ``robot`` (module docstring), the links ``attached``
    to the chain (:class:`~ggik.collision.mesh_fit.MeshFitConfig`) counted as on it: CollisionFileError naming the
    file and the element for malformed XML, a missing attribute or a link that is not in the robot's URDF;
    FileNotFoundError for a missing file."""
    path = Path(path)
    src = str(path)
    if not path.is_file():
        raise FileNotFoundError(f"SRDF file {path} does not exist")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise CollisionFileError(f"{src}: not valid XML: {exc}") from None
    if root.tag != "robot":
        raise CollisionFileError(f"{src}: the root element is <{root.tag}>, not <robot> (an SRDF)")
    chain, urdf = set(robot.link_names) | set(attached), set(robot.urdf_links)
    disabled: dict[tuple[str, str], str] = {}
    off_chain: list[str] = []
    ignored = 0
    for i, el in enumerate(root.findall("disable_collisions")):
        where = f"{src}: disable_collisions[{i}]"
        names = []
        for attr in ("link1", "link2"):
            name = el.get(attr)
            if not name:
                raise CollisionFileError(f"{where}: missing attribute {attr!r}")
            if name not in urdf:
                raise CollisionFileError(
                    f"{where}: {attr}={name!r} is not a link of {robot.name}'s URDF ({', '.join(robot.urdf_links)})"
                )
            names.append(name)
        outside = [n for n in names if n not in chain]
        if outside:
            off_chain += [n for n in outside if n not in off_chain]
            ignored += 1
            continue
        disabled[names[0], names[1]] = el.get("reason") or "SRDF"
    notes: tuple[str, ...] = ()
    if ignored:
        notes = (
            f"SRDF {src}: {ignored} disabled pairs name links off the chain {robot.base_link} -> {robot.ee_link} "
            f"({', '.join(off_chain)}; no capsules in the model), ignored",
        )
    return SRDF(src, disabled, notes)


def srdf_text(model: ModelLike, robot: Robot) -> tuple[str, list[str]]:
    """(an SRDF of ``model``'s left-out pairs, notes). Pairs of links with capsules fewer than two moving joints apart
    get reason "Adjacent" (never checked); a link pair whose every candidate capsule pair the model leaves out gets
    their reason (joined by "/" when they differ). A link pair of which only some capsule pairs are left out cannot be
    said in an SRDF (its pairs stay checked when it is read back): the notes name them."""
    model.check_robot(robot)
    moved_by = [0]  # moving joints between the base and each link of the chain
    for joint in robot.joints:
        moved_by.append(moved_by[-1] + (joint.type != "fixed"))
    links = sorted({int(k) for k in model.link})
    lines = [f"<robot name={quoteattr(robot.name)}>"]
    for x, i in enumerate(links):
        for j in links[x + 1 :]:
            if abs(int(moved_by[j]) - int(moved_by[i])) < 2:
                lines.append(_disable(model.link_names[i], model.link_names[j], "Adjacent"))
    reasons: dict[tuple[int, int], set[str]] = {}
    counts: dict[tuple[int, int], int] = {}
    for i, j, why in model.skipped:
        key = (int(model.link[i]), int(model.link[j]))
        reasons.setdefault(key, set()).add(why)
        counts[key] = counts.get(key, 0) + 1
    per_link = {k: int((model.link == k).sum()) for k in links}
    partial = []
    for (u, v), whys in reasons.items():
        names = (model.link_names[u], model.link_names[v])
        if counts[u, v] == per_link[u] * per_link[v]:
            lines.append(_disable(*names, "/".join(sorted(whys))))
        else:
            partial.append(f"{names[0]} - {names[1]} ({counts[u, v]} of {per_link[u] * per_link[v]} capsule pairs)")
    notes = []
    if partial:
        notes.append(
            "link pairs of which only some capsule pairs are left out, not in the SRDF (checked when it is read "
            f"back; a collision file keeps them): {'; '.join(partial)}"
        )
    lines.append("</robot>")
    return '<?xml version="1.0"?>\n' + "\n".join(lines) + "\n", notes


def _disable(link1: str, link2: str, reason: str) -> str:
    return f"  <disable_collisions link1={quoteattr(link1)} link2={quoteattr(link2)} reason={quoteattr(reason)}/>"


def write_srdf(model: ModelLike, robot: Robot, path: str | Path) -> tuple[Path, list[str]]:
    """Write :func:`srdf_text` to ``path`` (atomically); returns (the path, the notes)."""
    text, notes = srdf_text(model, robot)
    return atomic_write_text(path, text), notes
