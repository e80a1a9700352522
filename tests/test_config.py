"""ggik.config: typed dataclass configuration from dicts, YAML files and ``key=value`` overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from ggik import GGIKError
from ggik.data import DataConfig
from ggik.nn.cvae import ModelConfig
from ggik.training.config import OptimConfig, TrainConfig
from ggik.typed_config import ConfigError, apply_overrides, from_dict, load_yaml, merge, to_dict

CONFIG_DIR = Path(__file__).resolve().parents[1] / "train" / "configs"
CONFIG_FILES = sorted(CONFIG_DIR.glob("*.yaml"))


# ---------------------------------------------------------------------------------------------- from_dict
def test_defaults_come_from_the_dataclasses():
    cfg = from_dict(TrainConfig, {})
    assert cfg == TrainConfig()
    assert isinstance(cfg.model, ModelConfig) and isinstance(cfg.optim, OptimConfig)


def test_nested_sections_override_only_what_they_name():
    cfg = from_dict(TrainConfig, {"model": {"dim": 8}, "data": {"robots": {"ur10": 2.0}}, "steps": 7})
    assert cfg.model.dim == 8 and cfg.model.hidden == ModelConfig().hidden
    assert cfg.data.robots == {"ur10": 2.0} and cfg.data.batch_size == DataConfig().batch_size
    assert cfg.steps == 7 and cfg.optim == OptimConfig()


def test_to_dict_from_dict_round_trip():
    data = {"model": {"goal_features": True, "latent": 3}, "data": {"random_dofs": [3, 9]}, "optim": {"lr": 2e-4}}
    cfg = from_dict(TrainConfig, data)
    assert from_dict(TrainConfig, to_dict(cfg)) == cfg


@pytest.mark.parametrize(
    "data, where, key",
    [
        ({"stepz": 3}, "config", "stepz"),
        ({"optim": {"lrr": 1.0}}, "config.optim", "lrr"),
        ({"model": {"dim": 8, "width": 3}}, "config.model", "width"),
    ],
    ids=["top-level", "optim-section", "model-section"],
)
def test_unknown_key_is_named(data, where, key):
    with pytest.raises(ConfigError, match=rf"{where}: unknown key\(s\) \['{key}'\]"):
        from_dict(TrainConfig, data)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"steps": "many"}, "config.steps: expected an integer, got 'many'"),
        ({"steps": 2.5}, "config.steps: expected an integer"),
        ({"steps": True}, "config.steps: expected an integer, got True"),
        ({"bf16": 1}, "config.bf16: expected true/false, got 1"),
        ({"optim": {"lr": "fast"}}, "config.optim.lr: expected a number, got 'fast'"),
        ({"optim": {"lr": False}}, "config.optim.lr: expected a number"),
        ({"optim": {"schedule": 3}}, "config.optim.schedule: expected a string"),
        ({"data": {"random_dofs": 5}}, "config.data.random_dofs: expected a list, got 5"),
        ({"data": {"random_dofs": [5, "six"]}}, r"config.data.random_dofs\[1\]: expected an integer"),
        ({"data": {"robots": ["panda"]}}, "config.data.robots: expected a mapping"),
        ({"data": {"robots": {"panda": "heavy"}}}, "config.data.robots.panda: expected a number"),
        ({"model": 3}, "config.model: expected a section"),
    ],
    ids=[
        "int-from-str",
        "int-from-float",
        "int-from-bool",
        "bool-from-int",
        "float-from-word",
        "float-from-bool",
        "str-from-int",
        "list-from-int",
        "list-item",
        "dict-from-list",
        "dict-value",
        "section-from-int",
    ],
)
def test_wrong_types_raise(data, message):
    with pytest.raises(ConfigError, match=message):
        from_dict(TrainConfig, data)


def test_numbers_are_coerced_to_float():
    cfg = from_dict(TrainConfig, {"optim": {"lr": 1, "weight_decay": "3e-4"}})
    assert cfg.optim.lr == 1.0 and isinstance(cfg.optim.lr, float)
    assert cfg.optim.weight_decay == 3e-4 and isinstance(cfg.optim.weight_decay, float)


def test_config_error_is_a_ggik_error():
    assert issubclass(ConfigError, GGIKError) and issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------------------------------------- overrides
def test_apply_overrides_parses_values():
    data = apply_overrides(
        {"optim": {"warmup_steps": 5}},
        [
            "optim.lr=3e-4",
            "data.random_dofs=[5, 6]",
            "bf16=false",
            "model.goal_features=true",
            "steps=12",
            "data.robots={panda: 1.0, ur10: 0.5}",
            "optim.schedule=constant",
        ],
    )
    cfg = from_dict(TrainConfig, data)
    assert cfg.optim.lr == 3e-4 and isinstance(cfg.optim.lr, float)
    assert cfg.optim.warmup_steps == 5, "sibling keys of an overridden section are kept"
    assert cfg.data.random_dofs == [5, 6]
    assert cfg.bf16 is False and cfg.model.goal_features is True
    assert cfg.steps == 12 and cfg.data.robots == {"panda": 1.0, "ur10": 0.5}
    assert cfg.optim.schedule == "constant"


def test_later_overrides_win():
    assert apply_overrides({}, ["steps=1", "steps=2"]) == {"steps": 2}


@pytest.mark.parametrize(
    "start, item, message",
    [
        ({}, "optim.lr", "must look like key=value"),
        ({"steps": 5}, "steps.x=1", "'steps' is not a section"),
    ],
    ids=["no-equals", "into-a-value"],
)
def test_bad_overrides_raise(start, item, message):
    with pytest.raises(ConfigError, match=message):
        apply_overrides(start, [item])


def test_override_of_an_unknown_key_is_caught_by_from_dict():
    with pytest.raises(ConfigError, match=r"config.optim: unknown key\(s\) \['learning_rate'\]"):
        from_dict(TrainConfig, apply_overrides({}, ["optim.learning_rate=0.1"]))


def test_merge_is_recursive_and_does_not_mutate():
    base = {"optim": {"lr": 1.0, "warmup_steps": 3}, "steps": 4}
    out = merge(base, {"optim": {"lr": 2.0}, "bf16": False})
    assert out == {"optim": {"lr": 2.0, "warmup_steps": 3}, "steps": 4, "bf16": False}
    assert base == {"optim": {"lr": 1.0, "warmup_steps": 3}, "steps": 4}


# ---------------------------------------------------------------------------------------------- YAML files
def test_there_are_shipped_configs():
    assert {p.stem for p in CONFIG_FILES} >= {"tiny", "panda"}


@pytest.mark.parametrize("path", CONFIG_FILES, ids=[p.name for p in CONFIG_FILES])
def test_shipped_yaml_parses_into_train_config(path):
    data = load_yaml(path)
    assert data, f"{path.name} is empty"
    cfg = from_dict(TrainConfig, data)
    assert isinstance(cfg, TrainConfig) and cfg.steps > 0
    assert from_dict(TrainConfig, to_dict(cfg)) == cfg


def test_yaml_exponent_without_dot_is_a_float(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("optim: {lr: 3e-4}\nsteps: 3\n")
    cfg = from_dict(TrainConfig, load_yaml(path))
    assert cfg.optim.lr == 3e-4 and isinstance(cfg.optim.lr, float)


@pytest.mark.parametrize(
    "text, error, message",
    [
        ("steps: [1, 2\n", ConfigError, "is not valid YAML"),
        ("- 1\n- 2\n", ConfigError, "top level must be a mapping"),
    ],
    ids=["invalid-yaml", "top-level-list"],
)
def test_bad_yaml_files(text, error, message, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(error, match=message):
        load_yaml(path)


def test_empty_yaml_is_no_overrides(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("# nothing\n")
    assert load_yaml(path) == {}


def test_missing_yaml_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="config file not found"):
        load_yaml(tmp_path / "nope.yaml")
