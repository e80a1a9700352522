"""The model files of v1-v10 read as they were written, whatever today's defaults, and the defaults are the shipped
recipe: ``ggik.checkpoint.IMPLIED_CONFIG`` (what an absent config key means), the run configs in train/configs
against the configs the runs recorded, and every kept export (train/checkpoints/vN/export.pt; v10's is the shipped
ggik/weights/ggik_default.pt) loaded, sampled with fixed noise in float64 and shown by ``ggik info``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import torch

from ggik import Robot, RobotGraph
from ggik.checkpoint import (
    CHECKPOINT_FORMAT,
    IMPLIED_CONFIG,
    WEIGHTS_FORMAT,
    complete_config,
    export_checkpoint,
    load_checkpoint,
    load_model,
    read_checkpoint,
)
from ggik.cli import main
from ggik.data import DataConfig
from ggik.graph.batch import GraphBatch
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import apply_overrides, from_dict, load_yaml, to_dict

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "train" / "configs"
RUNS = REPO / "train" / "checkpoints"
SHIPPED = REPO / "ggik" / "weights" / "ggik_default.pt"

#: model -> (its weights-only file, training step, fingerprint of fixed-noise samples: sum, sum of |x|, sum of x^2 [m])
#: (the fingerprints were taken from each run's resumable last.pt with the code that trained them)
HISTORY = {
    "v1": (RUNS / "v1" / "export.pt", 22000, (2.49043424488, 134.8658585, 107.704983478)),
    "v2": (RUNS / "v2" / "export.pt", 5000, (8.14913865427, 133.841823759, 105.044092034)),
    "v3": (RUNS / "v3" / "export.pt", 8000, (4.38028398016, 133.176187034, 103.868316708)),
    "v4": (RUNS / "v4" / "export.pt", 8000, (5.1174099948, 134.462641063, 105.532056228)),
    "v5": (RUNS / "v5" / "export.pt", 7000, (8.40594465526, 134.518592811, 106.136007296)),
    "v6": (RUNS / "v6" / "export.pt", 2600, (8.75928959027, 134.440382721, 106.153380293)),
    "v7": (RUNS / "v7" / "export.pt", 16019, (6.217061548, 133.70679094, 104.148071824)),
    "v8": (RUNS / "v8" / "export.pt", 25402, (1.792864561, 135.057915838, 104.697464656)),
    "v9": (RUNS / "v9" / "export.pt", 40990, (4.61736224919, 137.323929522, 107.303575193)),
    "v10": (SHIPPED, 4000, (7.53642943009, 135.117218358, 106.184354298)),
}
#: v8 and v9 are v7's run resumed (the same optimiser, schedule and data stream), so they have v7's config file;
#: v10 is train/configs/canonical.yaml with its sittings' --set overrides (LAST_STAGE)
RUN_CONFIG = {"v8": "v7", "v9": "v7", "v10": "canonical"}
#: the --set overrides of the later stages of v1 and v10 (train/checkpoints/README.md), over their configs
LAST_STAGE = {
    "v1": ["steps=22000", "data.random_weight=0", "data.randomized_weight=0", "threads=2"],
    "v10": [
        "compile=eager",
        "threads=1",
        "optim.schedule=cosine",
        "steps=4000",
        "val.every=500",
        "val.random_robots=20",
        "val.randomized_robots=9",
        "val.reframed_robots=9",
    ],
}
SECTIONS = ("model", "data", "optim", "loss", "val")


def recorded_config(run: str) -> TrainConfig:
    """The config a run recorded (train/checkpoints/RUN/config.yaml), keys it predates read as IMPLIED_CONFIG says."""
    return from_dict(TrainConfig, complete_config(load_yaml(RUNS / run / "config.yaml"), CHECKPOINT_FORMAT)[0])


def fingerprint(model: GGIKModel) -> torch.Tensor:
    """Sum, sum of |x| and sum of x^2 of 3 samples for each of 2 Panda goals with fixed noise, in float64 [m], on the
    Panda's graph of the model's convention."""
    graph = RobotGraph.from_robot(Robot.from_name("panda"), model.cfg.graph)
    batch = GraphBatch.from_graph(
        graph, T_goal=graph.robot.fk(graph.robot.sample_q(2, torch.Generator().manual_seed(0)))
    )
    model = model.double()
    B, S, Z, L = batch.batch_size, 3, model.cfg.latent, model.latent_mask(batch.node_mask).shape[1]
    gen = torch.Generator().manual_seed(1)
    noise = {
        "u": torch.rand(B, S, L, generator=gen, dtype=torch.float64),
        "eps": torch.randn(B, S, L, Z, generator=gen, dtype=torch.float64),
    }
    with torch.no_grad():
        x = model.sample(batch, S, noise=noise)
    return torch.stack([x.sum(), x.abs().sum(), (x * x).sum()])


# ------------------------------------------------------------------------------------ what an absent key means
@pytest.mark.parametrize("fmt", [CHECKPOINT_FORMAT, WEIGHTS_FORMAT])
def test_implied_config_has_a_value_for_every_key_of_the_config(fmt):
    implied, defaults = IMPLIED_CONFIG[fmt], to_dict(TrainConfig())
    for section in SECTIONS:
        assert set(implied[section]) == set(defaults[section]), (
            f"config.{section}: a new key needs the value that keeps the code before it in IMPLIED_CONFIG"
        )
    assert set(implied) == set(defaults)
    assert to_dict(from_dict(TrainConfig, implied)) == implied  # a valid, complete config
    assert complete_config({}, fmt) == (
        implied,
        [f"{s}.{k}" for s in implied if s in SECTIONS for k in implied[s]] + [k for k in implied if k not in SECTIONS],
    )


def test_a_key_a_file_predates_reads_as_before_it_existed_not_as_the_default():
    defaults = to_dict(TrainConfig())
    recorded = {
        **defaults,
        "model": {k: v for k, v in defaults["model"].items() if k not in ("residual_inputs", "gn_steps")},
        "data": {k: v for k, v in defaults["data"].items() if k != "goal_kinds"},
    }
    config, filled = complete_config(recorded, CHECKPOINT_FORMAT)
    assert filled == ["model.residual_inputs", "model.gn_steps", "data.goal_kinds"]
    assert config["model"]["residual_inputs"] is False and config["model"]["gn_steps"] == 0
    assert config["data"]["goal_kinds"] == {"pose": 1.0} != defaults["data"]["goal_kinds"]
    assert defaults["model"]["gn_steps"] == 2, "the defaults differ, so this test means something"
    assert recorded["model"].get("gn_steps") is None, "the recorded dict is not changed"
    assert complete_config({**recorded, "data": "not a section"}, CHECKPOINT_FORMAT)[0]["data"] == "not a section"


def test_resuming_or_starting_from_an_old_file_keeps_what_it_predates(tiny_ckpt, tmp_path):
    """A run resumed from a file written before the goal kinds existed trains on poses, as it did, although the
    default goal-kind mix is another; its new checkpoints record the complete config."""
    old = torch.load(tiny_ckpt, weights_only=True)
    del old["config"]["data"]["goal_kinds"], old["config"]["val"]["goal_kinds"]
    (tmp_path / "run").mkdir()
    torch.save(old, tmp_path / "run" / "last.pt")
    trainer = Trainer.resume(tmp_path / "run", {"steps": old["step"] + 1}, progress=False)
    assert trainer.cfg.data.goal_kinds == {"pose": 1.0} != DataConfig().goal_kinds and trainer.cfg.val.goal_kinds == [
        "pose"
    ]
    trainer.train()
    assert read_checkpoint(tmp_path / "run" / "last.pt")["config"]["data"]["goal_kinds"] == {"pose": 1.0}


# ---------------------------------------------------------------------------------------------- the defaults
def test_the_defaults_are_the_shipped_recipe():
    shipped = load_checkpoint(SHIPPED)["config"]
    cfg = TrainConfig()
    # the one difference: the shipped model is the recipe fine-tuned on canonical graphs (v10); the recipe from scratch
    # (train/configs/default.yaml) has not been trained on them, so a new model's default graph stays "frames"
    assert shipped["model"]["graph"] == "canonical" and cfg.model.graph == "frames"
    assert to_dict(cfg.model) == {**shipped["model"], "graph": "frames"}
    assert cfg.data.robots == shipped["data"]["robots"] and cfg.data.goal_kinds == shipped["data"]["goal_kinds"]
    assert cfg.data.random_weight == shipped["data"]["random_weight"] == 0.0
    assert cfg.val.goal_kinds == shipped["val"]["goal_kinds"]
    assert GGIKModel().num_parameters() == 630_386


def test_default_yaml_trains_the_shipped_recipe_from_scratch():
    cfg, shipped = from_dict(TrainConfig, load_yaml(CONFIGS / "default.yaml")), recorded_config("v6")
    assert cfg.model == shipped.model
    assert (cfg.data.robots, cfg.data.goal_kinds, cfg.data.random_weight, cfg.data.randomized_weight) == (
        shipped.data.robots,
        shipped.data.goal_kinds,
        0.0,
        0.0,
    )
    assert (cfg.optim.lr, cfg.optim.schedule, cfg.optim.warmup_steps, cfg.loss.beta_warmup_steps) == (
        1e-3,
        "constant",
        100,
        300,
    )
    stages = [path for name, (path, _, _) in HISTORY.items() if name not in ("v7", "v8")]  # v9's count includes both
    assert cfg.steps * cfg.data.batch_size > sum(load_checkpoint(path)["examples"] for path in stages)


@pytest.mark.parametrize("run", list(HISTORY))
def test_each_run_config_reproduces_the_config_its_run_recorded(run):
    data = load_yaml(CONFIGS / f"{RUN_CONFIG.get(run, run)}.yaml")
    data = apply_overrides(data, list(LAST_STAGE.get(run, [])))  # v1, v10: their last sittings' overrides
    assert from_dict(TrainConfig, data) == recorded_config(run)


# ---------------------------------------------------------------------------------------------- the files
@pytest.mark.parametrize("name", list(HISTORY))
def test_each_model_file_loads_as_recorded_and_samples_as_before(name):
    path, step, expected = HISTORY[name]
    model, ckpt = load_model(path)  # strict: every weight has its place
    recorded = read_checkpoint(path)["config"]["model"]
    implied = IMPLIED_CONFIG[WEIGHTS_FORMAT]["model"]
    assert ckpt["format"] == WEIGHTS_FORMAT and ckpt["step"] == step
    assert dataclasses.asdict(model.cfg) == {**implied, **recorded}
    if name == "v10":
        assert model.cfg.graph == recorded["graph"] == "canonical"
    else:
        assert model.cfg.graph == "frames" and "graph" not in recorded, "v1-v9 predate the canonical graph"
    assert (model.gn_follow is None) == (name == "v1")
    # float64 sampling with fixed noise: another CPU (AVX2 or AVX-512 kernels, another BLAS blocking) moves the sums
    # by ~1e-13 of their scale, and the recorded digits hold ~1e-10 of it (measured: at most 4.7e-10 on 134); a change
    # of the code or the weights moves them by far more. So every sum is checked to 1e-8 of the scale, sum |x| [m].
    got, want = fingerprint(model), torch.tensor(expected, dtype=torch.float64)
    torch.testing.assert_close(got, want, rtol=0.0, atol=1e-8 * float(want[1]))


def test_the_v1_file_has_the_reference_architecture_and_no_key_of_the_later_options():
    recorded = read_checkpoint(HISTORY["v1"][0])["config"]
    assert not {"decoder", "residual_inputs", "gn_steps", "latent_scope"} & set(recorded["model"]), "v1 predates them"
    state = load_checkpoint(HISTORY["v1"][0])["model"]
    reference = GGIKModel(ModelConfig(**IMPLIED_CONFIG[WEIGHTS_FORMAT]["model"]))
    reference.load_state_dict(state, strict=True)
    assert set(GGIKModel().state_dict()) != set(state), "today's default model is another architecture"


def test_export_keeps_the_config_as_the_run_recorded_it(tmp_path):
    out = tmp_path / "v1.pt"
    export_checkpoint(HISTORY["v1"][0], out)
    assert read_checkpoint(out)["config"] == read_checkpoint(HISTORY["v1"][0])["config"]
    assert "residual_inputs" not in read_checkpoint(out)["config"]["model"]


def test_the_shipped_file_is_the_end_of_the_chain():
    ckpt, chain = load_checkpoint(SHIPPED), []
    source = ckpt.get("init_from")
    while source:
        chain.append((source["path"], source["step"]))
        source = source.get("init_from")
    assert chain == [
        ("ggik/weights/ggik_default.pt", 40990),  # v9, shipped when v10 started
        ("ggik/weights/ggik_default.pt", 2600),  # v6, shipped when v7 started
        ("train/checkpoints/v5/last.pt", 7000),
        ("train/checkpoints/v4/last.pt", 8000),
        ("train/checkpoints/v3/last.pt", 8000),
        ("train/checkpoints/v2/last.pt", 5000),
        ("ggik/weights/ggik_default.pt", 22000),
    ]  # paths as recorded when each run started


@pytest.mark.parametrize("name", list(HISTORY))
def test_ggik_info_shows_each_file(name, capsys):
    path = HISTORY[name][0]
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"step {HISTORY[name][1]}" in out and "format ggik-weights/1" in out
    predated = "config keys the file predates (read as before they existed)"
    if name == "v1":
        assert predated in out and '"model.gn_steps": 0' in out and '"data.goal_kinds": {"pose": 1.0}' in out
    elif name in ("v2", "v3", "v4"):
        assert predated in out and '"model.gn_solver": "full"' in out
    elif name in ("v5", "v6"):  # keys added after v6: how the data were drawn, torch.compile
        assert predated in out and '"data.sampler": "per-robot"' in out and '"compile": "eager"' in out
    elif name == "v7":  # v7 predates the random tool offsets
        assert predated in out and '"data.tool_offset": 0.0' in out and '"data.sampler"' not in out
    elif name == "v10":  # its last sitting wrote every key of today's config but the decoder's widths, volume inputs,
        # the share of configurations outside the limits (with their last joint drawn) and the validation protocol
        widths = '"model.dec_dim": 0, "model.dec_hidden": 0, "model.volume_inputs": false'
        unlimited = '"data.unlimited_fraction": 0.0, "data.unlimited_last_joint_zero": false'
        assert f'{predated}: {{{widths}, {unlimited}, "val.protocol": "ours"}}' in out
        assert "graph canonical" in out.replace('"', "").replace(":", "")
    else:  # v8's and v9's last sittings wrote every key of today's config but the decoder's widths, the graph
        # convention (frames), the share of configurations outside the limits, the validation families of
        # link-randomised and reframed robots (none) and the validation protocol
        families = '"val.randomized_robots": 0, "val.randomize_fraction": 0.2, "val.reframed_robots": 0'
        widths = '"model.dec_dim": 0, "model.dec_hidden": 0'
        model = f'{widths}, "model.graph": "frames", "model.volume_inputs": false'
        unlimited = '"data.unlimited_fraction": 0.0, "data.unlimited_last_joint_zero": false'
        families += ', "val.protocol": "ours"'
        assert f'{predated}: {{{model}, "data.random_refresh": 1, {unlimited}, {families}}}' in out
