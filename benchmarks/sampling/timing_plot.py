"""The sampling study's figure: total and per-sample time against the number of samples (the GGIK paper's
appendix Fig. 4), drawn like the suite's figures (:mod:`ggik.evaluation.plots`: Agg canvas, atomic PNG)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ggik.evaluation.plots import line_colors, new_figure, save_figure

__all__ = ["plot_timing"]


def plot_timing(rows: Iterable[Sequence], path: str | Path, title: str | None = None) -> Path:
    """Log-log timing curves: total time [ms] (left) and time per sample [us] (right) against S.

    Args:
        rows: (label, num_samples, seconds) triples, one per measurement; one curve per label, in
            order of first appearance. Rows whose seconds are NaN (e.g. skipped sizes) are left out.
        path: output ``.png``.
    Returns the path written.
    """
    curves: dict[str, list[tuple[int, float]]] = {}
    for row in rows:
        if len(row) != 3:
            raise ValueError(f"each row must be (label, num_samples, seconds), got {row!r}")
        label, s, t = str(row[0]), row[1], float(row[2])
        if int(s) != s or s < 1:
            raise ValueError(f"num_samples must be a positive integer, got {s!r} in row {row!r}")
        if math.isnan(t):
            continue
        if not (t > 0 and math.isfinite(t)):
            raise ValueError(f"seconds must be positive and finite, got {t!r} in row {row!r}")
        curves.setdefault(label, []).append((int(s), t))
    if not curves:
        raise ValueError("plot_timing needs at least one row with a measured time")
    fig, canvas = new_figure((11.0, 4.5))
    a1, a2 = fig.subplots(1, 2)
    colors = line_colors(len(curves), qualitative=True)
    for (label, pts), c in zip(curves.items(), colors):
        pts.sort()
        s = np.array([p[0] for p in pts], dtype=np.float64)
        t = np.array([p[1] for p in pts])
        a1.plot(s, 1e3 * t, "o-", color=c, label=label, ms=3)
        a2.plot(s, 1e6 * t / s, "o-", color=c, label=label, ms=3)
    for ax, ylabel in ((a1, "time per goal [ms]"), (a2, "time per sample [us]")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("samples per goal S")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    a2.legend(fontsize=7, loc="upper right", ncol=1 + len(curves) // 8)
    fig.suptitle(title or "Sampling time against the number of samples")
    fig.tight_layout()
    return save_figure(fig, canvas, path)
