"""The classic baseline of path following: sequential LM warm-started from the previous waypoint.

K chains start from K configurations (uniform random, or all from a given start configuration), and waypoint
by waypoint every chain runs :func:`ggik.ik.refine.lm_refine_checked` from its value at the previous waypoint. A
chain is a trajectory; the result is the best chain (valid first, then the fewest failing waypoints, then the
smallest largest move), judged like :func:`ggik.path.solve_path`'s results (:func:`ggik.path.result.path_result`).
Its first valid trajectory is known only at the end, so its time to the first valid one is its total time.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import torch

from ggik.ik.refine import lm_refine_checked
from ggik.kinematics.robot import Robot
from ggik.path.config import PathConfig
from ggik.path.result import PathResult, SearchStats, path_result
from ggik.path.search import joint_scale, unwrap
from ggik.path.solve import check_path_inputs

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = ["sequential_lm"]


def sequential_lm(
    robot: Robot,
    poses: torch.Tensor,
    chains: int = 32,
    cfg: PathConfig | None = None,
    generator: torch.Generator | None = None,
    q_start: torch.Tensor | None = None,
    clearance: Clearance | None = None,
) -> PathResult:
    """The baseline of the module docstring for ``poses`` (T, 4, 4) (base-link frame) with ``chains`` chains.

    ``q_start`` (dof,): every chain starts from it (then the chains coincide: LM is deterministic). ``clearance``:
    obstacles, kept clear by every LM call (:func:`ggik.ik.refine.lm_refine_checked`) and part of validity (at the
    waypoints and on the motions between them). ValueError for bad poses or ``q_start``
    (:func:`ggik.path.solve.check_path_inputs`) or ``chains`` < 1."""
    cfg = cfg or PathConfig()
    t0 = cfg.clock()  # the clock of the config's time limit and of the result's times, as solve_path's
    poses, qs = check_path_inputs(robot, poses, q_start)
    if chains < 1:
        raise ValueError(f"chains must be >= 1, got {chains}")
    lm = cfg.lm_config()
    q = robot.sample_q(chains, generator) if qs is None else qs.expand(chains, -1)
    T = poses.shape[0]
    out = torch.empty(T, chains, robot.dof, dtype=torch.float64)
    ok = torch.empty(T, chains, dtype=torch.bool)
    for t in range(T):
        q, info = lm_refine_checked(robot, poses[t], q, lm, clearance=clearance)
        out[t], ok[t] = q, info.converged & robot.within_limits(q)
        if clearance is not None:
            ok[t] &= clearance.collision_free(q)
    scale = joint_scale(robot, cfg.max_jump, cfg.max_jump_m)
    best, best_key = None, None
    for k in range(chains):
        traj = unwrap(out[:, k].numpy(), scale, None if qs is None else qs.numpy())
        full = traj if qs is None else np.concatenate([qs.numpy()[None], traj])
        worst = float(np.abs(np.diff(full, axis=0) / scale.step).max()) if len(full) > 1 else 0.0
        key = (not (bool(ok[:, k].all()) and worst <= 1.0), int((~ok[:, k]).sum()), worst)
        if best_key is None or key < best_key:
            best, best_key = traj, key
    total = cfg.clock() - t0
    stats = SearchStats(math.nan, total, T * chains, 1, {"lm": total})
    result = path_result(robot, poses, torch.from_numpy(best), cfg, qs, stats, clearance)
    if result.valid:
        result.time_to_valid = total
    return result
