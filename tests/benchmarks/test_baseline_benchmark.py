"""The learned-baseline benchmark (benchmarks/baselines): a tiny run of the script and its two tables."""

from __future__ import annotations

import csv

import pytest

from benchmarks.baselines import bench_baselines

pytestmark = pytest.mark.slow


def test_bench_baselines_tiny_run(tmp_path):
    out = tmp_path / "baselines"
    args = ["--robots", "panda", "--targets", "6", "--samples", "4", "--iknet-steps", "3", "--distal-steps", "3",
            "--sizes", "200", "400", "--threads", "1", "--out", str(out)]  # fmt: skip
    assert bench_baselines.main(args) == 0
    with open(f"{out}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    methods = [r["method"] for r in rows]
    assert methods[:2] == ["IKNet (CPU sizes)", "distal teacher (1 answer)"] and "IKNet, paper (quoted)" in methods
    assert all(0 <= float(r["within 10 cm [%]"]) <= 100 for r in rows)
    with open(f"{out}_distal.csv", newline="") as f:
        distal = list(csv.DictReader(f))
    assert [r["training poses"] for r in distal][:2] == ["200", "400"] and len(distal) == 4
    assert "sha256" in (tmp_path / "baselines.md").read_text()


def test_bench_baselines_planar_curve_alone(tmp_path):
    out = tmp_path / "planar"
    assert bench_baselines.main(["--robots", "--curve-steps", "2", "3", "--threads", "1", "--out", str(out)]) == 0
    with open(f"{out}_curve.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(r["robot"], r["steps"]) for r in rows] == [("planar2", "2"), ("planar2", "3"), ("planar4", "2"),
                                                        ("planar4", "3")]  # fmt: skip


def test_bench_baselines_mixture_widths(tmp_path):
    out = tmp_path / "planar"
    assert bench_baselines.main(["--robots", "--width-steps", "2", "--threads", "1", "--out", str(out)]) == 0
    with open(f"{out}_widths.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["joint"] for r in rows] == ["1", "2"] and all(
        float(r["nearest component: width [rad]"]) > 0 for r in rows
    )
