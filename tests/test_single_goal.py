"""One pose goal per call (ggik.ik.single_goal): GGIK.solve's path without per-call work (the compiled kernel) gives
the general path's result with another LM backend (torch), outcome for outcome where outcomes are well-conditioned
(tests/lm_agreement.py), and refuses a bad pose with the general path's error."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch
from lm_agreement import (
    FK_POS_TOL,
    FK_ROT_TOL,
    LMCase,
    assert_reports_its_own_errors,
    assert_same_first_solutions,
    assert_same_solutions,
    most,
    steps_tolerance,
)

import ggik.ik.single_goal as single_goal
from ggik import GGIK, Robot, SolveConfig, random_robot
from ggik.ik.lm import compiled, select
from ggik.ik.lm.problem import LMOutcome, LMProblem
from ggik.ik.lm.select import COMPILED_MAX_ELEMENTS, NUMPY_MAX_ELEMENTS
from ggik.ik.refine import RefineInfo
from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.geometry import pose_errors

pytestmark = pytest.mark.skipif(not compiled.available(), reason="numba is not installed (extra 'fast')")

STEPS = 3  #: LM iterations of the step comparison (lm_agreement rule 4: a few iterations, bound ~1e-7 rad)


@pytest.fixture(scope="module")
def solver() -> GGIK:
    return GGIK.pretrained()


Solved = tuple[
    IKResult, LMProblem, LMOutcome
]  #: a path's result, and the problem its LM backend solved and its outcome


def solve_both(monkeypatch, solver: GGIK, robot: Robot, goal, config: SolveConfig, seed: int) -> tuple[Solved, Solved]:
    """(fast, slow): the single-goal path's solve (the compiled kernel) and the general path's (LM in torch) of one
    goal from generator seed ``seed``, each with the one LM problem its backend solved and the outcome (spied)."""
    seen: dict[str, list] = {"compiled": [], "torch": [], "one-goal": []}

    def spy(name: str, real):
        def solve(problem: LMProblem) -> LMOutcome:
            seen[name].append((problem, outcome := real(problem)))
            return outcome

        return solve

    for name in ("compiled", "torch"):
        monkeypatch.setitem(select.SOLVERS, name, spy(name, select.SOLVERS[name]))
    real_solve = single_goal.RobotSolver.solve
    monkeypatch.setattr(single_goal.RobotSolver, "solve", lambda s, *a: seen["one-goal"].append(1) or real_solve(s, *a))
    fast = solver.solve(robot, goal, config, generator=torch.Generator().manual_seed(seed))
    assert seen["one-goal"] == [1] and len(seen["compiled"]) == 1 and not seen["torch"], "the single-goal path ran"
    monkeypatch.setattr(single_goal, "takes", lambda *a: False)  # the general path for this call
    monkeypatch.setattr(solver, "config", replace(solver.config, lm_backends=("torch",)))
    slow = solver.solve(robot, goal, config, generator=torch.Generator().manual_seed(seed))
    monkeypatch.undo()
    assert seen["one-goal"] == [1] and len(seen["torch"]) == 1, "the general path ran LM in torch"
    return (fast, *seen["compiled"][0]), (slow, *seen["torch"][0])


def general(monkeypatch, solver, *args, **kwargs):
    """The general path's result, its LM in torch (another backend than the single-goal path's kernel)."""
    monkeypatch.setattr(single_goal, "takes", lambda *a: False)
    monkeypatch.setattr(solver, "config", replace(solver.config, lm_backends=("torch",)))
    ran = []
    real = select.SOLVERS["torch"]
    monkeypatch.setitem(select.SOLVERS, "torch", lambda p: ran.append(1) or real(p))
    out = solver.solve(*args, **kwargs)
    monkeypatch.undo()
    assert ran, "the general path ran LM in torch"
    return out


def assert_reports_its_errors(robot: Robot, T: torch.Tensor, config: SolveConfig, res: IKResult) -> None:
    """One path's result of one pose goal ``T``, on its own (lm_agreement rule 1, tight): the errors of an
    independent FK of its joint values, success exactly where they are under the tolerances, the limits checked."""
    tol = config.tolerances(SOLVE_TOLERANCES)
    pos, rot = pose_errors(robot.fk(res.q[0]), T.detach().reshape(4, 4))
    torch.testing.assert_close(res.pos_err[0], pos, rtol=0, atol=FK_POS_TOL)
    torch.testing.assert_close(res.rot_err[0], rot, rtol=0, atol=FK_ROT_TOL)
    assert torch.equal(res.success[0], tol.met(res.pos_err[0], res.rot_err[0]))
    assert torch.equal(res.within_limits[0], robot.within_limits(res.q[0]))


def run_of(problem: LMProblem, outcome: LMOutcome) -> tuple[torch.Tensor, RefineInfo]:
    """An LM outcome of one goal's S starts as lm_agreement's run: q (1, S, dof), RefineInfo (1, S)."""
    q, iters, pos, rot = outcome
    met = problem.chain.cfg.tolerances.met(pos, rot)
    return q[None], RefineInfo(met[None], iters[None], pos[None], rot[None])


def assert_same_steps(robot: Robot, T: torch.Tensor, config: SolveConfig, fast: Solved, slow: Solved) -> None:
    """A few LM iterations (the solver's ``max_iters`` = :data:`STEPS`), where two paths are held to every element
    (lm_agreement rule 4): the same starts and settings; each result reports its own errors; the same elements
    succeed, ranked in the same order, every start's joint values within the bound the damping gives."""
    (res_a, p_a, out_a), (res_b, p_b, out_b) = fast, slow
    assert replace(p_a.chain.cfg, lm_backends=None) == replace(p_b.chain.cfg, lm_backends=None)
    assert p_a.chain.cfg.max_iters == STEPS
    assert torch.equal(p_a.q0, p_b.q0), "the same random starts from the same generator"
    torch.testing.assert_close(p_a.goal, p_b.goal, rtol=0, atol=0)  # the goal as given, on both
    for res in (res_a, res_b):
        assert_reports_its_errors(robot, T, config, res)
    case = LMCase(robot, p_a.goal[:1], "pose", p_a.chain.cfg)
    run_a, run_b = run_of(p_a, out_a), run_of(p_b, out_b)
    bound = steps_tolerance(robot, torch.cat([run_a[0], run_b[0]]), case.cfg)
    assert bound <= 1e-5, f"the damping bounds nothing here ({bound:.1e} rad)"
    for run in (run_a, run_b):
        assert_reports_its_own_errors(case, run)
    assert torch.equal(run_a[1].converged, run_b[1].converged), "the same starts converge"
    assert most(run_a[1].iterations - run_b[1].iterations) <= 1, "iterations within one"
    torch.testing.assert_close(run_a[0], run_b[0], rtol=0, atol=bound)
    # the ranking: the same order of the same solutions. The two paths' joint values are 1e-13 to 7e-12 apart here (the
    # bound: 7e-8), the closest two scores (pos/pos_tol + rot/rot_tol) of one ranking 1.6 apart: no near-tie to swap
    assert torch.equal(res_a.success, res_b.success) and torch.equal(res_a.within_limits, res_b.within_limits)
    torch.testing.assert_close(res_a.q, res_b.q, rtol=0, atol=bound, msg=lambda m: f"ranked alike: {m}")


@pytest.mark.parametrize("first", [True, False], ids=["first-solution", "every-start"])
@pytest.mark.parametrize("robot", ["panda", "ur10", "random7"])
def test_the_single_goal_path_takes_the_general_paths_steps(robot, first, solver, monkeypatch):
    """Three LM iterations from 8 uniform random starts: the two paths (the compiled kernel and torch) are held to
    every element, converged or not, and to the order of the result."""
    r = random_robot(7, 3) if robot == "random7" else Robot.from_name(robot)
    few = GGIK(solver.model, tolerances=RefineConfig(max_iters=STEPS))
    config = SolveConfig(strategy="random", random_starts=8, first_solution=first, pos_tol=2e-4)
    for k, T in enumerate(r.fk(r.sample_q(5, torch.Generator().manual_seed(1)))):
        goal = T if k % 2 else T[None]  # (4, 4) and (1, 4, 4)
        fast, slow = solve_both(monkeypatch, few, r, goal, config, seed=k)
        assert_same_steps(r, goal, config, fast, slow)


@pytest.mark.parametrize("first", [True, False], ids=["first-solution", "every-start"])
@pytest.mark.parametrize("robot", ["panda", "ur10", "random7"])
def test_the_single_goal_path_solves_as_the_general_path(robot, first, solver, monkeypatch):
    """The whole budget (30 iterations) from 8 uniform random starts, where a start that wanders unconverged may
    converge on one path only (tests/lm_agreement.py): each path reports its own errors (rule 1) and every start it
    leaves unconverged ran the whole budget; every start stops at its goal's first solution alike but at most one goal
    of the five (rule 5), or, every start on its own, the starts converged alike (iterations within one) reach the
    same unique solutions (rule 3)."""
    r = random_robot(7, 3) if robot == "random7" else Robot.from_name(robot)
    config = SolveConfig(strategy="random", random_starts=8, first_solution=first, pos_tol=2e-4)
    goals = r.fk(r.sample_q(5, torch.Generator().manual_seed(1)))
    runs: dict[str, list] = {"fast": [], "slow": []}
    for k, T in enumerate(goals):
        fast, slow = solve_both(monkeypatch, solver, r, T, config, seed=k)
        assert torch.equal(fast[1].q0, slow[1].q0), "the same random starts from the same generator"
        for name, (res, problem, outcome) in (("fast", fast), ("slow", slow)):
            assert_reports_its_errors(r, T, config, res)
            q, info = run_of(problem, outcome)
            if not first:  # LM stops an element only when it converges (with first_solution: rule 5 below)
                assert (info.iterations[~info.converged] == problem.chain.cfg.max_iters).all(), name
            runs[name].append((q, info, problem.q0))
    cfg = fast[1].chain.cfg
    q0 = torch.stack([q0 for _, _, q0 in runs["fast"]])
    case = LMCase(r, goals[:, None], "pose", cfg, q0)
    a, b = ((torch.cat([q for q, _, _ in runs[n]]), cat_info([i for _, i, _ in runs[n]])) for n in ("fast", "slow"))
    for run in (a, b):
        assert_reports_its_own_errors(case, run)
    if first:
        assert_same_first_solutions(case, a, b, "fast, slow", max_sensitive=1)
    else:
        alike = a[1].converged & b[1].converged & ((a[1].iterations - b[1].iterations).abs() <= 1)
        compared = assert_same_solutions(case, a[0], b[0], alike, "fast, slow")
        assert compared > 0 or r.dof > 6, "the 6-dof arm's pose goals have unique solutions to compare"


def cat_info(infos: list[RefineInfo]) -> RefineInfo:
    """RefineInfo (G, S) of G goals' (1, S)."""
    return RefineInfo(*(torch.cat([getattr(i, f) for i in infos]) for f in RefineInfo.__dataclass_fields__))


def test_calls_the_single_goal_path_does_not_take(solver):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(2, torch.Generator().manual_seed(0)))
    lm = "lm"
    assert single_goal.takes(T[0], "pose", lm, None) and single_goal.takes(T[:1], "pose", lm, None)
    assert not single_goal.takes(T, "pose", lm, None)  # two goals: the batched path
    assert not single_goal.takes(T[0], "position", lm, None)
    assert not single_goal.takes(T[0], "pose", "slsqp", None)
    assert not single_goal.takes(T[0], "pose", lm, object())  # obstacles
    assert not single_goal.takes(T[0].numpy(), "pose", lm, None)  # an array: the general path converts and checks
    # the backend decides the rest, select_backend's choice for the call's problem (float64 CPU, `starts` elements)
    assert not single_goal.RobotSolver(panda, RefineConfig(lm_backends=("torch",)), 1).fast  # torch: the general path
    numpy_only = RefineConfig(lm_backends=("numpy", "torch"))
    assert single_goal.RobotSolver(panda, numpy_only, NUMPY_MAX_ELEMENTS).fast
    assert not single_goal.RobotSolver(panda, numpy_only, NUMPY_MAX_ELEMENTS + 1).fast


@pytest.mark.parametrize("chosen", select.BACKENDS)
def test_the_single_goal_path_follows_select_backends_choice(chosen, solver, monkeypatch):
    """One source for the rule: the CPU rule of select_backend changed (to choose ``chosen`` for every float64 CPU
    problem), the call follows it: torch runs the general path, another backend the single-goal path on it."""
    monkeypatch.setattr(select, "cpu_backend", lambda n, prefer=None: chosen)
    ran, one_goal = [], []
    for name, solve in list(select.SOLVERS.items()):
        monkeypatch.setitem(select.SOLVERS, name, lambda p, n=name, s=solve: ran.append(n) or s(p))
    real = single_goal.RobotSolver.solve
    monkeypatch.setattr(single_goal.RobotSolver, "solve", lambda self, *a: one_goal.append(1) or real(self, *a))
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(0)))[0]
    fresh = GGIK(solver.model)  # no warm single-goal solver from another test
    fresh.solve(panda, T, SolveConfig(strategy="random", random_starts=4), generator=torch.Generator().manual_seed(1))
    assert ran == [chosen], ran
    assert len(one_goal) == (chosen != "torch"), f"{chosen}: the single-goal path is taken exactly when not torch"


@pytest.mark.parametrize(
    "entry, value, message",
    [((0, 0), float("nan"), "NaN or inf"), ((0, 0), 2.0, "not a rigid transform"), ((3, 0), 1.0, "not homogeneous")],
    ids=["nan", "scaled", "last-row"],
)
def test_a_bad_pose_gets_the_general_paths_error(entry, value, message, solver, monkeypatch):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(0)))[0].clone()
    T[entry] = value
    config = SolveConfig(strategy="random", random_starts=4, first_solution=True)
    with pytest.raises(ValueError, match=message) as fast:
        solver.solve(panda, T, config)
    with pytest.raises(ValueError, match=message) as slow:
        general(monkeypatch, solver, panda, T, config)
    assert str(fast.value) == str(slow.value)


def test_a_goal_that_requires_grad_is_solved_as_by_the_general_path(solver, monkeypatch):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, torch.Generator().manual_seed(4)))[0].requires_grad_(True)
    config = SolveConfig(strategy="random", random_starts=4)
    few = GGIK(solver.model, tolerances=RefineConfig(max_iters=STEPS))
    fast, slow = solve_both(monkeypatch, few, panda, T, config, seed=0)
    assert_same_steps(panda, T, config, fast, slow)
    assert not single_goal.RobotSolver(panda, RefineConfig(), COMPILED_MAX_ELEMENTS + 1).fast
