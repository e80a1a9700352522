"""One pose goal per call, as a robot program or a ROS service asks IK: the strategy "random" without per-call work.

:meth:`ggik.GGIK.solve` hands a call here when it is one pose goal on the CPU with the strategy "random", LM, no
obstacles, and the compiled LM is installed (:mod:`ggik.ik.lm_compiled`). A :class:`RobotSolver` is made once per
(robot, settings) and kept by the solver: the chain's constants, limits and tool axis are numpy arrays ready for the
kernel, the pose is checked in numpy, and the call is the kernel plus the ranking every strategy uses, in numpy. The
result is exactly that of the general path (``tests/test_single_goal.py``): the same random starts from the same
generator, the same LM, the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ggik.ik import lm_compiled
from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult
from ggik.kinematics.geometry import check_pose
from ggik.kinematics.robot import Robot

__all__ = ["RobotSolver", "takes"]

_POSE_TOL = 1e-6  #: check_pose's default tolerance, which this module's check applies too


def takes(T_goal: Any, goal: str, method: str | None, clearance: Any, starts: int = 1) -> bool:
    """Whether a call of the strategy "random" with these arguments (``starts`` random starts) takes the single-goal
    path: the compiled LM, as the general path would run it."""
    return (
        goal == "pose"
        and lm_compiled.COMPILED_MIN_ELEMENTS <= starts <= lm_compiled.COMPILED_MAX_ELEMENTS
        and method == "lm"
        and clearance is None
        and isinstance(T_goal, torch.Tensor)
        and T_goal.device.type == "cpu"
        and T_goal.shape in ((4, 4), (1, 4, 4))
        and T_goal.is_floating_point()
        and lm_compiled.available()
    )


class RobotSolver:
    """LM from ``starts`` uniform random starts for one pose goal of ``robot`` at a time, compiled (module docstring).

    ``cfg``: the tolerances and LM settings (``stop_at_first``: a goal's starts stop at its first solution)."""

    def __init__(self, robot: Robot, cfg: RefineConfig, starts: int) -> None:
        self.robot, self.cfg, self.starts = robot, cfg, starts
        self.consts = robot.chain_constants()
        lo = torch.where(robot.limited, robot.lower, -torch.inf).to(torch.float64)
        hi = torch.where(robot.limited, robot.upper, torch.inf).to(torch.float64)
        self.lo, self.hi = lo.numpy(), hi.numpy()
        from ggik.graph.goal_kinds import tool_axis

        self.axis = tool_axis(robot).to(torch.float64).numpy()
        self.no_basis = np.zeros((starts, 0, 0))
        tol = 1e-9  # Robot.joints_within_limits's
        self.low, self.high = (robot.lower - tol).numpy(), (robot.upper + tol).numpy()
        self.unlimited = (~robot.limited).numpy()

    def solve(self, T_goal: torch.Tensor, generator: torch.Generator | None = None) -> IKResult:
        """An :class:`IKResult` (1, starts) for one pose (4, 4) or (1, 4, 4) [m] in the base-link frame."""
        T = T_goal.detach().reshape(4, 4).to(torch.float64)
        pose = T.numpy()
        if not _rigid(pose):
            check_pose(T[None], "T_goal")  # raises the general path's error for this pose
        q0 = self.robot.sample_q(self.starts, generator)
        goals = np.ascontiguousarray(np.broadcast_to(pose, (self.starts, 4, 4)))
        stop = self.starts if self.cfg.stop_at_first else 0
        q, _, pos, rot = lm_compiled.lm_compiled(
            self.consts,
            goals,
            np.clip(q0.numpy(), self.lo, self.hi),
            self.lo,
            self.hi,
            self.axis,
            self.no_basis,
            kind="pose",
            starts=stop,
            cfg=self.cfg,
        )
        return self._ranked(q, pos, rot)

    def _ranked(self, q: np.ndarray, pos: np.ndarray, rot: np.ndarray) -> IKResult:
        """:func:`ggik.ik.strategies.ranked_solutions` of one goal in numpy: the same tests (Robot.joints_within_limits,
        Tolerances.met) and the same stable sorts (:func:`ggik.ik.result.sort_best_first`), without torch's per-call
        work; (1, starts) tensors."""
        cfg = self.cfg
        within = (((q >= self.low) & (q <= self.high)) | self.unlimited).all(-1)
        success = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
        order = np.argsort(pos / cfg.pos_tol + rot / cfg.rot_tol, kind="stable")
        for key in (within, success):  # stable: the last key applied is the primary one
            order = order[np.argsort(~key[order], kind="stable")]

        def take(a: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(a[order]))[None]

        return IKResult(take(q), take(pos), take(rot), take(success), take(within))


def _rigid(pose: np.ndarray) -> bool:
    """Whether a (4, 4) array is a finite rigid transform by :func:`ggik.kinematics.geometry.check_pose`'s test."""
    if not np.isfinite(pose).all() or np.abs(pose[3] - (0.0, 0.0, 0.0, 1.0)).max() > _POSE_TOL:
        return False
    R = pose[:3, :3]
    return bool(np.abs(R.T @ R - np.eye(3)).max() <= _POSE_TOL and abs(np.linalg.det(R) - 1.0) <= _POSE_TOL)
