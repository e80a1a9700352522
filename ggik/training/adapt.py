"""Adapting a trained model to one arm in minutes (``ggik adapt``, :meth:`ggik.GGIK.adapt`).

The model (by default the shipped one) is fine-tuned on the arm, a URDF file's chain, with a share of every batch
replaying the model's own training robots (its shipped ``urdfs/`` robots), for a wall-clock budget. The arm's raw
success (best of ``val_samples`` within 1 cm and 1 deg, on ``val_problems`` fixed pose goals) is measured every
``val_every_s`` seconds; the best model so far is written as a weights-only model file at once, so a stop (the budget,
Ctrl-C, SIGTERM) always leaves the best one. The run folder holds the resumable state (``last.pt`` of
:class:`ggik.training.trainer.Trainer`, ``adapt_state.json``, ``metrics.jsonl``, ``best.pt``): the same command
continues a stopped run until the budget, counted over all sittings, is spent.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from ggik.checkpoint import (
    export_checkpoint,
    load_checkpoint,
    load_model,
    read_checkpoint,
    shipped_model_path,
)
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot import Robot
from ggik.kinematics.robot_files import RobotFile
from ggik.nn.cvae import GGIKModel
from ggik.training.adapt_config import AdaptConfig, AdaptResult, adapt_config
from ggik.training.signals import install_stop_handlers, restore_handlers
from ggik.training.trainer import Trainer
from ggik.training.validation import validate, validation_groups
from ggik.typed_config import to_dict

__all__ = ["AdaptConfig", "AdaptResult", "adapt", "adapt_config"]

STATE_FILE = "adapt_state.json"  #: the run's adaptation state (budget spent, best success), next to ``last.pt``
BEST_FILE = "best.pt"  #: the best model measured, before any blending (:func:`_retain`), weights only
ARM_PROBLEMS = "arm_problems.pt"  #: the arm's fixed validation goals
REPLAY_PROBLEMS = "replay_problems.pt"  #: the replayed robots' fixed validation goals


def _lr_factor(elapsed_s: float, budget_s: float, cfg: AdaptConfig) -> float:
    """The learning rate's factor after ``elapsed_s`` of a budget of ``budget_s`` [s]: 1, or the cosine to
    ``min_lr_ratio`` over the budget."""
    if cfg.schedule == "constant":
        return 1.0
    t = min(1.0, elapsed_s / budget_s)
    return cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t))


def _problems(run_dir: Path, name: str, robots: list[Robot], per_robot: int, seed: int) -> ProblemSet:
    """The fixed problems ``run_dir/name``: made once (``per_robot`` per robot, ``seed``), then read back."""
    path = run_dir / name
    if path.is_file():
        return ProblemSet.load(path)
    problems = ProblemSet.generate(robots, per_robot, seed)
    problems.save(path)
    return problems


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _write_state(run_dir: Path, state: dict) -> None:
    """``run_dir/adapt_state.json``, atomically (written together with ``last.pt``)."""
    atomic_write(run_dir / STATE_FILE, lambda f: f.write(json.dumps(state, indent=1).encode("utf-8")))


def _mean(values: dict[str, float]) -> float:
    return sum(values.values()) / len(values)


@dataclass
class _Adaptation:
    """One adaptation in progress: the trainer and what the loop, the measurements and the files need."""

    trainer: Trainer
    cfg: AdaptConfig
    out: Path
    state: dict  #: what ``adapt_state.json`` holds (budget spent, best, curve, base and arm)
    arm_groups: list  #: the arm's fixed validation goals (:func:`ggik.training.validation.validation_groups`)
    replay_groups: list  #: the replayed robots' ({} when not measured)
    anchor: list[torch.Tensor] | None = None  #: the base model's parameters (``cfg.anchor`` > 0)

    @property
    def run_dir(self) -> Path:
        return self.trainer.run_dir

    @property
    def arm(self) -> str:
        return self.arm_groups[0][0].name

    def measure(self, groups: list, model: GGIKModel | None = None) -> dict[str, tuple[float, float]]:
        """Per robot of ``groups``: (raw success, the mean over goals of the best sample's position error [m])."""
        model = model or self.trainer.model
        record = validate(model, groups, self.trainer.cfg, self.trainer.device)
        self.trainer.model.train()
        names = [robot.name for robot, *_ in groups]
        return {n: (float(record[f"val/{n}/success"]), float(record[f"val/{n}/pos_err_best_m"])) for n in names}

    def success(self, groups: list, model: GGIKModel | None = None) -> dict[str, float]:
        return {name: s for name, (s, _) in self.measure(groups, model).items()}


def adapt(
    arm: RobotFile | Robot,
    out: str | Path,
    cfg: AdaptConfig | None = None,
    base: str | Path | None = None,
    run_dir: str | Path | None = None,
    device: str = "cpu",
    progress: bool = True,
) -> AdaptResult:
    """Adapt model ``base`` (a checkpoint; None: the shipped model) to ``arm`` (a :class:`RobotFile` of one URDF file,
    or a :class:`Robot`, kept as its URDF text) and write the best model measured to ``out`` (weights only, atomic).

    ``run_dir`` (default ``OUT.adapt/``) holds the resumable run: if it holds one, it is continued until
    ``cfg.minutes`` are spent over all sittings (the recipe but ``minutes`` and ``threads``, the arm, its file and the
    base model must be the run's). A stop request (Ctrl-C, SIGTERM) ends the run after the current step, leaving
    ``out`` as the best model so far and the run resumable. The budget counts training and the arm's measurements;
    measuring the base model first and the replayed robots at the end (:func:`_retain`) come on top.
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
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            atomic_write(path, lambda f: f.write(text.encode("utf-8")))
        arm = RobotFile(str(path))
    if not Path(arm.urdf).is_file():
        raise GGIKError(f"the arm to adapt to must be one URDF file; {arm.urdf} is not a file")
    if base is None:
        with shipped_model_path() as shipped:
            return adapt(arm, out, cfg, shipped, run_dir, device, progress)
    who = {"config": _recipe(cfg), "arm": asdict(arm), "arm_sha256": _sha256(arm.urdf), "base_sha256": _sha256(base)}
    if (run_dir / "last.pt").is_file() and (run_dir / STATE_FILE).is_file():
        state = json.loads((run_dir / STATE_FILE).read_text(encoding="utf-8"))
        differ = [k for k, v in who.items() if state.get(k) != v]
        if differ:
            raise GGIKError(
                f"{run_dir} holds an adaptation with another {' and '.join(differ)} ({state['arm']['urdf']}, base "
                f"{state['base']}); continue it with the same options and files, or give another --run-dir"
            )
        trainer = Trainer.resume(run_dir, {"threads": cfg.threads}, device=device, progress=False)
    else:
        base_ckpt = load_checkpoint(base)
        try:
            trainer = Trainer(adapt_config(base_ckpt, arm, cfg), run_dir, device=device, progress=False)
        except GGIKError as exc:
            if "are the same arm" in str(exc):
                raise GGIKError(f"{arm.urdf} is one of the base model's training robots: {exc}") from None
            raise
        trainer.init_from(base)
        state = {**who, "base": str(base), "elapsed_s": 0.0, "best": None, "curve": []}
    for name in cfg.freeze:
        getattr(trainer.model, name).requires_grad_(False)
    anchor = [p.detach() for p in load_model(base, trainer.device)[0].parameters()] if cfg.anchor > 0 else None
    arm_tr, replayed = trainer.data.robots[-1], [tr.robot for tr in trainer.data.robots[:-1]]
    graph = trainer.cfg.model.graph
    arm_groups = validation_groups(_problems(run_dir, ARM_PROBLEMS, [arm_tr.robot], cfg.val_problems, cfg.seed), graph)
    replay_groups = []
    if cfg.replay_problems and replayed:
        replay_set = _problems(run_dir, REPLAY_PROBLEMS, replayed, cfg.replay_problems, cfg.seed)
        replay_groups = validation_groups(replay_set, graph)
    a = _Adaptation(trainer, cfg, out, state, arm_groups, replay_groups, anchor)
    if state["best"] is None:  # the base model, measured: the first best
        state["base_success"], best_m = a.measure(arm_groups)[a.arm]
        state["replay_before"] = a.success(replay_groups) if replay_groups else {}
        state["best"] = {"success": state["base_success"], "step": 0}
        state["curve"].append(
            {
                "elapsed_s": 0.0,
                "cpu_s": 0.0,
                "step": 0,
                "examples": 0,
                "success": state["base_success"],
                "best_m": best_m,
            }
        )
        _save_best(a)
        _write_state(run_dir, state)
    return _run(a, progress)


def _recipe(cfg: AdaptConfig) -> dict:
    """The fields of ``cfg`` a resumed run must share with the run (all but the budget and the threads)."""
    return {k: v for k, v in to_dict(cfg).items() if k not in ("minutes", "threads")}


def _save_best(a: _Adaptation) -> None:
    """The trainer's current model as the best one: ``RUN_DIR/best.pt`` (weights only, naming the arm, through the run's
    ``last.pt``) and a copy at ``out``."""
    a.trainer.save()
    record = a.trainer.data.robots[-1].record or {}
    adaptation = {"robot": a.arm, "urdf": record.get("path"), "sha256": record.get("sha256")}
    adaptation.update({k: a.state[k] for k in ("base_success", "elapsed_s", "base")})
    adaptation["success"] = a.state["best"]["success"]
    export_checkpoint(a.run_dir / "last.pt", a.run_dir / BEST_FILE, adaptation=adaptation)
    data = (a.run_dir / BEST_FILE).read_bytes()
    atomic_write(a.out, lambda f: f.write(data))


BLEND_HALVINGS = 4  #: :func:`_retain` bisects the share of the adaptation it keeps to 1/16


def _blend(origin: dict, best: dict, share: float) -> dict:
    """The state dict ``origin + share (best - origin)`` (floating-point tensors; the others as in ``best``)."""
    return {k: origin[k] + share * (v - origin[k]) if v.is_floating_point() else v for k, v in best.items()}


@torch.no_grad()
def _retain(a: _Adaptation) -> dict[str, float]:
    """The replayed robots' raw success of the best model (``RUN_DIR/best.pt``). With ``cfg.retain`` > 0 and their
    mean below ``retain`` x before, ``out`` becomes the blend ``w_base + s (w_best - w_base)`` with the largest share
    ``s`` that keeps it, bisected over [0, 1] in :data:`BLEND_HALVINGS` halvings (``s`` = 0, the base model, keeps it
    by definition), and its arm is measured again; else ``out`` is the best model. Records ``blend``,
    ``final_success`` and ``replay_after`` in the state; returns ``replay_after``."""
    device = a.trainer.device
    kept, _ = load_model(a.run_dir / BEST_FILE, device)
    best = {k: v.clone() for k, v in kept.state_dict().items()}
    origin = load_model(a.state["base"], device)[0].state_dict()
    floor = a.cfg.retain * _mean(a.state["replay_before"])
    measured: dict[float, dict[str, float]] = {0.0: dict(a.state["replay_before"])}

    def keeps(share: float) -> bool:
        kept.load_state_dict(_blend(origin, best, share))
        measured[share] = a.success(a.replay_groups, kept)
        return a.cfg.retain == 0 or _mean(measured[share]) >= floor

    share, low, high = 1.0, 0.0, 1.0
    if not keeps(1.0):
        for _ in range(BLEND_HALVINGS):
            mid = (low + high) / 2
            low, high = (mid, high) if keeps(mid) else (low, mid)
        share = low
    replay = measured[share]
    a.state.update(blend=share, replay_after=replay, final_success=a.state["best"]["success"])
    payload = read_checkpoint(a.run_dir / BEST_FILE)
    if share < 1.0:
        kept.load_state_dict(_blend(origin, best, share))
        a.state["final_success"] = a.success(a.arm_groups, kept)[a.arm]
        payload["model"] = {k: v.detach().cpu().contiguous() for k, v in kept.state_dict().items()}
    payload["adaptation"] = {**payload["adaptation"], "blend": share, "success": a.state["final_success"]}
    atomic_write(a.out, lambda f: torch.save(payload, f))
    return replay


@torch.no_grad()
def _pull_to_base(a: _Adaptation, lr: float) -> None:
    """w -= lr * anchor * (w - w_base) for every trained weight, ``lr`` the rate of the step just taken."""
    assert a.anchor is not None
    for p, p0 in zip(a.trainer.model.parameters(), a.anchor):
        if p.requires_grad:
            p.sub_(lr * a.cfg.anchor * (p - p0))


def _run(a: _Adaptation, progress: bool) -> AdaptResult:
    """The adaptation loop until the budget is spent or a stop is requested, then :func:`_retain`."""
    from tqdm import tqdm

    trainer, cfg, state = a.trainer, a.cfg, a.state
    budget = 60.0 * cfg.minutes
    stop = {"now": False}
    previous = install_stop_handlers(lambda: stop.__setitem__("now", True))
    bar = tqdm(total=round(budget), initial=round(min(state["elapsed_s"], budget)), unit="s", disable=not progress)
    bar.set_description(f"adapt {a.arm}")
    bar.set_postfix(raw=f"{state['curve'][-1]['success']:.0%}", best=f"{state['best']['success']:.0%}")
    trainer.model.train()
    since_val = 0.0
    try:
        while state["elapsed_s"] < budget and not stop["now"]:
            t0, c0 = time.perf_counter(), time.process_time()
            lr = trainer.optimizer.param_groups[0]["lr"]  # the rate this step takes
            trainer.train_step()
            if a.anchor is not None:
                _pull_to_base(a, lr)
            if trainer.step >= cfg.warmup_steps:  # warm-up by step (the trainer's schedule), then decay by time
                for group in trainer.optimizer.param_groups:
                    group["lr"] = cfg.lr * _lr_factor(state["elapsed_s"], budget, cfg)
            dt = time.perf_counter() - t0
            trainer.wall_s += dt
            trainer.cpu_s += time.process_time() - c0
            state["elapsed_s"] += dt
            since_val += dt
            bar.update(round(min(state["elapsed_s"], budget)) - bar.n)
            if since_val >= cfg.val_every_s or state["elapsed_s"] >= budget or stop["now"]:
                since_val = 0.0
                t1, c1 = time.perf_counter(), time.process_time()
                success, best_m = a.measure(a.arm_groups)[a.arm]
                state["elapsed_s"] += time.perf_counter() - t1
                trainer.cpu_s += time.process_time() - c1
                point = {"elapsed_s": state["elapsed_s"], "cpu_s": trainer.cpu_s, "step": trainer.step}
                point.update(examples=trainer.examples, success=success, best_m=best_m)
                state["curve"].append(point)
                trainer.metrics.log({"kind": "val", **point, f"val/{a.arm}/success": success})
                if success > state["best"]["success"]:
                    state["best"] = {"success": success, "step": trainer.step}
                    _save_best(a)
                else:
                    trainer.save()
                _write_state(a.run_dir, state)
                bar.update(round(min(state["elapsed_s"], budget)) - bar.n)
                bar.set_postfix(raw=f"{success:.0%}", best=f"{state['best']['success']:.0%}", step=trainer.step)
    finally:
        bar.close()
        restore_handlers(previous)
        trainer.save()
        _write_state(a.run_dir, state)
        trainer.metrics.finish()
    state["final_success"], state["blend"] = state["best"]["success"], 1.0
    replay_after = _retain(a) if a.replay_groups else {}  # without replay, out is best.pt already (_save_best)
    _write_state(a.run_dir, state)
    return AdaptResult(
        out=a.out,
        arm=a.arm,
        base_success=state["base_success"],
        best_success=state["final_success"],
        best_step=state["best"]["step"],
        elapsed_s=state["elapsed_s"],
        steps=trainer.step,
        examples=trainer.examples,
        replay_before=state.get("replay_before", {}),
        replay_after=replay_after,
        blend=float(state["blend"]),
        curve=list(state["curve"]),
    )
