"""The evaluation suite of the GGIK paper, extended: accuracy (Table 1), seeding local solvers (Table 2),
joint limits, each measured with its baselines in the same process, and generalisation to robots
outside a checkpoint's training set (:func:`generalisation_table`).

All problems are seeded goals reachable by construction (q uniform within the limits, goal = FK(q)).
Errors are computed by FK of the recovered joint angles in float64: position [m, reported in mm],
rotation angle [rad, reported in degrees]. Unlike the reference experiments, no rows are dropped
(the reference removed everything above the pooled 99th percentile) and success means 1 cm AND 1 degree.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from .data import ProblemSet, step_generator
from .errors import GGIKError
from .graph import RobotGraph
from .inference import RawSamples, sample_joint_angles, success_rate
from .model import GGIKModel
from .random_robots import random_robot, randomize_links
from .refine import RefineConfig, RefineInfo, lm_refine, slsqp_refine
from .report import Table
from .robot import Robot, available_robots

__all__ = [
    "angle_mmd",
    "reference_solutions",
    "accuracy_table",
    "seeding_table",
    "limits_table",
    "generalisation_table",
    "generalisation_points",
    "training_set",
    "structure_lengths",
    "EvalConfig",
    "FAMILY_MEAN",
    "RANDOM_FAMILY_KEY",
]


@dataclass
class EvalConfig:
    problems: int = 2000  #: goals per robot
    samples: int = 32  #: S, samples (or random starts) per goal
    seed: int = 0
    mmd_problems: int = 200  #: goals per robot used for the diversity score (it needs a reference set)
    mmd_bandwidth: float = 1.0  #: h of the kernel exp(-|f(a) - f(b)|^2 / (2 h^2)), f(q) = (cos q, sin q)
    slsqp_problems: int = 50  #: SLSQP is slow (scipy, one goal at a time): it sees the first N goals


def _features(q: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.cos(q), torch.sin(q)], -1)


def angle_mmd(a: torch.Tensor, b: torch.Tensor, valid_b: torch.Tensor | None = None, bandwidth: float = 1.0) -> torch.Tensor:
    """Squared maximum mean discrepancy between joint-angle sets, per problem (biased V-statistic).

    Args:
        a: (P, S, dof) samples; b: (P, R, dof) reference solutions; valid_b: (P, R) bool mask of b.
        bandwidth: h of the Gaussian kernel on the embedding f(q) = (cos q, sin q), which treats angles
            that differ by 2 pi as equal.
    Returns:
        (P,) MMD^2 >= 0 (NaN where fewer than 2 valid reference solutions exist).
    """
    fa, fb = _features(a), _features(b)
    wb = torch.ones(b.shape[:2], dtype=a.dtype) if valid_b is None else valid_b.to(a.dtype)
    wa = torch.ones(a.shape[:2], dtype=a.dtype)

    def k(x, y):
        return torch.exp(-torch.cdist(x, y) ** 2 / (2 * bandwidth**2))

    def mean_k(x, y, wx, wy):
        w = wx[:, :, None] * wy[:, None, :]
        return (k(x, y) * w).sum((-1, -2)) / w.sum((-1, -2)).clamp(min=1e-12)

    mmd = mean_k(fa, fa, wa, wa) + mean_k(fb, fb, wb, wb) - 2 * mean_k(fa, fb, wa, wb)
    return torch.where(wb.sum(-1) >= 2, mmd.clamp(min=0.0), torch.full_like(mmd, float("nan")))


def reference_solutions(robot: Robot, T_goal: torch.Tensor, count: int, generator: torch.Generator,
                        cfg: RefineConfig | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Many distinct exact solutions per goal: LM from ``count`` random starts. Returns q (P, R, dof), converged (P, R)."""
    q0 = robot.sample_q(T_goal.shape[0] * count, generator).view(T_goal.shape[0], count, robot.dof)
    q, info = lm_refine(robot, T_goal[:, None], q0, cfg or RefineConfig(max_iters=100))
    return q, info.converged


def _quantile_stats(err: torch.Tensor) -> list[float]:
    """Per-problem mean/min/max/Q1/Q3 over samples (err (P, S)), averaged over problems."""
    q1, q3 = torch.quantile(err, torch.tensor([0.25, 0.75], dtype=err.dtype), dim=-1)
    return [err.mean(-1).mean().item(), err.min(-1).values.mean().item(), err.max(-1).values.mean().item(),
            q1.mean().item(), q3.mean().item()]


def _raw_stats(raw: RawSamples) -> tuple[list[float], list[float], float]:
    """The accuracy table's metrics of raw samples: (position stats [mm], rotation stats [deg], success [%]).

    Stats as :func:`_quantile_stats` (mean, min = best of S, max, Q1, Q3); success: the best of the S
    samples within 1 cm and 1 degree (:func:`ggik.inference.success_rate` defaults).
    """
    pos = _quantile_stats(1e3 * raw.pos_err)
    rot = _quantile_stats(torch.rad2deg(raw.rot_err))
    return pos, rot, 100 * success_rate(raw.pos_err, raw.rot_err)


def _refined_stats(robot: Robot, q: torch.Tensor, info: RefineInfo, refine: RefineConfig) -> tuple[float, float, float, float]:
    """The seeding table's metrics of refined starts (P, S): (success [%], mean iterations, best pos err [mm],
    best rot err [deg]). Success: some start converged (``refine`` tolerances) within the joint limits."""
    ok = info.converged & _within(robot, q)
    best = (info.pos_err / refine.pos_tol + info.rot_err / refine.rot_tol).argmin(-1)
    bp = info.pos_err.gather(-1, best[:, None])[:, 0]
    br = info.rot_err.gather(-1, best[:, None])[:, 0]
    return (100 * ok.any(-1).double().mean().item(), info.iterations.double().mean().item(),
            1e3 * bp.mean().item(), math.degrees(br.mean().item()))


def _problems(robots: list[Robot], cfg: EvalConfig) -> list[tuple[Robot, torch.Tensor, torch.Tensor]]:
    return ProblemSet.generate(robots, cfg.problems, cfg.seed).groups()


def accuracy_table(model: GGIKModel, robots: list[Robot], cfg: EvalConfig, progress: bool = True,
                   figures_dir: str | Path | None = None) -> Table:
    """Paper Table 1, per robot: error statistics of raw samples, success, samples within limits, MMD diversity.

    With ``figures_dir``, also writes per robot ``accuracy_<robot>_errors.png`` (histograms of all samples'
    errors) and ``accuracy_<robot>_solutions.png`` (stick figures of the S samples of the first goal, the
    paper's Fig. 3).
    """
    from tqdm import tqdm

    table = Table(
        f"Accuracy of raw GGIK samples ({cfg.problems} goals per robot, {cfg.samples} samples each)",
        ["robot", "dof", "pos mean [mm]", "pos min [mm]", "pos max [mm]", "pos Q1 [mm]", "pos Q3 [mm]",
         "rot mean [deg]", "rot min [deg]", "rot max [deg]", "rot Q1 [deg]", "rot Q3 [deg]",
         "success 1cm&1deg [%]", "samples within limits [%]", "MMD^2", "sampling time per goal [ms]"],
    )
    for robot, _, T in tqdm(_problems(robots, cfg), desc="accuracy", disable=not progress):
        graph = RobotGraph.from_robot(robot)
        sample_joint_angles(model, graph, T[:1], cfg.samples)  # warm-up: the first call pays one-off costs
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, graph, T, cfg.samples, generator=step_generator(cfg.seed, 1))
        dt = time.perf_counter() - t0
        within = _within(robot, raw.q)
        m = min(cfg.mmd_problems, T.shape[0])
        ref_q, ref_ok = reference_solutions(robot, T[:m], cfg.samples, step_generator(cfg.seed, 2))
        mmd = angle_mmd(raw.q[:m], ref_q, ref_ok, cfg.mmd_bandwidth)
        pos, rot, success = _raw_stats(raw)
        table.add(robot.name, robot.dof, *pos, *rot, success,
                  100 * within.double().mean().item(), torch.nanmean(mmd).item(), 1e3 * dt / T.shape[0])
        if figures_dir is not None:
            from .plots import plot_error_histograms, plot_solutions

            out = Path(figures_dir)
            plot_error_histograms(raw.pos_err.flatten(), raw.rot_err.flatten(), out / f"accuracy_{robot.name}_errors.png",
                                  title=f"{robot.name}: raw GGIK samples ({T.shape[0]} goals x {cfg.samples})")
            plot_solutions(robot, raw.q[0], T[0], out / f"accuracy_{robot.name}_solutions.png",
                           title=f"{robot.name}: {cfg.samples} raw samples for one goal")
    table.notes += [
        "Per goal: mean/min/max/Q1/Q3 over its samples, then averaged over goals; nothing is dropped.",
        "success: the best of the samples within 1 cm and 1 degree. within limits: every joint inside its limits.",
        f"MMD^2: samples vs exact solutions of the same goal (LM from {cfg.samples} random starts, converged ones), "
        f"Gaussian kernel on (cos q, sin q) with bandwidth {cfg.mmd_bandwidth}, first {cfg.mmd_problems} goals; lower = "
        "closer to the spread of true solutions.",
    ]
    return table


def _within(robot: Robot, q: torch.Tensor) -> torch.Tensor:
    lo, hi = robot.lower.to(q), robot.upper.to(q)
    return (((q >= lo - 1e-9) & (q <= hi + 1e-9)) | ~robot.limited).all(-1)


def seeding_table(model: GGIKModel, robots: list[Robot], cfg: EvalConfig, refine: RefineConfig | None = None,
                  progress: bool = True) -> Table:
    """Paper Table 2: LM and SLSQP from S random starts vs from S GGIK samples (strict 1 mm / 0.01 rad)."""
    from tqdm import tqdm

    refine = refine or RefineConfig()
    table = Table(
        f"Seeding local solvers: {cfg.samples} starts per goal, strict success = {refine.pos_tol * 1e3:g} mm and "
        f"{refine.rot_tol:g} rad within limits",
        ["robot", "solver", "starts", "goals", "success [%]", "mean iterations", "time per goal [ms]",
         "of which sampling [ms]", "best pos err [mm]", "best rot err [deg]"],
    )
    for robot, _, T in tqdm(_problems(robots, cfg), desc="seeding", disable=not progress):
        graph = RobotGraph.from_robot(robot)
        sample_joint_angles(model, graph, T[:1], cfg.samples)  # warm-up
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, graph, T, cfg.samples, generator=step_generator(cfg.seed, 3))
        t_sample = (time.perf_counter() - t0) / T.shape[0]
        rand = robot.sample_q(T.shape[0] * cfg.samples, step_generator(cfg.seed, 4)).view(T.shape[0], cfg.samples, robot.dof)
        for solver_name, fn, n in (("LM", lm_refine, T.shape[0]), ("SLSQP", slsqp_refine, min(cfg.slsqp_problems, T.shape[0]))):
            for start_name, q0, extra in (("random", rand, 0.0), ("GGIK", raw.q, t_sample)):
                t0 = time.perf_counter()
                q, info = fn(robot, T[:n, None], q0[:n], refine)
                dt = (time.perf_counter() - t0) / n
                success, iters, bp, br = _refined_stats(robot, q, info, refine)
                table.add(robot.name, solver_name, start_name, n, success, iters, 1e3 * (dt + extra), 1e3 * extra, bp, br)
    table.notes += [
        f"LM: batched damped least squares in torch (all goals x starts at once), at most {refine.max_iters} iterations; "
        f"SLSQP: scipy, at most {refine.slsqp_max_iters} iterations, ftol {refine.slsqp_ftol:g}, first {cfg.slsqp_problems} goals.",
        "time per goal: wall time of the solver call divided by the goals, plus (GGIK rows) the time to sample the seeds.",
        "mean iterations: over all starts (an element stops at convergence).",
    ]
    return table


def limits_table(model: GGIKModel, robots: list[Robot], cfg: EvalConfig, progress: bool = True) -> Table:
    """Fraction of raw samples within the limits, per joint and per robot."""
    from tqdm import tqdm

    width = max(r.dof for r in robots)
    table = Table(
        f"Raw samples within joint limits ({cfg.problems} goals x {cfg.samples} samples per robot) [%]",
        ["robot", "all joints"] + [f"joint {i + 1}" for i in range(width)],
    )
    for robot, _, T in tqdm(_problems(robots, cfg), desc="limits", disable=not progress):
        raw = sample_joint_angles(model, RobotGraph.from_robot(robot), T, cfg.samples, generator=step_generator(cfg.seed, 5))
        lo, hi = robot.lower.to(raw.q), robot.upper.to(raw.q)
        per_joint = (((raw.q >= lo - 1e-9) & (raw.q <= hi + 1e-9)) | ~robot.limited).double().mean((0, 1))
        cells = [100 * v for v in per_joint.tolist()] + ["" for _ in range(width - robot.dof)]
        table.add(robot.name, 100 * _within(robot, raw.q).double().mean().item(), *cells)
    table.notes.append("Continuous joints count as within limits. Angles are moved into the limits by 2 pi where possible.")
    return table


# ---------------------------------------------------------------------------------------------- generalisation
FAMILY_MEAN = "(family mean)"  #: the robot cell of a family's aggregate row in :func:`generalisation_table`
RANDOM_FAMILY_KEY = 0x6E7  #: robots of the random families come from step_generator(seed, RANDOM_FAMILY_KEY, ...)
_GOALS_KEY = 0x5E7


def training_set(checkpoint: dict) -> dict:
    """What a checkpoint was trained on, in the form of :meth:`ggik.data.TrainingData.describe`.

    Its ``training_robots`` entry; for a file without one, the same derived from its config's data section.
    """
    recorded = checkpoint.get("training_robots")
    if isinstance(recorded, dict) and "named" in recorded:
        return recorded
    data = (checkpoint.get("config") or {}).get("data")
    if data is None:
        raise GGIKError("the checkpoint records neither training_robots nor a data config: cannot tell which robots are unseen")
    from .config import from_dict
    from .data import DataConfig, TrainingData

    return TrainingData(from_dict(DataConfig, data, "config.data")).describe()


def _trained_named(training: dict) -> list[str]:
    return [name for name, w in (training.get("named") or {}).items() if w > 0]


def _trained_random_dofs(training: dict) -> list[int]:
    random = training.get("random") or {}
    return sorted(set(random.get("dofs") or [])) if random.get("weight", 0) > 0 else []


def _trained_randomize_fraction(training: dict) -> float | None:
    randomized = training.get("randomized") or {}
    if randomized.get("weight", 0) > 0 and _trained_named(training):
        return float(randomized.get("fraction", 0.0))
    return None


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
    name, dist = min(((n, float(torch.linalg.vector_norm(s - r) / torch.linalg.vector_norm(r))) for n, r in same.items()),
                     key=lambda item: item[1])
    return dist, f"edges vs {name}" + (f" (upper bound: random {d}-DOF robots trained)" if trained_random else "")


@dataclass
class _Family:
    name: str
    robots: list[Robot]
    distances: list[tuple[float, str]]  #: per robot: (distance to the training set, what it measures)


def _check_generalisation_options(cfg: EvalConfig, dofs: list[int], scales: list[float], family_size: int) -> None:
    if cfg.problems < 1 or cfg.samples < 1:
        raise GGIKError(f"goals per robot and samples per goal must be >= 1, got {cfg.problems} and {cfg.samples}")
    bad = [d for d in dofs if int(d) != d or d < 2]
    if bad:
        raise GGIKError(f"--dofs: random robots need an integer DOF >= 2, got {bad}")
    bad = [r for r in scales if not 0.0 < r < 1.0]
    if bad:
        raise GGIKError(f"--scales: randomize_links scales r must lie in (0, 1), got {bad}")
    if (dofs or scales) and (int(family_size) != family_size or family_size < 1):
        raise GGIKError(f"--family-size must be a positive integer, got {family_size}")


def _generalisation_families(training: dict, seed: int, robots: list[Robot] | None, dofs: list[int],
                             scales: list[float], family_size: int) -> tuple[list[_Family], list[str]]:
    trained = _trained_named(training)
    random_dofs = _trained_random_dofs(training)
    references = {n: structure_lengths(RobotGraph.from_robot(Robot.from_name(n))) for n in trained}
    families: list[_Family] = []
    notes: list[str] = []

    def family(name: str, members: list[Robot], distances: list[tuple[float, str]] | None = None) -> None:
        if distances is None:
            distances = [_edge_distance(RobotGraph.from_robot(r), references, random_dofs) for r in members]
        families.append(_Family(name, members, distances))

    if robots is None:
        unseen = [n for n in available_robots() if n not in trained]
        if unseen:
            family("unseen named", [Robot.from_name(n) for n in unseen])
        else:
            notes.append(f"All {len(available_robots())} named robots of urdfs/ are in the checkpoint's training set: "
                         "there is no unseen named robot to evaluate (only random families below).")
    elif robots:
        seen = [r.name for r in robots if r.name in trained]
        if seen:
            raise GGIKError(f"{seen} in the checkpoint's training set ({trained}): generalisation evaluates unseen robots "
                            "(use `ggik eval accuracy` for training robots)")
        family("unseen named", list(robots))
    for d in dofs:
        members = [random_robot(d, step_generator(seed, RANDOM_FAMILY_KEY, 1, d, k), name=f"random{d}_{k}") for k in range(family_size)]
        family(f"random {d}-DOF", members)
    bases = trained or available_robots()
    for r in scales:
        members, distances = [], []
        for k in range(family_size):
            base = bases[k % len(bases)]
            robot = randomize_links(Robot.from_name(base), r, step_generator(seed, RANDOM_FAMILY_KEY, 2, round(1e6 * r), k))
            robot.name = f"{base}~{r:g}#{k}"
            members.append(robot)
            distances.append((r, f"scale r of {base}") if base in trained else
                             _edge_distance(RobotGraph.from_robot(robot), references, random_dofs))
        family(f"randomized r={r:g}", members, distances)
    return families, notes


def generalisation_table(model: GGIKModel, training: dict, cfg: EvalConfig, robots: list[Robot] | None = None,
                         dofs: list[int] = (6, 7, 8), scales: list[float] = (0.1, 0.2, 0.4), family_size: int = 10,
                         refine: RefineConfig | None = None, progress: bool = True) -> Table:
    """Raw and LM-refined accuracy on robots outside a checkpoint's training set, per robot and per family.

    Args:
        model: the model; training: what it was trained on (:func:`training_set` of its checkpoint).
        cfg: goals per robot (``problems``), samples per goal, seed.
        robots: the "unseen named" family: None = every robot of ``urdfs/`` with no (or zero) weight in
            ``training``; [] = none; robots whose name is a training robot are an error.
        dofs: one family of ``family_size`` random DH robots (:func:`random_robot`) per DOF.
        scales: one family of ``family_size`` :func:`randomize_links` robots per scale r, whose bases cycle
            through the named training robots (all ``urdfs/`` robots if there are none).
        refine: LM budget and the strict tolerances of refined success (default :class:`RefineConfig`).
    Columns: raw success (best of S within 1 cm and 1 degree) and errors as :func:`accuracy_table`, refined
    success and iterations as :func:`seeding_table`'s LM rows from GGIK seeds, and the distance to the
    training set (see the table's notes). After each family's rows, a row ``FAMILY_MEAN`` averages them.
    Raises GGIKError for bad options, or when nothing is left to evaluate.
    """
    from tqdm import tqdm

    dofs, scales = list(dict.fromkeys(dofs)), [float(r) for r in dict.fromkeys(scales)]
    _check_generalisation_options(cfg, dofs, scales, family_size)
    refine = refine or RefineConfig()
    families, notes = _generalisation_families(training, cfg.seed, robots, dofs, scales, family_size)
    if not families:
        raise GGIKError("nothing to evaluate: " + (notes[0] if notes else "no named robot, no --dofs and no --scales"))
    table = Table(
        f"Generalisation to robots outside the training set ({cfg.problems} goals per robot, {cfg.samples} samples each)",
        ["family", "robot", "dof", "distance to training set", "distance measure", "raw success 1cm&1deg [%]",
         "pos mean [mm]", "pos best [mm]", "rot mean [deg]", "rot best [deg]",
         f"refined success {refine.pos_tol * 1e3:g}mm&{refine.rot_tol:g}rad [%]", "LM iterations"],
    )
    bar = tqdm(total=sum(len(f.robots) for f in families), desc="generalisation", disable=not progress)
    for fi, fam in enumerate(families):
        rows = []
        for k, (robot, (dist, measure)) in enumerate(zip(fam.robots, fam.distances)):
            q = robot.sample_q(cfg.problems, step_generator(cfg.seed, _GOALS_KEY, fi, k))
            T = robot.fk(q)
            raw = sample_joint_angles(model, RobotGraph.from_robot(robot), T, cfg.samples, generator=step_generator(cfg.seed, 6))
            pos, rot, success = _raw_stats(raw)
            q_ref, info = lm_refine(robot, T[:, None], raw.q, refine)
            refined, iters, _, _ = _refined_stats(robot, q_ref, info, refine)
            rows.append([fam.name, robot.name, robot.dof, dist, measure, success, pos[0], pos[1], rot[0], rot[1], refined, iters])
            table.add(*rows[-1])
            bar.update(1)
        dof_values = sorted({r[2] for r in rows})
        known = [r[3] for r in rows if not math.isnan(r[3])]
        table.add(fam.name, FAMILY_MEAN, dof_values[0] if len(dof_values) == 1 else "mixed",
                  sum(known) / len(known) if known else math.nan, f"mean over {len(known)} of {len(rows)} robots",
                  *[sum(r[c] for r in rows) / len(rows) for c in range(5, 12)])
    bar.close()

    trained = _trained_named(training)
    random_dofs = _trained_random_dofs(training)
    fraction = _trained_randomize_fraction(training)
    random = training.get("random") or {}
    table.notes += notes + [
        f"Training set (the checkpoint's training_robots): named robots {trained or 'none'}; random DH robots "
        + (f"of {random_dofs} DOF (weight {random.get('weight')})" if random_dofs else "none")
        + "; randomize_links of the named robots " + (f"up to r = {fraction:g}" if fraction is not None else "none") + ".",
        "unseen named: the robots of urdfs/ with no (or zero) weight in the training set.",
        f"Random families, new robots for every seed: robot k of 'random d-DOF' is random_robot(d, step_generator(seed, "
        f"{RANDOM_FAMILY_KEY:#x}, 1, d, k)); robot k of 'randomized r=R' is randomize_links(B_k, R, step_generator(seed, "
        f"{RANDOM_FAMILY_KEY:#x}, 2, round(1e6 R), k)), B_k the k-th named training robot in turn (all urdfs/ robots if "
        f"none); seed = {cfg.seed} (this table's). Training draws its robots from step_generator(data.seed, step, rank) "
        "and validation from step_generator(val.seed, 0xDA7A): independent streams.",
        "Random d-DOF robots are new members of a family seen in training when d is among the trained random DOFs "
        f"({random_dofs or 'none'})" + (f"; randomize_links robots are inside the training distribution for r <= {fraction:g}."
                                          if fraction is not None else "; no randomize_links robots were trained."),
        "distance to training set: for randomize_links of a training robot, the scale r (each link length scaled by "
        "U[1-r, 1+r]); otherwise |s - s_ref| / |s_ref| with s the robot's structure-edge lengths (the 4 n distances "
        "between the points p, q of consecutive joint frames in the GGIK graph, what the model sees of the geometry) "
        "and s_ref those of the nearest named training robot of the same DOF; n/a when there is none. When random robots "
        "of that DOF were trained too, the nearest training robot may be closer: the value is an upper bound.",
        "raw: success = the best of the samples within 1 cm and 1 degree; pos/rot mean over all samples, best = the best "
        "sample of each goal; both averaged over goals (as the accuracy table).",
        f"refined: LM from every sample (at most {refine.max_iters} iterations); success = some sample converged to "
        f"{refine.pos_tol * 1e3:g} mm and {refine.rot_tol:g} rad within the limits; LM iterations: mean over all samples "
        "(as the seeding table).",
        f"{FAMILY_MEAN}: unweighted mean over the family's robots (distance: over the robots that have one).",
    ]
    return table


def generalisation_points(table: Table) -> list[tuple[str, str, float, float, float]]:
    """Per-robot rows of :func:`generalisation_table`: (family, robot, distance, raw success [%], refined success [%])."""
    col = {name: i for i, name in enumerate(table.columns)}
    refined = next(c for c in table.columns if c.startswith("refined success"))
    return [(r[col["family"]], r[col["robot"]], float(r[col["distance to training set"]]),
             float(r[col["raw success 1cm&1deg [%]"]]), float(r[col[refined]]))
            for r in table.rows if r[col["robot"]] != FAMILY_MEAN]
