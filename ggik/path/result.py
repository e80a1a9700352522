"""The result of path following (:func:`ggik.path.solve_path`, or any other method): a joint trajectory judged by
a :class:`ggik.path.PathConfig`'s tolerances and allowed moves."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import torch

from ggik.kinematics.robot import Robot
from ggik.path.config import PathConfig
from ggik.path.search import joint_scale
from ggik.path.trajectory import TrajectoryInfo, trajectory_check

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["PathResult", "SearchStats", "path_result", "ranges"]


@dataclass
class PathResult:
    """A joint trajectory for T waypoints, the best one found.

    Attributes:
        q: (T, dof) joint values [rad or m], continuous joints unwrapped along the path.
        pos_err: (T,) position errors [m]; rot_err: (T,) rotation errors [rad].
        steps: (T-1, dof) joint moves q[t+1] - q[t] [rad or m]; with a start configuration (T, dof), the move
            from it first.
        mjac: the largest move of a revolute or continuous joint [deg] (CppFlow's mjac); mjac_m: of a prismatic one [m].
        within_limits: every configuration within the joint limits.
        valid: every waypoint within the tolerances, within the limits, no move above the allowed one, and (with
            obstacles) no collision at a waypoint or on a motion between them.
        unreached: waypoints outside the tolerances or the limits; large_moves: waypoints whose arriving move
            exceeds the allowed one (0: the move from the start configuration).
        time_to_valid: [s] until the first valid trajectory (NaN: none); total_time: [s] of the whole call.
        candidates: candidate configurations refined (start candidates, continuation and tracks).
        rounds: rounds run; timings: [s] per part ("starts", "sweeps", "tracks", "correct", "search", "refine").
        collision_free: with obstacles, no collision at any waypoint or on the motions between them (checked every
            degree, :mod:`ggik.path.motion`); None without obstacles.
        min_clearance: [m] with obstacles, the lowest signed distance over the trajectory (negative: the deepest
            overlap); None without.
        collisions: waypoints in collision, or whose arriving motion collides (empty without obstacles).
        no_candidate: waypoints where the search found no valid configuration at all (within the tolerances and the
            limits, and collision-free with obstacles) in any round: a path that fails there is likely impossible
            there, not merely hard (empty when every waypoint had one; :func:`ggik.path.solve_path` fills it).
        closest_obstacle: with obstacles, the robot-obstacle pair closest over the returned trajectory's waypoints and
            the waypoint ("panda_link5 - boxes[0] at waypoint 12", numbered from 0); None without obstacles.
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    steps: torch.Tensor
    mjac: float
    mjac_m: float
    within_limits: bool
    valid: bool
    unreached: list[int]
    large_moves: list[int]
    time_to_valid: float
    total_time: float
    candidates: int
    rounds: int
    timings: dict[str, float] = field(default_factory=dict)
    collision_free: bool | None = None
    min_clearance: float | None = None
    collisions: list[int] = field(default_factory=list)
    no_candidate: list[int] = field(default_factory=list)
    closest_obstacle: str | None = None

    @property
    def length(self) -> float:
        """Trajectory length: the sum over moves of their joint-space norm [rad]."""
        return float(self.steps.norm(dim=-1).sum())

    def summary(self) -> str:
        """One line: validity, the worst errors and move, times; the failing waypoints when invalid."""
        text = (
            f"{'valid' if self.valid else 'NOT valid'}: max pos err {1e3 * float(self.pos_err.max()):.4f} mm, "
            f"max rot err {math.degrees(float(self.rot_err.max())):.4f} deg, mjac {self.mjac:.2f} deg, "
            f"within limits: {'yes' if self.within_limits else 'no'}, time {self.total_time:.2f} s"
        )
        if self.unreached:
            text += f"; waypoints not reached: {ranges(self.unreached)}"
        if self.large_moves:
            text += f"; moves above the allowed one arriving at waypoints: {ranges(self.large_moves)}"
        if self.min_clearance is not None:
            text += f"; min clearance {1e3 * self.min_clearance:.1f} mm"
        if self.collisions:
            text += f"; collisions at or arriving at waypoints: {ranges(self.collisions)}"
        if self.no_candidate:
            text += f"; no valid configuration found at waypoints: {ranges(self.no_candidate)}"
        if self.closest_obstacle:
            text += f"; closest obstacle: {self.closest_obstacle}"
        return text


def ranges(idx: list[int]) -> str:
    """'3-5, 9' for [3, 4, 5, 9]."""
    out, start = [], None
    for k, i in enumerate(idx):
        start = i if start is None else start
        if k + 1 == len(idx) or idx[k + 1] != i + 1:
            out.append(str(start) if start == i else f"{start}-{i}")
            start = None
    return ", ".join(out)


@dataclass(frozen=True)
class SearchStats:
    """What a path search reports beside its trajectory (the fields of :class:`PathResult` of the same names)."""

    time_to_valid: float = math.nan  #: [s] to the first valid trajectory (nan: none)
    total_time: float = 0.0  #: [s] the whole search
    candidates: int = 0  #: configurations refined
    rounds: int = 0  #: rounds run
    timings: dict[str, float] = field(default_factory=dict)  #: [s] per part of the search


def path_result(
    robot: Robot,
    poses: torch.Tensor,
    q: torch.Tensor,
    cfg: PathConfig,
    q_start: torch.Tensor | None = None,
    stats: SearchStats | None = None,
    clearance: Clearance | None = None,
    info: TrajectoryInfo | None = None,
) -> PathResult:
    """The :class:`PathResult` of trajectory ``q`` (T, dof) for ``poses`` (T, 4, 4) judged by ``cfg``'s tolerances and
    allowed moves, and with ``clearance`` its obstacles (for any method: the baselines of the benchmark use it too),
    reporting the search's ``stats`` (default ``SearchStats()``). ``info``: the judgement of ``q`` by these
    tolerances, moves and obstacles when the caller has it (the search's last check of its trajectory); None: judged
    here."""
    stats = SearchStats() if stats is None else stats
    if info is not None and info.pos_err.shape != (q.shape[0],):
        raise ValueError(f"info judges {tuple(info.pos_err.shape)} waypoints, the trajectory has {q.shape[0]}")
    if info is None:
        scale = joint_scale(robot, cfg.max_jump, cfg.max_jump_m)
        info = trajectory_check(robot, poses, q, scale, cfg.trajectory_config(), q_start, clearance=clearance)
    clear = info.clearance
    full = q if q_start is None else torch.cat([q_start[None], q])
    steps = full[1:] - full[:-1]
    prismatic = torch.tensor([t == "prismatic" for t in robot.joint_types])
    moves = steps.abs()
    mjac = math.degrees(float(moves[:, ~prismatic].max())) if moves.numel() and bool((~prismatic).any()) else 0.0
    mjac_m = float(moves[:, prismatic].max()) if moves.numel() and bool(prismatic.any()) else 0.0
    bad = (info.moves.abs() > 1.0).any(-1).nonzero()[:, 0]
    large = (bad + (0 if q_start is not None else 1)).tolist()
    return PathResult(
        q=q,
        pos_err=info.pos_err,
        rot_err=info.rot_err,
        steps=steps,
        mjac=mjac,
        mjac_m=mjac_m,
        within_limits=bool(info.within_limits.all()),
        valid=info.valid,
        unreached=(~info.reached | ~info.within_limits).nonzero()[:, 0].tolist(),
        large_moves=large,
        time_to_valid=stats.time_to_valid,
        total_time=stats.total_time,
        candidates=stats.candidates,
        rounds=stats.rounds,
        timings=dict(stats.timings),
        collision_free=None if clear is None else bool((clear >= 0).all()),
        min_clearance=None if clear is None else float(clear.min()),
        collisions=[] if clear is None else (clear < 0).nonzero()[:, 0].tolist(),
        closest_obstacle=None if clearance is None else _closest_obstacle(clearance, q),
    )


def _closest_obstacle(clearance: Clearance, q: torch.Tensor) -> str | None:
    """The robot-obstacle pair closest over the waypoints q (T, dof) and its waypoint; None without obstacles."""
    from ggik.collision.report import clearance_report

    report = clearance_report(clearance, q)
    if not report.obstacle_pair[0]:
        return None
    t = int(report.obstacle.argmin())
    return f"{report.obstacle_pair[t]} at waypoint {t}"
