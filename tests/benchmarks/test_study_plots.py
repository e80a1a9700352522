"""The studies' figures (benchmarks/sampling/timing_plot.py, benchmarks/generalisation_study/study_plots.py): valid
PNGs rendered by matplotlib's Agg canvas, bad input refused before anything is written."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install 'ggik[plot]'): no plots to test")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from benchmarks.generalisation_study.study_plots import plot_finetuning, plot_study_distances  # noqa: E402
from benchmarks.sampling.timing_plot import plot_timing  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def agg_calls(monkeypatch) -> list:
    """Records every PNG rendered by the Agg canvas (the spy calls the real method)."""
    calls = []
    real = FigureCanvasAgg.print_png

    def spy(self, *args, **kwargs):
        calls.append(type(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FigureCanvasAgg, "print_png", spy)
    return calls


def assert_png(path) -> None:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 2000, f"{path} is not a real PNG"


def test_timing_plot(tmp_path, agg_calls):
    rows = [
        (label, s, 1e-3 * (1 + k * s)) for label, k in (("panda", 0.01), ("random30", 0.05)) for s in (1, 4, 16, 64)
    ]
    rows.append(("panda", 256, float("nan")))  # a skipped size is left out
    out = plot_timing(rows, tmp_path / "timing.png")
    assert_png(out)
    assert agg_calls == [FigureCanvasAgg]
    with pytest.raises(ValueError, match="at least one row"):
        plot_timing([], tmp_path / "t.png")
    with pytest.raises(ValueError, match="positive integer"):
        plot_timing([("a", 0, 1.0)], tmp_path / "t.png")
    with pytest.raises(ValueError, match="positive and finite"):
        plot_timing([("a", 1, -1.0)], tmp_path / "t.png")


def test_study_distances_plot(tmp_path, agg_calls):
    points = {
        "loo": [
            ("random 6-DOF", 0.3, 100.0, 0.0, 18.8),
            ("unseen named", 0.01, 194.0, 0.0, 14.0),
            ("random 8-DOF", float("nan"), 133.0, 0.0, 14.6),
        ],
        "random": [("random 6-DOF", 0.25, 109.0, 1.0, 19.2)],
    }
    assert_png(plot_study_distances(points, tmp_path / "dist.png"))
    assert agg_calls == [FigureCanvasAgg]
    with pytest.raises(ValueError, match="at least one model"):
        plot_study_distances({"loo": []}, tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()


def test_finetuning_plot(tmp_path, agg_calls):
    rows = [(0, 0.0, 210.0, 611.0, 0.0), (1024, 0.1, 188.0, 573.0, 0.0), (102400, 12.0, 166.0, 537.0, 2.5)]
    assert_png(plot_finetuning(rows, tmp_path / "ft.png", title="test"))
    assert agg_calls == [FigureCanvasAgg]
    with pytest.raises(ValueError, match="at least one row"):
        plot_finetuning([], tmp_path / "bad.png")
    with pytest.raises(ValueError, match=">= 0"):
        plot_finetuning([(-1, 0.0, 1.0, 1.0, 0.0)], tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()
