"""The cascade study (benchmarks/cascade): one row per method, a CSV beside the Markdown, bad options refused."""

from __future__ import annotations

import csv
import importlib.util

import pytest

from benchmarks.cascade.cascade_benchmark import COLUMNS, CascadeBenchmark, run_cascade_benchmark
from benchmarks.common.scripts import BenchmarkError

pytestmark = pytest.mark.slow


def test_cascade_benchmark_rows(tiny_ckpt, tmp_path):
    opts = CascadeBenchmark(
        robots=["ur10"], goals=3, samples=[2, 1], random_starts=4, repeats=1, threads=1, tracik_timeout=0
    )
    table = run_cascade_benchmark(tiny_ckpt, opts, tmp_path / "c", "cmd")
    assert table.columns == COLUMNS
    rows = [dict(zip(table.columns, r)) for r in table.rows]
    assert [(r["method"], r["model samples"], r["random starts"]) for r in rows] == [
        ("LM from random starts", 0, 4),
        ("model-first cascade", 1, 4),
        ("random-first cascade", 0, 5),
        ("model-first cascade", 2, 4),
        ("random-first cascade", 0, 6),
    ]
    assert rows[0]["speed-up vs random starts"] == 1.0 and rows[0]["solved by the first stage [%]"] == 0.0
    assert all(0 <= r["strict success [%]"] <= 100 and r["time per goal [ms]"] > 0 for r in rows)
    model_first = [r for r in rows if r["method"] == "model-first cascade"]
    assert all(r["speed-up vs random-first, same S"] > 0 for r in model_first)
    with open(tmp_path / "c.csv") as f:
        assert len(list(csv.DictReader(f))) == 5
    assert "Command: `cmd`" in (tmp_path / "c.md").read_text()
    with pytest.raises(BenchmarkError, match="--samples"):
        run_cascade_benchmark(tiny_ckpt, CascadeBenchmark(samples=[0]), tmp_path / "d", "cmd")
    with pytest.raises(BenchmarkError, match="--tracik-timeout"):
        run_cascade_benchmark(tiny_ckpt, CascadeBenchmark(tracik_timeout=-1.0), tmp_path / "e", "cmd")


def test_cascade_benchmark_tracik_row(tiny_ckpt, tmp_path):
    """Beside the cascades, TRAC-IK on the same goals where pytracik is importable; a note saying why not elsewhere."""
    opts = CascadeBenchmark(robots=["ur10"], goals=4, samples=[1], random_starts=4, repeats=1, threads=1)
    table = run_cascade_benchmark(tiny_ckpt, opts, tmp_path / "c", "cmd")
    rows = [dict(zip(table.columns, r)) for r in table.rows]
    tracik = [r for r in rows if r["method"] == "TRAC-IK, one seed"]
    if importlib.util.find_spec("pytracik") is None:
        assert not tracik and any("pytracik is not importable" in n for n in table.notes)
        return
    (row,) = tracik
    assert row["random starts"] == 1 and row["model samples"] == 0 and row["goals"] == 4
    assert row["strict success [%]"] > 0 and row["time per goal [ms]"] > 0
    assert any("TRAC-IK, one seed: pytracik" in n for n in table.notes)
