"""Write the path-following suite: eval/paths/ROBOT_KIND.csv for every urdfs/ robot and path kind, and suite.json.

    python -m benchmarks.path_suite.make_paths [--robots panda ...] [--kinds circle ...] [--seed 0] [--out eval/paths]

Shapes, sizes and the reachability check are those of benchmarks.path_suite.shapes (its docstring). Benchmark them
with ``ggik eval paths`` (eval/results/paths/).
"""

from __future__ import annotations

import argparse
import sys

import torch

from benchmarks.common.scripts import positive_int
from benchmarks.path_suite.shapes import SHAPES, make_suite
from ggik.kinematics import available_robots


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="*", default=available_robots(), help="shipped robot names (default: all)")
    ap.add_argument("--kinds", nargs="*", default=list(SHAPES), choices=SHAPES, help="path kinds (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=positive_int, default=1, help="torch threads")
    ap.add_argument("--out", default="eval/paths", help="output folder")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    entries = make_suite(args.robots, args.out, args.seed, tuple(args.kinds))
    print(f"wrote {len(entries)} paths and {args.out}/suite.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
