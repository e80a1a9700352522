"""The files of an adaptation (:mod:`ggik.training.adapt`) and what it may write: its run folder and state
(``adapt_state.json``), the model file ``out`` it owns, and a training state that is finite before it is saved.

An adaptation writes over no file it did not make: ``out`` is never the base model (nor a link to it), the arm's URDF
file or a file of the run folder, and an ``out`` that exists must carry the run's id (``adaptation.run``, written into
every model file the run writes) unless ``force`` is given.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import replace
from pathlib import Path

import torch
from torch.utils.hooks import RemovableHandle

from ggik.checkpoint import load_checkpoint, read_checkpoint
from ggik.data import ProblemSet
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot import Robot
from ggik.kinematics.robot_files import RobotFile
from ggik.training.trainer import NonFiniteLoss, Trainer

__all__ = [
    "RUN_FILES",
    "STATE_FILE",
    "BEST_FILE",
    "ARM_PROBLEMS",
    "TEST_PROBLEMS",
    "REPLAY_PROBLEMS",
    "write_state",
    "read_state",
    "read_base",
    "make_run_dir",
    "refuse_paths",
    "refuse_foreign_out",
    "arm_file",
    "fixed_problems",
    "new_run_id",
    "finite_state",
    "check_finite",
    "save_finite",
    "reload_last",
    "guard_gradients",
]

STATE_FILE = "adapt_state.json"  #: the run's adaptation state (budget spent, best success), next to ``last.pt``
BEST_FILE = "best.pt"  #: the best model measured, before any blending, weights only
ARM_PROBLEMS = "arm_problems.pt"  #: the arm's fixed selection goals (choose the best model)
TEST_PROBLEMS = "test_problems.pt"  #: the arm's held-out goals (the result's success; never choose)
REPLAY_PROBLEMS = "replay_problems.pt"  #: the replayed robots' fixed validation goals
#: the files an adaptation writes in its run folder (besides a :class:`ggik.kinematics.Robot` arm's ``NAME.urdf``)
RUN_FILES = ("last.pt", "metrics.jsonl", STATE_FILE, BEST_FILE, ARM_PROBLEMS, TEST_PROBLEMS, REPLAY_PROBLEMS)


def write_state(run_dir: Path, state: dict) -> None:
    """``run_dir/adapt_state.json``, atomically (written together with ``last.pt``)."""
    atomic_write(run_dir / STATE_FILE, lambda f: f.write(json.dumps(state, indent=1).encode("utf-8")))


def read_state(path: Path) -> dict:
    """The adaptation state ``path`` (``adapt_state.json``); GGIKError naming it when it cannot be read or is not a
    JSON object (a damaged file)."""
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GGIKError(f"the adaptation state {path} cannot be read: {exc.strerror or exc}") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
        raise GGIKError(
            f"the adaptation state {path} is damaged (not JSON: {exc}); continue from a copy of the run folder, or "
            "give another --run-dir"
        ) from None
    if not isinstance(state, dict):
        raise GGIKError(f"the adaptation state {path} is damaged (a JSON {type(state).__name__}, not an object)")
    return state


def read_base(path: Path, label: str) -> bytes:
    """The bytes of the base model ``path`` (``label``: how errors name it); GGIKError when it cannot be read."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise GGIKError(f"the base model {label} cannot be read: {exc.strerror or exc}") from None


def make_run_dir(run_dir: Path) -> None:
    """Create the run folder ``run_dir`` (and its parents); GGIKError naming it when it cannot be made."""
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GGIKError(f"the run folder (--run-dir) {run_dir} cannot be made: {exc.strerror or exc}") from None


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` are one file: the same path once links are resolved, or (both existing) the same
    inode (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def refuse_paths(out: Path, base: Path, base_label: str, urdf: Path, run_dir: Path) -> None:
    """GGIKError where the model file ``out`` would be written over the base model ``base`` (or a link to it), the
    arm's URDF file ``urdf``, a file of the run folder ``run_dir``, or is a folder. Checked before any file is
    written; ``force`` does not lift it. Also GGIKError where ``run_dir`` is a file."""
    if run_dir.exists() and not run_dir.is_dir():
        raise GGIKError(f"the run folder (--run-dir) {run_dir} is a file, not a folder; give another --run-dir")
    if out.is_dir():
        raise GGIKError(f"--out {out} is a folder; give the model file's path")
    if _same_file(out, base):
        raise GGIKError(
            f"--out {out} is the base model ({base_label}): the adaptation would write over the model it starts "
            "from; give another --out"
        )
    if _same_file(out, urdf):
        raise GGIKError(f"--out {out} is the arm's URDF file; give another --out")
    if run_dir.is_dir() and any(_same_file(out, run_dir / name) for name in RUN_FILES):
        raise GGIKError(f"--out {out} is a file of the run folder {run_dir}; give another --out")


def arm_file(arm: RobotFile | Robot, run_dir: Path) -> tuple[RobotFile, bytes]:
    """The arm as a :class:`RobotFile` of an absolute path, and its file's bytes (a :class:`Robot`: its URDF text, to
    be kept as ``RUN_DIR/NAME.urdf``)."""
    if isinstance(arm, Robot):
        stem = re.sub(r"[^A-Za-z0-9_.-]", "_", arm.name) or "arm"  # the arm's name, as a file name
        return RobotFile(str((run_dir / f"{stem}.urdf").resolve())), arm.to_urdf().encode("utf-8")
    path = Path(arm.urdf)
    if not path.is_file():
        raise GGIKError(f"the arm to adapt to must be one URDF file; {arm.urdf} is not a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise GGIKError(f"the arm's URDF file {arm.urdf} cannot be read: {exc.strerror or exc}") from None
    return replace(arm, urdf=str(path.resolve())), data


def fixed_problems(
    run_dir: Path, name: str, robots: list[Robot], per_robot: int, seed: int, resumed: bool
) -> ProblemSet:
    """The fixed problems ``run_dir/name``: made at a run's first sitting (``per_robot`` per robot, ``seed``; a file
    left by a sitting that stopped before its state was written is made again), read back when it is ``resumed``."""
    path = run_dir / name
    if resumed and path.is_file():
        return ProblemSet.load(path)
    problems = ProblemSet.generate(robots, per_robot, seed)
    problems.save(path)
    return problems


def new_run_id() -> str:
    """A new run's id: 16 random hex digits, kept in its state and in every model file it writes."""
    return secrets.token_hex(8)


def _made_by(out: Path, state: dict) -> bool:
    """Whether model file ``out`` was written by the run of ``state``: its ``adaptation.run`` is the run's id (a run
    from before ids: its arm file's sha256, base model and base success are the run's)."""
    try:
        record = read_checkpoint(out).get("adaptation") or {}
    except (OSError, GGIKError):
        return False
    if "run" in state:
        return record.get("run") == state["run"]
    keys = (("sha256", "arm_sha256"), ("base", "base"), ("base_success", "base_success"))
    return all(state.get(its) is not None and record.get(mine) == state.get(its) for mine, its in keys)


def refuse_foreign_out(out: Path, state: dict | None, run_dir: Path, force: bool) -> None:
    """GGIKError where ``out`` exists and was not written by the run (``state``: the run's adaptation state; None for a
    new run), unless ``force``."""
    if force or not out.exists() or (state is not None and _made_by(out, state)):
        return
    who = f"the run in {run_dir} did not write it" if state is not None else f"{run_dir} holds no run that wrote it"
    raise GGIKError(
        f"--out {out} exists and {who}: ggik adapt writes over no model file it did not make; give another --out, "
        "or --force (force=True) to write over it"
    )


def finite_state(trainer: Trainer) -> bool:
    """Whether the trainer's model (parameters and buffers) and optimiser state are finite throughout."""
    tensors = [*trainer.model.parameters(), *trainer.model.buffers()]
    tensors += [v for s in trainer.optimizer.state.values() for v in s.values() if isinstance(v, torch.Tensor)]
    flags = [torch.isfinite(t).all() for t in tensors if t.is_floating_point()]
    return bool(torch.stack(flags).all()) if flags else True


def check_finite(trainer: Trainer) -> None:
    """:class:`NonFiniteLoss` where the trainer's state is not finite (:func:`finite_state`)."""
    if not finite_state(trainer):
        raise NonFiniteLoss(f"non-finite weights or optimiser state at step {trainer.step}")


def save_finite(trainer: Trainer) -> None:
    """The trainer's state as its run's ``last.pt``; :class:`NonFiniteLoss` instead of saving a non-finite one."""
    check_finite(trainer)
    trainer.save()


def reload_last(trainer: Trainer, state: dict) -> None:
    """The run's last finite state back into ``trainer`` and ``state`` (its adaptation state, changed in place):
    ``last.pt`` and ``adapt_state.json`` as last written, together (the metrics of later steps dropped)."""
    trainer.load_state(load_checkpoint(trainer.run_dir / "last.pt"))
    trainer.metrics.truncate(trainer.step)
    state.clear()
    state.update(read_state(trainer.run_dir / STATE_FILE))


def guard_gradients(trainer: Trainer) -> RemovableHandle:
    """Make every optimiser step of ``trainer`` raise :class:`NonFiniteLoss` before it changes anything (weights,
    optimiser state, schedule, step count) when a gradient is not finite: a NaN or inf gradient from a finite loss
    (the trainer checks the loss itself, before the backward pass on a CPU). Returns the hook's handle."""

    def check(optimizer: torch.optim.Optimizer, args: tuple, kwargs: dict) -> None:
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if grads and not bool(torch.stack([torch.isfinite(g).all() for g in grads]).all()):
            loss = " of a finite loss" if trainer.device.type != "cuda" else ""  # the CPU checked the loss already
            raise NonFiniteLoss(f"non-finite gradients{loss} at step {trainer.step}")

    return trainer.optimizer.register_step_pre_hook(check)
