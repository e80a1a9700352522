"""IKNet's one model for many arms (table 8): a hypernetwork that takes the arm's link lengths beside the goal,
trained on ``train_arms`` random 4-joint planar chains with every link length scaled by U[0.8, 1.2] around the
authors' 0.1 m, and tested on ``test_arms`` new ones (the paper: 55 and 10).

Rows, on the test arms (``targets`` targets each, 100 answers per target, distances in cm):

* IKNet conditioned on the arm: inputs = goal position / reach and the 4 link lengths' scales minus 1;
* the same network and data without the arm's description (its inputs zeroed): what the conditioning buys;
* the nominal chain's own IKNet (trained on it alone), answering for the changed arms;
* LM from 100 uniform random starts per target.

The same :func:`ggik.baselines.iknet.train_iknet` loop as :meth:`ggik.baselines.IKNet.fit`, on pooled pairs; the
held-out validation arms are others again.
"""

from __future__ import annotations

import time
from dataclasses import replace

import torch

from benchmarks.baselines.distances import distance_stats, distances_cm, lm_distances_cm
from benchmarks.baselines.planar import LINK, planar_arm
from ggik import Robot, randomize_links
from ggik.baselines import IKNet, IKNetConfig
from ggik.baselines.goals import goal_poses
from ggik.baselines.iknet import IKNetModule, train_iknet
from ggik.evaluation.report import Table

__all__ = ["family_table", "arm_features", "random_arms"]

JOINTS = 4
SPREAD = 0.2  #: link lengths scaled by U[1 - SPREAD, 1 + SPREAD]


def random_arms(count: int, seed: int) -> list[Robot]:
    """``count`` planar 4-joint chains, each link length scaled by its own U[0.8, 1.2] (seeded)."""
    g = torch.Generator().manual_seed(seed)
    return [randomize_links(planar_arm(JOINTS), SPREAD, generator=g) for _ in range(count)]


def _lengths(robot: Robot) -> torch.Tensor:
    """(J,) [m] each joint origin's distance from its parent frame (the EE's fixed joint included)."""
    return torch.tensor([float(torch.as_tensor(j.origin[:3, 3]).norm()) for j in robot.joints], dtype=torch.float64)


def arm_features(robot: Robot) -> torch.Tensor:
    """(L,) float32: the scale of each link of the family's arm against the nominal chain's, minus 1 (0 for the
    nominal chain); the links are the joint origins the nominal chain moves (the first joint sits at the base, so its
    origin, 0 in every arm, is left out): L = 4 for the planar 4-joint chain."""
    nominal = _lengths(planar_arm(JOINTS))
    keep = nominal > 0
    return (_lengths(robot)[keep] / nominal[keep] - 1).float()


def _inputs(arms: list[Robot], q: list[torch.Tensor], scale: float, conditioned: bool) -> torch.Tensor:
    """(sum N, 3 + L) network inputs of each arm's configurations q (N, dof): EE position / scale and the arm's
    description (zeros when not ``conditioned``)."""
    out = []
    for arm, qa in zip(arms, q):
        p = arm.fk(qa)[:, :3, 3].float() / scale
        d = arm_features(arm).expand(qa.shape[0], -1)
        out.append(torch.cat([p, d if conditioned else torch.zeros_like(d)], -1))
    return torch.cat(out)


def _fit_family(
    arms: list[Robot], val_arms: list[Robot], cfg: IKNetConfig, scale: float, conditioned: bool
) -> tuple[IKNetModule, dict]:
    """An IKNetModule trained on the pooled pairs of ``arms`` (``cfg.samples`` in all), validated on ``val_arms``."""
    g = torch.Generator().manual_seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    per_arm = max(1, cfg.samples // len(arms))
    qs = [arm.sample_q(per_arm, g) for arm in arms]
    x, q = _inputs(arms, qs, scale, conditioned), torch.cat(qs).float()
    val_q = [arm.sample_q(max(1, cfg.val_targets // len(val_arms)), g) for arm in val_arms]
    val_x = _inputs(val_arms, val_q, scale, conditioned)
    net = IKNetModule(x.shape[1], JOINTS, cfg)

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.randint(x.shape[0], (cfg.batch,), generator=g)
        return x[idx], q[idx]

    def validate(net: IKNetModule) -> float:
        return float(_drawn_distances_cm(net, val_arms, val_q, val_x, cfg.val_samples, g).mean()) / 100

    run = train_iknet(net, cfg, batch, validate)
    return net, run


def _drawn_distances_cm(net: IKNetModule, arms: list[Robot], q: list[torch.Tensor], x: torch.Tensor, samples: int,
                        g: torch.Generator) -> torch.Tensor:  # fmt: skip
    """(sum N, samples) distances [cm] of answers drawn for inputs x from the targets FK(q) of each arm."""
    with torch.no_grad():
        answers = net.draw(x, samples, arms[0], g).double().split([qa.shape[0] for qa in q])
    return torch.cat([distances_cm(arm, a, arm.fk(qa)[:, :3, 3]) for arm, qa, a in zip(arms, q, answers)])


def family_table(train_arms: int, test_arms: int, targets: int, steps: int, samples: int, seed: int) -> Table:
    """Table 8 (module docstring)."""
    table = Table(
        f"IKNet, one model for {train_arms} random planar 4-joint arms, tested on {test_arms} new ones "
        f"({targets} targets each, 100 answers per target)",
        ["method", "training arms", "mean distance [cm]", "std [cm]", "within 1 cm [%]", "best step",
         "training (CPU)"],
    )  # fmt: skip
    arms = random_arms(train_arms + test_arms + 5, seed + 10)
    train, val, test = arms[:train_arms], arms[train_arms : train_arms + 5], arms[train_arms + 5 :]
    nominal = planar_arm(JOINTS)
    scale = JOINTS * LINK * (1 + SPREAD)
    cfg = IKNetConfig(components=2, samples=samples, steps=steps, seed=seed)
    g = torch.Generator().manual_seed(seed + 11)
    test_q = [arm.sample_q(targets, g) for arm in test]
    for name, conditioned in (("IKNet conditioned on the link lengths", True), ("IKNet, no arm description", False)):
        c0 = time.process_time()
        net, run = _fit_family(train, val, cfg, scale, conditioned)
        d = _drawn_distances_cm(net, test, test_q, _inputs(test, test_q, scale, conditioned), 100, g)
        table.add(name, train_arms, *distance_stats(d), run["best_step"], f"{time.process_time() - c0:.0f} s")
    own = IKNet.fit(nominal, replace(cfg, val_targets=200))
    targets_of = [arm.fk(qa)[:, :3, 3] for arm, qa in zip(test, test_q)]
    d = torch.cat([distances_cm(arm, own.sample(goal_poses(p, "position"), 100, g), p)
                   for arm, p in zip(test, targets_of)])  # fmt: skip
    table.add("IKNet of the nominal chain alone", 1, *distance_stats(d), own.training["best_step"],
              f"{own.training['cpu_s']:.0f} s")  # fmt: skip
    lm = [lm_distances_cm(arm, p, arm.sample_q(targets * 100, g).view(targets, 100, JOINTS))
          for arm, p in zip(test, targets_of)]  # fmt: skip
    table.add("LM, 100 random starts", 0, *distance_stats(torch.cat(lm)), "", "none")
    table.notes += [
        f"arms: links of {LINK} m each scaled by U[{1 - SPREAD}, {1 + SPREAD}] (the EE offset too); IKNetConfig "
        f"defaults with 2 components, {samples:,} pairs in all ({samples // train_arms:,} per arm), {steps} steps, "
        "validated on 5 other arms, the best weights kept. The paper's numbers for this protocol are not quoted: "
        "its text was not available offline.",
    ]
    return table
