"""One configuration of an IK solve: :class:`SolveConfig`, taken by :meth:`ggik.GGIK.solve` and ``ggik solve`` (path
following has its own, :class:`ggik.PathConfig`).

Strategies of :meth:`ggik.GGIK.solve` (:data:`STRATEGIES`), all returning an :class:`ggik.IKResult` sorted best first:

* ``"samples"`` (default): ``samples`` model samples per goal, each optionally refined (``refine``);
* ``"model-first"``: LM (or SLSQP) from ``samples`` model samples per goal; only the goals that no refined sample
  solves within the tolerances *and* the joint limits get ``random_starts`` uniform random starts, refined the same
  way: the very starts that ``"random"`` draws for the goal from the same generator, so that a goal ``"random"``
  solves is never left unsolved (:func:`ggik.ik.strategies.starts_then_restarts`); each goal keeps its best
  ``samples`` solutions;
* ``"random"``: LM (or SLSQP) from ``random_starts`` uniform random starts per goal; the model is not used. Or "dg"
  ("dg+lm"): the starts' point sets projected onto the problem's distances and volumes (then LM), the baseline of
  the distance-geometric refinement (:mod:`ggik.ik.dg_refine`) without a model.

A field left at None takes the default of the call: see :class:`SolveConfig`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

from ggik.ik.tolerances import Tolerances, check_tolerance

__all__ = [
    "SolveConfig",
    "STRATEGIES",
    "REFINE_METHODS",
    "START_REFINERS",
    "RANDOM_REFINERS",
    "DEFAULT_SAMPLES",
    "DEFAULT_RANDOM_STARTS",
]

STRATEGIES = ("samples", "model-first", "random")  #: what ``SolveConfig.strategy`` takes
REFINE_METHODS = (None, "lm", "slsqp", "dg", "dg+lm")  #: what ``SolveConfig.refine`` takes
START_REFINERS = ("lm", "slsqp")  #: the refinements of the strategy "model-first" (None means "lm")
RANDOM_REFINERS = ("lm", "slsqp", "dg", "dg+lm")  #: the refinements of the strategy "random" (None means "lm")
DEFAULT_SAMPLES = 32  #: model samples per goal of :meth:`ggik.GGIK.solve` when ``samples`` is None
DEFAULT_RANDOM_STARTS = 32  #: random starts per goal of "model-first" and "random" when ``random_starts`` is None


def _count(value: int | None, name: str, minimum: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"SolveConfig.{name} must be an integer >= {minimum}, got {value!r}")


@dataclass(frozen=True)
class SolveConfig:
    """How to solve IK goals: samples, refinement, strategy, tolerances (None: the solver's default).

    Attributes:
        samples: model samples per goal (None: 32).
        refine: local refinement of every start, one of :data:`REFINE_METHODS`: None (raw model samples), "lm"
            (batched Levenberg-Marquardt), "slsqp" (scipy, slower), "dg" (distance-geometric projection of the
            sampled point sets), "dg+lm" (LM from the "dg" result). The strategy "model-first" refines with "lm"
            (also when None) or "slsqp"; "random" with one of :data:`RANDOM_REFINERS` (None: "lm"), "dg" and
            "dg+lm" projecting the point sets of the random starts.
        strategy: one of :data:`STRATEGIES` (module docstring).
        random_starts: uniform random starts per goal of "random" and of the second stage of "model-first"
            (None: 32).
        pos_tol: [m] success: the position error below this (None: the solver's tolerances, 1 mm). LM iterates until
            it is met.
        rot_tol: [rad] ... and the rotation error below this (None: the solver's, 0.01 rad).
        oversample: K >= 1 (None: 1): ``solve`` draws K x ``samples`` model samples per goal and keeps the
            ``samples`` that best satisfy the problem's known distances
            (:func:`ggik.ik.sampling.known_distance_cost`): about K times the sampling cost, fewer bad samples.
        first_solution: one solution per goal is enough: LM stops a goal's other starts as soon as one of them
            converges (:attr:`ggik.ik.refine_config.RefineConfig.stop_at_first`: compiled, the starts run in turn;
            batched in torch, in lock-step). The result keeps its S columns, best first; the other starts unconverged.
            LM only (``refine`` "lm" or "dg+lm", or the strategies "model-first" and "random").

    Raises ValueError, naming the field, for a value out of range or a combination that means nothing (e.g.
    ``samples`` with the strategy "random", which uses no model).
    """

    samples: int | None = None
    refine: str | None = None
    strategy: str = "samples"
    random_starts: int | None = None
    pos_tol: float | None = None
    rot_tol: float | None = None
    oversample: int | None = None
    first_solution: bool = False

    def __post_init__(self) -> None:
        _count(self.samples, "samples", 1)
        _count(self.oversample, "oversample", 1)
        if self.strategy == "random" and self.oversample is not None:
            raise ValueError("SolveConfig.oversample applies to model samples; the strategy 'random' uses no model")
        _count(self.random_starts, "random_starts", 1)
        if self.refine not in REFINE_METHODS:
            raise ValueError(f"SolveConfig.refine must be one of {REFINE_METHODS}, got {self.refine!r}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"SolveConfig.strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        for name in ("pos_tol", "rot_tol"):
            if getattr(self, name) is not None:
                check_tolerance(getattr(self, name), f"SolveConfig.{name}")
        if self.strategy == "random" and self.samples is not None:
            raise ValueError(
                f"SolveConfig.samples: the strategy 'random' samples no model; leave samples unset (got {self.samples})"
            )
        if self.strategy == "samples" and self.random_starts is not None:
            raise ValueError(
                "SolveConfig.random_starts applies to the strategies 'model-first' and 'random', not to 'samples'"
            )
        refiners = RANDOM_REFINERS if self.strategy == "random" else START_REFINERS
        if self.strategy != "samples" and self.refine not in (None, *refiners):
            raise ValueError(
                f"SolveConfig.refine: the strategy {self.strategy!r} refines its starts with one of "
                f"{refiners}, got {self.refine!r}"
            )

        if self.first_solution and self.method not in ("lm", "dg+lm"):
            raise ValueError(f"SolveConfig.first_solution stops LM early; the refinement here is {self.method!r}")

    @property
    def method(self) -> str | None:
        """The refinement that runs: ``refine``, or "lm" for the strategies "model-first" and "random" when None."""
        return self.refine if self.strategy == "samples" or self.refine is not None else "lm"

    @property
    def starts(self) -> int:
        """The random starts per goal that run: ``random_starts``, or :data:`DEFAULT_RANDOM_STARTS` when None."""
        return DEFAULT_RANDOM_STARTS if self.random_starts is None else self.random_starts

    def tolerances(self, default: Tolerances) -> Tolerances:
        """The success tolerances of a call whose own are ``default`` (``pos_tol``/``rot_tol`` where set)."""
        return Tolerances(
            default.pos_tol if self.pos_tol is None else self.pos_tol,
            default.rot_tol if self.rot_tol is None else self.rot_tol,
        )
