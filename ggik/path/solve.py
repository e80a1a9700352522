"""Cartesian path following: joint trajectories that reach every waypoint of an end-effector path exactly, with
small moves between consecutive configurations (the problem of CppFlow, Morgan et al. 2024).

:func:`solve_path` is an anytime loop of rounds; each round

1. *candidates*: start candidates at a few waypoints (GGIK samples of the model, if any, and uniform random
   starts, refined by batched LM; the ends of the path in the first round, the worst place of the best path so far
   later), then *continuation* from the distinct ones in both directions along the whole path
   (:func:`ggik.path.candidates.sweep`: one batched Gauss-Newton predictor step per waypoint, then one batched
   LM call corrects every waypoint of every track); optionally also coherent model tracks (the same sampling noise
   at every waypoint) and constant random-start tracks, refined the same way;
2. *search*: dynamic programming over all candidates so far (:func:`ggik.path.search.search_path`: the path
   with the smallest largest joint move, then the smoothest among those, away from the joint limits);
3. *trajectory refinement*: LM on all waypoints at once (:func:`ggik.path.trajectory.trajectory_refine`).

It stops at the first valid trajectory (or keeps improving until the time limit with
``stop_at_first_valid=False``), and returns the best trajectory found. Valid (CppFlow's criterion): every
waypoint within ``pos_tol`` (0.1 mm) and ``rot_tol`` (0.1 deg), every configuration within the joint limits,
and no joint moving more than ``max_jump`` (7 deg; ``max_jump_m`` for prismatic joints) between consecutive
waypoints. Poses are (T, 4, 4) EE poses in the robot's base-link frame; joint values in rad (m).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from ggik.graph import Goals
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics.geometry import check_pose, pose_errors
from ggik.kinematics.robot import Robot
from ggik.nn.cvae import GGIKModel
from ggik.path.candidates import distinct, model_tracks, random_tracks, refine_tracks, sweep
from ggik.path.config import PathConfig
from ggik.path.result import PathResult, SearchStats, path_result
from ggik.path.search import JointScale, SearchResult, joint_scale, jumps, search_path, wrap_difference
from ggik.path.trajectory import TrajectoryInfo, trajectory_check, trajectory_refine

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["PathProgress", "solve_path", "check_path_inputs"]

#: ``progress(rounds, elapsed, failing, valid)`` after each round of :func:`solve_path`: the rounds run, the seconds
#: since the call began, the waypoints the round's trajectory fails (out of tolerance or limits, or colliding) and
#: whether it is valid
PathProgress = Callable[[int, float, int, bool], None]


class _Pool:
    """Every useful candidate so far, as (T, K, dof) joint values with (T, K) masks ``valid`` and ``real`` (a refined
    candidate: valid, or the best there is at a waypoint without a valid one), real ones first in every layer.

    New candidates that repeat an earlier one (every joint within ``same`` allowed moves of it, and not more valid)
    are dropped when they arrive, so the layers grow with the distinct candidates only."""

    def __init__(self, scale: JointScale, same: float = 0.25) -> None:
        self.scale, self.same = scale, same
        self.q: torch.Tensor | None = None
        self.valid: torch.Tensor | None = None
        self.real: torch.Tensor | None = None

    def add(self, q: torch.Tensor, valid: torch.Tensor, real: torch.Tensor | None = None) -> None:
        """Add candidates q (T, K_new, dof) with ``valid`` (T, K_new) and ``real`` (T, K_new; default all): those
        not real (e.g. waypoints a sweep did not visit) are dropped. The arguments are not modified."""
        valid = valid.clone()
        real = torch.ones_like(valid) if real is None else real.clone()
        n_old = 0 if self.q is None else self.q.shape[1]
        if self.q is not None:
            assert self.valid is not None and self.real is not None  # set together with q
            q, valid, real = (
                torch.cat([self.q, q], 1),
                torch.cat([self.valid, valid], 1),
                torch.cat([self.real, real], 1),
            )
        step = torch.as_tensor(self.scale.step)
        K = q.shape[1]
        before = torch.arange(K)[None, :] < torch.arange(n_old, K)[:, None]  # [i, j]: j came before new entry i
        for a in range(0, q.shape[0], 16):  # 16 waypoints at a time: (16, K_new, K, dof)
            d = wrap_difference(q[a : a + 16, n_old:, None] - q[a : a + 16, None], self.scale)
            close = ((d.abs() / step).amax(-1) < self.same) & before & real[a : a + 16, None, :]
            close &= valid[a : a + 16, None, :] | ~valid[a : a + 16, n_old:, None]  # an earlier one at least as valid
            real[a : a + 16, n_old:] &= ~close.any(-1)
        real &= valid | ~valid.any(1, keepdim=True)  # invalid ones only where nothing is valid
        valid &= real
        order = torch.argsort((~real).to(torch.int8) * 2 + (~valid).to(torch.int8), dim=1, stable=True)
        order = order[:, : max(1, int(real.sum(1).max()))]
        self.q = torch.gather(q, 1, order[..., None].expand(-1, -1, q.shape[-1]))
        self.valid, self.real = torch.gather(valid, 1, order), torch.gather(real, 1, order)


@dataclass(frozen=True)
class _Search:
    """One call's checked inputs, as every round of :func:`solve_path` reads them."""

    robot: Robot
    poses: torch.Tensor  #: (T, 4, 4) checked, base-link frame
    cfg: PathConfig
    model: GGIKModel | None
    goals: Goals | None  #: the poses as the model's graph's goals (with a model)
    q_start: torch.Tensor | None
    scale: JointScale
    clearance: Clearance | None


def _start_candidates(
    search: _Search, at: list[int], gen: torch.Generator | None
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Refined, distinct start candidates at waypoints ``at``: (q (n, dof), their waypoints (n,), seeds refined).

    Seeds per waypoint: the start configuration (if any) first, then ``cfg.samples`` GGIK samples (with a model), then
    uniform configurations up to ``cfg.starts`` seeds. A waypoint without a valid candidate keeps its nearest one
    (least ``pos/pos_tol + rot/rot_tol``): continuation from it may still reach its neighbours."""
    robot, poses, cfg, model = search.robot, search.poses, search.cfg, search.model
    A = len(at)
    parts = [] if search.q_start is None else [search.q_start[None, None].expand(A, -1, -1)]
    n_model = cfg.samples if model is not None else 0
    if n_model > 0:
        goals = search.goals  # solve_path makes them with a model, on the graph that poses them
        assert model is not None and goals is not None and goals.graph is not None
        parts.append(sample_joint_angles(model, goals.graph, goals[at], n_model, generator=gen).q)
    n_random = max(cfg.starts - n_model, 0)
    if n_random > 0:
        parts.append(robot.sample_q(A * n_random, gen).view(A, n_random, robot.dof))
    seeds = torch.cat(parts, 1)
    q, ok = refine_tracks(robot, poses[at], seeds, cfg.lm_config(), clearance=search.clearance)
    keep = [distinct(q[i], ok[i], cfg.sweep_tracks, search.scale) for i in range(A)]
    for i in range(A):
        if keep[i].numel() == 0:
            pos, rot = pose_errors(robot.fk(q[i]), poses[at[i]])
            keep[i] = (pos / cfg.pos_tol + rot / cfg.rot_tol).argmin().reshape(1)
    where = torch.cat([torch.full((len(k),), t, dtype=torch.long) for k, t in zip(keep, at)])
    return torch.cat([q[i, k] for i, k in enumerate(keep)]), where, seeds.shape[0] * seeds.shape[1]


def solve_path(
    robot: Robot,
    poses: torch.Tensor,
    cfg: PathConfig | None = None,
    model: GGIKModel | None = None,
    q_start: torch.Tensor | None = None,
    generator: torch.Generator | None = None,
    clearance: Clearance | None = None,
    progress: PathProgress | None = None,
) -> PathResult:
    """A trajectory through ``poses`` (T, 4, 4) (EE poses in the base-link frame), as in the module docstring.

    ``model``: GGIK samples (on its :meth:`~ggik.nn.cvae.GGIKModel.graph` of the robot, made once a call) as start
    candidates and tracks; None: random starts only. ``q_start`` (dof,): the configuration the robot is in; the move
    onto waypoint 0 must then be allowed too. ``generator``: every random draw (starts, model noise). ``clearance``:
    obstacles (:class:`ggik.collision.Clearance`): every candidate is refined clear of them and counts only when
    collision-free, trajectory LM adds their rows, and a valid trajectory is also collision-free at every waypoint and
    on every motion between them (:mod:`ggik.path.motion`). ``progress``: called after every round
    (:data:`PathProgress`). Every time (the limit, the result's times, ``progress``'s elapsed) is read from
    ``cfg.clock``.
    Raises ValueError for bad poses, configurations or options.
    """
    cfg = cfg or PathConfig()
    cfg.check()
    now = cfg.clock  # every reading of the time (the limit, the timings, the result's times)
    t0 = now()
    if not cfg.continuation and not cfg.random_tracks and model is None:
        raise ValueError("PathConfig: without continuation and random_tracks, track_samples needs a model")
    poses, q_start = check_path_inputs(robot, poses, q_start)  # checked as a path here, naming the waypoint
    goals = None
    if model is not None:  # ... and as the graph's goals (the one place goals are made); nothing below checks
        goals = model.check_graph(model.graph(robot)).goals(poses)
    T = poses.shape[0]
    scale = joint_scale(robot, cfg.max_jump, cfg.max_jump_m)
    lm = cfg.lm_config()
    traj = cfg.trajectory_config()
    timings = dict.fromkeys(("starts", "sweeps", "tracks", "correct", "search", "refine"), 0.0)
    pool, count, rounds, first_valid = _Pool(scale), 0, 0, math.nan
    best: tuple[tuple, torch.Tensor, TrajectoryInfo] | None = None  # (rank key, trajectory, its judgement)
    at = [0] if T == 1 else [0, T - 1]
    search = _Search(robot, poses, cfg, model, goals, q_start, scale, clearance)

    def clock(part: str, t: float) -> float:
        reading = now()
        timings[part] += reading - t
        return reading

    while rounds < cfg.max_rounds and (rounds == 0 or now() - t0 < cfg.time_limit):
        rounds += 1
        t = now()
        if cfg.continuation:
            q0, where, n_seeds = _start_candidates(search, at, generator)
            count += n_seeds
            t = clock("starts", t)
            direction = torch.cat([torch.ones_like(where), -torch.ones_like(where)])  # every start in both directions
            q0, where = torch.cat([q0, q0]), torch.cat([where, where])
            going = ((direction > 0) & (where < T - 1)) | ((direction < 0) & (where > 0))
            if T == 1:  # a single waypoint: every start once (a sweep of length 0 puts it into the pool)
                going = direction > 0
            q0, where, direction = q0[going], where[going], direction[going]
            seeds, visited = sweep(robot, poses, q0, where, direction, cfg.sweep_steps, cfg.rot_weight)
            t = clock("sweeps", t)
            q, ok = refine_tracks(robot, poses, seeds, lm, visited, clearance)
            pool.add(q, ok, visited)
            count += int(visited.sum())
            t = clock("correct", t)
        if (cfg.track_samples and model is not None) or cfg.random_tracks:
            tracks = [random_tracks(robot, T, cfg.random_tracks, generator)]
            if cfg.track_samples and model is not None:
                assert goals is not None and goals.graph is not None  # made above with the model
                graph = goals.graph
                tracks.append(model_tracks(model, graph, goals, cfg.track_samples, cfg.track_stride, scale, generator))
            seeds = torch.cat(tracks, 1)
            q, ok = refine_tracks(robot, poses, seeds, lm, clearance=clearance)
            pool.add(q, ok)
            count += seeds.shape[0] * seeds.shape[1]
            t = clock("tracks", t)
        cand_q, cand_ok, cand_real = pool.q, pool.valid, pool.real
        assert cand_q is not None and cand_ok is not None and cand_real is not None  # every round adds candidates
        found = search_path(cand_q, cand_ok, scale, cfg.allow, cfg.limit_margin, cfg.limit_weight, q_start)
        if not math.isfinite(found.bottleneck):  # some waypoint has no valid candidate: report the nearest path
            found = search_path(cand_q, cand_real, scale, cfg.allow, cfg.limit_margin, cfg.limit_weight, q_start)
        t = clock("search", t)
        q_path = torch.from_numpy(found.q)
        if found.bottleneck <= cfg.refine_bottleneck:
            q_path, info = trajectory_refine(robot, poses, q_path, scale, traj, q_start, clearance)
        else:
            info = trajectory_check(robot, poses, q_path, scale, traj, q_start, clearance=clearance)
        clock("refine", t)
        worst = float(info.moves.abs().max()) if info.moves.numel() else 0.0
        collides = torch.zeros_like(info.reached) if info.clearance is None else info.clearance < 0
        failures = int((~info.reached | ~info.within_limits | collides).sum())
        key = (not info.valid, failures, worst)  # valid first, then the fewest failures, then the smoothest
        if best is None or key < best[0]:
            best = (key, q_path, info)
        if info.valid and math.isnan(first_valid):
            first_valid = now() - t0
        if progress is not None:
            progress(rounds, now() - t0, failures, info.valid)
        if info.valid and cfg.stop_at_first_valid:
            break
        at = _next_starts(found, cand_ok, scale, q_start, generator, collides.nonzero()[:, 0].tolist())
    assert best is not None  # at least one round ran
    stats = SearchStats(first_valid, now() - t0, count, rounds, timings)
    result = path_result(robot, poses, best[1], cfg, q_start, stats, clearance, best[2])
    assert pool.valid is not None  # every round adds candidates
    result.no_candidate = (~pool.valid.any(-1)).nonzero()[:, 0].tolist()
    return result


def check_path_inputs(robot: Robot, poses, q_start=None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(poses (T, 4, 4) float64, q_start (dof,) float64 or None), checked: ValueError for another shape, T = 0,
    NaN/inf, a rotation block that is not a rotation (naming the waypoint), or a ``q_start`` of another shape,
    with NaN or outside the joint limits."""
    poses = check_pose(torch.as_tensor(poses), "poses").to(torch.float64)
    if poses.ndim != 3 or poses.shape[0] < 1:
        raise ValueError(f"poses must have shape (T, 4, 4) with T >= 1, got {tuple(poses.shape)}")
    return poses, None if q_start is None else check_start(robot, q_start)


def check_start(robot: Robot, q_start, name: str = "q_start") -> torch.Tensor:
    """``q_start`` as one configuration (dof,) float64 [rad or m], checked: ValueError (the value called ``name``) for
    another number of values, NaN/inf, or values outside the joint limits (naming the joints)."""
    q = torch.as_tensor(q_start, dtype=torch.float64)
    if q.shape != (robot.dof,):
        raise ValueError(
            f"{name} must be one configuration of {robot.dof} joint values ({', '.join(robot.joint_names)}), "
            f"got shape {tuple(q.shape)}"
        )
    if not bool(torch.isfinite(q).all()):
        raise ValueError(f"{name}: every value must be a finite number, got {' '.join(f'{v:g}' for v in q.tolist())}")
    inside = robot.joints_within_limits(q)
    if not bool(inside.all()):
        outside = [
            f"{joint} = {float(v):g} outside [{float(lo):g}, {float(hi):g}]"
            for joint, v, lo, hi, ok in zip(robot.joint_names, q, robot.lower, robot.upper, inside)
            if not ok
        ]
        raise ValueError(f"{name} must be one configuration within the joint limits: {'; '.join(outside)}")
    return q


def _next_starts(
    found: SearchResult,
    ok: torch.Tensor,
    scale: JointScale,
    q_start: torch.Tensor | None,
    gen: torch.Generator | None,
    collisions: list[int] | None = None,
) -> list[int]:
    """Where the next round starts (waypoint indices): around the worst place of the best path (the first waypoint
    without a valid candidate, the first of ``collisions`` (waypoints whose configuration or arriving motion collides),
    or both ends of its largest move; waypoint 0 when that is the move from ``q_start``), plus one random waypoint.
    ``ok`` (T, K): the valid candidates."""
    T = ok.shape[0]
    empty = (~ok.any(1)).nonzero()[:, 0]
    full = found.q if q_start is None else np.concatenate([q_start.numpy()[None], found.q])
    if empty.numel():
        t = int(empty[0])
        at = [max(t - 1, 0), t]
    elif collisions:
        t = collisions[0]
        at = [max(t - 1, 0), t]
    elif len(full) > 1:
        t = int(np.argmax(jumps(full[:-1], full[1:], scale))) - (q_start is not None)  # the move from waypoint t
        at = [max(t, 0), t + 1]
    else:
        at = [0]
    at.append(int(torch.randint(T, (1,), generator=gen)))
    return sorted(set(at))
