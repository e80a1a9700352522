"""The GGIK paper's own protocol as a table of the evaluation suite, with the paper's Table 1 beside ours
(``ggik eval paper``).

The protocol of Limoyo, Maric et al., "Generative Graphical Inverse Kinematics" (CoRL version), Table 1: one model,
five arms; goals FK(q) with q uniform in [-pi, pi] on every joint but the last, which is 0, and no joint limits
(:func:`ggik.kinematics.paper_goals.paper_goal_q`; each arm's from its own stream, so ``--robots ur10`` alone gets the
UR10's goals of the full run); success: the best of 32 raw samples within 1 cm and 1 degree (its caption says 50:
the table gives both, the best of the first 32 of one draw of 50). Raw samples are the model's own output: the angles
recovered from its point sets (moved by 2 pi into the limits where that is possible, which leaves FK unchanged) and
judged by FK alone, never against the limits, since the goals themselves lie outside them. A second row per arm
projects the same samples' point sets onto the problem's known distances (the method's distance-geometric projection,
``refine="dg"`` of :meth:`ggik.GGIK.solve`, no joint-space solver) and judges the recovered angles by FK alike. The
paper's numbers (:data:`PAPER_TABLE1`) are quoted; every other number is measured.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence

import torch

from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.evaluation.tables import GOAL_PROTOCOLS, EvalConfig, evaluation_problems, raw_stats, timed_raw_samples
from ggik.graph import RobotGraph
from ggik.ik.dg_refine import DGConfig, DGResult, dg_refine
from ggik.ik.metrics import success_rate
from ggik.ik.sampling import RawSamples
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel

__all__ = [
    "PAPER_TABLE1",
    "PAPER_ARMS",
    "PAPER_PROBLEMS",
    "DEFAULT_SIZES",
    "METHODS",
    "wilson_interval",
    "sample_sizes",
    "best_of",
    "paper_protocol_table",
]

#: paper Table 1 (one model, five arms, 2000 problems each): success [%], mean position error [mm], mean rotation
#: error [deg], MMD (the means over all samples of a goal, then over goals)
PAPER_TABLE1 = {
    "lbr_iiwa": (99.0, 15.1, 2.0, 0.06),
    "schunk_lwa4d": (99.0, 13.9, 2.3, 0.06),
    "schunk_lwa4p": (98.2, 6.6, 1.8, 0.21),
    "panda": (97.5, 36.5, 3.6, 0.08),
    "ur10": (90.0, 17.0, 1.7, 0.21),
}
#: the five arms of the paper's Table 1, in the order of its issue's tables
PAPER_ARMS = ("panda", "lbr_iiwa", "schunk_lwa4d", "schunk_lwa4p", "ur10")
#: goals per arm in the paper's Table 1
PAPER_PROBLEMS = 2000

#: the success columns of each sample size S (:func:`success_columns`); the other columns (:func:`table_columns`)
#: follow them, the means and best-of-S columns measured on all samples drawn (the largest S)
DEFAULT_SIZES = (32, 50)  #: the paper's text says best of 32, its Table 1's caption 50: both, from one draw
METHODS = ("raw samples", "model + DG projection")  #: the two rows of each arm (the ``method`` column)


def success_columns(size: int) -> list[str]:
    """The columns of best-of-``size`` success: the rate, its 95 % Wilson interval and the gap to the paper."""
    return [
        f"success, best of {size} [%]",
        f"95% interval, best of {size} [%]",
        f"ours - paper, best of {size} [points]",
    ]


def table_columns(sizes: tuple[int, ...]) -> list[str]:
    """The table's columns for sample sizes ``sizes`` (ascending, as :func:`sample_sizes` gives them)."""
    drawn = max(sizes)
    return [
        "robot",
        "dof",
        "goals",
        "method",
        *(c for size in sizes for c in success_columns(size)),
        "paper success [%]",
        "pos mean [mm]",
        "paper pos mean [mm]",
        "rot mean [deg]",
        "paper rot mean [deg]",
        f"best-of-{drawn} pos [mm]",
        "goals outside limits [%]",
        f"success, goals within limits, best of {drawn} [%]",
        f"success, goals outside limits, best of {drawn} [%]",
        "samples within limits [%]",
        "sampling time per goal [ms]",
        "projection time per goal [ms]",
    ]


def sample_sizes(sizes: int | Sequence[int]) -> tuple[int, ...]:
    """The sample sizes S of a table, ascending: one size or several distinct positive integers (GGIKError
    otherwise)."""
    values = (sizes,) if isinstance(sizes, int) else tuple(sizes)
    if not values or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in values):
        raise GGIKError(f"sample sizes must be one or more positive integers, got {list(values)}")
    if len(set(values)) != len(values):
        raise GGIKError(f"sample sizes must be distinct, got {list(values)}")
    return tuple(sorted(values))


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (lower, upper), fractions in [0, 1], of a success rate of ``successes`` out of ``n``
    trials (``z`` 1.96: 95 %)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"a success rate needs 0 <= successes <= n and n >= 1, got {successes} of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def best_of(pos_err: torch.Tensor, rot_err: torch.Tensor, size: int) -> float:
    """Success [%] of the best of the first ``size`` samples of each goal, errors (P, S) [m], [rad] with S >= size,
    within 1 cm and 1 degree (:func:`ggik.ik.metrics.success_rate`)."""
    if pos_err.shape[-1] < size:
        raise ValueError(f"best of {size} needs at least {size} samples per goal, got {pos_err.shape[-1]}")
    return 100 * success_rate(pos_err[:, :size], rot_err[:, :size])


def _success_cells(pos_err: torch.Tensor, rot_err: torch.Tensor, sizes: tuple[int, ...], paper: float) -> list:
    """Per size S of ``sizes``: best-of-S success [%], its 95 % Wilson interval and the gap to ``paper`` [points]."""
    n, cells = pos_err.shape[0], []
    for size in sizes:
        success = best_of(pos_err, rot_err, size)
        lo, hi = wilson_interval(round(success * n / 100), n)
        cells += [success, f"{100 * lo:.1f}-{100 * hi:.1f}", success - paper]
    return cells


def timed_dg(graph: RobotGraph, raw: RawSamples, T: torch.Tensor, dg: DGConfig) -> tuple[DGResult, float]:
    """``refine="dg"`` of :meth:`ggik.GGIK.solve` on raw samples ``raw`` (P, S) of goals ``T`` (P, 4, 4), without its
    ranking: the point sets projected (:func:`ggik.ik.dg_refine.dg_refine`, budget ``dg``), angles recovered and
    their FK errors, after a warm-up on the first goal. Returns (the result (P, S), its time [s])."""
    dg_refine(graph, raw.points[:1], T[:1], dg)  # warm-up, as the sampling's
    t0 = time.perf_counter()
    projected = dg_refine(graph, raw.points, T, dg)
    return projected, time.perf_counter() - t0


def paper_protocol_table(
    model: GGIKModel,
    robots: list[Robot],
    cfg: EvalConfig,
    progress: bool = True,
    *,
    sizes: int | Sequence[int] | None = None,
    dg: DGConfig | None = None,
) -> Table:
    """Per robot, two rows: the raw samples and the same samples after the method's distance-geometric projection
    (``refine="dg"`` of :meth:`ggik.GGIK.solve`, budget ``dg``, default :class:`DGConfig`, its joint limits off; no
    joint-space solver),
    both on the paper's protocol (``cfg.problems`` goals, whatever ``cfg.protocol`` says).

    ``sizes`` (default ``cfg.samples``): sample sizes S; max(S) samples per goal are drawn once (the accuracy stream
    of ``cfg.seed``) and projected once, and best-of-S success is judged on the first S of them (nested: success
    cannot fall with S). Per S: success within 1 cm and 1 degree by FK alone, its 95 % Wilson interval and the gap
    to the paper's Table 1 (n/a for a robot outside that table). Then, over all samples drawn: mean errors (the
    paper's beside them) and the best's, the share of goals whose q lies outside the limits, the success on the goals
    within and outside them, the share of samples within them, the sampling time and the projection's."""
    from tqdm import tqdm

    sizes = sample_sizes(cfg.samples if sizes is None else sizes)
    drawn = max(sizes)
    cfg = dataclasses.replace(cfg, protocol="paper", samples=drawn)
    dg = dataclasses.replace(dg or DGConfig(), limits=False)  # the paper's protocol has no limits: none in the fit
    best = " / ".join(str(s) for s in sizes)
    table = Table(
        f"GGIK samples on the GGIK paper's protocol ({cfg.problems} goals per robot, best of {best} samples within "
        "1 cm and 1 degree), raw and with the distance-geometric projection, beside the paper's Table 1",
        table_columns(sizes),
    )
    nan = float("nan")
    for robot, q, T in tqdm(evaluation_problems(robots, cfg), desc="paper protocol", disable=not progress):
        graph, raw, dt = timed_raw_samples(model, robot, T, cfg)
        projected, dt_dg = timed_dg(graph, raw, T, dg)
        inside = robot.within_limits(q)  # (n,) the goals whose configuration lies within the limits
        n = T.shape[0]
        paper = PAPER_TABLE1.get(robot.name, (nan, nan, nan, nan))
        dg_samples = RawSamples(
            q=projected.q, pos_err=projected.pos_err, rot_err=projected.rot_err, points=projected.points
        )
        for method, samples, cost in zip(METHODS, (raw, dg_samples), (nan, 1e3 * dt_dg / n)):
            pos, rot, _ = raw_stats(samples)
            err = samples.pos_err, samples.rot_err
            table.add(
                robot.name,
                robot.dof,
                n,
                method,
                *_success_cells(*err, sizes, paper[0]),
                paper[0],
                pos[0],
                paper[1],
                rot[0],
                paper[2],
                pos[1],
                100 * (~inside).double().mean().item(),
                best_of(err[0][inside], err[1][inside], drawn) if bool(inside.any()) else nan,
                best_of(err[0][~inside], err[1][~inside], drawn) if bool((~inside).any()) else nan,
                100 * robot.within_limits(samples.q).double().mean().item(),
                1e3 * dt / n,
                cost,
            )
    table.notes += [
        f"Goals: FK(q), {GOAL_PROTOCOLS['paper']} (seeded per arm: the same for every model, and for an arm alone "
        "as in any list of arms).",
        "raw samples: the angles recovered from the model's point sets, no refinement. model + DG projection: the "
        "same samples' point sets projected onto the problem's known distances, as ggik solve's refine=\"dg\" does "
        f"({dg.iterations} Gauss-Newton steps, the arm's handedness volumes {'on' if dg.volumes else 'off'}, joint "
        "limits off: the protocol has none), then "
        "angles recovered; no joint-space solver (no LM, no SLSQP).",
        "success, best of S: some of the first S samples of the goal within 1 cm and 1 degree, by FK of its angles "
        "alone; neither row judges the limits (nor the handedness the solver reports), since the paper's protocol has "
        f"none and its goals lie outside them. The {drawn} samples per goal are drawn once and projected once; best "
        f"of S takes the first S of them (nested: the cost of one draw of {drawn})."
        + (
            f" The first S of {drawn} are not the samples of a run of -s S alone (the sampling noise is drawn as one "
            f"block of goals x {drawn} samples): the same distribution, other draws."
            if len(sizes) > 1
            else ""
        ),
        "95% interval: Wilson score interval of the success rate over the goals.",
        f"paper: Limoyo, Maric et al., Generative Graphical Inverse Kinematics, Table 1 ({PAPER_PROBLEMS} goals per "
        "arm; best of 32 in its text, 50 in its caption); pos/rot mean: over all samples of a goal, then over goals, "
        f"as the paper's means, here over all {drawn} samples.",
        f"best-of-{drawn} pos: the smallest position error of each goal's samples, averaged over goals.",
        "success, goals within / outside limits: the success of the goals whose configuration lies within / outside "
        "the joint limits (our protocol draws only the first kind; n/a where there are none).",
        "sampling time: the model's samples with their angles and FK errors; projection time: the projection of the "
        "same samples with their angles and FK errors, beyond the sampling (a DG row costs both); per goal, this "
        "run, this machine.",
    ]
    return table
