"""One pose goal per call, as a robot program or a ROS service asks IK: the strategy "random" without per-call work.

:meth:`ggik.GGIK.solve` hands a call here when it is one pose goal on the CPU with the strategy "random", LM and no
obstacles (:func:`takes`), and the LM backend :func:`ggik.ik.lm.select.select_backend` chooses for the call's problem
is not torch (:attr:`RobotSolver.fast`: the choice is select_backend's, made once, not a copy of its rule). A
:class:`RobotSolver` is made once per (robot, settings) and kept by the solver: its
:class:`ggik.ik.lm.problem.LMChain` (limits, tool axis, the backend's prepared constants) and its backend
(``select_backend`` on its problem, as the general path's :func:`ggik.ik.refine.lm_refine_checked` asks) are chosen
once, and a call is the pose check, the random starts, the backend and the common ranking
(:func:`ggik.ik.result.best_first_order`) in numpy. The result is that of the general path: the same
random starts from the same generator, the same LM, the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ggik.ik.lm.problem import LMChain, LMProblem
from ggik.ik.lm.select import select_backend
from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult, best_first_order
from ggik.kinematics.geometry import check_pose, is_rigid
from ggik.kinematics.robot import Robot

__all__ = ["RobotSolver", "takes"]


def takes(T_goal: Any, goal: str, method: str | None, clearance: Any) -> bool:
    """Whether a call of the strategy "random" with these arguments has the single-goal path's shape: one pose goal
    (4, 4) or (1, 4, 4) on the CPU, LM, no obstacles. The path then solves it when its :class:`RobotSolver`'s backend
    is not torch (:attr:`RobotSolver.fast`)."""
    return (
        goal == "pose"
        and method == "lm"
        and clearance is None
        and isinstance(T_goal, torch.Tensor)
        and T_goal.device.type == "cpu"
        and T_goal.shape in ((4, 4), (1, 4, 4))
        and T_goal.is_floating_point()
    )


class RobotSolver:
    """LM from ``starts`` uniform random starts for one pose goal of ``robot`` at a time (module docstring).

    ``cfg``: the tolerances and LM settings (``stop_at_first``: a goal's starts stop at its first solution)."""

    def __init__(self, robot: Robot, cfg: RefineConfig, starts: int) -> None:
        self.robot, self.cfg, self.starts = robot, cfg, starts
        self.chain = LMChain.of(robot, "pose", cfg, torch.zeros((), dtype=torch.float64))
        self.no_basis = torch.zeros((starts, 0, 0), dtype=torch.float64)  # pose goals: no position+axis basis
        self.stop = starts if cfg.stop_at_first else 0
        # the backend of every call's problem (its size, device and dtype decide, the same for every call)
        like = self._problem(torch.eye(4, dtype=torch.float64), torch.zeros(starts, robot.dof, dtype=torch.float64))
        self.backend = select_backend(like, prefer=cfg.lm_backends)
        #: whether this path solves the calls: select_backend chose a backend other than torch for their problem (torch:
        #: the general path, which batches the same LM in torch without the conversions to numpy)
        self.fast = self.backend.name != "torch"

    def _problem(self, T: torch.Tensor, q0: torch.Tensor) -> LMProblem:
        """The float64 CPU problem of pose ``T`` (4, 4) from starts ``q0`` (starts, dof) within the limits."""
        return LMProblem(self.chain, T.expand(self.starts, 4, 4), q0, self.no_basis, self.stop)

    def solve(self, T_goal: torch.Tensor, generator: torch.Generator | None = None) -> IKResult:
        """An :class:`IKResult` (1, starts) for one pose (4, 4) or (1, 4, 4) [m] in the base-link frame."""
        T = T_goal.detach().reshape(4, 4).to(torch.float64)
        if not is_rigid(T.numpy()):
            check_pose(T[None], "T_goal")  # raises the general path's error for this pose
        problem = self._problem(T, self.robot.sample_q(self.starts, generator))  # the starts within the limits
        q, _, pos, rot = (t.numpy() for t in self.backend.solve(problem))
        cfg = self.cfg
        success = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
        within = np.asarray(self.robot.joints_within_limits(q)).all(-1)  # numpy in, numpy out
        order = best_first_order(pos / cfg.pos_tol + rot / cfg.rot_tol, within, success)

        def take(a: Any) -> torch.Tensor:  # a numpy array (K,)
            return torch.from_numpy(np.ascontiguousarray(a[order]))[None]

        return IKResult(take(q), take(pos), take(rot), take(success), take(within))
