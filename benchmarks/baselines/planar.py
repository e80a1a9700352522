"""IKNet on the planar chains of its paper: the training-steps curve beside LM (table 3), what makes the
hypernetwork learn on a CPU budget (table 4, an ablation at equal steps) and few-shot fine-tuning to a changed arm
(table 5).

The chains are the authors' ``snake_2D`` URDFs: revolute joints about parallel axes, links of 0.1 m, limits
[-pi, pi]. Training pairs as in the authors' data: 20,000 for the 2-joint chain; the 4-joint chain's 1,000,000 are
``samples4`` here. Targets: FK of uniform configurations, 100 answers each; distances in cm.
"""

from __future__ import annotations

from dataclasses import replace

import torch

from benchmarks.baselines.distances import distance_stats, distances_cm, lm_distances_cm
from ggik import Robot, randomize_links
from ggik.baselines import IKNet, IKNetConfig
from ggik.baselines.goals import goal_features, goal_poses
from ggik.evaluation.report import Table

__all__ = ["planar_arm", "curve_table", "ablation_table", "fewshot_table", "FEWSHOT_QUOTED", "LINK"]

LINK = 0.1  #: [m] each link of the authors' planar chains
#: IKNet's published few-shot result (the issue's quote): method -> mean distance [cm]
FEWSHOT_QUOTED = {
    "fine-tuned, 1,000 pairs": 1.92,
    "from scratch, 100,000 pairs": 1.84,
    "from scratch, 1,000 pairs": 9.26,
}


def planar_arm(joints: int) -> Robot:
    """IKNet's planar chains: ``joints`` revolute joints about parallel axes, links of :data:`LINK` m (DH)."""
    return Robot.from_dh(a=[LINK] * joints, d=[0.0] * joints, alpha=[0.0] * joints, name=f"planar{joints}")


def _targets(robot: Robot, count: int, seed: int) -> torch.Tensor:
    return robot.fk(robot.sample_q(count, torch.Generator().manual_seed(seed)))[:, :3, 3]


def _solve_iknet(model: IKNet, robot: Robot, targets: torch.Tensor, seed: int) -> torch.Tensor:
    return distances_cm(robot, model.solve(robot, targets, 100, torch.Generator().manual_seed(seed)).q, targets)


def curve_table(steps: tuple[int, ...], samples4: int, seed: int) -> Table:
    """Table 3: IKNet (CPU sizes, 2 components as the authors' planar runs) on the 2- and 4-joint chains against its
    training steps (the weights of the best validation kept), beside LM from random starts with the same 100 answers
    per target (1,000 targets)."""
    table = Table(
        "IKNet on the planar chains against training steps (1,000 targets, 100 answers each)",
        ["robot", "method", "training pairs", "steps (best)", "mean distance [cm]", "std [cm]", "within 1 cm [%]",
         "training (CPU)"],
    )  # fmt: skip
    for joints, pairs in ((2, 20_000), (4, samples4)):
        robot = planar_arm(joints)
        targets = _targets(robot, 1000, seed + 2)
        for n in steps:
            model = IKNet.fit(robot, IKNetConfig(components=2, samples=pairs, steps=n, seed=seed))
            d = _solve_iknet(model, robot, targets, seed)
            table.add(robot.name, "IKNet (CPU sizes)", pairs, f"{n} ({model.training['best_step']})",
                      *distance_stats(d), f"{model.training['cpu_s']:.0f} s")  # fmt: skip
        q0 = robot.sample_q(targets.shape[0] * 100, torch.Generator().manual_seed(seed)).view(-1, 100, joints)
        d = lm_distances_cm(robot, targets, q0)
        table.add(robot.name, "LM, random starts", "", "", *distance_stats(d), "none")
    table.notes += [
        f"links of {LINK} m (the authors' snake_2D URDFs); IKNet: IKNetConfig defaults (hypernetwork 3 x 256, "
        "embedding 128, primary networks 64 wide, softmax weights, head gain 8, batch 256) with 2 components; "
        "validated every 250 steps on 200 held-out targets, the best weights kept (the step in brackets).",
        "LM: the library's LM from 100 uniform random starts per target (the same answers per target). GGIK has no "
        "row: its position goals need the EE on the last joint's axis, and these chains' EE lies a link beyond it.",
    ]
    return table


#: table 4's variants: (name, changes to the authors' settings at CPU sizes)
ABLATION = (
    ("authors' settings (sparsemax, gain 1, batch 1024)", {}),
    ("batch 256", {"batch": 256}),
    ("batch 256, softmax", {"batch": 256, "mixture_weights": "softmax"}),
    ("batch 256, gain 8", {"batch": 256, "head_gain": 8.0}),
    ("batch 256, softmax, gain 8 (the defaults)", {"batch": 256, "mixture_weights": "softmax", "head_gain": 8.0}),
)


def ablation_table(steps: int, seed: int) -> Table:
    """Table 4: on the planar 2-joint chain (20,000 pairs, 1,000 targets, 100 answers each), IKNet at equal steps with
    the authors' settings and with each change of the CPU defaults: the answers' distances and the held-out
    log-likelihood of the true joints (teacher forcing), per joint."""
    table = Table(
        f"IKNet on the planar 2-joint chain, {steps} steps each: the authors' settings against the CPU defaults",
        ["variant", "mean distance [cm]", "std [cm]", "within 1 cm [%]", "held-out log-likelihood per joint",
         "best step", "training (CPU)"],
    )  # fmt: skip
    robot = planar_arm(2)
    targets = _targets(robot, 1000, seed + 2)
    q = robot.sample_q(1000, torch.Generator().manual_seed(seed + 3))
    base = IKNetConfig.reference(hyper_width=256, primary_hidden=64, components=2, val_targets=200, samples=20_000)
    for name, changes in ABLATION:
        model = IKNet.fit(robot, replace(base, steps=steps, seed=seed, **changes))
        with torch.no_grad():
            feats = goal_features(robot.fk(q).float(), "position", model.scale)
            ll = IKNet._joint_log_likelihood(model.net, feats, q.float()).mean() / robot.dof
        table.add(name, *distance_stats(_solve_iknet(model, robot, targets, seed)), round(float(ll), 3),
                  model.training["best_step"], f"{model.training['cpu_s']:.0f} s")  # fmt: skip
    table.notes += [
        "every row: hypernetwork 3 x 256, embedding 128, primary networks 64 wide, 2 components, lr 1e-3, gradient "
        "norm clipped at 1, the best of validations every 250 steps kept; only the named settings differ.",
    ]
    return table


def fewshot_table(steps: int, fraction: float, seed: int) -> Table:
    """Table 5: IKNet's few-shot adaptation. A model of the planar 4-joint chain (100,000 pairs) fine-tuned on 1,000
    pairs of the chain with every link length scaled by U[1 - fraction, 1 + fraction], against models of the changed
    chain trained from scratch on 100,000 and on 1,000 pairs (``steps`` steps each; 1,000 targets of the changed
    chain, 100 answers each), and the paper's numbers, quoted."""
    table = Table(
        f"IKNet few-shot: the planar 4-joint chain with link lengths changed by up to {fraction:.0%}",
        ["method", "training pairs", "mean distance [cm]", "std [cm]", "within 1 cm [%]", "training (CPU)"],
    )
    robot = planar_arm(4)
    changed = randomize_links(robot, fraction, generator=torch.Generator().manual_seed(seed + 4))
    targets = _targets(changed, 1000, seed + 2)
    cfg = IKNetConfig(components=2, steps=steps, seed=seed)
    source = IKNet.fit(robot, replace(cfg, samples=100_000))
    q = source.sample(goal_poses(targets, "position"), 100, torch.Generator().manual_seed(seed))
    table.add("the original chain's model, not adapted", 0, *distance_stats(distances_cm(changed, q, targets)),
              f"{source.training['cpu_s']:.0f} s")  # fmt: skip
    for name, pairs, init in (
        ("fine-tuned, 1,000 pairs", 1_000, source),
        ("from scratch, 100,000 pairs", 100_000, None),
        ("from scratch, 1,000 pairs", 1_000, None),
    ):
        model = IKNet.fit(changed, replace(cfg, samples=pairs, seed=seed + 5), init=init)
        table.add(name, pairs, *distance_stats(_solve_iknet(model, changed, targets, seed)),
                  f"{model.training['cpu_s']:.0f} s")  # fmt: skip
        table.add(f"{name}, paper (quoted)", pairs, FEWSHOT_QUOTED[name], "", "", "paper")
    table.notes += [
        f"link scales of the changed chain: {', '.join(f'{s:.3f}' for s in _link_scales(robot, changed))}; the paper "
        "does not say which arm its few-shot numbers are of here (quoted as the issue gives them).",
        "'not adapted': the original chain's model answering for the changed chain (the source model is evaluated "
        "with the changed chain's FK).",
    ]
    return table


def _link_scales(robot: Robot, changed: Robot) -> list[float]:
    """How much each joint origin of ``changed`` was scaled from ``robot`` (links of length 0 skipped)."""
    out = []
    for a, b in zip(robot.joints, changed.joints):
        la, lb = float(torch.as_tensor(a.origin[:3, 3]).norm()), float(torch.as_tensor(b.origin[:3, 3]).norm())
        if la > 0:
            out.append(lb / la)
    return out
