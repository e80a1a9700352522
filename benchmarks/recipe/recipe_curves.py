"""Training curves of the recipe benchmark's runs, against CPU time: the posterior reconstruction error of the
training batches (the decoder's ceiling as training goes) and the KL, one line per variant."""

from __future__ import annotations

import math
from pathlib import Path

from ggik.evaluation.plots import new_figure, save_figure
from ggik.evaluation.training_curves import read_metrics

__all__ = ["plot_recipe_curves"]


def plot_recipe_curves(
    runs: dict[str, str | Path], path: str | Path, title: str | None = None, smooth: int = 10
) -> Path:
    """Plot ``runs`` (variant name -> run folder with ``metrics.jsonl``) to the PNG ``path``.

    Left: root of the posterior reconstructions' squared error summed over the free nodes, sqrt(free_se) [mm];
    right: KL [nats per graph]; x: the run's CPU minutes; a running mean over ``smooth`` records. Runs without records
    are skipped; raises ValueError if none has any.
    """
    fig, canvas = new_figure((11.0, 4.0))
    ax_rec, ax_kl = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    drawn = 0
    for name, run in sorted(runs.items()):
        train, _ = read_metrics(run)
        train = [r for r in train if "cpu_s" in r]
        if not train:
            continue
        x = [r["cpu_s"] / 60.0 for r in train]
        for ax, values in (
            (ax_rec, [1e3 * math.sqrt(max(r["free_se"], 0.0)) for r in train]),
            (ax_kl, [r["kl"] for r in train]),
        ):
            windows = [values[max(0, i - max(1, smooth) + 1) : i + 1] for i in range(len(values))]
            ax.plot(x, [sum(w) / len(w) for w in windows], label=name, lw=1.2)
        drawn += 1
    if not drawn:
        raise ValueError("no run with training records to plot")
    ax_rec.set_yscale("log")
    ax_rec.set_ylabel("posterior sqrt(free_se) [mm]")
    ax_kl.set_ylabel("KL [nats per graph]")
    for ax in (ax_rec, ax_kl):
        ax.set_xlabel("CPU minutes")
        ax.grid(alpha=0.3)
    ax_kl.legend(fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, canvas, path)
