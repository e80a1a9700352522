"""Training curves of one or more runs: loss terms and validation success against examples seen.

Usage: ``python eval/plot_training.py RUN_DIR [RUN_DIR ...] --out eval/results/curves.png``
Reads ``RUN_DIR/metrics.jsonl`` (written by ``ggik train``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def read(run: Path) -> tuple[list[dict], list[dict]]:
    train, val = [], []
    for line in (run / "metrics.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec["kind"] in ("train", "val"):  # skips e.g. the "init" record of a fine-tuning run
            (train if rec["kind"] == "train" else val).append(rec)
    return train, val


def mean_best_error(record: dict) -> float:
    """Validation best-of-S position error [m], averaged over the record's robots."""
    errs = [v for k, v in record.items() if k.startswith("val/") and k.endswith("/pos_err_best_m")]
    return sum(errs) / len(errs)


def power_law_fit(val: list[dict], skip_examples: int = 0) -> tuple[float, float]:
    """Least-squares fit of log(best-of-S error) = log(a) + b log(examples) over validation records.

    Returns (a [m], b). Only records past ``skip_examples`` are used (the first ones are a different regime).
    """
    import math

    pts = [(math.log(r["examples"]), math.log(mean_best_error(r))) for r in val if r["examples"] > skip_examples]
    if len(pts) < 3:
        raise ValueError(f"a power-law fit needs at least 3 validation records past {skip_examples} examples, got {len(pts)}")
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    return math.exp(my - b * mx), b


def budget(ckpt_path: Path) -> str:
    """One line: steps, examples and the CPU time of a run's checkpoint."""
    from ggik.checkpoint import load_checkpoint, training_budget

    return f"{ckpt_path.parent.name}: {training_budget(load_checkpoint(ckpt_path))}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--fit-after", type=int, metavar="EXAMPLES",
                    help="also print a power-law fit of the mean validation best-of-S error vs examples, from this many on")
    args = ap.parse_args(argv)
    if args.fit_after is not None:
        for run in map(Path, args.runs):
            _, val = read(run)
            a, b = power_law_fit(val, args.fit_after)
            used = [r for r in val if r["examples"] > args.fit_after]
            print(f"{run}: mean best-of-S error ~ {a:.3g} m * examples^{b:.3f} over {len(used)} validation points "
                  f"({used[0]['examples']:,}..{used[-1]['examples']:,} examples); now {1e3 * mean_best_error(used[-1]):.1f} mm")
            if b < 0:
                print(f"  extrapolated to 10 mm at {(0.01 / a) ** (1 / b):.3g} examples (an extrapolation, not a measurement)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(18, 4))
    for run in map(Path, args.runs):
        train, val = read(run)
        ex = [r["examples"] for r in train]
        axes[0].plot(ex, [r["free_se"] for r in train], label=run.name)
        axes[1].plot(ex, [r["kl"] for r in train], label=run.name)
        if val:
            vex = [r["examples"] for r in val]
            robots = sorted({k.split("/")[1] for r in val for k in r if k.startswith("val/") and k.count("/") == 2})
            for robot in robots:
                lbl = f"{run.name}: {robot}" if len(args.runs) > 1 else robot
                axes[2].plot(vex, [100 * r[f"val/{robot}/success"] for r in val], marker="o", label=lbl)
                axes[3].plot(vex, [1e3 * r[f"val/{robot}/pos_err_best_m"] for r in val], marker="o", label=lbl)
        if len(args.runs) == 1 and (run / "last.pt").is_file():
            fig.suptitle(budget(run / "last.pt"), fontsize=9)
    titles = ["free-node squared error [m^2] (train, posterior)", "KL [nats] (train)",
              "validation success [%] (best of S, 1 cm & 1 deg)", "validation best-of-S position error [mm]"]
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("training examples seen")
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[3].set_yscale("log")
    for ax in (axes[0], axes[2]):
        ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
