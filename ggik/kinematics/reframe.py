"""The same arm written with other conventions: what another URDF file of one robot may change, and nothing else.

Two files of one arm can differ in where each joint frame sits along its axis, the zero angle of each joint, how each
joint frame is turned (its axis then reads differently), the base mounting and the tool frame, while the arm itself
(its axes as lines in space, their senses and the joint ranges) is the same. :func:`reframe` writes such a file from a
:class:`Robot` and a :class:`Reframing`; :func:`random_reframing` draws one. The map between the two files is exact::

    q_new = q_old - turn                                    # (..., dof) [rad]; limits shift with it
    fk_new(q_new) = base @ fk_old(q_old) @ tool             # EE poses, base-link frames

It serves the invariance tests of the canonical graph and the suite's conventions table (``ggik eval conventions``),
built from ``urdfs/`` and random transforms, so that no other arm's file enters the repository.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from ggik.errors import ChainError
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot import Robot
from ggik.kinematics.urdf import JointSpec

__all__ = ["Reframing", "reframe", "random_reframing"]


def _rigid(T: np.ndarray, name: str) -> np.ndarray:
    return geo.check_pose(torch.as_tensor(np.asarray(T, dtype=np.float64)), name).numpy()


@dataclass(frozen=True)
class Reframing:
    """What a file changes, per moving joint k of the chain (float64 numpy arrays).

    Attributes:
        slide: (dof,) [m] each joint frame moved along its axis (the next link's geometry moved back).
        turn: (dof,) [rad] each joint's zero moved: the new zero pose is the old pose at ``q = turn``.
        rotate: (dof, 3, 3) each joint frame turned by this rotation (its axis reads ``rotate.T @ axis``).
        base: (4, 4) the old base link's pose in the new base link (a mounting).
        tool: (4, 4) the new EE link's pose in the old one (a tool frame).
    """

    slide: np.ndarray
    turn: np.ndarray
    rotate: np.ndarray
    base: np.ndarray
    tool: np.ndarray

    def q_new(self, q_old: torch.Tensor) -> torch.Tensor:
        """Joint values (..., dof) of the new file for values ``q_old`` of the old one (the same arm pose)."""
        return q_old - torch.as_tensor(self.turn, dtype=q_old.dtype, device=q_old.device)

    def q_old(self, q_new: torch.Tensor) -> torch.Tensor:
        """The inverse of :meth:`q_new`."""
        return q_new + torch.as_tensor(self.turn, dtype=q_new.dtype, device=q_new.device)

    def pose_new(self, T_old: torch.Tensor) -> torch.Tensor:
        """EE poses (..., 4, 4) of the new file (new base frame, new tool) for poses of the old one."""
        base = torch.as_tensor(self.base, dtype=T_old.dtype, device=T_old.device)
        tool = torch.as_tensor(self.tool, dtype=T_old.dtype, device=T_old.device)
        return base @ T_old @ tool


def reframe(robot: Robot, how: Reframing, name: str | None = None) -> Robot:
    """``robot`` written with the conventions ``how`` changes (:class:`Reframing`): the same arm, another file.

    Revolute and continuous joints only (:class:`ChainError` otherwise: a prismatic joint's zero is a length). The new
    chain's links keep their names, plus ``mount`` (new base) and ``tool`` (new EE); collision shapes are dropped (they
    are attached to the old link frames). Limits of a revolute joint shift by ``-turn``.
    """
    dof = robot.dof
    slide, turn = np.asarray(how.slide, dtype=np.float64), np.asarray(how.turn, dtype=np.float64)
    rotate = np.asarray(how.rotate, dtype=np.float64)
    if slide.shape != (dof,) or turn.shape != (dof,) or rotate.shape != (dof, 3, 3):
        raise ValueError(
            f"{robot.name}: a Reframing of a {dof}-DOF chain needs slide ({dof},), turn ({dof},) and rotate ({dof}, "
            f"3, 3); got {slide.shape}, {turn.shape}, {rotate.shape}"
        )
    base, tool = _rigid(how.base, "base"), _rigid(how.tool, "tool")
    for k in range(dof):
        _rigid(np.block([[rotate[k], np.zeros((3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]]), f"rotate[{k}]")
    joints: list[JointSpec] = []
    carry = np.eye(4)  # what the next joint's origin must start with: the inverse of the last frame change
    k = 0
    for j in robot.joints:
        origin = carry @ j.origin
        carry = np.eye(4)
        if j.type in ("revolute", "continuous") and j.mimic is None:
            a = np.asarray(j.axis, dtype=np.float64)
            a = a / np.linalg.norm(a)
            R = rotate[k]
            slide_T = np.eye(4)
            slide_T[:3, 3] = slide[k] * a
            turn_T = np.eye(4)
            turn_T[:3, :3] = geo.axis_angle_to_matrix(torch.from_numpy(a), torch.tensor(turn[k])).numpy()
            rot_T = np.eye(4)
            rot_T[:3, :3] = R
            origin = origin @ slide_T @ turn_T @ rot_T
            back = np.eye(4)
            back[:3, 3] = -slide[k] * a
            carry = rot_T.T @ back  # R^T Trans(-slide a): the next origin undoes the slide and the frame turn
            lower = None if j.lower is None else j.lower - turn[k]
            upper = None if j.upper is None else j.upper - turn[k]
            if j.type == "continuous":
                lower = upper = None
            joints.append(replace(j, origin=origin, axis=R.T @ a, lower=lower, upper=upper))
            k += 1
        elif j.type == "fixed":
            joints.append(replace(j, origin=origin))
        else:
            what = "a mimic joint" if j.mimic is not None else f"a {j.type} joint"
            raise ChainError(
                f"{robot.name}: joint {j.name!r} is {what} and cannot be reframed: independent revolute "
                "and continuous joints only"
            )
    mount = JointSpec("mount_joint", "fixed", "mount", robot.base_link, base, np.array([1.0, 0.0, 0.0]))
    tip = JointSpec("tool_joint", "fixed", robot.ee_link, "tool", carry @ tool, np.array([1.0, 0.0, 0.0]))
    return Robot([mount, *joints, tip], name=name or f"{robot.name}~reframed", source=f"{robot.source} (reframed)")


def _random_rotation(g: torch.Generator) -> np.ndarray:
    q = torch.randn(4, generator=g, dtype=torch.float64)
    return geo.quat_to_matrix(q / q.norm()).numpy()


def random_reframing(
    robot: Robot,
    generator: torch.Generator | int,
    slide: float = 0.3,
    turn: float = math.pi,
    rotate: bool = True,
    base: float = 0.5,
    tool: float = 0.2,
) -> Reframing:
    """A random :class:`Reframing` of ``robot``: slides U[-slide, slide] [m], zero turns U[-turn, turn] [rad] (0 for a
    continuous joint: its range is [-pi, pi] in every file, so a turned zero would change which poses it samples),
    frame rotations uniform in SO(3) (``rotate``), a base mounting with a uniform rotation and a translation
    U[-base, base]^3 [m], and a tool with a uniform rotation and a translation U[-tool, tool]^3 [m] (0 for the
    identity)."""
    g = generator if isinstance(generator, torch.Generator) else torch.Generator().manual_seed(int(generator))
    dof = robot.dof

    def uniform(n: int, r: float) -> np.ndarray:
        return (r * (2.0 * torch.rand(n, generator=g, dtype=torch.float64) - 1.0)).numpy()

    def pose(r: float) -> np.ndarray:
        T = np.eye(4)
        if r > 0:
            T[:3, :3] = _random_rotation(g)
            T[:3, 3] = uniform(3, r)
        return T

    turns = uniform(dof, turn) * np.array([t != "continuous" for t in robot.joint_types], dtype=np.float64)
    rotations = np.stack([_random_rotation(g) if rotate else np.eye(3) for _ in range(dof)])
    return Reframing(slide=uniform(dof, slide), turn=turns, rotate=rotations, base=pose(base), tool=pose(tool))
