"""IKNet (Bensadoun et al., "Neural Inverse Kinematics", ICML 2022), a learned IK baseline: a hypernetwork turns the
goal into the weights of one small primary network per joint, and the primary networks give a Gaussian mixture over
each joint's angle given the angles before it.

The structure follows the authors' published code (github.com/RaphaelBensTAU/NeuralInverseKinematics), which is what
produced the paper's numbers:

* Hypernetwork f: ``hyper_layers`` hidden layers of width ``hyper_width``, each batch norm -> linear -> ReLU, then a
  linear map to an embedding of ``embedding`` numbers; from it one linear projection per joint onto the weights and
  biases of its primary network, divided by sqrt(``embedding``).
* Primary network g_k (joint k): linear (``[1, theta_1 .. theta_{k-1}]`` -> ``primary_hidden``), ReLU, linear to the
  ``components`` means [rad], log standard deviations and mixture logits of joint k's mixture; the mixture weights are
  the sparsemax of the logits (exact zeros allowed; or their softmax, ``mixture_weights``).
* Training: negative log-likelihood (mean over joints) of (goal, joints) pairs from FK of uniform configurations,
  teacher forcing (each g_k gets the true earlier angles), Adam with gradient-norm clipping. Every
  ``validate_every`` steps the model samples ``val_samples`` answers for ``val_targets`` held-out targets; the
  weights with the lowest mean EE distance are kept (the authors' early stopping, ``patience`` validations).
* Sampling: joint by joint, each from its mixture given the angles sampled before it, clamped into the joint's limits.

The paper's sizes are ``hyper_width`` 1024, ``primary_hidden`` 256 and 50 components (2 on its planar chains):
more than 30 M weights for a 7-joint arm, too slow to train on a 2-core CPU in an hour. :class:`IKNetConfig`'s
defaults are CPU-sized (256, 64, 10; say which when quoting), with batches of 256 pairs instead of 1,024 (the same
distance per step at a third of the CPU time, on the planar 2-joint chain: benchmarks/baselines, table ablation).
At that batch the authors' sparsemax weights learned 2.8x worse, so the defaults take softmax weights (sparsemax gives
no gradient to the components it drops) and generated weights 8x larger at the start (``head_gain``).
:meth:`IKNetConfig.reference` gives the authors' settings. Goals: positions, as in the paper, or full poses (the
goal features of :mod:`ggik.baselines.goals`: position / reach and two rotation columns) as an extension.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from ggik.baselines.base import TrainedBaseline, training_pairs
from ggik.baselines.goals import goal_features, goal_poses
from ggik.baselines.iknet_config import NETWORK_FIELDS, IKNetConfig
from ggik.baselines.model_file import robot_fingerprint
from ggik.errors import GGIKError
from ggik.ik.result import IKResult
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.robot import Robot

__all__ = ["IKNetConfig", "IKNet", "IKNetModule", "IKNET_KIND", "sparsemax", "mixture_log_likelihood", "train_iknet"]

IKNET_KIND = "iknet"


def sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Sparsemax over the last dimension (Martins and Astudillo 2016): the Euclidean projection of z onto the
    probability simplex; sums to 1, with exact zeros for low scores."""
    zs = z.sort(-1, descending=True).values
    k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype, device=z.device)
    cum = zs.cumsum(-1)
    support = (1 + k * zs) > cum
    k_z = support.to(z.dtype).sum(-1, keepdim=True)
    tau = (cum.gather(-1, k_z.long() - 1) - 1) / k_z
    return (z - tau).clamp(min=0)


class IKNetModule(nn.Module):
    """The hypernetwork and the primary networks' shapes (module docstring) for ``inputs`` goal (and arm) features
    and ``dof`` joints."""

    def __init__(self, inputs: int, dof: int, cfg: IKNetConfig) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        width = inputs
        for _ in range(cfg.hyper_layers):
            layers += [nn.BatchNorm1d(width), nn.Linear(width, cfg.hyper_width), nn.ReLU()]
            width = cfg.hyper_width
        self.body = nn.Sequential(*layers, nn.Linear(width, cfg.embedding))
        h, m = cfg.primary_hidden, cfg.components
        #: per joint k: the shapes of W1 (k, h), b1, W2 (h, 3m), b2
        self.shapes = [[(k + 1, h), (h,), (h, 3 * m), (3 * m,)] for k in range(dof)]
        self.heads = nn.ModuleList(
            nn.Linear(cfg.embedding, sum(math.prod(s) for s in shapes)) for shapes in self.shapes
        )
        self.head_scale = cfg.head_gain / math.sqrt(cfg.embedding)
        self.dof, self.m, self.min_std = dof, m, cfg.min_std
        self.weights_of = sparsemax if cfg.mixture_weights == "sparsemax" else (lambda z: torch.softmax(z, -1))

    def primary(self, features: torch.Tensor) -> list[list[torch.Tensor]]:
        """Per joint, the primary network's weights for each goal: [W1 (B, k+1, h), b1 (B, h), W2 (B, h, 3m), b2]."""
        z = self.body(features)
        out = []
        for head, shapes in zip(self.heads, self.shapes):
            flat, parts, at = head(z) * self.head_scale, [], 0
            for shape in shapes:
                size = math.prod(shape)
                parts.append(flat[:, at : at + size].view(-1, *shape))
                at += size
            out.append(parts)
        return out

    def mixture(self, weights: list[torch.Tensor], prev: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """(mean [rad], std [rad], pi) (B, S, m) of one joint's mixture for earlier angles prev (B, S, k)."""
        W1, b1, W2, b2 = weights
        x = torch.cat([prev.new_ones(prev.shape[:-1] + (1,)), prev], -1)
        x = torch.relu(x @ W1 + b1[:, None])
        out = x @ W2 + b2[:, None]
        mean, log_std, logits = out.split(self.m, -1)
        std = log_std.clamp(max=10.0).exp() + self.min_std
        return mean, std, self.weights_of(logits)

    def draw(
        self, features: torch.Tensor, samples: int, robot: Robot, generator: torch.Generator | None
    ) -> torch.Tensor:
        """(B, samples, dof) float32 joint angles [rad] drawn joint by joint for goal features (B, F), each clamped
        into its joint's limits before the next joint is drawn."""
        lo, hi, limited = robot.lower.float(), robot.upper.float(), robot.limited
        weights = self.primary(features)
        q = features.new_zeros(features.shape[0], samples, 0)
        for k in range(self.dof):
            mean, std, pi = self.mixture(weights[k], q)
            pick = torch.multinomial(pi.reshape(-1, pi.shape[-1]), 1, generator=generator).view(*pi.shape[:2], 1)
            mu, sd = mean.gather(-1, pick)[..., 0], std.gather(-1, pick)[..., 0]
            theta = mu + sd * torch.randn(mu.shape, generator=generator)
            theta = torch.where(limited[k], theta.clamp(lo[k], hi[k]), theta)
            q = torch.cat([q, theta[..., None]], -1)
        return q


def mixture_log_likelihood(
    mean: torch.Tensor, std: torch.Tensor, pi: torch.Tensor, theta: torch.Tensor
) -> torch.Tensor:
    """log sum_i pi_i N(theta; mean_i, std_i), theta (B, S), the rest (B, S, m)."""
    z = (theta[..., None] - mean) / std
    log_n = -0.5 * z * z - std.log() - 0.5 * math.log(2 * math.pi)
    log_pi = torch.where(pi > 0, pi.clamp(min=1e-30).log(), torch.full_like(pi, -torch.inf))
    return torch.logsumexp(log_pi + log_n, -1)


class IKNet(TrainedBaseline):
    """A trained IKNet for one robot: :meth:`fit` trains (or fine-tunes) one, :meth:`solve` samples goals,
    :meth:`save` / :meth:`load` keep it in a baseline file (:mod:`ggik.baselines.model_file`)."""

    kind = IKNET_KIND
    config_type = IKNetConfig
    net: IKNetModule

    @staticmethod
    def build(config: IKNetConfig, dof: int) -> IKNetModule:
        return IKNetModule(3 if config.goal == "position" else 9, dof, config)

    @classmethod
    def fit(
        cls, robot: Robot, config: IKNetConfig | None = None, init: IKNet | None = None, progress: bool = False
    ) -> IKNet:
        """Train IKNet for ``robot`` by NLL with teacher forcing, keeping the weights of the best validation (module
        docstring). ``init``: a model of another arm with as many joints to fine-tune from (the paper's few-shot
        adaptation; its reach scale is kept). The training record holds the validation curve ``validation``
        [(step, mean distance [m])], the kept ``best_step`` and the ``steps_run``."""
        cfg = config or IKNetConfig()
        t0, c0 = time.perf_counter(), time.process_time()
        gen, q, goals, reach = training_pairs(robot, cfg.samples, cfg.seed)
        if init is not None:
            if init.robot.dof != robot.dof or init.config.goal != cfg.goal:
                raise GGIKError(
                    f"fine-tuning needs a {robot.dof}-joint {cfg.goal} model, got a {init.robot.dof}-joint "
                    f"{init.config.goal} model"
                )
            differ = [f for f in NETWORK_FIELDS if getattr(init.config, f) != getattr(cfg, f)]
            if differ:
                raise GGIKError(f"fine-tuning needs the network settings of the model it starts from; {differ} differ")
            scale = init.scale
            net = cls.build(cfg, robot.dof)
            try:
                net.load_state_dict(init.net.state_dict())
            except RuntimeError as exc:
                raise GGIKError(f"fine-tuning needs the sizes of the model it starts from ({exc})") from None
        else:
            scale = reach
            net = cls.build(cfg, robot.dof)
        val_gen = torch.Generator().manual_seed(cfg.seed + 1)
        val_T = robot.fk(robot.sample_q(cfg.val_targets, val_gen))
        val_features = goal_features(val_T.float(), cfg.goal, scale)

        def batch() -> tuple[torch.Tensor, torch.Tensor]:
            idx = torch.randint(cfg.samples, (cfg.batch,), generator=gen)
            return goal_features(goals[idx], cfg.goal, scale), q[idx]

        def validate(net: IKNetModule) -> float:
            return _mean_distance(net, robot, val_features, val_T, cfg.val_samples, val_gen)

        run = train_iknet(net, cfg, batch, validate, f"IKNet {robot.name}" if progress else None)
        training = {
            "samples": cfg.samples,
            "steps": cfg.steps,
            **run,
            "wall_s": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0,
            "fine_tuned": init is not None,
            "fingerprint": robot_fingerprint(robot),
        }
        return cls(net, cfg, robot, scale, training)

    @staticmethod
    def _joint_log_likelihood(net: IKNetModule, features: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """(B,) sum over joints of log p(theta_k | goal, theta_<k) for true angles q (B, dof) (teacher forcing)."""
        weights = net.primary(features)
        total = torch.zeros(q.shape[0], dtype=q.dtype)
        for k in range(net.dof):
            mean, std, pi = net.mixture(weights[k], q[:, None, :k])
            total = total + mixture_log_likelihood(mean, std, pi, q[:, None, k])[:, 0]
        return total

    def sample(self, T: torch.Tensor, samples: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """(B, samples, dof) joint angles drawn joint by joint for goal poses T (B, 4, 4), clamped into the limits."""
        with torch.no_grad():
            q = self.net.draw(goal_features(T.float(), self.config.goal, self.scale), samples, self.robot, generator)
        q64 = q.double()  # clamped again in float64: a float32 limit can lie just outside the float64 one
        return torch.where(self.robot.limited, q64.clamp(self.robot.lower, self.robot.upper), q64)

    def sample_path(
        self,
        robot: Robot,
        T_goal: Any,
        q_start: torch.Tensor | None = None,
        radius: float = 0.1,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """One joint trajectory (T, dof) [rad] through goals ``T_goal`` (T, 4, 4) or positions (T, 3): IKNet's path
        following. Each waypoint's joints are drawn joint by joint from their mixtures restricted to ``radius`` [rad]
        around the previous waypoint's value (the first waypoint: around ``q_start`` when given, else unrestricted;
        the paper's r = 0.1). A component is chosen in proportion to its weight times its mass inside the
        neighbourhood and sampled there (a truncated normal); when no component has mass there, the nearest point of
        the neighbourhood to the mean of the heaviest component is taken."""
        self.check(robot)
        if not 0 < radius < float("inf"):
            raise ValueError(f"radius must be a positive number [rad], got {radius!r}")
        T = goal_poses(T_goal, self.config.goal)
        prev = None if q_start is None else robot.check_q(q_start).to(torch.float32).reshape(robot.dof)
        lo, hi = self.robot.lower.float(), self.robot.upper.float()
        out = []
        with torch.no_grad():
            weights = self.net.primary(goal_features(T.float(), self.config.goal, self.scale))
            for t in range(T.shape[0]):
                q = torch.zeros(1, 1, 0)
                for k in range(self.net.dof):
                    mean, std, pi = self.net.mixture([w[t : t + 1] for w in weights[k]], q)
                    mean, std, pi = mean[0, 0], std[0, 0], pi[0, 0]
                    a = -torch.inf if prev is None else float(prev[k]) - radius
                    b = torch.inf if prev is None else float(prev[k]) + radius
                    if self.robot.limited[k]:
                        a, b = max(a, float(lo[k])), min(b, float(hi[k]))
                    theta = _truncated_mixture_draw(mean, std, pi, a, b, generator)
                    q = torch.cat([q, theta.reshape(1, 1, 1)], -1)
                prev = q[0, 0]
                out.append(prev.double())
        return torch.stack(out)

    def solve(
        self,
        robot: Robot,
        T_goal: Any,
        samples: int = 100,
        generator: torch.Generator | None = None,
        pos_tol: float = SOLVE_TOLERANCES.pos_tol,
        rot_tol: float = SOLVE_TOLERANCES.rot_tol,
    ) -> IKResult:
        """``samples`` answers per goal: ``T_goal`` poses (4, 4) / (B, 4, 4) in the base-link frame (a position model
        also takes positions (3,) / (B, 3)). IKResult (B, samples) sorted best first; rot_err is 0 for a position
        model; success at ``pos_tol`` [m] and ``rot_tol`` [rad]."""
        self.check(robot)
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"samples must be an integer >= 1, got {samples!r}")
        T = goal_poses(T_goal, self.config.goal)
        return self.ranked(robot, self.sample(T, samples, generator), T, pos_tol, rot_tol)


def _truncated_mixture_draw(
    mean: torch.Tensor, std: torch.Tensor, pi: torch.Tensor, a: float, b: float, generator: torch.Generator | None
) -> torch.Tensor:
    """One draw from the mixture (m,) restricted to [a, b] (module docstring of :meth:`IKNet.sample_path`), in float64;
    a window above a component's mean is drawn in the mirrored lower tail, so that its mass does not cancel to 0 far
    out in the tail."""
    mean, std, pi = mean.double(), std.double(), pi.double()
    za, zb = (a - mean) / std, (b - mean) / std
    upper = za > 0
    lo, hi = torch.where(upper, -zb, za), torch.where(upper, -za, zb)
    clo, chi = torch.special.ndtr(lo), torch.special.ndtr(hi)
    mass = pi * (chi - clo)
    if float(mass.sum()) <= 1e-300:
        return mean[pi.argmax()].clamp(a, b).float()
    i = int(torch.multinomial(mass / mass.sum(), 1, generator=generator))
    u = clo[i] + (chi[i] - clo[i]) * torch.rand((), generator=generator, dtype=torch.float64)
    z = torch.special.ndtri(u.clamp(1e-300, 1 - 1e-16))
    x = mean[i] + std[i] * (-z if bool(upper[i]) else z)
    return x.clamp(a, b).float()


def train_iknet(
    net: IKNetModule,
    cfg: IKNetConfig,
    batch: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    validate: Callable[[IKNetModule], float],
    progress: str | None = None,
) -> dict:
    """IKNet's training (module docstring): ``cfg.steps`` Adam steps on the mean-over-joints NLL of ``batch()``'s
    (features (B, F), joints (B, dof)) with teacher forcing, gradient norm clipped at ``cfg.grad_clip``;
    ``validate(net)`` (a mean distance [m], lower is better) every ``cfg.validate_every`` steps and at the end, the
    best weights kept, stopped after ``cfg.patience`` validations without improvement. ``progress``: a tqdm bar's
    name. ``net`` ends with the kept weights, in eval mode. Returns the record: ``steps_run``, ``best_step``,
    ``validation`` [(step, distance)] and ``final_nll`` (the last batch's, per joint)."""
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    steps: Any = range(1, cfg.steps + 1)
    if progress is not None:
        from tqdm import tqdm

        steps = tqdm(steps, desc=progress, unit="step")
    curve: list[tuple[int, float]] = []
    best: tuple[float, int, dict] = (float("inf"), 0, {})
    step, loss = 0, torch.zeros(())
    for step in steps:
        features, q = batch()
        loss = -(IKNet._joint_log_likelihood(net, features, q) / net.dof).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.grad_clip > 0:
            nn.utils.clip_grad_norm_(net.parameters(), cfg.grad_clip)
        opt.step()
        if cfg.validate_every and (step % cfg.validate_every == 0 or step == cfg.steps):
            net.eval()  # batch norm on its running statistics, as the kept weights will answer
            dist = validate(net)
            net.train()
            curve.append((step, dist))
            if dist < best[0]:
                best = (dist, step, {k: v.detach().clone() for k, v in net.state_dict().items()})
            elif cfg.patience and (step - best[1]) >= cfg.patience * cfg.validate_every:
                break
    if best[2]:
        net.load_state_dict(best[2])
    net.eval()
    return {"steps_run": step, "best_step": best[1] or step, "validation": curve, "final_nll": float(loss.detach())}


def _mean_distance(
    net: IKNetModule, robot: Robot, features: torch.Tensor, T: torch.Tensor, samples: int, generator: torch.Generator
) -> float:
    """A validation: the mean distance [m] of ``samples`` answers per target from the targets T (B, 4, 4) (the
    position; :func:`train_iknet` puts the network in eval mode for it)."""
    with torch.no_grad():
        q = net.draw(features, samples, robot, generator).double()
    return float((robot.fk(q)[..., :3, 3] - T[:, None, :3, 3]).norm(dim=-1).mean())
