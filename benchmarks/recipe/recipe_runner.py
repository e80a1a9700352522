"""What ``python -m benchmarks.recipe.bench_recipe`` does with its arguments: train and/or measure variants, retime,
plot curves."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from benchmarks.recipe.recipe import PROTOCOLS, VARIANTS, recipe_rows, retime_rows, train_variant, write_recipe_table
from benchmarks.recipe.recipe_curves import plot_recipe_curves
from ggik.evaluation.tables import EvalConfig

__all__ = ["run_recipe_benchmark"]


def run_recipe_benchmark(args: argparse.Namespace, command: str) -> int:
    """Run ``python -m benchmarks.recipe.bench_recipe`` (its argparse namespace); ``command`` is recorded with the
    table. Returns 0; raises ValueError for contradictory arguments."""
    if args.train_only and args.measure_only:
        raise ValueError("--train-only and --measure-only exclude each other")
    if args.protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {args.protocol!r}; known: {', '.join(PROTOCOLS)}")
    unknown = [v for v in args.variant if v not in VARIANTS]
    if args.checkpoint and (len(args.variant) != 1 or args.train_only):
        raise ValueError("--checkpoint measures one checkpoint: give one --variant name and no --train-only")
    if unknown and not args.checkpoint:
        raise ValueError(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    if args.curves_only:
        if not args.curves:
            raise ValueError("--curves-only needs --curves PNG")
        return _curves(args)
    if args.retime:
        runs = {
            (args.protocol, v): args.checkpoint or Path(args.runs) / args.protocol / v / "last.pt" for v in args.variant
        }
        print(write_recipe_table(args.out, retime_rows(args.out, runs, cfg), command, cfg).read_text())
        return 0
    for variant in args.variant:
        run = Path(args.runs) / args.protocol / variant
        if not args.measure_only and not args.checkpoint:
            done = train_variant(run, variant, args.protocol, args.cpu_minutes, progress=not args.no_progress)
            print(
                f"{args.protocol}/{variant}: {done['cpu_min']:.1f} CPU-min, {done['examples']:,} examples, step "
                f"{done['steps']}"
            )
        if not args.train_only:
            torch.set_num_threads(args.threads)
            if args.checkpoint:
                run.mkdir(parents=True, exist_ok=True)
            rows = recipe_rows(run, args.protocol, variant, cfg, threads=args.threads, checkpoint=args.checkpoint)
            print(write_recipe_table(args.out, rows, command, cfg).read_text())
    return _curves(args) if args.curves else 0


def _curves(args: argparse.Namespace) -> int:
    """Plot the training curves of the runs of ``args.variant`` (under ``args.runs/args.protocol``) to
    ``args.curves``."""
    runs = {v: Path(args.runs) / args.protocol / v for v in args.variant}
    missing = [str(p) for p in runs.values() if not (p / "metrics.jsonl").is_file()]
    if missing:
        raise ValueError(f"no training records in {', '.join(missing)}")
    print(f"curves: {plot_recipe_curves(runs, args.curves, title=f'recipe runs, protocol {args.protocol}')}")
    return 0
