"""Sampling time of a GGIK checkpoint against the number of samples (the GGIK paper's appendix Fig. 4).

For one goal per robot and each S in --samples: the median wall time of the model's sampling alone and of
sampling + angle recovery + FK, on random DH robots of --dofs DOF and the robots of urdfs/ (--robots); the
method is :mod:`benchmarks.sampling.sampling_benchmark`. Writes OUT_DIR/timing.md, timing.csv and timing.png,
and prints the table.

Usage: ``python -m benchmarks.sampling.bench_sampling --ckpt ggik/weights/ggik_default.pt [--samples 1 4 16 64 256 1024]
[--dofs 6 12 18 24 30] [--robots NAME ...] [--repeats 5] [--threads 1] [--out-dir benchmarks/sampling/results]``
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_float, positive_int, run_table_script
from benchmarks.sampling.sampling_benchmark import (
    DEFAULT_DOFS,
    DEFAULT_SAMPLES,
    SamplingBenchmark,
    run_sampling_benchmark,
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--ckpt", required=True, help="checkpoint or export (e.g. ggik/weights/ggik_default.pt, RUN_DIR/last.pt)"
    )
    ap.add_argument(
        "-s", "--samples", type=positive_int, nargs="+", default=DEFAULT_SAMPLES, help="numbers of samples S per goal"
    )
    ap.add_argument(
        "--dofs",
        type=positive_int,
        nargs="*",
        default=DEFAULT_DOFS,
        help="DOFs of the random robots, each >= 2 (none: no random robots)",
    )
    ap.add_argument(
        "--robots", nargs="*", default=None, help="shipped robots (default: all of urdfs/; none: only random robots)"
    )
    ap.add_argument(
        "--repeats", type=positive_int, default=5, help="timed calls per measurement (the median is reported)"
    )
    ap.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    ap.add_argument("--seed", type=int, default=0, help="seeds the goals, the random robots and the sampling noise")
    ap.add_argument(
        "--max-gb", type=positive_float, default=12.0, help="skip sizes whose estimated activations exceed this [GiB]"
    )
    ap.add_argument(
        "--out-dir", default="benchmarks/sampling/results", help="folder for timing.md, timing.csv, timing.png"
    )
    ap.add_argument(
        "--load-probe",
        type=positive_float,
        default=1.0,
        help="seconds spent before and after the run listing other busy processes (for the notes)",
    )
    ap.add_argument(
        "--bf16",
        choices=("auto", "on", "off"),
        default="auto",
        help="bfloat16 autocast of the network: auto (where the CPU computes bf16 natively, as ggik samples), on, off",
    )
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    args = ap.parse_args(argv)
    opts = SamplingBenchmark(
        samples=args.samples,
        dofs=args.dofs,
        robots=args.robots,
        repeats=args.repeats,
        threads=args.threads,
        seed=args.seed,
        max_gb=args.max_gb,
        load_probe=args.load_probe,
        progress=not args.no_progress,
        bf16={"auto": None, "on": True, "off": False}[args.bf16],
    )
    return run_table_script(
        __file__,
        argv,
        args.seed,
        lambda command: run_sampling_benchmark(args.ckpt, opts, args.out_dir, command),
        args.ckpt,
    )


if __name__ == "__main__":
    sys.exit(main())
