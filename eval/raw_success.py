"""Raw (unrefined) success of a checkpoint against random joint configurations, on fixed problems.

For each robot: P seeded problems (q uniform within the limits, goal = FK(q)); S samples per problem
from the model (angles recovered with ``RobotGraph.joint_angles``) and, as the baseline, S joint
configurations drawn uniformly within the limits. Success = the best of the S within 1 cm AND 1 degree
(:mod:`ggik.evaluation.raw_success`).

Usage: ``python eval/raw_success.py CKPT [--robots panda] [-n 200] [-s 32] [--seed 0] [--out FILE.md]``
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ggik.evaluation.raw_success import raw_success_report


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--robots", nargs="*", default=["panda"])
    ap.add_argument("-n", type=int, default=200, help="problems per robot")
    ap.add_argument("-s", "--samples", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the Markdown table here")
    args = ap.parse_args(argv)
    command = f"python eval/raw_success.py {' '.join(argv if argv is not None else sys.argv[1:])}"
    text = raw_success_report(args.checkpoint, args.robots, args.n, args.samples, args.seed, command)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
