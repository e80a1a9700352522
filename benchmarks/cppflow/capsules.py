"""CppFlow's own collision model as a :class:`ggik.collision.CollisionModel`: the per-link capsules of its robot
library (jstmn/jrl ``urdfs/*/capsules/``, copied to ``urdfs/capsules/``) and its rule for the self-collision pairs.

jrl (``robot.py``: ``_generate_self_collision_pairs``; ``robots.py``: the ``Panda``, ``Fetch`` and ``FetchArm``
classes) fixes one capsule ``(x1, y1, z1, x2, y2, z2, radius)`` [m] in each listed link's frame and checks every pair
of these links for self-collision except: the pairs its robot class ignores (never or always in contact, and a few
more), links joined by a joint of the chain, and a link without a capsule (the Panda's ``panda_link8``). Every
capsule is checked against the obstacle cubes. The Fetch's ``head_tilt_link`` is off the arm's chain: jrl attaches it
with the head's joints at zero, and so does this model (fixed to ``torso_lift_link``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from benchmarks.common.scripts import REPO, BenchmarkError
from ggik import Robot
from ggik.collision import CollisionModel
from ggik.kinematics.urdf import read_urdf

__all__ = ["cppflow_collision_model", "IGNORED_PAIRS"]

CAPSULES = Path(__file__).resolve().parent / "urdfs" / "capsules"
_PANDA_IGNORED = [  # jrl robots.py: Panda's ignored_collision_pairs (its own three, then PANDA_NEVER_COLLIDING_LINKS)
    ("panda_hand", "panda_link7"),
    ("panda_rightfinger", "panda_leftfinger"),
    ("panda_link7", "panda_link5"),
    ("panda_link0", "panda_link2"),
    ("panda_link0", "panda_link3"),
    ("panda_link0", "panda_link4"),
    ("panda_link1", "panda_link3"),
    ("panda_link1", "panda_link4"),
    ("panda_link2", "panda_link4"),
    ("panda_link3", "panda_link5"),
    ("panda_link3", "panda_link6"),
    ("panda_link3", "panda_link7"),
    ("panda_link4", "panda_link6"),
    ("panda_link4", "panda_link7"),
]
_FETCH_IGNORED = [  # jrl robots.py: FETCH_ADDITIONAL_IGNORED_COLLISION_PAIRS, then _ALWAYS_ and _NEVER_COLLIDING_
    ("torso_lift_link", "torso_fixed_link"),
    ("torso_lift_link", "shoulder_lift_link"),
    ("r_gripper_finger_link", "l_gripper_finger_link"),
    ("bellows_link2", "base_link"),
    ("bellows_link2", "torso_fixed_link"),
    ("wrist_flex_link", "gripper_link"),
    ("torso_lift_link", "shoulder_lift_link"),
    ("wrist_flex_link", "gripper_link"),
    ("base_link", "shoulder_pan_link"),
    ("base_link", "shoulder_lift_link"),
    ("base_link", "upperarm_roll_link"),
    ("base_link", "head_tilt_link"),
    ("shoulder_pan_link", "upperarm_roll_link"),
    ("shoulder_pan_link", "elbow_flex_link"),
    ("shoulder_pan_link", "forearm_roll_link"),
    ("shoulder_pan_link", "wrist_flex_link"),
    ("shoulder_pan_link", "wrist_roll_link"),
    ("shoulder_pan_link", "head_tilt_link"),
    ("shoulder_lift_link", "elbow_flex_link"),
    ("shoulder_lift_link", "forearm_roll_link"),
    ("shoulder_lift_link", "wrist_flex_link"),
    ("shoulder_lift_link", "wrist_roll_link"),
    ("shoulder_lift_link", "head_tilt_link"),
    ("upperarm_roll_link", "forearm_roll_link"),
    ("upperarm_roll_link", "wrist_flex_link"),
    ("upperarm_roll_link", "wrist_roll_link"),
    ("upperarm_roll_link", "gripper_link"),
    ("elbow_flex_link", "wrist_flex_link"),
    ("elbow_flex_link", "wrist_roll_link"),
    ("elbow_flex_link", "gripper_link"),
    ("forearm_roll_link", "gripper_link"),
]
IGNORED_PAIRS = {"panda": _PANDA_IGNORED, "fetch": _FETCH_IGNORED}  #: jrl's ignored pairs per robot family
#: the links with a capsule per robot family, in jrl's order (file stems under urdfs/capsules/)
_CAPSULE_FILES = {
    "panda": {f"panda_link{i}": f"link{i}" for i in range(8)} | {"panda_hand": "hand"},
    "fetch": {
        link: link
        for link in (
            "base_link",
            "torso_lift_link",
            "shoulder_pan_link",
            "shoulder_lift_link",
            "upperarm_roll_link",
            "elbow_flex_link",
            "forearm_roll_link",
            "wrist_flex_link",
            "wrist_roll_link",
            "gripper_link",
            "head_tilt_link",
        )
    },
}
_HEAD = ("torso_lift_link", ("head_pan_joint", "head_tilt_joint"))  #: the Fetch head's parent and joints (at zero)


def cppflow_collision_model(robot: Robot, family: str) -> CollisionModel:
    """CppFlow's collision model (module docstring) of ``robot``: CppFlow's Panda (``family`` "panda") or Fetch
    ("fetch", with or without its torso locked)."""
    if family not in _CAPSULE_FILES:
        raise BenchmarkError(f"no CppFlow capsules for {family!r}: panda or fetch")
    names = robot.link_names
    links, a, b, radius, where = [], [], [], [], {}
    for link, stem in _CAPSULE_FILES[family].items():
        x1, y1, z1, x2, y2, z2, r = np.loadtxt(CAPSULES / family / f"{stem}.txt", delimiter=",")
        p, q = np.array([x1, y1, z1]), np.array([x2, y2, z2])
        if link not in names:  # the Fetch's head: fixed to the torso with its joints at zero
            parent, T = _head_transform()
            link_on_chain = parent
            p, q = T[:3, :3] @ p + T[:3, 3], T[:3, :3] @ q + T[:3, 3]
        else:
            link_on_chain = link
        where[link] = len(links)
        links.append(names.index(link_on_chain))
        a.append(p)
        b.append(q)
        radius.append(r)
    ignored = {tuple(sorted(p)) for p in IGNORED_PAIRS[family]}
    ignored |= {tuple(sorted((j.parent, j.child))) for j in robot.joints}  # links joined by a joint of the chain
    capsuled = list(where)
    pairs = [
        (where[u], where[v])
        for i, u in enumerate(capsuled)
        for v in capsuled[i + 1 :]
        if tuple(sorted((u, v))) not in ignored
    ]
    link_index = torch.tensor(links)
    f64 = torch.float64
    return CollisionModel(
        robot_name=robot.name,
        link_names=names,
        link=link_index,
        a=torch.tensor(np.array(a), dtype=f64),
        b=torch.tensor(np.array(b), dtype=f64),
        radius=torch.tensor(radius, dtype=f64),
        source=tuple(f"cppflow capsule of {link}" for link in where),
        moving=torch.ones(len(links), dtype=torch.bool),  # jrl checks every capsule against the obstacles
        self_pairs=torch.tensor(pairs, dtype=torch.long).reshape(-1, 2),
    )


def _head_transform() -> tuple[str, np.ndarray]:
    """(the head's parent link, (4, 4) head_tilt_link in its frame with the head's joints at zero)."""
    model = read_urdf(REPO / "benchmarks" / "adapt" / "urdfs" / "fetch_formatted.urdf")
    by_name = {j.name: j for j in model.joints}
    parent, joints = _HEAD
    T = np.eye(4)
    for name in joints:
        T = T @ by_name[name].origin
    return parent, T
