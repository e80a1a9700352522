"""The mirror-image study (benchmarks/handedness): one arm's row on tiny budgets, its tables, the random chiral arms,
and the validation curves of runs per CPU-minute."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from benchmarks.handedness.curves import curves_table, read_curve
from benchmarks.handedness.curves import main as curves_main
from benchmarks.handedness.study import Arm, arms, chiral_dh, markdown, study_arm
from ggik import Robot, RobotGraph
from ggik.checkpoint import load_model
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml


def test_random_chiral_arms_have_skew_links_and_the_study_lists_every_family():
    for seed in range(5):
        assert int(RobotGraph.from_robot(chiral_dh(6, seed)).skew_links.sum()) >= 3
    families = {a.family for a in arms(("public", "random DH", "link-randomised", "chiral DH"))}
    assert families == {"public", "random DH", "link-randomised", "chiral DH"}
    ks = {a.name: int(RobotGraph.from_robot(a.robot, "canonical").skew_links.sum()) for a in arms(("public",))}
    assert ks["ur5"] == 0 and ks["baxter"] == 3 and ks["rizon4"] == 3


def test_one_arm_of_the_study_with_a_tiny_model(tiny_ckpt):
    model = load_model(tiny_ckpt)[0].eval()
    torch.manual_seed(0)
    row = study_arm(Arm("panda", Robot.from_name("panda"), "training"), 0, {"tiny": model}, 4, 6, 30)
    assert row["skew links"] == 3
    shares = {k: v for k, v in row.items() if isinstance(v, float) and not k.endswith(("ms/goal", "/ converged"))}
    assert all(0.0 <= v <= 1.0 for v in shares.values() if not math.isnan(v)) and len(shares) >= 20
    # a projection that converged with the arm's handedness reaches the goal, with or without the volumes
    for prefix in ("random+DG", "random+DG vol"):
        got = row[f"{prefix} success among right-handed converged"]
        assert math.isnan(got) or got == 1.0
    assert row["random+DG vol right-handed among converged"] == 1.0
    assert row["random+DG vol per-sample"] >= row["random+DG per-sample"]
    text = markdown([row], "# header")
    assert text.count("| arm | family | dof | skew links |") == 2 and "tiny raw per-sample" in text


def test_curves_read_a_runs_validation_per_cpu_minute(tmp_path):
    tiny = load_yaml(str(Path(__file__).resolve().parents[2] / "train/configs/tiny.yaml"))
    val = {**tiny.get("val", {}), "every": 1, "problems_per_robot": 2, "samples": 2}
    cfg = from_dict(TrainConfig, {**tiny, "steps": 2, "log_every": 1, "val": val})
    run = tmp_path / "run"
    Trainer(cfg, run, progress=False).train()
    curve = read_curve(run)
    assert curve and all(r["cpu_min"] >= 0 and r["success"] for r in curve)
    assert [r["step"] for r in curve] == sorted(r["step"] for r in curve)
    table = curves_table({"tiny": curve})
    lines = table.splitlines()
    assert lines[0].startswith("| run | step | CPU-min | mean |") and len(lines) == 2 + len(curve)
    out = tmp_path / "curves"
    assert curves_main([str(run), "--names", "tiny", "--out", str(out)]) == 0
    assert out.with_suffix(".md").read_text().count("| tiny |") == len(curve)
    assert "\nModel: each run's own checkpoints" in out.with_suffix(".md").read_text()
    assert out.with_suffix(".png").stat().st_size > 0
    with pytest.raises(SystemExit):
        curves_main([str(run), "--names", "a", "b", "--out", str(out)])
