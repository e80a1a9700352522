"""IKNet and the distal teacher on their papers' protocols, beside GGIK and LM: the script of
:mod:`benchmarks.baselines.study` (what is measured, and how).

Usage: ``python -m benchmarks.baselines.bench_baselines [--tables iknet distal planar ablation fewshot
distal-protocols paths family] [--robots panda ...] [--targets 200] [--samples 100] [--iknet-steps 4000] [--distal-steps
4000] [--sizes 1000 10000 100000] [--curve-steps 2000 8000] [--family-arms 55 10] [--models DIR] [--threads 2]
[--out FILE]``. Run it alone. ``--models DIR`` keeps the trained baselines there and reuses them in later
tables and runs.
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.baselines.study import GGIK_TABLES, TABLES, BaselineStudy, baseline_tables
from benchmarks.common.scripts import positive_int, run_table_script
from ggik import GGIK
from ggik.evaluation.report import model_stamp

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", nargs="+", default=["iknet", "distal"], help=f"some of {' '.join(TABLES)}")
    ap.add_argument("--robots", nargs="*", default=["panda"], help="shipped robots (tables iknet, distal, paths, ...)")
    ap.add_argument("--targets", type=positive_int, default=200, help="test targets / poses per robot")
    ap.add_argument("--samples", type=positive_int, default=100, help="answers per target in table 1")
    ap.add_argument("--iknet-steps", type=positive_int, default=4000)
    ap.add_argument(
        "--iknet-sizes",
        nargs=3,
        type=positive_int,
        default=[256, 64, 10],
        metavar=("HYPER", "PRIMARY", "COMPONENTS"),
        help="table iknet: IKNet's widths and components",
    )
    ap.add_argument("--iknet-samples", type=positive_int, default=1_000_000, help="IKNet's training pairs")
    ap.add_argument("--distal-steps", type=positive_int, default=4000)
    ap.add_argument("--sizes", nargs="+", type=positive_int, default=[1_000, 10_000, 100_000], help="training poses")
    ap.add_argument("--curve-steps", nargs="+", type=positive_int, default=[2000, 8000], help="table planar")
    ap.add_argument("--ablation-steps", type=positive_int, default=2000, help="table ablation")
    ap.add_argument("--fewshot-steps", type=positive_int, default=2000, help="table fewshot")
    ap.add_argument("--planar4-samples", type=positive_int, default=1_000_000, help="pairs of the 4-joint chain")
    ap.add_argument("--paths", type=positive_int, default=20, help="paths per robot (table paths)")
    ap.add_argument("--family-arms", nargs=2, type=positive_int, default=[55, 10], help="training and test arms")
    ap.add_argument("--family-steps", type=positive_int, default=4000, help="table family")
    ap.add_argument("--family-samples", type=positive_int, default=1_100_000, help="table family: pairs in all")
    ap.add_argument("--models", default=None, help="keep the trained baselines in this folder and reuse them")
    ap.add_argument("--ckpt", default=None, help="GGIK model file (default: the shipped model)")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None, help="write the tables to OUT_TABLE.md/.csv")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    study = BaselineStudy(
        robots=args.robots, tables=tuple(args.tables), targets=args.targets, samples=args.samples,
        iknet_steps=args.iknet_steps, iknet_samples=args.iknet_samples,
        iknet_sizes=tuple(args.iknet_sizes), distal_steps=args.distal_steps,
        sizes=tuple(args.sizes), curve_steps=tuple(args.curve_steps), ablation_steps=args.ablation_steps,
        fewshot_steps=args.fewshot_steps, planar4_samples=args.planar4_samples, paths=args.paths,
        family_arms=tuple(args.family_arms), family_steps=args.family_steps, family_samples=args.family_samples,
        models=args.models, seed=args.seed,
    )  # fmt: skip
    last = f"{args.out}_{args.tables[-1]}" if args.out is not None else None
    ckpt = args.ckpt or "ggik/weights/ggik_default.pt"
    solver, stamp = GGIK.load_or_pretrained(args.ckpt), model_stamp(ckpt)
    return run_table_script(
        __file__, argv, args.seed, lambda command: baseline_tables(study, solver, command, args.out, stamp),
        ckpt=ckpt if args.tables[-1] in GGIK_TABLES else None, out=last,
    )  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
