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
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ggik.baselines.goals import goal_features, goal_poses
from ggik.baselines.model_file import check_robot, load_baseline, robot_fingerprint, robot_of, save_baseline
from ggik.errors import GGIKError
from ggik.ik.result import IKResult, sort_best_first
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.geometry import pose_errors
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
        if self.goal not in GOALS:
            raise ValueError(f"DistalConfig.goal must be one of {GOALS}, got {self.goal!r}")
        for name in ("hidden", "layers", "samples", "steps", "batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"DistalConfig.{name} must be an integer >= 1, got {value!r}")
        for name in ("lr", "rot_weight", "limit_weight"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
                raise ValueError(f"DistalConfig.{name} must be a finite number >= 0, got {value!r}")

    @classmethod
    def from_dict(cls, data: dict) -> DistalConfig:
        """The config a model file recorded (unknown keys are an error: a file of a newer ggik)."""
        unknown = sorted(set(data) - {f.name for f in fields(cls)})
        if unknown:
            raise GGIKError(f"a distal-teacher config with unknown keys {unknown} (written by a newer ggik?)")
        return cls(**data)


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


class DistalTeacher:
    """A trained distal-teacher network for one robot: :meth:`fit` trains one, :meth:`solve` answers goals, and
    :meth:`save` / :meth:`load` keep it in a baseline file (:mod:`ggik.baselines.model_file`)."""

    kind = DISTAL_KIND

    def __init__(self, net: _Net, config: DistalConfig, robot: Robot, scale: float, training: dict) -> None:
        self.net, self.config, self.robot, self.scale, self.training = net.eval(), config, robot, scale, training

    @classmethod
    def fit(cls, robot: Robot, config: DistalConfig | None = None, progress: bool = False) -> DistalTeacher:
        """Train a distal teacher for ``robot`` on the CPU (module docstring; ``progress``: a tqdm bar)."""
        cfg = config or DistalConfig()
        t0, c0 = time.perf_counter(), time.process_time()
        gen = torch.Generator().manual_seed(cfg.seed)
        torch.manual_seed(cfg.seed)
        goals = robot.fk(robot.sample_q(cfg.samples, gen)).to(torch.float32)
        scale = float(goals[:, :3, 3].norm(dim=-1).max().clamp(min=1e-6))
        net = _Net(3 if cfg.goal == "position" else 9, robot.dof, cfg.hidden, cfg.layers)
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
        training = {"samples": cfg.samples, "steps": cfg.steps, "wall_s": time.perf_counter() - t0,
                    "cpu_s": time.process_time() - c0, "final_loss": float(loss.detach()),
                    "fingerprint": robot_fingerprint(robot)}  # fmt: skip
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
        check_robot(robot, {"name": self.robot.name, "dof": self.robot.dof,
                            "fingerprint": self.training["fingerprint"]}, self.kind)  # fmt: skip
        T = goal_poses(T_goal, self.config.goal)
        with torch.no_grad():
            q = self._angles(self.net, T.float(), self.config.goal, self.scale).double()
        pos, rot = pose_errors(robot.fk(q), T)
        if self.config.goal == "position":
            rot = torch.zeros_like(rot)
        q, pos, rot = q[:, None], pos[:, None], rot[:, None]
        ok = (pos < pos_tol) & (rot < rot_tol)
        return sort_best_first(q, pos, rot, ok, robot.within_limits(q), pos_tol, rot_tol)

    def save(self, path: str | Path) -> Path:
        """Write this model to ``path`` (atomically)."""
        config = {**asdict(self.config), "scale": self.scale}
        return save_baseline(path, self.kind, config, self.net, self.robot, self.training)

    @classmethod
    def load(cls, path: str | Path) -> DistalTeacher:
        """A model written by :meth:`save` (GGIKError for a corrupt file or another kind of model)."""
        payload = load_baseline(path, DISTAL_KIND)
        config = dict(payload["config"])
        scale = float(config.pop("scale"))
        cfg = DistalConfig.from_dict(config)
        robot = robot_of(payload)
        net = _Net(3 if cfg.goal == "position" else 9, robot.dof, cfg.hidden, cfg.layers)
        try:
            net.load_state_dict(payload["state"])
        except RuntimeError as exc:
            raise GGIKError(f"{path}: weights that do not fit the recorded config ({exc})") from None
        training = {**payload["training"], "fingerprint": payload["robot"]["fingerprint"]}
        return cls(net, cfg, robot, scale, training)
