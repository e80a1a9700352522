"""Training throughput of the real trainer, data included: examples/s and the share of a step spent making data.

Each configuration (sampler x torch.compile mode) builds a :class:`ggik.training.trainer.Trainer` of the default
recipe (nine robots, three goal kinds, the shipped architecture) with ``--batch`` examples per step on ``--device``,
runs ``--warmup`` untimed steps (compilation happens there), then times ``--steps`` steps of the training loop
(:meth:`Trainer._train_step_tensors`: data, forward, backward, clipping, AdamW; the device is synchronised at the
end only, as the loop does between log steps) and, separately, the same number of batches of data alone. The data
share is data time / step time.

Usage: ``python -m benchmarks.training_speed.step_time [--device cuda] [--batch 512] [--steps 30] [--warmup 10]
[--samplers stacked per-robot] [--compile eager reduce-overhead] [--micro-batches 0 64] [--out FILE]``.
Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import torch

from benchmarks.common.scripts import nonnegative_int, positive_int, run_table_script
from ggik.data import SAMPLERS
from ggik.evaluation.report import Table
from ggik.training.config import TrainConfig
from ggik.training.trainer import COMPILE_MODES, Trainer

__all__ = ["measure", "main"]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def measure(
    device: str, batch: int, steps: int, warmup: int, sampler: str, compile_mode: str, bf16: bool, micro: int = 0
) -> dict[str, float]:
    """Examples/s of ``steps`` training steps and ms per batch of data alone, for one configuration (``micro``: the
    trainer's ``cpu_micro_batch``, passes of at most that many examples on a CPU; 0 = one pass)."""
    cfg = TrainConfig()
    cfg.data.batch_size, cfg.data.sampler, cfg.compile, cfg.bf16 = batch, sampler, compile_mode, bf16
    cfg.cpu_micro_batch = micro
    cfg.val.every, cfg.steps = 0, warmup + steps
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(cfg, run_dir, device=device, progress=False)
        dev = trainer.device
        for _ in range(warmup):
            trainer._train_step_tensors()
        _sync(dev)
        t0 = time.perf_counter()
        for _ in range(steps):
            out = trainer._train_step_tensors()
        loss = float(out["loss"])  # waits for the last step
        step_s = (time.perf_counter() - t0) / steps
        first = trainer.step
        _sync(dev)
        t0 = time.perf_counter()
        for k in range(steps):
            trainer.data.examples(first + k, 0, dev).to(dev, torch.float32)
        _sync(dev)
        data_s = (time.perf_counter() - t0) / steps
    return {"examples_per_s": batch / step_s, "step_ms": 1e3 * step_s, "data_ms": 1e3 * data_s, "loss": loss}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    ap.add_argument("--batch", type=positive_int, default=512, help="examples per step")
    ap.add_argument("--steps", type=positive_int, default=30, help="timed steps per configuration")
    ap.add_argument("--warmup", type=nonnegative_int, default=10, help="untimed steps before them (compilation)")
    ap.add_argument(
        "--samplers", nargs="+", default=["stacked", "per-robot"], choices=[s for s in SAMPLERS if s != "auto"]
    )
    ap.add_argument("--compile", nargs="+", default=["eager"], choices=list(COMPILE_MODES), help="torch.compile modes")
    ap.add_argument(
        "--micro-batches", nargs="+", type=nonnegative_int, default=[0], help="cpu_micro_batch values (0: one pass)"
    )
    ap.add_argument("--bf16", choices=["on", "off"], default="on", help="bf16 autocast (TrainConfig.bf16)")
    ap.add_argument("--threads", type=positive_int, default=None, help="torch CPU threads (default: torch's)")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    table = Table(
        f"Training throughput, default recipe, batch {args.batch}, {where}",
        ["sampler", "compile", "CPU micro-batch", "examples/s", "ms per step", "ms of data per step", "data share"],
    )
    for sampler in args.samplers:
        for mode in args.compile:
            for micro in args.micro_batches if args.device == "cpu" else [0]:
                r = measure(args.device, args.batch, args.steps, args.warmup, sampler, mode, args.bf16 == "on", micro)
                share = r["data_ms"] / r["step_ms"]
                label = (micro or "one pass") if args.device == "cpu" else "-"
                table.add(sampler, mode, label, r["examples_per_s"], r["step_ms"], r["data_ms"], share)
                print(table.rows[-1], flush=True)
    table.notes.append(
        f"device {args.device} ({where}), {torch.get_num_threads()} torch CPU threads, bf16 {args.bf16}, "
        f"{args.warmup} warm-up + {args.steps} timed steps per row; data alone timed separately over as many batches"
    )
    return run_table_script(__file__, argv, None, lambda _: table, out=args.out)


if __name__ == "__main__":
    sys.exit(main())
