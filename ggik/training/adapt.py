"""Adapting a trained model to one arm in minutes (``ggik adapt``, :meth:`ggik.GGIK.adapt`).

The model (by default the shipped one) is fine-tuned on the arm, a URDF file's chain, with a share of every batch
replaying the model's own training robots (its shipped ``urdfs/`` robots), for a wall-clock budget. The arm's raw
success (best of ``val_samples`` within 1 cm and 1 deg) on ``val_problems`` fixed pose goals, the selection goals, is
measured every ``val_every_s`` seconds; the best model so far is written as a weights-only model file at once, so a
stop (the budget, Ctrl-C, SIGTERM) always leaves the best one. Being the best of many measurements on those goals, its
success there is optimistic: the arm's ``test_problems`` held-out goals, never used to choose, are measured for the
base model and for the model written, and are the result's success. The run folder holds the resumable state
(``last.pt`` of :class:`ggik.training.trainer.Trainer`, ``adapt_state.json``, ``metrics.jsonl``, ``best.pt``): the
same command continues a stopped run until the budget, counted over all sittings, is spent. A run is known by its
recipe, the arm's chain options and file contents (sha256) and the base model's sha256, not by paths: the base model
is always the one given to the current call, wherever it lies. A step with a non-finite loss or gradient stops the
training with the run's last finite state kept, and no file the run did not make is written over
(:mod:`ggik.training.adapt_files`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ggik.checkpoint import export_checkpoint, load_checkpoint, load_model, read_checkpoint, shipped_model_path
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot import Robot
from ggik.kinematics.robot_files import RobotFile
from ggik.nn.cvae import GGIKModel
from ggik.training.adapt_config import (
    TEST_SEED_OFFSET,
    AdaptConfig,
    AdaptResult,
    adapt_config,
    arm_record,
    freeze,
    lr_factor,
    recipe,
    refuse_another_run,
    retains,
)
from ggik.training.adapt_files import (
    ARM_PROBLEMS,
    BEST_FILE,
    REPLAY_PROBLEMS,
    STATE_FILE,
    TEST_PROBLEMS,
    arm_file,
    check_finite,
    finite_state,
    fixed_problems,
    guard_gradients,
    make_run_dir,
    new_run_id,
    read_base,
    read_state,
    refuse_foreign_out,
    refuse_paths,
    reload_last,
    save_finite,
    write_state,
)
from ggik.training.signals import install_stop_handlers, restore_handlers
from ggik.training.trainer import NonFiniteLoss, Trainer
from ggik.training.validation import validate, validation_groups

__all__ = ["AdaptConfig", "AdaptResult", "adapt", "adapt_config"]


SHIPPED = "the shipped model (ggik/weights/ggik_default.pt)"  #: what the state records as the base for the shipped one


class _Clock:
    """The times the loop reads [s]: wall (``time.perf_counter``) and the process's CPU time
    (``time.process_time``). Tests replace the module's ``_clock`` to drive the budget deterministically."""

    def wall(self) -> float:
        return time.perf_counter()

    def cpu(self) -> float:
        return time.process_time()


_clock = _Clock()


@dataclass
class _Adaptation:
    """One adaptation in progress: the trainer and what the loop, the measurements and the files need."""

    trainer: Trainer
    cfg: AdaptConfig
    out: Path
    state: dict  #: what ``adapt_state.json`` holds (budget spent, best, curve, base and arm)
    base: Path  #: the base model's file, as given to this call
    arm_groups: list  #: the arm's selection goals (:func:`ggik.training.validation.validation_groups`)
    test_groups: list  #: the arm's held-out goals
    replay_groups: list  #: the replayed robots' ([] when not measured)
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
    force: bool = False,
) -> AdaptResult:
    """Adapt model ``base`` (a checkpoint; None: the shipped model) to ``arm`` (a :class:`RobotFile` of one URDF file,
    or a :class:`Robot`, kept as its URDF text) and write the best model measured to ``out`` (weights only, atomic).

    ``run_dir`` (default ``OUT.adapt/``) holds the resumable run: if it holds one, it is continued until
    ``cfg.minutes`` are spent over all sittings (the recipe but ``minutes`` and ``threads``, the arm's chain options
    and file contents, and the base model's contents must be the run's; a GGIKError names what differs). Paths may
    differ between sittings (relative ones, moved files): the base model is always read from ``base``. A stop request
    (Ctrl-C, SIGTERM) ends the run after the current step, leaving ``out`` as the best model so far and the run
    resumable. The budget counts training and the arm's selection measurements; measuring the base model first, and
    the replayed robots and the held-out goals at the end (:func:`_finish`), come on top. ``cfg.threads`` applies
    to this call only: torch's thread count is restored on return.

    A step with a non-finite loss or gradient stops the training: the run keeps its last finite state (no step with
    a non-finite gradient is taken, no non-finite state is saved), ``out`` is finished from the best model measured,
    and the result's ``fault`` says what happened. ``out`` is never the base model, the arm's file or a file of the
    run; an ``out`` that exists must have been written by this run unless ``force``
    (:mod:`ggik.training.adapt_files`).
    """
    cfg = cfg or AdaptConfig()
    threads = torch.get_num_threads()
    try:
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        if base is not None:
            if not Path(base).is_file():
                raise GGIKError(f"the base model {base} is not a file")
            label = str(Path(base).resolve())
            return _run(_adapt(arm, Path(out), cfg, Path(base), label, run_dir, device, force), progress)
        with shipped_model_path() as shipped:  # a temporary file in a zipped install: read during this call only
            return _run(_adapt(arm, Path(out), cfg, shipped, SHIPPED, run_dir, device, force), progress)
    finally:
        torch.set_num_threads(threads)


def _adapt(
    given: RobotFile | Robot,
    out: Path,
    cfg: AdaptConfig,
    base: Path,
    label: str,
    run_dir: str | Path | None,
    device: str,
    force: bool,
) -> _Adaptation:
    """The adaptation :func:`adapt` asks for, ready to run (the base model measured at a run's first sitting), with
    the base model's file ``base`` (``label``: how the state names it) at hand. Every check (paths, the base model,
    the run's state, an existing ``out``) comes before the first file is written."""
    run_dir = Path(run_dir) if run_dir is not None else out.with_name(out.name + ".adapt")
    arm, data = arm_file(given, run_dir)
    refuse_paths(out, base, label, Path(arm.urdf), run_dir)
    who = {
        "config": recipe(cfg),
        "arm": arm_record(arm),
        "arm_sha256": hashlib.sha256(data).hexdigest(),
        "base_sha256": hashlib.sha256(read_base(base, label)).hexdigest(),
    }
    resumed = (run_dir / "last.pt").is_file() and (run_dir / STATE_FILE).is_file()
    state = read_state(run_dir / STATE_FILE) if resumed else None
    if state is not None:
        refuse_another_run(run_dir, state, who)
    refuse_foreign_out(out, state, run_dir, force)
    make_run_dir(run_dir)
    kept = Path(arm.urdf)
    if isinstance(given, Robot) and (not kept.is_file() or kept.read_bytes() != data):
        atomic_write(kept, lambda f: f.write(data))
    if state is not None:
        trainer = Trainer.resume(run_dir, {"threads": cfg.threads}, device=device, progress=False)
        if "run" not in state:  # a run from before run ids: the model files it writes from now on carry one
            state["run"] = new_run_id()
            write_state(run_dir, state)
    else:
        base_ckpt = load_checkpoint(base)
        try:
            trainer = Trainer(adapt_config(base_ckpt, arm, cfg), run_dir, device=device, progress=False)
        except GGIKError as exc:
            if "are the same arm" in str(exc):
                raise GGIKError(f"{arm.urdf} is one of the base model's training robots: {exc}") from None
            raise
        trainer.init_from(base)
        state = {**who, "run": new_run_id(), "base": label, "elapsed_s": 0.0, "best": None, "curve": []}
    freeze(trainer.model, cfg.freeze)
    anchor = [p.detach() for p in load_model(base, trainer.device)[0].parameters()] if cfg.anchor > 0 else None
    arm_tr, replayed = trainer.data.robots[-1], [tr.robot for tr in trainer.data.robots[:-1]]
    graph = trainer.cfg.model.graph
    arm_groups = validation_groups(
        fixed_problems(run_dir, ARM_PROBLEMS, [arm_tr.robot], cfg.val_problems, cfg.seed, resumed), graph
    )
    test_set = fixed_problems(
        run_dir, TEST_PROBLEMS, [arm_tr.robot], cfg.test_problems, cfg.seed + TEST_SEED_OFFSET, resumed
    )
    replay_groups = []
    if cfg.replay_problems and replayed:
        replay_set = fixed_problems(run_dir, REPLAY_PROBLEMS, replayed, cfg.replay_problems, cfg.seed, resumed)
        replay_groups = validation_groups(replay_set, graph)
    groups = (arm_groups, validation_groups(test_set, graph), replay_groups)
    a = _Adaptation(trainer, cfg, out, state, base, *groups, anchor)
    if state["best"] is None:  # the base model, measured: the first best
        state["base_success"], best_m = a.measure(arm_groups)[a.arm]
        state["base_test_success"] = a.success(a.test_groups)[a.arm]
        state["replay_before"] = a.success(replay_groups) if replay_groups else {}
        state["best"] = {"success": state["base_success"], "step": 0}
        first = {"elapsed_s": 0.0, "cpu_s": 0.0, "step": 0, "examples": 0}
        state["curve"].append({**first, "success": state["base_success"], "best_m": best_m})
        write_state(run_dir, state)  # first: a state without last.pt starts afresh; out written names the run
        _save_best(a)
    return a


def _save_best(a: _Adaptation) -> None:
    """The trainer's current model as the best one: ``RUN_DIR/best.pt`` (weights only, naming the arm, through the run's
    ``last.pt``, :func:`ggik.training.adapt_files.save_finite`) and a copy at ``out``, naming the run (its id)."""
    save_finite(a.trainer)
    record = a.trainer.data.robots[-1].record or {}
    adaptation = {"robot": a.arm, "urdf": record.get("path"), "sha256": record.get("sha256"), "run": a.state["run"]}
    adaptation.update({k: a.state[k] for k in ("base_success", "base_test_success", "elapsed_s", "base")})
    adaptation["success"] = a.state["best"]["success"]
    export_checkpoint(a.run_dir / "last.pt", a.run_dir / BEST_FILE, adaptation=adaptation)
    data = (a.run_dir / BEST_FILE).read_bytes()
    atomic_write(a.out, lambda f: f.write(data))


BLEND_HALVINGS = 4  #: :func:`_retain` bisects the share of the adaptation it keeps to 1/16


def _blend(origin: dict, best: dict, share: float) -> dict:
    """The state dict ``origin + share (best - origin)`` (floating-point tensors; the others as in ``best``)."""
    return {k: origin[k] + share * (v - origin[k]) if v.is_floating_point() else v for k, v in best.items()}


@torch.no_grad()
def _finish(a: _Adaptation) -> dict[str, float]:
    """Write ``out`` once more, as the run's result: the best model measured (``RUN_DIR/best.pt``), or its blend
    toward the base model where the replayed robots do not keep their success (:func:`_retain`), with its held-out
    success measured and recorded (``test_success``; in the state, with ``blend`` and ``final_success``, the
    selection goals' success of that model). Returns the replayed robots' success of it ({} when not measured)."""
    kept, _ = load_model(a.run_dir / BEST_FILE, a.trainer.device)
    a.state.update(blend=1.0, final_success=a.state["best"]["success"])
    replay = _retain(a, kept) if a.replay_groups else {}
    a.state["test_success"] = a.success(a.test_groups, kept)[a.arm]
    payload = read_checkpoint(a.run_dir / BEST_FILE)
    if a.state["blend"] < 1.0:
        payload["model"] = {k: v.detach().cpu().contiguous() for k, v in kept.state_dict().items()}
    record = {"blend": a.state["blend"], "success": a.state["final_success"], "test_success": a.state["test_success"]}
    payload["adaptation"] = {**payload["adaptation"], **record, "run": a.state["run"]}
    atomic_write(a.out, lambda f: torch.save(payload, f))
    return replay


def _solved(success: dict[str, float], groups: list) -> int:
    """The goals solved, summed over the robots of ``groups``, of a measurement ``success`` (robot -> raw success)."""
    return sum(round(success[robot.name] * len(q)) for robot, _, q, _ in groups)


@torch.no_grad()
def _retain(a: _Adaptation, kept: GGIKModel) -> dict[str, float]:
    """The replayed robots' raw success of ``kept`` (the best model, loaded). Where they do not keep their success
    (:func:`ggik.training.adapt_config.retains`: the goals they solve, summed, at least ceil(``retain`` x the base
    model's) - ``retain_margin``), ``kept`` becomes the blend ``w_base + s (w_best - w_base)`` with the largest share
    ``s`` that keeps it, bisected over [0, 1] in :data:`BLEND_HALVINGS` halvings (``s`` = 0, the base model, keeps it
    by definition), and its arm is measured again. Records ``blend``, ``final_success``, ``replay_after`` and the goals
    solved before and after in the state; returns ``replay_after``."""
    best = {k: v.clone() for k, v in kept.state_dict().items()}
    origin = load_model(a.base, a.trainer.device)[0].state_dict()  # the base of this call, never a stored path
    before = _solved(a.state["replay_before"], a.replay_groups)
    measured: dict[float, dict[str, float]] = {0.0: dict(a.state["replay_before"])}

    def keeps(share: float) -> bool:
        kept.load_state_dict(best if share == 1.0 else _blend(origin, best, share))  # share 1: best, bit for bit
        measured[share] = a.success(a.replay_groups, kept)
        return retains(before, _solved(measured[share], a.replay_groups), a.cfg)

    share, low, high = 1.0, 0.0, 1.0
    if not keeps(1.0):
        for _ in range(BLEND_HALVINGS):
            mid = (low + high) / 2
            low, high = (mid, high) if keeps(mid) else (low, mid)
        share = low
    replay = measured[share]
    kept.load_state_dict(best if share == 1.0 else _blend(origin, best, share))
    a.state.update(blend=share, replay_after=replay, replay_solved_before=before)
    a.state.update(replay_solved_after=_solved(replay, a.replay_groups))
    a.state["replay_goals"] = sum(len(q) for _, _, q, _ in a.replay_groups)
    if share < 1.0:
        a.state["final_success"] = a.success(a.arm_groups, kept)[a.arm]
    return replay


@torch.no_grad()
def _pull_to_base(a: _Adaptation, lr: float) -> None:
    """w -= lr * anchor * (w - w_base) for every trained weight, ``lr`` the rate of the step just taken."""
    assert a.anchor is not None
    for p, p0 in zip(a.trainer.model.parameters(), a.anchor):
        if p.requires_grad:
            p.sub_(lr * a.cfg.anchor * (p - p0))


def _run(a: _Adaptation, progress: bool) -> AdaptResult:
    """The adaptation loop until the budget (read from :data:`_clock`) is spent, a stop is requested or a step is not
    finite (the run's last finite state kept: :func:`ggik.training.adapt_files.save_finite`, :func:`reload_last`;
    the state's ``fault`` says what happened), then :func:`_finish`."""
    from tqdm import tqdm

    trainer, cfg, state = a.trainer, a.cfg, a.state
    budget = 60.0 * cfg.minutes
    state.pop("fault", None)  # an earlier sitting's
    broken = not finite_state(trainer)  # a last.pt an earlier ggik saved after a non-finite step
    last = a.run_dir / "last.pt"
    fault = f"{last} holds non-finite weights (step {trainer.step}): no training can go on from it" if broken else None
    stop = {"now": False}
    guard = guard_gradients(trainer)
    previous = install_stop_handlers(lambda: stop.__setitem__("now", True))
    bar = tqdm(total=round(budget), initial=round(min(state["elapsed_s"], budget)), unit="s", disable=not progress)
    bar.set_description(f"adapt {a.arm}")
    bar.set_postfix(raw=f"{state['curve'][-1]['success']:.0%}", best=f"{state['best']['success']:.0%}")
    trainer.model.train()
    since_val = 0.0
    try:
        while fault is None and state["elapsed_s"] < budget and not stop["now"]:
            t0, c0 = _clock.wall(), _clock.cpu()
            lr = trainer.optimizer.param_groups[0]["lr"]  # the rate this step takes
            trainer.train_step()  # NonFiniteLoss for a non-finite loss or gradient: the step not taken
            if a.anchor is not None:
                _pull_to_base(a, lr)
            check_finite(trainer)  # the weights after the pull
            if trainer.step >= cfg.warmup_steps:  # warm-up by step (the trainer's schedule), then decay by time
                for group in trainer.optimizer.param_groups:
                    group["lr"] = cfg.lr * lr_factor(state["elapsed_s"], budget, cfg)
            dt = _clock.wall() - t0
            trainer.wall_s += dt
            trainer.cpu_s += _clock.cpu() - c0
            state["elapsed_s"] += dt
            since_val += dt
            bar.update(round(min(state["elapsed_s"], budget)) - bar.n)
            if since_val >= cfg.val_every_s or state["elapsed_s"] >= budget or stop["now"]:
                since_val = 0.0
                t1, c1 = _clock.wall(), _clock.cpu()
                success, best_m = a.measure(a.arm_groups)[a.arm]
                state["elapsed_s"] += _clock.wall() - t1
                trainer.cpu_s += _clock.cpu() - c1
                point = {"elapsed_s": state["elapsed_s"], "cpu_s": trainer.cpu_s, "step": trainer.step}
                point.update(examples=trainer.examples, success=success, best_m=best_m)
                state["curve"].append(point)
                trainer.metrics.log({"kind": "val", **point, f"val/{a.arm}/success": success})
                if success > state["best"]["success"]:
                    state["best"] = {"success": success, "step": trainer.step}
                    _save_best(a)
                else:
                    save_finite(trainer)
                write_state(a.run_dir, state)
                bar.update(round(min(state["elapsed_s"], budget)) - bar.n)
                bar.set_postfix(raw=f"{success:.0%}", best=f"{state['best']['success']:.0%}", step=trainer.step)
    except NonFiniteLoss as exc:  # a step with a non-finite loss or gradient, not taken (see guard_gradients)
        fault = str(exc)
    finally:
        bar.close()
        restore_handlers(previous)
        guard.remove()
        if not broken and finite_state(trainer):
            trainer.save()
            write_state(a.run_dir, state)
        elif not broken:
            reload_last(trainer, state)
        trainer.metrics.finish()
    if fault is not None:
        kept = "" if broken else f": training stopped; {last} keeps the last finite state (step {trainer.step})"
        state["fault"] = f"{fault}{kept}; {a.out}: the best model measured (step {state['best']['step']})"
    replay_after = _finish(a)
    write_state(a.run_dir, state)
    return AdaptResult(
        out=a.out,
        arm=a.arm,
        base_success=state["base_success"],
        best_success=state["final_success"],
        base_test_success=state["base_test_success"],
        test_success=state["test_success"],
        best_step=state["best"]["step"],
        elapsed_s=state["elapsed_s"],
        steps=trainer.step,
        examples=trainer.examples,
        replay_before=state.get("replay_before", {}),
        replay_after=replay_after,
        blend=float(state["blend"]),
        curve=list(state["curve"]),
        fault=state.get("fault"),
    )
