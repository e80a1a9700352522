"""The data-efficiency study (benchmarks/data_efficiency): configs, resumable runs at equal examples, the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.common.scripts import BenchmarkError
from benchmarks.data_efficiency.data_efficiency import main
from benchmarks.data_efficiency.study import (
    PROTOCOLS,
    SCHEDULED,
    VARIANTS,
    run_config,
    train_variant,
    variant_rows,
)

pytestmark = pytest.mark.slow

TINY = {
    "model": {"dim": 8, "hidden": 16, "enc_layers": 1, "dec_layers": 2, "latent": 4, "prior_components": 2},
    "data": {"batch_size": 8},
    "val": {"problems_per_robot": 2, "samples": 4},
    "bf16": False,
}


def test_configs_validate_at_equal_examples():
    small, large = (run_config(v, "panda", 20_480) for v in ("b128-lr1e-3", "b512-lr1e-3"))
    assert small["val"]["every"] * 128 == large["val"]["every"] * 512 == 20_480
    assert small["optim"]["lr"] == 1e-3 and run_config("b128-lr1e-4", "panda", 20_480)["optim"]["lr"] == 1e-4
    assert small["model"] == {"residual_inputs": True, "gn_steps": 2}
    # every variant builds a valid TrainConfig on both protocols; the mix and width variants change only what they say
    from ggik.training.config import TrainConfig
    from ggik.typed_config import from_dict

    for variant in VARIANTS:
        for protocol in PROTOCOLS:
            from_dict(TrainConfig, run_config(variant, protocol, 20_480))
    pose = from_dict(TrainConfig, run_config("b128-lr1e-3-pose", "multi", 20_480))
    wide = from_dict(TrainConfig, run_config("b128-lr1e-3-wide", "multi", 20_480))
    base = from_dict(TrainConfig, run_config("b128-lr1e-3", "multi", 20_480))
    assert pose.data.goal_kinds == {"pose": 1.0} and len(base.data.goal_kinds) == 3
    assert (wide.model.dim, wide.model.hidden) == (96, 192) and (base.model.dim, base.model.hidden) == (64, 128)
    assert pose.data.robots == base.data.robots == wide.data.robots
    with pytest.raises(BenchmarkError, match="not a multiple"):
        run_config("b512-lr1e-3", "panda", 1000)
    with pytest.raises(BenchmarkError, match="unknown variant"):
        run_config("b7", "panda", 1024)
    with pytest.raises(BenchmarkError, match="unknown protocol"):
        run_config("b128-lr1e-3", "moon", 1024)


def test_runs_resume_to_more_examples_and_tabulate(tmp_path):
    run = tmp_path / "panda" / "b128-lr1e-3"
    cfg = run_config("b128-lr1e-3", "panda", 32, TINY)
    assert train_variant(run, cfg, 96, progress=False)["steps"] == 12
    more = train_variant(run, cfg, 160, progress=False)
    assert more["steps"] == 20 and more["examples"] == 160
    rows, note = variant_rows(run)
    assert [r[0] for r in rows] == [32, 64, 96, 128, 160] and [r[1] for r in rows] == [4, 8, 12, 16, 20]
    assert all(0 <= r[4] <= 100 and r[3] > 0 for r in rows)  # raw success [%], best of 32 [mm]
    assert note.startswith("b128-lr1e-3: best of 32 ~") and "too short a curve to extrapolate" in note
    long_run = tmp_path / "long" / "panda" / "b128-lr1e-3"  # points at 8..176 examples: 11x past the first
    train_variant(long_run, run_config("b128-lr1e-3", "panda", 8, TINY), 176, progress=False)
    note = variant_rows(long_run)[1]
    assert "extrapolated: 15 mm at" in note
    # the last doubling's own law (points from 88 examples on: 12 of them) and its budgets beside the whole curve's
    assert "over the last doubling (12 points)" in note and "15 mm (last doubling's law) at" in note
    with pytest.raises(BenchmarkError, match="another configuration"):
        train_variant(run, run_config("b128-lr1e-4", "panda", 32, TINY), 200, progress=False)
    out = tmp_path / "table"
    argv = ["--measure-only", "--runs", str(tmp_path), "--variants", "b128-lr1e-3", "--out", str(out)]
    assert main(argv + ["--curves", str(tmp_path / "c.png")]) == 0
    text = Path(f"{out}.md").read_text()
    assert text.count("| b128-lr1e-3 |") == 5 and "too short" in text and (tmp_path / "c.png").is_file()


def test_a_cosine_run_is_one_length_and_is_not_fitted(tmp_path):
    run = tmp_path / "panda" / "b128-lr1e-3-cosine"
    cfg = run_config("b128-lr1e-3-cosine", "panda", 32, TINY)
    assert cfg["optim"]["schedule"] == "cosine" and "b128-lr1e-3-cosine" in SCHEDULED and "b128-lr1e-3" not in SCHEDULED
    assert train_variant(run, cfg, 96, progress=False)["steps"] == 12
    assert train_variant(run, cfg, 96, progress=False)["steps"] == 12  # the same length again: nothing to do
    with pytest.raises(BenchmarkError, match="cosine schedule ends at the run's length"):
        train_variant(run, cfg, 160, progress=False)
    rows, note = variant_rows(run)
    assert [r[0] for r in rows] == [32, 64, 96] and "not fitted" in note


def test_a_run_without_validation_is_a_clear_error(tmp_path):
    run = tmp_path / "panda" / "b128-lr1e-3"
    train_variant(run, run_config("b128-lr1e-3", "panda", 64, TINY), 32, progress=False)
    with pytest.raises(SystemExit, match="no validation record"):
        main(["--measure-only", "--runs", str(tmp_path), "--variants", "b128-lr1e-3"])
