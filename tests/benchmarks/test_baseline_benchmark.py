"""The learned-baseline benchmark (benchmarks/baselines): tiny runs of the script and each of its tables."""

from __future__ import annotations

import csv
import importlib.util

import pytest

from benchmarks.baselines import bench_baselines

pytestmark = pytest.mark.slow

TRACIK = importlib.util.find_spec("pytracik") is not None  #: the bench extra adds TRAC-IK rows

TINY = ["--targets", "6", "--samples", "4", "--iknet-steps", "3", "--iknet-samples", "300", "--distal-steps", "3",
        "--threads", "1"]  # fmt: skip


def _rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_bench_baselines_tiny_run(tmp_path):
    out = tmp_path / "baselines"
    args = ["--robots", "panda", *TINY, "--sizes", "200", "400", "--out", str(out)]
    assert bench_baselines.main(args) == 0
    rows = _rows(f"{out}_iknet.csv")
    methods = [r["method"] for r in rows]
    assert methods[:2] == ["IKNet (CPU sizes)", "distal teacher (1 answer)"] and "IKNet, paper (quoted)" in methods
    assert all(0 <= float(r["within 10 cm [%]"]) <= 100 for r in rows)
    distal = _rows(f"{out}_distal.csv")
    assert [r["training poses"] for r in distal][:2] == ["200", "400"] and len(distal) == 4 + TRACIK
    assert "sha256" in (tmp_path / "baselines_distal.md").read_text()
    assert "validation mean distance [cm] every 1,000 steps" in (tmp_path / "baselines_iknet.md").read_text()


def test_bench_baselines_iknet_sizes(tmp_path):
    out = tmp_path / "sized"
    args = ["--tables", "iknet", "--robots", "ur10", *TINY, "--iknet-sizes", "16", "8", "2", "--out", str(out)]
    assert bench_baselines.main(args) == 0
    assert _rows(f"{out}_iknet.csv")[0]["method"] == "IKNet (16 / 8 / 2)"


def test_bench_baselines_planar_tables(tmp_path):
    out = tmp_path / "planar"
    args = ["--tables", "planar", "ablation", "fewshot", "--robots", "--curve-steps", "2", "3", "--ablation-steps",
            "2", "--fewshot-steps", "2", "--planar4-samples", "300", "--threads", "1", "--out", str(out)]  # fmt: skip
    assert bench_baselines.main(args) == 0
    curve = _rows(f"{out}_planar.csv")
    iknet = [(r["robot"], r["steps (best)"]) for r in curve if r["method"] == "IKNet (CPU sizes)"]
    assert iknet == [("planar2", "2 (2)"), ("planar2", "3 (3)"), ("planar4", "2 (2)"), ("planar4", "3 (3)")]
    assert [r["method"] for r in curve].count("LM, random starts") == 2
    ablation = _rows(f"{out}_ablation.csv")
    assert len(ablation) == 5 and ablation[-1]["variant"].endswith("(the defaults)")
    fewshot = _rows(f"{out}_fewshot.csv")
    assert [r["method"] for r in fewshot][:3] == [
        "the original chain's model, not adapted",
        "fine-tuned, 1,000 pairs",
        "fine-tuned, 1,000 pairs, paper (quoted)",
    ]
    assert all(float(r["mean distance [cm]"]) > 0 for r in fewshot)


def test_bench_baselines_protocol_tables_reuse_models(tmp_path, monkeypatch):
    out, models = tmp_path / "protocols", tmp_path / "models"
    args = ["--tables", "distal-protocols", "paths", "--robots", "ur10", *TINY, "--paths", "2", "--models",
            str(models), "--out", str(out)]  # fmt: skip
    assert bench_baselines.main(args) == 0
    saved = sorted(p.name for p in models.iterdir())
    assert saved == ["distal_ur10_pose_3.pt", "iknet_ur10_position_3.pt"]
    rows = _rows(f"{out}_distal-protocols.csv")
    sets = [r["test set"] for r in rows]
    assert (
        sets.count("near-singular") == 4 + TRACIK
        and sets.count("unreachable") == 3 + TRACIK
        and "trajectories, 50 poses" in sets
    )
    unreachable = [r for r in rows if r["test set"] == "unreachable"]
    assert all(float(r["unreachable: excess distance [cm]"]) >= -1e-6 for r in unreachable)
    paths = _rows(f"{out}_paths.csv")
    assert len(paths) == 5 and float(paths[0]["median largest joint step [rad]"]) <= 0.1 + 1e-6
    from ggik.baselines import DistalTeacher, IKNet

    def refuse(*a, **k):
        raise AssertionError("trained again")

    monkeypatch.setattr(IKNet, "fit", refuse)
    monkeypatch.setattr(DistalTeacher, "fit", refuse)
    assert bench_baselines.main(args) == 0  # the second run loads the kept models
    assert sorted(p.name for p in models.iterdir()) == saved
    with pytest.raises(SystemExit, match="tables"):
        bench_baselines.main(["--tables", "nothing", "--robots"])


def test_bench_baselines_family_of_arms(tmp_path):
    out = tmp_path / "family"
    args = ["--tables", "family", "--robots", "--family-arms", "3", "2", "--family-steps", "3", "--family-samples",
            "300", "--threads", "1", "--out", str(out)]  # fmt: skip
    assert bench_baselines.main(args) == 0
    rows = _rows(f"{out}_family.csv")
    assert [r["method"] for r in rows] == ["IKNet conditioned on the link lengths", "IKNet, no arm description",
                                           "IKNet of the nominal chain alone", "LM, 100 random starts"]  # fmt: skip
    assert all(float(r["mean distance [cm]"]) >= 0 for r in rows) and rows[0]["training arms"] == "3"
    assert "Model:" not in (tmp_path / "family_family.md").read_text()  # no GGIK row, no GGIK model named
