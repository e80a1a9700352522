"""Training speed of the GGIK model on this machine: examples/s per configuration
(``benchmarks/training_speed/results/bench_train.md``).

Measures full training steps (data generation excluded: one fixed batch from the default robot mix,
forward + backward + AdamW step) for:

* model sizes (:data:`SIZES`): ``default`` (the v1 model: the model defaults of the study's time, without the decoder
  options that the other layer forms do not implement) and ``paper`` (the same with 5 EGNN layers in each of the
  three graph networks, width 64, hidden 128: the size the reference numbers refer to);
* the EGNN layer forms of :mod:`benchmarks.training_speed.layer_variants` (kept dense split layer, dense concatenation,
  PyG message passing);
* bf16 autocast on and off; a list of CPU thread counts.

Other processes running at the same time slow the numbers down: the report records the load average.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from benchmarks.training_speed.layer_variants import VARIANTS, swap_layers
from ggik.data import DataConfig, TrainingData
from ggik.graph import GraphBatch
from ggik.nn.cvae import GGIKModel, ModelConfig

__all__ = [
    "SIZES",
    "BENCH_ROBOTS",
    "benchmark_batch",
    "examples_per_second",
    "SpeedRow",
    "TrainingSpeed",
    "measure_training_speed",
]

#: model size name -> its config: the plain EGNN decoder (no residual inputs, no Gauss-Newton moves), the form all three
#: layer variants compute; ``default`` is the v1 model (629,296 parameters), ``paper`` the reference's size
SIZES = {
    "default": lambda: ModelConfig(residual_inputs=False, gn_steps=0),
    "paper": lambda: ModelConfig(enc_layers=5, dec_layers=5, residual_inputs=False, gn_steps=0),
}
#: the robot mix of the benchmark batch (with random 6/7-DOF robots at the same weight)
BENCH_ROBOTS = ("ur10", "lbr_iiwa", "panda", "schunk_lwa4d", "schunk_lwa4p", "kuka_lwr", "irb140", "kr16_2", "puma560")


def benchmark_batch(batch_size: int) -> GraphBatch:
    """The fixed float32 CPU training batch of ``batch_size`` examples: batch 0 of :data:`BENCH_ROBOTS` at weight 1
    plus random 6/7-DOF robots at weight 1 (N up to 18 nodes), pose goals."""
    data = TrainingData(
        DataConfig(
            robots={n: 1.0 for n in BENCH_ROBOTS},
            random_weight=1.0,
            random_dofs=[6, 7],
            goal_kinds={"pose": 1.0},
            batch_size=batch_size,
        )
    )
    return data.batch(0)[0].to("cpu", torch.float32)


def examples_per_second(
    cfg: ModelConfig, variant: str, bf16: bool, threads: int, batch: GraphBatch, steps: int, warmup: int
) -> float:
    """Training examples per second of the median of ``steps`` timed steps (after ``warmup`` untimed ones) of a fresh
    model (``torch.manual_seed(0)``) with the ``variant`` EGNN layers. Sets torch's CPU thread count to ``threads``."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model = swap_layers(GGIKModel(cfg), variant)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for i in range(warmup + steps):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(batch)
            loss = (10 * out["anchor_se"] + 100 * out["free_se"] + out["kl"]).float().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - t0)
    times.sort()
    return batch.batch_size / times[len(times) // 2]  # median step


@dataclass
class SpeedRow:
    """One measured configuration."""

    size: str  #: a key of SIZES
    params: int  #: model parameters
    variant: str  #: a key of VARIANTS
    bf16: bool
    threads: int
    examples_per_s: float

    def line(self) -> str:
        """The one-line progress report of this row."""
        return (
            f"{self.size:8s} {self.variant:7s} bf16={self.bf16!s:5s} threads={self.threads}: "
            f"{self.examples_per_s:7.1f} examples/s"
        )


@dataclass
class TrainingSpeed:
    """Every row of one benchmark run, with its settings and the 1-min load average before and after."""

    rows: list[SpeedRow]
    batch_size: int
    warmup: int
    steps: int
    load_before: float
    load_after: float

    def markdown(self, command: str) -> str:
        """The Markdown report: title, ``command``, machine, settings, load, and the table."""
        lines = [
            "# Training speed (examples/s, median of timed steps; higher is better)",
            "",
            f"Command: `{command}`",
            f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} logical CPUs, torch "
            f"{torch.__version__}, "
            f"Python {platform.python_version()}; batch {self.batch_size} from the default robot mix (N up to 18 "
            "nodes); "
            f"{self.warmup} warm-up + {self.steps} timed steps; 1-min load average before/after: "
            f"{self.load_before:.2f}/{self.load_after:.2f} (other processes running at the same time lower the "
            "numbers).",
            "",
            "| model | parameters | EGNN layer | bf16 | threads | examples/s |",
            "|---|---|---|---|---|---|",
        ]
        for r in self.rows:
            lines.append(
                f"| {r.size} | {r.params:,} | {VARIANTS[r.variant]} | {'on' if r.bf16 else 'off'} | {r.threads} | "
                f"{r.examples_per_s:.0f} |"
            )
        return "\n".join(lines) + "\n"


def measure_training_speed(
    sizes: list[str],
    variants: list[str],
    threads: list[int],
    batch_size: int = 128,
    steps: int = 5,
    warmup: int = 2,
    log: Callable[[str], None] | None = None,
) -> TrainingSpeed:
    """Measure every (size, variant, bf16 off/on, threads) combination in that nesting order on
    :func:`benchmark_batch`; ``log`` receives each row's :meth:`SpeedRow.line` as it is measured."""
    batch = benchmark_batch(batch_size)
    load_before = os.getloadavg()[0]
    rows = []
    for size in sizes:
        cfg = SIZES[size]()
        params = GGIKModel(cfg).num_parameters()
        for variant in variants:
            for bf16 in (False, True):
                for n in threads:
                    row = SpeedRow(
                        size, params, variant, bf16, n, examples_per_second(cfg, variant, bf16, n, batch, steps, warmup)
                    )
                    rows.append(row)
                    if log is not None:
                        log(row.line())
    return TrainingSpeed(rows, batch_size, warmup, steps, load_before, os.getloadavg()[0])
