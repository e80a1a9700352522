"""Starting a new run from another checkpoint's weights (``ggik train --init CKPT``, :meth:`Trainer.init_from`):
the architecture check, the weights, and the record of where they came from."""

from __future__ import annotations

from pathlib import Path

from ggik.checkpoint import load_checkpoint, recorded_training_set, transfer_weights
from ggik.errors import GGIKError
from ggik.nn.cvae import GGIKModel
from ggik.training.config import TrainConfig
from ggik.typed_config import from_dict, to_dict

__all__ = ["load_initial_weights", "NOT_ARCHITECTURE"]

#: model config keys that change what the model is given, not its weights: a run may start from a model that differs
NOT_ARCHITECTURE = ("graph",)


def load_initial_weights(model: GGIKModel, path: str | Path, partial: bool = False) -> tuple[dict, dict | None]:
    """Load the weights of checkpoint ``path`` (full or weights-only) into ``model``.

    ``model``'s config must equal the checkpoint's but for the graph convention (:data:`NOT_ARCHITECTURE`: the same
    weights read another graph of the same arm, e.g. v9's weights fine-tuned on canonical graphs; GGIKError naming
    every differing key otherwise), unless
    ``partial``: then the architecture may differ and whatever fits is taken (:func:`transfer_weights`; the
    record's ``transfer`` counts copied, widened, fresh and dropped tensors). Returns (the source record: path,
    format, step, examples, ggik version and the source's own ``init_from``; what the source's weights were trained
    on, :func:`ggik.checkpoint.recorded_training_set`, or None).
    """
    ckpt = load_checkpoint(path)
    try:
        source = to_dict(from_dict(TrainConfig, ckpt["config"]).model)
    except (KeyError, TypeError, GGIKError) as exc:
        raise GGIKError(f"{path}: no usable model config in the checkpoint ({exc})") from None
    mine = to_dict(model.cfg)
    source, mine = ({k: v for k, v in d.items() if k not in NOT_ARCHITECTURE} for d in (source, mine))
    transfer = None
    if partial:
        transfer = transfer_weights(model, ckpt.get("model") or {})
        if not transfer["copied"] and not transfer["widened"]:
            raise GGIKError(f"cannot initialise from {path}: none of its weights fits this model")
    elif source != mine:
        diff = ", ".join(
            f"model.{k}: {mine.get(k)!r} here, {source.get(k)!r} in the checkpoint"
            for k in sorted(set(source) | set(mine))
            if source.get(k) != mine.get(k)
        )
        raise GGIKError(
            f"cannot initialise from {path}: the model architecture differs ({diff}); leave the model "
            "section out of --config/--set to take the checkpoint's, or add --init-partial to take the weights "
            "that fit"
        )
    if not partial:
        try:
            model.load_state_dict(ckpt["model"])
        except (KeyError, RuntimeError) as exc:
            raise GGIKError(f"{path}: its weights do not fit the model ({exc})") from None
    record = {
        "path": str(path),
        "format": ckpt["format"],
        "step": int(ckpt.get("step", 0)),
        "examples": int(ckpt.get("examples", 0)),
        "ggik_version": ckpt.get("ggik_version"),
    }
    if transfer is not None:
        record["transfer"] = {k: len(v) for k, v in transfer.items()}
        record["fresh"] = transfer["fresh"]
    if ckpt.get("init_from"):
        record["init_from"] = ckpt["init_from"]  # a chain of fine-tunings stays traceable
    return record, recorded_training_set(ckpt)  # a fine-tuned model has seen its source's robots too
