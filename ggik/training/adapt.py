"""Adapting a trained model to one arm in minutes (``ggik adapt``, :meth:`ggik.GGIK.adapt`).

The model (by default the shipped one) is fine-tuned on the arm, a URDF file's chain, with a share of every batch
replaying the model's own training robots (its shipped ``urdfs/`` robots), for a wall-clock budget. The arm's raw
success (best of ``val_samples`` within 1 cm and 1 deg, on ``val_problems`` fixed pose goals) is measured every
``val_every_s`` seconds; the best model so far is written as a weights-only model file at once, so a stop (the budget,
Ctrl-C, SIGTERM) always leaves the best one. The run folder holds the resumable state (``last.pt`` of
:class:`ggik.training.Trainer`, ``adapt_state.json``, ``metrics.jsonl``): the same command continues a stopped run
until the budget, counted over all sittings, is spent.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ggik.checkpoint import (
    export_checkpoint,
    load_checkpoint,
    load_model,
    read_checkpoint,
    shipped_model_path,
    trained_named_robots,
    training_set,
)
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot import Robot
from ggik.kinematics.robot_files import RobotFile
from ggik.training.config import TrainConfig
from ggik.training.signals import install_stop_handlers, restore_handlers
from ggik.training.trainer import Trainer
from ggik.training.validation import validate, validation_groups
from ggik.typed_config import from_dict, to_dict

__all__ = ["AdaptConfig", "AdaptResult", "adapt", "adapt_config"]

STATE_FILE = "adapt_state.json"  #: the run's adaptation state (budget spent, best success), next to ``last.pt``
ARM_PROBLEMS = "arm_problems.pt"  #: the arm's fixed validation goals
REPLAY_PROBLEMS = "replay_problems.pt"  #: the replayed robots' fixed validation goals
FREEZABLE = ("embed", "enc_partial", "enc_full", "posterior", "prior", "dec_in", "decoder", "gn_follow")


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
    val_problems: int = 100  #: the arm's fixed pose goals
    val_samples: int = 32  #: samples per goal (raw success: best of them within 1 cm and 1 deg)
    val_every_s: float = 60.0  #: seconds of adaptation between measurements of the arm
    replay_problems: int = 30  #: pose goals per replayed robot, measured before and after (0: not measured)
    #: the replayed robots' mean raw success kept at least this share of the base model's: a model below it is
    #: blended back toward the base weights (:func:`_retain`; 0: no blending)
    retain: float = 0.95
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
            "val_samples": self.val_samples >= 1,
            "val_every_s": self.val_every_s > 0,
            "replay_problems": self.replay_problems >= 0,
            "threads": self.threads >= 0,
            "anchor": self.anchor >= 0,
            "retain": 0 <= self.retain <= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise GGIKError(f"AdaptConfig: bad {', '.join(f'{k}={getattr(self, k)!r}' for k in bad)}")
        unknown = [p for p in self.freeze if p not in FREEZABLE]
        if unknown:
            raise GGIKError(f"AdaptConfig.freeze: unknown parts {unknown}; parts: {list(FREEZABLE)}")


@dataclass
class AdaptResult:
    """What an adaptation did. Success values are raw (best of ``val_samples`` within 1 cm and 1 deg)."""

    out: Path  #: the weights-only model file (the best model measured)
    arm: str
    base_success: float  #: the arm, before adaptation
    #: the arm, of the model in ``out``: the best measured, or its blend toward the base (``blend`` < 1)
    best_success: float
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


def adapt_config(base: dict, arm: RobotFile, cfg: AdaptConfig) -> TrainConfig:
    """The training config of an adaptation: the base checkpoint's (``base``, completed by
    :func:`ggik.checkpoint.load_checkpoint`) with the arm and the replayed robots as data, the recipe's optimiser, no
    KL warm-up (the model is trained), no validation of the trainer's own (the adaptation measures the arm)."""
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


def _arm_name(arm: RobotFile, taken: dict) -> str:
    name = Path(arm.urdf).stem
    return name if name not in taken else f"{name}_file"


def _lr_factor(elapsed_s: float, budget_s: float, cfg: AdaptConfig) -> float:
    if cfg.schedule == "constant":
        return 1.0
    t = min(1.0, elapsed_s / budget_s)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t))


def _problems(run_dir: Path, name: str, robots: list[Robot], per_robot: int, seed: int) -> ProblemSet:
    path = run_dir / name
    if path.is_file():
        return ProblemSet.load(path)
    problems = ProblemSet.generate(robots, per_robot, seed)
    problems.save(path)
    return problems


def _measure(trainer: Trainer, groups: list) -> dict[str, tuple[float, float]]:
    """Per robot of ``groups``: (raw success, the mean over goals of the best sample's position error [m])."""
    record = validate(trainer.model, groups, trainer.cfg, trainer.device)
    trainer.model.train()
    names = [robot.name for robot, *_ in groups]
    return {n: (float(record[f"val/{n}/success"]), float(record[f"val/{n}/pos_err_best_m"])) for n in names}


def _success(trainer: Trainer, groups: list) -> dict[str, float]:
    return {name: success for name, (success, _) in _measure(trainer, groups).items()}


def _write_state(run_dir: Path, state: dict) -> None:
    atomic_write(run_dir / STATE_FILE, lambda f: f.write(json.dumps(state, indent=1).encode("utf-8")))


def adapt(
    arm: RobotFile | Robot,
    out: str | Path,
    cfg: AdaptConfig | None = None,
    base: str | Path | None = None,
    run_dir: str | Path | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> AdaptResult:
    """Adapt model ``base`` (a checkpoint; None: the shipped model) to ``arm`` (a :class:`RobotFile`, or a
    :class:`Robot`, kept as its URDF text) and write the best model measured to ``out`` (weights only, atomic).

    ``run_dir`` (default ``OUT.adapt/``) holds the resumable run: if it holds one, it is continued until
    ``cfg.minutes`` are spent over all sittings (``cfg`` must then equal the run's). A stop request (Ctrl-C, SIGTERM)
    ends the run after the current step, leaving ``out`` as the best model so far and the run resumable.
    """
    cfg = cfg or AdaptConfig()
    out = Path(out)
    run_dir = Path(run_dir) if run_dir is not None else out.with_name(out.name + ".adapt")
    run_dir.mkdir(parents=True, exist_ok=True)
    if cfg.threads > 0:
        torch.set_num_threads(cfg.threads)
    if isinstance(arm, Robot):
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", arm.name) or "arm"  # the arm's name, as a file name
        path, text = run_dir / f"{stem}.urdf", arm.to_urdf()
        atomic_write(path, lambda f: f.write(text.encode("utf-8")))
        arm = RobotFile(str(path))
    state_path = run_dir / STATE_FILE
    if (run_dir / "last.pt").is_file() and state_path.is_file():
        state = json.loads(state_path.read_text(encoding="utf-8"))
        if state["config"] != to_dict(cfg) or state["arm"]["urdf"] != arm.urdf:
            raise GGIKError(
                f"{run_dir} holds an adaptation with another recipe or arm ({state['arm']['urdf']}); continue it with "
                "the same options, or give another --run-dir"
            )
        trainer = Trainer.resume(run_dir, {"threads": cfg.threads}, device=device, progress=False)
    else:
        if base is None:
            with shipped_model_path() as shipped:
                return adapt(arm, out, cfg, shipped, run_dir, device, progress)
        base_ckpt = load_checkpoint(base)
        train_cfg = adapt_config(base_ckpt, arm, cfg)
        trainer = Trainer(train_cfg, run_dir, device=device, progress=False)
        trainer.init_from(base)
        state = {"config": to_dict(cfg), "arm": asdict(arm), "base": str(base), "elapsed_s": 0.0, "best": None}
        state["curve"] = []
    for name in cfg.freeze:
        getattr(trainer.model, name).requires_grad_(False)
    if cfg.anchor > 0:
        base_model, _ = load_model(state["base"], trainer.device)
        trainer.anchor_weights = [p.detach() for p in base_model.parameters()]  # type: ignore[attr-defined]
    arm_tr, replayed = trainer.data.robots[-1], [tr.robot for tr in trainer.data.robots[:-1]]
    graph = trainer.cfg.model.graph
    arm_groups = validation_groups(_problems(run_dir, ARM_PROBLEMS, [arm_tr.robot], cfg.val_problems, cfg.seed), graph)
    replay_groups = []
    if cfg.replay_problems and replayed:
        replay_set = _problems(run_dir, REPLAY_PROBLEMS, replayed, cfg.replay_problems, cfg.seed)
        replay_groups = validation_groups(replay_set, graph)
    if state["best"] is None:  # the base model, measured: the first best
        state["base_success"], best_m = _measure(trainer, arm_groups)[arm_tr.name]
        state["replay_before"] = _success(trainer, replay_groups) if replay_groups else {}
        state["best"] = {"success": state["base_success"], "step": 0}
        first = {"elapsed_s": 0.0, "cpu_s": 0.0, "step": 0, "examples": 0, "success": state["base_success"]}
        first["best_m"] = best_m
        state["curve"].append(first)
        _save_best(trainer, out, arm_tr, state)
        _write_state(run_dir, state)
    return _run(trainer, out, run_dir, cfg, state, arm_groups, replay_groups, progress)


def _save_best(trainer: Trainer, out: Path, arm_tr, state: dict) -> None:
    """Write the trainer's current model to ``out`` (weights only, naming the arm), through the run's ``last.pt``."""
    trainer.save()
    adaptation = {
        "robot": arm_tr.name,
        "urdf": arm_tr.record["path"],
        "sha256": arm_tr.record["sha256"],
        "success": state["best"]["success"],
        "base_success": state["base_success"],
        "elapsed_s": state["elapsed_s"],
        "base": state["base"],
    }
    export_checkpoint(trainer.run_dir / "last.pt", out, adaptation=adaptation)


BLENDS = (1.0, 0.75, 0.5, 0.25, 0.0)  #: the shares of the adaptation :func:`_retain` tries, largest first


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values)


@torch.no_grad()
def _retain(trainer: Trainer, out: Path, cfg: AdaptConfig, state: dict, arm_groups: list, replay_groups: list) -> dict:
    """The replayed robots' raw success of the model in ``out``. With ``cfg.retain`` > 0 and their mean below
    ``retain`` x before, ``out`` becomes the blend ``w_base + a (w_out - w_base)`` of the largest ``a`` of
    :data:`BLENDS` whose replayed robots keep it (``a`` = 0: the base model), its arm measured again. Records
    ``blend``, ``final_success`` and ``replay_after`` in ``state``; returns ``replay_after``."""
    device = trainer.device
    kept, _ = load_model(out, device)
    base, _ = load_model(state["base"], device)
    adapted = {k: v.clone() for k, v in kept.state_dict().items()}
    origin = base.state_dict()
    before = _mean(state["replay_before"])
    arm_name = arm_groups[0][0].name
    replay: dict[str, float] = {}
    for share in BLENDS if cfg.retain > 0 else (1.0,):
        kept.load_state_dict(
            {k: origin[k] + share * (v - origin[k]) if v.is_floating_point() else v for k, v in adapted.items()}
        )
        record = validate(kept, replay_groups, trainer.cfg, device)
        replay = {robot.name: float(record[f"val/{robot.name}/success"]) for robot, *_ in replay_groups}
        if cfg.retain == 0 or _mean(replay) >= cfg.retain * before or share == 0.0:
            break
    state.update(blend=share, replay_after=replay, final_success=state["best"]["success"])
    if share < 1.0:
        record = validate(kept, arm_groups, trainer.cfg, device)
        state["final_success"] = float(record[f"val/{arm_name}/success"])
        payload = read_checkpoint(out)
        payload["model"] = {k: v.detach().cpu().contiguous() for k, v in kept.state_dict().items()}
        payload["adaptation"] = {**payload["adaptation"], "blend": share, "success": state["final_success"]}
        atomic_write(out, lambda f: torch.save(payload, f))
    return replay


@torch.no_grad()
def _pull_to_base(trainer: Trainer, anchor: float) -> None:
    """w -= lr * anchor * (w - w_base) for every trained weight (the learning rate of the step just taken)."""
    lr = trainer.optimizer.param_groups[0]["lr"]
    for p, p0 in zip(trainer.model.parameters(), trainer.anchor_weights):  # type: ignore[attr-defined]
        if p.requires_grad:
            p.sub_(lr * anchor * (p - p0))


def _run(
    trainer: Trainer,
    out: Path,
    run_dir: Path,
    cfg: AdaptConfig,
    state: dict,
    arm_groups: list,
    replay_groups: list,
    progress: bool,
) -> AdaptResult:
    from tqdm import tqdm

    arm_tr = trainer.data.robots[-1]
    budget = 60.0 * cfg.minutes
    stop = {"now": False}
    previous = install_stop_handlers(lambda: stop.__setitem__("now", True))
    bar = tqdm(total=round(budget), initial=round(min(state["elapsed_s"], budget)), unit="s", disable=not progress)
    bar.set_description(f"adapt {arm_tr.name}")
    bar.set_postfix(raw=f"{state['curve'][-1]['success']:.0%}", best=f"{state['best']['success']:.0%}")
    trainer.model.train()
    peak = cfg.lr
    since_val = 0.0
    try:
        while state["elapsed_s"] < budget and not stop["now"]:
            t0, c0 = time.perf_counter(), time.process_time()
            trainer.train_step()
            if cfg.anchor > 0:
                _pull_to_base(trainer, cfg.anchor)
            if trainer.step >= cfg.warmup_steps:  # warm-up by step (the trainer's schedule), then decay by time
                for group in trainer.optimizer.param_groups:
                    group["lr"] = peak * _lr_factor(state["elapsed_s"], budget, cfg)
            dt = time.perf_counter() - t0
            trainer.wall_s += dt
            trainer.cpu_s += time.process_time() - c0
            state["elapsed_s"] += dt
            since_val += dt
            bar.update(round(state["elapsed_s"]) - bar.n)
            if since_val >= cfg.val_every_s or state["elapsed_s"] >= budget or stop["now"]:
                since_val = 0.0
                t1, c1 = time.perf_counter(), time.process_time()
                success, best_m = _measure(trainer, arm_groups)[arm_tr.name]
                point = {"elapsed_s": 0.0, "cpu_s": 0.0, "step": trainer.step, "examples": trainer.examples}
                state["elapsed_s"] += time.perf_counter() - t1
                trainer.cpu_s += time.process_time() - c1
                point.update(elapsed_s=state["elapsed_s"], cpu_s=trainer.cpu_s, success=success)
                point["best_m"] = best_m
                state["curve"].append(point)
                trainer.metrics.log({"kind": "val", **point, f"val/{arm_tr.name}/success": success})
                if success > state["best"]["success"]:
                    state["best"] = {"success": success, "step": trainer.step}
                    _save_best(trainer, out, arm_tr, state)
                else:
                    trainer.save()
                _write_state(run_dir, state)
                bar.update(round(min(state["elapsed_s"], budget)) - bar.n)
                bar.set_postfix(raw=f"{success:.0%}", best=f"{state['best']['success']:.0%}", step=trainer.step)
    finally:
        bar.close()
        restore_handlers(previous)
        trainer.save()
        _write_state(run_dir, state)
        trainer.metrics.finish()
    state["final_success"], state["blend"] = state["best"]["success"], 1.0
    replay_after = _retain(trainer, out, cfg, state, arm_groups, replay_groups) if replay_groups else {}
    _write_state(run_dir, state)
    return AdaptResult(
        out=out,
        arm=arm_tr.name,
        base_success=state["base_success"],
        best_success=state["final_success"],
        best_step=state["best"]["step"],
        elapsed_s=state["elapsed_s"],
        steps=trainer.step,
        examples=trainer.examples,
        replay_before=state.get("replay_before", {}),
        replay_after=replay_after,
        blend=float(state.get("blend", 1.0)),
        curve=list(state["curve"]),
    )
