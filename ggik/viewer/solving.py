"""One solve of the viewer: a goal and the panel's settings in (:class:`SolveRequest`), the raw samples, the refined
solutions and the distinct ones out (:class:`SolveOutcome`), with their timings.

The raw samples come from a solve with ``refine=None`` and the same seed as the refined solve, so that with the
strategy "samples" they are exactly the starts LM refined.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch

from ggik.collision import CollisionConfig, Scene
from ggik.ik import IKResult, SolveConfig
from ggik.ik.metrics import distinct_solutions
from ggik.kinematics.robot import Robot
from ggik.solver import GGIK

__all__ = ["SolveRequest", "SolveOutcome", "run_request"]


@dataclass(frozen=True)
class SolveRequest:
    """A goal and how to solve it.

    Attributes:
        goal: (4, 4) float64 pose of the gizmo in the base-link frame [m]; for the goal kind "position" only its
            translation counts, for "position+axis" its translation and the tool axis (the last joint's axis in the
            EE frame, carried by this pose).
        kind: "pose", "position" or "position+axis".
        strategy, samples, refine: the :class:`ggik.SolveConfig` (refine False: the raw samples alone).
        raw: also draw the raw model samples (one more sampling pass).
        seed: seed of the solve's generator.
        number: the request's sequence number (a newer one supersedes it).
    """

    goal: torch.Tensor
    kind: str
    strategy: str
    samples: int
    refine: bool
    raw: bool
    seed: int
    number: int = 0

    def config(self) -> SolveConfig:
        """The :class:`ggik.SolveConfig` of the refined (or, refine False, raw) solve."""
        if self.strategy == "random":
            return SolveConfig(strategy="random", random_starts=self.samples)
        return SolveConfig(samples=self.samples, strategy=self.strategy, refine="lm" if self.refine else None)


@dataclass
class SolveOutcome:
    """What one request gave.

    Attributes:
        request: the request.
        raw: the model's raw samples (IKResult, one goal), or None (not asked for, or the strategy "random").
        refined: the refined solutions (None when refine is off).
        distinct: indices into ``refined`` of the distinct solutions (0.1 rad apart, within the tolerances and the
            joint limits), best first; without ``refined``, of the distinct raw samples.
        raw_ms, refined_ms: [ms] wall time of the two solves (0 where not run).
        error: the message of a solve that failed (bad goal), else "".
        first: the viewer's first solve: its times include one-off costs (the robot's graph, loading the solvers).
    """

    request: SolveRequest
    raw: IKResult | None = None
    refined: IKResult | None = None
    distinct: list[int] = field(default_factory=list)
    raw_ms: float = 0.0
    refined_ms: float = 0.0
    error: str = ""
    first: bool = False

    @property
    def shown(self) -> IKResult | None:
        """The result the distinct solutions index: the refined one, else the raw one."""
        return self.refined if self.refined is not None else self.raw


def run_request(
    solver: GGIK,
    robot: Robot,
    request: SolveRequest,
    obstacles: Scene | None = None,
    collision: CollisionConfig | None = None,
    limit: int = 12,
) -> SolveOutcome:
    """Solve ``request`` for ``robot`` (among ``obstacles``, kept clear as ``collision`` says): the raw samples (if
    asked and the strategy samples a model), the refined solutions (if refine is on) and at most ``limit`` distinct
    solutions. Bad goals
    (ValueError, e.g. a position+axis goal for a robot without one) are caught into ``error``."""
    outcome = SolveOutcome(request)
    goal = request.goal.to(torch.float64)
    try:
        if request.raw and request.strategy != "random" or not request.refine:
            start = time.perf_counter()
            raw_config = SolveConfig(samples=request.samples, refine=None)
            gen = torch.Generator().manual_seed(request.seed)
            outcome.raw = solver.solve(
                robot, goal, raw_config, generator=gen, goal=request.kind, obstacles=obstacles, collision=collision
            )
            outcome.raw_ms = 1e3 * (time.perf_counter() - start)
        if request.refine:
            start = time.perf_counter()
            gen = torch.Generator().manual_seed(request.seed)
            config = request.config()
            outcome.refined = solver.solve(
                robot, goal, config, generator=gen, goal=request.kind, obstacles=obstacles, collision=collision
            )
            outcome.refined_ms = 1e3 * (time.perf_counter() - start)
    except ValueError as exc:
        outcome.error = str(exc)
        return outcome
    shown = outcome.shown
    if shown is not None:
        ok = shown.success[0] & shown.within_limits[0]
        if outcome.refined is None:  # raw samples alone: the distinct ones, ok or not (as ``ggik solve --raw``)
            ok = torch.ones_like(ok)
        outcome.distinct = distinct_solutions(shown.q[0], ok, ~robot.limited, limit)
    return outcome
