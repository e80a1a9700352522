"""The demo experiment of ``ggik demo``: a model solves a few reachable goals of two training robots and one
random robot it never saw, raw and refined with LM; the best distinct solutions per goal, success counts,
timings and the figure panels.

    solver = GGIK.pretrained()
    for case in run_demo(solver, goals=3, samples=32, show=3, seed=0):
        print(case.subject.robot.name, case.lm_goals_solved, case.distinct_per_goal)

Units: joint values [rad], position errors [m], rotation errors [rad], times [s]. Distinct solutions are
:func:`ggik.ik.metrics.distinct_solutions` (the one definition) of each goal's solutions, best first.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import torch

from ggik.checkpoint import trained_named_robots
from ggik.errors import GGIKError
from ggik.ik.metrics import distinct_solutions, success_rate
from ggik.ik.solve_config import SolveConfig
from ggik.kinematics import Robot, random_robot
from ggik.solver import GGIK, IKResult

__all__ = [
    "DEMO_ROBOTS",
    "PANEL_SOLUTIONS",
    "UNSEEN_SEED_OFFSET",
    "DemoRobot",
    "DemoCase",
    "Panel",
    "demo_robots",
    "solve_demo_case",
    "run_demo",
    "figure_panels",
]

DEMO_ROBOTS = ("panda", "ur10")  #: training robots of the demo; a random 7-DOF robot is added as the unseen one
PANEL_SOLUTIONS = 8  #: at most this many distinct solutions are drawn in one figure panel
UNSEEN_SEED_OFFSET = 7007  #: the unseen robot is ``random_robot(7, seed + UNSEEN_SEED_OFFSET)``


class Panel(NamedTuple):
    """One panel of :func:`ggik.evaluation.plots.plot_solution_grid` (a tuple of its four items)."""

    robot: Robot
    q: torch.Tensor  #: (K, dof) [rad] solutions drawn, K >= 1
    T_goal: torch.Tensor  #: (4, 4) the goal pose in the robot's base-link frame
    title: str


@dataclass(frozen=True)
class DemoRobot:
    """A robot of the demo and what the model knows of it.

    Attributes:
        robot: the chain.
        seen: how it relates to the model's training set, e.g. "a training robot".
        unseen: True for the random robot the model never saw (marked "(unseen)" in the figure).
    """

    robot: Robot
    seen: str
    unseen: bool = False

    @property
    def label(self) -> str:
        """Its name in figure panel titles."""
        return f"{self.robot.name} (unseen)" if self.unseen else self.robot.name


def demo_robots(training: dict, seed: int) -> list[DemoRobot]:
    """The demo's robots: :data:`DEMO_ROBOTS` and a random 7-DOF robot seeded by ``seed``.

    ``training`` is the model's training set (:func:`ggik.checkpoint.training_set` form, {} if unknown); a named
    robot counts as a training robot when it has weight > 0 there (weight 0 = left out).
    """
    named, rand = trained_named_robots(training), training.get("random") or {}
    unseen = random_robot(
        7, torch.Generator().manual_seed(seed + UNSEEN_SEED_OFFSET), name=f"random7_seed{seed + UNSEEN_SEED_OFFSET}"
    )
    if unseen.name in named:  # cannot happen for a fresh name; keeps the claim below checked
        raise GGIKError(f"{unseen.name} is a training robot of this model")
    robots = [
        DemoRobot(
            Robot.from_name(name), "a training robot" if name in named else "NOT among this model's training robots"
        )
        for name in DEMO_ROBOTS
    ]
    family = (
        f"; the model was trained on other random {'/'.join(map(str, rand.get('dofs', [])))}-DOF robots"
        if rand.get("weight") and rand.get("dofs")
        else ""
    )
    robots.append(DemoRobot(unseen, f"a random robot the model never saw{family}", unseen=True))
    return robots


@dataclass
class DemoCase:
    """One robot of the demo, solved: B goals, S samples per goal.

    Attributes:
        subject: the robot (:class:`DemoRobot`).
        T_goal: (B, 4, 4) goal poses in the base-link frame (FK of random joint values within the limits).
        raw: raw model samples, (B, S) per field, best first per goal (:class:`ggik.ik.IKResult`).
        lm: the same samples refined with LM, (B, S), best first per goal.
        raw_seconds: wall time [s] of the raw solve; lm_seconds: of the LM solve, sampling included.
        raw_goals_paper: goals with a raw sample within 1 cm and 1 degree (the GGIK paper's criterion).
        raw_goals_strict: goals whose best raw sample is within the solver's tolerances.
        lm_goals_solved: goals with an LM solution within the solver's tolerances.
        lm_samples_solved: LM solutions within the tolerances, of B * S.
        distinct_per_goal: (B,) the number of distinct successful LM solutions of each goal.
        listed_raw, listed_lm: per goal, the indices (into S) of the best distinct raw samples / LM results,
            successful or not, at most ``show`` each: the rows the demo lists.
        panel_raw, panel_lm: the figure panels of goal 0 (best distinct raw samples; distinct LM solutions,
            or the best LM result when none succeeded).
    """

    subject: DemoRobot
    T_goal: torch.Tensor
    raw: IKResult
    lm: IKResult
    raw_seconds: float
    lm_seconds: float
    raw_goals_paper: int
    raw_goals_strict: int
    lm_goals_solved: int
    lm_samples_solved: int
    distinct_per_goal: list[int]
    listed_raw: list[list[int]]
    listed_lm: list[list[int]]
    panel_raw: Panel
    panel_lm: Panel

    @property
    def goals(self) -> int:
        """B, the number of goals."""
        return self.T_goal.shape[0]


def solve_demo_case(
    solver: GGIK, subject: DemoRobot, T_goal: torch.Tensor, samples: int, show: int, seed: int
) -> DemoCase:
    """Solve goals ``T_goal`` (B, 4, 4) of ``subject`` with ``samples`` samples each, raw and LM-refined (both from
    the samples of seed ``seed``), and list at most ``show`` distinct solutions per goal."""
    robot = subject.robot
    solver.solve(robot, T_goal[:1], SolveConfig(samples=1, refine="lm"))  # warm-up: the robot's graph and the LM
    # (the compiled LM loads, or on a first run compiles, on its first call): the timings are of the solves only
    t0 = time.perf_counter()
    raw = solver.solve(robot, T_goal, SolveConfig(samples=samples), generator=torch.Generator().manual_seed(seed))
    raw_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    lm = solver.solve(
        robot, T_goal, SolveConfig(samples=samples, refine="lm"), generator=torch.Generator().manual_seed(seed)
    )
    lm_seconds = time.perf_counter() - t0
    B = T_goal.shape[0]
    unbounded = ~robot.limited
    everything = torch.ones(samples, dtype=torch.bool)
    distinct = [len(distinct_solutions(lm.q[b], lm.success[b], unbounded, samples)) for b in range(B)]
    best_raw = distinct_solutions(raw.q[0], everything, unbounded, PANEL_SOLUTIONS)
    ok = distinct_solutions(lm.q[0], lm.success[0], unbounded, PANEL_SOLUTIONS)
    what = f"{len(ok)} of {distinct[0]} distinct solutions (LM)" if ok else "no LM solution, best LM result"
    return DemoCase(
        subject=subject,
        T_goal=T_goal,
        raw=raw,
        lm=lm,
        raw_seconds=raw_seconds,
        lm_seconds=lm_seconds,
        raw_goals_paper=round(success_rate(raw.pos_err, raw.rot_err) * B),  # 1 cm and 1 degree
        raw_goals_strict=int(raw.success[:, 0].sum()),
        lm_goals_solved=int(lm.success[:, 0].sum()),
        lm_samples_solved=int(lm.success.sum()),
        distinct_per_goal=distinct,
        listed_raw=[distinct_solutions(raw.q[b], everything, unbounded, show) for b in range(B)],
        listed_lm=[distinct_solutions(lm.q[b], everything, unbounded, show) for b in range(B)],
        panel_raw=Panel(
            robot, raw.q[0, best_raw], T_goal[0], f"{subject.label}: {len(best_raw)} best raw samples, goal 0"
        ),
        panel_lm=Panel(robot, lm.q[0, ok or [0]], T_goal[0], f"{subject.label}: {what}, goal 0"),
    )


def run_demo(solver: GGIK, goals: int = 3, samples: int = 32, show: int = 3, seed: int = 0) -> Iterator[DemoCase]:
    """The demo, one :class:`DemoCase` per robot of :func:`demo_robots` (yielded as each is solved).

    ``goals`` reachable goals per robot (FK of joint values drawn within the limits from one generator of seed
    ``seed``, robot after robot), ``samples`` samples per goal, at most ``show`` distinct solutions listed per goal.
    """
    if goals < 1 or samples < 1 or show < 1:
        raise ValueError(f"goals, samples and show must be at least 1, got {goals}, {samples}, {show}")
    subjects = demo_robots(solver.training_robots, seed)
    g = torch.Generator().manual_seed(seed)
    for subject in subjects:
        T_goal = subject.robot.fk(subject.robot.sample_q(goals, g))
        yield solve_demo_case(solver, subject, T_goal, samples, show, seed)


def figure_panels(cases: Sequence[DemoCase]) -> list[Panel]:
    """The demo figure's panels, row by row: every case's raw panel, then every case's LM panel (one column each)."""
    return [c.panel_raw for c in cases] + [c.panel_lm for c in cases]
