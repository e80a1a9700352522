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

Old files and changed defaults. A file records the whole training config of the code that wrote it, so a
config key is missing only from a file written before that key existed. :func:`load_checkpoint` fills such
keys from :data:`IMPLIED_CONFIG` (per format: what a file of that format means by an absent key), never from
the dataclass defaults: the defaults follow the current recipe and may change, and that cannot change how an
old file is read. :func:`read_checkpoint` returns the file as recorded (what :func:`export_checkpoint` keeps).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import torch

from ggik.data import DataConfig, TrainingData
from ggik.errors import GGIKError
from ggik.fileio import atomic_write, load_torch_file
from ggik.kinematics.robot_files import robot_from_record
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.typed_config import from_dict, merge
from ggik.version import __version__

__all__ = [
    "transfer_weights",
    "CHECKPOINT_FORMAT",
    "WEIGHTS_FORMAT",
    "MAX_EXPORT_BYTES",
    "PRETRAINED_CHECKPOINT",
    "IMPLIED_CONFIG",
    "read_checkpoint",
    "load_checkpoint",
    "complete_config",
    "model_from_checkpoint",
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
    "merge_training_sets",
    "trained_file_robots",
    "trained_random_dofs",
    "trained_randomize_fraction",
]

CHECKPOINT_FORMAT = "ggik-checkpoint/1"  #: a full training checkpoint (``RUN_DIR/last.pt``): loads and resumes
WEIGHTS_FORMAT = "ggik-weights/1"  #: weights-only export of a checkpoint (``ggik export``): loads, cannot resume
PRETRAINED_CHECKPOINT = "ggik_default.pt"  #: file name of the shipped model inside ``ggik/weights/``


#: The training config that a file of the ``/1`` formats implies for every key it does not record. Keys that every such
#: file records hold the v1 recipe's values; a key added to the config later holds the value that keeps the behaviour of
#: the code before it existed (every option was added switched off, and the goal kinds were poses only). These are not
#: the dataclass defaults (:class:`ggik.training.config.TrainConfig`), which follow the current recipe. A new config key
#: must be added here with its "before" value; the tests check that every key of the config has one.
# fmt: off
_FORMAT_1_IMPLIED: dict = {
    "model": {"dim": 64, "hidden": 128, "enc_layers": 3, "dec_layers": 5, "dec_dim": 0, "dec_hidden": 0,
              "latent": 16, "prior_components": 16, "prior_mixture": "node", "max_index": 12, "goal_features": False,
              "coord_gain": 0.001, "pin_anchors": True, "anchor_frame": True, "min_log_std": -6.0, "max_log_std": 2.0,
              "decoder": "egnn", "residual_inputs": False, "gn_steps": 0, "gn_init": 1.0, "gn_damping": 0.01,
              "gn_solver": "full", "latent_scope": "node", "graph": "frames", "volume_inputs": False},
    "data": {"robots": {"panda": 1.0}, "random_weight": 0.0, "random_dofs": [6, 7], "random_robots_per_batch": 8,
             "random_refresh": 1, "randomized_weight": 0.0, "randomize_fraction": 0.2, "batch_size": 128, "seed": 0,
             "goal_kinds": {"pose": 1.0}, "sampler": "per-robot", "tool_offset": 0.0, "unlimited_fraction": 0.0,
             "unlimited_last_joint_zero": False},
    "optim": {"lr": 0.001, "weight_decay": 0.01, "grad_clip": 1.0, "warmup_steps": 100, "schedule": "cosine",
              "min_lr_ratio": 0.05},
    "loss": {"anchor_gain": 10.0, "rec_gain": 1000.0, "beta": 1.0, "beta_warmup_steps": 1000, "kl_samples": 1,
             "prior_gain": 0.0, "rec_gain_final": 0.0, "rec_gain_steps": 0, "kl_free_nats": 0.0},
    "val": {"every": 500, "problems_per_robot": 50, "samples": 32, "random_robots": 0, "randomized_robots": 0,
            "randomize_fraction": 0.2, "reframed_robots": 0, "seed": 12345, "goal_kinds": ["pose"], "protocol": "ours"},
    "steps": 10000, "checkpoint_every": 200, "log_every": 10, "bf16": True, "threads": 0, "seed": 0, "compile": "eager",
    "cpu_micro_batch": 0,
}
# fmt: on

#: format tag -> the config a file of that format implies for the keys it does not record (:func:`complete_config`)
IMPLIED_CONFIG: dict[str, dict] = {CHECKPOINT_FORMAT: _FORMAT_1_IMPLIED, WEIGHTS_FORMAT: _FORMAT_1_IMPLIED}
_SECTIONS = ("model", "data", "optim", "loss", "val")  #: the sections of the config (mappings of keys, filled per key)


# ---------------------------------------------------------------------------------------------- reading
def read_checkpoint(path: str | Path) -> dict:
    """Read and check a ggik checkpoint as recorded in the file (CPU tensors): a full training checkpoint
    (:data:`CHECKPOINT_FORMAT`) or a weights-only export (:data:`WEIGHTS_FORMAT`). ``FileNotFoundError`` for a
    missing file, :class:`GGIKError` for a corrupt or incompatible one. Most callers want :func:`load_checkpoint`."""
    return load_torch_file(path, (CHECKPOINT_FORMAT, WEIGHTS_FORMAT), "checkpoint")


def complete_config(config: dict, fmt: str) -> tuple[dict, list[str]]:
    """The training config ``config`` recorded in a file of format ``fmt``, with every key it lacks filled from
    :data:`IMPLIED_CONFIG` [``fmt``]. Returns (the complete config, a new dict; the dotted names of the filled keys).

    Keys the file records are kept as they are (an unknown one is left for :func:`ggik.typed_config.from_dict` to
    refuse); a section the file records as something other than a mapping is left alone.
    """
    implied = IMPLIED_CONFIG[fmt]
    out, filled = dict(config), []
    for key, value in implied.items():
        if key not in out:
            out[key] = {**value} if key in _SECTIONS else value
            filled += [f"{key}.{k}" for k in value] if key in _SECTIONS else [key]
        elif key in _SECTIONS and isinstance(out[key], dict):
            missing = [k for k in value if k not in out[key]]
            out[key] = {**out[key], **{k: value[k] for k in missing}}
            filled += [f"{key}.{k}" for k in missing]
    return out, filled


def load_checkpoint(path: str | Path) -> dict:
    """:func:`read_checkpoint`, with the training config completed (:func:`complete_config`): ``config`` holds
    every key of this ggik's config, with the meaning the file had when it was written."""
    ckpt = read_checkpoint(path)
    if isinstance(ckpt.get("config"), dict):
        ckpt["config"] = complete_config(ckpt["config"], ckpt["format"])[0]
    return ckpt


def model_from_checkpoint(ckpt: dict, path: str | Path) -> GGIKModel:
    """The model of a checkpoint dict from :func:`load_checkpoint` (of file ``path``, named in errors), with its
    weights, in eval mode on the CPU. :class:`GGIKError`, naming the version that wrote the file, when its
    weights or config do not fit this ggik version's model."""
    try:
        model = GGIKModel(from_dict(ModelConfig, ckpt["config"]["model"], "config.model"))
        model.load_state_dict(ckpt["model"])
    except (KeyError, TypeError, ValueError, RuntimeError, GGIKError) as exc:
        raise GGIKError(
            f"{path}: checkpoint does not match this ggik version's model (ggik {__version__}; the file was "
            f"written by ggik {ckpt.get('ggik_version', '?')}): {exc}"
        ) from None
    return model.eval()


def load_model(path: str | Path, device: str | torch.device = "cpu") -> tuple[GGIKModel, dict]:
    """Rebuild the model of a checkpoint from the file alone. Returns (model in eval mode, checkpoint dict of
    :func:`load_checkpoint`).

    The architecture comes from the checkpoint's ``config["model"]`` section (keys the file predates read as
    :data:`IMPLIED_CONFIG` says); a file whose weights or config do not fit this ggik version's model raises
    :class:`GGIKError` naming the version that wrote it.
    """
    ckpt = load_checkpoint(path)
    return model_from_checkpoint(ckpt, path).to(device), ckpt


@contextmanager
def shipped_model_path() -> Iterator[Path]:
    """The path of the model shipped inside the package (``ggik/weights/ggik_default.pt``), as a context manager.

    Raises :class:`GGIKError` when this installation ships none.
    """
    ref = resources.files("ggik") / "weights" / PRETRAINED_CHECKPOINT
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
    report: dict[str, list[str]] = {
        "copied": [],
        "widened": [],
        "fresh": [],
        "dropped": sorted(set(source) - set(state)),
    }
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
    return (
        f"{ckpt['step']:,} steps, {ckpt['examples']:,} training examples, {ckpt['wall_s'] / 3600:.2f} h of training "
        f"wall time, {cpu_s / 3600:.2f} CPU-hours measured{extra}"
    )


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
        raise GGIKError(
            "the checkpoint records neither training_robots nor a data config: cannot tell which robots are unseen"
        )
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


def trained_file_robots(training: dict) -> dict:
    """{name: Robot} of the robots from URDF files a training set (:func:`training_set`) gave weight > 0, rebuilt from
    the texts the checkpoint keeps (:func:`ggik.kinematics.robot_files.robot_from_record`)."""
    files = training.get("files") or {}
    return {name: robot_from_record(name, rec) for name, rec in files.items() if float(rec.get("weight", 0.0)) > 0}


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


def _merged_files(before: dict, now: dict) -> dict:
    """Robots from files over two stages: the later record of a name, with the larger weight (seen once is seen)."""
    out = {**before, **now}
    return {
        k: {**r, "weight": max(float(d.get(k, {}).get("weight", 0.0)) for d in (before, now))} for k, r in out.items()
    }


def merge_training_sets(before: dict, now: dict) -> dict:
    """What a model has seen over two stages of training, both in the form of :meth:`TrainingData.describe`.

    A run resumed with another data mix, or fine-tuned from another model, has seen both sets: a named robot
    counts with its largest weight, random DH robots with the union of the DOFs of the stages that drew them
    (weight > 0), randomised robots with the largest fraction of such stages, goal kinds with their largest weight
    (a stage that names none trained on poses), robots from files with the record of the later stage. Weights are
    kept as the largest of the two, so a weight > 0 means "seen" exactly as in one stage.
    """

    def largest(key: str, default: dict) -> dict:
        out = {k: float(w) for k, w in (before.get(key) or default).items()}
        for k, w in (now.get(key) or default).items():
            out[k] = max(float(w), out.get(k, 0.0))
        return out

    def drawn(key: str) -> list[dict]:
        return [s.get(key) or {} for s in (before, now) if float((s.get(key) or {}).get("weight", 0.0)) > 0]

    rnd, rzd = drawn("random"), drawn("randomized")
    now_random, now_randomized = now.get("random") or {}, now.get("randomized") or {}
    files = _merged_files(before.get("files") or {}, now.get("files") or {})
    return {
        **({"files": files} if files else {}),
        "named": largest("named", {}),
        "goal_kinds": largest("goal_kinds", {"pose": 1.0}),  # runs from before goal kinds were trained on poses
        "random": {
            "weight": max([float(r["weight"]) for r in rnd], default=float(now_random.get("weight", 0.0))),
            "dofs": sorted({int(d) for r in rnd for d in r.get("dofs", [])})
            if rnd
            else list(now_random.get("dofs", [])),
        },
        "randomized": {
            "weight": max([float(r["weight"]) for r in rzd], default=float(now_randomized.get("weight", 0.0))),
            "fraction": max(float(r.get("fraction", 0.0)) for r in rzd)
            if rzd
            else float(now_randomized.get("fraction", 0.0)),
        },
    }


# ---------------------------------------------------------------------------------------------- export
MAX_EXPORT_BYTES = 20 * 1024 * 1024  #: 20 MB (MiB): the budget of the model shipped inside the package


def export_checkpoint(
    src: str | Path, dst: str | Path, max_bytes: int = MAX_EXPORT_BYTES, adaptation: dict | None = None
) -> dict:
    """Write the weights-only form of checkpoint ``src`` to ``dst`` (atomically); returns what was written.

    ``src`` must be a checkpoint the current ggik can load (the model is rebuilt as a check), full or
    already weights-only. The training config is written as ``src`` records it (:func:`read_checkpoint`; readers
    complete it as :func:`load_checkpoint` does), so an export of an unchanged run is the same file, byte for byte,
    whichever ggik wrote it, as long as the ggik and torch versions are the same. Raises ``FileNotFoundError`` for
    a missing ``src``, ``GGIKError`` for a corrupt or incompatible one, and ``GGIKError`` if the export would exceed
    ``max_bytes`` (nothing is written). ``adaptation``: the record of ``ggik adapt`` (the arm, its file's sha256,
    its raw success before and after), kept as ``adaptation`` (a re-export keeps the source's).
    """
    src, dst = Path(src), Path(dst)
    ckpt = read_checkpoint(src)  # the export keeps the config as the run recorded it
    complete = {**ckpt, "config": complete_config(ckpt.get("config") or {}, ckpt["format"])[0]}
    model = model_from_checkpoint(complete, src)  # validates the architecture
    state = {
        k: (v.detach().to(torch.float32) if v.is_floating_point() else v.detach()).contiguous().clone()
        for k, v in model.state_dict().items()
    }
    payload = {
        "format": WEIGHTS_FORMAT,
        "ggik_version": __version__,
        # an export's own ggik_version is the exporter's: keep the training run's through re-exports
        "source_ggik_version": ckpt.get("source_ggik_version")
        if ckpt["format"] == WEIGHTS_FORMAT
        else ckpt.get("ggik_version"),
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
    if adaptation is not None or ckpt.get("adaptation") is not None:
        payload["adaptation"] = adaptation if adaptation is not None else ckpt["adaptation"]
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
