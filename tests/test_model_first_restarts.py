"""The default strategy ("model-first", ``ggik solve``'s default) never leaves a goal unsolved that the strategy
"random" solves: a goal the model's seeds leave unsolved is restarted from the very starts that "random" draws from
the same generator (issue 60: LM from the shipped model's samples left a Baxter goal unsolved).

The model's seeds are replaced (ModelDraw.draw monkeypatched) by seeds LM cannot solve from, the UR10's lower limits
(a precondition each test checks), or by a goal's own solution, so that which goals need the restarts is chosen here.
"""

from __future__ import annotations

import json

import pytest
import torch

import ggik.ik.strategies as strategies
from ggik import GGIK, Robot, SolveConfig
from ggik.cli import main
from ggik.ik.sampling import RawSamples
from ggik.kinematics.geometry import matrix_to_quat


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def strict(result) -> torch.Tensor:
    """(B, S) bool: within the tolerances and the joint limits."""
    return result.success & result.within_limits


@pytest.fixture(scope="module")
def solver() -> GGIK:
    return GGIK.pretrained()


@pytest.fixture(scope="module")
def ur10() -> Robot:
    return Robot.from_name("ur10")


def seeds_from(monkeypatch, robot: Robot, solutions: torch.Tensor, bad: list[int]) -> None:
    """ModelDraw.draw samples the model as before (drawing its noise from the generator), then returns as seeds of
    goal b ``samples`` copies of the arm's lower limits if b is in ``bad``, else of ``solutions[b]`` (the goal's own
    solution, from which LM converges at once)."""
    real = strategies.ModelDraw.draw

    def draw(self, goals, generator=None) -> RawSamples:
        raw = real(self, goals, generator)
        q = solutions.clone().to(raw.q)
        q[bad] = robot.lower.to(raw.q)
        q = q[:, None].expand(raw.q.shape).clone()
        return RawSamples(q, raw.pos_err, raw.rot_err, raw.points)

    monkeypatch.setattr(strategies.ModelDraw, "draw", draw)


def record_starts(monkeypatch) -> list[torch.Tensor]:
    """Every q0 (B, K, dof) that the strategies refine, in call order."""
    calls: list[torch.Tensor] = []
    real = strategies.refine_starts

    def recording(robot, T, kind, q0, refinement):
        calls.append(q0.clone())
        return real(robot, T, kind, q0, refinement)

    monkeypatch.setattr(strategies, "refine_starts", recording)
    return calls


def test_restarted_goals_get_the_random_strategys_starts_and_are_solved(monkeypatch, solver, ur10):
    """Six UR10 goals, the seeds of goals 1, 3 and 4 unsolvable: model first refines them from the starts that the
    strategy "random" draws for those goals from the same generator (not from a stream that depends on the noise
    drawn before or on which other goals were solved), and solves every goal that "random" solves."""
    q_true = ur10.sample_q(6, gen(11))
    T, bad, R = ur10.fk(q_true), [1, 3, 4], 8
    seeds_from(monkeypatch, ur10, q_true, bad)
    starts = record_starts(monkeypatch)
    alone = solver.solve(ur10, T, SolveConfig(samples=4, refine="lm"), generator=gen(5))
    assert strict(alone).any(1).tolist() == [b not in bad for b in range(6)], "test-data precondition: the seeds"
    starts.clear()
    rand = solver.solve(ur10, T, SolveConfig(strategy="random", random_starts=R), generator=gen(5))
    assert strict(rand)[bad].any(1).all(), "test-data precondition: random starts solve the restarted goals"
    (random_starts,) = starts
    starts.clear()
    first = solver.solve(ur10, T, SolveConfig(samples=4, strategy="model-first", random_starts=R), generator=gen(5))
    seeds, restarts = starts
    assert seeds.shape == (6, 4, ur10.dof) and restarts.shape == (3, R, ur10.dof)
    assert torch.equal(restarts, random_starts[bad])
    assert strict(first).any(1).all()


def test_ggik_solve_by_default_answers_a_goal_its_samples_miss_as_the_random_strategy_does(monkeypatch, capsys, ur10):
    """``ggik solve``'s default with seeds LM cannot solve from: solved, with the solutions of ``--strategy random``
    (32 starts each, seed 0): the same starts, refined the same way."""
    q_true = ur10.sample_q(1, gen(3))
    T = ur10.fk(q_true)[0]
    pose = [f"{v:.17g}" for v in T[:3, 3].tolist() + matrix_to_quat(T[:3, :3]).tolist()]
    seeds_from(monkeypatch, ur10, q_true, [0])
    argv = ["solve", "--robot", "ur10", "--pose", *pose, "--json"]
    assert main([*argv, "--strategy", "samples"]) == 1, "test-data precondition: LM from the seeds fails"
    capsys.readouterr()
    assert main([*argv, "--strategy", "random"]) == 0
    rand = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["strategy"] == "model-first" and default["solved"]
    assert default["solutions"] == rand["solutions"] and len(rand["solutions"]) >= 1


def test_restart_generator_copies_the_state_and_leaves_the_original_alone():
    g = gen(7)
    g.manual_seed(7)
    copy = strategies.restart_generator(g)
    assert torch.equal(torch.rand(5, generator=copy), torch.rand(5, generator=g))
    before = torch.default_generator.get_state()
    copy = strategies.restart_generator(None)
    drawn = torch.rand(3, generator=copy)
    assert torch.equal(torch.default_generator.get_state(), before)  # drawing from the copy moved nothing
    assert torch.equal(drawn, torch.rand(3))
