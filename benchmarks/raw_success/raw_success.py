"""Raw (unrefined) success of a checkpoint against random joint configurations, on fixed problems.

For each robot: P seeded problems (q uniform within the limits, goal = FK(q)); S samples per problem
from the model (angles recovered with ``RobotGraph.joint_angles``) and, as the baseline, S joint
configurations drawn uniformly within the limits. Success = the best of the S within 1 cm AND 1 degree
(:mod:`benchmarks.raw_success.raw_success_report`).

Usage: ``python -m benchmarks.raw_success.raw_success CKPT [--robots panda] [-n 200] [-s 32] [--seed 0]
[--out FILE.md]``
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import BenchmarkError, positive_int, script_command
from benchmarks.raw_success.raw_success_report import raw_success_report
from ggik.fileio import atomic_write_text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("checkpoint", help="checkpoint or export")
    ap.add_argument("--robots", nargs="+", default=["panda"], help="shipped robot names, URDF files or randomN")
    ap.add_argument("-n", type=positive_int, default=200, help="problems per robot")
    ap.add_argument(
        "-s", "--samples", type=positive_int, default=32, help="samples (and uniform configurations) per problem"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the Markdown table here")
    args = ap.parse_args(argv)
    try:
        text = raw_success_report(
            args.checkpoint, args.robots, args.n, args.samples, args.seed, script_command(__file__, argv)
        )
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
