"""ggik.training with the tiny config: exact resume, overfitting one batch, checkpoints (round trip, corrupt
files, interrupted saves), metrics, ``ggik train|info`` and a 2-process DDP run."""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ggik import GGIKError, Robot, RobotGraph
from ggik.checkpoint import CHECKPOINT_FORMAT, load_checkpoint, load_model, merge_training_sets
from ggik.cli import main
from ggik.data import ProblemSet, TrainingData, robot_from_entry
from ggik.graph.batch import GraphBatch
from ggik.ik.sampling import RawSamples
from ggik.nn.cvae import GGIKModel
from ggik.training.config import TrainConfig
from ggik.training.schedules import beta_at, lr_factor
from ggik.training.trainer import Trainer
from ggik.training.validation import family, validate, validation_groups, validation_problems
from ggik.typed_config import apply_overrides, from_dict, load_yaml

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "train" / "configs" / "tiny.yaml"
TIMING_KEYS = {"examples_per_s", "wall_s", "cpu_s"}  # the only non-deterministic metrics
TRAIN_KEYS = {"kind", "step", "examples", "loss", "anchor_se", "free_se", "kl", "lr", "examples_per_s", "wall_s"}


def tiny_cfg(*overrides: str) -> TrainConfig:
    """train/configs/tiny.yaml with ``key=value`` overrides."""
    return from_dict(TrainConfig, apply_overrides(load_yaml(TINY), list(overrides)))


def deterministic(record: dict) -> dict:
    return {k: v for k, v in record.items() if k not in TIMING_KEYS}


def read_metrics(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def assert_same_tensors(a: dict, b: dict, what: str) -> None:
    assert a.keys() == b.keys(), what
    for k in a:
        assert torch.equal(a[k], b[k]), f"{what}: {k} differs"


@pytest.fixture(scope="module")
def short_run(tmp_path_factory) -> Path:
    """A finished 2-step run (read-only for the tests that use it)."""
    torch.set_num_threads(1)
    run = tmp_path_factory.mktemp("short") / "run"
    Trainer(tiny_cfg("steps=2", "val.every=0"), run, progress=False).train()
    return run


# ---------------------------------------------------------------------------------------------- schedules
def test_lr_schedule_warmup_cosine_and_constant():
    cfg = tiny_cfg("steps=20", "optim.warmup_steps=4", "optim.min_lr_ratio=0.1", "optim.schedule=cosine")
    assert [lr_factor(s, cfg) for s in range(4)] == [0.25, 0.5, 0.75, 1.0]
    assert lr_factor(4, cfg) == pytest.approx(1.0) and lr_factor(20, cfg) == pytest.approx(0.1)
    assert lr_factor(12, cfg) == pytest.approx(0.1 + 0.9 * 0.5)
    const = tiny_cfg("steps=20", "optim.warmup_steps=4", "optim.schedule=constant")
    assert lr_factor(19, const) == 1.0
    with pytest.raises(GGIKError, match="optim.schedule must be 'cosine' or 'constant'"):
        lr_factor(10, tiny_cfg("optim.schedule=linear"))


def test_beta_warmup():
    cfg = tiny_cfg("loss.beta=0.5", "loss.beta_warmup_steps=10").loss
    assert [beta_at(s, cfg) for s in (0, 5, 10, 50)] == [0.0, 0.25, 0.5, 0.5]
    assert beta_at(0, tiny_cfg("loss.beta_warmup_steps=0").loss) == 1.0


# ---------------------------------------------------------------------------------------------- resume
@pytest.mark.parametrize(
    "prior_gain, sampler, micro",
    [(0.0, "per-robot", 0), (100.0, "per-robot", 0), (0.0, "stacked", 0), (0.0, "stacked", 3)],
    ids=["elbo", "elbo+prior-distances", "elbo-stacked-sampler", "stacked-in-micro-batches"],
)
def test_resume_is_exact(tmp_path, prior_gain, sampler, micro):
    """2k steps in one run == k steps, resume, k more: same weights bit for bit, same metrics.

    The warm-up (8 steps) straddles the interruption at k = 6, so the scheduler state matters; the
    schedule is constant afterwards because a cosine schedule depends on ``steps``, which differs
    between the two halves of the interrupted run."""
    k = 6
    common = (
        "val.every=0",
        "checkpoint_every=1000",
        "log_every=5",
        "optim.schedule=constant",
        "optim.warmup_steps=8",
        f"loss.prior_gain={prior_gain}",
        f"data.sampler={sampler}",
        f"cpu_micro_batch={micro}",
        *(["data.random_weight=0", "data.goal_kinds={pose: 0.5, position: 0.5}"] if sampler == "stacked" else []),
    )
    one = Trainer(tiny_cfg(f"steps={2 * k}", *common), tmp_path / "one", progress=False)
    last_one = one.train()

    first = Trainer(tiny_cfg(f"steps={k}", *common), tmp_path / "two", progress=False)
    first.train()
    halfway = {n: t.clone() for n, t in first.model.state_dict().items()}
    assert load_checkpoint(tmp_path / "two" / "last.pt")["step"] == k
    second = Trainer.resume(tmp_path / "two", {"steps": 2 * k}, progress=False)
    assert second.step == k and second.examples == k * second.cfg.data.batch_size
    last_two = second.train()

    assert second.step == one.step == 2 * k
    assert_same_tensors(one.model.state_dict(), second.model.state_dict(), "model")
    assert any(not torch.equal(halfway[n], t) for n, t in second.model.state_dict().items()), "the second half trained"
    saved_one, saved_two = (load_checkpoint(tmp_path / run / "last.pt")["model"] for run in ("one", "two"))
    assert_same_tensors(saved_one, saved_two, "saved model")
    opt_one, opt_two = one.optimizer.state_dict()["state"], second.optimizer.state_dict()["state"]
    assert opt_one.keys() == opt_two.keys()
    for p in opt_one:
        assert_same_tensors(opt_one[p], opt_two[p], f"optimizer state {p}")

    assert deterministic(last_one) == deterministic(last_two) and last_one["step"] == 2 * k
    assert ("prior_dist_se" in last_one) == (prior_gain > 0)
    by_step_one = {r["step"]: deterministic(r) for r in read_metrics(tmp_path / "one")}
    by_step_two = {r["step"]: deterministic(r) for r in read_metrics(tmp_path / "two")}
    assert sorted(by_step_one) == [5, 10, 12] and sorted(by_step_two) == [5, 6, 10, 12]
    for step in (5, 10, 12):
        assert by_step_one[step] == by_step_two[step], f"metrics differ at step {step}"


def test_resume_refuses_a_new_architecture(short_run):
    with pytest.raises(GGIKError, match="cannot change the model architecture"):
        Trainer.resume(short_run, {"model": {"dim": 32}}, progress=False)


@pytest.mark.parametrize("schedule", ["constant", "cosine"])
def test_resume_trains_at_a_new_lr_and_weight_decay(short_run, tmp_path, schedule):
    """``--set optim.lr=... optim.weight_decay=...`` on resume: the optimiser steps with the new values (the saved
    optimiser and schedule states hold the old ones), as a run that had them from the start would at that step."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    over = {"steps": 6, "optim": {"lr": 4e-3, "weight_decay": 0.25, "schedule": schedule, "warmup_steps": 3}}
    resumed = Trainer.resume(run, over, progress=False)
    cfg = resumed.cfg
    for step in (2, 3, 4):
        assert resumed.step == step
        for group in resumed.optimizer.param_groups:
            assert group["lr"] == pytest.approx(4e-3 * lr_factor(step, cfg), rel=1e-12)
            assert group["weight_decay"] == 0.25
        resumed.train_step()
    assert resumed.scheduler.base_lrs == [4e-3] * len(resumed.optimizer.param_groups)


# ---------------------------------------------------------------------------------------------- learning
def test_tiny_model_overfits_one_batch():
    cfg = tiny_cfg()
    batch, _, _ = TrainingData(cfg.data).batch(0)
    batch = batch.to(dtype=torch.float32)
    torch.manual_seed(0)
    model = GGIKModel(cfg.model)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(250):  # the loss falls ~20x by then (76x by step 400)
        out = model(batch)
        rec = cfg.loss.anchor_gain * out["anchor_se"].mean() + cfg.loss.rec_gain * out["free_se"].mean()
        loss = rec + 0.01 * out["kl"].mean()  # a small beta: the latent may carry the answer
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    final = sum(losses[-10:]) / 10
    assert losses[0] / final >= 10, f"loss only fell from {losses[0]:.1f} to {final:.1f}"


# ---------------------------------------------------------------------------------------------- checkpoints
def test_checkpoint_contents(short_run):
    ckpt = load_checkpoint(short_run / "last.pt")
    assert ckpt["format"] == CHECKPOINT_FORMAT and ckpt["step"] == 2 and ckpt["world_size"] == 1
    assert ckpt["examples"] == 2 * tiny_cfg().data.batch_size
    assert len(ckpt["rng"]) == 1 and ckpt["ggik_version"]
    assert from_dict(TrainConfig, ckpt["config"]) == tiny_cfg("steps=2", "val.every=0")
    assert ckpt["training_robots"] == TrainingData(tiny_cfg().data).describe()
    assert from_dict(TrainConfig, load_yaml(short_run / "config.yaml")) == tiny_cfg("steps=2", "val.every=0")


def test_load_model_samples_like_the_trained_model(tmp_path):
    trainer = Trainer(tiny_cfg("steps=2", "val.every=0"), tmp_path, progress=False)
    trainer.train()
    model, ckpt = load_model(tmp_path / "last.pt")
    assert not model.training and ckpt["step"] == 2
    assert_same_tensors(model.state_dict(), trainer.model.state_dict(), "model")

    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    T = graph.robot.fk(graph.robot.sample_q(3, torch.Generator().manual_seed(1)))
    batch = GraphBatch.from_graph(graph, T_goal=T).to(dtype=torch.float32)
    trainer.model.eval()
    a = trainer.model.sample(batch, 4, generator=torch.Generator().manual_seed(5))
    b = model.sample(batch, 4, generator=torch.Generator().manual_seed(5))
    assert a.shape == (3, 4, 18, 3) and torch.equal(a, b)


@pytest.mark.parametrize(
    "kind, message",
    [
        ("truncated", "is not a readable ggik checkpoint \\(corrupt or truncated\\?\\)"),
        ("wrong-format", "incompatible checkpoint format 'ggik-problems/1'; this ggik .* reads 'ggik-checkpoint/1'"),
        ("not-a-dict", "incompatible checkpoint format 'list'"),
    ],
    ids=["truncated", "wrong-format", "not-a-dict"],
)
def test_bad_checkpoint_is_a_clear_error(kind, message, short_run, tmp_path, capsys):
    path = tmp_path / f"{kind}.pt"
    if kind == "truncated":
        data = (short_run / "last.pt").read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif kind == "wrong-format":
        torch.save({"format": "ggik-problems/1", "q": torch.zeros(2)}, path)
    else:
        torch.save([1, 2, 3], path)
    with pytest.raises(GGIKError, match=message):
        load_checkpoint(path)
    with pytest.raises(GGIKError, match=message):
        load_model(path)
    assert main(["info", str(path)]) == 2
    assert "ggik: error:" in capsys.readouterr().err


def test_checkpoint_of_another_architecture_is_a_clear_error(short_run, tmp_path):
    ckpt = load_checkpoint(short_run / "last.pt")
    ckpt["config"]["model"]["dim"] = 24
    torch.save(ckpt, tmp_path / "other.pt")
    with pytest.raises(GGIKError, match="does not match this ggik version's model"):
        load_model(tmp_path / "other.pt")


def test_missing_checkpoint(tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        load_checkpoint(tmp_path / "last.pt")
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        load_model(tmp_path / "last.pt")
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        Trainer.resume(tmp_path, progress=False)


def test_interrupted_save_keeps_the_old_checkpoint(tmp_path, monkeypatch):
    trainer = Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path, progress=False)
    trainer.train()
    last = tmp_path / "last.pt"
    old = last.read_bytes()
    trainer.train_step()
    real_save = torch.save

    def dies_halfway(obj, f, *args, **kwargs):
        f.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", dies_halfway)
    with pytest.raises(OSError, match="disk full"):
        trainer.save()
    assert last.read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.yaml", "last.pt", "metrics.jsonl"], (
        "no temporary file left"
    )
    assert load_checkpoint(last)["step"] == 1

    monkeypatch.setattr(torch, "save", real_save)
    trainer.save()
    assert load_checkpoint(last)["step"] == 2


# ---------------------------------------------------------------------------------------------- metrics
def test_metrics_records_with_validation(tmp_path):
    cfg = tiny_cfg("steps=4", "log_every=2", "val.every=2", "val.problems_per_robot=2", "val.samples=2")
    Trainer(cfg, tmp_path, progress=False).train()
    records = read_metrics(tmp_path)
    train = [r for r in records if r["kind"] == "train"]
    val = [r for r in records if r["kind"] == "val"]
    assert [r["step"] for r in train] == [2, 4] and [r["step"] for r in val] == [2, 4]
    for r in train:
        assert r.keys() >= TRAIN_KEYS, f"missing {TRAIN_KEYS - r.keys()}"
        assert r["examples"] == r["step"] * cfg.data.batch_size
        assert r["lr"] > 0 and r["examples_per_s"] > 0 and r["wall_s"] > 0
        assert all(isinstance(r[k], float) and r[k] == r[k] for k in ("loss", "anchor_se", "free_se", "kl"))
    for r in val:
        assert 0.0 <= r["val/panda/success"] <= 1.0
        assert 0.0 <= r["val/success_mean"] <= 1.0
        assert r["val/panda/pos_err_best_m"] <= r["val/panda/pos_err_mean_m"]
        assert r["val/panda/free_se"] > 0
    problems = ProblemSet.load(tmp_path / "val_problems.pt")
    assert len(problems) == 2 and problems.seed == cfg.val.seed


def test_validation_records_the_share_of_samples_with_the_arms_handedness(monkeypatch):
    """Robots with skew links (mirror images) get ``right_handed``, the share of their raw samples with the arm's
    handedness, and the mean over those robots; robots without skew links do not. The samples are made here, in a known
    share: realizations of each problem's own configuration (the arm) and, for the first k of a robot's 3 x 4 samples,
    their mirror images x -> -x (every link volume negated: a chiral arm's never)."""
    cfg = tiny_cfg("val.problems_per_robot=3", "val.samples=4", "data.robots={panda: 1.0, irb140: 1.0, ur10: 1.0}")
    groups = validation_groups(validation_problems(cfg), cfg.model.graph)
    mirrored = {"panda": 3, "irb140": 8, "ur10": 5}  # of 12 samples each; the UR10 has no skew link

    def samples(model, graph, goals, S, generator=None, **kwargs):
        ((q,),) = [(q,) for _, g, q, _ in groups if g is graph]
        P = q.shape[0]
        X = graph.realize(q)[:, None].repeat(1, S, 1, 1)  # (P, S, N, 3)
        flip = (torch.arange(P * S) < mirrored[graph.robot.name]).view(P, S)
        X[flip] = X[flip] * torch.tensor([-1.0, 1.0, 1.0], dtype=X.dtype)
        zero = torch.zeros(P, S, dtype=X.dtype)
        return RawSamples(q=q[:, None].repeat(1, S, 1), pos_err=zero, rot_err=zero, points=X)

    monkeypatch.setattr("ggik.training.validation.sample_joint_angles", samples)
    record = validate(GGIKModel(cfg.model), groups, cfg, torch.device("cpu"))
    assert record["val/panda/right_handed"] == pytest.approx(9 / 12, abs=1e-7)  # a float32 mean
    assert record["val/irb140/right_handed"] == pytest.approx(4 / 12, abs=1e-7)
    assert record["val/right_handed_mean"] == pytest.approx((9 / 12 + 4 / 12) / 2, abs=1e-7)
    assert "val/ur10/right_handed" not in record and record["val/ur10/success"] == 1.0


#: two steps, validated at the second on 2 problems per robot, pose and position goals
VALIDATED_KINDS = (
    "steps=2",
    "log_every=1",
    "val.every=2",
    "val.problems_per_robot=2",
    "val.samples=2",
    "data.goal_kinds={pose: 0.6, position: 0.4}",
    "val.goal_kinds=[pose, position]",
)


def test_training_on_mixed_goal_kinds_validates_each_kind(tmp_path, capsys):
    cfg = tiny_cfg(*VALIDATED_KINDS)
    Trainer(cfg, tmp_path, progress=False).train()
    assert re.search(r"step 2: val success pose \d\.\d{3}, position \d\.\d{3}", capsys.readouterr().out)
    (val,) = [r for r in read_metrics(tmp_path) if r["kind"] == "val"]
    for key in ("", "position/"):
        assert 0.0 <= val[f"val/panda/{key}success"] <= 1.0 and 0.0 <= val[f"val/{key}success_mean"] <= 1.0
        assert val[f"val/panda/{key}pos_err_best_m"] <= val[f"val/panda/{key}pos_err_mean_m"]
    # q_n is free for a position goal: the posterior reconstructs one more node than for a pose
    assert val["val/panda/position/free_se"] != val["val/panda/free_se"]
    assert load_checkpoint(tmp_path / "last.pt")["training_robots"]["goal_kinds"] == {"pose": 0.6, "position": 0.4}


@pytest.mark.parametrize(
    "kinds, message", [("[]", "at least one goal kind"), ("[pose, roll]", "goal kind must be one of")]
)
def test_bad_validation_goal_kinds_are_a_clear_error(kinds, message, tmp_path):
    with pytest.raises(GGIKError, match=message):
        Trainer(tiny_cfg(f"val.goal_kinds={kinds}"), tmp_path, progress=False)


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_train_info_and_resume(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["train", "--config", str(TINY), "--out", str(run), "--no-progress", "--set", "steps=4"]) == 0
    out = capsys.readouterr().out
    assert f"run dir: {run}" in out and "stopped at step 4" in out
    assert load_checkpoint(run / "last.pt")["step"] == 4

    assert main(["info", str(run / "last.pt")]) == 0
    info = capsys.readouterr().out
    params = GGIKModel(tiny_cfg().model).num_parameters()
    assert f"parameters {params:,}" in info and "step 4," in info and "processes 1" in info

    assert main(["train", "--resume", str(run), "--no-progress", "--set", "steps=6"]) == 0
    assert "stopped at step 6" in capsys.readouterr().out
    assert load_checkpoint(run / "last.pt")["step"] == 6


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--resume", "{tmp}/empty", "--no-progress"], "checkpoint not found"),
        (["train", "--resume", "{tmp}/empty", "--config", str(TINY)], "--resume continues a run with its own config"),
        (
            ["train", "--config", str(TINY), "--out", "{tmp}", "--set", "steps=notanumber"],
            "config.steps: expected an integer",
        ),
        (["train", "--config", str(TINY), "--out", "{tmp}", "--set", "optim.lrr=1"], "unknown key(s) ['lrr']"),
    ],
    ids=["resume-without-checkpoint", "resume-with-config", "bad-value", "unknown-key"],
)
def test_cli_train_errors_are_clean(argv, message, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ggik: error:") and message in err


def test_cli_train_refuses_to_overwrite_a_run(short_run, capsys):
    assert main(["train", "--config", str(TINY), "--out", str(short_run), "--no-progress"]) == 2
    assert "already holds a run" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- DDP
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_ddp_two_processes(tmp_path):
    run = tmp_path / "ddp"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(_free_port()),
        "-m",
        "ggik.cli",
        "train",
        "--config",
        str(TINY),
        "--out",
        str(run),
        "--no-progress",
        "--set",
        "steps=4",
        "--set",
        "checkpoint_every=2",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, f"DDP run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    assert "terminate called" not in proc.stderr, "a rank aborted at exit (process group not torn down)"
    ckpt = load_checkpoint(run / "last.pt")
    assert ckpt["world_size"] == 2 and len(ckpt["rng"]) == 2 and ckpt["step"] == 4
    assert ckpt["examples"] == 4 * 2 * tiny_cfg().data.batch_size
    assert not torch.equal(ckpt["rng"][0], ckpt["rng"][1]), "each process has its own noise"
    assert [r["step"] for r in read_metrics(run)] == [4], "only rank 0 writes metrics"
    assert proc.stdout.count("stopped at step 4") == 1, "only rank 0 prints"
    with pytest.raises(GGIKError, match="written by 2 processes, resuming with 1"):
        Trainer.resume(run, progress=False)


# ---------------------------------------------------------------------------------------------- wandb
class _ImportSpy(importlib.abc.MetaPathFinder):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def find_spec(self, name, path=None, target=None):
        if name == "wandb" or name.startswith("wandb."):
            self.seen.append(name)
        return None


def test_disabled_wandb_is_never_imported(tmp_path, monkeypatch):
    # wandb (and its submodules) out of sys.modules for this test, whatever ran before: an import would have to go
    # through the finders, where the spy sees it (monkeypatch puts the modules back afterwards)
    for name in [m for m in sys.modules if m == "wandb" or m.startswith("wandb.")]:
        monkeypatch.delitem(sys.modules, name)
    spy = _ImportSpy()
    monkeypatch.setattr(sys, "meta_path", [spy] + sys.meta_path)
    Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path, wandb="disabled", progress=False).train()
    assert "wandb" not in sys.modules
    assert spy.seen == [], f"wandb import attempted: {spy.seen}"
    importlib.util.find_spec("wandb")  # the control: a lookup of wandb does reach the spy
    assert spy.seen == ["wandb"]


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed here")
def test_wandb_requested_but_missing_is_a_clear_error(tmp_path):
    with pytest.raises(GGIKError, match=r"wandb is not installed: pip install 'ggik\[wandb\]'"):
        Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path, wandb="offline", progress=False).train()
    assert not (tmp_path / "last.pt").exists()


def test_unknown_wandb_mode_is_an_error(tmp_path):
    with pytest.raises(GGIKError, match="--wandb must be disabled, offline or online, got 'sometimes'"):
        Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path, wandb="sometimes", progress=False).train()


def test_sigterm_finishes_the_step_checkpoints_and_resumes(tmp_path):
    """A preempted job (SIGTERM) stops cleanly with a checkpoint, from which --resume continues."""
    import os
    import signal

    cfg = from_dict(TrainConfig, {**load_yaml("train/configs/tiny.yaml"), "steps": 50, "checkpoint_every": 1000})
    trainer = Trainer(cfg, tmp_path / "run", progress=False)
    original = trainer._train_step_tensors

    def step_then_signal():
        out = original()
        if trainer.step == 3:
            os.kill(os.getpid(), signal.SIGTERM)
        return out

    trainer._train_step_tensors = step_then_signal
    trainer.train()
    assert trainer.step == 3
    ckpt = load_checkpoint(tmp_path / "run" / "last.pt")
    assert ckpt["step"] == 3
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, "the handler is restored after training"
    resumed = Trainer.resume(tmp_path / "run", {"steps": 5}, progress=False)
    resumed.train()
    assert resumed.step == 5


def test_resume_drops_metrics_written_after_the_checkpoint(tmp_path):
    cfg = from_dict(TrainConfig, {**load_yaml("train/configs/tiny.yaml"), "steps": 6, "log_every": 1})
    Trainer(cfg, tmp_path / "run", progress=False).train()
    metrics = tmp_path / "run" / "metrics.jsonl"
    # Simulate a crash: records of steps 7 and 8 exist, the checkpoint is at step 6.
    with open(metrics, "a") as f:
        f.write(json.dumps({"kind": "train", "step": 7}) + "\n" + json.dumps({"kind": "train", "step": 8}) + "\n")
    trainer = Trainer.resume(tmp_path / "run", {"steps": 8}, progress=False)
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6]
    trainer.train()
    steps = [json.loads(line)["step"] for line in metrics.read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6, 7, 8]


# ---------------------------------------------------------------------------------------------- --init (fine-tuning)
def test_init_from_takes_the_weights_only_and_records_the_source(short_run, tmp_path):
    source = load_checkpoint(short_run / "last.pt")
    run = tmp_path / "ft"
    trainer = Trainer(
        tiny_cfg("steps=1", "val.every=0", "data.random_weight=0", "data.robots={kuka_lwr: 1.0}"), run, progress=False
    )
    info = trainer.init_from(short_run / "last.pt")
    assert info == {
        "path": str(short_run / "last.pt"),
        "format": CHECKPOINT_FORMAT,
        "step": 2,
        "examples": 2 * tiny_cfg().data.batch_size,
        "ggik_version": source["ggik_version"],
    }
    assert_same_tensors(trainer.model.state_dict(), source["model"], "weights after init")
    assert trainer.step == 0 and trainer.examples == 0
    assert (
        trainer.optimizer.state_dict()["state"] == {} and trainer.scheduler.last_epoch == 0
    )  # fresh optimiser, schedule
    trainer.train()
    ckpt = load_checkpoint(run / "last.pt")
    assert ckpt["step"] == 1 and ckpt["examples"] == tiny_cfg().data.batch_size and ckpt["init_from"] == info
    # the fine-tuned weights have seen the source's robots (panda, random 5/6-DOF) and the new one
    assert ckpt["training_robots"]["named"] == {"panda": 1.0, "kuka_lwr": 1.0}
    assert ckpt["training_robots"]["random"] == {"weight": 0.5, "dofs": [5, 6]}
    records = read_metrics(run)
    assert records[0] == {"kind": "init", "step": 0, "examples": 0, "init_from": info}
    assert [r["kind"] for r in records[1:]] == ["train"]
    # a resumed fine-tuning run keeps its source; a fresh run has none
    resumed = Trainer.resume(run, {"steps": 2}, progress=False)
    assert resumed.init_source == info
    resumed.train()
    assert load_checkpoint(run / "last.pt")["init_from"] == info and read_metrics(run)[0]["kind"] == "init"
    assert load_checkpoint(short_run / "last.pt")["init_from"] is None


def test_resume_with_another_data_mix_keeps_what_the_weights_saw(short_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    trainer = Trainer.resume(
        run,
        {
            "steps": 3,
            "data": {
                "robots": {"panda": 0.0, "ur10": 1.0},
                "random_weight": 0.0,
                "randomized_weight": 0.5,
                "randomize_fraction": 0.3,
            },
        },
        progress=False,
    )
    trainer.train()
    seen = load_checkpoint(run / "last.pt")["training_robots"]
    assert seen == {
        "named": {"panda": 1.0, "ur10": 1.0},
        "random": {"weight": 0.5, "dofs": [5, 6]},
        "randomized": {"weight": 0.5, "fraction": 0.3},
        "goal_kinds": tiny_cfg().data.goal_kinds,
    }


def test_merge_training_sets_rules():
    a = {
        "named": {"panda": 1.0, "ur10": 0.0},
        "random": {"weight": 0.0, "dofs": [9]},
        "randomized": {"weight": 1.0, "fraction": 0.4},
    }
    b = {
        "named": {"ur10": 0.0, "irb140": 2.0},
        "random": {"weight": 2.0, "dofs": [7, 6]},
        "randomized": {"weight": 1.0, "fraction": 0.2},
    }
    assert merge_training_sets(a, b) == {
        "named": {"panda": 1.0, "ur10": 0.0, "irb140": 2.0},
        "random": {"weight": 2.0, "dofs": [6, 7]},  # DOF 9 had weight 0: never drawn
        "randomized": {"weight": 1.0, "fraction": 0.4},
        "goal_kinds": {"pose": 1.0},
    }  # neither names goal kinds: trained on poses
    none = {
        "named": {},
        "random": {"weight": 0.0, "dofs": [6]},
        "randomized": {"weight": 0.0, "fraction": 0.2},
        "goal_kinds": {"pose": 1.0},
    }
    assert merge_training_sets(none, none) == none
    assert merge_training_sets(b, b) == {**b, "random": {"weight": 2.0, "dofs": [6, 7]}, "goal_kinds": {"pose": 1.0}}
    mixed = {**b, "goal_kinds": {"pose": 0.5, "position": 0.3}}
    assert merge_training_sets(a, mixed)["goal_kinds"] == {"pose": 1.0, "position": 0.3}


def test_init_from_a_weights_only_export(short_run, tmp_path):
    import ggik.checkpoint as export  # not importorskip: a broken export module must fail this test, not skip it

    light = tmp_path / "weights.pt"
    export.export_checkpoint(short_run / "last.pt", light)
    trainer = Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path / "ft", progress=False)
    info = trainer.init_from(light)
    assert info["format"] == load_checkpoint(light)["format"] and info["step"] == 2
    assert_same_tensors(trainer.model.state_dict(), load_checkpoint(light)["model"], "weights from the export")


def test_init_from_refuses_another_architecture_and_a_started_run(short_run, tmp_path):
    with pytest.raises(GGIKError, match=r"architecture differs \(model.dim: 8 here, 16 in the checkpoint\)"):
        Trainer(tiny_cfg("model.dim=8"), tmp_path / "a", progress=False).init_from(short_run / "last.pt")
    trainer = Trainer(tiny_cfg("steps=1", "val.every=0"), tmp_path / "b", progress=False)
    trainer.train()
    with pytest.raises(GGIKError, match="starts a new run"):
        trainer.init_from(short_run / "last.pt")


def test_cli_train_init_takes_the_model_config_of_the_checkpoint(short_run, tmp_path, capsys):
    run = tmp_path / "ft"
    argv = [
        "train",
        "--init",
        str(short_run / "last.pt"),
        "--out",
        str(run),
        "--no-progress",
        "--set",
        "steps=1",
        "--set",
        "data.robots={kuka_lwr: 1.0}",
        "--set",
        "data.batch_size=4",
    ]
    assert main(argv) == 0
    assert "initialised from" in capsys.readouterr().out
    ckpt = load_checkpoint(run / "last.pt")
    assert ckpt["config"]["model"] == load_checkpoint(short_run / "last.pt")["config"]["model"]  # not the default model
    assert (
        ckpt["training_robots"]["named"] == {"panda": 1.0, "kuka_lwr": 1.0} and ckpt["init_from"]["step"] == 2
    )  # source + new
    assert main(["info", str(run / "last.pt")]) == 0
    assert "initialised from" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--set", "model.dim=8"], "the model architecture differs (model.dim: 8 here, 16 in the checkpoint)"),
        (["--resume", "{run}"], "--init starts a new run from a checkpoint's weights, --resume continues a run"),
        (
            ["--config", str(REPO / "train" / "configs" / "default.yaml"), "--set", "model.latent=3"],
            "model.latent: 3 here",
        ),
    ],
    ids=["other-architecture", "with-resume", "config-and-set"],
)
def test_cli_train_init_errors(extra, message, short_run, tmp_path, capsys):
    argv = ["train", "--init", str(short_run / "last.pt"), "--out", str(tmp_path / "x"), "--no-progress"]
    assert main(argv + [a.replace("{run}", str(short_run)) for a in extra]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x" / "last.pt").exists()


def test_cpu_time_is_tracked_and_survives_resume(tmp_path):
    common = ("val.every=0", "checkpoint_every=1000", "log_every=1")
    first = Trainer(tiny_cfg("steps=2", *common), tmp_path, progress=False)
    first.train()
    saved = load_checkpoint(tmp_path / "last.pt")
    assert saved["cpu_s"] > 0 and saved["cpu_untracked_wall_s"] == 0.0
    second = Trainer.resume(tmp_path, {"steps": 4}, progress=False)
    assert second.cpu_s == saved["cpu_s"]
    second.train()
    assert load_checkpoint(tmp_path / "last.pt")["cpu_s"] > saved["cpu_s"]
    assert read_metrics(tmp_path)[-1]["cpu_s"] > saved["cpu_s"]


def test_checkpoint_from_before_cpu_tracking_counts_its_wall_time_as_untracked(tmp_path):
    Trainer(tiny_cfg("steps=2", "val.every=0"), tmp_path, progress=False).train()
    ckpt = load_checkpoint(tmp_path / "last.pt")
    del ckpt["cpu_s"], ckpt["cpu_untracked_wall_s"]
    torch.save(ckpt, tmp_path / "last.pt")
    resumed = Trainer.resume(tmp_path, {"steps": 3}, progress=False)
    assert resumed.cpu_s == 0.0 and resumed.cpu_untracked_wall_s == ckpt["wall_s"] > 0


def test_a_non_finite_prior_distance_term_is_named_in_the_error(tmp_path):
    trainer = Trainer(tiny_cfg("steps=1", "val.every=0", "loss.prior_gain=1.0"), tmp_path, progress=False)
    forward = trainer.model.forward

    def broken(*args, **kwargs):
        out = forward(*args, **kwargs)
        out["prior_dist_se"] = out["prior_dist_se"] * float("inf")
        return out

    trainer.model.forward = broken
    with pytest.raises(GGIKError, match=r"non-finite loss at step 0 .*prior_dist_se inf"):
        trainer.train_step()


def test_a_canonical_run_with_random_robots_stacked_validates_each_family_of_unseen_robots(tmp_path, capsys):
    cfg = tiny_cfg(
        *VALIDATED_KINDS,
        "model.graph=canonical",
        "data.sampler=stacked",
        "data.random_weight=1.0",
        "data.randomized_weight=1.0",
        "data.random_robots_per_batch=2",
        "data.tool_offset=0.1",
        "val.random_robots=2",
        "val.randomized_robots=2",
        "val.reframed_robots=1",
    )
    Trainer(cfg, tmp_path, progress=False).train()
    names = [robot_from_entry(e).name for e in ProblemSet.load(tmp_path / "val_problems.pt").robots]
    assert names == [
        "panda",
        "val_random0",
        "val_random1",
        "val_randomized_0_panda",
        "val_randomized_1_panda",
        "val_reframed_0_panda",
    ]
    assert [family(n) for n in names] == ["named", "random", "random", "randomized", "randomized", "reframed"]
    (val,) = [r for r in read_metrics(tmp_path) if r["kind"] == "val"]
    for fam, members in {"named": ["panda"], "random": names[1:3], "randomized": names[3:5]}.items():
        want = sum(val[f"val/{n}/success"] for n in members) / len(members)
        assert val[f"val/family/{fam}/success_mean"] == pytest.approx(want)
    assert val["val/family/reframed/success_mean"] == val["val/val_reframed_0_panda/success"]
    assert re.search(r"family/random \d\.\d{3}, family/randomized", capsys.readouterr().out)
    with pytest.raises(GGIKError, match="robot counts must be >= 0"):
        validation_problems(tiny_cfg("val.reframed_robots=-1"))
    with pytest.raises(GGIKError, match="randomize_fraction in"):
        validation_problems(tiny_cfg("val.randomized_robots=1", "val.randomize_fraction=1.0"))
    with pytest.raises(GGIKError, match="need training robots"):
        validation_problems(tiny_cfg("data.robots={}", "data.random_weight=1.0", "val.reframed_robots=1"))


def test_validation_on_the_papers_protocol_draws_its_goals_and_keeps_both_sets(short_run, tmp_path):
    """``val.protocol=paper``: the goals of ``ggik eval paper --seed val.seed`` (q in [-pi, pi], last joint 0, limits
    ignored), FK-consistent, per arm as that table draws them; a resumed run that switches protocol keeps the old set
    beside the new one and validates on the new."""
    from ggik.evaluation.tables import EvalConfig, evaluation_problems

    cfg = tiny_cfg("data.robots={panda: 1.0, ur10: 1.0}", "val.protocol=paper", "val.problems_per_robot=6")
    problems = validation_problems(cfg)
    want = evaluation_problems(
        [Robot.from_name("panda"), Robot.from_name("ur10")], EvalConfig(problems=6, seed=cfg.val.seed, protocol="paper")
    )
    for (robot, q, T), (want_robot, want_q, want_T) in zip(problems.groups(), want):
        assert robot.name == want_robot.name and torch.equal(q, want_q) and torch.equal(T, want_T)
        assert torch.all(q[:, -1] == 0) and torch.all(q.abs() <= torch.pi)
        torch.testing.assert_close(robot.fk(q), T, rtol=0, atol=1e-9)
    panda_q = problems.groups()[0][1]
    assert not bool(Robot.from_name("panda").within_limits(panda_q).all()), "the paper's goals ignore the limits"
    with pytest.raises(GGIKError, match="val.protocol must be 'ours' or 'paper'"):
        validation_problems(tiny_cfg("val.protocol=theirs"))

    run = tmp_path / "run"
    shutil.copytree(short_run, run)
    ours = Trainer.resume(run, {"val": {"problems_per_robot": 4}}, progress=False).validation_set()
    assert (run / "val_problems.pt").is_file() and bool(Robot.from_name("panda").within_limits(ours.q).all())
    resumed = Trainer.resume(run, {"val": {"protocol": "paper", "problems_per_robot": 4}}, progress=False)
    paper = resumed.validation_set()
    assert resumed.validate()["val/protocol"] == "paper"
    assert (run / "val_problems_paper.pt").is_file() and torch.all(paper.q[:, -1] == 0)
    assert not torch.equal(paper.q, ours.q)
    assert torch.equal(ProblemSet.load(run / "val_problems.pt").q, ours.q), "the first protocol's set is kept"
    assert torch.equal(Trainer.resume(run, progress=False).validation_set().q, ours.q), "and used again by 'ours'"
