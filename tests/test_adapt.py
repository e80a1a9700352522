"""``ggik adapt`` / :func:`ggik.training.adapt.adapt`: the best model kept, its provenance, the budget over sittings,
a stop request, replay, held-out goals, resumes wherever the files lie, and the command line's errors. A tiny model
for a few steps: mechanics, not accuracy (benchmarks/adapt measures that). The loop's clock is :class:`TickClock`:
every step and every measurement costs exactly one tick, so the budget, the steps and the measurements do not depend
on this CPU's speed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import torch

import ggik.training.adapt as adapt_module
from ggik import GGIK
from ggik.checkpoint import WEIGHTS_FORMAT, read_checkpoint
from ggik.cli import main as cli_main
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.kinematics import Robot, random_robot
from ggik.kinematics.robot_files import RobotFile
from ggik.training.adapt import ARM_PROBLEMS, STATE_FILE, TEST_PROBLEMS, AdaptConfig, adapt, adapt_config
from ggik.training.adapt_config import retains

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO / "benchmarks/adapt/urdfs/fetch_formatted.urdf"
QUICK = AdaptConfig(
    minutes=0.03,
    val_every_s=0.5,
    val_problems=6,
    test_problems=5,
    val_samples=4,
    replay_problems=3,
    batch_size=8,
    retain=0.0,
)


class TickClock:
    """The adaptation loop's clock (``ggik.training.adapt._clock``): every read of the wall time advances it by
    ``tick`` s (a power of two: its sums are exact), so a step, timed by two reads, costs one tick, and so does a
    measurement. CPU time reads as wall time. ``events``: (time [s], action) in time order, each called once when the
    clock reaches its time (a stop request, a signal)."""

    def __init__(self, tick: float = 0.25, events: list[tuple[float, Callable[[], None]]] | None = None) -> None:
        self.now, self.tick, self.events = 0.0, tick, list(events or [])

    def wall(self) -> float:
        self.now += self.tick
        while self.events and self.now >= self.events[0][0]:
            self.events.pop(0)[1]()
        return self.now

    def cpu(self) -> float:
        return self.now


@pytest.fixture(autouse=True)
def clock(monkeypatch) -> TickClock:
    fake = TickClock()
    monkeypatch.setattr(adapt_module, "_clock", fake)
    return fake


@pytest.fixture
def arm_file(tmp_path) -> Path:
    path = tmp_path / "arm.urdf"
    path.write_text(random_robot(6, torch.Generator().manual_seed(5), name="arm").to_urdf())
    return path


def test_adapt_keeps_the_best_model_names_the_arm_and_replays(tiny_ckpt, arm_file, tmp_path, capsys):
    out = tmp_path / "adapted.pt"
    result = adapt(RobotFile(str(arm_file)), out, QUICK, tiny_ckpt, progress=False)
    curve = result.curve
    assert curve[0]["step"] == 0 and curve[0]["success"] == result.base_success and len(curve) >= 2
    assert result.best_success == max(p["success"] for p in curve)
    # the clock's ticks: 2 steps, a measurement, 2 steps, a measurement, 2 steps (the budget, 1.8 s, spent), the last
    assert result.steps == 6 and [p["step"] for p in curve] == [0, 2, 4, 6]
    assert result.elapsed_s == 9 * 0.25 >= 60 * QUICK.minutes
    assert set(result.replay_before) == set(result.replay_after) == {"panda"}
    ckpt = read_checkpoint(out)
    assert ckpt["format"] == WEIGHTS_FORMAT
    assert ckpt["adaptation"]["robot"] == "arm" and ckpt["adaptation"]["success"] == result.best_success
    assert ckpt["adaptation"]["test_success"] == result.test_success
    assert ckpt["adaptation"]["base_test_success"] == result.base_test_success
    assert ckpt["training_robots"]["files"]["arm"]["urdf"] == arm_file.read_text()
    assert ckpt["config"]["data"]["robots"]["panda"] == pytest.approx(QUICK.replay)
    state = json.loads((tmp_path / "adapted.pt.adapt" / STATE_FILE).read_text())
    assert state["best"]["success"] == result.best_success
    assert cli_main(["info", str(out)]) == 0
    info = capsys.readouterr().out
    assert "adapted to arm" in info
    assert f"held-out raw success {result.base_test_success:.1%} -> {result.test_success:.1%}, selection" in info
    robot = Robot.from_urdf(arm_file)
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(0)))
    solved = GGIK.load(out).solve(robot, T)
    assert solved.q.shape[:2] == (2, 32)


def test_a_run_continues_to_its_budget_and_refuses_another_recipe_arm_or_base(tiny_ckpt, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    first = adapt(RobotFile(str(arm_file)), out, QUICK, tiny_ckpt, run, progress=False)
    with pytest.raises(GGIKError, match=r"another config: lr=0.0001 \(the run's: 0.0003\)"):
        adapt(RobotFile(str(arm_file)), out, replace(QUICK, lr=1e-4), tiny_ckpt, run, progress=False)
    with pytest.raises(GGIKError, match=r"another arm: ee_link='link_3' \(the run's: None\)"):
        adapt(RobotFile(str(arm_file), ee_link="link_3"), out, QUICK, tiny_ckpt, run, progress=False)
    with pytest.raises(GGIKError, match=r"another arm: base_link='link_1'.*; another arm: lock=\{'joint_2': 0.5\}"):
        locked = RobotFile(str(arm_file), base_link="link_1", lock={"joint_2": 0.5})
        adapt(locked, out, QUICK, tiny_ckpt, run, progress=False)
    other_base = tmp_path / "other.pt"
    torch.save({**torch.load(tiny_ckpt, weights_only=True), "step": 99}, other_base)
    with pytest.raises(GGIKError, match="another base model: sha256"):
        adapt(RobotFile(str(arm_file)), out, QUICK, other_base, run, progress=False)
    edited = tmp_path / "edited.urdf"
    edited.write_text(arm_file.read_text().replace('<robot name="arm">', '<robot name="arm2">'))
    with pytest.raises(GGIKError, match=f"another arm file: {edited}"):
        adapt(RobotFile(str(edited)), out, QUICK, tiny_ckpt, run, progress=False)
    done = adapt(RobotFile(str(arm_file)), out, QUICK, tiny_ckpt, run, progress=False)  # budget spent: no step
    assert done.steps == first.steps
    longer = replace(QUICK, minutes=0.06, threads=1)  # a larger budget (and other threads) continues the run
    more = adapt(RobotFile(str(arm_file)), out, longer, tiny_ckpt, run, progress=False)
    assert more.steps > first.steps and more.elapsed_s >= 60 * longer.minutes
    assert more.curve[: len(first.curve)] == first.curve


def test_a_stop_request_keeps_the_best_model_and_the_run_goes_on(tiny_ckpt, arm_file, tmp_path, monkeypatch, clock):
    handlers: dict = {}

    def capture(request_stop):  # the handlers' callback, called by the clock as a signal would call it
        handlers["stop"] = request_stop
        return {}

    monkeypatch.setattr(adapt_module, "install_stop_handlers", capture)
    clock.events = [(1.0, lambda: handlers["stop"]()), (4.0, lambda: handlers["stop"]())]
    out, run, cfg = tmp_path / "m.pt", tmp_path / "run", replace(QUICK, minutes=5.0)
    stopped = adapt(RobotFile(str(arm_file)), out, cfg, tiny_ckpt, run, progress=False)
    assert stopped.steps == 2 and stopped.elapsed_s == 0.75  # 2 steps (the stop during the second), a measurement
    assert out.is_file() and (run / "last.pt").is_file()
    assert read_checkpoint(out)["adaptation"]["success"] == stopped.best_success
    again = adapt(RobotFile(str(arm_file)), out, cfg, tiny_ckpt, run, progress=False)  # stopped again, later on
    assert again.steps > stopped.steps and 60 * cfg.minutes > again.elapsed_s > stopped.elapsed_s


def test_a_real_sigint_stops_the_run(tiny_ckpt, arm_file, tmp_path, clock):
    clock.events = [(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))]
    out, run = tmp_path / "m.pt", tmp_path / "run"
    before = signal.getsignal(signal.SIGINT)  # Python's own, or SIG_IGN in a process started in the background
    result = adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=1.0), tiny_ckpt, run, progress=False)
    assert result.steps == 2 and result.elapsed_s < 60.0 and out.is_file()
    assert signal.getsignal(signal.SIGINT) is before  # the handlers put back


def test_the_adaptation_config_mixes_the_arm_with_the_replayed_robots(tiny_ckpt):
    from ggik.checkpoint import load_checkpoint

    cfg = adapt_config(load_checkpoint(tiny_ckpt), RobotFile(str(FETCH)), replace(QUICK, replay=0.4))
    robots = cfg.data.robots
    assert robots["panda"] == pytest.approx(0.4) and robots["fetch_formatted"].weight == pytest.approx(0.6)
    assert cfg.loss.beta_warmup_steps == 0 and cfg.val.every == 0 and cfg.data.random_weight == 0
    with pytest.raises(GGIKError, match="replay=0"):
        no_robots = {"config": load_checkpoint(tiny_ckpt)["config"], "training_robots": {"named": {}}}
        adapt_config(no_robots, RobotFile(str(FETCH)), QUICK)


@pytest.mark.parametrize(
    ("change", "match"),
    [({"minutes": 0.0}, "minutes"), ({"replay": 1.0}, "replay"), ({"freeze": ["wheels"]}, "unknown parts")],
)
def test_adapt_config_refuses_bad_values(change, match):
    with pytest.raises(GGIKError, match=match):
        AdaptConfig(**change)


def test_the_command_line_names_the_option(tmp_path, capsys):
    out = str(tmp_path / "m.pt")
    assert cli_main(["adapt", "--urdf", str(tmp_path / "nope.urdf"), "--minutes", "1", "--out", out]) == 2
    assert "--urdf" in capsys.readouterr().err
    fetch = ["adapt", "--urdf", str(FETCH), "--ee", "gripper_link", "--minutes", "1", "--out", out]
    assert cli_main(fetch) == 2
    assert "--lock torso_lift_joint=VALUE" in capsys.readouterr().err
    assert cli_main([*fetch, "--lock", "nope=0"]) == 2
    assert "--lock" in capsys.readouterr().err
    assert not Path(out).exists()


def test_ggik_adapt_runs_from_the_command_line(tiny_ckpt, arm_file, tmp_path, capsys):
    out = tmp_path / "m.pt"
    argv = ["adapt", "--urdf", str(arm_file), "--minutes", "0.02", "--out", str(out), "--ckpt", tiny_ckpt]
    assert cli_main([*argv, "--no-progress", "--threads", "1"]) == 0
    text = capsys.readouterr().out
    assert "arm: held-out raw success" in text
    assert "100 goals never used to choose the model" in text and "selection goals (100" in text
    assert f"ggik solve --ckpt {out}" in text
    assert read_checkpoint(out)["adaptation"]["urdf"] == str(arm_file.resolve())


def test_a_full_anchor_keeps_the_base_weights(tiny_ckpt, arm_file, tmp_path):
    """anchor = 1 / lr at a constant rate pulls every weight back onto the base model's after each step."""
    cfg = replace(QUICK, schedule="constant", warmup_steps=0, lr=1e-3, anchor=1e3)
    adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", cfg, tiny_ckpt, tmp_path / "run", progress=False)
    after = read_checkpoint(tmp_path / "run" / "last.pt")["model"]
    base = read_checkpoint(tiny_ckpt)["model"]
    assert read_checkpoint(tmp_path / "run" / "last.pt")["step"] > 0
    for name, value in base.items():
        torch.testing.assert_close(after[name], value, atol=1e-6, rtol=0)


def test_a_model_that_forgets_is_blended_back_until_the_replayed_robots_keep_their_success(
    tiny_ckpt, arm_file, tmp_path, monkeypatch
):
    """The measurements faked: the arm's success rises with every step (each measurement a new best), the replayed
    robots keep theirs only within half the way from the base weights to the best ones: the kept model is the blend
    0.5, weight for weight."""
    import ggik.training.adapt as adapt_module

    base = read_checkpoint(tiny_ckpt)["model"]
    probe = next(k for k, v in base.items() if v.is_floating_point() and v.numel() > 100)

    def success(self, groups, model=None):
        if groups is self.arm_groups or groups is self.test_groups:
            return {self.arm: min(1.0, self.trainer.step / 1000)}
        if not (self.run_dir / "best.pt").is_file():
            return dict.fromkeys((r.name for r, *_ in groups), 1.0)
        best = read_checkpoint(self.run_dir / "best.pt")["model"][probe]
        w = (model or self.trainer.model).state_dict()[probe].cpu()
        share = float((w - base[probe]).norm() / (best - base[probe]).norm())
        return {r.name: 1.0 if share <= 0.5 + 1e-4 else 0.0 for r, *_ in groups}

    monkeypatch.setattr(adapt_module._Adaptation, "success", success)
    monkeypatch.setattr(
        adapt_module._Adaptation,
        "measure",
        lambda self, groups, model=None: {n: (s, 0.0) for n, s in success(self, groups, model).items()},
    )
    cfg = replace(QUICK, lr=1e-2, retain=0.95)
    result = adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", cfg, tiny_ckpt, tmp_path / "run", progress=False)
    assert result.blend == 0.5 and result.replay_after == {"panda": 1.0}
    kept, best = read_checkpoint(tmp_path / "m.pt"), read_checkpoint(tmp_path / "run" / "best.pt")
    assert kept["adaptation"]["blend"] == 0.5 and best["adaptation"].get("blend") is None
    for name, value in base.items():
        if value.is_floating_point():
            torch.testing.assert_close(kept["model"][name], value + 0.5 * (best["model"][name] - value))
    rerun = adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", cfg, tiny_ckpt, tmp_path / "run", progress=False)
    assert rerun.blend == 0.5  # blended again from the best model, not from the blend


def test_ggik_adapt_returns_the_adapted_solver(tiny_ckpt, tmp_path):
    robot = random_robot(6, torch.Generator().manual_seed(8), name="python_arm")
    out = tmp_path / "py.pt"
    solver = GGIK.adapt(robot, 0.02, out=out, base=tiny_ckpt, config=QUICK, progress=False)
    assert isinstance(solver, GGIK) and solver.checkpoint["adaptation"]["robot"] == "python_arm"
    assert (tmp_path / "py.pt.adapt" / "python_arm.urdf").read_text() == robot.to_urdf()
    T = robot.fk(robot.sample_q(1, torch.Generator().manual_seed(1)))
    assert solver.solve(robot, T).q.shape[:2] == (1, 32)


def _copy(src: str | Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def test_a_resume_reads_the_base_model_given_now_when_the_first_one_moved(tiny_ckpt, arm_file, tmp_path):
    """The final blend loads the base model given to this call, not the path of the first sitting."""
    first_base = _copy(tiny_ckpt, tmp_path / "a" / "base.pt")
    out, run = tmp_path / "m.pt", tmp_path / "run"
    first = adapt(RobotFile(str(arm_file)), out, QUICK, first_base, run, progress=False)
    moved = tmp_path / "b" / "base.pt"
    moved.parent.mkdir()
    first_base.rename(moved)
    more = adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=0.06), moved, run, progress=False)
    assert more.steps > first.steps and set(more.replay_after) == {"panda"}
    assert json.loads((run / STATE_FILE).read_text())["base"] == str(first_base.resolve())  # provenance only


def test_a_resume_with_relative_paths_from_another_directory_is_the_same_run(
    tiny_ckpt, arm_file, tmp_path, monkeypatch
):
    here, there = tmp_path / "here", tmp_path / "there"
    there.mkdir()
    _copy(tiny_ckpt, here / "base.pt")
    _copy(arm_file, here / "arm.urdf")
    monkeypatch.chdir(here)
    first = adapt(RobotFile("arm.urdf"), "m.pt", QUICK, "base.pt", "run", progress=False)
    monkeypatch.chdir(there)
    more = adapt(
        RobotFile("../here/arm.urdf"),
        "../here/m.pt",
        replace(QUICK, minutes=0.06),
        "../here/base.pt",
        "../here/run",
        progress=False,
    )
    assert more.steps > first.steps and more.curve[: len(first.curve)] == first.curve
    state = json.loads((here / "run" / STATE_FILE).read_text())
    assert state["arm"]["urdf"] == str((here / "arm.urdf").resolve())  # stored resolved


@contextmanager
def _temporary_shipped(src: str):
    """As ``importlib.resources.as_file`` in a zipped install: a temporary copy, deleted when the context ends."""
    folder = Path(tempfile.mkdtemp())
    try:
        yield _copy(src, folder / "ggik_default.pt")
    finally:
        shutil.rmtree(folder)


def test_a_resume_of_the_shipped_model_from_a_zipped_install(tiny_ckpt, arm_file, tmp_path, monkeypatch):
    monkeypatch.setattr(adapt_module, "shipped_model_path", lambda: _temporary_shipped(tiny_ckpt))
    out, run = tmp_path / "m.pt", tmp_path / "run"
    first = adapt(RobotFile(str(arm_file)), out, QUICK, None, run, progress=False)
    more = adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=0.06), None, run, progress=False)
    assert more.steps > first.steps and set(more.replay_after) == {"panda"}
    assert read_checkpoint(out)["adaptation"]["base"] == adapt_module.SHIPPED


def test_torch_threads_are_restored(tiny_ckpt, arm_file, tmp_path, monkeypatch):
    monkeypatch.setattr(adapt_module, "shipped_model_path", lambda: _temporary_shipped(tiny_ckpt))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        for base in (tiny_ckpt, None):  # the shipped model (base None) too
            cfg = replace(QUICK, threads=1, minutes=0.01)
            adapt(RobotFile(str(arm_file)), tmp_path / f"{base is None}.pt", cfg, base, progress=False)
            assert torch.get_num_threads() == 2
        with pytest.raises(GGIKError):  # and on an error
            adapt(RobotFile(str(tmp_path / "nope.urdf")), tmp_path / "x.pt", replace(QUICK, threads=1), tiny_ckpt)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_freeze_as_a_tuple_resumes_and_a_part_the_model_lacks_is_named(tiny_ckpt, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    first = adapt(RobotFile(str(arm_file)), out, replace(QUICK, freeze=("decoder",)), tiny_ckpt, run, progress=False)
    longer = replace(QUICK, freeze=("decoder",), minutes=0.06)  # adapt_state.json holds a list
    more = adapt(RobotFile(str(arm_file)), out, longer, tiny_ckpt, run, progress=False)
    assert more.steps > first.steps
    assert longer.freeze == ["decoder"] and AdaptConfig(freeze="embed").freeze == ["embed"]
    base, last = read_checkpoint(tiny_ckpt)["model"], read_checkpoint(run / "last.pt")["model"]
    frozen = [k for k in base if k.startswith("decoder.")]
    assert frozen and all(torch.equal(base[k], last[k]) for k in frozen)  # frozen over both sittings
    ckpt = torch.load(tiny_ckpt, weights_only=True)  # the tiny model without its Gauss-Newton moves
    ckpt["config"]["model"]["gn_steps"] = 0
    ckpt["model"] = {k: v for k, v in ckpt["model"].items() if not k.startswith("gn_follow.")}
    torch.save(ckpt, tmp_path / "no_gn.pt")
    with pytest.raises(GGIKError, match=r"no gn_follow to freeze .*model.gn_steps = 0"):
        adapt(RobotFile(str(arm_file)), tmp_path / "g.pt", replace(QUICK, freeze=["gn_follow"]), tmp_path / "no_gn.pt")
    assert not (tmp_path / "g.pt.adapt" / "last.pt").exists()


def test_the_result_is_measured_on_held_out_goals_the_selection_never_saw(tiny_ckpt, arm_file, tmp_path, monkeypatch):
    """The best model is chosen on the selection goals alone; the held-out goals are measured twice, for the base
    model (before any step) and for the model written to ``out``, and those are the numbers reported."""
    real = adapt_module._Adaptation.success
    calls: list[tuple[str, torch.Tensor, float]] = []
    probe = next(k for k, v in read_checkpoint(tiny_ckpt)["model"].items() if v.is_floating_point())

    def success(self, groups, model=None):
        measured = real(self, groups, model)
        if groups is self.test_groups:
            calls.append(("test", (model or self.trainer.model).state_dict()[probe].clone(), measured[self.arm]))
        return measured

    monkeypatch.setattr(adapt_module._Adaptation, "success", success)
    run, out = tmp_path / "run", tmp_path / "m.pt"
    result = adapt(RobotFile(str(arm_file)), out, replace(QUICK, lr=1e-2), tiny_ckpt, run, progress=False)
    assert len(calls) == 2
    torch.testing.assert_close(calls[0][1], read_checkpoint(tiny_ckpt)["model"][probe], rtol=0, atol=0)
    torch.testing.assert_close(calls[1][1], read_checkpoint(out)["model"][probe], rtol=0, atol=0)
    assert (result.base_test_success, result.test_success) == (calls[0][2], calls[1][2])
    selection, held_out = (ProblemSet.load(run / name) for name in (ARM_PROBLEMS, TEST_PROBLEMS))
    assert len(selection) == QUICK.val_problems and len(held_out) == QUICK.test_problems
    assert torch.cdist(selection.T_goal[:, :3, 3], held_out.T_goal[:, :3, 3]).min() > 1e-6  # no goal shared
    assert result.best_success == max(p["success"] for p in result.curve)  # chosen on the selection goals


def test_the_retention_rule_counts_goals_with_a_margin():
    cfg = AdaptConfig(retain=0.95, retain_margin=1)
    # 0.95 x 180 = 171 exactly: a tie is decided by integers, not by the last bit of a float (19/30 vs 0.95 x 20/30)
    assert retains(180, 170, cfg) and not retains(180, 169, cfg)
    assert retains(180, 171, replace(cfg, retain_margin=0)) and not retains(180, 170, replace(cfg, retain_margin=0))
    assert retains(181, 171, cfg) and not retains(181, 170, cfg)  # ceil(171.95) = 172, less one goal
    assert retains(10, 0, replace(cfg, retain=0.0))
    with pytest.raises(GGIKError, match="retain_margin"):
        AdaptConfig(retain_margin=-1)


def test_a_drop_within_the_margin_is_not_blended_and_one_beyond_it_is(tiny_ckpt, arm_file, tmp_path, monkeypatch):
    """The replayed robot solves 20 of 20 goals with the base model and ``kept`` of them with any other weights:
    0.95 x 20 = 19 goals, less the margin of one: 18 keeps the adapted model (the float rule of the mean success,
    0.9 < 0.95, blended it), 17 does not."""
    results = {}
    for kept in (18, 17):

        def success(self, groups, model=None, kept=kept):
            if groups is self.replay_groups:
                weights = (model or self.trainer.model).state_dict()
                base = read_checkpoint(tiny_ckpt)["model"]
                same = all(torch.equal(weights[k].cpu(), base[k]) for k in base)
                return {"panda": 1.0 if same else kept / 20}
            return {self.arm: min(1.0, self.trainer.step / 1000)}  # every measurement a new best

        monkeypatch.setattr(adapt_module._Adaptation, "success", success)
        monkeypatch.setattr(
            adapt_module._Adaptation,
            "measure",
            lambda self, groups, model=None, s=success: {n: (v, 0.0) for n, v in s(self, groups, model).items()},
        )
        cfg = replace(QUICK, retain=0.95, replay_problems=20)
        results[kept] = adapt(RobotFile(str(arm_file)), tmp_path / f"{kept}.pt", cfg, tiny_ckpt, progress=False)
    assert results[18].blend == 1.0 and results[18].replay_after == {"panda": 0.9}
    assert results[17].blend == 0.0 and results[17].replay_after == {"panda": 1.0}
    state = json.loads((tmp_path / "18.pt.adapt" / STATE_FILE).read_text())
    assert (state["replay_solved_before"], state["replay_solved_after"], state["replay_goals"]) == (20, 18, 20)


def test_a_robot_arm_of_another_chain_is_refused_before_its_kept_file_is_touched(tiny_ckpt, tmp_path):
    robot = random_robot(6, torch.Generator().manual_seed(8), name="python_arm")
    run = tmp_path / "run"
    adapt(robot, tmp_path / "m.pt", QUICK, tiny_ckpt, run, progress=False)
    kept = (run / "python_arm.urdf").read_text()
    other = random_robot(6, torch.Generator().manual_seed(9), name="python_arm")
    with pytest.raises(GGIKError, match="another arm file"):
        adapt(other, tmp_path / "m.pt", QUICK, tiny_ckpt, run, progress=False)
    assert (run / "python_arm.urdf").read_text() == kept == robot.to_urdf()
