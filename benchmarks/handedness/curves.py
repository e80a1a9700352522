"""The validation curves of training runs side by side, per CPU-minute: raw success (best of 32 within 1 cm and 1 deg)
on each run's validation goals, per arm and over all, against the run's CPU time at that step.

Runs started with the same config sections ``val`` and ``data`` validate on the same goals, so their curves compare
(issue 56: the model that reads handedness against v10 continued with the same data). ``--start CKPT`` validates the
model both runs started from on the same goals, with the first run's config, as every curve's point at CPU-minute 0.
Command::

    python -m benchmarks.handedness.curves runs/handedness runs/handedness_control --names handed control \
        --start ggik/weights/ggik_default.pt --out benchmarks/handedness/results/curves
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ggik.evaluation.report import model_stamp
from ggik.fileio import atomic_write_text
from ggik.typed_config import from_dict, load_yaml

__all__ = ["read_curve", "curves_table", "main"]


def read_curve(run: Path) -> list[dict]:
    """The validation records of ``run``/metrics.jsonl, each with ``cpu_min`` (the CPU time of the run's training
    record at that step, over all sittings) and ``success`` {arm: share} of pose goals."""
    train_cpu: dict[int, float] = {}
    vals = []
    for line in (run / "metrics.jsonl").read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "train" and "cpu_s" in rec:
            train_cpu[int(rec["step"])] = float(rec["cpu_s"])
        elif rec.get("kind") == "val":
            vals.append(rec)
    out = []
    for rec in vals:
        step = int(rec["step"])
        before = [s for s in train_cpu if s <= step]
        cpu = train_cpu[max(before)] / 60.0 if before else 0.0
        success = {
            k.split("/")[1]: float(v)
            for k, v in rec.items()
            if k.startswith("val/") and k.endswith("/success") and k.count("/") == 2
        }
        out.append({"step": step, "cpu_min": cpu, "success": success})
    return out


def start_point(ckpt: str, run: Path) -> dict:
    """The validation of checkpoint ``ckpt`` on the goals of ``run`` (its config.yaml), as a curve point at 0."""
    import torch

    from ggik.checkpoint import load_model
    from ggik.training.config import TrainConfig
    from ggik.training.validation import validate, validation_groups, validation_problems

    cfg = from_dict(TrainConfig, load_yaml(run / "config.yaml"))
    model = load_model(ckpt)[0]
    groups = validation_groups(validation_problems(cfg), model.cfg.graph)
    rec = validate(model, groups, cfg, torch.device("cpu"))
    success = {k.split("/")[1]: float(v) for k, v in rec.items() if k.endswith("/success") and k.count("/") == 2}
    return {"step": 0, "cpu_min": 0.0, "success": success}


def curves_table(curves: dict[str, list[dict]]) -> str:
    """Markdown: per run and validation step, CPU-minutes, the mean over arms and each arm's raw success [%]."""
    arms = sorted({a for c in curves.values() for r in c for a in r["success"]})
    head = ["run", "step", "CPU-min", "mean", *arms]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, curve in curves.items():
        for r in curve:
            s = r["success"]
            mean = sum(s.values()) / len(s) if s else float("nan")
            cells = [name, str(r["step"]), f"{r['cpu_min']:.1f}", f"{100 * mean:.1f}"]
            cells += [f"{100 * s[a]:.1f}" if a in s else "-" for a in arms]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(curves: dict[str, list[dict]], path: Path) -> None:
    """Raw success against CPU-minutes: the mean over arms (solid) and the Panda (dashed), one colour per run."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in curves.items():
        x = [r["cpu_min"] for r in curve]
        mean = [100 * sum(r["success"].values()) / max(len(r["success"]), 1) for r in curve]
        (line,) = ax.plot(x, mean, marker="o", label=f"{name}: mean of the arms")
        if all("panda" in r["success"] for r in curve):
            ax.plot(x, [100 * r["success"]["panda"] for r in curve], "--", marker="s", color=line.get_color(),
                    label=f"{name}: Panda")  # fmt: skip
    ax.set_xlabel("CPU-minutes of training (one thread)")
    ax.set_ylabel("raw success, best of 32 [%]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--names", nargs="*", default=None, help="one name per run (default: the folder names)")
    p.add_argument("--start", help="the checkpoint every run started from: validated as each curve's first point")
    p.add_argument("--out", type=Path, required=True, help="writes OUT.md and OUT.png")
    a = p.parse_args(argv)
    names = a.names or [r.name for r in a.runs]
    if len(names) != len(a.runs):
        p.error(f"{len(names)} names for {len(a.runs)} runs")
    curves = {n: read_curve(r) for n, r in zip(names, a.runs)}
    if a.start:
        first = start_point(a.start, a.runs[0])
        curves = {n: [first, *c] for n, c in curves.items()}
    table = curves_table(curves)
    model = "Model: each run's own checkpoints as it trained (the validation it logged)"
    if a.start:
        model += f"; the first point of every curve: {model_stamp(a.start)}"
    title = f"# Validation curves ({', '.join(map(str, a.runs))})"
    atomic_write_text(a.out.with_suffix(".md"), f"{title}\n\n{model}\n\n{table}")
    plot(curves, a.out.with_suffix(".png"))
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
