"""``python -m benchmarks.sampler_price.distill``: distil a model's decoder into a narrower one
(:mod:`ggik.training.distill`); resumable in ``--run-dir``, exported to ``--out``."""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from benchmarks.common.scripts import positive_float, positive_int
from ggik.training.distill import Distillation, DistillConfig, export_student


def main(argv: list[str] | None = None) -> None:
    d = DistillConfig()
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--teacher", type=Path, default=Path("ggik/weights/ggik_default.pt"))
    p.add_argument("--run-dir", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True, help="the student's model file")
    p.add_argument("--minutes", type=positive_float, required=True, help="this sitting's budget [min]")
    p.add_argument("--steps", type=positive_int, default=d.steps, help="steps of the whole run (the lr schedule's)")
    p.add_argument("--dec-dim", type=positive_int, default=d.dec_dim)
    p.add_argument("--dec-hidden", type=positive_int, default=d.dec_hidden)
    p.add_argument("--dec-layers", type=positive_int, default=d.dec_layers)
    p.add_argument("--lr", type=positive_float, default=d.lr)
    p.add_argument("--threads", type=positive_int, default=1)
    p.add_argument("--no-progress", action="store_true")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    cfg = DistillConfig(dec_dim=a.dec_dim, dec_hidden=a.dec_hidden, dec_layers=a.dec_layers, steps=a.steps, lr=a.lr)
    run = Distillation(a.teacher, a.run_dir, cfg)
    print("last measurement:", run.run(a.minutes, progress=not a.no_progress))
    export_student(run, a.out)
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
