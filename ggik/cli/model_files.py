"""``ggik info`` and ``ggik export``: what a checkpoint holds, and its weights-only form."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ggik.cli.commands import HELP

__all__ = ["add_info_parser", "add_export_parser", "cmd_info", "cmd_export", "provenance_lines", "robot_file_lines"]


def _config_value(config: dict, key: str) -> Any:
    """The value of a dotted key (``section.name`` or a top-level name) of a training config dict."""
    section, _, name = key.partition(".")
    return config[section][name] if name else config[section]


def provenance_lines(init_from: dict | None) -> list[str]:
    """The chain of runs a checkpoint was initialised from (``init_from``, nested), one line each, newest first. A
    path names the file as it was when that run started: the shipped model's path recurs for each of its versions."""
    lines = ["  initialised from (newest first; a path names the file as it was then):"] if init_from else []
    k = 0
    while init_from:
        k += 1
        line = f"    {k}. {init_from.get('path', '?')}"
        details = [init_from.get("format"), f"step {init_from.get('step', 0):,}"]
        details.append(f"{init_from.get('examples', 0):,} examples")
        lines.append(f"{line} ({', '.join(d for d in details if d)})")
        transfer = init_from.get("transfer")
        if transfer:
            parts = ", ".join(f"{key} {value}" for key, value in transfer.items())
            lines.append(f"       partial initialisation: tensors {parts}")
        init_from = init_from.get("init_from")
    return lines


def robot_file_lines(files: dict) -> list[str]:
    """The robots a model was trained on from URDF files (``training_robots["files"]``), one line each: name, the
    file as it was given, its sha256 (the text is kept in the model file), chain, locks and weight."""
    lines = ["  robots from URDF files (their text is kept in this file):"] if files else []
    for name, rec in files.items():
        chain = f"{rec.get('base_link') or 'root'} -> {rec.get('ee_link') or 'leaf'}"
        locks = ", ".join(f"{j}={v:g}" for j, v in (rec.get("lock") or {}).items())
        lines.append(
            f"    {name}: {rec.get('path')} sha256 {rec.get('sha256')}, {chain}"
            + (f", locked {locks}" if locks else "")
            + f", weight {float(rec.get('weight', 0.0)):g}"
        )
    return lines


def cmd_info(args: argparse.Namespace) -> int:
    from ggik.checkpoint import complete_config, model_from_checkpoint, read_checkpoint, training_budget

    recorded = read_checkpoint(args.checkpoint)
    config, predated = complete_config(recorded.get("config") or {}, recorded["format"])
    ckpt = {**recorded, "config": config}
    model = model_from_checkpoint(ckpt, args.checkpoint)
    print(f"checkpoint {args.checkpoint}")
    print(f"  ggik {ckpt['ggik_version']} (torch {ckpt.get('torch_version', '?')}), format {ckpt['format']}")
    print(f"  step {ckpt['step']}, examples {ckpt['examples']:,}, processes {ckpt.get('world_size', 1)}")
    print(f"  training budget: {training_budget(ckpt)}")
    print(f"  parameters {model.num_parameters():,}")
    training = dict(ckpt["training_robots"])
    files = training.pop("files", None) or {}
    print(f"  training robots: {json.dumps(training)}")
    for line in robot_file_lines(files):
        print(line)
    adapted = ckpt.get("adaptation")
    if adapted:
        before, after, minutes = adapted["base_success"], adapted["success"], adapted["elapsed_s"] / 60
        held_out = (
            f"held-out raw success {adapted['base_test_success']:.1%} -> {adapted['test_success']:.1%}, selection "
            if adapted.get("test_success") is not None
            else "raw success "
        )
        print(
            f"  adapted to {adapted['robot']} ({adapted['urdf']}, sha256 {adapted['sha256']}) by ggik adapt: "
            f"{held_out}{before:.1%} -> {after:.1%} after {minutes:.1f} min, from {adapted['base']}"
        )
    for line in provenance_lines(ckpt.get("init_from")):
        print(line)
    print(f"  model config: {json.dumps(ckpt['config']['model'])}")
    if predated:  # ggik.checkpoint.IMPLIED_CONFIG
        values = {key: _config_value(config, key) for key in predated}
        print(f"  config keys the file predates (read as before they existed): {json.dumps(values)}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from ggik.checkpoint import export_checkpoint

    payload = export_checkpoint(args.checkpoint, args.output)
    size, source_size = Path(args.output).stat().st_size, Path(args.checkpoint).stat().st_size
    print(
        f"wrote {args.output}: {size / 2**20:.2f} MB, weights only ({payload['format']}), step {payload['step']}, "
        f"{payload['examples']:,} examples, from {args.checkpoint} ({source_size / 2**20:.2f} MB)"
    )
    return 0


def add_info_parser(sub: Any) -> None:
    """``ggik info`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("info", help=HELP["info"])
    p.add_argument("checkpoint")
    p.set_defaults(func=cmd_info)


def add_export_parser(sub: Any) -> None:
    """``ggik export`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("export", help=HELP["export"])
    p.add_argument("checkpoint", help="a checkpoint written by ggik train, e.g. RUN_DIR/last.pt")
    p.add_argument("output", help="output file, e.g. ggik/weights/ggik_default.pt")
    p.set_defaults(func=cmd_export)
