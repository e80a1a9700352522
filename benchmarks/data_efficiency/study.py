"""Data efficiency on a CPU: the validation error against examples seen, per training recipe, with fitted power laws.

Every variant trains the shipped architecture (residual inputs, two learned Gauss-Newton moves) from scratch on one
protocol, with a constant learning rate after 100 warm-up steps and the KL weight warmed up over 300 steps (so that a
short budget is not spent inside a schedule), on one CPU thread, and differs only by :data:`VARIANTS` [name]: batch
size, learning rate, goal-kind mix, width, and one schedule (a cosine over the run's length: :data:`SCHEDULED` variants
are not extended and not fitted). The trainer validates every ``--every`` examples (the same number of examples for
every batch size) on the run's fixed problems: ``val.problems_per_robot`` pose goals per robot, 32 samples each, raw
best of 32 ("raw": the model's point sets, angles recovered, no solver). Runs live in ``RUNS/PROTOCOL/VARIANT`` and are
resumable: a larger ``--examples`` continues a run.

The table has one row per variant and validation point (examples, steps, CPU minutes, mean best-of-32 position error
[mm], raw success at 1 cm & 1 deg), and its notes the fit error ~ a * examples^b of each variant over its points past
the first (:func:`ggik.evaluation.training_curves.power_law_fit`) with, for a curve spanning at least
:data:`MIN_SPAN` times in examples, the examples and CPU-hours at which the law reaches 15 and 10 mm: extrapolations,
not measurements.

Run by ``python -m benchmarks.data_efficiency.data_efficiency --protocol panda --variants b128-lr1e-3 b512-lr1e-3
--examples 122880 --every 20480 [--runs runs/data_efficiency] [--out FILE] [--curves FILE.png]``. Run it alone on
the machine (one thread for training; the CPU-hours assume this machine's speed).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from benchmarks.common.scripts import BenchmarkError
from ggik.evaluation.report import Table
from ggik.evaluation.training_curves import mean_best_error, plot_training_curves, power_law_fit, read_metrics
from ggik.typed_config import merge

__all__ = [
    "BASE",
    "VARIANTS",
    "SCHEDULED",
    "PROTOCOLS",
    "MIN_SPAN",
    "run_config",
    "train_variant",
    "variant_rows",
    "study_table",
]

#: a power law read off fewer than this many times the examples is not extrapolated: early points of a short run are
#: the transient of the start (a low learning rate's slow start made a 2.5x-long curve predict 10 mm at 0.5 M examples)
MIN_SPAN = 10.0

NAMED = ["ur10", "lbr_iiwa", "panda", "schunk_lwa4d", "schunk_lwa4p", "kuka_lwr", "irb140", "kr16_2", "puma560"]

#: overrides of TrainConfig shared by every variant (see the module docstring)
BASE: dict = {
    "model": {"residual_inputs": True, "gn_steps": 2},
    "optim": {"schedule": "constant", "warmup_steps": 100},
    "loss": {"rec_gain": 1000.0, "beta_warmup_steps": 300},
    "val": {"problems_per_robot": 50, "samples": 32, "goal_kinds": ["pose"]},
    "checkpoint_every": 100,
    "log_every": 10,
    "threads": 1,
    "cpu_micro_batch": 32,
}

#: variant name -> overrides of BASE: batch size and learning rate (v4-v6 trained at 5e-5 to 1e-4, v7 at 1e-3), the
#: goal-kind mix and the model's width
VARIANTS: dict[str, dict] = {
    "b128-lr1e-3": {"data": {"batch_size": 128}, "optim": {"lr": 1e-3}},
    "b512-lr1e-3": {"data": {"batch_size": 512}, "optim": {"lr": 1e-3}},
    "b128-lr1e-4": {"data": {"batch_size": 128}, "optim": {"lr": 1e-4}},
    "b64-lr1e-3": {"data": {"batch_size": 64}, "optim": {"lr": 1e-3}},
    "b128-lr3e-3": {"data": {"batch_size": 128}, "optim": {"lr": 3e-3}},
    # the goal-kind mix (the multi protocol trains pose, position+axis and position goals; validation is pose goals)
    "b128-lr1e-3-pose": {"data": {"batch_size": 128, "goal_kinds": {"pose": 1.0}}, "optim": {"lr": 1e-3}},
    # model width: 1.5x the shipped node features and hidden width (about 2.2x the parameters)
    "b128-lr1e-3-wide": {"data": {"batch_size": 128}, "optim": {"lr": 1e-3}, "model": {"dim": 96, "hidden": 192}},
    # the schedule: cosine from 1e-3 to 5e-5 over the run's --examples (its validation points before the end are
    # mid-schedule: the run is one measurement, at its end, against the constant rate's curve at the same examples)
    "b128-lr1e-3-cosine": {"data": {"batch_size": 128}, "optim": {"lr": 1e-3, "schedule": "cosine"}},
}

#: variants whose learning rate depends on the run's length: a run is not extended, and its curve is not fitted
SCHEDULED = {name for name, v in VARIANTS.items() if v.get("optim", {}).get("schedule", "constant") != "constant"}

#: protocol -> data overrides (the validation robots are the training robots)
PROTOCOLS: dict[str, dict] = {
    "panda": {"robots": {"panda": 1.0}, "goal_kinds": {"pose": 1.0}, "sampler": "stacked"},
    "multi": {"robots": {name: 1.0 for name in NAMED}, "sampler": "stacked", "random_weight": 0.0},
}


def run_config(variant: str, protocol: str, every: int, overrides: dict | None = None) -> dict:
    """The full TrainConfig overrides of a run: BASE + protocol + variant, validating every ``every`` examples
    (a multiple of the variant's batch size) [+ ``overrides``, e.g. a tiny model in tests]."""
    if variant not in VARIANTS:
        raise BenchmarkError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    if protocol not in PROTOCOLS:
        raise BenchmarkError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    cfg = merge(merge(merge(BASE, {"data": PROTOCOLS[protocol]}), VARIANTS[variant]), overrides or {})
    batch = cfg["data"]["batch_size"]
    if every % batch:
        raise BenchmarkError(f"--every {every} is not a multiple of {variant}'s batch size {batch}")
    return merge(cfg, {"val": {"every": every // batch}})


def train_variant(run_dir: Path, cfg_overrides: dict, examples: int, progress: bool = True) -> dict:
    """Train (or continue) the run in ``run_dir`` to ``examples`` examples (rounded down to whole steps). Returns
    {"examples", "steps", "cpu_min"} of the run after training."""
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer
    from ggik.typed_config import from_dict

    cfg = from_dict(TrainConfig, cfg_overrides)
    steps = examples // cfg.data.batch_size
    if (run_dir / "last.pt").is_file():
        if cfg.optim.schedule != "constant":
            from ggik.checkpoint import read_checkpoint

            recorded = read_checkpoint(run_dir / "last.pt")["config"]["steps"]
            if recorded != steps:
                raise BenchmarkError(
                    f"{run_dir}: a {cfg.optim.schedule} schedule ends at the run's length ({recorded} steps); "
                    f"--examples {examples} would change it mid-run: use another --runs folder"
                )
        trainer = Trainer.resume(run_dir, {"steps": steps}, progress=progress)
        cfg.steps = steps
        if trainer.cfg != cfg:
            raise BenchmarkError(f"{run_dir} holds a run of another configuration; use another --runs folder")
    else:
        cfg.steps = steps
        trainer = Trainer(cfg, run_dir, progress=progress)
    trainer.train()
    return {"examples": trainer.examples, "steps": trainer.step, "cpu_min": trainer.cpu_s / 60.0}


def _success(record: dict) -> float:
    """Raw success (best of S within 1 cm & 1 deg) of a validation record, averaged over its robots."""
    vals = [v for k, v in record.items() if k.startswith("val/") and k.count("/") == 2 and k.endswith("/success")]
    return sum(vals) / len(vals)


def variant_rows(run_dir: Path) -> tuple[list[list], str]:
    """The table rows of one run's validation records and the note of its power-law fit."""
    train, val = read_metrics(run_dir)
    if not val:
        raise BenchmarkError(f"{run_dir} has no validation record yet: train it past --every examples")
    cpu_at = {r["step"]: r.get("cpu_s", float("nan")) for r in train}
    rows = [
        [
            r["examples"],
            r["step"],
            cpu_at.get(r["step"], float("nan")) / 60.0,
            1e3 * mean_best_error(r),
            100 * _success(r),
        ]
        for r in val
    ]
    name = run_dir.name
    if name in SCHEDULED:
        return rows, f"{name}: a scheduled learning rate; its last point is the measurement (not fitted)"
    if len(val) < 4:
        return rows, f"{name}: {len(val)} validation points, too few for a fit past the first"
    a, b = power_law_fit(val, skip_examples=val[0]["examples"])
    law = f"{name}: best of 32 ~ {1e3 * a:.4g} mm * examples^{b:.3f} over {len(val) - 1} points"
    span = val[-1]["examples"] / val[1]["examples"]
    if span < MIN_SPAN:
        return rows, law + f", which span {span:.2g}x in examples: too short a curve to extrapolate (< {MIN_SPAN}x)"
    per_cpu_s = train[-1]["examples"] / train[-1]["cpu_s"] if train and train[-1].get("cpu_s") else float("nan")
    fits = [("", a, b)]
    half = [r for r in val if r["examples"] >= val[-1]["examples"] / 2]
    if len(half) >= 4:  # the last doubling alone: where the curve is now, not where it started
        a2, b2 = power_law_fit(half, skip_examples=0)
        law += f"; over the last doubling ({len(half)} points) ~ {1e3 * a2:.4g} mm * examples^{b2:.3f}"
        fits.append((" (last doubling's law)", a2, b2))
    reach = []
    for label, a_, b_ in fits:
        for mm in (15, 10):
            log_ex = math.log(mm * 1e-3 / a_) / b_ if b_ < 0 else math.inf
            ex = math.exp(log_ex) if log_ex < 700 else math.inf  # a flat law reaches it never
            reach.append(
                f"{mm} mm{label} at {ex:.3g} examples ({ex / per_cpu_s / 3600:.3g} CPU-hours at {per_cpu_s:.0f}/s)"
            )
    return rows, law + "; extrapolated: " + ", ".join(reach)


def study_table(args: argparse.Namespace) -> Table:
    """Train (unless ``args.measure_only``) and tabulate the runs ``args`` names (the options of the script)."""
    table = Table(
        f"Data efficiency, {args.protocol} protocol: validation against examples, one CPU thread",
        ["variant", "examples", "steps", "CPU-min", "best of 32 [mm]", "raw 1cm&1deg [%]"],
    )
    dirs = [Path(args.runs) / args.protocol / v for v in args.variants]
    for variant, run_dir in zip(args.variants, dirs):
        if not args.measure_only:
            cfg = run_config(variant, args.protocol, args.every)
            print(variant, train_variant(run_dir, cfg, args.examples, not args.no_progress), flush=True)
        rows, note = variant_rows(run_dir)
        for row in rows:
            table.add(variant, *row)
        table.notes.append(note)
    table.notes.append(
        f"validation: the trainer's fixed problems, {BASE['val']['problems_per_robot']} pose goals per robot, "
        "32 samples, raw; fits over each run's points past the first; CPU minutes of training and validation"
    )
    if args.curves:
        print("wrote", plot_training_curves(dirs, args.curves))
    return table
