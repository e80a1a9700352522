"""Training throughput of the real trainer, data included: examples/s and the share of a step spent making data.

Each configuration (sampler x torch.compile mode) builds a :class:`ggik.training.trainer.Trainer` of the default
recipe (nine robots, three goal kinds, the shipped architecture) with ``--batch`` examples per step on ``--device``,
runs ``--warmup`` untimed steps (compilation happens there), then times ``--steps`` steps of the training loop
(:meth:`Trainer._train_step_tensors`: data, forward, backward, clipping, AdamW; the device is synchronised at the
end only, as the loop does between log steps) and, separately, the same number of batches of data alone. The data
share is data time / step time.

Run by ``python -m benchmarks.training_speed.step_time [--device cuda] [--batch 512] [--steps 30] [--warmup 10]
[--samplers stacked per-robot] [--compile eager reduce-overhead] [--micro-batches 0 64] [--out FILE]``.
Run it alone on the machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch

from benchmarks.common.scripts import bench_device
from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.training.compile_modes import check_compile_mode
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer

__all__ = ["measure"]


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


def step_time_table(args: argparse.Namespace) -> Table:
    """The table of every configuration the options ``args`` of the script name (one row each)."""
    dev = bench_device(args.device)
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    table = Table(
        f"Training throughput, default recipe, batch {args.batch}, {where}",
        ["sampler", "compile", "CPU micro-batch", "examples/s", "ms per step", "ms of data per step", "data share"],
    )
    for sampler in args.samplers:
        for mode in args.compile:
            try:  # a mode the trainer refuses here (CUDA graphs): a note, and the next mode
                check_compile_mode(mode, dev, TrainConfig().model)
            except GGIKError as err:
                table.notes.append(f"{sampler} / {mode}: refused by the trainer: {err}")
                print(table.notes[-1], flush=True)
                continue
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
    return table
