"""Seeds on arms the model never saw: per-sample LM success of a model's samples, and what random starts solve, on the
adapt study's held-out goals (issue 60, part 6).

Arms: the four public files of ``benchmarks/adapt/urdfs`` (UR5, Flexiv Rizon 4, Baxter's left arm, Fetch with its torso
locked at 0 m), the chains of ``benchmarks.adapt.study.ARMS``. Goals: per arm the adapt study's held-out pose goals
(``ProblemSet.generate([arm], 100, seed 0 + TEST_SEED_OFFSET)``, what ``ggik adapt`` measures its held-out success on;
``--goals`` takes the first n). For each sampling seed (``ggik solve``'s ``--seed`` is 0), every call
through :meth:`ggik.GGIK.solve` with ``torch.Generator().manual_seed(seed)``, as ``ggik solve`` makes it (seeds
``--seed`` to ``--seed`` + ``--sampling-seeds`` - 1):

- raw: the S model samples as drawn; per sample, within 1 cm and 1 deg (the GGIK paper's criterion), and per goal the
  best of S (the adapt study's raw success);
- samples + LM (``SolveConfig(samples=S, refine="lm")``): LM from every sample, no restarts; per sample and per goal,
  strict: within 1 mm and 0.01 rad and the joint limits;
- model-first (``ggik solve``'s default): LM from the samples, random restarts for the goals they leave unsolved;
- random (``--strategy random``): LM from R uniform random starts, no model; per start and per goal, strict.

The script only calls ``GGIK.load``, ``GGIK.solve``, ``SolveConfig``, ``Robot.from_urdf`` and ``ProblemSet``, which
the code before the latents were drawn per call (b8e5e79) has too, so the same file measures that code in a
``git worktree`` (README). The table's notes name this file's sha256.

Command (from the repository root, or a worktree's, alone on the machine)::

    python -m benchmarks.unseen_seeds.seed_quality --sampling-seeds 5 --threads 1 \
        --out benchmarks/unseen_seeds/results/head
"""

from __future__ import annotations

import argparse
import hashlib
import math
import sys
from pathlib import Path

import torch

from benchmarks.common.scripts import BenchmarkError, positive_int, run_model_study
from ggik import GGIK, Robot, SolveConfig
from ggik.data import ProblemSet
from ggik.evaluation.report import Table
from ggik.training.adapt_config import TEST_SEED_OFFSET

__all__ = ["ARM_FILES", "COLUMNS", "arm_robot", "held_out_goals", "measure", "main"]

URDFS = Path(__file__).resolve().parents[1] / "adapt" / "urdfs"
SHIPPED = "ggik/weights/ggik_default.pt"  #: the default --ckpt (a path, so that every version's header names it)
RAW_POS_TOL, RAW_ROT_TOL = 0.01, math.radians(1.0)  #: raw samples: the GGIK paper's 1 cm and 1 deg
#: name -> (file in benchmarks/adapt/urdfs, base link, EE link, locked joints): benchmarks.adapt.study.ARMS's chains
ARM_FILES = {
    "ur5": ("ur5_formatted.urdf", None, None, {}),
    "fetch": ("fetch_formatted.urdf", "base_link", "gripper_link", {"torso_lift_joint": 0.0}),
    "baxter": ("baxter.urdf", "base", "left_hand", {}),
    "rizon4": ("flexiv_rizon4_kinematics.urdf", None, None, {}),
}
COLUMNS = [
    "arm",
    "seed",
    "goals",
    "raw: samples within 1 cm, 1 deg [%]",
    "raw: goals, best of S [%]",
    "samples + LM: samples strict [%]",
    "samples + LM: goals solved",
    "model-first (ggik solve default): goals solved",
    "random + LM: starts strict [%]",
    "random + LM: goals solved",
    "goals samples + LM leave unsolved (random + LM solves them?)",
]


def arm_robot(name: str) -> Robot:
    """The chain of the adapt study's arm ``name`` (:data:`ARM_FILES`)."""
    file, base, ee, lock = ARM_FILES[name]
    robot = Robot.from_urdf(URDFS / file, base, ee)
    return robot.lock(lock) if lock else robot


def held_out_goals(robot: Robot, n: int) -> torch.Tensor:
    """The first ``n`` of the adapt study's 100 held-out pose goals of ``robot`` (B, 4, 4), base-link frame [m]."""
    _, _, T = ProblemSet.generate([robot], 100, 0 + TEST_SEED_OFFSET).groups()[0]
    return T[:n]


def _share(mask: torch.Tensor) -> float:
    return 100.0 * mask.double().mean().item()


def measure(solver: GGIK, name: str, goals: int, samples: int, random_starts: int, seed: int) -> list:
    """One row of :data:`COLUMNS`: arm ``name``'s first ``goals`` held-out goals, sampling seed ``seed``."""
    robot = arm_robot(name)
    T = held_out_goals(robot, goals)

    def solve(config: SolveConfig):
        return solver.solve(robot, T, config, generator=torch.Generator().manual_seed(seed))

    raw = solve(SolveConfig(samples=samples, pos_tol=RAW_POS_TOL, rot_tol=RAW_ROT_TOL))
    lm = solve(SolveConfig(samples=samples, refine="lm"))
    first = solve(SolveConfig(samples=samples, strategy="model-first", random_starts=random_starts))
    rand = solve(SolveConfig(strategy="random", random_starts=random_starts))
    lm_ok, rand_ok = lm.success & lm.within_limits, rand.success & rand.within_limits
    first_ok = (first.success & first.within_limits).any(1)
    missed = [f"{b} ({'yes' if rand_ok[b].any() else 'no'})" for b in (~lm_ok.any(1)).nonzero()[:, 0].tolist()]
    return [
        name,
        seed,
        T.shape[0],
        _share(raw.success),
        _share(raw.success.any(1)),
        _share(lm_ok),
        int(lm_ok.any(1).sum()),
        int(first_ok.sum()),
        _share(rand_ok),
        int(rand_ok.any(1).sum()),
        ", ".join(missed) or "none",
    ]


def _table(args: argparse.Namespace) -> Table:
    unknown = [a for a in args.arms if a not in ARM_FILES]
    if unknown:
        raise BenchmarkError(f"--arms: unknown {unknown}; the study's arms are {list(ARM_FILES)}")
    if args.goals > 100:
        raise BenchmarkError(f"--goals: the adapt study holds out 100 goals per arm, got {args.goals}")
    solver = GGIK.load(args.ckpt)
    table = Table("Seeds on arms the model never saw: per-sample LM success and random starts", list(COLUMNS))
    for name in args.arms:
        for seed in range(args.seed, args.seed + args.sampling_seeds):
            table.add(*measure(solver, name, args.goals, args.samples, args.random_starts, seed))
            print(" | ".join(str(v) for v in table.rows[-1]), file=sys.stderr, flush=True)
    here = Path(__file__).resolve()
    table.notes += [
        f"study script {here.name}, sha256 {hashlib.sha256(here.read_bytes()).hexdigest()[:12]}; the code measured: "
        "the Code line above (ggik and this file's checkout)",
        f"S = {args.samples} model samples, R = {args.random_starts} random starts per goal; goals: the adapt study's "
        f"held-out goals (seed {TEST_SEED_OFFSET}), the first {args.goals} per arm",
        "raw: within 1 cm and 1 deg; strict (samples + LM, model-first, random): within 1 mm and 0.01 rad and the "
        "joint limits; goal numbers count from 0",
    ]
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ckpt", default=SHIPPED, help=f"model file (default {SHIPPED}, the shipped model)")
    ap.add_argument("--arms", nargs="+", default=list(ARM_FILES), help=f"of {list(ARM_FILES)}")
    ap.add_argument("--goals", type=positive_int, default=100, help="held-out goals per arm (at most 100)")
    ap.add_argument(
        "--sampling-seeds", type=positive_int, default=1, help="N: the sampling seeds --seed .. --seed + N - 1"
    )
    ap.add_argument("-s", "--samples", type=positive_int, default=32, help="model samples per goal")
    ap.add_argument("--random-starts", type=positive_int, default=32, help="random starts per goal")
    return run_model_study(__file__, ap, argv, _table)


if __name__ == "__main__":
    sys.exit(main())
