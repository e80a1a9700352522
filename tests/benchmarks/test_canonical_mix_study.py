"""The canonical-mix study (benchmarks/canonical_mix): curves per family of validation robots, from checkpoints and
from a run's val records, which agree on the same model."""

from __future__ import annotations

import csv

import pytest
import torch
import yaml

from benchmarks.canonical_mix.curves import FAMILY_COLUMNS, checkpoint_points, metrics_points
from benchmarks.canonical_mix.mix_curves import main
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml, to_dict
from tests.test_training import tiny_cfg

OVERRIDES = (
    "steps=2",
    "val.every=2",
    "checkpoint_every=2",
    "val.problems_per_robot=2",
    "val.samples=2",
    "model.graph=canonical",
    "data.sampler=stacked",
    "data.randomized_weight=1.0",
    "data.goal_kinds={pose: 0.6, position: 0.4}",
    "val.goal_kinds=[pose, position]",
    "val.random_robots=1",
    "val.randomized_robots=1",
    "val.reframed_robots=1",
)


def test_a_checkpoint_validated_here_equals_the_val_record_its_run_wrote(tmp_path):
    torch.set_num_threads(1)
    cfg = tiny_cfg(*OVERRIDES)
    run = tmp_path / "run"
    Trainer(cfg, run, progress=False).train()
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(to_dict(cfg)))
    out = tmp_path / "table"
    argv = ["--config", str(config), "--ckpt", f"here={run / 'last.pt'}", "--metrics", f"run={run / 'metrics.jsonl'}"]
    assert main([*argv, "--out", str(out), "--curves", str(tmp_path / "curves.png")]) == 0
    rows = list(csv.DictReader((tmp_path / "table.csv").read_text().splitlines()))
    assert [r["run"] for r in rows] == ["here", "run"] and {r["examples"] for r in rows} == {str(2 * 8)}
    assert all(rows[0][column] not in ("", "nan") for column, _ in FAMILY_COLUMNS)
    assert (tmp_path / "curves.png").stat().st_size > 0
    # the two points are the same validation of the same model: every family metric agrees, errors included
    parsed = from_dict(TrainConfig, load_yaml(config))
    ((_, _, _, here),) = checkpoint_points(parsed, "canonical", [("here", run / "last.pt")])
    ((_, _, examples, logged),) = metrics_points(parsed, [("run", run / "metrics.jsonl")])
    family_keys = [k for k in logged if k.startswith("val/family/")]
    assert examples == 16 and len(family_keys) == 2 * len(FAMILY_COLUMNS)  # success and best error of each
    assert any(logged[k] > 0 for k in family_keys)
    for key in family_keys:
        assert here[key] == pytest.approx(logged[key], rel=1e-6), key
    often = tmp_path / "often.yaml"  # how often a run validates is no other set
    often.write_text(yaml.safe_dump(to_dict(tiny_cfg(*OVERRIDES, "val.every=1"))))
    assert main(["--config", str(often), "--metrics", f"run={run / 'metrics.jsonl'}"]) == 0
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(to_dict(tiny_cfg(*OVERRIDES, "val.random_robots=2"))))
    with pytest.raises(SystemExit, match="validates on another set"):
        main(["--config", str(other), "--metrics", f"run={run / 'metrics.jsonl'}"])
    assert main([*argv, "--after", "run=1000", "--out", str(out)]) == 0  # the run's points move along the x axis
    moved = list(csv.DictReader((tmp_path / "table.csv").read_text().splitlines()))
    assert [r["examples"] for r in moved] == ["16", "1016"]
    with pytest.raises(SystemExit, match="not measured"):
        main([*argv, "--after", "other=1000"])
    with pytest.raises(SystemExit, match="an integer"):
        main([*argv, "--after", "run=many"])
    with pytest.raises(SystemExit, match="nothing to measure"):
        main(["--config", str(config)])
