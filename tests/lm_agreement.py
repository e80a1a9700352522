"""How two LM code paths are held to each other: outcomes, not rounding (the rule, stated once for the tests).

Two code paths (backends, compiled vs eager, in turn vs lock-step, batch shapes) take the same LM steps, but not the
same roundings: the compiled kernel solves each step with an unpivoted Cholesky, numpy and torch with LU, and a CPU's
vector width (AVX2, AVX-512) orders the sums. LM amplifies a difference by the damped system's condition number at
every step, and the damping falls to ``DAMPING_MIN`` = 1e-9, so after tens of iterations a start that wanders
unconverged differs by ~1e-7 rad between two paths on one CPU and by more on another. What two paths must share:

1. each path on its own (one code path, float64, tight): the errors it reports are those of an independent FK of the
   joint values it returns (1e-12 m, 1e-9 rad), and ``converged`` is exactly "both under the tolerances";
2. the outcomes: the same elements converged, iterations within one; over a few iterations (rule 4), or over the whole
   budget from starts that converge in a few well-conditioned steps (at or near their solution). From starts that
   wander (uniform random starts, samples far off) the whole budget's outcomes are not held: over it a test compares
   the elements that converged alike (:func:`assert_same_solutions`) or the first solutions (rule 5), and each path on
   its own (rule 1);
3. joint values only where they are unique: converged on both paths, on a chain that is not redundant for the goal
   kind (dof <= the coordinates the kind fixes, :data:`TASK_DIMS`) and not near a singularity (the smallest singular
   value of the goal's Jacobian at the solution at least :data:`SIGMA_MIN`), to :data:`JOINT_TOL`: both paths took
   the same steps to the solution, so they differ there by the rounding of a well-conditioned solve (1e-12 here), and
   a wrong step that still converges lands ~1e-4 away (LM stops anywhere within the 1 mm tolerance);
4. a few iterations (:func:`steps_tolerance`): every element's joint values, converged or not, to a bound the damping
   gives (it is at least ``damping / DAMPING_DOWN**iters`` after ``iters`` iterations, which bounds the condition
   number of each step's system);
5. a goal's first solution (``stop_at_first``): each path follows the rule on its own
   (:func:`assert_first_solution_rule`); two paths choose the same start for every goal but where an earlier start
   wanders chaotically (at most :func:`assert_same_first_solutions`'s ``max_sensitive`` goals), and on the goals where
   they agree, rules 2 and 3 hold.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik import Robot
from ggik.graph.goal_kinds import goal_errors, tool_axis
from ggik.ik.lm.core import DAMPING_DOWN, DAMPING_MIN
from ggik.ik.refine import RefineInfo
from ggik.ik.refine_config import RefineConfig

__all__ = [
    "JOINT_TOL",
    "SIGMA_MIN",
    "TASK_DIMS",
    "Run",
    "LMCase",
    "unique_solutions",
    "assert_same_solutions",
    "assert_reports_its_own_errors",
    "assert_same_outcomes",
    "steps_tolerance",
    "assert_same_steps",
    "first_solutions",
    "most",
    "assert_first_solution_rule",
    "assert_same_first_solutions",
    "assert_first_as_alone",
]

Run = tuple[torch.Tensor, RefineInfo]  #: (q (..., dof), info (...)) of lm_refine_checked

#: [rad, m for prismatic joints] two paths' joint values at a unique solution: a documented generous bound, 1e7 times
#: the differences seen (1e-13); a solve near a well-conditioned solution amplifies rounding by (sigma_max/sigma_min)^2
JOINT_TOL = 1e-6
#: [m/rad] a solution is isolated when the smallest singular value of its goal's Jacobian is at least this
SIGMA_MIN = 1e-2
TASK_DIMS = {"pose": 6, "position+axis": 5, "position": 3}  #: the coordinates a goal kind fixes
STEPS_SAFETY = 1e3  #: the constant of :func:`steps_tolerance` (the solve's constant, nonlinear growth over the steps)
FK_POS_TOL, FK_ROT_TOL = 1e-12, 1e-9  #: [m], [rad] rule 1: a path's errors against an independent FK


def most(d: torch.Tensor) -> int:
    """The largest absolute value of integer differences ``d`` (0 for none)."""
    return int(d.abs().max()) if d.numel() else 0


@dataclass(frozen=True)
class LMCase:
    """What two runs solved: ``robot``, canonical goals ``goal`` (..., 4, 4) [m] in the base-link frame of ``kind``
    (broadcast to the runs' batch shape), the settings ``cfg`` (tolerances, budget, damping) and, for the
    first-solution rules, the starts ``q0`` (goals, starts, dof)."""

    robot: Robot
    goal: torch.Tensor
    kind: str
    cfg: RefineConfig
    q0: torch.Tensor | None = None

    @property
    def axis(self) -> torch.Tensor:
        """(3,) the robot's tool axis in the EE frame."""
        return tool_axis(self.robot)

    def given(self) -> torch.Tensor:
        """The starts as LM takes them: clamped into the limits (unlimited joints as they are)."""
        assert self.q0 is not None, "the case has no starts"
        r = self.robot
        return torch.where(r.limited, self.q0.clamp(r.lower, r.upper), self.q0)


def goal_jacobian(robot: Robot, q: torch.Tensor, kind: str, axis: torch.Tensor) -> torch.Tensor:
    """(..., 6 or 3, dof) the Jacobian of what goal ``kind`` fixes at ``q`` (..., dof): position rows [m/rad], then
    the angular velocity (pose), or the tool axis's velocity (position+axis, rank 2), in the base frame."""
    J = robot.jacobian(q)
    if kind == "position":
        return J[..., :3, :]
    if kind == "pose":
        return J
    a = robot.fk(q)[..., :3, :3] @ axis.to(q.dtype)  # (..., 3) the tool axis in the base frame
    da = torch.linalg.cross(J[..., 3:, :].transpose(-1, -2), a[..., None, :].expand(*J.shape[:-2], J.shape[-1], 3))
    return torch.cat([J[..., :3, :], da.transpose(-1, -2)], -2)


def unique_solutions(robot: Robot, q: torch.Tensor, kind: str, axis: torch.Tensor) -> torch.Tensor:
    """(...) bool: the joint values ``q`` (..., dof) are an isolated solution of their goal (rule 3): the chain is not
    redundant for ``kind`` and the goal's Jacobian there has no singular value below :data:`SIGMA_MIN`."""
    if robot.dof > TASK_DIMS[kind]:
        return torch.zeros(q.shape[:-1], dtype=torch.bool)
    return torch.linalg.svdvals(goal_jacobian(robot, q, kind, axis))[..., robot.dof - 1] >= SIGMA_MIN


def assert_reports_its_own_errors(case: LMCase, run: Run) -> None:
    """Rule 1 for one path's ``run`` of ``case``."""
    q, info = run
    pos, rot = goal_errors(case.robot.fk(q), case.goal, case.kind, case.axis)
    torch.testing.assert_close(info.pos_err, pos, rtol=0, atol=FK_POS_TOL)
    torch.testing.assert_close(info.rot_err, rot, rtol=0, atol=FK_ROT_TOL)
    met = case.cfg.tolerances.met(info.pos_err, info.rot_err)
    assert torch.equal(info.converged, met), "converged is: both errors under the tolerances"


def assert_same_outcomes(case: LMCase, a: Run, b: Run, what: str = "") -> None:
    """Rules 1 to 3 for two paths' runs ``a``, ``b`` of ``case``; ``what`` names them in a failure. Over the whole
    budget only from starts that converge in a few steps (rule 2): one that wanders may end otherwise on each path."""
    for run in (a, b):
        assert_reports_its_own_errors(case, run)
    (q_a, info_a), (q_b, info_b) = a, b
    assert torch.equal(info_a.converged, info_b.converged), f"{what}: the same elements converge"
    assert most(info_a.iterations - info_b.iterations) <= 1, f"{what}: iterations within one"
    assert_same_solutions(case, q_a, q_b, info_a.converged & info_b.converged, what)


def assert_same_solutions(case: LMCase, q_a, q_b, converged: torch.Tensor, what: str = "") -> int:
    """Rule 3: joint values ``q_a``, ``q_b`` (..., dof) within :data:`JOINT_TOL` where ``converged`` (...) and unique
    on both; returns how many were compared. Over a long budget a caller passes only the elements that converged
    alike (iterations within one): a start that wandered first may have diverged into another solution."""
    r, kind, axis = case.robot, case.kind, case.axis
    both = converged & unique_solutions(r, q_a, kind, axis) & unique_solutions(r, q_b, kind, axis)
    torch.testing.assert_close(q_a[both], q_b[both], rtol=0, atol=JOINT_TOL, msg=lambda m: f"{what}: {m}")
    return int(both.sum())


def steps_tolerance(robot: Robot, q: torch.Tensor, cfg: RefineConfig) -> float:
    """[rad] Rule 4: how far two paths' joint values may be apart after ``cfg.max_iters`` iterations from the same
    starts: each step's solve amplifies rounding (eps) by at most ``1 + |J|^2 / lam`` (``|J|`` the largest Jacobian
    norm at ``q`` (..., dof), ``lam`` the least damping the budget reaches), over ``max_iters`` steps, times
    :data:`STEPS_SAFETY`. Meaningful for a few iterations only (3 from the default damping: ~1e-7 rad)."""
    lam = max(DAMPING_MIN, cfg.damping / DAMPING_DOWN**cfg.max_iters)
    J2 = float(torch.linalg.matrix_norm(robot.jacobian(q.reshape(-1, robot.dof)), ord=2).max()) ** 2
    return STEPS_SAFETY * cfg.max_iters * torch.finfo(torch.float64).eps * (1.0 + J2 / lam)


def assert_same_steps(case: LMCase, a: Run, b: Run, what: str = "") -> None:
    """Rules 1, 2 and 4: two paths' runs of a few iterations (``case.cfg.max_iters``) from the same starts."""
    assert case.cfg.max_iters <= 4, "rule 4 bounds a few iterations only"
    assert_same_outcomes(case, a, b, what)
    bound = steps_tolerance(case.robot, torch.cat([a[0], b[0]]), case.cfg)
    assert bound <= 1e-5, f"the damping bounds nothing here ({bound:.1e} rad)"
    torch.testing.assert_close(a[0], b[0], rtol=0, atol=bound, msg=lambda m: f"{what}: {m}")


def first_solutions(info: RefineInfo) -> torch.Tensor:
    """(goals,) long: each goal's converged start (its starts the last dimension), the number of starts where none."""
    starts = info.converged.shape[-1]
    return torch.where(info.converged, torch.arange(starts), starts).amin(-1)


def assert_first_solution_rule(case: LMCase, run: Run, what: str = "") -> None:
    """One path's run of ``case`` (``stop_at_first``, from ``case.q0``) follows the rule
    (:class:`ggik.ik.lm.core.FirstSolution`): at most one converged start per goal; the starts before it ran their
    whole budget unconverged, the ones after it are returned as given (clamped, 0 iterations); a goal none of whose
    starts ran has one that met the tolerances as given."""
    q, info = run
    assert (info.converged.sum(-1) <= 1).all(), f"{what}: one solution per goal"
    given = case.given()
    for g, k in enumerate(first_solutions(info).tolist()):
        its = info.iterations[g]
        if not bool(its.any()):  # closed as given: a start met the tolerances where it began, none ran
            assert k < its.numel() and torch.equal(q[g], given[g]), f"{what}: goal {g} ran none, so it was solved"
            continue
        assert (its[:k] == case.cfg.max_iters).all(), f"{what}: goal {g}'s starts before {k} ran their budget"
        assert (its[k + 1 :] == 0).all() and torch.equal(q[g, k + 1 :], given[g, k + 1 :]), f"{what}: goal {g}"


def assert_same_first_solutions(case: LMCase, a: Run, b: Run, what: str = "", max_sensitive: int = 1) -> int:
    """Rule 5 for two paths' runs ``a``, ``b`` of ``case`` (``stop_at_first``, from ``case.q0``): returns the number
    of unique solutions compared (rule 3)."""
    for run in (a, b):
        assert_reports_its_own_errors(case, run)
        assert_first_solution_rule(case, run, what)
    (q_a, info_a), (q_b, info_b) = a, b
    same = first_solutions(info_a) == first_solutions(info_b)
    # a goal whose earlier start wanders unconverged may converge on one path only (chaos, not a wrong backend)
    assert int((~same).sum()) <= max_sensitive, f"{what}: goals {(~same).nonzero()[:, 0].tolist()} chose another start"
    assert most(info_a.iterations[same] - info_b.iterations[same]) <= 1, f"{what}: iterations within one"
    return assert_same_solutions(case, q_a[same], q_b[same], info_a.converged[same], what)


def assert_first_as_alone(case: LMCase, stopped: Run, alone: Run, what: str = "", max_sensitive: int = 1) -> None:
    """A path's ``stopped`` run (``stop_at_first``) against its run of every start alone (no stop, the same starts and
    budget): every goal whose starts ran chose the start that converges first alone (but ``max_sensitive`` goals, where
    a start wanders into a solution on one run only), and the starts up to it have the same outcomes as alone
    (convergence, iterations within one, the unique solution: rules 2 and 3); no more iterations in all."""
    (q_s, info_s), (q_all, info_all) = stopped, alone
    ran = info_s.iterations.any(-1)  # goals whose starts ran (not closed by a start that met the tolerances as given)
    first = first_solutions(info_s)
    chose = ran & (first == first_solutions(info_all))
    assert int((ran & ~chose).sum()) <= max_sensitive, f"{what}: goals {(ran & ~chose).nonzero()[:, 0].tolist()}"
    upto = chose[:, None] & (torch.arange(q_s.shape[1]) <= first[:, None])  # the starts that ran, up to the solution
    assert torch.equal(info_s.converged[upto], info_all.converged[upto]), f"{what}: the same outcomes as alone"
    assert most(info_s.iterations[upto] - info_all.iterations[upto]) <= 1, f"{what}: iterations within one"
    assert_same_solutions(case, q_s, q_all, upto & info_s.converged, what)
    assert int(info_s.iterations.sum()) <= int(info_all.iterations.sum()) + int(upto.sum())
