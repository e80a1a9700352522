"""The generalisation study's figures: error, success and LM iterations against the distance from the training
set for several models, and raw errors and success against the number of fine-tuning examples; drawn like the
suite's figures (:mod:`ggik.evaluation.plots`: Agg canvas, atomic PNG)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ggik.evaluation.plots import line_colors, new_figure, save_figure

__all__ = ["plot_study_distances", "plot_finetuning"]


def plot_study_distances(points: dict[str, Sequence[Sequence]], path: str | Path, title: str | None = None) -> Path:
    """Per robot outside the training set, three panels against its distance from the training set: raw
    best-of-S position error [mm] (log axis), raw success [%] and mean LM iterations, one colour per model and
    one marker per family (``python -m benchmarks.generalisation_study.generalisation_summary``).

    Args:
        points: model name -> ``(family, distance, best position error [mm], raw success [%], LM iterations)``
            per robot; robots with a NaN distance cannot be placed and are left out.
        path: output ``.png``.
    Returns the path written.
    """
    if not points or not any(points.values()):
        raise ValueError("plot_study_distances needs at least one model with one robot")
    fig, canvas = new_figure((14.0, 4.4))
    axes = fig.subplots(1, 3)
    markers = "osD^vP*X"
    families = sorted({str(p[0]) for rows in points.values() for p in rows})
    colors = dict(zip(points, line_colors(len(points), qualitative=True)))
    for model, rows in points.items():
        for fi, family in enumerate(families):
            pts = np.array(
                [[float(v) for v in p[1:]] for p in rows if str(p[0]) == family and not math.isnan(float(p[1]))]
            )
            if not len(pts):
                continue
            for ax, k in zip(axes, (1, 2, 3)):
                ax.scatter(
                    pts[:, 0],
                    pts[:, k],
                    color=colors[model],
                    marker=markers[fi % len(markers)],
                    s=22,
                    alpha=0.75,
                    label=f"{model}: {family}",
                )
    for ax, label in zip(
        axes, ("raw best-of-S position error [mm]", "raw success, 1 cm and 1 deg [%]", "LM iterations from the samples")
    ):
        ax.set_xlabel("distance from the training set (randomize_links: r; else relative edge difference)", fontsize=7)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, alpha=0.3)
    axes[0].set_yscale("log")
    axes[1].set_ylim(-3, 103)
    axes[2].legend(fontsize=5.5, loc="best", ncol=2)
    fig.suptitle(
        title
        or "Robots outside the training set: colour = model, marker = family (robots without a distance not shown)",
        fontsize=10,
    )
    fig.tight_layout()
    return save_figure(fig, canvas, path)


def plot_finetuning(rows: Iterable[Sequence], path: str | Path, title: str | None = None) -> Path:
    """Raw position errors [mm] (left, log axis) and raw success [%] (right) against fine-tuning examples.

    Args:
        rows: ``(examples, CPU minutes, best-of-S position error [mm], mean position error [mm], success [%])``;
            0 examples (the model before fine-tuning) is drawn at 1 on the log axis.
        path: output ``.png``.
    Returns the path written.
    """
    a = np.array([[float(v) for v in r] for r in rows], dtype=np.float64).reshape(-1, 5)
    if not len(a):
        raise ValueError("plot_finetuning needs at least one row")
    if (a[:, 0] < 0).any():
        raise ValueError(f"fine-tuning examples must be >= 0, got {a[:, 0].tolist()}")
    fig, canvas = new_figure((10.0, 4.3))
    ax1, ax2 = fig.subplots(1, 2)
    x = np.maximum(a[:, 0], 1.0)
    ax1.plot(x, a[:, 2], "o-", label="best of S")
    ax1.plot(x, a[:, 3], "s--", label="mean over samples")
    ax1.set_yscale("log")
    ax1.set_ylabel("raw position error [mm]", fontsize=8)
    ax1.legend(fontsize=8)
    ax2.plot(x, a[:, 4], "o-")
    ax2.set_ylabel("raw success [%] (best of S: 1 cm and 1 deg)", fontsize=8)
    ax2.set_ylim(-3, 103)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_xlabel("fine-tuning examples (0 drawn at 1)")
        ax.grid(True, alpha=0.3)
        for xi, cpu in zip(x, a[:, 1]):
            ax.annotate(f"{cpu:.1f} CPU-min", (xi, ax.get_ylim()[0]), fontsize=6, rotation=90, va="bottom")
    fig.suptitle(title or "Fine-tuning", fontsize=10)
    fig.tight_layout()
    return save_figure(fig, canvas, path)
