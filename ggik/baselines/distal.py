"""The distal teacher (Jordan and Rumelhart's distal learning), a learned IK baseline: a deterministic network
g(x*) -> theta trained through the robot's exact forward kinematics, so that no inverse (pose, joints) pairs are needed.

As in "Comparison of Distal Teacher Learning with Numerical and Analytical Methods to Solve Inverse Kinematics":
one prediction per query; each joint's output is a (cos, sin) pair turned into an angle (atan2); the loss is the
position error [m] plus ``rot_weight`` [m/rad] times the orientation error 2 acos|q_hat . q*| [rad] (pose goals), plus
``limit_weight`` times how far [rad] each joint leaves its limits. The training set is ``samples`` goals: the FK of
configurations uniform within the limits (only their poses are used). Inputs: the goal position divided by the arm's
reach, and for pose goals the first two columns of the goal rotation (a continuous 6-number form).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ggik.baselines.base import TrainedBaseline, check_config, training_pairs
from ggik.baselines.goals import goal_features, goal_poses
from ggik.baselines.model_file import robot_fingerprint
from ggik.ik.result import IKResult
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.robot import Robot

__all__ = ["DistalConfig", "DistalTeacher", "DISTAL_KIND"]

DISTAL_KIND = "distal-teacher"
GOALS = ("pose", "position")


@dataclass(frozen=True)
class DistalConfig:
    """The distal teacher's network and training (defaults: a CPU budget of about a minute per robot).

    Attributes:
        goal: "pose" (position and orientation) or "position" (position only).
        hidden: width of each hidden layer; layers: hidden layers (ReLU).
        samples: training-set size (goals from uniform configurations); steps: Adam steps; batch: goals per step.
        lr: Adam's learning rate. rot_weight: [m/rad] weight of the orientation error against the position error.
        limit_weight: [m/rad] weight of the distance outside the joint limits. seed: the training set and the init.
    """

    goal: str = "pose"
    hidden: int = 256
    layers: int = 3
    samples: int = 100_000
    steps: int = 4000
    batch: int = 256
    lr: float = 1e-3
    rot_weight: float = 0.1
    limit_weight: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_config(
            self, ("hidden", "layers", "samples", "steps", "batch"), ("lr", "rot_weight", "limit_weight"), False
        )


class _Net(nn.Module):
    """inputs (B, 3 or 9) -> (B, dof, 2) unit (cos, sin) pairs."""

    def __init__(self, inputs: int, dof: int, hidden: int, layers: int) -> None:
        super().__init__()
        sizes = [inputs] + [hidden] * layers
        body: list[nn.Module] = []
        for a, b in zip(sizes[:-1], sizes[1:]):
            body += [nn.Linear(a, b), nn.ReLU()]
        self.body = nn.Sequential(*body, nn.Linear(sizes[-1], 2 * dof))
        self.dof = dof

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.body(x).view(x.shape[0], self.dof, 2)
        return out / out.norm(dim=-1, keepdim=True).clamp(min=1e-9)


def _angle_error(R: torch.Tensor, R_goal: torch.Tensor) -> torch.Tensor:
    """(B,) rotation angle between R and R_goal [rad], 2 acos|q . q*| in a form with a finite gradient at 0."""
    M = R.transpose(-1, -2) @ R_goal
    v = torch.stack([M[:, 2, 1] - M[:, 1, 2], M[:, 0, 2] - M[:, 2, 0], M[:, 1, 0] - M[:, 0, 1]], -1)
    s = torch.sqrt((v * v).sum(-1) + 1e-12) / 2
    c = (M.diagonal(dim1=-2, dim2=-1).sum(-1) - 1) / 2
    return torch.atan2(s, c)


class DistalTeacher(TrainedBaseline):
    """A trained distal-teacher network for one robot: :meth:`fit` trains one, :meth:`solve` answers goals, and
    :meth:`save` / :meth:`load` keep it in a baseline file (:mod:`ggik.baselines.model_file`)."""

    kind = DISTAL_KIND
    config_type = DistalConfig
    net: _Net

    @staticmethod
    def build(config: DistalConfig, dof: int) -> _Net:
        return _Net(3 if config.goal == "position" else 9, dof, config.hidden, config.layers)

    @classmethod
    def fit(cls, robot: Robot, config: DistalConfig | None = None, progress: bool = False) -> DistalTeacher:
        """Train a distal teacher for ``robot`` on the CPU (module docstring; ``progress``: a tqdm bar)."""
        cfg = config or DistalConfig()
        t0, c0 = time.perf_counter(), time.process_time()
        gen, _, goals, scale = training_pairs(robot, cfg.samples, cfg.seed)
        net = cls.build(cfg, robot.dof)
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
        lo, hi = robot.lower.float(), robot.upper.float()
        limited = robot.limited
        steps: Any = range(cfg.steps)
        if progress:
            from tqdm import tqdm

            steps = tqdm(steps, desc=f"distal teacher {robot.name}", unit="step")
        for _ in steps:
            idx = torch.randint(cfg.samples, (cfg.batch,), generator=gen)
            T = goals[idx]
            theta = cls._angles(net, T, cfg.goal, scale)
            loss = cls._loss(robot, theta, T, cfg, lo, hi, limited).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        training = {
            "samples": cfg.samples,
            "steps": cfg.steps,
            "wall_s": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0,
            "final_loss": float(loss.detach()),
            "fingerprint": robot_fingerprint(robot),
        }
        return cls(net, cfg, robot, scale, training)

    @staticmethod
    def _angles(net: _Net, T: torch.Tensor, goal: str, scale: float) -> torch.Tensor:
        cs = net(goal_features(T, goal, scale))
        return torch.atan2(cs[..., 1], cs[..., 0])

    @staticmethod
    def _loss(robot, theta, T, cfg: DistalConfig, lo, hi, limited) -> torch.Tensor:
        """(B,) the distal loss of joint angles theta (B, dof) for goals T (B, 4, 4) (module docstring)."""
        E = robot.fk(theta)
        loss = (E[:, :3, 3] - T[:, :3, 3]).norm(dim=-1)
        if cfg.goal == "pose":
            loss = loss + cfg.rot_weight * _angle_error(E[:, :3, :3], T[:, :3, :3])
        out = ((theta - hi).clamp(min=0) + (lo - theta).clamp(min=0)) * limited
        return loss + cfg.limit_weight * out.sum(-1)

    def solve(
        self,
        robot: Robot,
        T_goal: Any,
        pos_tol: float = SOLVE_TOLERANCES.pos_tol,
        rot_tol: float = SOLVE_TOLERANCES.rot_tol,
    ) -> IKResult:
        """The network's one answer per goal: ``T_goal`` (4, 4) or (B, 4, 4) poses in the base-link frame (for a
        position-only model, positions (3,) or (B, 3) too; their rotation is ignored). IKResult (B, 1): joint values,
        errors (rot_err is 0 for a position-only model), success at ``pos_tol`` [m] and ``rot_tol`` [rad]."""
        self.check(robot)
        T = goal_poses(T_goal, self.config.goal)
        with torch.no_grad():
            q = self._angles(self.net, T.float(), self.config.goal, self.scale).double()
        return self.ranked(robot, q[:, None], T, pos_tol, rot_tol)
