"""The checkpoint: the one owner of what a ggik model file holds, how it is read, and what it says.

Two formats, both ``torch.save`` dicts of tensors and plain data (read with ``weights_only=True``):

* ``ggik-checkpoint/1`` (:data:`CHECKPOINT_FORMAT`): ``RUN_DIR/last.pt`` of ``ggik train``. It holds the
  full training config (``config``; the model is rebuilt from its ``model`` section), ``ggik_version``,
  ``torch_version``, ``training_robots`` (what the weights saw over every stage, :func:`training_set`),
  ``model``, ``optimizer``, ``scheduler``, ``rng`` (one state per process), ``step``, ``examples``,
  ``wall_s`` (training wall time [s]), ``cpu_s`` (CPU time [s] of the training process, all threads),
  ``cpu_untracked_wall_s`` (wall time of a part of the run made before CPU time was tracked, not in
  ``cpu_s``), ``world_size`` and ``init_from`` (the weights a fine-tuning run started from, or None).
* ``ggik-weights/1`` (:data:`WEIGHTS_FORMAT`): the weights-only export (``ggik export``,
  :func:`export_checkpoint`), the form shipped as ``ggik/weights/ggik_default.pt``. It keeps what
  inference needs plus the training provenance and drops the optimiser (AdamW moments: twice the
  model's size), scheduler and RNG state, so it loads like a full checkpoint but cannot be resumed.

``load_checkpoint`` checks the format tag and gives a clear :class:`GGIKError` for a corrupt, truncated
or incompatible file; ``load_model`` rebuilds the model from the file alone; ``load_model_or_shipped``
is the one "a checkpoint path, or the model shipped in the package" rule of the solver and every command.
"""
from __future__ import annotations

import io
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Iterator

import torch

from ggik.data import DataConfig, TrainingData
from ggik.errors import GGIKError
from ggik.fileio import atomic_write, load_torch_file
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.typed_config import from_dict, merge
from ggik.version import __version__

__all__ = ["transfer_weights", 
    "CHECKPOINT_FORMAT",
    "WEIGHTS_FORMAT",
    "MAX_EXPORT_BYTES",
    "PRETRAINED_CHECKPOINT",
    "load_checkpoint",
    "load_model",
    "load_model_or_shipped",
    "shipped_model_path",
    "export_checkpoint",
    "config_for_init",
    "cpu_time",
    "training_budget",
    "training_set",
    "recorded_training_set",
    "trained_named_robots",
    "trained_random_dofs",
    "trained_randomize_fraction",
]

CHECKPOINT_FORMAT = "ggik-checkpoint/1"  #: a full training checkpoint (``RUN_DIR/last.pt``): loads and resumes
WEIGHTS_FORMAT = "ggik-weights/1"  #: weights-only export of a checkpoint (``ggik export``): loads, cannot resume
PRETRAINED_CHECKPOINT = "ggik_default.pt"  #: file name of the shipped model inside ``ggik/weights/``


# ---------------------------------------------------------------------------------------------- reading
def load_checkpoint(path: str | Path) -> dict:
    """Read and check a ggik checkpoint (CPU tensors): a full training checkpoint (:data:`CHECKPOINT_FORMAT`)
    or a weights-only export (:data:`WEIGHTS_FORMAT`). ``FileNotFoundError`` for a missing file,
    :class:`GGIKError` for a corrupt or incompatible one."""
    return load_torch_file(path, (CHECKPOINT_FORMAT, WEIGHTS_FORMAT), "checkpoint")


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[GGIKModel, dict]:
    """Rebuild the model of a checkpoint from the file alone. Returns (model in eval mode, checkpoint dict).

    The architecture comes from the checkpoint's ``config["model"]`` section; a file whose weights or config do
    not fit this ggik version's model raises :class:`GGIKError` naming the version that wrote it.
    """
    ckpt = load_checkpoint(path)
    try:
        model = GGIKModel(from_dict(ModelConfig, ckpt["config"]["model"], "config.model"))
        model.load_state_dict(ckpt["model"])
    except (KeyError, TypeError, ValueError, RuntimeError, GGIKError) as exc:
        raise GGIKError(f"{path}: checkpoint does not match this ggik version's model (ggik {__version__}; the file was "
                        f"written by ggik {ckpt.get('ggik_version', '?')}): {exc}") from None
    return model.to(device).eval(), ckpt


@contextmanager
def shipped_model_path() -> Iterator[Path]:
    """The path of the model shipped inside the package (``ggik/weights/ggik_default.pt``), as a context manager.

    Raises :class:`GGIKError` when this installation ships none.
    """
    ref = resources.files("ggik").joinpath("weights", PRETRAINED_CHECKPOINT)
    if not ref.is_file():
        raise GGIKError(
            f"no pretrained model is shipped with this ggik version (ggik/weights/{PRETRAINED_CHECKPOINT} is missing); "
            "train one with `ggik train --config train/configs/default.yaml` and use GGIK.load(RUN_DIR/last.pt)"
        )
    with resources.as_file(ref) as path:
        yield path


def load_model_or_shipped(path: str | Path | None, device: str | torch.device = "cpu") -> tuple[GGIKModel, dict]:
    """:func:`load_model` of ``path``, or of the shipped model when ``path`` is None (the ``--ckpt`` default)."""
    if path is not None:
        return load_model(path, device)
    with shipped_model_path() as shipped:
        return load_model(shipped, device)


def config_for_init(path: str | Path, data: dict) -> dict:
    """The config dict ``data`` (overrides of the training config) with the model section of checkpoint ``path``.

    A model section in ``data`` is merged over the checkpoint's; if it changes anything, the trainer's
    ``init_from`` refuses the result with the differing keys.
    """
    ckpt = load_checkpoint(path)
    source = (ckpt.get("config") or {}).get("model")
    if not isinstance(source, dict):
        raise GGIKError(f"{path}: the checkpoint holds no model config")
    return {**data, "model": merge(source, data.get("model") or {})}


def transfer_weights(model: torch.nn.Module, source: dict[str, torch.Tensor]) -> dict[str, list[str]]:
    """Load what fits of a state dict ``source`` into ``model`` (a warm start across architecture changes).

    Per parameter or buffer of ``model``: a tensor of the same name and shape is copied (``copied``); one of the
    same name and rank that is smaller in some dimensions is copied into the leading block, the rest set to
    zero (``widened``: e.g. a linear layer with new input features appended at the end starts as the old
    function); anything else keeps its fresh initialisation (``fresh``). Source tensors with no place in the model
    are listed as ``dropped``. Returns those four lists of names.
    """
    state = model.state_dict()
    report: dict[str, list[str]] = {"copied": [], "widened": [], "fresh": [], "dropped": sorted(set(source) - set(state))}
    with torch.no_grad():
        for name, target in state.items():
            old = source.get(name)
            if old is None or old.ndim != target.ndim or any(o > t for o, t in zip(old.shape, target.shape)):
                report["fresh"].append(name)
            elif old.shape == target.shape:
                target.copy_(old)
                report["copied"].append(name)
            else:
                target.zero_()
                target[tuple(slice(0, n) for n in old.shape)] = old
                report["widened"].append(name)
    return report


# ---------------------------------------------------------------------------------------------- what it says
def cpu_time(ckpt: dict) -> tuple[float, float]:
    """(``cpu_s``, ``cpu_untracked_wall_s``) of a checkpoint dict: the CPU time of its training process [s], and the
    wall time [s] of the part of the run made before ggik tracked CPU time (all of ``wall_s`` for such a file)."""
    if "cpu_s" not in ckpt:
        return 0.0, float(ckpt.get("wall_s", 0.0))
    return float(ckpt["cpu_s"]), float(ckpt.get("cpu_untracked_wall_s", 0.0))


def training_budget(ckpt: dict) -> str:
    """One line of a checkpoint's training budget: steps, examples, wall time and CPU time (:func:`cpu_time`: all
    threads of the training process)."""
    cpu_s, untracked_s = cpu_time(ckpt)
    extra = f" plus {untracked_s / 3600:.2f} h of wall time from before CPU time was tracked" if untracked_s else ""
    return (f"{ckpt['step']:,} steps, {ckpt['examples']:,} training examples, {ckpt['wall_s'] / 3600:.2f} h of training "
            f"wall time, {cpu_s / 3600:.2f} CPU-hours measured{extra}")


def training_set(ckpt: dict) -> dict:
    """What a checkpoint's weights were trained on, in the form of :meth:`ggik.data.TrainingData.describe`.

    Its ``training_robots`` entry (merged over every stage of resumed or fine-tuned runs); for a file without
    one, the same derived from its config's data section. :class:`GGIKError` when it records neither.
    This is the one answer to "which robots are unseen" of the solver, the evaluation and the command line.
    """
    recorded = ckpt.get("training_robots")
    if isinstance(recorded, dict) and "named" in recorded:
        return recorded
    data = (ckpt.get("config") or {}).get("data")
    if data is None:
        raise GGIKError("the checkpoint records neither training_robots nor a data config: cannot tell which robots are unseen")
    return TrainingData(from_dict(DataConfig, data, "config.data")).describe()


def recorded_training_set(ckpt: dict) -> dict | None:
    """:func:`training_set` of ``ckpt``, or None when the file records nothing about it."""
    try:
        return training_set(ckpt)
    except GGIKError:
        return None


def trained_named_robots(training: dict) -> list[str]:
    """Names of the ``urdfs/`` robots a training set (:func:`training_set`) gave weight > 0 (0 = left out)."""
    return [name for name, w in (training.get("named") or {}).items() if w > 0]


def trained_random_dofs(training: dict) -> list[int]:
    """DOFs of the random DH robots a training set drew from (empty when it drew none)."""
    random = training.get("random") or {}
    return sorted(set(random.get("dofs") or [])) if random.get("weight", 0) > 0 else []


def trained_randomize_fraction(training: dict) -> float | None:
    """The per-link scale range r of the randomised named robots a training set drew from, or None."""
    randomized = training.get("randomized") or {}
    if randomized.get("weight", 0) > 0 and trained_named_robots(training):
        return float(randomized.get("fraction", 0.0))
    return None


# ---------------------------------------------------------------------------------------------- export
MAX_EXPORT_BYTES = 20 * 1024 * 1024  #: 20 MB (MiB): the budget of the model shipped inside the package


def export_checkpoint(src: str | Path, dst: str | Path, max_bytes: int = MAX_EXPORT_BYTES) -> dict:
    """Write the weights-only form of checkpoint ``src`` to ``dst`` (atomically); returns what was written.

    ``src`` must be a checkpoint the current ggik can load (the model is rebuilt as a check), full or
    already weights-only. Raises ``FileNotFoundError`` for a missing ``src``, ``GGIKError`` for a corrupt
    or incompatible one, and ``GGIKError`` if the export would exceed ``max_bytes`` (nothing is written).
    """
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
