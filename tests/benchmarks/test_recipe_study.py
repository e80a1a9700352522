"""The recipe study (benchmarks/recipe): the variant registry, a resumed run of another configuration refused, and
the measured rows merged into one table, on a tiny model."""

from __future__ import annotations

import json
import math

import pytest
import torch

from benchmarks.recipe.recipe import (
    COLUMNS,
    PROTOCOLS,
    VARIANTS,
    recipe_rows,
    retime_rows,
    train_variant,
    variant_config,
    write_recipe_table,
)
from ggik.evaluation.report import read_csv
from ggik.evaluation.tables import EvalConfig
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.training.config import TrainConfig
from ggik.typed_config import from_dict

pytestmark = pytest.mark.slow

#: a model and batch small enough for a test; the recipe's own settings otherwise
TINY = {
    "model": {"dim": 8, "hidden": 16, "enc_layers": 1, "dec_layers": 2, "latent": 4, "prior_components": 2},
    "data": {"batch_size": 8},
    "bf16": False,
}


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


@pytest.mark.parametrize(
    "variant, protocol, message", [("nope", "panda", "unknown variant"), ("baseline", "nope", "unknown protocol")]
)
def test_unknown_names_are_clear_errors(variant, protocol, message):
    with pytest.raises(ValueError, match=message):
        variant_config(variant, protocol)


def test_a_run_resumes_only_as_the_variant_it_was_started_as(tmp_path):
    torch.set_num_threads(1)
    run = tmp_path / "run"
    first = train_variant(run, "baseline", "panda", 0.01, progress=False, overrides=TINY)
    assert first["steps"] > 0 and first["cpu_min"] >= 0.01
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
    assert retimed[0]["sample ms/goal 1 thr"] > 0 and retimed[0]["raw 1cm&1deg [%]"] == pytest.approx(
        row["raw 1cm&1deg [%]"]
    )
