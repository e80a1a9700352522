"""Generalisation to robots outside a checkpoint's training set: unseen named robots, random DH families and
randomised named robots, with the distance of each robot to the training set (raw and LM-refined success).

All goals are reachable by construction (q uniform within the limits, goal = FK(q)); the robots of the random
families are new for every seed and drawn from streams independent of training and validation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from ggik import rng
from ggik.checkpoint import (
    trained_file_robots,
    trained_named_robots,
    trained_random_dofs,
    trained_randomize_fraction,
)
from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.evaluation.tables import EvalConfig, raw_stats, refined_stats
from ggik.graph import RobotGraph
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot, available_robots, random_robot, randomize_links
from ggik.kinematics.robot_files import kinematic_signature
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = [
    "UnseenFamilies",
    "generalisation_table",
    "generalisation_points",
    "structure_lengths",
    "FAMILY_MEAN",
    "RANDOM_FAMILY_KEY",
]

FAMILY_MEAN = "(family mean)"  #: the robot cell of a family's aggregate row in :func:`generalisation_table`
RANDOM_FAMILY_KEY = (
    rng.RANDOM_FAMILY
)  #: robots of the random families come from step_generator(seed, RANDOM_FAMILY_KEY, ...)


def structure_lengths(graph: RobotGraph) -> torch.Tensor:
    """(4 n,) the distances [m] between the points of consecutive joint frames, (p_{i-1}, q_{i-1}) x (p_i, q_i).

    These are the GGIK graph's structure edges without the unit p_i-q_i ones: the robot's constant
    geometry as the model sees it (they do not depend on the joint values).
    """
    points = graph.realize(torch.zeros(graph.n, dtype=torch.float64))
    idx = {name: k for k, name in enumerate(graph.node_names)}
    pairs = [(idx[f"{a}{i - 1}"], idx[f"{b}{i}"]) for i in range(1, graph.n + 1) for a in "pq" for b in "pq"]
    u, v = torch.tensor(pairs).T
    return torch.linalg.vector_norm(points[u] - points[v], dim=-1)


def _edge_distance(graph: RobotGraph, references: dict[str, torch.Tensor], random_dofs: list[int]) -> tuple[float, str]:
    """Relative structure-edge difference to the nearest named training robot of the same DOF, and its description."""
    s = structure_lengths(graph)
    d = graph.n
    trained_random = d in random_dofs
    same = {name: ref for name, ref in references.items() if ref.shape == s.shape}
    if not same:
        why = f"n/a: no named training robot has {d} DOF"
        return math.nan, why + (f" (random {d}-DOF robots are trained)" if trained_random else "")
    name, dist = min(
        ((n, float(torch.linalg.vector_norm(s - r) / torch.linalg.vector_norm(r))) for n, r in same.items()),
        key=lambda item: item[1],
    )
    return dist, f"edges vs {name}" + (f" (upper bound: random {d}-DOF robots trained)" if trained_random else "")


@dataclass
class _Family:
    name: str
    robots: list[Robot]
    distances: list[tuple[float, str]]  #: per robot: (distance to the training set, what it measures)


def _check_generalisation_options(
    cfg: EvalConfig, dofs: Sequence[int], scales: Sequence[float], family_size: int
) -> None:
    if cfg.problems < 1 or cfg.samples < 1:
        raise GGIKError(f"goals per robot and samples per goal must be >= 1, got {cfg.problems} and {cfg.samples}")
    bad_dofs = [d for d in dofs if int(d) != d or d < 2]
    if bad_dofs:
        raise GGIKError(f"--dofs: random robots need an integer DOF >= 2, got {bad_dofs}")
    bad_scales = [r for r in scales if not 0.0 < r < 1.0]
    if bad_scales:
        raise GGIKError(f"--scales: randomize_links scales r must lie in (0, 1), got {bad_scales}")
    if (dofs or scales) and (int(family_size) != family_size or family_size < 1):
        raise GGIKError(f"--family-size must be a positive integer, got {family_size}")


@dataclass(frozen=True)
class UnseenFamilies:
    """The robot families of :func:`generalisation_table`.

    Attributes:
        robots: the "unseen named" family: None = every robot of ``urdfs/`` with no (or zero) weight in the training
            set; [] = none; robots whose name is a training robot are an error.
        dofs: one family of ``family_size`` random DH robots (:func:`random_robot`) per DOF.
        scales: one family of ``family_size`` :func:`randomize_links` robots per scale r, whose bases cycle through
            the named training robots (all ``urdfs/`` robots if there are none).
    """

    robots: list[Robot] | None = None
    dofs: Sequence[int] = (6, 7, 8)
    scales: Sequence[float] = (0.1, 0.2, 0.4)
    family_size: int = 10


def _generalisation_families(
    training: dict, seed: int, spec: UnseenFamilies, convention: str = "frames"
) -> tuple[list[_Family], list[str]]:
    robots, dofs, scales, family_size = spec.robots, spec.dofs, spec.scales, spec.family_size
    trained = trained_named_robots(training)
    random_dofs = trained_random_dofs(training)
    files = trained_file_robots(training)
    references = {n: structure_lengths(RobotGraph.from_robot(Robot.from_name(n), convention)) for n in trained}
    references.update({n: structure_lengths(RobotGraph.from_robot(r, convention)) for n, r in files.items()})
    file_signatures = {kinematic_signature(r): n for n, r in files.items()}
    families: list[_Family] = []
    notes: list[str] = []

    def family(name: str, members: list[Robot], distances: list[tuple[float, str]] | None = None) -> None:
        if distances is None:
            distances = [_edge_distance(RobotGraph.from_robot(r, convention), references, random_dofs) for r in members]
        families.append(_Family(name, members, distances))

    if robots is None:
        unseen = [n for n in available_robots() if n not in trained]
        if unseen:
            family("unseen named", [Robot.from_name(n) for n in unseen])
        else:
            notes.append(
                f"All {len(available_robots())} named robots of urdfs/ are in the checkpoint's training set: "
                "there is no unseen named robot to evaluate (only random families below)."
            )
    elif robots:
        seen = [r.name for r in robots if r.name in trained]
        twins = {r.name: file_signatures.get(kinematic_signature(r)) for r in robots}  # robots trained from a file
        seen += [f"{name} (= {twin}, a file)" for name, twin in twins.items() if twin is not None]
        if seen:
            raise GGIKError(
                f"{seen} in the checkpoint's training set ({trained}): generalisation evaluates unseen robots "
                "(use `ggik eval accuracy` for training robots)"
            )
        family("unseen named", list(robots))
    for d in dofs:
        members = [
            random_robot(d, step_generator(seed, RANDOM_FAMILY_KEY, 1, d, k), name=f"random{d}_{k}")
            for k in range(family_size)
        ]
        family(f"random {d}-DOF", members)
    bases = trained or available_robots()
    for r in scales:
        members, distances = [], []
        for k in range(family_size):
            base = bases[k % len(bases)]
            robot = randomize_links(
                Robot.from_name(base), r, step_generator(seed, RANDOM_FAMILY_KEY, 2, round(1e6 * r), k)
            )
            robot.name = f"{base}~{r:g}#{k}"
            members.append(robot)
            distances.append(
                (r, f"scale r of {base}")
                if base in trained
                else _edge_distance(RobotGraph.from_robot(robot, convention), references, random_dofs)
            )
        family(f"randomized r={r:g}", members, distances)
    return families, notes


def generalisation_table(
    model: GGIKModel,
    training: dict,
    cfg: EvalConfig,
    families: UnseenFamilies | None = None,
    refine: RefineConfig | None = None,
    progress: bool = True,
) -> Table:
    """Raw and LM-refined accuracy on robots outside a checkpoint's training set, per robot and per family.

    Args:
        model: the model; training: what it was trained on (:func:`ggik.checkpoint.training_set` of its checkpoint).
        cfg: goals per robot (``problems``), samples per goal, seed.
        families: the robots evaluated (:class:`UnseenFamilies`, default ``UnseenFamilies()``).
        refine: LM budget and the strict tolerances of refined success (default :class:`RefineConfig`).
    Columns: raw success (best of S within 1 cm and 1 degree) and errors as :func:`accuracy_table`, refined
    success and iterations as :func:`seeding_table`'s LM rows from GGIK seeds, and the distance to the
    training set (see the table's notes). After each family's rows, a row ``FAMILY_MEAN`` averages them.
    Raises GGIKError for bad options, or when nothing is left to evaluate.
    """
    from tqdm import tqdm

    spec = families or UnseenFamilies()
    dofs, scales = list(dict.fromkeys(spec.dofs)), [float(r) for r in dict.fromkeys(spec.scales)]
    _check_generalisation_options(cfg, dofs, scales, spec.family_size)
    refine = refine or RefineConfig()
    made, notes = _generalisation_families(training, cfg.seed, replace(spec, dofs=dofs, scales=scales), model.cfg.graph)
    if not made:
        raise GGIKError("nothing to evaluate: " + (notes[0] if notes else "no named robot, no --dofs and no --scales"))
    table = Table(
        f"Generalisation to robots outside the training set ({cfg.problems} goals per robot, {cfg.samples} samples "
        "each)",
        [
            "family",
            "robot",
            "dof",
            "distance to training set",
            "distance measure",
            "raw success 1cm&1deg [%]",
            "pos mean [mm]",
            "pos best [mm]",
            "rot mean [deg]",
            "rot best [deg]",
            f"refined success {refine.pos_tol * 1e3:g}mm&{refine.rot_tol:g}rad [%]",
            "LM iterations",
        ],
    )
    bar = tqdm(total=sum(len(f.robots) for f in made), desc="generalisation", disable=not progress)
    for fi, fam in enumerate(made):
        rows: list[list[Any]] = []
        for k, (robot, (dist, measure)) in enumerate(zip(fam.robots, fam.distances)):
            q = robot.sample_q(cfg.problems, step_generator(cfg.seed, rng.PROBLEM_GOALS, fi, k))
            T = robot.fk(q)
            raw = sample_joint_angles(
                model,
                model.graph(robot),
                T,
                cfg.samples,
                generator=step_generator(cfg.seed, rng.GENERALISATION_SAMPLES),
            )
            pos, rot, success = raw_stats(raw)
            q_ref, info = lm_refine(robot, T[:, None], raw.q, refine)
            refined, iters, _, _ = refined_stats(robot, q_ref, info, refine)
            rows.append(
                [
                    fam.name,
                    robot.name,
                    robot.dof,
                    dist,
                    measure,
                    success,
                    pos[0],
                    pos[1],
                    rot[0],
                    rot[1],
                    refined,
                    iters,
                ]
            )
            table.add(*rows[-1])
            bar.update(1)
        dof_values = sorted({r[2] for r in rows})
        known = [r[3] for r in rows if not math.isnan(r[3])]
        table.add(
            fam.name,
            FAMILY_MEAN,
            dof_values[0] if len(dof_values) == 1 else "mixed",
            sum(known) / len(known) if known else math.nan,
            f"mean over {len(known)} of {len(rows)} robots",
            *[sum(r[c] for r in rows) / len(rows) for c in range(5, 12)],
        )
    bar.close()

    trained = trained_named_robots(training)
    random_dofs = trained_random_dofs(training)
    fraction = trained_randomize_fraction(training)
    random = training.get("random") or {}
    table.notes += notes + [
        f"Training set (the checkpoint's training_robots): named robots {trained or 'none'}; random DH robots "
        + (f"of {random_dofs} DOF (weight {random.get('weight')})" if random_dofs else "none")
        + "; randomize_links of the named robots "
        + (f"up to r = {fraction:g}" if fraction is not None else "none")
        + ".",
        "unseen named: the robots of urdfs/ with no (or zero) weight in the training set.",
        "Random families, new robots for every seed: robot k of 'random d-DOF' is random_robot(d, "
        "step_generator(seed, "
        f"{RANDOM_FAMILY_KEY:#x}, 1, d, k)); robot k of 'randomized r=R' is randomize_links(B_k, R, "
        "step_generator(seed, "
        f"{RANDOM_FAMILY_KEY:#x}, 2, round(1e6 R), k)), B_k the k-th named training robot in turn (all urdfs/ robots "
        "if "
        f"none); seed = {cfg.seed} (this table's). Training draws its robots from step_generator(data.seed, step, "
        "rank) "
        f"and validation from step_generator(val.seed, {rng.VALIDATION_ROBOTS:#x}): independent streams.",
        "Random d-DOF robots are new members of a family seen in training when d is among the trained random DOFs "
        f"({random_dofs or 'none'})"
        + (
            f"; randomize_links robots are inside the training distribution for r <= {fraction:g}."
            if fraction is not None
            else "; no randomize_links robots were trained."
        ),
        "distance to training set: for randomize_links of a training robot, the scale r (each link length scaled by "
        "U[1-r, 1+r]); otherwise |s - s_ref| / |s_ref| with s the robot's structure-edge lengths (the 4 n distances "
        "between the points p, q of consecutive joint frames in the GGIK graph, what the model sees of the geometry) "
        "and s_ref those of the nearest named training robot of the same DOF; n/a when there is none. When random "
        "robots "
        "of that DOF were trained too, the nearest training robot may be closer: the value is an upper bound.",
        "raw: success = the best of the samples within 1 cm and 1 degree; pos/rot mean over all samples, best = the "
        "best "
        "sample of each goal; both averaged over goals (as the accuracy table).",
        f"refined: LM from every sample (at most {refine.max_iters} iterations); success = some sample converged to "
        f"{refine.pos_tol * 1e3:g} mm and {refine.rot_tol:g} rad within the limits; LM iterations: mean over all "
        "samples "
        "(as the seeding table).",
        f"{FAMILY_MEAN}: unweighted mean over the family's robots (distance: over the robots that have one).",
    ]
    return table


def generalisation_points(table: Table) -> list[tuple[str, str, float, float, float]]:
    """Per-robot rows of :func:`generalisation_table`: (family, robot, distance, raw success [%], refined
    success [%])."""
    col = {name: i for i, name in enumerate(table.columns)}
    refined = next(c for c in table.columns if c.startswith("refined success"))
    return [
        (
            r[col["family"]],
            r[col["robot"]],
            float(r[col["distance to training set"]]),
            float(r[col["raw success 1cm&1deg [%]"]]),
            float(r[col[refined]]),
        )
        for r in table.rows
        if r[col["robot"]] != FAMILY_MEAN
    ]
