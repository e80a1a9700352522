"""Latency of ``ggik view``: from a goal moved (as a drag of the gizmo delivers it) to its solutions in the scene.

    python -m benchmarks.viewer.latency --threads 2 --out benchmarks/viewer/results/latency

For each robot, a viewer on a free local port (no browser: the time measured ends when the scene nodes are updated,
before the browser draws them), the default panel: 32 samples, LM from every sample, the raw samples drawn (a second
sampling pass) and, in a second row, without them. ``--goals`` reachable goals (end-effector poses of random
configurations) are moved to one after the other, each waited for; one untimed goal first (LM compiles). Also timed:
the call that moves the goal, which is all the interface thread does (the solve runs on the worker thread). Target
(issue 40): a dragged goal answered within 100 ms on 2 cores for 32 samples + LM on a training arm. Run it alone.
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.common.scripts import positive_int, run_model_study
from benchmarks.viewer.latency_study import ROBOTS, SHIPPED, latency_table

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ckpt", default=SHIPPED, help=f"model file (default {SHIPPED}, the shipped model)")
    ap.add_argument("--robots", nargs="+", default=list(ROBOTS), help=f"shipped robots (default {' '.join(ROBOTS)})")
    ap.add_argument("--goals", type=positive_int, default=30, help="timed goals per row (default 30)")
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal (default 32)")
    return run_model_study(__file__, ap, argv, latency_table)


if __name__ == "__main__":
    sys.exit(main())
