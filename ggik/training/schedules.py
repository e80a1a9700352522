"""Schedules of a training run, as pure functions of the step: learning-rate factor and KL weight."""

from __future__ import annotations

import math

import torch
from torch.optim.lr_scheduler import LambdaLR

from ggik.errors import GGIKError
from ggik.training.config import LossConfig, TrainConfig

__all__ = ["lr_factor", "beta_at", "rec_gain_at", "apply_optim_config"]


def lr_factor(step: int, cfg: TrainConfig) -> float:
    """Factor of the peak learning rate at ``step``: linear warm-up from 0, then cosine decay to
    ``min_lr_ratio`` at ``cfg.steps`` (or constant)."""
    o = cfg.optim
    if step < o.warmup_steps:
        return (step + 1) / o.warmup_steps
    if o.schedule == "constant":
        return 1.0
    if o.schedule != "cosine":
        raise GGIKError(f"optim.schedule must be 'cosine' or 'constant', got {o.schedule!r}")
    t = min(1.0, (step - o.warmup_steps) / max(1, cfg.steps - o.warmup_steps))
    return o.min_lr_ratio + (1 - o.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t))


def beta_at(step: int, cfg: LossConfig) -> float:
    """KL weight at ``step``: rises linearly from 0 to ``cfg.beta`` over ``beta_warmup_steps``."""
    if cfg.beta_warmup_steps <= 0:
        return cfg.beta
    return cfg.beta * min(1.0, step / cfg.beta_warmup_steps)


def rec_gain_at(step: int, cfg: LossConfig) -> float:
    """Weight of the free-node squared error at ``step`` [1/m^2]: ``rec_gain``, or with ``rec_gain_final`` > 0 a
    geometric rise from ``rec_gain`` to ``rec_gain_final`` over ``rec_gain_steps`` steps (then constant)."""
    if cfg.rec_gain_final <= 0:
        return cfg.rec_gain
    if cfg.rec_gain <= 0:
        raise GGIKError(f"loss.rec_gain must be > 0 for a geometric rec_gain schedule, got {cfg.rec_gain}")
    t = 1.0 if cfg.rec_gain_steps <= 0 else min(1.0, step / cfg.rec_gain_steps)
    return cfg.rec_gain * (cfg.rec_gain_final / cfg.rec_gain) ** t


def apply_optim_config(optimizer: torch.optim.Optimizer, scheduler: LambdaLR, cfg: TrainConfig, step: int) -> None:
    """Put the config's peak learning rate and weight decay into a resumed optimiser and schedule.

    ``Optimizer.load_state_dict`` and ``LambdaLR.load_state_dict`` restore the hyper-parameters a run was saved with
    (``lr``, ``initial_lr``, ``base_lrs``, ``weight_decay``), so without this a resume with ``--set optim.lr=...``
    would log the new value in its config and train at the old one. The learning rate of the next step becomes
    ``cfg.optim.lr * lr_factor(step, cfg)``, as in a run that had the new value from the start.
    """
    scheduler.base_lrs = [cfg.optim.lr for _ in optimizer.param_groups]
    for group in optimizer.param_groups:
        group["initial_lr"] = cfg.optim.lr
        group["lr"] = cfg.optim.lr * lr_factor(step, cfg)
        group["weight_decay"] = cfg.optim.weight_decay
