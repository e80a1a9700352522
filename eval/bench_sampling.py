"""Sampling time of a GGIK checkpoint against the number of samples (the GGIK paper's appendix Fig. 4).

For one goal per robot (q uniform within the limits, seeded; goal = FK(q)) and each S in --samples,
two timings, each the median wall time (``time.perf_counter``) of --repeats calls after 2 warm-ups:

* **model sampling**: ``GGIKModel.sample`` on a prepared ``GraphBatch`` (problem encoder, mixture prior,
  decoder; all S samples in one batch), i.e. the network alone;
* **sampling + angles + FK**: ``ggik.inference.sample_joint_angles`` (batch building, the model, joint
  angles recovered from the point sets, FK pose errors in float64): what a user gets per goal.

Robots: random DH robots of --dofs DOF (``ggik.random_robot(dof, seed)``) and every robot in urdfs/
(--robots). Per sample = time / S; per problem = the time for the one goal. Sizes whose activations
would exceed --max-gb are skipped and noted; the estimate is S x N^2 x hidden x 4 bytes x 4 (N graph nodes;
the dense EGNN keeps about 3.5 edge tensors of S x N^2 x hidden floats alive, measured by peak RSS), so
the default model (hidden 128) at 30 DOF (N = 64) and S = 1024 needs ~8 GiB and runs under the default 12.

Writes OUT_DIR/timing.md, timing.csv (``ggik.report.Table``, with the command, machine and load) and
timing.png (``ggik.plots.plot_timing``, sampling + angles + FK per robot), and prints the table.

Usage: ``python eval/bench_sampling.py --ckpt runs/default/last.pt [--samples 1 4 16 64 256 1024]
[--dofs 6 12 18 24 30] [--robots NAME ...] [--repeats 5] [--threads 1] [--out-dir eval/results]``
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import zlib
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _benchutil import busy_processes, default_robots, load_checkpoint_or_exit, robot_from_arg, script_command  # noqa: E402

from ggik import RobotGraph  # noqa: E402
from ggik.graph.batch import GraphBatch  # noqa: E402
from ggik.rng import step_generator  # noqa: E402
from ggik.ik.sampling import sample_joint_angles  # noqa: E402
from ggik.evaluation.report import Table  # noqa: E402

WARMUPS = 2
DEFAULT_SAMPLES = [1, 4, 16, 64, 256, 1024]
DEFAULT_DOFS = [6, 12, 18, 24, 30]


def median_time(fn, repeats: int, warmups: int = WARMUPS) -> tuple[float, float, float]:
    """(median, min, max) wall seconds of ``repeats`` calls of ``fn()`` after ``warmups`` untimed calls."""
    for _ in range(warmups):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def _positive_ints(values: list[int], what: str, minimum: int = 1) -> list[int]:
    bad = [v for v in values if v < minimum]
    if bad or not values:
        raise SystemExit(f"bench_sampling: {what} must be integers >= {minimum}, got {values}")
    return values


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", required=True, help="checkpoint (RUN_DIR/last.pt) written by ggik train")
    ap.add_argument("--samples", type=int, nargs="+", default=DEFAULT_SAMPLES, help="numbers of samples S per goal")
    ap.add_argument("--dofs", type=int, nargs="*", default=DEFAULT_DOFS, help="DOFs of the random robots (none: no random robots)")
    ap.add_argument("--robots", nargs="*", default=None, help="shipped robots (default: all of urdfs/; none: only random robots)")
    ap.add_argument("--repeats", type=int, default=5, help="timed calls per measurement (the median is reported)")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (0 = torch's default)")
    ap.add_argument("--seed", type=int, default=0, help="seeds the goals, the random robots and the sampling noise")
    ap.add_argument("--max-gb", type=float, default=12.0, help="skip sizes whose estimated activations exceed this [GiB]")
    ap.add_argument("--out-dir", default="eval/results", help="folder for timing.md, timing.csv, timing.png")
    ap.add_argument("--load-probe", type=float, default=1.0,
                    help="seconds spent before and after the run listing other busy processes (for the notes)")
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bar")
    args = ap.parse_args(argv)
    samples = sorted(set(_positive_ints(args.samples, "--samples")))
    dofs = _positive_ints(args.dofs, "--dofs", 2) if args.dofs else []
    _positive_ints([args.repeats], "--repeats")
    if args.threads < 0:
        raise SystemExit(f"bench_sampling: --threads must be >= 0, got {args.threads}")
    if not args.load_probe > 0:
        raise SystemExit(f"bench_sampling: --load-probe must be positive, got {args.load_probe}")
    if not args.max_gb > 0:
        raise SystemExit(f"bench_sampling: --max-gb must be positive, got {args.max_gb}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)

    from tqdm import tqdm

    from ggik.evaluation.plots import plot_timing

    robot_names = [f"random{d}" for d in dofs] + (default_robots() if args.robots is None else args.robots)
    if not robot_names:
        raise SystemExit("bench_sampling: no robots to time (--dofs and --robots are both empty)")
    robots = [robot_from_arg(n, args.seed) for n in robot_names]
    model, ckpt = load_checkpoint_or_exit(args.ckpt)
    before = busy_processes(args.load_probe)
    hidden = model.cfg.hidden
    param = next(model.parameters())

    table = Table(
        f"GGIK sampling time for one goal against the number of samples S (median of {args.repeats} after {WARMUPS} warm-ups)",
        ["robot", "dof", "nodes", "samples", "model sampling [ms]", "model per sample [us]",
         "sampling + angles + FK per goal [ms]", "per sample [us]", "samples per second", "spread [%]"],
    )
    plot_rows, skipped = [], []
    bar = tqdm(total=len(robots) * len(samples), desc="sampling time", unit="size", disable=args.no_progress, dynamic_ncols=True)
    for robot in robots:
        graph = RobotGraph.from_robot(robot)
        key = zlib.crc32(robot.name.encode())
        T = robot.fk(robot.sample_q(1, step_generator(args.seed, 0x60A1, key)))  # (1, 4, 4)
        batch = GraphBatch.from_graph(graph, T_goal=T).to(device=param.device, dtype=param.dtype)
        N = graph.num_nodes
        for S in samples:
            bar.set_postfix_str(f"{robot.name} S={S}")
            gib = S * N * N * hidden * 4 * 4 / 2**30
            if gib > args.max_gb:
                skipped.append(f"{robot.name} S={S} (~{gib:.1f} GiB)")
                nan = float("nan")
                table.add(robot.name, robot.dof, N, S, nan, nan, nan, nan, nan, nan)
                bar.update(1)
                continue
            g = step_generator(args.seed, 0x5A, key, S)
            with torch.no_grad():
                t_model, _, _ = median_time(lambda: model.sample(batch, S, generator=g), args.repeats)
                t_full, lo, hi = median_time(lambda: sample_joint_angles(model, graph, T, S, generator=g), args.repeats)
            table.add(robot.name, robot.dof, N, S, 1e3 * t_model, 1e6 * t_model / S, 1e3 * t_full, 1e6 * t_full / S,
                      S / t_full, 100 * (hi - lo) / t_full)
            plot_rows.append((f"{robot.name} ({robot.dof} DOF)", S, t_full))
            bar.update(1)
    bar.close()
    after = busy_processes(args.load_probe)

    cfg = model.cfg
    table.notes += [
        f"Checkpoint {args.ckpt}: step {ckpt.get('step', '?')}, {model.num_parameters():,} parameters "
        f"(dim {cfg.dim}, hidden {cfg.hidden}, {cfg.enc_layers} encoder / {cfg.dec_layers} decoder layers), float32 on the CPU.",
        "model sampling: GGIKModel.sample on a prepared GraphBatch (encoder, prior, decoder; S samples in one batch). "
        "sampling + angles + FK: ggik.inference.sample_joint_angles (batch building, model, RobotGraph.joint_angles, "
        "FK pose errors in float64) = the time per problem; per sample = that / S.",
        "Wall time (time.perf_counter), one goal per call. spread: (max - min) / median of the sampling + angles + FK repeats.",
        f"Random robots: ggik.random_robot(dof) seeded from --seed {args.seed}; goals: q uniform within the limits, seeded.",
        f"Other processes on the machine, before the run: {before}; after: {after}.",
    ]
    if skipped:
        table.notes.append(f"Skipped (estimated activations above --max-gb {args.max_gb:g} GiB): {', '.join(skipped)}.")
    out = Path(args.out_dir)
    command = script_command(__file__, argv)
    table.write(out / "timing", command=command, seed=args.seed)
    if plot_rows:
        plot_timing(plot_rows, out / "timing.png",
                    title=f"GGIK sampling + angle recovery + FK for one goal ({torch.get_num_threads()} CPU thread(s))")
    print(table.markdown(command, args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
