"""The goals of the GGIK paper's Table 1 (Limoyo, Maric et al.): FK(q) with every joint but the last uniform in
[-pi, pi], the last 0, and the joint limits ignored; each arm's goals from its own random stream, keyed by its name, so
that an arm's goals are the same alone as in any list of arms. ``ggik eval paper`` and a run's validation with
``val.protocol=paper`` draw them here."""

from __future__ import annotations

import torch

from ggik import rng
from ggik.errors import GGIKError
from ggik.kinematics.joint_draws import FULL_TURN, uniform_joints
from ggik.kinematics.robot import Robot

__all__ = ["paper_goal_q", "paper_goals"]


def paper_goal_q(robot: Robot, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
    """``n`` configurations (n, dof) [rad] of the GGIK paper's protocol: joints 1..dof-1 uniform in [-pi, pi]
    (:func:`ggik.kinematics.joint_draws.uniform_joints`, the training samplers' rule), the last joint 0, whatever
    the limits (FK holds outside them; the goals FK(q) need not be reachable within them). Drawn in float64 on the
    generator's device. GGIKError for a robot with a prismatic joint (the protocol draws angles)."""
    prismatic = [name for name, kind in zip(robot.joint_names, robot.joint_types) if kind == "prismatic"]
    if prismatic:
        raise GGIKError(f"{robot.name}: the paper's protocol draws joint angles, but {prismatic} are prismatic")
    on = generator.device if generator is not None else None
    u = torch.rand(n, robot.dof, generator=generator, dtype=torch.float64, device=on)
    q = uniform_joints(u, *FULL_TURN)
    q[:, -1] = 0.0
    return q


def paper_goals(robots: list[Robot], n: int, seed: int) -> list[tuple[Robot, torch.Tensor, torch.Tensor]]:
    """Per robot: (robot, q (n, dof) [rad], T_goal = FK(q) (n, 4, 4) in its base frame), q by :func:`paper_goal_q`
    from the stream ``(seed, PAPER_GOALS, name_key(robot.name))``."""
    if n < 1 or not robots:
        raise GGIKError("an evaluation needs at least one robot and one goal per robot")
    out = []
    for robot in robots:
        g = rng.step_generator(seed, rng.PAPER_GOALS, rng.name_key(robot.name))
        q = paper_goal_q(robot, n, g)
        out.append((robot, q, robot.fk(q)))
    return out
