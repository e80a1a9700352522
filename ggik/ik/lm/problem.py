"""What an LM solve is given, built once (:class:`LMProblem`), and what every backend returns (:class:`LMOutcome`).

Elements are flat: n = goals x starts (or any broadcast batch flattened), each a goal pose and a start. Frames: the
goals are canonical goal poses of their kind in the robot's base-link frame (:func:`ggik.graph.goal_kinds.goal_poses`);
positions in metres, angles in radians.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
import torch

from ggik.graph.goal_kinds import tool_axis
from ggik.ik.refine_config import RefineConfig
from ggik.ik.residuals import goal_axis_basis
from ggik.kinematics.geometry import broadcast_shapes
from ggik.kinematics.robot import Robot

__all__ = ["LMChain", "LMProblem", "LMOutcome", "LMArrays", "limits", "batch_shape"]


class LMOutcome(NamedTuple):
    """Per-element results (n = the problem's elements)."""

    q: torch.Tensor  #: (n, dof) final joint values [rad or m]
    iterations: torch.Tensor  #: (n,) long, LM iterations taken
    pos_err: torch.Tensor  #: (n,) final position error [m]
    rot_err: torch.Tensor  #: (n,) final rotation error [rad] (0 for "position" goals)


class LMArrays(NamedTuple):
    """A problem's tensors as contiguous float64 numpy arrays, for the numpy and compiled backends."""

    goal: np.ndarray  #: (n, 4, 4)
    q0: np.ndarray  #: (n, dof)
    lo: np.ndarray  #: (dof,)
    hi: np.ndarray  #: (dof,)
    axis: np.ndarray  #: (3,)
    basis: np.ndarray  #: (n, 3, 2) for "position+axis" goals, else (n, 0, 0)


@dataclass(frozen=True, eq=False)
class LMChain:
    """What the problems of one robot and one setting share: ``robot``'s chain, its limits ``lo``, ``hi`` (dof,)
    (infinite for continuous joints), the tool axis ``axis`` (3,) in the EE frame, the goal ``kind`` and the settings
    ``cfg``; one device and floating dtype. ``prepared``: what a backend derives from these once (its own keys)."""

    robot: Robot
    lo: torch.Tensor
    hi: torch.Tensor
    axis: torch.Tensor
    kind: str
    cfg: RefineConfig
    prepared: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(
        cls, robot: Robot, kind: str, cfg: RefineConfig, like: torch.Tensor, axis: torch.Tensor | None = None
    ) -> LMChain:
        """The chain of ``robot`` in ``like``'s dtype and device; ``axis`` None: the robot's
        :func:`ggik.graph.goal_kinds.tool_axis`."""
        lo, hi = limits(robot, like)
        return cls(robot, lo, hi, (tool_axis(robot) if axis is None else axis).to(like), kind, cfg)

    def to(self, device: torch.device | str, dtype: torch.dtype) -> LMChain:
        """The same chain with its tensors on ``device`` in ``dtype``."""
        return replace(
            self,
            lo=self.lo.to(device, dtype),
            hi=self.hi.to(device, dtype),
            axis=self.axis.to(device, dtype),
            prepared={},
        )

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi, axis) as contiguous float64 numpy arrays, made once."""
        if "arrays" not in self.prepared:
            self.prepared["arrays"] = tuple(_array(t) for t in (self.lo, self.hi, self.axis))
        return self.prepared["arrays"]


@dataclass(frozen=True, eq=False)
class LMProblem:
    """One LM solve: n goals and starts on ``chain`` (:class:`LMChain`).

    ``goal`` (n, 4, 4) canonical goal poses of the chain's kind in the base-link frame; ``q0`` (n, dof) starts within
    the limits; ``basis`` (n, 3, 2) of "position+axis" goals (:func:`ggik.ik.residuals.goal_axis_basis`), (n, 0, 0)
    otherwise; ``starts`` > 0: each ``starts`` consecutive elements are one goal's starts, stopped at its first solution
    (:class:`ggik.ik.lm.core.FirstSolution`), 0: every element on its own. The chain's device and dtype."""

    chain: LMChain
    goal: torch.Tensor
    q0: torch.Tensor
    basis: torch.Tensor
    starts: int

    @classmethod
    def build(
        cls, robot: Robot, goal: torch.Tensor, q0: torch.Tensor, cfg: RefineConfig, kind: str, axis: torch.Tensor | None
    ) -> tuple[LMProblem, torch.Size]:
        """(problem, batch shape) of goals ``goal`` (..., 4, 4) and starts ``q0`` (..., dof) broadcast together (the
        starts clamped into the limits; with ``cfg.stop_at_first`` the last batch dimension is a goal's starts);
        ``axis`` None: the robot's :func:`ggik.graph.goal_kinds.tool_axis`. Inputs checked by the caller."""
        chain = LMChain.of(robot, kind, cfg, q0, axis)
        batch = batch_shape(q0, goal)
        starts = batch[-1] if cfg.stop_at_first and len(batch) else 0
        return cls.on(chain, goal.to(q0).expand(batch + (4, 4)), q0.expand(batch + (robot.dof,)), int(starts)), batch

    @classmethod
    def on(cls, chain: LMChain, goal: torch.Tensor, q0: torch.Tensor, starts: int) -> LMProblem:
        """The problem of goals (..., 4, 4) and starts (..., dof) of one batch shape on ``chain`` (starts clamped)."""
        n, dof = q0.shape[:-1].numel(), q0.shape[-1]
        goal = goal.detach().reshape(n, 4, 4)  # LM's result is no function of its inputs to differentiate
        q = torch.maximum(torch.minimum(q0.detach().reshape(n, dof), chain.hi), chain.lo)
        basis = goal_axis_basis(goal, chain.axis) if chain.kind == "position+axis" else goal[:, :0, :0]
        return cls(chain, goal, q, basis, starts)

    @property
    def size(self) -> int:
        """n, the number of elements."""
        return self.q0.shape[0]

    @property
    def device(self) -> torch.device:
        return self.q0.device

    def to(self, device: torch.device | str, dtype: torch.dtype) -> LMProblem:
        """The same problem with its tensors on ``device`` in ``dtype``."""
        move = {k: getattr(self, k).to(device, dtype) for k in ("goal", "q0", "basis")}
        return replace(self, chain=self.chain.to(device, dtype), **move)

    def subset(self, index: torch.Tensor, q0: torch.Tensor) -> LMProblem:
        """The elements ``index`` (k,) from starts ``q0`` (k, dof), each on its own (``starts`` 0)."""
        return replace(self, goal=self.goal[index], q0=q0, basis=self.basis[index], starts=0)

    def arrays(self) -> LMArrays:
        """The tensors as contiguous float64 numpy arrays (CPU float64 tensors are shared, not copied)."""
        lo, hi, axis = self.chain.arrays()
        basis = _array(self.basis) if self.chain.kind == "position+axis" else np.zeros((self.size, 0, 0))
        return LMArrays(_array(self.goal), _array(self.q0), lo, hi, axis, basis)


def _array(t: torch.Tensor) -> np.ndarray:
    if t.dtype != torch.float64 or t.device.type != "cpu":
        t = t.to("cpu", torch.float64)
    return np.ascontiguousarray(t.detach().numpy())


def limits(robot: Robot, like: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(lo, hi) (dof,) joint limits of ``robot`` in ``like``'s dtype and device; -inf, inf for continuous joints."""
    inf = torch.tensor(float("inf"), dtype=like.dtype, device=like.device)
    limited = robot.limited.to(like.device)
    return torch.where(limited, robot.lower.to(like), -inf), torch.where(limited, robot.upper.to(like), inf)


def batch_shape(q: torch.Tensor, T_goal: torch.Tensor) -> torch.Size:
    """Broadcast batch shape of q (..., dof) and T_goal (..., 4, 4); ValueError when they do not broadcast."""
    try:
        return broadcast_shapes(q.shape[:-1], T_goal.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"the batch shapes of q {tuple(q.shape)} and T_goal {tuple(T_goal.shape)} do not broadcast "
            f"({tuple(q.shape[:-1])} vs {tuple(T_goal.shape[:-2])})"
        ) from None
