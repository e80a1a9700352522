"""The model tables with the GGIK paper's numbers beside ours, built from the evaluation suite's CSVs.

Usage: ``python -m benchmarks.paper_tables.readme_tables [--results eval/results]
[--ckpt ggik/weights/ggik_default.pt]``
Prints Markdown: the training budget of the checkpoint, raw accuracy (paper Table 1) and seeding LM /
SLSQP (paper Table 2) per robot. Reads ``accuracy.csv`` and ``seeding.csv`` written by ``ggik eval accuracy``
and ``ggik eval seeding``; every number printed comes from those files or from the checkpoint, except the
paper's, which are quoted from Limoyo, Maric et al., "Generative Graphical Inverse Kinematics" (CoRL
version), Tables 1 and 2 (:mod:`benchmarks.paper_tables.paper_tables`).
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.paper_tables.paper_tables import readme_tables
from ggik.errors import GGIKError


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--results",
        default="eval/results",
        help="the suite's results: a folder with accuracy/ and seeding/ (or accuracy.csv and seeding.csv)",
    )
    ap.add_argument("--ckpt", default="ggik/weights/ggik_default.pt", help="the model those tables measured")
    args = ap.parse_args(argv)
    try:
        print(readme_tables(args.results, args.ckpt))
    except (GGIKError, FileNotFoundError) as exc:
        raise SystemExit(f"readme_tables: {exc}") from None
    return 0


if __name__ == "__main__":
    sys.exit(main())
