"""Joint angles from (noisy) point sets of a graph (:class:`ggik.graph.structure.GraphStructure`; what
:meth:`ggik.graph.RobotGraph.joint_angles` calls): GGIK's sequential azimuth rule, made robust
(:func:`recover_joint_angles`), and angles moved into the joint limits (:func:`wrap_to_limits`)."""

from __future__ import annotations

import math
from typing import Protocol

import torch

from ggik.graph.frames import AXIS_LENGTH, rz_left
from ggik.graph.structure import GraphStructure
from ggik.kinematics import geometry as geo
from ggik.kinematics.robot import Robot

__all__ = ["recover_joint_angles", "wrap_to_limits", "PosedGoals"]


class PosedGoals(Protocol):
    """What :func:`recover_joint_angles` reads of goals: a :class:`ggik.graph.Goals` is one (that class names the
    graph that posed it, so it lives above this module)."""

    @property
    def in_graph(self) -> torch.Tensor:
        """(..., 4, 4) the goals as poses of the last graph frame F_n in the graph frame."""
        ...

    @property
    def kind(self) -> str:
        """The goal kind (:data:`ggik.graph.goal_kinds.GOAL_KINDS`)."""
        ...


def recover_joint_angles(graph: GraphStructure, points: torch.Tensor, goals: PosedGoals) -> torch.Tensor:
    """Joint values (..., n) of ``graph`` from point sets (..., N, 3) in its graph frame and the checked ``goals``
    (..., posed by ``graph``: ``goals.graph``).

    1. the generated base points (p0, x, y, q0) are fitted to their true positions by a proper rigid motion (Kabsch;
       the reference only normalises the axes), which maps all points into the graph frame;
    2. for joint i < n, with frame F_{i-1} rebuilt from the angles found so far, theta_i is the rotation about z of
       F_{i-1} that best aligns (least squares in the xy plane) the home positions of p_i and q_i with the generated
       ones;
    3. the last joint does not move p_n, q_n (they lie on its axis): theta_n is the roll about the last axis that best
       matches the goal orientation; for partial goal kinds (free roll) joint n - 1 also fits the generated p_n, q_n
       (q_n is sampled for a position goal) and theta_n is 0 (clamped into its limits);
    4. each angle is moved into the joint limits when a 2 pi equivalent lies inside them (:func:`wrap_to_limits`).
    """
    dtype, device = points.dtype, points.device
    c = graph.constants(dtype, device)
    if not torch.isfinite(points).all():
        raise ValueError("points contain NaN or inf")
    R, t = geo.kabsch(points[..., :4, :], c["home"][:4].expand(points.shape[:-2] + (4, 3)))
    P = (points @ R.transpose(-1, -2)) + t[..., None, :]
    G = goals.in_graph.to(dtype)
    batch = geo.broadcast_shapes(P.shape[:-2], G.shape[:-2])
    T = torch.eye(4, dtype=dtype, device=device).expand(batch + (4, 4))
    thetas = []
    for i in range(1, graph.n):
        Ci = c["C"][i - 1]
        home_p = Ci[:3, 3]
        home_q = home_p + AXIS_LENGTH * Ci[:3, 2]
        rows, homes = [2 * i + 2, 2 * i + 3], [home_p, home_q]  # p_i, q_i
        if i == graph.n - 1 and goals.kind != "pose":  # p_n, q_n too: they turn with joint n - 1
            Cn = Ci @ c["C"][-1]
            rows, homes = rows + [2 * i + 4, 2 * i + 5], homes + [Cn[:3, 3], Cn[:3, 3] + AXIS_LENGTH * Cn[:3, 2]]
        gen = P[..., rows, :]  # (..., k, 3)
        local = (gen - T[..., None, :3, 3]) @ T[..., :3, :3]  # R^T (x - t), row-vector form
        h = torch.stack(homes, dim=0)
        num = (h[:, 0] * local[..., 1] - h[:, 1] * local[..., 0]).sum(-1)
        den = (h[:, 0] * local[..., 0] + h[:, 1] * local[..., 1]).sum(-1)
        theta = torch.atan2(num, den)
        thetas.append(theta)
        T = T @ rz_left(theta, Ci)
    M = T[..., :3, :3].transpose(-1, -2) @ G[..., :3, :3] @ c["C"][-1][:3, :3].transpose(-1, -2)
    last = torch.atan2(M[..., 1, 0] - M[..., 0, 1], M[..., 0, 0] + M[..., 1, 1])
    if goals.kind != "pose":  # the roll is free and moves no point: 0, within the limits
        last = torch.zeros_like(last)
        if bool(graph.robot.limited[-1]):
            last = last.clamp(float(graph.robot.lower[-1]), float(graph.robot.upper[-1]))
    thetas.append(last)
    return wrap_to_limits(graph.robot, torch.stack(thetas, dim=-1))


def wrap_to_limits(robot: Robot, theta: torch.Tensor) -> torch.Tensor:
    """Angles (..., n) in (-pi, pi] of ``robot``'s joints moved by a multiple of 2 pi into [lower, upper] where
    possible.

    An angle already inside its limits is kept; otherwise the in-range equivalent nearest to it is
    taken; when no equivalent lies inside, the angle is left unchanged.
    """
    lo, hi, two_pi = robot.lower.to(theta), robot.upper.to(theta), 2.0 * math.pi
    up = theta + two_pi * torch.ceil((lo - theta) / two_pi)  # smallest equivalent >= lo
    down = theta - two_pi * torch.ceil((theta - hi) / two_pi)  # largest equivalent <= hi
    inside = (theta >= lo) & (theta <= hi)
    cand = torch.where(theta < lo, up, down)
    ok = (cand >= lo) & (cand <= hi)
    limited = robot.limited.to(theta.device)
    return torch.where(inside | ~ok | ~limited, theta, cand)
