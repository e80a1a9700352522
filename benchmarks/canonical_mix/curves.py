"""The canonical-mix study (what :mod:`benchmarks.canonical_mix.mix_curves` runs): fine-tuning curves on canonical
graphs, raw success per family of validation robots against the examples of the fine-tune.

Every point is the validation of one training run (:func:`ggik.training.validation.validate`) on the validation set
of a training config (:func:`ggik.training.validation.validation_problems`: the training arms, random DH robots,
link-randomised and reframed training arms, ``val.problems_per_robot`` problems each, best of ``val.samples`` within
1 cm and 1 degree). Points come from checkpoints (validated here) or from the val records a run wrote (validated by
the trainer with the same function on the same set when its config's ``val`` section is that of the config). A
checkpoint trained on other graphs than the study's (v9's weights, "frames") is read on the study's graphs and counts
as 0 examples of the fine-tune.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
from pathlib import Path

import torch

from benchmarks.common.robots import load_bench_model
from benchmarks.common.scripts import BenchmarkError
from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.evaluation.training_curves import family_means
from ggik.graph.conventions import GRAPH_CONVENTIONS
from ggik.training.config import TrainConfig
from ggik.training.validation import validate, validation_groups, validation_problems
from ggik.typed_config import from_dict, load_yaml

__all__ = ["FAMILY_COLUMNS", "labelled", "checkpoint_points", "metrics_points", "plot", "study_table"]

#: (column, metric key of a val record): raw success per family and goal kind
FAMILY_COLUMNS = [
    ("training arms, pose", "val/family/named/success_mean"),
    ("training arms reframed, pose", "val/family/reframed/success_mean"),
    ("link-randomised arms (0.2), pose", "val/family/randomized/success_mean"),
    ("random DH robots, pose", "val/family/random/success_mean"),
    ("training arms, position", "val/family/named/position/success_mean"),
    ("link-randomised arms (0.2), position", "val/family/randomized/position/success_mean"),
    ("random DH robots, position", "val/family/random/position/success_mean"),
]


def labelled(text: str) -> tuple[str, Path]:
    label, sep, path = text.partition("=")
    if not sep or not label or not path:
        raise argparse.ArgumentTypeError(f"must be LABEL=VALUE, got {text!r}")
    return label, Path(path)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def checkpoint_points(cfg: TrainConfig, graph: str, ckpts: list[tuple[str, Path]]) -> list[tuple[str, str, int, dict]]:
    """(label, model, examples of the fine-tune, val record) per checkpoint, validated on ``graph`` graphs."""
    groups = validation_groups(validation_problems(cfg), graph)
    points = []
    for label, path in ckpts:
        model, ckpt = load_bench_model(path)
        own = model.cfg.graph
        model.cfg.graph = graph  # a model of other graphs is read on these: the start of the fine-tune
        try:
            model.cfg.check()
        except GGIKError as exc:
            raise BenchmarkError(f"--ckpt {path} on {graph} graphs: {exc}") from None
        examples = int(ckpt.get("examples", 0)) if own == graph else 0
        record = validate(model, groups, cfg, torch.device("cpu"))
        points.append((label, f"{path.name} ({_sha(path)}, step {ckpt.get('step', '?')})", examples, record))
    return points


def metrics_points(cfg: TrainConfig, runs: list[tuple[str, Path]]) -> list[tuple[str, str, int, dict]]:
    """(label, run, examples, val record) per val record of each run's metrics.jsonl; BenchmarkError for a run whose
    validation set is not that of ``cfg``."""
    points = []
    for label, path in runs:
        if not path.is_file():
            raise BenchmarkError(f"--metrics: {path} does not exist")
        run_cfg = path.parent / "config.yaml"
        if not run_cfg.is_file():
            raise BenchmarkError(f"--metrics: {run_cfg} is missing: the run's validation set cannot be checked")
        if _validation_set(from_dict(TrainConfig, load_yaml(run_cfg))) != _validation_set(cfg):
            raise BenchmarkError(f"--metrics: {run_cfg} validates on another set than --config")
        last = path.parent / "last.pt"
        name = f"{path.parent.name} (last.pt {_sha(last)})" if last.is_file() else path.parent.name
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "val" and set(family_means(record)) == {"named"}:
                for kind in ("", "position/"):  # the training arms alone: their means are the family's
                    if f"val/{kind}success_mean" in record:
                        record.setdefault(f"val/family/named/{kind}success_mean", record[f"val/{kind}success_mean"])
            if record.get("kind") == "val":
                points.append((label, f"{name}, step {record['step']}", int(record["examples"]), record))
    return points


def _validation_set(cfg: TrainConfig) -> tuple:
    """What decides a run's validation problems and how they are scored (not how often it validates)."""
    val = {k: v for k, v in vars(cfg.val).items() if k != "every"}
    return val, list(cfg.data.robots), list(cfg.data.random_dofs), cfg.model.graph, cfg.bf16  # robots in order


def plot(points: list[tuple[str, str, int, dict]], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, kind in zip(axes, ("pose", "position")):
        for c, (column, key) in enumerate(FAMILY_COLUMNS):
            if not column.endswith(kind):
                continue
            for label, style in zip(sorted({p[0] for p in points}), itertools.cycle(("-o", "--s", ":^", "-.d"))):
                xs = [(p[2], 100 * p[3][key]) for p in points if p[0] == label and key in p[3]]
                if xs:
                    xs.sort()
                    ax.plot(*zip(*xs), style, color=f"C{c}", label=f"{column.rsplit(',', 1)[0]} ({label})")
        ax.set(title=f"{kind} goals", xlabel="examples of the fine-tune", ylabel="raw success [%]")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def study_table(args: argparse.Namespace) -> Table:
    if args.graph not in GRAPH_CONVENTIONS:
        raise BenchmarkError(f"--graph must be one of {GRAPH_CONVENTIONS}")
    cfg = from_dict(TrainConfig, load_yaml(args.config))
    points = checkpoint_points(cfg, args.graph, args.ckpt) + metrics_points(cfg, args.metrics)
    if not points:
        raise BenchmarkError("nothing to measure: give --ckpt or --metrics")
    try:
        after = {label: int(str(n)) for label, n in args.after}
    except ValueError:
        raise BenchmarkError(f"--after takes LABEL=EXAMPLES (an integer), got {args.after}") from None
    unknown = sorted(set(after) - {p[0] for p in points})
    if unknown:
        raise BenchmarkError(f"--after names runs that are not measured: {unknown}")
    points = [(label, model, examples + after.get(label, 0), record) for label, model, examples, record in points]
    table = Table(
        "Fine-tuning on canonical graphs: raw success per family of validation robots",
        ["run", "model", "examples", *[c for c, _ in FAMILY_COLUMNS]],
    )
    for label, model, examples, record in sorted(points, key=lambda p: (p[0], p[2])):
        table.add(label, model, examples, *[100 * record.get(k, float("nan")) for _, k in FAMILY_COLUMNS])
    v = cfg.val
    table.notes.append(
        f"raw success [%], best of {v.samples} within 1 cm and 1 deg, {v.problems_per_robot} problems per robot: "
        f"{len(cfg.data.robots)} training arms, {v.reframed_robots} of them reframed (random_reframing, pose goals "
        f"only: the tool is moved off the last axis), {v.randomized_robots} link-randomised (scale "
        f"{v.randomize_fraction}), {v.random_robots} random DH robots of {cfg.data.random_dofs} DOF"
    )
    if args.curves:
        plot(points, args.curves)
        table.notes.append(f"curves: {args.curves}")
    return table
