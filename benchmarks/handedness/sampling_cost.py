"""The sampling cost of one model against another: raw sampling timed for both in one process, alternating, per arm.

For each of the nine training arms: ``--goals`` pose goals (drawn as the study's, :data:`benchmarks.handedness.study.
GOAL_SEED` + the arm's index), then ``--warmups`` untimed rounds and ``--repeats`` timed rounds. A round times one
call of :func:`ggik.ik.sampling.sample_joint_angles` (``--samples`` per goal, the same goals and the same noise seed
every call) for each model, back to back, in the order A, B on even rounds and B, A on odd ones, so that both models
see the same load and neither always runs second. Each round gives one paired ratio B / A; an arm's ratio is the
median of its rounds' ratios, with a 95 % bootstrap interval of that median (resampling rounds, ``--boot``
resamples, seeded); "all arms" is the ratio of the summed per-arm median times (nine arms, one goal each, the cost of
a mix), its interval bootstrapped the same way arm by arm. The spread of the paired ratios (min-max over rounds) shows
how much one round can mislead.

``--compile NAME``: that model samples through ``torch.compile`` (:meth:`ggik.nn.cvae.GGIKModel.compile_decoder`,
what ``GGIK(compile_sampler=True)`` does; compiled in the warm-up rounds), so one model file against itself compiled
gives the compiled sampler's speed-up the same way.

Commands (from the repository root; the machine may be shared, so the header and notes record the load)::

    python -m benchmarks.handedness.sampling_cost --models v10=ggik/weights/ggik_default.pt \
        handed=train/checkpoints/handedness/export.pt --threads 1 \
        --out benchmarks/handedness/results/sampling_cost_1thread
    python -m benchmarks.handedness.sampling_cost --models compiled=ggik/weights/ggik_default.pt \
        eager=ggik/weights/ggik_default.pt --compile compiled --threads 1 \
        --out benchmarks/sampler_price/results/compiled_alternating_1thread
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time

import torch

from benchmarks.common.load import busy_processes
from benchmarks.common.scripts import BenchmarkError, nonnegative_int, positive_int, script_command
from benchmarks.handedness.study import GOAL_SEED
from ggik import Robot, RobotGraph
from ggik.checkpoint import load_model
from ggik.evaluation.report import Table, code_version, model_stamp
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics.registry import available_robots

__all__ = ["main", "arm_times", "load_models", "ratio_summary"]

NOISE_SEED = 0  #: the sampling noise of every timed call (the same work in every round)


def arm_times(models: list, robot: Robot, index: int, goals: int, samples: int, warmups: int, repeats: int) -> list:
    """Per model (in ``models``' order; two models), the ``repeats`` wall times [s] of raw sampling ``samples`` per
    goal for ``goals`` pose goals of ``robot`` (the arm number ``index``: its goal seed), timed alternately A, B / B, A
    after ``warmups`` untimed rounds. Returns [[t_A per round], [t_B per round]]."""
    gen = torch.Generator().manual_seed(GOAL_SEED + index)
    q = robot.sample_q(goals, gen).to(torch.float64)
    T = robot.fk(q)
    graphs = [RobotGraph.from_robot(robot, model.cfg.graph) for model in models]
    times: list[list[float]] = [[] for _ in models]
    for r in range(warmups + repeats):
        order = range(len(models)) if r % 2 == 0 else reversed(range(len(models)))
        for m in order:
            t0 = time.perf_counter()
            sample_joint_angles(models[m], graphs[m], T, samples, torch.Generator().manual_seed(NOISE_SEED))
            if r >= warmups:
                times[m].append(time.perf_counter() - t0)
    return times


def load_models(specs: list[str], compiled: list[str]) -> tuple[list[str], list[str], list]:
    """(names, paths, models in eval mode) of ``specs`` "NAME=CHECKPOINT"; the models named in ``compiled`` decode
    through ``torch.compile``. :class:`BenchmarkError` for a malformed spec or a ``compiled`` name not among them."""
    pairs = [spec.partition("=") for spec in specs]
    if any(not name or not sep or not path for name, sep, path in pairs):
        raise BenchmarkError(f"--models: NAME=CHECKPOINT each, got {specs}")
    names, paths = [p[0] for p in pairs], [p[2] for p in pairs]
    if len(set(names)) != len(names) or not set(compiled) <= set(names):
        raise BenchmarkError(f"--models names must differ and --compile name some of them: {names}, {compiled}")
    models = [load_model(path)[0].eval() for path in paths]
    for name, model in zip(names, models):
        model.compile_decoder(name in compiled)
    return names, paths, models


def _bootstrap(stat, rounds: list, boot: int, rng: random.Random) -> tuple[float, float]:
    """95 % percentile interval of ``stat`` over ``boot`` resamples (with replacement) of ``rounds``."""
    values = sorted(stat([rounds[rng.randrange(len(rounds))] for _ in rounds]) for _ in range(boot))
    return values[int(0.025 * (boot - 1))], values[int(0.975 * (boot - 1))]


def ratio_summary(per_arm: dict[str, list], boot: int, seed: int) -> tuple[list[list], list]:
    """Table rows per arm and for all arms from ``per_arm``: arm -> [[t_A per round], [t_B per round]] [s].

    Per arm: (arm, A ms, B ms (medians of the rounds), median paired ratio B / A, its 95 % bootstrap interval (lo,
    hi), min and max paired ratio). All arms: the ratio of the summed per-arm medians, its interval from resampling
    each arm's rounds."""
    rng = random.Random(seed)
    rows = []
    for arm, (ta, tb) in per_arm.items():
        ratios = [b / a for a, b in zip(ta, tb)]
        lo, hi = _bootstrap(statistics.median, ratios, boot, rng)
        rows.append(
            [arm, 1e3 * statistics.median(ta), 1e3 * statistics.median(tb), statistics.median(ratios), lo, hi]
            + [min(ratios), max(ratios)]
        )
    pairs = {arm: list(zip(ta, tb)) for arm, (ta, tb) in per_arm.items()}

    def total(resampled: dict[str, list]) -> float:
        a = sum(statistics.median(p[0] for p in rounds) for rounds in resampled.values())
        b = sum(statistics.median(p[1] for p in rounds) for rounds in resampled.values())
        return b / a

    values = sorted(
        total({arm: [rounds[rng.randrange(len(rounds))] for _ in rounds] for arm, rounds in pairs.items()})
        for _ in range(boot)
    )
    whole = total(pairs)
    all_ratios = [b / a for rounds in pairs.values() for a, b in rounds]
    summed = [
        "all arms (summed medians)",
        sum(r[1] for r in rows),
        sum(r[2] for r in rows),
        whole,
        values[int(0.025 * (boot - 1))],
        values[int(0.975 * (boot - 1))],
        min(all_ratios),
        max(all_ratios),
    ]
    return rows, summed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", nargs=2, required=True, metavar="NAME=CHECKPOINT", help="A and B: the ratio is B / A")
    ap.add_argument("--goals", type=positive_int, default=32, help="pose goals per arm")
    ap.add_argument("--samples", type=positive_int, default=32, help="samples per goal")
    ap.add_argument("--warmups", type=nonnegative_int, default=2, help="untimed rounds per arm")
    ap.add_argument("--repeats", type=positive_int, default=10, help="timed rounds per arm (A and B each)")
    ap.add_argument("--boot", type=positive_int, default=2000, help="bootstrap resamples")
    ap.add_argument("--threads", type=positive_int, default=1, help="torch CPU threads")
    ap.add_argument("--arms", nargs="+", default=None, help="default: the nine training arms")
    ap.add_argument("--compile", nargs="*", default=[], metavar="NAME", help="models sampled through torch.compile")
    ap.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    ap.add_argument("--out", default=None, help="write the table here (.md and .csv)")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    command = script_command(__file__, argv)
    code_version()  # the code this run starts with
    try:
        names, paths, models = load_models(args.models, args.compile)
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    load_before = busy_processes()
    per_arm = {}
    t_start = time.perf_counter()
    for index, name in enumerate(args.arms or available_robots()):
        robot = Robot.from_name(name)
        per_arm[name] = arm_times(models, robot, index, args.goals, args.samples, args.warmups, args.repeats)
        ta, tb = (statistics.median(t) for t in per_arm[name])
        print(f"{name}: {names[0]} {1e3 * ta:.0f} ms, {names[1]} {1e3 * tb:.0f} ms per call", flush=True)
    load_after = busy_processes()
    rows, summed = ratio_summary(per_arm, args.boot, args.seed)
    a, b = names
    table = Table(
        f"Sampling cost, {b} against {a}: {args.samples} samples per goal, {args.goals} pose goals per arm, "
        f"{args.repeats} alternating rounds per arm, {args.threads} thread(s)",
        [
            "arm",
            f"{a} ms per call",
            f"{b} ms per call",
            f"{b} / {a} (median of rounds)",
            "95 % interval lo",
            "95 % interval hi",
            "min round",
            "max round",
        ],
    )
    for row in rows + [summed]:
        table.add(*row)
    table.notes += [
        f"One call: {args.goals} goals x {args.samples} samples (divide by {args.goals} for ms per goal). Medians of "
        f"{args.repeats} rounds after {args.warmups} untimed ones; a round times {a} and {b} back to back "
        f"({a} first on even rounds, {b} first on odd ones), so both see the same load.",
        f"{b} / {a}: the median of the rounds' paired ratios; interval: 95 % bootstrap of that median ({args.boot} "
        "resamples of the rounds); min / max round: the spread of single paired ratios. All arms: the ratio of the "
        "summed per-arm medians (the cost of one goal on each arm), bootstrapped arm by arm.",
        f"Other processes busy at the start: {load_before}; at the end: {load_after}. "
        f"Wall time of the rounds: {time.perf_counter() - t_start:.0f} s.",
    ]
    stamp = "; ".join(
        f"{n} = {model_stamp(p)}" + (", compiled decoder" if n in args.compile else "") for n, p in zip(names, paths)
    )
    print(table.markdown(command, args.seed, stamp))
    if args.out is not None:
        print("wrote", *table.write(args.out, command, args.seed, stamp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
