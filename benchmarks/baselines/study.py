"""The learned baselines (IKNet, the distal teacher) on their papers' protocols, beside GGIK and LM, in one process.

Table 1, IKNet's protocol (position-only targets, ``samples`` answers per target): per robot, the mean and standard
deviation of the distance [cm] between the answers' EE positions and the targets, over every answer of every target,
and the share of answers within 10 cm. Methods: IKNet trained here (CPU sizes, ``iknet_steps`` steps), the distal
teacher for positions (one answer per target: its rows use it alone), GGIK raw (the shipped model, position goals,
``samples`` samples) and GGIK + LM, and LM from ``samples`` random starts. The paper's numbers beside ours, quoted.

Table 2, the distal teacher's protocol: solve rates at (1 cm, 0.03 rad) and (1 mm, 0.01 rad) on joint-uniform test
poses, for training sets of ``sizes`` goals (the same steps each), against one GGIK raw sample and LM from one random
start (the same budget: one answer per pose).

Tables 3-5 (the planar chains: steps curve, ablation, few-shot) are in :mod:`benchmarks.baselines.planar`, tables 6
and 7 (the distal teacher's other test sets, IKNet's paths) in :mod:`benchmarks.baselines.protocols`;
:func:`baseline_tables` runs the tables asked for.

Targets: FK of configurations uniform within the limits (``targets`` of them, seeded). Training budgets are reported
in CPU seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks.baselines.distances import distances_cm
from benchmarks.baselines.protocols import cached, tracik_answers
from benchmarks.common.scripts import BenchmarkError
from ggik import GGIK, Robot, SolveConfig
from ggik.baselines import DistalConfig, DistalTeacher, IKNet, IKNetConfig
from ggik.evaluation.report import Table
from ggik.kinematics.geometry import pose_errors

__all__ = ["BaselineStudy", "TABLES", "GGIK_TABLES", "iknet_table", "distal_table", "baseline_tables", "IKNET_QUOTED"]

#: IKNet's published position-only results (100 samples per target): robot -> (mean cm, std cm, % within 10 cm)
IKNET_QUOTED = {"panda": (3.1, 2.6, 98.0), "ur5": (2.8, 2.1, 98.8)}


#: the tables a run can make (made in the order ``--tables`` names them)
TABLES = ("iknet", "distal", "planar", "ablation", "fewshot", "distal-protocols", "paths", "family")
DEFAULT_SIZES = (256, 64, 10)  #: IKNetConfig's hypernetwork width, primary width and components

#: the tables with GGIK rows (their headers name the GGIK model file)
GGIK_TABLES = ("iknet", "distal", "distal-protocols", "paths")


@dataclass
class BaselineStudy:
    """The options of a run (the script's arguments)."""

    robots: list[str]
    tables: tuple[str, ...] = ("iknet", "distal")
    targets: int = 200
    samples: int = 100
    iknet_steps: int = 4000
    iknet_samples: int = 1_000_000
    iknet_sizes: tuple[int, int, int] = (256, 64, 10)  #: table iknet: hypernetwork width, primary width, components
    distal_steps: int = 4000
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    curve_steps: tuple[int, ...] = (2000, 8000)
    ablation_steps: int = 2000
    fewshot_steps: int = 2000
    planar4_samples: int = 1_000_000
    paths: int = 20
    family_arms: tuple[int, int] = (55, 10)
    family_steps: int = 4000
    family_samples: int = 1_100_000
    models: str | None = None
    seed: int = 0


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
        hyper, primary, components = study.iknet_sizes
        config = IKNetConfig(samples=study.iknet_samples, steps=study.iknet_steps, seed=study.seed,
                             hyper_width=hyper, primary_hidden=primary, components=components)  # fmt: skip
        sizes = "" if study.iknet_sizes == DEFAULT_SIZES else f"_{hyper}_{primary}_{components}"
        path = _model_path(study, f"iknet_{name}_position_{study.iknet_steps}{sizes}.pt")
        iknet = cached(IKNet, path, robot, config)
        assert isinstance(iknet, IKNet)
        res = iknet.solve(robot, targets, study.samples, torch.Generator().manual_seed(study.seed))
        label = "IKNet (CPU sizes)" if not sizes else f"IKNet ({hyper} / {primary} / {components})"
        table.add(*_row(label, robot, distances_cm(robot, res.q, targets),
                        f"{iknet.training['cpu_s']:.0f} s, {study.iknet_steps} steps (best "
                        f"{iknet.training['best_step']})"))  # fmt: skip
        curve = [f"{d * 100:.1f}" for step, d in iknet.training["validation"] if step % 1000 == 0]
        table.notes.append(f"{name} {label}: validation mean distance [cm] every 1,000 steps: {', '.join(curve)}")
        distal = DistalTeacher.fit(robot, DistalConfig(goal="position", steps=study.distal_steps, seed=study.seed))
        res = distal.solve(robot, targets)
        table.add(*_row("distal teacher (1 answer)", robot, distances_cm(robot, res.q, targets),
                        f"{distal.training['cpu_s']:.0f} s, {study.distal_steps} steps"))  # fmt: skip
        for method, config in (
            ("GGIK raw", SolveConfig(samples=study.samples)),
            ("GGIK + LM", SolveConfig(samples=study.samples, refine="lm")),
            ("LM, random starts", SolveConfig(strategy="random", random_starts=study.samples)),
        ):
            res = solver.solve(robot, targets, config, goal="position", generator=torch.Generator().manual_seed(0))
            table.add(*_row(method, robot, distances_cm(robot, res.q, targets), "shipped model" if "GGIK" in method
                            else "none"))  # fmt: skip
        if name in IKNET_QUOTED:
            mean, std, within = IKNET_QUOTED[name]
            table.add(name, "IKNet, paper (quoted)", mean, std, within, "paper sizes")
    table.notes += [
        "distances over every answer of every target (S answers per target; the distal teacher gives 1); GGIK raw: the "
        "model's own answers for position goals; + LM: each refined by LM (1 mm); LM: from uniform random starts.",
        "IKNet (hypernetwork width / primary width / components where not the defaults) CPU sizes (IKNetConfig "
        "defaults): hypernetwork 3 x 256 (authors 1,024), embedding 128, primary "
        "networks 64 wide (authors 256), 10 components (authors 50), softmax weights and head gain 8 (authors: "
        f"sparsemax, 1; table 4), batch 256 (authors 1,024); {study.iknet_samples:,} training pairs (the authors' "
        "Franka and UR5 sets: 1,000,000); the weights of the best validation kept (its step in brackets).",
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
        tracik = tracik_answers(robot, study.seed)
        if tracik is not None:
            _rate_row(table, robot, T, "TRAC-IK, 1 random seed", tracik(T), "none", "none")
    table.notes += [
        f"{study.targets} poses of uniform configurations per robot; one answer each. The paper's numbers are not "
        "quoted here: its arms and training sets differ from ours.",
        "a deterministic network has no second try: one answer per pose for every row.",
        "TRAC-IK (where the bench extra's pytracik is installed): Speed mode, 5 ms per pose, epsilon 1e-5, one "
        "random seed; its seed is counted as the answer where it finds none.",
    ]
    return table


def _rate_row(
    table: Table, robot: Robot, T: torch.Tensor, method: str, q: torch.Tensor, size: str, budget: str
) -> None:
    """A row of table 2: the solve rates and median position error of answers q (B, dof) for poses T (B, 4, 4)."""
    pos, rot = pose_errors(robot.fk(q), T)
    loose = 100 * float(((pos < 0.01) & (rot < 0.03)).float().mean())
    strict = 100 * float(((pos < 0.001) & (rot < 0.01)).float().mean())
    table.add(robot.name, method, size, round(loose, 1), round(strict, 1), round(1e3 * float(pos.median()), 2), budget)


def _model_path(study: BaselineStudy, name: str) -> Path | None:
    """Where a trained baseline of this run is kept (None: not kept)."""
    if study.models is None:
        return None
    Path(study.models).mkdir(parents=True, exist_ok=True)
    return Path(study.models) / name


def baseline_tables(study: BaselineStudy, solver: GGIK, command: str, out: str | None, stamp: str | None) -> Table:
    """Every table of ``study.tables`` (:data:`TABLES`) but the last printed and written to ``out``_NAME.md/.csv
    when ``out`` is given; the last returned (the script prints it and writes it to ``out``_LAST)."""
    from benchmarks.baselines.family import family_table
    from benchmarks.baselines.planar import ablation_table, curve_table, fewshot_table
    from benchmarks.baselines.protocols import distal_protocol_table, iknet_path_table

    models = None if study.models is None else Path(study.models)
    if models is not None:
        models.mkdir(parents=True, exist_ok=True)
    builders = {
        "iknet": lambda: iknet_table(study, solver),
        "distal": lambda: distal_table(study, solver),
        "planar": lambda: curve_table(study.curve_steps, study.planar4_samples, study.seed),
        "ablation": lambda: ablation_table(study.ablation_steps, study.seed),
        "fewshot": lambda: fewshot_table(study.fewshot_steps, 0.2, study.seed),
        "distal-protocols": lambda: distal_protocol_table(
            study.robots, study.targets, study.distal_steps, solver, study.seed, models
        ),  # fmt: skip
        "family": lambda: family_table(*study.family_arms, 100, study.family_steps, study.family_samples, study.seed),
        "paths": lambda: iknet_path_table(
            study.robots, study.paths, study.iknet_samples, study.iknet_steps, solver, study.seed, models
        ),  # fmt: skip
    }
    unknown = [t for t in study.tables if t not in builders]
    if unknown or not study.tables:
        raise BenchmarkError(f"--tables must name some of {TABLES}, got {list(study.tables)}")
    for name in study.tables[:-1]:
        table = builders[name]()
        model = stamp if name in GGIK_TABLES else None
        print(table.markdown(command, study.seed, model))
        if out is not None:
            print("wrote", *table.write(f"{out}_{name}", command, study.seed, model))
    return builders[study.tables[-1]]()
