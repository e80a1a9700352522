"""Refinement of model samples in point-set space (DG) vs joint space (LM), timed in one process.

    python -m benchmarks.refinement.bench_refinement [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] \
        [-n 200] [-s 32]

Writes benchmarks/refinement/results/refinement.md and .csv (:mod:`benchmarks.refinement.refinement_table`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from benchmarks.common.robots import robot_from_arg
from benchmarks.common.scripts import positive_int, script_command
from benchmarks.refinement.refinement_table import refinement_table
from ggik import GGIK
from ggik.errors import GGIKError
from ggik.evaluation.report import model_stamp
from ggik.evaluation.tables import EvalConfig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    ap.add_argument(
        "--robots",
        nargs="*",
        default=["panda", "ur10", "lbr_iiwa", "kr16_2"],
        help="shipped robot names, URDF files or randomN",
    )
    ap.add_argument("-n", type=positive_int, default=200, help="goals per robot")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples (and random starts) per goal")
    ap.add_argument("--dg-iterations", nargs="*", type=positive_int, default=[3, 5, 10], help="DG budgets to measure")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=positive_int, default=2, help="torch threads")
    ap.add_argument("--out", default="benchmarks/refinement/results/refinement", help="output stem (.md and .csv)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        solver = GGIK.load_or_pretrained(args.ckpt)
        robots = [robot_from_arg(name, args.seed) for name in args.robots]
    except (GGIKError, FileNotFoundError) as exc:
        raise SystemExit(f"bench_refinement: {exc}") from None
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    table = refinement_table(solver.model, robots, cfg, tuple(args.dg_iterations))
    table.notes.append(f"{args.threads} torch thread(s).")
    md, _ = table.write(
        Path(args.out), command=script_command(__file__, argv), seed=args.seed, model=model_stamp(args.ckpt)
    )
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
