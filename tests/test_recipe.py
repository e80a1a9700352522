"""The training options the recipe study (benchmarks/recipe) varies: CPU budgets that survive a resume, the rec_gain
schedule, KL free bits, and the weight transfer of a partial initialisation."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from ggik.checkpoint import load_checkpoint
from ggik.errors import GGIKError
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.training.config import LossConfig, TrainConfig
from ggik.training.objective import step_objective
from ggik.training.schedules import beta_at, rec_gain_at
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict

#: a model and batch small enough for a test, trained on panda
TINY = {
    "model": {"dim": 8, "hidden": 16, "enc_layers": 1, "dec_layers": 2, "latent": 4, "prior_components": 2},
    "data": {"batch_size": 8, "robots": {"panda": 1.0}},
    "val": {"every": 0},
    "bf16": False,
}


def test_rec_gain_schedule_rises_geometrically_then_stays():
    assert rec_gain_at(123, LossConfig(rec_gain=1000.0)) == 1000.0
    cfg = LossConfig(rec_gain=100.0, rec_gain_final=10000.0, rec_gain_steps=100)
    assert rec_gain_at(0, cfg) == pytest.approx(100.0)
    assert rec_gain_at(50, cfg) == pytest.approx(1000.0)
    assert rec_gain_at(100, cfg) == rec_gain_at(1000, cfg) == pytest.approx(10000.0)
    values = [rec_gain_at(s, cfg) for s in range(0, 101, 10)]
    assert all(b > a for a, b in zip(values, values[1:]))
    with pytest.raises(GGIKError, match="rec_gain must be > 0"):
        rec_gain_at(0, LossConfig(rec_gain=0.0, rec_gain_final=10.0))


def test_free_bits_remove_the_kl_gradient_below_the_threshold(tmp_path):
    """With ``kl_free_nats`` F the loss's gradient with respect to each graph's KL is beta / B where that KL is above F
    and exactly 0 below it; with F above every KL the prior network (which the loss reaches through the KL alone)
    gets no gradient at all, and without free bits (F = 0) it does."""
    torch.set_num_threads(1)
    cfg = from_dict(TrainConfig, {**TINY, "loss": {"beta_warmup_steps": 0}})
    trainer = Trainer(cfg, tmp_path, progress=False)
    model = trainer.model.train()
    batch = trainer.data.examples(0, 0, trainer.device).to(trainer.device, torch.float32)
    out = model(batch)
    kl = out["kl"]
    kl.retain_grad()
    B, beta = kl.numel(), beta_at(0, cfg.loss)
    low, high = kl.detach().sort().values[B // 2 - 1 : B // 2 + 1].tolist()
    assert beta > 0 and B >= 4 and low < high
    middle = (low + high) / 2  # half of the graphs' KLs below it, half above
    for free in (0.0, middle, 1e6):
        model.zero_grad(set_to_none=True)
        kl.grad = None
        stats = step_objective(out, 0, replace(cfg.loss, kl_free_nats=free))
        stats["loss"].backward(retain_graph=True)
        above = kl.detach() > free if free > 0 else torch.ones(B, dtype=torch.bool)  # F = 0: free bits off
        torch.testing.assert_close(kl.grad, beta / B * above.float(), rtol=1e-6, atol=0)
        prior = [p.grad for p in model.prior.parameters()]
        prior_norm = sum(g.abs().sum().item() for g in prior if g is not None)
        if free == 1e6:
            assert prior_norm == 0.0, "free bits above every KL: the prior must get no gradient"
            # the KL term is then the constant beta F: the loss less the reconstruction terms
            terms = {k: v.detach() for k, v in stats.items()}
            rest = terms["loss"] - cfg.loss.rec_gain * terms["free_se"] - cfg.loss.anchor_gain * terms["anchor_se"]
            assert rest.item() == pytest.approx(beta * free, rel=1e-6)
        else:
            assert prior_norm > 0.0


def test_cpu_budget_stops_training_and_a_resume_continues_to_a_larger_budget(tmp_path):
    torch.set_num_threads(1)
    run = tmp_path / "run"
    cfg = from_dict(TrainConfig, {**TINY, "steps": 10_000_000, "checkpoint_every": 100, "val": {"every": 0}})
    first = Trainer(cfg, run, progress=False)
    first.train(max_cpu_minutes=0.02)
    assert first.cpu_s >= 0.02 * 60 and first.step > 0
    again = Trainer.resume(run, progress=False)
    again.train(max_cpu_minutes=0.02)
    assert again.step == first.step  # at its budget: nothing more
    more = Trainer.resume(run, progress=False)
    more.train(max_cpu_minutes=0.04)
    assert more.step > first.step and more.cpu_s >= 0.04 * 60
    assert load_checkpoint(run / "last.pt")["step"] == more.step


def test_cli_train_stops_at_a_cpu_budget(tmp_path, capsys):
    from pathlib import Path

    from ggik.cli import main

    tiny = Path(__file__).resolve().parents[1] / "train" / "configs" / "tiny.yaml"
    run = tmp_path / "run"
    assert (
        main(
            [
                "train",
                "--config",
                str(tiny),
                "--set",
                "steps=1000000",
                "--out",
                str(run),
                "--max-cpu-minutes",
                "0.01",
                "--no-progress",
            ]
        )
        == 0
    )
    ckpt = load_checkpoint(run / "last.pt")
    assert 0 < ckpt["step"] < 1_000_000 and ckpt["cpu_s"] >= 0.6


def test_transfer_weights_copies_widens_and_leaves_the_rest_fresh():
    from ggik.checkpoint import transfer_weights

    torch.manual_seed(0)
    tiny = dict(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2, gn_steps=0)
    small = GGIKModel(ModelConfig(**tiny, residual_inputs=False))
    big = GGIKModel(ModelConfig(**tiny, residual_inputs=True))
    source = {**small.state_dict(), "not.in.model": torch.zeros(3)}
    report = transfer_weights(big, source)
    assert report["dropped"] == ["not.in.model"]
    assert {n for n in report["widened"]} == {f"decoder.layers.{k}.lin_edge.weight" for k in range(2)}
    assert all("grad_coef" in n for n in report["fresh"]) and report["fresh"]
    state = big.state_dict()
    for name in report["copied"]:
        assert torch.equal(state[name], source[name])
    for name in report["widened"]:
        old = source[name]
        assert torch.equal(state[name][:, : old.shape[1]], old) and not state[name][:, old.shape[1] :].any()
    # with the residual column zero and the residual step's gain tiny, the widened model starts as the old function
    for name in report["fresh"]:
        state[name].zero_()
    big.load_state_dict(state)
    gen = torch.Generator().manual_seed(1)
    from ggik import Robot, RobotGraph
    from ggik.graph.batch import GraphBatch

    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    batch = GraphBatch.from_graph(graph, q=graph.robot.sample_q(3, gen)).to("cpu", torch.float32)
    torch.manual_seed(2)
    a = small.eval()(batch)["x"]
    torch.manual_seed(2)
    b = big.eval()(batch)["x"]
    assert torch.allclose(a, b, atol=1e-5)


def test_cli_partial_init_takes_what_fits(tmp_path, capsys):
    from pathlib import Path

    from ggik.cli import main

    tiny = Path(__file__).resolve().parents[1] / "train" / "configs" / "tiny.yaml"
    reference = ["--set", "model.residual_inputs=false", "--set", "model.gn_steps=0"]  # the options off
    main(
        ["train", "--config", str(tiny), "--set", "steps=2", *reference, "--out", str(tmp_path / "a"), "--no-progress"]
    )
    assert (
        main(
            [
                "train",
                "--config",
                str(tiny),
                "--set",
                "steps=2",
                "--init",
                str(tmp_path / "a" / "last.pt"),
                "--set",
                "model.residual_inputs=true",
                "--out",
                str(tmp_path / "b"),
                "--no-progress",
            ]
        )
        != 0
    )
    assert "architecture differs" in capsys.readouterr().err
    assert (
        main(
            [
                "train",
                "--config",
                str(tiny),
                "--set",
                "steps=2",
                "--init",
                str(tmp_path / "a" / "last.pt"),
                "--init-partial",
                "--set",
                "model.residual_inputs=true",
                "--set",
                "model.gn_steps=0",
                "--out",
                str(tmp_path / "c"),
                "--no-progress",
            ]
        )
        == 0
    )
    assert "partial initialisation" in capsys.readouterr().out
    ckpt = load_checkpoint(tmp_path / "c" / "last.pt")
    assert ckpt["config"]["model"]["residual_inputs"] is True and ckpt["init_from"]["transfer"]["widened"] == 2
