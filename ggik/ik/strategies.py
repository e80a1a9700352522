"""The search strategies of :meth:`ggik.GGIK.solve` (:mod:`ggik.ik.solve_config`): model samples, model first with
random restarts where they fail, and random starts alone.

Each takes goals its caller checked once (:class:`ggik.graph.Goals`, or canonical goal poses and their kind for the
strategy without a model, :class:`~ggik.graph.Goals` again for its distance-geometric variant) and validates nothing
again. Each returns an :class:`~ggik.ik.result.IKResult` sorted best
first (:func:`~ggik.ik.result.sort_best_first`); the two with restarts also report per goal the refinement
iterations and whether the model's samples alone solved it (:class:`StrategyOutcome`, what
:mod:`ggik.ik.cascade` reads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ggik.graph import Goals, RobotGraph
from ggik.graph.goal_kinds import tool_axis
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.refine import RefineInfo, lm_refine_checked, slsqp_refine_checked
from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult, best_first
from ggik.ik.sampling import RawSamples, SamplingOptions, sample_joint_angles
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = [
    "Refinement",
    "ModelDraw",
    "StrategyOutcome",
    "refine_starts",
    "ranked_solutions",
    "samples_strategy",
    "random_strategy",
    "random_points_strategy",
    "refine_point_sets",
    "model_first_strategy",
    "restart_generator",
    "starts_then_restarts",
]


@dataclass(frozen=True)
class Refinement:
    """How a strategy refines its starts: ``method`` ("lm" or "slsqp"; :func:`samples_strategy` also None, "dg",
    "dg+lm", :func:`random_points_strategy` "dg" and "dg+lm"), ``cfg`` the tolerances and budgets, ``clearance`` the
    obstacles kept clear (None: none)."""

    method: str | None
    cfg: RefineConfig
    clearance: Clearance | None = None


@dataclass(frozen=True)
class ModelDraw:
    """The model samples a strategy starts from: ``samples`` per goal of ``model`` on ``graph``, drawn with
    ``options`` (:class:`ggik.ik.sampling.SamplingOptions`: oversampling, results left on the model's device)."""

    model: GGIKModel
    graph: RobotGraph
    samples: int
    options: SamplingOptions = SamplingOptions()

    def draw(self, goals: Goals, generator: torch.Generator | None = None) -> RawSamples:
        """The samples of checked ``goals`` (B goals; :func:`ggik.ik.sampling.sample_joint_angles`)."""
        return sample_joint_angles(self.model, self.graph, goals, self.samples, generator, self.options)


@dataclass
class StrategyOutcome:
    """The result of a strategy with restarts, and per goal (B goals):

    Attributes:
        result: the :class:`IKResult`, sorted best first.
        iterations: (B,) float64, refinement iterations summed over the goal's starts and stages.
        first_stage: (B,) bool, a refined model sample solved the goal within the tolerances and the joint limits
            (all False for random starts alone).
    """

    result: IKResult
    iterations: torch.Tensor
    first_stage: torch.Tensor


def refine_starts(
    robot: Robot, T: torch.Tensor, kind: str, q0: torch.Tensor, refinement: Refinement
) -> tuple[torch.Tensor, RefineInfo]:
    """Refine starts ``q0`` (B, K, dof) towards the checked canonical goals ``T`` (B, 4, 4) of ``kind``: SLSQP for
    the method "slsqp", LM otherwise (:func:`~ggik.ik.refine.lm_refine_checked`); with the refinement's clearance,
    LM's clearance rows or SLSQP's clearance constraints."""
    fn = slsqp_refine_checked if refinement.method == "slsqp" else lm_refine_checked
    return fn(robot, T[:, None], q0, refinement.cfg, kind, tool_axis(robot), refinement.clearance)


def ranked_solutions(
    robot: Robot,
    q: torch.Tensor,
    pos: torch.Tensor,
    rot: torch.Tensor,
    cfg: RefineConfig,
    clearance: Clearance | None = None,
    wrong_handedness: torch.Tensor | None = None,
) -> IKResult:
    """The solutions of B goals (q (B, K, dof), errors (B, K)) sorted best first; with ``clearance``, collision-free
    is part of success; ``wrong_handedness`` (B, K) bool, the solutions recovered from mirror images ("dg"), is
    reported (:attr:`IKResult.wrong_handedness`) and sorted along."""
    clear = None if clearance is None else clearance.min_clearance(q)
    met = cfg.tolerances.met(pos, rot)
    result = IKResult(q, pos, rot, met, robot.within_limits(q), None, clear, wrong_handedness)
    return best_first(result, cfg.pos_tol, cfg.rot_tol)


def refine_point_sets(
    graph: RobotGraph,
    goals: Goals,
    q: torch.Tensor,
    points: torch.Tensor,
    refinement: Refinement,
    dg: DGConfig,
) -> IKResult:
    """Starts of B checked ``goals`` (their angles ``q`` (B, K, dof) and point sets ``points`` (B, K, N, 3) [m, graph
    frame]) refined by the refinement's method: "dg" projects the point sets (:func:`ggik.ik.dg_refine.dg_refine`,
    budget ``dg``; a projection that is a mirror image of the arm is reported as ``wrong_handedness``), "dg+lm" then
    runs LM from the recovered angles, "lm" and "slsqp" refine ``q``. IKResult (B, K), sorted best first."""
    robot, method, clearance = graph.robot, refinement.method, refinement.clearance
    wrong = None
    if method in ("dg", "dg+lm"):
        projected = dg_refine(graph, points, goals, dg, clearance=clearance)
        q, pos, rot = projected.q, projected.pos_err, projected.rot_err
        wrong = ~projected.handed if method == "dg" else None
    if method in ("lm", "slsqp", "dg+lm"):
        q, info = refine_starts(robot, goals.in_base, goals.kind, q, refinement)
        pos, rot = info.pos_err, info.rot_err
    return ranked_solutions(robot, q, pos, rot, refinement.cfg, clearance, wrong)


def samples_strategy(
    draw: ModelDraw, goals: Goals, refinement: Refinement, dg: DGConfig, generator: torch.Generator | None = None
) -> IKResult:
    """``draw.samples`` model samples per goal (B goals, one batched pass), refined by the refinement's method (None,
    "lm", "slsqp", "dg", "dg+lm"); ``dg``: the budget of "dg". IKResult (B, samples). The clearance: obstacles, kept
    clear by LM and SLSQP, pushed out of by "dg" (:func:`ggik.ik.dg_refine.push_out`), and checked for every
    refinement."""
    raw = draw.draw(goals, generator)
    if refinement.method is None:
        return ranked_solutions(draw.graph.robot, raw.q, raw.pos_err, raw.rot_err, refinement.cfg, refinement.clearance)
    return refine_point_sets(draw.graph, goals, raw.q, raw.points, refinement, dg)


def random_strategy(
    robot: Robot,
    T: torch.Tensor,
    kind: str,
    random_starts: int,
    refinement: Refinement,
    generator: torch.Generator | None = None,
) -> StrategyOutcome:
    """``random_starts`` uniform random configurations per goal (``robot.sample_q``, drawn for all B goals at once,
    goal-major), refined towards the checked canonical goals ``T`` (B, 4, 4) of ``kind`` by the refinement ("lm" or
    "slsqp"). No model. IKResult (B, random_starts)."""
    B = T.shape[0]
    q0 = robot.sample_q(B * random_starts, generator, device=T.device).view(B, random_starts, robot.dof)
    q, info = refine_starts(robot, T, kind, q0, refinement)
    return StrategyOutcome(
        result=ranked_solutions(robot, q, info.pos_err, info.rot_err, refinement.cfg, refinement.clearance),
        iterations=info.iterations.to(torch.float64).sum(-1),
        first_stage=torch.zeros(B, dtype=torch.bool),
    )


def random_points_strategy(
    graph: RobotGraph,
    goals: Goals,
    random_starts: int,
    refinement: Refinement,
    dg: DGConfig,
    generator: torch.Generator | None = None,
) -> IKResult:
    """Distance geometry from random starts, the baseline of "dg" without a model: ``random_starts`` uniform random
    configurations per goal (B checked ``goals``; drawn as :func:`random_strategy` draws them), their point sets
    realized on the graph of the goals' kind (anchors are set by the projection), projected by "dg" (budget ``dg``)
    and, for "dg+lm", refined by LM (:func:`refine_point_sets`). IKResult (B, random_starts), on the CPU."""
    robot, B = graph.robot, goals.shape[0]
    q0 = robot.sample_q(B * random_starts, generator).view(B, random_starts, robot.dof).to(torch.float64)
    points = graph.for_goal_kind(goals.kind).realize(q0)
    return refine_point_sets(graph, goals.to(torch.float64, "cpu"), q0, points, refinement, dg)


def model_first_strategy(
    draw: ModelDraw,
    goals: Goals,
    random_starts: int,
    refinement: Refinement,
    generator: torch.Generator | None = None,
    start_generator: torch.Generator | None = None,
) -> StrategyOutcome:
    """Refine ``draw.samples`` model samples per goal (B goals; the method "lm" or "slsqp"); the goals that none of
    them solves within the tolerances and the joint limits get ``random_starts`` random starts, refined the same way
    (:func:`starts_then_restarts`). Each goal keeps its best ``samples`` solutions: IKResult (B, samples).

    ``generator`` draws the model's sampling noise, ``start_generator`` the random starts (:func:`starts_then_restarts`:
    the starts :func:`random_strategy` would draw from it). :meth:`ggik.GGIK.solve` passes a copy of its generator as
    it was before the noise (:func:`restart_generator`): a restarted goal gets the very starts that the strategy
    "random" gets from the same generator, so the default never leaves a goal unsolved that the strategy "random" with
    as many starts solves. A goal without a collision-free solution is restarted; with ``draw.options.on_device`` the
    samples stay on the model's device, and so do LM and the result."""
    raw = draw.draw(goals, generator)
    return starts_then_restarts(
        draw.graph.robot, goals.in_base, goals.kind, raw.q, random_starts, refinement, start_generator
    )


def restart_generator(generator: torch.Generator | None) -> torch.Generator:
    """A new generator in ``generator``'s present state (None: the state of torch's default CPU generator, which
    :meth:`ggik.Robot.sample_q` draws from without one), on its device: what :meth:`ggik.GGIK.solve` gives the
    restarts of "model-first" before the model draws its noise, so that they are the strategy "random"'s starts for
    the same generator. Drawing from the copy leaves ``generator`` as it was."""
    source = torch.default_generator if generator is None else generator
    return torch.Generator(device=source.device).set_state(source.get_state())


def starts_then_restarts(
    robot: Robot,
    T: torch.Tensor,
    kind: str,
    q_first: torch.Tensor,
    random_starts: int,
    refinement: Refinement,
    start_generator: torch.Generator | None = None,
) -> StrategyOutcome:
    """The restart policy of the cascades: refine the first-stage starts ``q_first`` (B, S, dof) towards the checked
    canonical goals ``T`` (B, 4, 4) of ``kind``; the goals that none of them solves within the tolerances and the
    joint limits get ``random_starts`` uniform random starts, refined the same way. Each goal keeps its best S
    solutions: IKResult (B, S). The model-first cascade starts from model samples, its control
    (:func:`ggik.ik.cascade.lm_random_first`) from random starts.

    The restarts are the starts :func:`random_strategy` draws from ``start_generator``: ``random_starts`` per goal for
    all B goals, goal-major (drawn once, and only when some goal is unsolved), of which the unsolved goals' are
    refined. So a goal's restarts do not depend on which other goals were solved, and from a ``start_generator`` in
    the state that a call of the strategy "random" finds, a restarted goal is refined from that call's starts."""
    samples = q_first.shape[1]
    cfg, clearance = refinement.cfg, refinement.clearance
    q, info = refine_starts(robot, T, kind, q_first, refinement)
    result = ranked_solutions(robot, q, info.pos_err, info.rot_err, cfg, clearance)
    iterations = info.iterations.to(torch.float64).sum(-1)
    first_stage = (result.success & result.within_limits)[:, 0]  # the best is strict-valid if any is
    todo = (~first_stage).nonzero()[:, 0]
    if todo.numel():
        B = T.shape[0]  # every goal's starts, as random_strategy draws them; the unsolved goals' are refined
        q0 = robot.sample_q(B * random_starts, start_generator, device=T.device).view(B, random_starts, robot.dof)
        q2, info2 = refine_starts(robot, T[todo], kind, q0[todo], refinement)
        iterations[todo] = iterations[todo] + info2.iterations.to(torch.float64).sum(-1)

        def both(name: str, new: torch.Tensor) -> torch.Tensor:
            return torch.cat([getattr(result, name)[todo], new], 1)

        merged = ranked_solutions(
            robot, both("q", q2), both("pos_err", info2.pos_err), both("rot_err", info2.rot_err), cfg, clearance
        )
        for name in ("q", "pos_err", "rot_err", "success", "within_limits", "collision_free", "clearance"):
            if getattr(result, name) is not None:
                getattr(result, name)[todo] = getattr(merged, name)[:, :samples]
    return StrategyOutcome(result=result, iterations=iterations, first_stage=first_stage)
