"""The learned baselines (IKNet, the distal teacher) on their papers' protocols, beside GGIK and LM, in one process.

Table 1, IKNet's protocol (position-only targets, ``samples`` answers per target): per robot, the mean and standard
deviation of the distance [cm] between the answers' EE positions and the targets, over every answer of every target,
and the share of answers within 10 cm. Methods: IKNet trained here (CPU sizes, ``iknet_steps`` steps), the distal
teacher for positions (one answer per target: its rows use it alone), GGIK raw (the shipped model, position goals,
``samples`` samples) and GGIK + LM, and LM from ``samples`` random starts. The paper's numbers beside ours, quoted.

Table 2, the distal teacher's protocol: solve rates at (1 cm, 0.03 rad) and (1 mm, 0.01 rad) on joint-uniform test
poses, for training sets of ``sizes`` goals (the same steps each), against one GGIK raw sample and LM from one random
start (the same budget: one answer per pose).

Table 3 (with ``curve_steps``), IKNet against its training steps on the paper's planar 2- and 4-joint chains;
table 4 (with ``width_steps``), its mixtures' widths against their means' errors there.

Targets: FK of configurations uniform within the limits (``targets`` of them, seeded). Training budgets are reported
in CPU seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik import GGIK, Robot, SolveConfig
from ggik.baselines import DistalConfig, DistalTeacher, IKNet, IKNetConfig
from ggik.baselines.iknet import mixture_log_likelihood
from ggik.evaluation.report import Table
from ggik.kinematics.geometry import pose_errors

__all__ = ["BaselineStudy", "iknet_table", "distal_table", "baseline_tables", "IKNET_QUOTED"]

#: IKNet's published position-only results (100 samples per target): robot -> (mean cm, std cm, % within 10 cm)
IKNET_QUOTED = {"panda": (3.1, 2.6, 98.0), "ur5": (2.8, 2.1, 98.8)}


@dataclass
class BaselineStudy:
    """The options of a run (the script's arguments)."""

    robots: list[str]
    targets: int = 200
    samples: int = 100
    iknet_steps: int = 4000
    distal_steps: int = 4000
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    curve_steps: tuple[int, ...] = ()
    width_steps: tuple[int, ...] = ()
    seed: int = 0


def _distances_cm(robot: Robot, q: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(B, S) distances [cm] of the EE positions of q (B, S, dof) from target positions (B, 3)."""
    return 100 * (robot.fk(q)[..., :3, 3] - targets[:, None]).norm(dim=-1)


def _row(method: str, robot: Robot, d: torch.Tensor, budget: str) -> list:
    return [robot.name, method, round(float(d.mean()), 2), round(float(d.std()), 2),
            round(100 * float((d < 10).float().mean()), 1), budget]  # fmt: skip


def iknet_table(study: BaselineStudy, solver: GGIK) -> Table:
    """Table 1 (module docstring)."""
    table = Table(
        f"IKNet's protocol: position-only targets, {study.samples} answers per target",
        ["robot", "method", "mean distance [cm]", "std [cm]", "within 10 cm [%]", "training (CPU)"],
    )
    for name in study.robots:
        robot = Robot.from_name(name)
        gen = torch.Generator().manual_seed(study.seed)
        targets = robot.fk(robot.sample_q(study.targets, gen))[:, :3, 3]
        iknet = IKNet.fit(robot, IKNetConfig(goal="position", steps=study.iknet_steps, seed=study.seed))
        res = iknet.solve(robot, targets, study.samples, torch.Generator().manual_seed(study.seed))
        table.add(*_row("IKNet (CPU sizes)", robot, _distances_cm(robot, res.q, targets),
                        f"{iknet.training['cpu_s']:.0f} s, {study.iknet_steps} steps"))  # fmt: skip
        distal = DistalTeacher.fit(robot, DistalConfig(goal="position", steps=study.distal_steps, seed=study.seed))
        res = distal.solve(robot, targets)
        table.add(*_row("distal teacher (1 answer)", robot, _distances_cm(robot, res.q, targets),
                        f"{distal.training['cpu_s']:.0f} s, {study.distal_steps} steps"))  # fmt: skip
        for method, config in (
            ("GGIK raw", SolveConfig(samples=study.samples)),
            ("GGIK + LM", SolveConfig(samples=study.samples, refine="lm")),
            ("LM, random starts", SolveConfig(strategy="random", random_starts=study.samples)),
        ):
            res = solver.solve(robot, targets, config, goal="position", generator=torch.Generator().manual_seed(0))
            table.add(*_row(method, robot, _distances_cm(robot, res.q, targets), "shipped model" if "GGIK" in method
                            else "none"))  # fmt: skip
        if name in IKNET_QUOTED:
            mean, std, within = IKNET_QUOTED[name]
            table.add(name, "IKNet, paper (quoted)", mean, std, within, "paper sizes")
    table.notes += [
        "distances over every answer of every target (S answers per target; the distal teacher gives 1); GGIK raw: the "
        "model's own answers for position goals; + LM: each refined by LM (1 mm); LM: from uniform random starts.",
        "IKNet CPU sizes: hypernetwork 4 x 256 (paper 1,024), primary networks 16 wide (paper 256), 10 components "
        "(paper 50); 100,000 training pairs.",
    ]
    return table


def distal_table(study: BaselineStudy, solver: GGIK) -> Table:
    """Table 2 (module docstring)."""
    table = Table(
        "The distal teacher's protocol: one answer per pose, solve rates against the training-set size",
        ["robot", "method", "training poses", "solved 1 cm & 0.03 rad [%]", "solved 1 mm & 0.01 rad [%]",
         "median position error [mm]", "training (CPU)"],
    )  # fmt: skip
    for name in study.robots:
        robot = Robot.from_name(name)
        T = robot.fk(robot.sample_q(study.targets, torch.Generator().manual_seed(study.seed + 1)))

        for size in study.sizes:
            model = DistalTeacher.fit(robot, DistalConfig(samples=size, steps=study.distal_steps, seed=study.seed))
            _rate_row(table, robot, T, "distal teacher", model.solve(robot, T).q[:, 0], f"{size:,}",
                      f"{model.training['cpu_s']:.0f} s, {study.distal_steps} steps")  # fmt: skip
        raw = solver.solve(robot, T, SolveConfig(samples=1), generator=torch.Generator().manual_seed(0))
        _rate_row(table, robot, T, "GGIK raw, 1 sample", raw.q[:, 0], "shipped model", "shipped model")
        lm = solver.solve(robot, T, SolveConfig(strategy="random", random_starts=1),
                          generator=torch.Generator().manual_seed(0))  # fmt: skip
        _rate_row(table, robot, T, "LM, 1 random start", lm.q[:, 0], "none", "none")
    table.notes += [
        f"{study.targets} poses of uniform configurations per robot; one answer each. The paper's numbers are not "
        "quoted here: its arms and training sets differ from ours.",
        "a deterministic network has no second try: one answer per pose for every row.",
    ]
    return table


def planar_arm(joints: int) -> Robot:
    """IKNet's planar chains: ``joints`` revolute joints about parallel axes, links of 1 m in all (DH)."""
    return Robot.from_dh(a=[1.0 / joints] * joints, d=[0.0] * joints, alpha=[0.0] * joints, name=f"planar{joints}")


def curve_table(study: BaselineStudy) -> Table:
    """Table 3: IKNet (CPU sizes) on the planar 2- and 4-joint chains of its paper (20,000 training pairs, 1,000
    targets, 100 answers each) against its training steps: whether more steps close the gap of table 1."""
    table = Table(
        "IKNet on planar chains against training steps (20,000 pairs, 1,000 targets, 100 answers each)",
        ["robot", "steps", "mean distance [cm]", "within 10 cm [%]", "within 1 cm [%]", "training (CPU)"],
    )
    for joints in (2, 4):
        robot = planar_arm(joints)
        targets = robot.fk(robot.sample_q(1000, torch.Generator().manual_seed(study.seed + 2)))[:, :3, 3]
        for steps in study.curve_steps:
            model = IKNet.fit(robot, IKNetConfig(samples=20_000, steps=steps, seed=study.seed))
            res = model.solve(robot, targets, 100, torch.Generator().manual_seed(study.seed))
            d = _distances_cm(robot, res.q, targets)
            table.add(robot.name, steps, round(float(d.mean()), 2), round(100 * float((d < 10).float().mean()), 1),
                      round(100 * float((d < 1).float().mean()), 1), f"{model.training['cpu_s']:.0f} s")  # fmt: skip
    table.notes += ["links of 1 m in all (0.5 m each for 2 joints, 0.25 m for 4); IKNet's CPU sizes (table 1)."]
    return table


def width_table(study: BaselineStudy) -> Table:
    """Table 4: why IKNet's answers miss, on the planar 2-joint chain against training steps: for 1,000 held-out
    (target, joints) pairs, each joint's mixture given the true earlier joints (teacher forcing), and in it the
    component whose mean is nearest the true angle: the median of its width (standard deviation) and of its mean's
    distance from the true angle [rad], and the median number of components with weight > 0."""
    from ggik.baselines.goals import goal_features

    table = Table(
        "IKNet on the planar 2-joint chain: the mixtures' widths against their means' errors",
        ["steps", "joint", "nearest component: width [rad]", "its mean's error [rad]", "components in use",
         "held-out log-likelihood per joint"],
    )  # fmt: skip
    robot = planar_arm(2)
    q = robot.sample_q(1000, torch.Generator().manual_seed(study.seed + 3))
    for steps in study.width_steps:
        model = IKNet.fit(robot, IKNetConfig(samples=20_000, steps=steps, seed=study.seed))
        T = robot.fk(q).float()
        with torch.no_grad():
            weights = model.net.primary(goal_features(T, "position", model.scale))
            for k in range(robot.dof):
                mean, std, pi = (t[:, 0] for t in model.net.mixture(weights[k], q[:, None, :k].float()))
                near = (mean - q[:, k, None].float()).abs().argmin(-1, keepdim=True)
                err = (mean.gather(-1, near)[:, 0] - q[:, k].float()).abs()
                ll = mixture_log_likelihood(mean, std, pi, q[:, k].float())
                table.add(steps, k + 1, round(float(std.gather(-1, near).median()), 4), round(float(err.median()), 4),
                          float((pi > 0).sum(-1).float().median()), round(float(ll.mean()), 3))  # fmt: skip
    table.notes += ["a component as wide as its mean's error gives answers that miss by about that much; narrower "
                    "components with small mean errors would give sharp answers."]  # fmt: skip
    return table


def _rate_row(
    table: Table, robot: Robot, T: torch.Tensor, method: str, q: torch.Tensor, size: str, budget: str
) -> None:
    """A row of table 2: the solve rates and median position error of answers q (B, dof) for poses T (B, 4, 4)."""
    pos, rot = pose_errors(robot.fk(q), T)
    loose = 100 * float(((pos < 0.01) & (rot < 0.03)).float().mean())
    strict = 100 * float(((pos < 0.001) & (rot < 0.01)).float().mean())
    table.add(robot.name, method, size, round(loose, 1), round(strict, 1), round(1e3 * float(pos.median()), 2), budget)


def baseline_tables(study: BaselineStudy, solver: GGIK, command: str, out: str | None, stamp: str | None) -> Table:
    """Table 2 printed (and written to ``out``_distal when given); table 1 returned (the script prints and writes
    it)."""
    from pathlib import Path

    distal = distal_table(study, solver)
    print(distal.markdown(command, study.seed, stamp))
    if out is not None:
        print("wrote", *distal.write(f"{Path(out)}_distal", command, study.seed, stamp))
    for steps, build, suffix in (
        (study.curve_steps, curve_table, "_curve"),
        (study.width_steps, width_table, "_widths"),
    ):
        if steps:
            extra = build(study)
            print(extra.markdown(command, study.seed, None))
            if out is not None:
                print("wrote", *extra.write(f"{Path(out)}{suffix}", command, study.seed, None))
    return iknet_table(study, solver)
