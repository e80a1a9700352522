"""Training examples/s against batch size: the real trainer of a run's config, data included, one batch size a row.

For each ``--batches`` size B (ascending) a :class:`ggik.training.trainer.Trainer` of ``--config`` (default
``train/configs/paper.yaml``: the paper's five arms, pose goals, q in [-pi, pi]) with the model of ``--init`` (default
the handedness model continued, ``benchmarks/handedness/results/unlimited/export_cont.pt``: the shipped architecture
with volume inputs; its weights are loaded, so the losses are those of a trained model) and ``data.batch_size`` B runs
``--warmup`` untimed steps (torch.compile compiles there), then ``--steps`` timed steps of its training loop
(:meth:`Trainer._train_step_tensors`: data, forward, backward, clipping, AdamW; the device synchronised at the end
only, as the loop does between log steps). One run per size. Columns: examples/s, ms per step, the warm-up's wall
time (what each size costs before it is timed: compilation on a GPU), the memory it took (CUDA: the peak allocated
by torch; CPU: the process's peak resident size so far, which only grows, so read it as "at most") and, on CUDA, the
host synchronisations per timed step (``torch.cuda.set_sync_debug_mode("warn")`` warns at each: a blocking copy, an
``.item()``, a shape read from the data; counted from the warnings, and where each came from, in a note per size). The
trainer takes its sync-free steps on CUDA (:class:`ggik.training.trainer.Trainer`, ``sync_free``): none is expected
but those inside CUDA kernels' host code (tests/test_sync_free_step.py checks the rest on a CPU).

A size is not run when the sweep would overrun what it is given: when a step of it would take more than
``--max-step-s`` (the last step time scaled by the batch), when the CPU's resident size would pass ``--max-rss-gb``
(the last peak scaled by the batch), or when ``--max-total-s`` of the sweep are spent; on CUDA an out-of-memory
error ends the sweep at that size. Each such stop is a note of the table.

Usage (from the repository root; alone on the machine, or say what else ran):

    python -m benchmarks.training_speed.batch_sweep --threads 1 --out benchmarks/training_speed/results/batch_sweep_cpu
    python -m benchmarks.training_speed.batch_sweep --device cuda --compile default --threads 0 --warmup 3 \\
        --steps 5 --max-total-s 180 --out runs/batch_sweep_cuda   # as train/gpu/paper_sitting.sh runs it

The same script runs unchanged on CUDA (``--device cuda``); a micro-batch (``--micro-batch``, the trainer's
``cpu_micro_batch``) applies on a CPU only.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import resource
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import torch

from benchmarks.common.scripts import (
    REPO,
    BenchmarkError,
    add_device_arg,
    bench_device,
    nonnegative_int,
    positive_float,
    positive_int,
    run_table_script,
)
from ggik.checkpoint import config_for_init
from ggik.evaluation.report import Table
from ggik.training.compile_modes import COMPILE_MODES
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml

__all__ = ["main", "sweep_config", "measure", "counted_syncs"]

DEFAULT_CONFIG = "train/configs/paper.yaml"
DEFAULT_INIT = "benchmarks/handedness/results/unlimited/export_cont.pt"
DEFAULT_BATCHES = [512, 1024, 2048, 4096, 8192, 16384, 32768]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _peak_rss_gb() -> float:
    """The process's peak resident size so far [GB] (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


@contextlib.contextmanager
def counted_syncs(device: torch.device) -> Iterator[collections.Counter | None]:
    """On CUDA, counts the host synchronisations of the block: a Counter of ``"file:line"`` (where each sync was
    called from Python) -> syncs, filled when the block ends (torch.cuda's sync debug mode warns at every sync; the
    warnings are caught, not shown). Elsewhere yields None."""
    if device.type != "cuda":
        yield None
        return
    where: collections.Counter = collections.Counter()
    previous = torch.cuda.get_sync_debug_mode()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            yield where
        finally:
            torch.cuda.set_sync_debug_mode(previous)
    where.update(f"{Path(w.filename).name}:{w.lineno}" for w in caught if "synchroniz" in str(w.message))


def sweep_config(args: argparse.Namespace) -> TrainConfig:
    """The training config of the sweep: ``--config`` with ``--init``'s model section and the script's overrides
    (``--compile``, ``--micro-batch``, ``--threads``, ``--bf16``); validation and checkpoints off."""
    for path, what in ((args.config, "--config"), (args.init, "--init")):
        if not (REPO / path).is_file() and not Path(path).is_file():
            raise BenchmarkError(f"{what} {path}: no such file")
    data = config_for_init(args.init, load_yaml(args.config))
    cfg = from_dict(TrainConfig, data)
    if args.compile is not None:
        cfg.compile = args.compile
    if args.micro_batch is not None:
        cfg.cpu_micro_batch = args.micro_batch
    if args.threads is not None:
        cfg.threads = args.threads
    cfg.bf16 = args.bf16 == "on"
    cfg.val.every = 0
    return cfg


def measure(cfg: TrainConfig, init: str, device: str, batch: int, warmup: int, steps: int) -> dict[str, float]:
    """One size: examples/s and ms per step over ``steps`` timed steps after ``warmup`` untimed ones, the warm-up's
    wall time [s], the memory [GB] (see the module), the last loss, the model's parameter count and, on CUDA, the host
    syncs per timed step (``syncs``, None elsewhere) and where they came from (``sync_sites``: "file:line" -> syncs per
    step). ``torch.OutOfMemoryError`` propagates."""
    cfg.data.batch_size, cfg.steps, cfg.checkpoint_every = batch, warmup + steps, 10**9
    if cfg.compile != "eager":  # each size compiles afresh in its warm-up (and no size meets dynamo's cache limit)
        torch._dynamo.reset()
    with tempfile.TemporaryDirectory() as run_dir:
        trainer = Trainer(cfg, run_dir, device=device, progress=False)
        trainer.init_from(init)
        dev = trainer.device
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        t0 = time.perf_counter()
        for _ in range(warmup):
            trainer._train_step_tensors()
        _sync(dev)
        warmup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        with counted_syncs(dev) as sites:
            for _ in range(steps):
                out = trainer._train_step_tensors()
        loss = float(out["loss"])  # waits for the last step
        step_s = (time.perf_counter() - t0) / steps
        memory = torch.cuda.max_memory_allocated(dev) / 1e9 if dev.type == "cuda" else _peak_rss_gb()
        parameters = trainer.model.num_parameters()
        del trainer, out
    syncs = None if sites is None else sum(sites.values()) / steps
    return {"examples_per_s": batch / step_s, "step_ms": 1e3 * step_s, "warmup_s": warmup_s, "memory_gb": memory,
            "loss": loss, "parameters": parameters, "syncs": syncs,
            "sync_sites": {k: v / steps for k, v in (sites or {}).items()}}  # fmt: skip


def sweep_table(args: argparse.Namespace) -> Table:
    """The sweep's table: one row per batch size measured, a note per size left out and why."""
    dev = bench_device(args.device)
    cfg = sweep_config(args)
    where = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "CPU"
    memory = "peak allocated [GB]" if dev.type == "cuda" else "peak RSS so far [GB]"
    table = Table(
        f"Training examples/s against batch size, {Path(args.config).name}, {where}",
        ["batch", "examples/s", "ms per step", "warm-up [s]", memory, "loss", "host syncs per step"],
    )
    start, last = time.perf_counter(), None
    for batch in sorted(set(args.batches)):
        why = None
        if time.perf_counter() - start > args.max_total_s:
            why = f"the sweep's --max-total-s {args.max_total_s:g} s spent"
        elif last is not None and (predicted := last["step_ms"] / 1e3 * batch / last["batch"]) > args.max_step_s:
            why = f"a step would take ~{predicted:.3g} s > --max-step-s {args.max_step_s:g}"
        elif dev.type == "cpu" and last is not None and last["memory_gb"] * batch / last["batch"] > args.max_rss_gb:
            why = f"~{last['memory_gb'] * batch / last['batch']:.1f} GB resident > --max-rss-gb {args.max_rss_gb:g}"
        if why is not None:
            table.notes.append(f"batch {batch} and larger not run: {why}")
            print(table.notes[-1], flush=True)
            break
        try:
            r = measure(cfg, args.init, args.device, batch, args.warmup, args.steps)
        except torch.OutOfMemoryError as exc:
            if dev.type == "cuda":
                torch.cuda.empty_cache()
            table.notes.append(f"batch {batch} and larger not run: out of memory ({str(exc).splitlines()[0]})")
            print(table.notes[-1], flush=True)
            break
        last = {**r, "batch": batch}
        syncs = "n/a (CPU)" if r["syncs"] is None else r["syncs"]
        table.add(batch, r["examples_per_s"], r["step_ms"], r["warmup_s"], r["memory_gb"], r["loss"], syncs)
        print(table.rows[-1], flush=True)
        if r["sync_sites"]:
            sites = ", ".join(f"{k} {v:g}" for k, v in sorted(r["sync_sites"].items(), key=lambda kv: -kv[1])[:8])
            table.notes.append(f"batch {batch}: host syncs per step by where they were called: {sites}")
            print(table.notes[-1], flush=True)
    micro = cfg.cpu_micro_batch if dev.type == "cpu" else "n/a (CUDA: one pass)"
    table.notes.append(
        f"device {args.device} ({where}), {torch.get_num_threads()} torch CPU threads, bf16 {args.bf16} (used where "
        f"the device computes it natively), compile {cfg.compile}, CPU micro-batch {micro}; {args.warmup} warm-up + "
        f"{args.steps} timed steps per size, one run; config {args.config}, model of {args.init} "
        f"({last['parameters'] if last else '?':,} parameters): {json.dumps(vars(cfg.model), sort_keys=True)}"
    )
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_device_arg(ap, "training")
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="training config (YAML)")
    ap.add_argument("--init", default=DEFAULT_INIT, help="model file whose architecture and weights train")
    ap.add_argument("--batches", type=positive_int, nargs="+", default=DEFAULT_BATCHES, help="batch sizes")
    ap.add_argument("--steps", type=positive_int, default=2, help="timed steps per size")
    ap.add_argument("--warmup", type=nonnegative_int, default=1, help="untimed steps before them (compilation)")
    ap.add_argument("--compile", choices=list(COMPILE_MODES), default=None, help="default: the config's")
    ap.add_argument("--micro-batch", type=nonnegative_int, default=None, help="cpu_micro_batch (default: the config's)")
    ap.add_argument("--bf16", choices=["on", "off"], default="on", help="bf16 autocast (TrainConfig.bf16)")
    ap.add_argument("--threads", type=nonnegative_int, default=None, help="torch CPU threads (0: torch's default)")
    ap.add_argument("--max-step-s", type=positive_float, default=20.0, help="skip sizes whose step would take longer")
    ap.add_argument("--max-rss-gb", type=positive_float, default=8.0, help="CPU: skip sizes that would need more")
    ap.add_argument("--max-total-s", type=positive_float, default=600.0, help="start no size after this long")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    return run_table_script(__file__, argv, None, lambda _: sweep_table(args), ckpt=args.init, out=args.out)


if __name__ == "__main__":
    sys.exit(main())
