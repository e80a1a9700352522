"""The GGIK paper's own protocol as a table of the evaluation suite, with the paper's Table 1 beside ours
(``ggik eval paper``).

The protocol of Limoyo, Maric et al., "Generative Graphical Inverse Kinematics" (CoRL version), Table 1: one model,
five arms; goals FK(q) with q uniform in [-pi, pi] on every joint but the last, which is 0, and no joint limits
(:func:`ggik.evaluation.tables.paper_goal_q`; each arm's from its own stream, so ``--robots ur10`` alone gets the
UR10's goals of the full run); success: the best of 32 raw samples within 1 cm and 1 degree. Raw
samples are the model's own output: the angles recovered from its point sets (moved by 2 pi into the limits where
that is possible, which leaves FK unchanged) and judged by FK alone, never against the limits, since the goals
themselves lie outside them. The paper's numbers (:data:`PAPER_TABLE1`) are quoted; every other number is measured.
"""

from __future__ import annotations

import dataclasses
import math

from ggik.evaluation.report import Table
from ggik.evaluation.tables import GOAL_PROTOCOLS, EvalConfig, evaluation_problems, raw_stats, timed_raw_samples
from ggik.ik.metrics import success_rate
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel

__all__ = ["PAPER_TABLE1", "PAPER_ARMS", "PAPER_PROBLEMS", "wilson_interval", "paper_protocol_table"]

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

COLUMNS = [
    "robot",
    "dof",
    "goals",
    "success [%]",
    "95% interval [%]",
    "paper success [%]",
    "ours - paper [points]",
    "pos mean [mm]",
    "paper pos mean [mm]",
    "rot mean [deg]",
    "paper rot mean [deg]",
    "best-of-S pos [mm]",
    "goals outside limits [%]",
    "success, goals within limits [%]",
    "success, goals outside limits [%]",
    "samples within limits [%]",
    "sampling time per goal [ms]",
]


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval (lower, upper), fractions in [0, 1], of a success rate of ``successes`` out of ``n``
    trials (``z`` 1.96: 95 %)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"a success rate needs 0 <= successes <= n and n >= 1, got {successes} of {n}")
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def paper_protocol_table(model: GGIKModel, robots: list[Robot], cfg: EvalConfig, progress: bool = True) -> Table:
    """Per robot: raw success on the paper's protocol (``cfg.problems`` goals, ``cfg.samples`` samples each, whatever
    ``cfg.protocol`` says) with its 95 % Wilson interval, the paper's Table 1 beside it (n/a for a robot outside that
    table), mean errors of all samples and of the best, the share of goals whose q lies outside the limits, the success
    on the goals within and outside the limits, the share of raw samples within the limits, and the sampling time."""
    from tqdm import tqdm

    cfg = dataclasses.replace(cfg, protocol="paper")
    table = Table(
        f"Raw GGIK samples on the GGIK paper's protocol ({cfg.problems} goals per robot, best of {cfg.samples} "
        "samples within 1 cm and 1 degree), beside the paper's Table 1",
        list(COLUMNS),
    )
    nan = float("nan")
    for robot, q, T in tqdm(evaluation_problems(robots, cfg), desc="paper protocol", disable=not progress):
        _, raw, dt = timed_raw_samples(model, robot, T, cfg)
        pos, rot, success = raw_stats(raw)
        inside = robot.within_limits(q)  # (n,) the goals whose configuration lies within the limits
        n = T.shape[0]
        lo, hi = wilson_interval(round(success * n / 100), n)
        paper = PAPER_TABLE1.get(robot.name, (nan, nan, nan, nan))
        table.add(
            robot.name,
            robot.dof,
            n,
            success,
            f"{100 * lo:.1f}-{100 * hi:.1f}",
            paper[0],
            success - paper[0],
            pos[0],
            paper[1],
            rot[0],
            paper[2],
            pos[1],
            100 * (~inside).double().mean().item(),
            100 * success_rate(raw.pos_err[inside], raw.rot_err[inside]) if bool(inside.any()) else nan,
            100 * success_rate(raw.pos_err[~inside], raw.rot_err[~inside]) if bool((~inside).any()) else nan,
            100 * robot.within_limits(raw.q).double().mean().item(),
            1e3 * dt / n,
        )
    table.notes += [
        f"Goals: FK(q), {GOAL_PROTOCOLS['paper']} (seeded per arm: the same for every model, and for an arm alone "
        "as in any list of arms).",
        "success: the best of the samples within 1 cm and 1 degree, by FK of the angles recovered from the model's "
        "point sets (raw: no refinement); samples are not judged against the limits, since the goals are not.",
        "95% interval: Wilson score interval of our success rate over the goals.",
        f"paper: Limoyo, Maric et al., Generative Graphical Inverse Kinematics, Table 1 ({PAPER_PROBLEMS} goals per "
        "arm, best of 32); pos/rot mean: over all samples of a goal, then over goals, as the paper's means.",
        "best-of-S pos: the smallest position error of each goal's samples, averaged over goals.",
        "success, goals within / outside limits: the success of the goals whose configuration lies within / outside "
        "the joint limits (our protocol draws only the first kind; n/a where there are none).",
    ]
    return table
