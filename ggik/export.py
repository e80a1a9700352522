"""Weights-only export of a training checkpoint: the file shipped as ``ggik/weights/ggik_default.pt``.

    ggik export train/checkpoints/default/last.pt ggik/weights/ggik_default.pt

A training checkpoint (``RUN_DIR/last.pt``, format ``ggik-checkpoint/1``) also holds the optimiser
(AdamW moments: twice the model's size), the scheduler and every process's RNG state, which only
``--resume`` needs. :func:`export_checkpoint` keeps what inference needs plus the training provenance:

* ``format`` (``ggik-weights/1``, :data:`ggik.training.WEIGHTS_FORMAT`), ``ggik_version`` (of the
  exporting ggik), ``torch_version`` (of the training run), ``source_ggik_version`` (of the training run);
* ``config`` (the full training config: the model is rebuilt from it), ``model`` (state_dict, floating
  tensors cast to float32), ``training_robots`` (decides which robots are unseen);
* ``step``, ``examples``, ``wall_s`` (training wall time [s], summed over steps, one process's view),
  ``world_size`` (processes of the run), ``cpu_s`` (CPU time [s] of the training process, all threads,
  see :class:`ggik.training.Trainer`) and ``cpu_untracked_wall_s`` (wall time of the part of the run made
  before ggik tracked CPU time, not in ``cpu_s``), and ``init_from`` (the weights a fine-tuning run started
  from) when the checkpoint records them.

The file loads with :func:`ggik.training.load_model` and :meth:`ggik.GGIK.load` like a full checkpoint;
``ggik train --resume`` refuses it with a clear error. It is written atomically and must stay within
:data:`MAX_EXPORT_BYTES` (the package ships it).
"""
from __future__ import annotations

import io
from pathlib import Path

import torch

from . import __version__
from .errors import GGIKError
from .fileio import atomic_write

__all__ = ["export_checkpoint", "MAX_EXPORT_BYTES"]

MAX_EXPORT_BYTES = 20 * 1024 * 1024  #: 20 MB (MiB): the budget of the model shipped inside the package


def export_checkpoint(src: str | Path, dst: str | Path, max_bytes: int = MAX_EXPORT_BYTES) -> dict:
    """Write the weights-only form of checkpoint ``src`` to ``dst`` (atomically); returns what was written.

    ``src`` must be a checkpoint the current ggik can load (the model is rebuilt as a check), full or
    already weights-only. Raises ``FileNotFoundError`` for a missing ``src``, ``GGIKError`` for a corrupt
    or incompatible one, and ``GGIKError`` if the export would exceed ``max_bytes`` (nothing is written).
    """
    from .training import WEIGHTS_FORMAT, load_model

    src, dst = Path(src), Path(dst)
    model, ckpt = load_model(src)  # validates format and architecture
    state = {
        k: (v.detach().to(torch.float32) if v.is_floating_point() else v.detach()).contiguous().clone()
        for k, v in model.state_dict().items()
    }
    payload = {
        "format": WEIGHTS_FORMAT,
        "ggik_version": __version__,
        # an export's own ggik_version is the exporter's: keep the training run's through re-exports
        "source_ggik_version": ckpt.get("source_ggik_version") if ckpt["format"] == WEIGHTS_FORMAT else ckpt.get("ggik_version"),
        "torch_version": ckpt.get("torch_version", str(torch.__version__)),
        "config": ckpt["config"],
        "model": state,
        "training_robots": ckpt["training_robots"],
        "step": int(ckpt["step"]),
        "examples": int(ckpt["examples"]),
        "wall_s": float(ckpt["wall_s"]),
        "world_size": int(ckpt.get("world_size", 1)),
    }
    for key in ("cpu_s", "cpu_untracked_wall_s"):
        if key in ckpt:
            payload[key] = float(ckpt[key])
    if ckpt.get("init_from") is not None:
        payload["init_from"] = ckpt["init_from"]
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getvalue()
    if len(data) > max_bytes:
        raise GGIKError(
            f"the weights-only export of {src} is {len(data) / 2**20:.1f} MB, over the {max_bytes / 2**20:.1f} MB "
            f"limit of a shipped model ({model.num_parameters():,} parameters); nothing was written to {dst}"
        )
    atomic_write(dst, lambda f: f.write(data))
    return payload
