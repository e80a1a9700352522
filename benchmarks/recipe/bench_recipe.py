"""Equal-budget recipe benchmark: train named variants from scratch for a fixed CPU budget, one table row each.

    python -m benchmarks.recipe.bench_recipe --variant baseline residual --protocol panda --cpu-minutes 8
    python -m benchmarks.recipe.bench_recipe --variant baseline --protocol multi --measure-only
    python -m benchmarks.recipe.bench_recipe --variant shipped --checkpoint ggik/weights/ggik_default.pt \
        --protocol multi

Runs live in --runs/PROTOCOL/VARIANT (resumable: a larger budget continues a run); rows are merged into --out
(.md, .csv, and _commands.txt). Variants, protocols, measurements: :mod:`benchmarks.recipe.recipe`.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, script_command
from benchmarks.recipe.recipe import PROTOCOLS, VARIANTS
from benchmarks.recipe.recipe_runner import run_recipe_benchmark


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--variant", nargs="+", required=True, help=f"variants, trained one after another: {', '.join(VARIANTS)}"
    )
    ap.add_argument(
        "--checkpoint", help="measure this checkpoint as the row named by --variant (any name), no training"
    )
    ap.add_argument(
        "--protocol", default="panda", choices=sorted(PROTOCOLS), help="training robots and robots measured"
    )
    ap.add_argument(
        "--cpu-minutes",
        type=positive_float,
        default=10.0,
        help="training budget per variant [CPU minutes, all threads]",
    )
    ap.add_argument("--runs", default="runs/recipe", help="folder of the runs")
    ap.add_argument("-n", type=positive_int, default=200, help="goals per robot")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples (and LM random starts) per goal")
    ap.add_argument("--seed", type=int, default=0, help="seed of the measured goals and samples")
    ap.add_argument("--threads", type=positive_int, default=2, help="torch threads of the LM timings")
    ap.add_argument("--train-only", action="store_true", help="train, do not measure")
    ap.add_argument("--measure-only", action="store_true", help="measure the runs as they are")
    ap.add_argument(
        "--retime", action="store_true", help="only re-measure the sampling-time columns in --out (run it alone)"
    )
    ap.add_argument("--out", default="benchmarks/recipe/results/recipe", help="output stem (.md and .csv)")
    ap.add_argument("--curves", help="also plot the training curves of the variants' runs to this PNG")
    ap.add_argument("--curves-only", action="store_true", help="only plot the curves (no training, no measuring)")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    try:
        return run_recipe_benchmark(args, script_command(__file__, argv))
    except ValueError as exc:
        ap.error(str(exc))


if __name__ == "__main__":
    sys.exit(main())
