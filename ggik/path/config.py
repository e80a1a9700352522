"""The options of path following (:func:`ggik.path.solve_path`): tolerances, budgets and method switches."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ggik.ik.refine_config import RefineConfig
from ggik.ik.tolerances import PATH_TOLERANCES, Tolerances

__all__ = ["PathConfig", "TrajectoryConfig"]


@dataclass
class TrajectoryConfig:
    """Tolerances and budget of :func:`ggik.path.trajectory.trajectory_refine` (tolerance defaults:
    :data:`ggik.ik.tolerances.PATH_TOLERANCES`)."""

    pos_tol: float = PATH_TOLERANCES.pos_tol  #: a waypoint is reached when its position error is below this [m]
    rot_tol: float = PATH_TOLERANCES.rot_tol  #: ... and its rotation error below this [rad]
    max_iters: int = 30  #: LM iterations (each one banded solve)
    smooth_weight: float = 1e-6  #: initial s [m^2]: a full allowed move costs like sqrt(s) m of position error
    smooth_decay: float = 0.3  #: s is multiplied by this after every iteration without a too large move
    rot_weight: float = 0.1  #: [m/rad] length that makes rotation errors comparable to positions
    damping: float = 1e-3  #: initial LM damping (relative to the diagonal, plus the identity)
    #: the clearance margins shrink with s (by ``smooth_decay``) down to this fraction of them, not to mere contact
    margin_floor: float = 0.1

    def __post_init__(self) -> None:
        """ValueError naming the first bad value."""
        for name in ("pos_tol", "rot_tol", "rot_weight", "damping"):
            if not getattr(self, name) > 0:
                raise ValueError(f"TrajectoryConfig.{name} must be positive, got {getattr(self, name)}")
        for name in ("max_iters", "smooth_weight"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"TrajectoryConfig.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("smooth_decay", "margin_floor"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"TrajectoryConfig.{name} must be in [0, 1], got {getattr(self, name)}")


@dataclass
class PathConfig:
    """Tolerances, budgets and method switches of :func:`ggik.path.solve_path` (``ggik eval paths`` measures the
    defaults on the path suite in ``eval/paths/``)."""

    pos_tol: float = PATH_TOLERANCES.pos_tol  #: [m] a waypoint is reached within this position error (CppFlow: 0.1 mm)
    rot_tol: float = PATH_TOLERANCES.rot_tol  #: [rad] ... and this rotation error (0.1 deg)
    max_jump: float = math.radians(7.0)  #: [rad] the largest allowed move of a revolute joint between waypoints
    max_jump_m: float = 0.02  #: [m] the same for prismatic joints
    starts: int = 16  #: start seeds per start waypoint: ``samples`` from the model, the rest uniform random
    samples: int = 8  #: GGIK samples among them (with a model; 0: random starts only)
    sweep_tracks: int = 12  #: at most this many distinct start candidates per start waypoint and direction
    sweep_steps: int = 1  #: Gauss-Newton predictor steps per waypoint of a sweep
    continuation: bool = True  #: sweeps (off: only the tracks below give candidates)
    track_samples: int = 0  #: coherent model tracks per round (the same noise at every sampled waypoint; 0: off)
    track_stride: int = 5  #: the model samples every k-th waypoint of a track; joint values are interpolated between
    random_tracks: int = 0  #: tracks per round whose seed is one uniform random configuration at every waypoint
    lm_iters: int = 30  #: LM budget of every candidate
    rot_weight: float = 0.1  #: [m/rad] weight of rotation errors in every LM
    allow: float = 0.75  #: the smooth search pass may use jumps up to max(B*, allow) allowed moves
    limit_margin: float = 0.1  #: [rad or m] the search penalises configurations closer than this to a limit
    limit_weight: float = 1.0  #: ... with this weight (per joint on its limit, in squared allowed moves)
    #: trajectory LM runs on a searched path whose largest jump is at most this many allowed moves (it spreads jumps of
    #: a few allowed moves over their neighbours; 2 left CppFlow's panda__flappy_bird unsolved: benchmarks/cppflow)
    refine_bottleneck: float = 5.0
    traj_iters: int = 30  #: trajectory LM iterations
    smooth_weight: float = 1e-6  #: initial smoothness weight of the trajectory LM (:class:`TrajectoryConfig`)
    max_rounds: int = 6  #: rounds of candidates, search and refinement
    time_limit: float = 10.0  #: [s] no new round starts after this
    stop_at_first_valid: bool = True  #: False: keep improving (smallest largest move) until the limits
    #: the clock of ``time_limit`` and of the result's times: () -> seconds from any origin (default
    #: :func:`time.perf_counter`; a test passes one it drives, so that no outcome depends on the machine's speed)
    clock: Callable[[], float] = field(default=time.perf_counter, repr=False, compare=False)

    def check(self) -> None:
        """ValueError naming the first bad value."""
        for name in (
            "pos_tol",
            "rot_tol",
            "max_jump",
            "max_jump_m",
            "limit_margin",
            "time_limit",
            "allow",
            "rot_weight",
            "refine_bottleneck",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"PathConfig.{name} must be positive, got {getattr(self, name)}")
        for name in (
            "samples",
            "starts",
            "track_samples",
            "random_tracks",
            "traj_iters",
            "lm_iters",
            "smooth_weight",
            "limit_weight",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"PathConfig.{name} must be >= 0, got {getattr(self, name)}")
        for name in ("sweep_tracks", "sweep_steps", "track_stride", "max_rounds"):
            if getattr(self, name) < 1:
                raise ValueError(f"PathConfig.{name} must be >= 1, got {getattr(self, name)}")
        if not callable(self.clock):
            raise ValueError(f"PathConfig.clock must be a function returning seconds, got {self.clock!r}")
        if not (self.continuation or self.track_samples or self.random_tracks):
            raise ValueError(
                "PathConfig: no source of candidates (continuation off, track_samples = random_tracks = 0)"
            )
        if self.continuation and self.starts < 1:
            raise ValueError(f"PathConfig: continuation needs start seeds (starts > 0), got starts = {self.starts}")

    @property
    def tolerances(self) -> Tolerances:
        """``pos_tol`` and ``rot_tol`` as :class:`Tolerances` (ValueError unless both are positive)."""
        return Tolerances(self.pos_tol, self.rot_tol)

    def trajectory_config(self) -> TrajectoryConfig:
        """The :class:`TrajectoryConfig` of the whole-trajectory refinement and of judging a trajectory: these
        tolerances, ``traj_iters``, ``smooth_weight`` and ``rot_weight``."""
        return TrajectoryConfig(
            pos_tol=self.pos_tol,
            rot_tol=self.rot_tol,
            max_iters=self.traj_iters,
            smooth_weight=self.smooth_weight,
            rot_weight=self.rot_weight,
        )

    def lm_config(self) -> RefineConfig:
        """The :class:`RefineConfig` of every candidate's LM: these tolerances, ``lm_iters`` and ``rot_weight``."""
        return RefineConfig(
            pos_tol=self.pos_tol, rot_tol=self.rot_tol, max_iters=self.lm_iters, rot_weight=self.rot_weight
        )
