"""Equal-budget recipe benchmark: train named variants from scratch for a fixed CPU budget, one table row each.

    python eval/bench_recipe.py --variant baseline residual --protocol panda --cpu-minutes 10
    python eval/bench_recipe.py --variant baseline --protocol multi --cpu-minutes 20 --measure-only

Runs live in --runs/PROTOCOL/VARIANT (resumable: a larger budget continues a run); rows are merged into
--out (.md and .csv). Variants, protocols and the measurements: ggik.evaluation.recipe.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from ggik.evaluation.bench_setup import script_command
from ggik.evaluation.recipe_curves import plot_recipe_curves
from ggik.evaluation.recipe import PROTOCOLS, VARIANTS, recipe_rows, retime_rows, train_variant, write_recipe_table
from ggik.evaluation.tables import EvalConfig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", nargs="+", required=True, help=f"variants, trained one after another: {', '.join(VARIANTS)}")
    ap.add_argument("--checkpoint", help="measure this checkpoint (e.g. ggik/weights/ggik_default.pt) as the row named by "
                    "--variant (any name), without training")
    ap.add_argument("--protocol", default="panda", choices=sorted(PROTOCOLS), help="training robots and robots measured")
    ap.add_argument("--cpu-minutes", type=float, default=10.0, help="training budget per variant [CPU minutes, all threads]")
    ap.add_argument("--runs", default="runs/recipe", help="folder of the runs")
    ap.add_argument("-n", type=int, default=200, help="goals per robot")
    ap.add_argument("-s", "--samples", type=int, default=32, help="samples (and LM random starts) per goal")
    ap.add_argument("--seed", type=int, default=0, help="seed of the measured goals and samples")
    ap.add_argument("--threads", type=int, default=2, help="torch threads of the LM timings")
    ap.add_argument("--train-only", action="store_true", help="train, do not measure")
    ap.add_argument("--measure-only", action="store_true", help="measure the runs as they are")
    ap.add_argument("--retime", action="store_true",
                    help="only re-measure the sampling-time columns of the variants' rows in --out (run it alone)")
    ap.add_argument("--out", default="eval/results/recipe/recipe", help="output stem (.md and .csv)")
    ap.add_argument("--curves", help="also plot the training curves of every run of the protocol to this PNG")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    if args.train_only and args.measure_only:
        ap.error("--train-only and --measure-only exclude each other")
    unknown = [v for v in args.variant if v not in VARIANTS]
    if args.checkpoint and (len(args.variant) != 1 or args.train_only):
        ap.error("--checkpoint measures one checkpoint: give one --variant name and no --train-only")
    if unknown and not args.checkpoint:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    command = script_command(__file__, argv)
    if args.retime:
        runs = {(args.protocol, v): args.checkpoint or Path(args.runs) / args.protocol / v / "last.pt" for v in args.variant}
        md = write_recipe_table(args.out, retime_rows(args.out, runs, cfg), command, cfg)
        print(md.read_text())
        return 0
    for variant in args.variant:
        run = Path(args.runs) / args.protocol / variant
        if not args.measure_only and not args.checkpoint:
            done = train_variant(run, variant, args.protocol, args.cpu_minutes, progress=not args.no_progress)
            print(f"{args.protocol}/{variant}: {done['cpu_min']:.1f} CPU-min, {done['examples']:,} examples, step {done['steps']}")
        if not args.train_only:
            torch.set_num_threads(args.threads)
            if args.checkpoint:
                run.mkdir(parents=True, exist_ok=True)
            rows = recipe_rows(run, args.protocol, variant, cfg, threads=args.threads, checkpoint=args.checkpoint)
            md = write_recipe_table(args.out, rows, command, cfg)
            print(md.read_text())
    if args.curves:
        runs = {p.name: p for p in sorted((Path(args.runs) / args.protocol).iterdir()) if (p / "metrics.jsonl").is_file()}
        print(f"curves: {plot_recipe_curves(runs, args.curves, title=f'recipe runs, protocol {args.protocol}')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
