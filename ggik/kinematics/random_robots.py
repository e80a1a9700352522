"""Random manipulators for training and generalisation studies.

* :func:`random_robot` draws a standard-DH revolute chain with the rules of the GGIK reference data
  generator (GraphIK ``random_revolute_robot_graph``), so that our random families match the paper's.
* :func:`randomize_links` perturbs an existing robot: every joint origin's translation is scaled by
  its own factor ``s ~ U[1 - r, 1 + r]`` (a clean per-link scale; the reference scales relative
  transforms against already-modified frames, so its deviations accumulate).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import torch

from ggik.kinematics.robot import Robot

__all__ = ["random_robot", "randomize_links"]

MAX_LENGTH = 0.5  #: upper bound of the random link lengths d and |a| [m]


def _generator(generator: torch.Generator | int | None) -> torch.Generator:
    if isinstance(generator, torch.Generator):
        return generator
    g = torch.Generator()
    if generator is None:
        g.seed()
    else:
        g.manual_seed(int(generator))
    return g


def random_robot(dof: int, generator: torch.Generator | int | None = None, name: str | None = None) -> Robot:
    """A random standard-DH revolute chain of ``dof`` joints, limits [-pi, pi].

    Rules (reference GGIK generator; lengths in m, angles in rad, U = uniform, B = Bernoulli(1/2)):
    joint 1: alpha in {+-pi/2}, a = 0, d = U(0, 0.5) * B. Joints 2 .. n-1: alpha in {+-pi/2} if the two
    previous alphas are both 0, else alpha in {+-pi/2} with probability 3/4 and 0 with 1/4; a non-zero
    alpha has a = 0, d = U(0, 0.5) * B; a zero alpha has a = U(-0.5, 0.5), d = 0, alpha += pi * B.
    Last joint: alpha = 0, a = 0, d = U(0, 0.5) * B.

    Args:
        dof: number of joints (>= 2).
        generator: a ``torch.Generator``, an integer seed, or None for a fresh random seed.
    """
    if int(dof) != dof or dof < 2:
        raise ValueError(f"random_robot: dof must be an integer >= 2, got {dof!r}")
    g = _generator(generator)

    def u() -> float:
        return float(torch.rand((), generator=g, dtype=torch.float64))

    def coin() -> bool:
        return u() < 0.5

    a: list[float] = []
    d: list[float] = []
    alpha: list[float] = []
    for i in range(dof):
        if i == 0:
            al = math.pi / 2 if coin() else -math.pi / 2
            ai, di = 0.0, (u() * MAX_LENGTH if coin() else 0.0)
        elif i == dof - 1:
            al, ai, di = 0.0, 0.0, (u() * MAX_LENGTH if coin() else 0.0)
        else:
            two_zero = i >= 2 and alpha[-1] == 0.0 and alpha[-2] == 0.0
            if two_zero or u() < 0.75:
                al = math.pi / 2 if coin() else -math.pi / 2
            else:
                al = 0.0
            if al != 0.0:
                ai, di = 0.0, (u() * MAX_LENGTH if coin() else 0.0)
            else:
                ai, di = (u() - 0.5) * 2 * MAX_LENGTH, 0.0
                if coin():
                    al = math.pi
        a.append(ai)
        d.append(di)
        alpha.append(al)
    return Robot.from_dh(a, d, alpha, name=name or f"random{dof}")


def randomize_links(robot: Robot, fraction: float, generator: torch.Generator | int | None = None) -> Robot:
    """A copy of ``robot`` whose joint-origin translations are each scaled by ``U[1 - fraction, 1 + fraction]``.

    Rotations, axes and limits are unchanged; every joint on the chain (fixed ones included) gets its
    own factor. ``fraction`` must lie in [0, 1).
    """
    if not 0.0 <= fraction < 1.0:
        raise ValueError(f"randomize_links: fraction must lie in [0, 1), got {fraction}")
    g = _generator(generator)
    scales = 1.0 + fraction * (2.0 * torch.rand(len(robot.joints), generator=g, dtype=torch.float64) - 1.0)
    joints = []
    for j, s in zip(robot.joints, scales.tolist()):
        origin = np.array(j.origin, copy=True)
        origin[:3, 3] *= s
        joints.append(replace(j, origin=origin))
    return Robot(joints, name=f"{robot.name}~{fraction:g}")
