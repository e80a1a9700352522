"""Which joints form a serial chain: the base-to-end-effector path of a URDF tree, or a chain built from
Denavit-Hartenberg parameters. Both return the joints as :class:`ggik.kinematics.urdf.JointSpec` for
:class:`ggik.Robot`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ggik.errors import AmbiguousLinkError, ChainError
from ggik.kinematics.urdf import JointSpec, UrdfModel

__all__ = ["serial_chain", "dh_chain", "np_transform", "np_rot"]


def np_transform(R: np.ndarray | None = None, t: Sequence[float] | np.ndarray | None = None) -> np.ndarray:
    """A (4, 4) float64 homogeneous transform from a rotation (3, 3) and a translation (3,) [m]."""
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if t is not None:
        T[:3, 3] = t
    return T


def np_rot(axis: str, angle: float) -> np.ndarray:
    """(3, 3) rotation by ``angle`` [rad] about x or z."""
    c, s = math.cos(angle), math.sin(angle)
    if axis == "x":
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]], dtype=np.float64)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=np.float64)  # z


def serial_chain(model: UrdfModel, base_link: str | None = None, ee_link: str | None = None) -> tuple[JointSpec, ...]:
    """The joints from ``base_link`` to ``ee_link`` of a URDF tree, base first.

    ``base_link`` defaults to the root link; ``ee_link`` to the one leaf below the base reached through a
    movable joint (an error lists the candidates when there are several). Raises :class:`ChainError` for
    unknown links, a link with two parent joints, a base that is not an ancestor of the EE, or no joint.
    """
    src = model.source
    parent_joint: dict[str, JointSpec] = {}
    children: dict[str, list[JointSpec]] = {}
    for j in model.joints:
        if j.child in parent_joint:
            raise ChainError(f"{src}: link {j.child!r} is the child of two joints; a URDF must be a tree")
        parent_joint[j.child] = j
        children.setdefault(j.parent, []).append(j)
    cycle = _cycle(parent_joint)
    if cycle:
        names = " -> ".join(f"{j.name} ({j.parent} -> {j.child})" for j in cycle)
        raise ChainError(
            f"{src}: joints {[j.name for j in cycle]} form a cycle ({names}): link {cycle[0].parent!r} is its "
            "own ancestor; a URDF must be a tree"
        )
    links = list(model.links)

    def unknown(link: str, role: str) -> ChainError:
        shown = ", ".join(links[:40]) + (" ..." if len(links) > 40 else "")
        return ChainError(f"{src}: unknown {role} link {link!r}; links in the file: {shown}")

    if base_link is None:
        roots = [link for link in links if link not in parent_joint]
        if len(roots) != 1:
            raise AmbiguousLinkError(
                f"{src}: cannot choose a base link, the file has {len(roots)} root links: {roots}", "base", roots
            )
        base_link = roots[0]
    elif base_link not in links:
        raise unknown(base_link, "base")

    if ee_link is None:
        candidates = []
        stack = [(base_link, False)]
        while stack:
            link, moved = stack.pop()
            kids = children.get(link, [])
            if not kids and moved:
                candidates.append(link)
            for j in kids:
                stack.append((j.child, moved or j.type != "fixed"))
        if not candidates:
            raise ChainError(f"{src}: no movable joint below base link {base_link!r}")
        if len(candidates) > 1:
            raise AmbiguousLinkError(
                f"{src}: the end-effector link is ambiguous below {base_link!r}; pass ee_link= one of "
                f"{sorted(candidates)}",
                "ee",
                sorted(candidates),
            )
        ee_link = candidates[0]
    elif ee_link not in links:
        raise unknown(ee_link, "end-effector")

    chain: list[JointSpec] = []
    link = ee_link
    while link != base_link:
        if link not in parent_joint:
            raise ChainError(
                f"{src}: base link {base_link!r} is not an ancestor of end-effector link {ee_link!r} "
                f"(the path up from {ee_link!r} ends at the root {link!r})"
            )
        chain.append(parent_joint[link])
        link = parent_joint[link].parent
    if not chain:
        raise ChainError(f"{src}: base link and end-effector link are the same link {base_link!r}")
    return tuple(chain[::-1])


def _cycle(parent_joint: dict[str, JointSpec]) -> list[JointSpec]:
    """The joints of a cycle in the parent relation (parent to child order), or [] when it is a forest."""
    done: set[str] = set()
    for start in parent_joint:
        path: list[str] = []
        link = start
        while link in parent_joint and link not in done:
            if link in path:
                up = [parent_joint[x] for x in path[path.index(link) :]]  # child-to-parent order along the cycle
                return up[::-1]
            path.append(link)
            link = parent_joint[link].parent
        done.update(path)
    return []


def dh_chain(
    a: Sequence[float],
    d: Sequence[float],
    alpha: Sequence[float],
    theta_offset: Sequence[float] | None = None,
    modified: bool = False,
    lower: Sequence[float] | None = None,
    upper: Sequence[float] | None = None,
) -> list[JointSpec]:
    """The revolute joints (plus a fixed EE joint) of a DH chain; see :meth:`ggik.Robot.from_dh`."""
    n = len(a)
    if not (len(d) == n and len(alpha) == n) or n == 0:
        raise ChainError(
            f"from_dh: a, d and alpha must be non-empty and of equal length, got {len(a)}, {len(d)}, {len(alpha)}"
        )
    theta_offset = [0.0] * n if theta_offset is None else list(theta_offset)
    lower = [-math.pi] * n if lower is None else list(lower)
    upper = [math.pi] * n if upper is None else list(upper)
    for seq, what in ((theta_offset, "theta_offset"), (lower, "lower"), (upper, "upper")):
        if len(seq) != n:
            raise ChainError(f"from_dh: {what} must have {n} entries, got {len(seq)}")
    values = [float(v) for seq in (a, d, alpha, theta_offset, lower, upper) for v in seq]
    if not all(math.isfinite(v) for v in values):
        raise ChainError("from_dh: DH parameters and limits must be finite numbers")
    link = ["base_link"] + [f"link_{i + 1}" for i in range(n)]
    z = np.array([0.0, 0.0, 1.0])
    joints = []
    if modified:
        for i in range(n):
            origin = (
                np_transform(t=(a[i], 0.0, 0.0))
                @ np_transform(np_rot("x", alpha[i]))
                @ np_transform(t=(0.0, 0.0, d[i]))
                @ np_transform(np_rot("z", theta_offset[i]))
            )
            joints.append(JointSpec(f"joint_{i + 1}", "revolute", link[i], link[i + 1], origin, z, lower[i], upper[i]))
        tool = np.eye(4)
    else:
        const = [
            np_transform(np_rot("z", theta_offset[i]))
            @ np_transform(t=(0.0, 0.0, d[i]))
            @ np_transform(t=(a[i], 0.0, 0.0))
            @ np_transform(np_rot("x", alpha[i]))
            for i in range(n)
        ]
        for i in range(n):
            origin = np.eye(4) if i == 0 else const[i - 1]
            joints.append(JointSpec(f"joint_{i + 1}", "revolute", link[i], link[i + 1], origin, z, lower[i], upper[i]))
        tool = const[-1]
    joints.append(JointSpec("ee_joint", "fixed", link[n], "ee_link", tool, np.array([1.0, 0.0, 0.0])))
    return joints
