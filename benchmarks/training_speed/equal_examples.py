"""Training runs compared at an equal number of examples: the loss terms of each run averaged over the same windows of
examples trained since a common step, and each run's last validation (issue 61: the learning rate at a large batch,
and the model's width, chosen on curves, not assumed).

Runs that branch from one checkpoint (``ggik train --resume`` of copies of one run folder with other ``--set
data.batch_size`` / ``optim.lr``) see the same data distribution, so their training losses compare directly at equal
examples; their validation compares where their ``val`` sections agree (the table names each run's goals). Runs from
scratch (``--since-step 0``) compare the same way, and also per CPU-minute (``--axis cpu``).

Command (from the repository root; the runs of ``lr_batch_study.sh``)::

    python -m benchmarks.training_speed.equal_examples --since-step 1645 --windows 4 \\
        --runs "512, 3e-4=runs/lr_batch/b512_lr3e-4" "2048, 3e-4=runs/lr_batch/b2048_lr3e-4" \\
        --out benchmarks/training_speed/results/lr_batch
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from ggik.errors import GGIKError
from ggik.evaluation.report import Table

__all__ = ["read_run", "window_means", "equal_examples_table", "main"]

TERMS = ("loss", "free_se", "kl")
ARMS = ("panda", "lbr_iiwa", "schunk_lwa4d", "schunk_lwa4p", "ur10")


def read_run(run: Path, since_step: int) -> tuple[list[dict], list[dict], dict]:
    """(train records, validation records) of ``run`` past ``since_step``, each with ``x`` = examples since that step
    and ``cpu_min`` (the run's CPU minutes since then, where recorded), and the run's ``batch_size`` / ``lr`` / val
    protocol. GGIKError for a folder without metrics or without records past the step."""
    path = run / "metrics.jsonl"
    if not path.is_file():
        raise GGIKError(f"{run}: no metrics.jsonl")
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    start = [r for r in records if r.get("kind") == "train" and r["step"] <= since_step]
    base_examples = max((r["examples"] for r in start), default=0) if since_step > 0 else 0
    base_cpu = max((r.get("cpu_s", 0.0) for r in start), default=0.0) if since_step > 0 else 0.0
    train, val = [], []
    cpu = base_cpu
    for r in records:
        if r.get("kind") not in ("train", "val") or r["step"] <= since_step:
            continue
        r = {**r, "x": r["examples"] - base_examples}
        if r["kind"] == "train":
            cpu = r.get("cpu_s", cpu)
            train.append({**r, "cpu_min": (cpu - base_cpu) / 60.0})
        else:
            val.append({**r, "cpu_min": (cpu - base_cpu) / 60.0})
    if not train:
        raise GGIKError(f"{run}: no training records past step {since_step}")
    batch = math.nan
    if (run / "config.yaml").is_file():  # the batch the run trains at now (a resumed run may have changed it)
        import yaml

        batch = (yaml.safe_load((run / "config.yaml").read_text(encoding="utf-8")) or {}).get("data", {})
        batch = batch.get("batch_size", math.nan)
    info = {"batch": batch, "lr": train[-1].get("lr", math.nan)}
    return train, val, info


def window_means(train: list[dict], edges: list[float], axis: str = "x") -> list[dict[str, float]]:
    """Per window [edges[k], edges[k+1]) of ``axis`` ("x": examples since the start; "cpu_min"), the mean of each
    term of :data:`TERMS` over the records in it (nan in an empty window). A record stands for the examples of its
    log interval, ending at its ``x``."""
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = [r for r in train if lo < r[axis] <= hi]
        out.append({t: (sum(r[t] for r in inside) / len(inside) if inside else math.nan) for t in TERMS})
    return out


def equal_examples_table(runs: dict[str, Path], since_step: int, windows: int, axis: str = "x") -> Table:
    """One row per run and window: the window's mean loss, reconstruction (free_se) and KL, then the run's last
    validation before the window's end (success per arm of the paper's five that it validates, its protocol)."""
    data = {name: read_run(path, since_step) for name, path in runs.items()}
    common = min(max(r[axis] for r in train) for train, _, _ in data.values())  # every run reached this much
    edges = [common * k / windows for k in range(windows + 1)]
    unit = "examples" if axis == "x" else "CPU-minutes"
    columns = ["run", "batch", "lr", f"{unit} window", "mean loss", "mean free_se [m^2]", "mean kl [nats]"]
    columns += ["last val at", "val goals", *[f"val {a} [%]" for a in ARMS]]
    table = Table(f"Training runs at equal {unit} since step {since_step}", columns)
    for name, (train, val, info) in data.items():
        for k, means in enumerate(window_means(train, edges, axis)):
            hi = edges[k + 1]
            before = [v for v in val if v[axis] <= hi]
            last = before[-1] if before else {}
            success = [100 * last[f"val/{a}/success"] if f"val/{a}/success" in last else math.nan for a in ARMS]
            window = f"{edges[k]:,.0f}-{hi:,.0f}" if axis == "x" else f"{edges[k]:.1f}-{hi:.1f}"
            table.add(name, info["batch"], info["lr"], window, means["loss"], means["free_se"],
                      means["kl"], f"{last[axis]:,.0f}" if last else "none", last.get("val/protocol", "ours") if last
                      else "n/a", *success)  # fmt: skip
    table.notes += [
        f"Windows: {windows} equal parts of the {unit} every run reached ({common:,.0f}), counted since step "
        f"{since_step}; a training record stands for its log interval.",
        "val: the run's last validation at or before the window's end (raw best of val.samples within 1 cm and 1 deg, "
        "val.problems_per_robot goals per arm; 'ours': q within the limits, 'paper': the paper's goals); runs "
        "compare only on the same goals.",
    ]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", nargs="+", required=True, help="NAME=RUN_DIR, two or more")
    ap.add_argument("--since-step", type=int, default=0, help="the step the runs branched from (0: from scratch)")
    ap.add_argument("--windows", type=int, default=4, help="windows of equal examples")
    ap.add_argument("--axis", choices=["examples", "cpu"], default="examples", help="compare at equal examples or CPU")
    ap.add_argument("--out", required=True, help="output stem (.md and .csv)")
    args = ap.parse_args(argv)
    runs = {}
    for item in args.runs:
        name, sep, path = item.rpartition("=")
        if not sep or not name:
            raise GGIKError(f"--runs takes NAME=RUN_DIR, got {item!r}")
        runs[name] = Path(path)
    if len(runs) < 2 or args.windows < 1 or args.since_step < 0:
        raise GGIKError("--runs needs two or more runs, --windows >= 1 and --since-step >= 0")
    table = equal_examples_table(runs, args.since_step, args.windows, "x" if args.axis == "examples" else "cpu_min")
    table.write(args.out, model="none (the runs' training records: " + ", ".join(str(p) for p in runs.values()) + ")")
    print(table.body())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
