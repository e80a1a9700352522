"""``ggik train``: a new run from a config (or from a checkpoint's weights with ``--init``), or ``--resume`` one."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from ggik.cli.arguments import add_threads_arg, positive_float
from ggik.cli.commands import HELP
from ggik.errors import GGIKError

__all__ = ["add_train_parser", "cmd_train"]


def cmd_train(args: argparse.Namespace) -> int:
    from ggik.checkpoint import config_for_init
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer
    from ggik.typed_config import apply_overrides, from_dict, load_yaml, merge

    if args.init_partial and not args.init:
        raise GGIKError("--init-partial goes with --init CKPT")
    if args.resume and args.init:
        raise GGIKError(
            "--init starts a new run from a checkpoint's weights, --resume continues a run: give one of them"
        )
    threads = [] if getattr(args, "threads", None) is None else [f"threads={args.threads}"]  # --threads N
    overrides = apply_overrides({}, (args.set or []) + threads)
    common = dict(device=args.device, wandb=args.wandb, progress=not args.no_progress)
    if args.resume:
        if args.config:
            raise GGIKError("--resume continues a run with its own config; use --set to change e.g. steps")
        trainer = Trainer.resume(args.resume, overrides, **common)
    else:
        data = merge(load_yaml(args.config), overrides) if args.config else overrides
        if args.init:
            data = config_for_init(args.init, data)  # the model section comes from the checkpoint
        cfg = from_dict(TrainConfig, data)
        stem = Path(args.config).stem if args.config else ("init" if args.init else "run")
        out = Path(args.out) if args.out else Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        if (out / "last.pt").exists():
            raise GGIKError(f"{out} already holds a run (last.pt); use --resume {out} or another --out")
        trainer = Trainer(cfg, out, **common)
        if args.init:
            src = trainer.init_from(args.init, partial=args.init_partial)
            if trainer.rank == 0:
                if "transfer" in src:
                    print(f"partial initialisation: {src['transfer']} tensors (copied, widened, fresh, dropped)")
                print(
                    f"initialised from {src['path']} (step {src['step']}, {src['examples']:,} examples); "
                    "new run: step 0, fresh optimiser and schedule"
                )
    if trainer.rank == 0:
        print(
            f"run dir: {trainer.run_dir}  (model: {trainer.model.num_parameters():,} parameters, "
            f"step {trainer.step}/{trainer.cfg.steps})"
        )
    last = trainer.train(max_minutes=args.max_minutes, max_cpu_minutes=args.max_cpu_minutes)
    trainer.close()  # only after a clean finish: a barrier with a failed rank would hang (its error ends the job)
    if trainer.rank == 0:
        print(f"stopped at step {trainer.step}: {json.dumps(last)}")
        print(f"checkpoint: {trainer.run_dir / 'last.pt'}")
    return 0


def add_train_parser(sub: Any) -> None:
    """``ggik train`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("train", help=HELP["train"])
    p.add_argument("--config", help="YAML file of overrides, e.g. train/configs/default.yaml")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    p.add_argument("--out", help="run folder (default runs/<config>-<time>)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue RUN_DIR/last.pt exactly")
    p.add_argument(
        "--init",
        metavar="CKPT",
        help="start a new run (step 0, fresh optimiser) from the weights of CKPT "
        "(full or weights-only; its model config is taken), e.g. to fine-tune to a robot",
    )
    p.add_argument(
        "--init-partial",
        action="store_true",
        help="with --init: the model config may differ (--set model.KEY=VALUE); weights that fit are taken, "
        "smaller ones are widened with zeros, the rest start fresh (ggik.checkpoint.transfer_weights)",
    )
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    p.add_argument("--wandb", default="disabled", choices=["disabled", "offline", "online"])
    p.add_argument("--max-minutes", type=positive_float, help="stop (and checkpoint) after this much wall time")
    p.add_argument(
        "--max-cpu-minutes",
        type=positive_float,
        help="stop (and checkpoint) when the run's CPU time, counted over all sittings, reaches this budget",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_threads_arg(p, note="; the run's config field threads, the same as --set threads=N")
    p.set_defaults(func=cmd_train)
