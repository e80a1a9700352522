"""``ggik adapt``: a model for one arm (a URDF file) in minutes, fine-tuned from the shipped model or ``--ckpt``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ggik.cli.arguments import add_threads_arg, positive_float
from ggik.cli.commands import HELP
from ggik.cli.robots import add_chain_args, add_lock_arg, check_model_chain, parse_locks, robot_from_options
from ggik.errors import GGIKError

__all__ = ["add_adapt_parser", "cmd_adapt"]


def cmd_adapt(args: argparse.Namespace) -> int:
    from ggik.kinematics.robot_files import RobotFile
    from ggik.training.adapt import AdaptConfig, adapt

    if not Path(args.urdf).is_file():
        raise GGIKError(f"--urdf {args.urdf}: file not found")
    robot = robot_from_options(None, args.urdf, args.base, args.ee, args.lock)  # the file's faults, named by option
    check_model_chain(robot, f"--urdf {args.urdf}")
    arm = RobotFile(args.urdf, args.base, args.ee, parse_locks(args.lock or []))
    cfg = AdaptConfig(minutes=args.minutes, threads=args.threads or 0)
    progress = not args.no_progress
    result = adapt(arm, args.out, cfg, args.ckpt, args.run_dir, args.device, progress=progress, force=args.force)
    measured = len(result.curve)
    print(
        f"{result.arm}: held-out raw success (best of {cfg.val_samples} within 1 cm and 1 deg, {cfg.test_problems} "
        f"goals never used to choose the model) {result.base_test_success:.1%} before, {result.test_success:.1%} "
        f"after {result.elapsed_s / 60:.1f} min ({result.steps:,} steps, {result.examples:,} examples)"
    )
    print(
        f"selection goals ({cfg.val_problems}, the best of {measured} measurements on them: optimistic): "
        f"{result.base_success:.1%} before, {result.best_success:.1%} after (the best model at step "
        f"{result.best_step:,})"
    )
    if result.blend < 1.0:
        print(
            f"blended {result.blend:.2f} of the way from the base model to the adapted one, so that the base model's "
            f"training robots keep {cfg.retain:.0%} of the goals they solved (less {cfg.retain_margin})"
        )
    if result.replay_before and result.replay_after:
        before = sum(result.replay_before.values()) / len(result.replay_before)
        after = sum(result.replay_after.values()) / len(result.replay_after)
        what = f"the base model's training robots (mean raw success, {cfg.replay_problems} goals each)"
        print(f"{what}: {before:.1%} before, {after:.1%} after")
    print(f"model: {result.out} (weights only); resumable run: {args.run_dir or str(result.out) + '.adapt'}")
    chain = "".join(f" --{flag} {value}" for flag, value in (("base", args.base), ("ee", args.ee)) if value)
    chain += "".join(f" --lock {spec}" for spec in args.lock or [])
    print(f"use it: ggik solve --ckpt {result.out} --urdf {args.urdf}{chain} --pose X Y Z QW QX QY QZ")
    if result.fault:
        print(f"ggik adapt: {result.fault}", file=sys.stderr)
        return 1
    return 0


def add_adapt_parser(sub: Any) -> None:
    """``ggik adapt`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser(
        "adapt",
        help=HELP["adapt"],
        description="Fine-tune a model (default: the shipped one) on one arm, half of every batch replaying the "
        "model's own training robots, for a wall-clock budget. The arm's raw success (100 selection goals, best of 32 "
        "within 1 cm and 1 deg) is measured every minute; the best model is written at once, and blended back toward "
        "the base weights at the end if the training robots would solve under 0.95x their goals (less one). The "
        "result's success is measured on 100 other, held-out goals, before and after. The same command continues a "
        "stopped run; Ctrl-C keeps the best model. A step with a non-finite loss or gradient stops the training "
        "(the run keeps its last finite state; the model and its report are still written; exit status 1). Recipe: "
        "ggik.training.adapt_config.AdaptConfig.",
    )
    p.add_argument("--urdf", required=True, help="the arm's URDF file")
    add_chain_args(p)
    add_lock_arg(p)
    p.add_argument("--minutes", type=positive_float, required=True, help="wall-clock budget [min] over all sittings")
    p.add_argument(
        "--out",
        required=True,
        help="the adapted model file (weights only; the best model measured); never the base model; an existing file "
        "must be this run's (see --force)",
    )
    p.add_argument("--force", action="store_true", help="write over an existing --out that this run did not write")
    p.add_argument("--ckpt", help="the model to adapt (default: the shipped model)")
    p.add_argument("--run-dir", help="the resumable run (default OUT.adapt); the same command continues it")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_threads_arg(p)
    p.set_defaults(func=cmd_adapt)
