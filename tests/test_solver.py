"""ggik.solver (GGIK, IKResult) and ``ggik solve`` / ``ggik info`` with a tiny checkpoint (3 training steps).

A 3-step model samples nearly one configuration per goal, so these tests check the pipeline (shapes,
errors against FK, success, limits, order, refinement, bad input), not the quality of the model.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from conftest import HAND_URDFS

import ggik.ik.strategies
from ggik import GGIK, GGIKError, GraphError, IKResult, PathConfig, Robot, SolveConfig, random_robot
from ggik.cli import main
from ggik.ik.metrics import distinct_solutions
from ggik.ik.refine import lm_refine, slsqp_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import RawSamples
from ggik.ik.tolerances import PATH_TOLERANCES, SOLVE_TOLERANCES, Tolerances
from ggik.kinematics.geometry import make_transform, pose_errors, quat_to_matrix
from ggik.path.config import TrajectoryConfig
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import apply_overrides, from_dict, load_yaml

F64 = torch.float64
TINY = Path(__file__).resolve().parents[1] / "train" / "configs" / "tiny.yaml"
TOL = RefineConfig()
POSE = ["0.4", "0.1", "0.5", "0", "1", "0", "0"]  # x y z qw qx qy qz: EE pointing down, in front of the panda


@pytest.fixture(scope="module")
def ckpt(tmp_path_factory) -> Path:
    """last.pt of a 3-step tiny run (read-only)."""
    # the reference decoder (no Gauss-Newton moves): the order and LM tests need rows of mixed samples (some inside
    # the limits or solved, some not), which this 3-step model gives
    overrides = ["steps=3", "model.residual_inputs=false", "model.gn_steps=0"]
    cfg = from_dict(TrainConfig, apply_overrides(load_yaml(TINY), overrides))
    run = tmp_path_factory.mktemp("tiny") / "run"
    Trainer(cfg, run, progress=False).train()
    return run / "last.pt"


@pytest.fixture(scope="module")
def solver(ckpt) -> GGIK:
    return GGIK.load(ckpt)


@pytest.fixture(scope="module")
def panda() -> Robot:
    return Robot.from_name("panda")


def goals(robot: Robot, n: int, seed: int) -> torch.Tensor:
    return robot.fk(robot.sample_q(n, torch.Generator().manual_seed(seed)))


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def sort_keys(res: IKResult, b: int) -> list[tuple]:
    """The documented order of row b: successful first, then in-limit, then normalised pose error."""
    err = res.pos_err[b] / TOL.pos_tol + res.rot_err[b] / TOL.rot_tol
    return list(zip((~res.success[b]).tolist(), (~res.within_limits[b]).tolist(), err.tolist()))


def check_result(res: IKResult, robot: Robot, T_goal: torch.Tensor, B: int, S: int) -> None:
    """Shapes; errors, success and within_limits recomputed from FK and the limits; order; best()."""
    assert isinstance(res, IKResult) and len(res) == B
    assert res.q.shape == (B, S, robot.dof) and res.q.dtype == F64
    for t in (res.pos_err, res.rot_err, res.success, res.within_limits):
        assert t.shape == (B, S)
    pos, rot = pose_errors(robot.fk(res.q), T_goal[:, None])
    torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-12)
    torch.testing.assert_close(res.rot_err, rot, rtol=0, atol=1e-12)
    assert torch.equal(res.success, (pos < TOL.pos_tol) & (rot < TOL.rot_tol))
    inside = (res.q >= robot.lower - 1e-9) & (res.q <= robot.upper + 1e-9)
    assert torch.equal(res.within_limits, (inside | ~robot.limited).all(-1))
    for b in range(B):
        keys = sort_keys(res, b)
        assert keys == sorted(keys), f"goal {b}: solutions are not sorted best first"
    assert torch.equal(res.best(), res.q[:, 0])


# ---------------------------------------------------------------------------------------------- loading
def test_load_builds_an_eval_mode_solver(solver, ckpt):
    assert isinstance(solver, GGIK) and not solver.model.training
    assert solver.checkpoint["step"] == 3
    assert solver.training_robots["named"] == {"panda": 1.0}
    assert solver.config == RefineConfig()


# ---------------------------------------------------------------------------------------------- solve
def test_single_goal_gives_a_batch_of_one(solver, panda):
    T = goals(panda, 1, 0)[0]
    res = solver.solve(panda, T, SolveConfig(samples=5), generator=gen())
    check_result(res, panda, T[None], 1, 5)
    same = solver.solve(panda, T[None], SolveConfig(samples=5), generator=gen())
    assert torch.equal(res.q, same.q)


def test_raw_samples_of_a_batch(solver, panda):
    T = goals(panda, 6, 1)
    res = solver.solve(panda, T, SolveConfig(samples=7), generator=gen())
    check_result(res, panda, T, 6, 7)
    again = solver.solve(panda, T, SolveConfig(samples=7), generator=gen())
    assert torch.equal(res.q, again.q), "seeded sampling is reproducible"


def test_order_puts_in_limit_samples_first(solver):
    """kr16_2 raw samples: rows where some samples are inside the limits and some are not."""
    robot = Robot.from_name("kr16_2")
    T = goals(robot, 40, 1)
    res = solver.solve(robot, T, SolveConfig(samples=16), generator=gen())
    check_result(res, robot, T, 40, 16)
    within = res.within_limits.sum(-1)
    mixed = (within > 0) & (within < 16)
    assert mixed.sum() >= 3
    for b in mixed.nonzero()[:, 0].tolist():
        k = int(within[b])
        assert res.within_limits[b, :k].all() and not res.within_limits[b, k:].any()


def test_lm_result_is_lm_refine_of_the_raw_samples(solver, panda):
    T = goals(panda, 10, 2)
    raw = solver.solve(panda, T, SolveConfig(samples=16), generator=gen())
    res = solver.solve(panda, T, SolveConfig(samples=16, refine="lm"), generator=gen())
    check_result(res, panda, T, 10, 16)
    assert res.within_limits.all(), "LM clamps into the limits"
    # test-data preconditions: the order is exercised on rows that mix successes and failures
    assert ((res.success.sum(-1) > 0) & (res.success.sum(-1) < 16)).any()

    q_ref, info = lm_refine(panda, T[:, None], raw.q)
    err = info.pos_err / TOL.pos_tol + info.rot_err / TOL.rot_tol
    for b in range(10):
        order = sorted(range(16), key=lambda s: (not bool(info.converged[b, s]), float(err[b, s])))
        torch.testing.assert_close(res.q[b], q_ref[b, order], rtol=0, atol=1e-12)
        assert torch.equal(res.success[b], info.converged[b, order])


def spread_sampler(make_q):
    """A stand-in for ggik.ik.sampling.sample_joint_angles: q = make_q(robot, P, S, generator), errors by FK."""

    def sample(model, graph, T_goal, num_samples, generator=None, options=None):
        goals = graph.goals(T_goal)
        q = make_q(graph.robot, goals.shape[0], num_samples, generator)
        pos, rot = pose_errors(graph.robot.fk(q), goals.in_base[:, None])
        return RawSamples(
            q=q, pos_err=pos, rot_err=rot, points=torch.zeros(q.shape[:2] + (graph.num_nodes, 3), dtype=F64)
        )

    return sample


def test_lm_from_spread_samples_solves_nearly_every_panda_goal(solver, panda, monkeypatch):
    """With 16 well-spread samples (uniform in the limits, standing in for a trained model), LM
    succeeds on >= 90 % of the goals. The 3-step model's 16 samples are near copies of one
    configuration outside the panda's limits, so its own rate says nothing about the solver."""

    def uniform(robot, P, S, generator):
        return robot.sample_q(P * S, generator).reshape(P, S, robot.dof)

    monkeypatch.setattr(ggik.ik.strategies, "sample_joint_angles", spread_sampler(uniform))
    T = goals(panda, 10, 3)
    res = solver.solve(panda, T, SolveConfig(samples=16, refine="lm"), generator=gen(4))
    check_result(res, panda, T, 10, 16)
    assert res.success.any(-1).float().mean() >= 0.9
    assert torch.equal(res.success[:, 0], res.success.any(-1)), "best() is a successful solution when there is one"


def test_slsqp_result_is_slsqp_refine_of_the_raw_samples(solver, panda):
    T = goals(panda, 2, 5)
    raw = solver.solve(panda, T, SolveConfig(samples=2), generator=gen())
    res = solver.solve(panda, T, SolveConfig(samples=2, refine="slsqp"), generator=gen())
    check_result(res, panda, T, 2, 2)
    assert res.within_limits.all()
    assert (res.pos_err.min(-1).values < raw.pos_err.min(-1).values).all(), "SLSQP lowers the error"

    q_ref, info = slsqp_refine(panda, T[:, None], raw.q)
    err = info.pos_err / TOL.pos_tol + info.rot_err / TOL.rot_tol
    for b in range(2):
        order = sorted(range(2), key=lambda s: (not bool(info.converged[b, s]), float(err[b, s])))
        torch.testing.assert_close(res.q[b], q_ref[b, order], rtol=0, atol=1e-12)


def test_continuous_joints_count_as_within_limits_beyond_pi(solver, monkeypatch):
    """Continuous joints have no limits: LM solutions at 3.3 or -3.5 rad are within limits."""
    robot = Robot.from_urdf(HAND_URDFS["continuous"])  # j1, j3, j5 continuous
    q_star = torch.tensor([[3.3, 0.5, -3.5, -1.0, 4.0], [-3.6, -1.2, 3.4, -2.0, -3.3]], dtype=F64)
    T = robot.fk(q_star)

    def near_q_star(robot, P, S, generator):
        return q_star[:, None] + 0.05 * torch.randn(P, S, robot.dof, generator=generator, dtype=F64)

    monkeypatch.setattr(ggik.ik.strategies, "sample_joint_angles", spread_sampler(near_q_star))
    res = solver.solve(robot, T, SolveConfig(samples=3, refine="lm"), generator=gen())
    check_result(res, robot, T, 2, 3)
    assert res.success.all() and res.within_limits.all()
    assert (res.q[..., [0, 2, 4]].abs() > math.pi).all()


def test_robot_of_another_dof(solver, panda):
    """A 5-DOF random chain (never seen in training) after the panda, with the same solver."""
    robot = random_robot(5, gen(8))
    T = goals(robot, 4, 6)
    raw = solver.solve(robot, T, SolveConfig(samples=3), generator=gen())
    check_result(raw, robot, T, 4, 3)
    res = solver.solve(robot, T, SolveConfig(samples=3, refine="lm"), generator=gen())
    check_result(res, robot, T, 4, 3)
    assert raw.within_limits.all(), "limits [-pi, pi]: LM starts exactly at the raw samples"
    w = TOL.rot_weight  # LM only takes steps that lower |dp|^2 + w^2 angle^2, per sample
    cost_raw, cost_lm = (r.pos_err**2 + (w * r.rot_err) ** 2 for r in (raw, res))
    best_raw, best_lm = cost_raw.min(-1).values, cost_lm.min(-1).values
    assert (best_lm <= best_raw).all() and (best_lm < 0.01 * best_raw).any()
    T_panda = goals(panda, 2, 7)
    check_result(solver.solve(panda, T_panda, SolveConfig(samples=2), generator=gen()), panda, T_panda, 2, 2)


def test_with_tolerances_changes_success_only(solver, panda):
    T = goals(panda, 3, 9)
    strict = solver.solve(panda, T, SolveConfig(samples=4), generator=gen())
    loose = solver.with_tolerances(10.0, math.pi + 0.1)
    res = loose.solve(panda, T, SolveConfig(samples=4), generator=gen())
    assert not strict.success.any() and res.success.all()
    assert loose.model is solver.model and solver.config == RefineConfig()
    assert loose.config.pos_tol == 10.0 and loose.config.max_iters == solver.config.max_iters
    torch.testing.assert_close(res.pos_err.sort(-1).values, strict.pos_err.sort(-1).values, rtol=0, atol=0)


def test_tolerances_of_the_call_change_success_only(solver, panda):
    """SolveConfig's pos_tol/rot_tol act as with_tolerances does, for this call only; the defaults are defined once."""
    T = goals(panda, 3, 9)
    res = solver.solve(panda, T, SolveConfig(samples=4, pos_tol=10.0, rot_tol=math.pi + 0.1), generator=gen())
    same = solver.with_tolerances(10.0, math.pi + 0.1).solve(panda, T, SolveConfig(samples=4), generator=gen())
    assert res.success.all()
    for name in ("q", "pos_err", "rot_err", "success", "within_limits"):
        assert torch.equal(getattr(res, name), getattr(same, name))
    assert (RefineConfig().pos_tol, RefineConfig().rot_tol) == (1e-3, 1e-2)
    assert (SOLVE_TOLERANCES.pos_tol, SOLVE_TOLERANCES.rot_tol) == (1e-3, 1e-2)
    assert (PathConfig().pos_tol, PathConfig().rot_tol) == (1e-4, math.radians(0.1))
    assert (TrajectoryConfig().pos_tol, TrajectoryConfig().rot_tol) == (PathConfig().pos_tol, PathConfig().rot_tol)
    assert RefineConfig().tolerances == Tolerances() and PathConfig().tolerances == PATH_TOLERANCES


# ---------------------------------------------------------------------------------------------- strategies
def test_random_strategy_never_touches_the_model(solver, panda, monkeypatch):
    """LM from random starts: no sampling, no model call, no graph (a chain the graph cannot take works)."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the strategy 'random' used the model")

    monkeypatch.setattr(ggik.ik.strategies, "sample_joint_angles", forbidden)
    monkeypatch.setattr(solver.model, "forward", forbidden)
    monkeypatch.setattr(solver.model, "sample", forbidden)
    T = goals(panda, 5, 13)
    res = solver.solve(panda, T, SolveConfig(strategy="random", random_starts=6), generator=gen(1))
    check_result(res, panda, T, 5, 6)
    # the starts are robot.sample_q(B * R) goal-major, refined by LM: the result is lm_refine of them, sorted
    q0 = panda.sample_q(5 * 6, gen(1)).view(5, 6, panda.dof)
    q_ref, info = lm_refine(panda, T[:, None], q0)
    assert torch.equal(res.success.any(-1), info.converged.any(-1))
    torch.testing.assert_close(res.q.sort(1).values, q_ref.sort(1).values, rtol=0, atol=0)
    prismatic = Robot.from_urdf(HAND_URDFS["prismatic"])  # no GGIK graph for it
    T_p = goals(prismatic, 2, 14)
    check_result(
        solver.solve(prismatic, T_p, SolveConfig(strategy="random", random_starts=3), generator=gen()),
        prismatic,
        T_p,
        2,
        3,
    )


def test_model_first_strategy_solves_what_random_starts_solve(solver, panda):
    """The cascade as a strategy: on 8 reachable panda goals 16 random starts solve every goal, and model first
    (2 samples, 16 random starts for the goals they leave unsolved) solves them too; sorted valid results."""
    T = goals(panda, 8, 2)
    rand = solver.solve(panda, T, SolveConfig(strategy="random", random_starts=16), generator=gen(5))
    first = solver.solve(panda, T, SolveConfig(samples=2, strategy="model-first", random_starts=16), generator=gen(4))
    check_result(rand, panda, T, 8, 16)
    check_result(first, panda, T, 8, 2)
    strict = lambda r: (r.success & r.within_limits)[:, 0]  # noqa: E731
    assert strict(rand).all(), "test-data precondition: random starts solve every goal here"
    assert (strict(first) >= strict(rand)).all()
    # the first stage alone is LM from the same samples: where it solves a goal, model first keeps its solutions
    stage1 = solver.solve(panda, T, SolveConfig(samples=2, refine="lm"), generator=gen(4))
    kept = strict(stage1)
    assert torch.equal(first.q[kept], stage1.q[kept])
    slsqp = solver.solve(
        panda, T[:2], SolveConfig(strategy="random", random_starts=2, refine="slsqp"), generator=gen(5)
    )
    check_result(slsqp, panda, T[:2], 2, 2)


def test_strategies_take_every_goal_kind(solver, panda):
    p = goals(panda, 3, 15)[:, :3, 3]
    for strategy, cfg in (
        ("random", SolveConfig(strategy="random", random_starts=4)),
        ("model-first", SolveConfig(samples=2, strategy="model-first", random_starts=4)),
    ):
        res = solver.solve(panda, p, cfg, generator=gen(), goal="position")
        assert res.q.shape[:2] == (3, cfg.random_starts if strategy == "random" else 2)
        assert (res.rot_err == 0).all() and res.success[:, 0].all(), strategy
        pos, _ = pose_errors(panda.fk(res.q), make_transform(torch.eye(3, dtype=F64).expand(3, 3, 3), p)[:, None])
        torch.testing.assert_close(res.pos_err, pos, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"samples": 0}, r"SolveConfig.samples must be an integer >= 1, got 0"),
        ({"samples": 2.5}, r"SolveConfig.samples must be an integer >= 1, got 2.5"),
        ({"samples": True}, r"SolveConfig.samples must be an integer >= 1, got True"),
        ({"random_starts": 0, "strategy": "random"}, r"SolveConfig.random_starts must be an integer >= 1, got 0"),
        ({"refine": "xyz"}, r"SolveConfig.refine must be one of \(None, 'lm', 'slsqp', 'dg', 'dg\+lm'\), got 'xyz'"),
        ({"strategy": "cascade"}, r"SolveConfig.strategy must be one of \('samples', 'model-first', 'random'\)"),
        ({"pos_tol": 0.0}, r"SolveConfig.pos_tol must be positive, got 0.0"),
        ({"rot_tol": float("nan")}, r"SolveConfig.rot_tol must be positive, got nan"),
        ({"strategy": "random", "samples": 4}, r"the strategy 'random' samples no model; leave samples unset"),
        ({"random_starts": 4}, r"random_starts applies to the strategies 'model-first' and 'random'"),
        ({"strategy": "model-first", "refine": "dg"}, r"the strategy 'model-first' refines its starts with one of"),
    ],
)
def test_solve_config_rejects_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SolveConfig(**kwargs)


def test_solve_config_defaults_and_methods():
    assert SolveConfig().method is None and SolveConfig(strategy="random").method == "lm"
    assert SolveConfig(strategy="model-first", refine="slsqp").method == "slsqp"
    assert SolveConfig(pos_tol=1e-4).tolerances(Tolerances()) == Tolerances(1e-4, 1e-2)
    with pytest.raises(ValueError, match="Tolerances.pos_tol must be positive"):
        Tolerances(pos_tol=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'time_limit'"):
        SolveConfig(time_limit=1.0)  # type: ignore[call-arg]  # paths take theirs in PathConfig


def test_options_are_one_config_object(solver, panda):
    """The options of solve are one SolveConfig (0.2.0 removed the loose and positional forms: CHANGELOG.md)."""
    T = goals(panda, 2, 10)
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_samples'"):
        solver.solve(panda, T, num_samples=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'samples'"):
        solver.solve(panda, T, samples=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="positional argument"):
        solver.solve(panda, T, SolveConfig(), "lm")  # type: ignore[misc]
    with pytest.raises(TypeError, match="config must be a ggik.SolveConfig, got int"):
        solver.solve(panda, T, 4)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------- bad input
def test_bad_goals_and_arguments(solver, panda):
    T = goals(panda, 2, 10)
    nan = T.clone()
    nan[1, 1, 3] = float("nan")
    with pytest.raises(ValueError, match="T_goal contains NaN or inf"):
        solver.solve(panda, nan, SolveConfig(samples=2))
    sheared = T.clone()
    sheared[0, 0, 1] += 0.2
    with pytest.raises(ValueError, match=r"T_goal is not a rigid transform at index \(0,\)"):
        solver.solve(panda, sheared, SolveConfig(samples=2))
    for shape in [(3, 4), (2, 3, 4, 4), (4,), (2, 4, 3)]:
        with pytest.raises(
            ValueError, match=r"T_goal must have shape \(4, 4\) or \(B, 4, 4\), got " + re.escape(str(shape))
        ):
            solver.solve(panda, torch.zeros(shape, dtype=F64), SolveConfig(samples=2))
    with pytest.raises(TypeError, match="robot must be a ggik.Robot, got str"):
        solver.solve("panda", T, SolveConfig(samples=2))
    with pytest.raises(TypeError, match="config must be a ggik.SolveConfig, got PathConfig"):
        solver.solve(panda, T, config=PathConfig())


def test_prismatic_robot_needs_a_lock(solver):
    robot = Robot.from_urdf(HAND_URDFS["prismatic"])
    T = goals(robot, 1, 11)
    with pytest.raises(GraphError, match=r"prismatic joint 'slide' .* lock it at a value, e\.g\. robot\.lock"):
        solver.solve(robot, T, SolveConfig(samples=2))
    locked = robot.lock({"slide": 0.25})
    T_locked = goals(locked, 2, 12)
    check_result(solver.solve(locked, T_locked, SolveConfig(samples=2), generator=gen()), locked, T_locked, 2, 2)


def test_bad_checkpoints(ckpt, tmp_path):
    data = ckpt.read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint at all" * 10)
    for path in (truncated, garbage):
        with pytest.raises(GGIKError, match=r"is not a readable ggik checkpoint \(corrupt or truncated\?\)"):
            GGIK.load(path)
    other = tmp_path / "other.pt"
    torch.save({"format": "ggik-problems/1", "q": torch.zeros(2)}, other)
    with pytest.raises(
        GGIKError, match=r"incompatible checkpoint format 'ggik-problems/1'; this ggik .* reads 'ggik-checkpoint/1'"
    ):
        GGIK.load(other)
    no_model = tmp_path / "no_model.pt"
    payload = torch.load(ckpt, weights_only=True)
    del payload["model"]
    torch.save(payload, no_model)
    with pytest.raises(GGIKError, match="checkpoint does not match this ggik version's model"):
        GGIK.load(no_model)
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        GGIK.load(tmp_path / "missing.pt")


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_solve_json(ckpt, solver, panda, capsys):
    """--raw --all --json: every raw sample, as the library returns it; exit status 1 when none is a solution (this
    test model's samples never are), the summary saying so."""
    argv = ["solve", "--robot", "panda", "--pose", *POSE, "-s", "4", "--ckpt", str(ckpt), "--json", "--raw", "--all"]
    x, y, z, *quat = (float(v) for v in POSE)
    T = make_transform(quat_to_matrix(torch.tensor(quat, dtype=F64)), torch.tensor([x, y, z], dtype=F64))
    raw_tol = dict(pos_tol=0.01, rot_tol=math.radians(1.0))  # --raw judges by the paper's 1 cm and 1 deg
    expected = solver.solve(panda, T, SolveConfig(samples=4, **raw_tol), generator=gen(0))  # --seed defaults to 0
    solved = bool((expected.success & expected.within_limits).any())
    assert main(argv) == (0 if solved else 1)
    out = json.loads(capsys.readouterr().out)
    assert out["robot"] == "panda" and out["joint_names"] == list(panda.joint_names) and out["refine"] is None
    assert out["strategy"] == "samples" and out["solved"] == solved
    assert out["summary"].startswith("no raw sample within 10 mm / 1 deg: closest " if not solved else "1 ")
    rows = out["solutions"]
    assert len(rows) == 4
    for k, row in enumerate(rows):
        assert set(row) == {"q", "pos_err_m", "rot_err_rad", "ok", "within_limits"}
        assert row["q"] == [round(v, 6) for v in expected.q[0, k].tolist()]
        assert row["pos_err_m"] == expected.pos_err[0, k].item() and row["rot_err_rad"] == expected.rot_err[0, k].item()
        assert row["ok"] == bool(expected.success[0, k] & expected.within_limits[0, k])
        assert row["within_limits"] == bool(expected.within_limits[0, k])


def test_cli_solve_table_with_lm(ckpt, solver, panda, capsys):
    """The table lists every result with --all, numbered from 1, then the summary line; exit 0 iff one is ok."""
    argv = ["solve", "--robot", "panda", "--pose", *POSE, "--samples", "3", "--ckpt", str(ckpt)]
    x, y, z, *quat = (float(v) for v in POSE)
    T = make_transform(quat_to_matrix(torch.tensor(quat, dtype=F64)), torch.tensor([x, y, z], dtype=F64))
    expected = solver.solve(panda, T, SolveConfig(samples=3, refine="lm"), generator=gen(0))
    ok = expected.success & expected.within_limits
    assert main([*argv, "--strategy", "samples", "--all"]) == (0 if ok.any() else 1)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "panda: 3 model samples refined with lm; 3 listed, best first"
    assert lines[1].split()[:4] == ["#", "pos", "err", "[mm]"] and lines[1].endswith(
        f"({', '.join(panda.joint_names)})"
    )
    assert len(lines) == 6
    for k, line in enumerate(lines[2:5]):
        cols = line.split()
        assert cols[:5] == [
            str(k + 1),
            f"{1e3 * expected.pos_err[0, k].item():.3f}",
            f"{math.degrees(expected.rot_err[0, k].item()):.3f}",
            "yes" if ok[0, k] else "no",
            "yes",  # LM keeps the joints in their limits
        ]
        assert json.loads(line[line.index("[") :]) == [round(v, 6) for v in expected.q[0, k].tolist()]
    distinct = len(distinct_solutions(expected.q[0], ok[0], ~panda.limited))
    assert lines[5].startswith(f"{distinct} distinct solution" if distinct else "no solution within 1 mm / 0.573 deg")


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "1", "1", "0"],
            r"--pose: the quaternion QW QX QY QZ must have unit length, got norm 1\.41421",
        ),
        (
            ["--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "0", "0", "0"],
            r"--pose: the quaternion QW QX QY QZ must have unit length, got norm 0",
        ),
        (
            ["--robot", "panda", "--pose", "0.4", "0.1", "0.5", "nan", "1", "0", "0"],
            r"--pose X Y Z QW QX QY QZ: every value must be a finite number",
        ),
        (["--pose", *POSE], r"give exactly one of --robot NAME or --urdf FILE"),
        (["--robot", "panda", "--urdf", "x.urdf", "--pose", *POSE], r"give exactly one of --robot NAME or --urdf FILE"),
        (["--robot", "nope", "--pose", *POSE], r"unknown robot 'nope'"),
        (
            ["--robot", "panda", "--pose", *POSE, "--strategy", "random", "-s", "4"],
            r"-s/--samples: the strategy 'random' samples no model",
        ),
        (
            ["--robot", "panda", "--pose", *POSE, "--strategy", "samples", "--random-starts", "4"],
            r"--random-starts applies to the strategies 'model-first' and 'random'",
        ),
        (
            ["--robot", "panda", "--pose", *POSE, "--strategy", "model-first", "--refine", "dg"],
            r"--refine: the strategy 'model-first' refines its starts with one of \('lm', 'slsqp'\), got 'dg'",
        ),
    ],
    ids=[
        "quat-norm-sqrt2",
        "quat-zero",
        "quat-nan",
        "no-robot",
        "robot-and-urdf",
        "unknown-robot",
        "random-samples",
        "samples-random-starts",
        "model-first-dg",
    ],
)
def test_cli_solve_bad_input_exits_2(ckpt, capsys, args, message):
    assert main(["solve", *args, "--ckpt", str(ckpt)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("ggik: error: ")
    assert re.search(message, captured.err), captured.err


def test_cli_solve_missing_checkpoint_exits_2(tmp_path, capsys):
    assert main(["solve", "--robot", "panda", "--pose", *POSE, "--ckpt", str(tmp_path / "none.pt")]) == 2
    assert "checkpoint not found" in capsys.readouterr().err


def test_cli_info(ckpt, solver, capsys):
    assert main(["info", str(ckpt)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"checkpoint {ckpt}\n")
    assert "format ggik-checkpoint/1" in out and "step 3, examples 24," in out
    assert f"  parameters {solver.model.num_parameters():,}\n" in out
    assert '"named": {"panda": 1.0}' in out and '"dim": 16' in out


@pytest.mark.parametrize(
    "config",
    [
        SolveConfig(strategy="random", random_starts=8),
        SolveConfig(samples=3, strategy="model-first", random_starts=8),
        SolveConfig(samples=4, refine="lm"),
    ],
    ids=["random", "model-first", "samples+lm"],
)
def test_first_solution_solves_the_same_goals(solver, panda, config):
    """SolveConfig.first_solution stops a goal's LM starts at its first converged one: the same goals solved, the best
    solution of each a converged start, the result's shape and order kept."""
    T = goals(panda, 10, 21)
    every = solver.solve(panda, T, config, generator=gen(3))
    first = solver.solve(panda, T, replace(config, first_solution=True), generator=gen(3))
    assert first.q.shape == every.q.shape
    check_result(first, panda, T, 10, every.q.shape[1])
    strict = lambda r: (r.success & r.within_limits)[:, 0]  # noqa: E731
    assert torch.equal(strict(first), strict(every)) and strict(every).any()
    assert first.success.sum() <= every.success.sum()


@pytest.mark.parametrize(
    "config, message",
    [
        (dict(), "first_solution stops LM early; the refinement here is None"),
        (dict(refine="dg"), "the refinement here is 'dg'"),
        (dict(strategy="random", refine="slsqp"), "the refinement here is 'slsqp'"),
    ],
)
def test_first_solution_needs_lm(config, message):
    with pytest.raises(ValueError, match=message):
        SolveConfig(first_solution=True, **config)


def test_ikresult_prints_counts_not_tensors(solver, panda):
    T = panda.fk(panda.sample_q(2, gen(3)))
    result = solver.solve(panda, T, SolveConfig(samples=3, refine="lm"), generator=gen(0))
    text = repr(result)
    assert text == (
        f"IKResult(goals=2, solutions per goal=3, dof=7, solved goals={int(result.success.any(-1).sum())}, "
        f"successful solutions={int(result.success.sum())}, within limits={int(result.within_limits.sum())})"
    )
    assert str(result) == text and "tensor" not in text
