"""Refinement of model samples in point-set space (DG) vs joint space (LM), timed in one process.

    python eval/bench_refinement.py [--ckpt CKPT] [--robots panda ur10 lbr_iiwa kr16_2] [-n 200] [-s 32]

Writes eval/results/refinement.md and .csv (ggik.evaluation.refinement_table).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from ggik import GGIK
from ggik.evaluation.bench_setup import script_command
from ggik.evaluation.refinement_table import refinement_table
from ggik.evaluation.tables import EvalConfig
from ggik.kinematics import Robot


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    ap.add_argument("--robots", nargs="*", default=["panda", "ur10", "lbr_iiwa", "kr16_2"], help="shipped robot names")
    ap.add_argument("-n", type=int, default=200, help="goals per robot")
    ap.add_argument("-s", "--samples", type=int, default=32, help="samples (and random starts) per goal")
    ap.add_argument("--dg-iterations", nargs="*", type=int, default=[3, 5, 10], help="DG budgets to measure")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="torch threads")
    ap.add_argument("--out", default="eval/results/refinement", help="output stem (.md and .csv)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    solver = GGIK.load_or_pretrained(args.ckpt)
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    table = refinement_table(solver.model, [Robot.from_name(n) for n in args.robots], cfg, tuple(args.dg_iterations))
    table.notes.append(f"model: {args.ckpt or 'the shipped model (ggik/weights/ggik_default.pt)'}; {args.threads} torch thread(s).")
    command = script_command(__file__, argv)
    md, _ = table.write(Path(args.out), command=command, seed=args.seed)
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
