"""Sampling time of a GGIK checkpoint against the number of samples (the GGIK paper's appendix Fig. 4).

For one goal per robot (q uniform within the limits, seeded; goal = FK(q)) and each S in ``samples``,
two timings, each the median wall time (``time.perf_counter``) of ``repeats`` calls after 2 warm-ups:

* **model sampling**: ``GGIKModel.sample`` on a prepared ``GraphBatch`` (problem encoder, mixture prior,
  decoder; all S samples in one batch), i.e. the network alone;
* **sampling + angles + FK**: :func:`ggik.ik.sampling.sample_joint_angles` (batch building, the model, joint
  angles recovered from the point sets, FK pose errors in float64): what a user gets per goal.

Robots: random DH robots of ``dofs`` DOF (``randomN``, :func:`~benchmarks.common.robots.robot_from_arg`) and
shipped robots. Per sample = time / S; per problem = the time for the one goal. Sizes whose activations would
exceed ``max_gb`` are skipped and noted; the estimate is S x N^2 x hidden x 4 bytes x 4 (N graph nodes; the dense
EGNN keeps about 3.5 edge tensors of S x N^2 x hidden floats alive, measured by peak RSS), so the default model
(hidden 128) at 30 DOF (N = 64) and S = 1024 needs ~8 GiB and runs under the default 12.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path

import torch

from benchmarks.common.load import busy_processes
from benchmarks.common.measure import WARMUPS, median_time
from benchmarks.common.robots import default_robots, load_bench_model, robot_from_arg
from benchmarks.common.scripts import BenchmarkError
from benchmarks.common.streams import SAMPLING_GOALS, SAMPLING_NOISE
from ggik.evaluation.report import Table, model_stamp
from ggik.graph import GraphBatch
from ggik.ik.sampling import SamplingOptions, native_bf16, sample_joint_angles
from ggik.rng import step_generator

__all__ = ["SamplingBenchmark", "run_sampling_benchmark", "DEFAULT_SAMPLES", "DEFAULT_DOFS", "COLUMNS"]

DEFAULT_SAMPLES = [1, 4, 16, 64, 256, 1024]  #: numbers of samples S per goal
DEFAULT_DOFS = [6, 12, 18, 24, 30]  #: DOFs of the random robots
COLUMNS = [
    "robot",
    "dof",
    "nodes",
    "samples",
    "model sampling [ms]",
    "model per sample [us]",
    "sampling + angles + FK per goal [ms]",
    "per sample [us]",
    "samples per second",
    "spread [%]",
]


def _bf16_flag(bf16: bool | None) -> str:
    return "auto" if bf16 is None else ("on" if bf16 else "off")


def _positive_ints(values: list[int], what: str, minimum: int = 1) -> list[int]:
    bad = [v for v in values if v < minimum]
    if bad or not values:
        raise BenchmarkError(f"bench_sampling: {what} must be integers >= {minimum}, got {values}")
    return values


@dataclass
class SamplingBenchmark:
    """The options of the sampling-time benchmark (those of ``python -m benchmarks.sampling.bench_sampling``)."""

    samples: list[int] = field(default_factory=lambda: list(DEFAULT_SAMPLES))  #: numbers of samples S per goal
    dofs: list[int] = field(default_factory=lambda: list(DEFAULT_DOFS))  #: DOFs of the random robots ([]: none)
    robots: list[str] | None = None  #: shipped robots (None: all of urdfs/, paper robots first; []: none)
    repeats: int = 5  #: timed calls per measurement (the median is reported)
    threads: int = 1  #: torch CPU threads
    seed: int = 0  #: seeds the goals, the random robots and the sampling noise
    max_gb: float = 12.0  #: skip sizes whose estimated activations exceed this [GiB]
    load_probe: float = 1.0  #: seconds spent before and after the run listing other busy processes
    progress: bool = True  #: tqdm progress bar
    bf16: bool | None = None  #: bfloat16 autocast of the network (None: where the CPU computes bf16 natively)

    def checked(self) -> tuple[list[int], list[int]]:
        """(sorted distinct S values, random-robot DOFs) after checking every option; :class:`BenchmarkError`
        otherwise."""
        samples = sorted(set(_positive_ints(self.samples, "--samples")))
        dofs = _positive_ints(self.dofs, "--dofs", 2) if self.dofs else []
        _positive_ints([self.repeats], "--repeats")
        _positive_ints([self.threads], "--threads")
        if not self.load_probe > 0:
            raise BenchmarkError(f"bench_sampling: --load-probe must be positive, got {self.load_probe}")
        if not self.max_gb > 0:
            raise BenchmarkError(f"bench_sampling: --max-gb must be positive, got {self.max_gb}")
        return samples, dofs


def run_sampling_benchmark(ckpt_path: str | Path, opts: SamplingBenchmark, out_dir: str | Path, command: str) -> Table:
    """Time the checkpoint at ``ckpt_path`` as ``opts`` says; write ``out_dir``/timing.md, timing.csv (with
    ``command``, the machine and its load) and timing.png (:func:`benchmarks.sampling.timing_plot.plot_timing`,
    sampling + angles + FK per robot, when anything was measured). Returns the table (times in ms and us).

    Raises :class:`BenchmarkError` for bad options, an unknown robot or an unusable checkpoint. Sets torch's
    CPU thread count.
    """
    samples, dofs = opts.checked()
    torch.set_num_threads(opts.threads)

    from tqdm import tqdm

    from benchmarks.sampling.timing_plot import plot_timing

    robot_names = [f"random{d}" for d in dofs] + (default_robots() if opts.robots is None else opts.robots)
    if not robot_names:
        raise BenchmarkError("bench_sampling: no robots to time (--dofs and --robots are both empty)")
    robots = [robot_from_arg(n, opts.seed) for n in robot_names]
    model, ckpt = load_bench_model(ckpt_path)
    before = busy_processes(opts.load_probe)
    hidden = model.cfg.hidden
    param = next(model.parameters())
    bf16 = native_bf16(param.device) if opts.bf16 is None else opts.bf16

    table = Table(
        f"GGIK sampling time for one goal against the number of samples S (median of {opts.repeats} after {WARMUPS} "
        "warm-ups)",
        list(COLUMNS),
    )
    plot_rows, skipped = [], []
    bar = tqdm(
        total=len(robots) * len(samples),
        desc="sampling time",
        unit="size",
        disable=not opts.progress,
        dynamic_ncols=True,
    )
    for robot in robots:
        graph = model.graph(robot)
        key = zlib.crc32(robot.name.encode())
        T = robot.fk(robot.sample_q(1, step_generator(opts.seed, SAMPLING_GOALS, key)))  # (1, 4, 4)
        batch = GraphBatch.from_graph(graph, T_goal=T).to(device=param.device, dtype=param.dtype)
        N = graph.num_nodes
        for S in samples:
            bar.set_postfix_str(f"{robot.name} S={S}")
            gib = S * N * N * hidden * 4 * 4 / 2**30
            if gib > opts.max_gb:
                skipped.append(f"{robot.name} S={S} (~{gib:.1f} GiB)")
                nan = float("nan")
                table.add(robot.name, robot.dof, N, S, nan, nan, nan, nan, nan, nan)
                bar.update(1)
                continue
            g = step_generator(opts.seed, SAMPLING_NOISE, key, S)
            with torch.no_grad():
                with torch.autocast(param.device.type, dtype=torch.bfloat16, enabled=bf16):
                    t_model, _, _ = median_time(
                        lambda batch=batch, S=S, g=g: model.sample(batch, S, generator=g), opts.repeats
                    )
                t_full, lo, hi = median_time(
                    lambda graph=graph, T=T, S=S, g=g: sample_joint_angles(
                        model, graph, T, S, generator=g, options=SamplingOptions(bf16=bf16)
                    ),
                    opts.repeats,
                )
            table.add(
                robot.name,
                robot.dof,
                N,
                S,
                1e3 * t_model,
                1e6 * t_model / S,
                1e3 * t_full,
                1e6 * t_full / S,
                S / t_full,
                100 * (hi - lo) / t_full,
            )
            plot_rows.append((f"{robot.name} ({robot.dof} DOF)", S, t_full))
            bar.update(1)
    bar.close()
    after = busy_processes(opts.load_probe)

    cfg = model.cfg
    table.notes += [
        f"Checkpoint {ckpt_path}: step {ckpt.get('step', '?')}, {model.num_parameters():,} parameters "
        f"(dim {cfg.dim}, hidden {cfg.hidden}, {cfg.enc_layers} encoder / {cfg.dec_layers} decoder layers), on the "
        f"CPU, the network in {'bfloat16 autocast' if bf16 else 'float32'} (--bf16 {_bf16_flag(opts.bf16)}; "
        f"this CPU computes bf16 {'natively' if native_bf16('cpu') else 'only by emulation'}).",
        "model sampling: GGIKModel.sample on a prepared GraphBatch (encoder, prior, decoder; S samples in one batch). "
        "sampling + angles + FK: ggik.ik.sampling.sample_joint_angles (batch building, model, RobotGraph.joint_angles, "
        "FK pose errors in float64) = the time per problem; per sample = that / S.",
        "Wall time (time.perf_counter), one goal per call. spread: (max - min) / median of the sampling + angles + FK "
        "repeats.",
        f"Random robots: ggik.random_robot(dof) seeded from --seed {opts.seed}; goals: q uniform within the limits, "
        "seeded.",
        f"Other processes on the machine, before the run: {before}; after: {after}.",
    ]
    if skipped:
        table.notes.append(f"Skipped (estimated activations above --max-gb {opts.max_gb:g} GiB): {', '.join(skipped)}.")
    out = Path(out_dir)
    table.write(out / "timing", command=command, seed=opts.seed, model=model_stamp(ckpt_path))
    if plot_rows:
        plot_timing(
            plot_rows,
            out / "timing.png",
            title=f"GGIK sampling + angle recovery + FK for one goal ({torch.get_num_threads()} CPU thread(s))",
        )
    return table
