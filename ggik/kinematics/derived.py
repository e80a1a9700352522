"""The joints of robots derived from a :class:`ggik.Robot`: with a tool (:func:`tool_joints`) or with joints locked
(:func:`locked_joints`); :meth:`ggik.Robot.with_tool` and :meth:`ggik.Robot.lock` build the new robots from them.

This module sits below :mod:`ggik.kinematics.robot`, which imports it: what the functions read of a robot is the
protocol :class:`Chain` (a :class:`ggik.Robot` is one), not the class."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

import numpy as np
import torch

from ggik.errors import ChainError
from ggik.kinematics import geometry as geo
from ggik.kinematics.chains import np_transform
from ggik.kinematics.urdf import JointSpec

__all__ = ["Chain", "tool_joints", "locked_joints", "MOVING_JOINT_TYPES"]

MOVING_JOINT_TYPES = ("revolute", "continuous", "prismatic")  #: the joint types that move


class Chain(Protocol):
    """What :func:`tool_joints` and :func:`locked_joints` read of a robot (the attributes of :class:`ggik.Robot`)."""

    name: str
    joints: tuple[JointSpec, ...]  #: every joint on the chain, base to EE
    ee_link: str
    joint_names: tuple[str, ...]  #: the dof independent joints (the columns of q)
    dof: int
    lower: torch.Tensor  #: (dof,) float64 [rad or m]
    upper: torch.Tensor  #: (dof,) float64 [rad or m]
    limited: torch.Tensor  #: (dof,) bool: lower/upper are hard limits

    @property
    def link_names(self) -> tuple[str, ...]: ...

    def chain_constants(self) -> tuple[dict[str, np.ndarray], bool]: ...


def tool_joints(robot: Chain, tool, link: str) -> list[JointSpec]:
    """``robot``'s joints and a fixed joint to ``link`` at the rigid transform ``tool`` (4, 4) [m] in its EE frame.
    ``ValueError`` for a non-rigid transform, :class:`ChainError` for a link name already on the chain."""
    T = geo.check_pose(torch.as_tensor(tool, dtype=torch.float64), "tool")
    if T.shape != (4, 4):
        raise ValueError(f"tool must be one (4, 4) transform, got shape {tuple(T.shape)}")
    if link in robot.link_names:
        raise ChainError(f"{robot.name}: link {link!r} is already on the chain")
    joint = JointSpec(f"{robot.ee_link}_to_{link}", "fixed", robot.ee_link, link, T.numpy(), np.array([1.0, 0, 0]))
    return list(robot.joints) + [joint]


def locked_joints(robot: Chain, values: Mapping[str, float]) -> tuple[list[JointSpec], dict[str, float]]:
    """(``robot``'s joints with the named independent joints fixed at the given values [rad or m] and the mimic joints
    that follow only them fixed at their resulting value, the locked values). :class:`ChainError` for an unknown or
    dependent joint, all joints locked, a value not finite or outside the joint's limits."""
    unknown = [k for k in values if k not in robot.joint_names]
    if unknown:
        raise ChainError(
            f"{robot.name}: cannot lock {unknown}: not independent joints; joints: {list(robot.joint_names)}"
        )
    if len(values) >= robot.dof:
        raise ChainError(f"{robot.name}: locking all {robot.dof} joints leaves nothing to move")
    full = {}
    for name, v in values.items():
        v = float(v)
        i = robot.joint_names.index(name)
        if not math.isfinite(v):
            raise ChainError(f"{robot.name}: lock value for {name!r} must be finite, got {v}")
        if bool(robot.limited[i]) and not (robot.lower[i] - 1e-12 <= v <= robot.upper[i] + 1e-12):
            raise ChainError(
                f"{robot.name}: lock value {v} for {name!r} is outside its limits "
                f"[{float(robot.lower[i])}, {float(robot.upper[i])}]"
            )
        full[name] = v
    consts, _ = robot.chain_constants()
    A, b = consts["A"], consts["b"]
    locked_cols = [robot.joint_names.index(n) for n in full]
    new = []
    k = 0
    for j in robot.joints:
        if j.type not in MOVING_JOINT_TYPES:
            new.append(j)
            continue
        row = A[k]
        k += 1
        deps = np.nonzero(row)[0]
        if len(deps) and all(c in locked_cols for c in deps):
            value = float(sum(row[c] * full[robot.joint_names[c]] for c in deps) + b[k - 1])
            if j.type == "prismatic":
                motion = np_transform(t=j.axis * value)
            else:
                angle = torch.tensor(value, dtype=torch.float64)
                motion = np_transform(geo.axis_angle_to_matrix(torch.from_numpy(j.axis), angle).numpy())
            new.append(replace(j, type="fixed", origin=j.origin @ motion, mimic=None, lower=None, upper=None))
        else:
            new.append(j)
    return new, full
