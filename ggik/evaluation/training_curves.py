"""Training curves of ``ggik train`` runs: the records of ``RUN_DIR/metrics.jsonl``, a power-law fit of the
validation error against examples seen, and a figure of loss terms and validation success.

A run's records are JSON lines with a ``kind``: ``train`` records carry ``examples``, ``free_se`` [m^2] and ``kl``
[nats]; ``val`` records carry ``examples`` and, per validation robot R, ``val/R/success`` (fraction) and
``val/R/pos_err_best_m`` (best-of-S position error [m]) for pose goals (other goal kinds' ``val/R/<kind>/...`` keys
are left out).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from ggik.checkpoint import load_checkpoint, training_budget
from ggik.training.validation import family

__all__ = [
    "read_metrics",
    "mean_best_error",
    "power_law_fit",
    "power_law_lines",
    "throughput_lines",
    "run_budget_line",
    "plot_training_curves",
]


def read_metrics(run: str | Path) -> tuple[list[dict], list[dict]]:
    """(train records, validation records) of ``run/metrics.jsonl``, in file order; other kinds (e.g. the ``init``
    record of a fine-tuning run) are skipped."""
    path = Path(run) / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{run}: no metrics.jsonl (not a training run folder, or not started)")
    train: list[dict] = []
    val: list[dict] = []
    for line in path.read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] in ("train", "val"):
            (train if rec["kind"] == "train" else val).append(rec)
    return train, val


def _pose_robots(record: dict) -> list[str]:
    """The robots of a validation record (its pose keys ``val/<robot>/pos_err_best_m``: other goal kinds add a part)."""
    return [
        k.split("/")[1] for k in record if k.startswith("val/") and k.count("/") == 2 and k.endswith("/pos_err_best_m")
    ]


def family_means(record: dict) -> dict[str, tuple[float, float]]:
    """Per family of validation robots (:func:`ggik.training.validation.family`): (raw success, best-of-S position
    error [m]) of pose goals, averaged over the family's robots of the record (records of any age: from the per-robot
    keys)."""
    groups: dict[str, list[str]] = {}
    for robot in _pose_robots(record):
        groups.setdefault(family(robot), []).append(robot)
    return {
        fam: (
            sum(record.get(f"val/{r}/success", math.nan) for r in robots) / len(robots),
            sum(record[f"val/{r}/pos_err_best_m"] for r in robots) / len(robots),
        )
        for fam, robots in groups.items()
    }


def mean_best_error(record: dict) -> float:
    """Validation best-of-S position error [m], averaged over the record's training robots (not over the robots of
    the validation families: a fit over a run whose validation set grew stays a fit of one quantity), or over all its
    robots when it has no training robots (a run on random robots alone)."""
    means = family_means(record)
    return means["named"][1] if "named" in means else sum(e for _, e in means.values()) / len(means)


def power_law_fit(val: list[dict], skip_examples: int = 0) -> tuple[float, float]:
    """Least-squares fit of log(best-of-S error) = log(a) + b log(examples) over validation records.

    Returns (a [m], b). Only records past ``skip_examples`` are used (the first ones are a different regime).
    Raises ValueError with fewer than 3 such records.
    """
    pts = [(math.log(r["examples"]), math.log(mean_best_error(r))) for r in val if r["examples"] > skip_examples]
    if len(pts) < 3:
        raise ValueError(
            f"a power-law fit needs at least 3 validation records past {skip_examples} examples, got {len(pts)}"
        )
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    return math.exp(my - b * mx), b


def power_law_lines(run: str | Path, skip_examples: int) -> list[str]:
    """The report of :func:`power_law_fit` of a run's validation records: the law, the points used, the current
    error, and (for a falling error) the examples at which the law would reach 10 mm."""
    _, val = read_metrics(run)
    a, b = power_law_fit(val, skip_examples)
    used = [r for r in val if r["examples"] > skip_examples]
    lines = [
        f"{run}: mean best-of-S error ~ {a:.3g} m * examples^{b:.3f} over {len(used)} validation points "
        f"({used[0]['examples']:,}..{used[-1]['examples']:,} examples); now {1e3 * mean_best_error(used[-1]):.1f} mm"
    ]
    if b < 0:
        lines.append(
            f"  extrapolated to 10 mm at {(0.01 / a) ** (1 / b):.3g} examples (an extrapolation, not a measurement)"
        )
    return lines


def throughput_lines(run: str | Path) -> list[str]:
    """Training examples per second of a run's records, per device they name (records written before the ``device``
    field read as "unnamed"): the median and the quartiles over the records, each the rate of its last log
    interval (the first record of a sitting includes the warm-up and compilation)."""
    train, _ = read_metrics(run)
    rates: dict[str, list[float]] = {}
    for r in train:
        if "examples_per_s" in r:
            rates.setdefault(r.get("device", "unnamed"), []).append(r["examples_per_s"])
    lines = []
    for device, v in rates.items():
        v = sorted(v)
        q1, med, q3 = (v[min(len(v) - 1, int(f * len(v)))] for f in (0.25, 0.5, 0.75))
        lines.append(
            f"{run}: {device}: {len(v)} records, examples/s median {med:,.0f} (quartiles {q1:,.0f}-{q3:,.0f}, "
            f"range {v[0]:,.0f}-{v[-1]:,.0f})"
        )
    return lines


def run_budget_line(ckpt_path: str | Path) -> str:
    """One line: the run's folder name, then steps, examples and the CPU time of its checkpoint."""
    ckpt_path = Path(ckpt_path)
    return f"{ckpt_path.parent.name}: {training_budget(load_checkpoint(ckpt_path))}"


def plot_training_curves(runs: list[str | Path], path: str | Path, dpi: int = 110) -> Path:
    """Four panels against training examples seen, one curve per run (per run and robot for validation): free-node
    squared error [m^2] and KL [nats] of the training records, validation success [%] and best-of-S position
    error [mm]. A single run with a ``last.pt`` gets its training budget as the title. Writes the PNG at ``path``
    (folders created) and returns it; needs matplotlib."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    paths = [Path(r) for r in runs]
    fig = Figure(figsize=(18, 4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, 4)
    for run in paths:
        train, val = read_metrics(run)
        ex = [r["examples"] for r in train]
        axes[0].plot(ex, [r["free_se"] for r in train], label=run.name)
        axes[1].plot(ex, [r["kl"] for r in train], label=run.name)
        if val:
            # the training robots one by one, the robots of the validation families as their families' means
            robots = sorted({r for rec in val for r in _pose_robots(rec) if family(r) == "named"})
            curves = [(robot, lambda rec, r=robot: rec.get(f"val/{r}/success"), "-") for robot in robots]
            errors = {robot: (lambda rec, r=robot: rec.get(f"val/{r}/pos_err_best_m")) for robot in robots}
            families = sorted({f for rec in val for f in family_means(rec)} - {"named"})
            for fam in families:
                curves.append((f"{fam} (mean)", lambda rec, f=fam: family_means(rec).get(f, (None,))[0], "--"))
                errors[f"{fam} (mean)"] = lambda rec, f=fam: family_means(rec).get(f, (None, None))[1]
            for name, success, style in curves:
                lbl = f"{run.name}: {name}" if len(paths) > 1 else name
                rows = [rec for rec in val if success(rec) is not None]  # validation sets may grow on a resume
                x = [rec["examples"] for rec in rows]
                axes[2].plot(x, [100 * success(rec) for rec in rows], style, marker="o", label=lbl)
                axes[3].plot(x, [1e3 * errors[name](rec) for rec in rows], style, marker="o", label=lbl)
        if len(paths) == 1 and (run / "last.pt").is_file():
            fig.suptitle(run_budget_line(run / "last.pt"), fontsize=9)
    titles = [
        "free-node squared error [m^2] (train, posterior)",
        "KL [nats] (train)",
        "validation success [%] (best of S, 1 cm & 1 deg)",
        "validation best-of-S position error [mm]",
    ]
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training examples seen")
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[3].set_yscale("log")
    for ax in (axes[0], axes[2]):
        ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    return path
