"""How a changed tool frame (the end-effector link moved or turned against the training file's) changes the model's

The script of :mod:`benchmarks.tool_frames.tool_frame_study` (what is measured, and how).

Usage: ``python -m benchmarks.tool_frames.tool_frames [--ckpt CKPT] [--robots ur10 lbr_iiwa kr16_2 panda] [-n 100]
[--threads 2] [--out FILE]``.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_model_study
from benchmarks.tool_frames.tool_frame_study import tool_frame_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt")
    ap.add_argument("--robots", nargs="+", default=["ur10", "lbr_iiwa", "kr16_2", "panda"])
    ap.add_argument("-n", "--goals", type=positive_int, default=100, help="pose goals per robot and tool")
    ap.add_argument("-s", "--samples", type=positive_int, default=32)
    return run_model_study(__file__, ap, argv, tool_frame_table)


if __name__ == "__main__":
    sys.exit(main())
