"""The IK solvers of the solver benchmark, each run and timed the same way: LM (from model samples or random
starts), scipy SLSQP and TRAC-IK (``pytracik``), in single mode (one call per goal, the time to each goal's
first strict-valid solution measured) or batch mode (all goals in one call).

Strict-valid: :func:`benchmarks.common.measure.strict_valid` (FK in float64 within the refinement tolerances of the
goal, every joint within its limits). Times: wall ``time.perf_counter`` and CPU
``time.process_time`` (all threads of this process) [s].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from benchmarks.common.measure import strict_valid
from ggik.errors import GGIKError
from ggik.evaluation.tables import timed
from ggik.ik.refine import lm_refine, slsqp_refine
from ggik.ik.refine_config import RefineConfig
from ggik.kinematics import Robot
from ggik.kinematics.geometry import matrix_to_quat

__all__ = ["Outcome", "run_lm", "run_slsqp", "TracIK", "run_tracik"]


@dataclass
class Outcome:
    """One method on one robot in one mode.

    Attributes:
        q: (P, K, dof) returned joint values [rad] (K solutions per goal; NaN rows = no solution returned).
        wall_s, cpu_s: total wall and CPU seconds of the timed calls.
        first_s: (P,) seconds until the first strict-valid solution of each goal (NaN: none), or None to use wall_s / P.
        iterations: (P, K) iterations per start (NaN where the solver does not report them).
    """

    q: torch.Tensor
    wall_s: float
    cpu_s: float
    first_s: torch.Tensor | None
    iterations: torch.Tensor


def run_lm(
    robot: Robot, T: torch.Tensor, starts: Callable[[int, int], torch.Tensor], cfg: RefineConfig, single: bool
) -> Outcome:
    """LM to the goals T (P, 4, 4) from ``starts(goal_index, count)`` -> (count, S, dof) initial values (the start
    drawing is timed too); single mode calls it once per goal."""
    P = T.shape[0]
    if not single:
        (q, info), wall, cpu = timed(lambda: lm_refine(robot, T[:, None], starts(0, P), cfg))
        return Outcome(q, wall, cpu, None, info.iterations.double())
    qs, its, first, wall, cpu = [], [], [], 0.0, 0.0
    for i in range(P):
        (q, info), w, c = timed(lambda i=i: lm_refine(robot, T[i : i + 1, None], starts(i, 1), cfg))
        ok = strict_valid(robot, q, T[i : i + 1], cfg)
        qs.append(q)
        its.append(info.iterations.double())
        first.append(w if bool(ok.any()) else math.nan)
        wall += w
        cpu += c
    return Outcome(torch.cat(qs), wall, cpu, torch.tensor(first, dtype=torch.float64), torch.cat(its))


def run_slsqp(robot: Robot, T: torch.Tensor, q0: torch.Tensor, cfg: RefineConfig, single: bool) -> Outcome:
    """SLSQP to the goals T (P, 4, 4) from q0 (P, S, dof); single mode runs start by start to time the first
    strict solution."""
    P, S = q0.shape[:2]
    if not single:
        (q, info), wall, cpu = timed(lambda: slsqp_refine(robot, T[:, None], q0, cfg))
        return Outcome(q, wall, cpu, None, info.iterations.double())
    q = torch.empty_like(q0)
    its = torch.empty(P, S, dtype=torch.float64)
    first, wall, cpu = [], 0.0, 0.0
    for i in range(P):
        t_goal, found = 0.0, math.nan
        for s in range(S):
            (qs, info), w, c = timed(lambda i=i, s=s: slsqp_refine(robot, T[i], q0[i, s], cfg))
            q[i, s], its[i, s] = qs, float(info.iterations)
            t_goal += w
            cpu += c
            if math.isnan(found) and bool(strict_valid(robot, qs[None, None], T[i : i + 1], cfg)):
                found = t_goal
        wall += t_goal
        first.append(found)
    return Outcome(q, wall, cpu, torch.tensor(first, dtype=torch.float64), its)


class TracIK:
    """One TRAC-IK solver (pytracik) for ``robot``, built from its kinematic URDF (:meth:`Robot.to_urdf`).

    ``timeout``: time budget per call [s]; ``epsilon``: TRAC-IK's convergence tolerance. Raises
    :class:`GGIKError` when TRAC-IK sees another chain than ggik (joint count or FK).
    """

    def __init__(self, robot: Robot, timeout: float, epsilon: float = 1e-5) -> None:
        import pytracik

        self.pytracik = pytracik
        self.handle = pytracik.TRAC_IK(
            robot.base_link, robot.ee_link, robot.to_urdf(), timeout, epsilon, pytracik.SolveType.Speed
        )
        n = pytracik.get_num_joints(self.handle)
        if n != robot.dof:
            raise GGIKError(f"TRAC-IK sees {n} joints on {robot.name}, ggik {robot.dof}")
        q = robot.sample_q(3, torch.Generator().manual_seed(0))
        diff = max(abs(pytracik.fk(self.handle, qi.numpy()) - robot.fk(qi).numpy()).max() for qi in q)
        if diff > 1e-9:
            raise GGIKError(f"TRAC-IK's forward kinematics of {robot.name} differs from ggik's by {diff:.2g}")
        self.dof = robot.dof

    def solve(self, T: torch.Tensor, seed: torch.Tensor) -> torch.Tensor:
        """(dof,) solution for the goal T (4, 4) from ``seed`` (dof,), NaN when TRAC-IK finds none in time."""
        p = T[:3, 3].tolist()
        w, x, y, z = matrix_to_quat(T[:3, :3]).tolist()
        r = self.pytracik.ik(self.handle, seed.numpy(), p[0], p[1], p[2], x, y, z, w)
        if r[0] < 0:
            return torch.full((self.dof,), math.nan, dtype=torch.float64)
        return torch.as_tensor(r[1:], dtype=torch.float64)


def run_tracik(
    solver: TracIK, robot: Robot, T: torch.Tensor, seeds: torch.Tensor, cfg: RefineConfig, single: bool
) -> Outcome:
    """One TRAC-IK call per goal (P, 4, 4) from seeds (P, dof); single mode times each call."""
    P = T.shape[0]
    if not single:
        q, wall, cpu = timed(lambda: torch.stack([solver.solve(T[i], seeds[i]) for i in range(P)]))
        return Outcome(q[:, None], wall, cpu, None, torch.full((P, 1), math.nan))
    qs, first, wall, cpu = [], [], 0.0, 0.0
    for i in range(P):
        q, w, c = timed(lambda i=i: solver.solve(T[i], seeds[i]))
        qs.append(q)
        ok = strict_valid(robot, q[None, None], T[i : i + 1], cfg)
        first.append(w if bool(ok.any()) else math.nan)
        wall += w
        cpu += c
    return Outcome(
        torch.stack(qs)[:, None], wall, cpu, torch.tensor(first, dtype=torch.float64), torch.full((P, 1), math.nan)
    )
