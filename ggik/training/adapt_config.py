"""The recipe of ``ggik adapt`` (:class:`AdaptConfig`), what an adaptation returns (:class:`AdaptResult`), the
training config an adaptation runs (:func:`adapt_config`), the retention rule (:func:`retains`) and what makes a
resumed run the same run (:func:`refuse_another_run`); the loop is :mod:`ggik.training.adapt`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import torch

from ggik.checkpoint import trained_named_robots, training_set
from ggik.errors import GGIKError
from ggik.kinematics.robot_files import RobotFile, chain_differences, chain_options
from ggik.training.adapt_files import STATE_FILE
from ggik.training.config import TrainConfig
from ggik.typed_config import from_dict, to_dict

__all__ = [
    "AdaptConfig",
    "AdaptResult",
    "adapt_config",
    "retains",
    "lr_factor",
    "recipe",
    "arm_record",
    "refuse_another_run",
    "STATE_KEYS",
    "FREEZABLE",
    "freeze",
    "TEST_SEED_OFFSET",
]

#: the parts of a model that ``AdaptConfig.freeze`` may name, each with the modules of :class:`ggik.nn.cvae.GGIKModel`
#: it holds: the decoder its layers and their link-volume inputs (``dec_volumes``, one per layer, with
#: ``model.volume_inputs``), so that a frozen decoder is not trained through them
FREEZABLE: dict[str, tuple[str, ...]] = {
    "embed": ("embed",),
    "enc_partial": ("enc_partial",),
    "enc_full": ("enc_full",),
    "posterior": ("posterior",),
    "prior": ("prior",),
    "dec_in": ("dec_in",),
    "decoder": ("decoder", "dec_volumes"),
    "gn_follow": ("gn_follow",),
}


def freeze(model: torch.nn.Module, parts: list[str]) -> None:
    """Stop training the ``parts`` (names of :data:`FREEZABLE`) of ``model``: every parameter of their modules (those
    the model has: ``dec_volumes`` is None without volume inputs) no longer requires a gradient."""
    for part in parts:
        for name in FREEZABLE[part]:
            module = getattr(model, name)
            if module is not None:
                module.requires_grad_(False)


@dataclass
class AdaptConfig:
    """The recipe of ``ggik adapt``: one source of its defaults (benchmarks/adapt measured them)."""

    minutes: float = 15.0  #: wall-clock budget [min], training and validation together, over all sittings
    lr: float = 3e-4  #: peak learning rate of AdamW
    schedule: str = "cosine"  #: "constant", or "cosine" over the time budget (to ``min_lr_ratio`` x ``lr``)
    min_lr_ratio: float = 0.03
    warmup_steps: int = 20  #: linear warm-up of the learning rate
    batch_size: int = 64  #: examples per step
    replay: float = 0.5  #: share of each batch drawn from the model's own training robots (0: the arm alone)
    #: goal kind -> weight of the arm's examples and the replay's; None: the base model's mix
    goal_kinds: dict[str, float] | None = None
    freeze: list[str] = field(default_factory=list)  #: parts of the model not trained (names of :data:`FREEZABLE`)
    #: pull of the weights toward the base model's after every step, per unit learning rate (decoupled, as AdamW's
    #: weight decay pulls toward 0; 0: off): w -= lr * anchor * (w - w_base)
    anchor: float = 0.0
    val_problems: int = 100  #: the arm's fixed pose goals that choose the best model (the selection goals)
    #: the arm's held-out pose goals (seed ``seed`` + :data:`TEST_SEED_OFFSET`), measured for the base model and for
    #: the model written, never used to choose it: the unbiased success of the result
    test_problems: int = 100
    val_samples: int = 32  #: samples per goal (raw success: best of them within 1 cm and 1 deg)
    val_every_s: float = 60.0  #: seconds of adaptation between measurements of the arm
    replay_problems: int = 30  #: pose goals per replayed robot, measured before and after (0: not measured)
    #: the replayed robots keep this share of the goals the base model solved, less ``retain_margin`` goals
    #: (:func:`retains`): a model below it is blended back toward the base weights (0: no blending)
    retain: float = 0.95
    #: goals (summed over the replayed robots) a model may solve under ``retain`` x the base model's and still count
    #: as keeping them: one goal's worth, so that no decision rests on a tie
    retain_margin: int = 1
    seed: int = 0
    threads: int = 0  #: torch CPU threads (0: torch's default)

    def __post_init__(self) -> None:
        checks = {
            "minutes": self.minutes > 0 and math.isfinite(self.minutes),
            "lr": self.lr > 0,
            "schedule": self.schedule in ("constant", "cosine"),
            "min_lr_ratio": 0 <= self.min_lr_ratio <= 1,
            "warmup_steps": self.warmup_steps >= 0,
            "batch_size": self.batch_size >= 1,
            "replay": 0 <= self.replay < 1,
            "val_problems": self.val_problems >= 1,
            "test_problems": self.test_problems >= 1,
            "val_samples": self.val_samples >= 1,
            "val_every_s": self.val_every_s > 0,
            "replay_problems": self.replay_problems >= 0,
            "threads": self.threads >= 0,
            "anchor": self.anchor >= 0,
            "retain": 0 <= self.retain <= 1,
            "retain_margin": self.retain_margin >= 0,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise GGIKError(f"AdaptConfig: bad {', '.join(f'{k}={getattr(self, k)!r}' for k in bad)}")
        # a tuple (or one name) is the same recipe as the list that adapt_state.json reads back
        self.freeze = [self.freeze] if isinstance(self.freeze, str) else list(self.freeze)
        unknown = [p for p in self.freeze if p not in FREEZABLE]
        if unknown:
            raise GGIKError(f"AdaptConfig.freeze: unknown parts {unknown}; parts: {list(FREEZABLE)}")


@dataclass
class AdaptResult:
    """What an adaptation did. Success values are raw (best of ``val_samples`` within 1 cm and 1 deg). The arm's
    success on the selection goals (``val_problems``) chose the model, so it is optimistic; the held-out goals
    (``test_problems``) are the result's unbiased success."""

    out: Path  #: the weights-only model file (the best model measured)
    arm: str
    base_success: float  #: the arm's selection goals, before adaptation
    #: the arm's selection goals, of the model in ``out``: the best measured, or its blend toward the base
    #: (``blend`` < 1)
    best_success: float
    base_test_success: float  #: the arm's held-out goals, before adaptation
    test_success: float  #: the arm's held-out goals, of the model in ``out``
    best_step: int
    elapsed_s: float  #: wall time spent over all sittings [s]
    steps: int
    examples: int
    replay_before: dict[str, float]  #: the replayed robots' success before (robot -> success; {} when not measured)
    replay_after: dict[str, float]  #: the same, of the model in ``out``
    blend: float  #: the share of the adaptation kept in ``out`` (1: the best model measured; see ``retain``)
    #: every measurement: elapsed_s (wall) and cpu_s (CPU time of the process) [s], step, examples, success, and
    #: best_m (the mean over goals of the best sample's position error [m])
    curve: list[dict]
    #: why the training stopped before the budget (a step with a non-finite loss or gradient; the run kept its last
    #: finite state), None when it did not
    fault: str | None = None


TEST_SEED_OFFSET = 1_000_003  #: the held-out goals' seed is the recipe's ``seed`` plus this (the selection's: ``seed``)


def lr_factor(elapsed_s: float, budget_s: float, cfg: AdaptConfig) -> float:
    """The learning rate's factor after ``elapsed_s`` of a budget of ``budget_s`` [s]: 1, or the cosine to
    ``min_lr_ratio`` over the budget."""
    if cfg.schedule == "constant":
        return 1.0
    t = min(1.0, elapsed_s / budget_s)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t))


def retains(before: int, after: int, cfg: AdaptConfig) -> bool:
    """Whether the replayed robots kept their success: ``after`` >= ceil(``retain`` x ``before``) - ``retain_margin``,
    with ``before`` and ``after`` the goals solved (summed over the replayed robots) by the base model and the model
    judged, and ``retain`` read as the decimal it is written as (0.95 = 19/20 exactly). Always true for ``retain`` = 0.
    """
    if cfg.retain == 0:
        return True
    return after >= math.ceil(Fraction(repr(cfg.retain)) * before) - cfg.retain_margin


def adapt_config(base: dict, arm: RobotFile, cfg: AdaptConfig) -> TrainConfig:
    """The training config of an adaptation: the base checkpoint's (``base``, completed by
    :func:`ggik.checkpoint.load_checkpoint`) with the arm and the replayed robots as data, the recipe's optimiser, no
    KL warm-up (the model is trained), no validation of the trainer's own (the adaptation measures the arm)."""
    if "gn_follow" in cfg.freeze and not base["config"]["model"].get("gn_steps"):
        raise GGIKError(
            "AdaptConfig.freeze: the base model has no gn_follow to freeze (its Gauss-Newton moves: it was trained "
            "with model.gn_steps = 0); remove gn_follow from freeze"
        )
    data = dict(base["config"])
    replayed = trained_named_robots(training_set(base))
    if cfg.replay > 0 and not replayed:
        raise GGIKError("the base model records no shipped training robots to replay; set replay=0")
    share = cfg.replay / len(replayed) if cfg.replay > 0 else 0.0
    robots: dict = {name: share for name in replayed if share > 0}
    arm_entry = asdict(arm)
    arm_entry["weight"] = 1.0 - cfg.replay
    robots[_arm_name(arm, robots)] = arm_entry
    data["data"] = {
        **data["data"],
        "robots": robots,
        "random_weight": 0.0,
        "randomized_weight": 0.0,
        "batch_size": cfg.batch_size,
        "seed": cfg.seed,
        "sampler": "stacked",
        "random_refresh": 1,
    }
    if cfg.goal_kinds is not None:
        data["data"]["goal_kinds"] = dict(cfg.goal_kinds)
    data["optim"] = {
        **data["optim"],
        "lr": cfg.lr,
        "schedule": "constant",  # the time-based schedule is applied by the adaptation loop
        "warmup_steps": cfg.warmup_steps,
    }
    data["loss"] = {**data["loss"], "beta_warmup_steps": 0}
    data["val"] = {**data["val"], "every": 0, "goal_kinds": ["pose"], "samples": cfg.val_samples, "seed": cfg.seed}
    data.update(steps=2**62, checkpoint_every=2**62, threads=cfg.threads, seed=cfg.seed, compile="eager")
    return from_dict(TrainConfig, data)


def recipe(cfg: AdaptConfig) -> dict:
    """The fields of ``cfg`` a resumed run must share with the run (all but the budget and the threads)."""
    return {k: v for k, v in to_dict(cfg).items() if k not in ("minutes", "threads")}


def arm_record(arm: RobotFile) -> dict:
    """What ``adapt_state.json`` keeps of the arm: its file (absolute; not compared) and chain options (compared)."""
    return {"urdf": arm.urdf, **chain_options(arm)}


#: what a run's state holds from its first measurement on (a state without them was written by an earlier ggik)
STATE_KEYS = (
    "config",
    "arm",
    "arm_sha256",
    "base_sha256",
    "base",
    "elapsed_s",
    "best",
    "curve",
    "base_success",
    "base_test_success",
    "replay_before",
)


def _refuse_another_version(run_dir: Path, state: dict, who: dict) -> None:
    """GGIKError where the state of the run in ``run_dir`` lacks what this ggik reads (:data:`STATE_KEYS`) or its
    recipe has other fields than ``who``'s: a run of another ggik version, which this one cannot continue."""
    missing = [k for k in STATE_KEYS if k not in state]
    config = state.get("config")
    config = config if isinstance(config, dict) else {}
    lacks, extra = sorted(set(who["config"]) - set(config)), sorted(set(config) - set(who["config"]))
    what = [f"lacks {', '.join(missing)}"] if missing else []
    what += [f"its recipe lacks {', '.join(lacks)}"] if lacks and not missing else []
    what += [f"its recipe has {', '.join(extra)}, which this ggik does not know"] if extra else []
    if what:
        raise GGIKError(
            f"{run_dir} holds an adaptation written by another version of ggik, which this one cannot continue (its "
            f"{STATE_FILE} {'; '.join(what)}); give another --run-dir (a model file it wrote stays usable)"
        )


def refuse_another_run(run_dir: Path, state: dict, who: dict) -> None:
    """GGIKError naming every difference between an adaptation asked for (``who``: its recipe, the arm's
    :func:`arm_record` and file sha256, the base model's sha256) and the run in ``run_dir`` (``state``, its
    ``adapt_state.json``), or that the run was written by another version of ggik (:data:`STATE_KEYS`). Paths are not
    compared: the same files moved are the same run."""
    _refuse_another_version(run_dir, state, who)
    differ = []
    config, chain = state["config"], state["arm"] if isinstance(state["arm"], dict) else {}
    differ += [
        f"config: {k}={v!r} (the run's: {config.get(k)!r})" for k, v in who["config"].items() if config.get(k) != v
    ]
    differ += [f"arm: {key}={now!r} (the run's: {was!r})" for key, now, was in chain_differences(chain, who["arm"])]
    if state["arm_sha256"] != who["arm_sha256"]:
        differ.append(
            f"arm file: {who['arm']['urdf']} (sha256 {who['arm_sha256'][:12]}) differs from the run's "
            f"{chain.get('urdf')} (sha256 {str(state['arm_sha256'])[:12]})"
        )
    if state["base_sha256"] != who["base_sha256"]:
        differ.append(
            f"base model: sha256 {who['base_sha256'][:12]} (the run's: {str(state['base_sha256'])[:12]}, "
            f"{state.get('base')})"
        )
    if differ:
        raise GGIKError(
            f"{run_dir} holds an adaptation with another {'; another '.join(differ)}; continue it with the same "
            "options and files, or give another --run-dir"
        )


def _arm_name(arm: RobotFile, taken: dict) -> str:
    """The arm's name in the data: its file's stem (``_file`` added where a replayed robot has that name)."""
    name = Path(arm.urdf).stem
    return name if name not in taken else f"{name}_file"
