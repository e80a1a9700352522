"""``ggik adapt`` / :func:`ggik.training.adapt.adapt`: the best model kept, its provenance, the budget over sittings,
a stop request, replay, and the command line's errors. A tiny model for a few seconds: mechanics, not accuracy
(benchmarks/adapt measures that)."""

from __future__ import annotations

import json
import os
import signal
import threading
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from ggik import GGIK
from ggik.checkpoint import WEIGHTS_FORMAT, read_checkpoint
from ggik.cli import main as cli_main
from ggik.errors import GGIKError
from ggik.kinematics import Robot, random_robot
from ggik.kinematics.robot_files import RobotFile
from ggik.training.adapt import STATE_FILE, AdaptConfig, adapt, adapt_config

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO / "benchmarks/adapt/urdfs/fetch_formatted.urdf"
QUICK = AdaptConfig(
    minutes=0.03, val_every_s=0.5, val_problems=6, val_samples=4, replay_problems=3, batch_size=8, retain=0.0
)


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
    assert result.elapsed_s >= 60 * QUICK.minutes and result.steps > 0
    assert set(result.replay_before) == set(result.replay_after) == {"panda"}
    ckpt = read_checkpoint(out)
    assert ckpt["format"] == WEIGHTS_FORMAT
    assert ckpt["adaptation"]["robot"] == "arm" and ckpt["adaptation"]["success"] == result.best_success
    assert ckpt["training_robots"]["files"]["arm"]["urdf"] == arm_file.read_text()
    assert ckpt["config"]["data"]["robots"]["panda"] == pytest.approx(QUICK.replay)
    state = json.loads((tmp_path / "adapted.pt.adapt" / STATE_FILE).read_text())
    assert state["best"]["success"] == result.best_success
    assert cli_main(["info", str(out)]) == 0
    assert "adapted to arm" in capsys.readouterr().out
    robot = Robot.from_urdf(arm_file)
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(0)))
    solved = GGIK.load(out).solve(robot, T)
    assert solved.q.shape[:2] == (2, 32)


def test_a_run_continues_to_its_budget_and_refuses_another_recipe_arm_or_base(tiny_ckpt, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    first = adapt(RobotFile(str(arm_file)), out, QUICK, tiny_ckpt, run, progress=False)
    with pytest.raises(GGIKError, match="another config"):
        adapt(RobotFile(str(arm_file)), out, replace(QUICK, lr=1e-4), tiny_ckpt, run, progress=False)
    with pytest.raises(GGIKError, match="another arm"):
        adapt(RobotFile(str(arm_file), ee_link="link_3"), out, QUICK, tiny_ckpt, run, progress=False)
    other_base = tmp_path / "other.pt"
    torch.save({**torch.load(tiny_ckpt, weights_only=True), "step": 99}, other_base)
    with pytest.raises(GGIKError, match="another base_sha256"):
        adapt(RobotFile(str(arm_file)), out, QUICK, other_base, run, progress=False)
    done = adapt(RobotFile(str(arm_file)), out, QUICK, tiny_ckpt, run, progress=False)  # budget spent: no step
    assert done.steps == first.steps
    longer = replace(QUICK, minutes=0.06, threads=1)  # a larger budget (and other threads) continues the run
    more = adapt(RobotFile(str(arm_file)), out, longer, tiny_ckpt, run, progress=False)
    assert more.steps > first.steps and more.elapsed_s >= 60 * longer.minutes
    assert more.curve[: len(first.curve)] == first.curve


def test_a_stop_request_keeps_the_best_model_and_the_run_goes_on(tiny_ckpt, arm_file, tmp_path, monkeypatch):
    import ggik.training.adapt as adapt_module

    def stop_soon(request_stop):  # the handlers' callback, called as a signal would, 1.5 s into the loop
        threading.Timer(1.5, request_stop).start()
        return {}

    monkeypatch.setattr(adapt_module, "install_stop_handlers", stop_soon)
    out, run, cfg = tmp_path / "m.pt", tmp_path / "run", replace(QUICK, minutes=5.0)
    stopped = adapt(RobotFile(str(arm_file)), out, cfg, tiny_ckpt, run, progress=False)
    assert stopped.elapsed_s < 60.0 and out.is_file() and (run / "last.pt").is_file()
    assert read_checkpoint(out)["adaptation"]["success"] == stopped.best_success
    again = adapt(RobotFile(str(arm_file)), out, cfg, tiny_ckpt, run, progress=False)  # stopped again, later on
    assert again.steps > stopped.steps and again.elapsed_s > stopped.elapsed_s


def test_a_real_sigint_stops_the_run(tiny_ckpt, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    timer = threading.Timer(4.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        result = adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=1.0), tiny_ckpt, run, progress=False)
    finally:
        timer.cancel()
    assert result.elapsed_s < 55.0 and out.is_file()


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
    assert "arm: raw success" in text and f"ggik solve --ckpt {out}" in text
    assert read_checkpoint(out)["adaptation"]["urdf"] == str(arm_file)


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
        if groups is self.arm_groups:
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
