"""The recipe benchmark (ggik.evaluation.recipe) and the training options it varies: CPU budgets that survive a
resume, the rec_gain schedule, KL free bits, the variant registry and the merged result table."""
from __future__ import annotations

import json
import math

import pytest
import torch

from ggik.checkpoint import load_checkpoint
from ggik.errors import GGIKError
from ggik.evaluation.recipe import COLUMNS, PROTOCOLS, VARIANTS, recipe_rows, retime_rows, train_variant, variant_config, write_recipe_table
from ggik.evaluation.report import read_csv
from ggik.evaluation.tables import EvalConfig
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.training.config import LossConfig, TrainConfig
from ggik.training.schedules import rec_gain_at
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict

#: a model and batch small enough for a test; the recipe's own settings otherwise
TINY = {"model": {"dim": 8, "hidden": 16, "enc_layers": 1, "dec_layers": 2, "latent": 4, "prior_components": 2},
        "data": {"batch_size": 8}, "bf16": False}


def test_every_variant_builds_a_model_and_differs_from_the_base_only_where_it_says():
    base = variant_config("baseline", "panda")
    for name, extra in VARIANTS.items():
        cfg = from_dict(TrainConfig, variant_config(name, "panda"))
        GGIKModel(ModelConfig(**{**cfg.model.__dict__, "dim": 8, "hidden": 16, "latent": 2, "prior_components": 2}))
        for section, values in extra.items():
            if not isinstance(values, dict):  # a top-level key such as the seed
                assert variant_config(name, "panda")[section] == values
                continue
            for key, value in values.items():
                assert variant_config(name, "panda")[section][key] == value
        if not extra:
            assert variant_config(name, "panda") == base
    for protocol, (data, robots) in PROTOCOLS.items():
        assert variant_config("baseline", protocol)["data"]["robots"] == data["robots"] and robots


@pytest.mark.parametrize("variant, protocol, message", [("nope", "panda", "unknown variant"), ("baseline", "nope", "unknown protocol")])
def test_unknown_names_are_clear_errors(variant, protocol, message):
    with pytest.raises(ValueError, match=message):
        variant_config(variant, protocol)


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
    torch.set_num_threads(1)
    cfgs = {free: from_dict(TrainConfig, variant_config("baseline", "panda", {**TINY, "loss": {"kl_free_nats": free, "beta_warmup_steps": 0}}))
            for free in (0.0, 1e6)}
    for free, cfg in cfgs.items():
        stats = Trainer(cfg, tmp_path / str(free), progress=False).train_step()
        kl_term = stats["loss"] - cfg.loss.rec_gain * stats["free_se"] - cfg.loss.anchor_gain * stats["anchor_se"]
        # beta = 1 from the start: the KL term is the mean KL, or the free nats where every graph's KL is below them
        assert kl_term == pytest.approx(stats["kl"] if free == 0.0 else free, rel=1e-4, abs=1e-2)


def test_cpu_budget_stops_training_and_a_resume_continues_to_a_larger_budget(tmp_path):
    torch.set_num_threads(1)
    run = tmp_path / "run"
    first = train_variant(run, "baseline", "panda", 0.02, progress=False, overrides=TINY)
    assert first["cpu_min"] >= 0.02 and first["steps"] > 0
    again = train_variant(run, "baseline", "panda", 0.02, progress=False, overrides=TINY)
    assert again["steps"] == first["steps"]  # at its budget: nothing more
    more = train_variant(run, "baseline", "panda", 0.04, progress=False, overrides=TINY)
    assert more["steps"] > first["steps"] and more["cpu_min"] >= 0.04
    assert load_checkpoint(run / "last.pt")["step"] == more["steps"]
    with pytest.raises(ValueError, match="another configuration"):
        train_variant(run, "residual", "panda", 0.05, progress=False, overrides=TINY)


def test_rows_have_every_column_and_the_table_merges_rows(tmp_path):
    torch.set_num_threads(1)
    run = tmp_path / "panda" / "baseline"
    train_variant(run, "baseline", "panda", 0.01, progress=False, overrides=TINY)
    cfg = EvalConfig(problems=3, samples=4, seed=0)
    rows = recipe_rows(run, "panda", "baseline", cfg, threads=1)
    assert len(rows) == 1 and set(rows[0]) == set(COLUMNS)
    row = rows[0]
    for key in COLUMNS[3:]:
        assert isinstance(row[key], (int, float)) and math.isfinite(row[key]), key
    assert 0 <= row["raw 1cm&1deg [%]"] <= row["raw 2cm&2deg [%]"] <= row["raw 5cm&5deg [%]"] <= 100
    assert row["best pos [mm]"] <= row["mean pos [mm]"]
    assert json.loads((run / "recipe_rows.json").read_text()) == rows
    stem = tmp_path / "table"
    other = {**row, "variant": "residual", "raw 1cm&1deg [%]": 12.5}
    write_recipe_table(stem, [other], "cmd one", cfg)
    write_recipe_table(stem, rows, "cmd two", cfg)
    write_recipe_table(stem, rows, "cmd two", cfg)  # a rerun replaces its own row
    written = read_csv(stem.with_suffix(".csv"))
    assert [(r["variant"], r["robot"]) for r in written] == [("baseline", "panda"), ("residual", "panda")]
    assert float(written[1]["raw 1cm&1deg [%]"]) == 12.5
    assert "cmd two" in stem.with_suffix(".md").read_text()
    assert (tmp_path / "table_commands.txt").read_text().splitlines() == ["cmd one", "cmd two"]
    retimed = retime_rows(stem, {("panda", "baseline"): run / "last.pt"}, cfg)
    assert len(retimed) == 1 and set(retimed[0]) == set(COLUMNS)
    assert retimed[0]["sample ms/goal 1 thr"] > 0 and retimed[0]["raw 1cm&1deg [%]"] == pytest.approx(row["raw 1cm&1deg [%]"])


def test_cli_train_stops_at_a_cpu_budget(tmp_path, capsys):
    from pathlib import Path

    from ggik.cli import main

    tiny = Path(__file__).resolve().parents[1] / "train" / "configs" / "tiny.yaml"
    run = tmp_path / "run"
    assert main(["train", "--config", str(tiny), "--set", "steps=1000000", "--out", str(run), "--max-cpu-minutes", "0.01",
                 "--no-progress"]) == 0
    ckpt = load_checkpoint(run / "last.pt")
    assert 0 < ckpt["step"] < 1_000_000 and ckpt["cpu_s"] >= 0.6


def test_transfer_weights_copies_widens_and_leaves_the_rest_fresh():
    from ggik.checkpoint import transfer_weights

    torch.manual_seed(0)
    small = GGIKModel(ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2))
    big = GGIKModel(ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2, residual_inputs=True))
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
        assert torch.equal(state[name][:, : old.shape[1]], old) and not state[name][:, old.shape[1]:].any()
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
    main(["train", "--config", str(tiny), "--set", "steps=2", "--out", str(tmp_path / "a"), "--no-progress"])
    assert main(["train", "--config", str(tiny), "--set", "steps=2", "--init", str(tmp_path / "a" / "last.pt"),
                 "--set", "model.residual_inputs=true", "--out", str(tmp_path / "b"), "--no-progress"]) != 0
    assert "architecture differs" in capsys.readouterr().err
    assert main(["train", "--config", str(tiny), "--set", "steps=2", "--init", str(tmp_path / "a" / "last.pt"), "--init-partial",
                 "--set", "model.residual_inputs=true", "--out", str(tmp_path / "c"), "--no-progress"]) == 0
    assert "partial initialisation" in capsys.readouterr().out
    ckpt = load_checkpoint(tmp_path / "c" / "last.pt")
    assert ckpt["config"]["model"]["residual_inputs"] is True and ckpt["init_from"]["transfer"]["widened"] == 2
