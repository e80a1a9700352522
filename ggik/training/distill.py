"""A cheaper sampler from a trained model, by distillation: a narrower decoder taught to decode as the model does.

The student is a :class:`ggik.nn.cvae.GGIKModel` with the teacher's encoders and prior (copied, frozen) and a decoder of
its own, narrower widths (``ModelConfig.dec_dim``, ``dec_hidden``, ``dec_layers``). Each step draws problems from the
teacher's own training mix (its data config: robots, goal kinds, tool offsets), draws ``samples`` latents per problem
from the teacher's prior, and trains the student's decoder to put every free node where the teacher's decoder puts it
for the same latent (squared distance [m^2] up to ``huber_m``, linear above, summed over the nodes, mean over the
decodings). No IK solutions are
needed: the teacher is the data.

The run folder holds ``distill_last.pt`` (student, optimiser, step, wall time): the same call continues a stopped run,
exactly (the problems and latents of step k are drawn from a generator seeded by k). :func:`export_student` writes the
student as a weights-only model file that loads wherever a model does (``GGIK.load``, ``--ckpt``), with a
``distillation`` record (the teacher's sha256, steps, the measured gap).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from ggik.checkpoint import WEIGHTS_FORMAT, load_model, read_checkpoint
from ggik.data import DataConfig, TrainingData
from ggik.errors import GGIKError
from ggik.fileio import atomic_write, load_torch_file
from ggik.nn.cvae import GGIKModel, ProblemEncoding
from ggik.rng import step_generator
from ggik.training.signals import install_stop_handlers, restore_handlers
from ggik.typed_config import from_dict
from ggik.version import __version__

__all__ = ["DistillConfig", "Distillation", "export_student"]

STATE_FILE = "distill_last.pt"  #: the run's resumable state inside its folder
STATE_FORMAT = "ggik-distill/1"
#: what the student's file keeps of the teacher's: the record of the training its encoders and prior had
TEACHER_RECORD = ("torch_version", "training_robots", "step", "examples", "wall_s", "world_size", "cpu_s")
GAP_RANK = 1_000_003  #: the data rank of the fixed problems that measure the gap (training draws rank 0)
DECODER_PREFIXES = ("dec_in.", "decoder.", "gn_follow.")  #: the student's own (trained) parameters


@dataclass(frozen=True)
class DistillConfig:
    """The student's decoder and the recipe (one source of defaults)."""

    dec_dim: int = 32  #: node feature width of the student's decoder
    dec_hidden: int = 64  #: hidden width of its MLPs
    dec_layers: int = 3  #: its EGNN layers
    gn_steps: int = 2  #: its learned Gauss-Newton moves (the teacher's recipe)
    batch_size: int = 64  #: problems per step
    samples: int = 4  #: prior latents per problem and step
    #: the loss per node is Huber in its distance d from the teacher's node [m]: d^2 under ``huber_m``, linear above
    #: (for some latents the teacher's decoder is chaotic: rounding alone moves those samples by centimetres, and a
    #: squared loss would chase them); 0: squared distance
    huber_m: float = 0.01
    steps: int = 20_000  #: optimiser steps of the whole run (the learning rate's cosine spans them)
    lr: float = 1e-3
    min_lr_ratio: float = 0.05
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    bf16: bool = True  #: bfloat16 autocast for both decoders (where the CPU runs it natively)
    seed: int = 0
    gap_problems: int = 256  #: fixed problems on which the student-teacher gap is measured
    checkpoint_every_s: float = 120.0

    def check(self) -> None:
        ints = ("dec_dim", "dec_hidden", "dec_layers", "batch_size", "samples", "steps", "gap_problems")
        bad = [k for k in ints if getattr(self, k) < 1]
        if bad or self.gn_steps < 0 or self.gn_steps > self.dec_layers or not self.lr > 0 or self.huber_m < 0:
            raise ValueError(f"bad distillation config {self} ({bad or 'gn_steps, lr, huber_m'})")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Distillation:
    """A distillation run of ``teacher`` (a model file) in ``run_dir``; :meth:`run` trains, :meth:`gap` measures.

    Shapes: problems B = ``cfg.batch_size``, S = ``cfg.samples`` latents each, N nodes (padded over the mix).
    """

    def __init__(self, teacher: str | Path, run_dir: str | Path, cfg: DistillConfig | None = None) -> None:
        self.cfg = cfg = cfg or DistillConfig()
        cfg.check()
        self.teacher_path, self.run_dir = Path(teacher), Path(run_dir)
        self.teacher, self.teacher_ckpt = load_model(self.teacher_path)
        self.teacher.requires_grad_(False)
        self.teacher_sha256 = _sha256(self.teacher_path)
        student_cfg = replace(
            self.teacher.cfg,
            dec_dim=cfg.dec_dim,
            dec_hidden=cfg.dec_hidden,
            dec_layers=cfg.dec_layers,
            gn_steps=cfg.gn_steps,
        )
        torch.manual_seed(cfg.seed)
        self.student = GGIKModel(student_cfg)
        own = {k: v for k, v in self.teacher.state_dict().items() if not k.startswith(DECODER_PREFIXES)}
        missing = self.student.load_state_dict(own, strict=False).missing_keys
        if any(not k.startswith(DECODER_PREFIXES) for k in missing):
            raise GGIKError(f"{teacher}: the student cannot take the teacher's encoders ({missing[:3]})")
        for name, p in self.student.named_parameters():
            p.requires_grad_(name.startswith(DECODER_PREFIXES))
        self.trained = [p for p in self.student.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.trained, lr=cfg.lr, weight_decay=cfg.weight_decay)
        data = from_dict(DataConfig, self.teacher_ckpt["config"]["data"], "config.data")
        files = (self.teacher_ckpt.get("training_robots") or {}).get("files")
        self.data = TrainingData(data, self.teacher.cfg.graph, stored_files=files)
        self.step, self.wall_s = 0, 0.0
        self.log: list[dict] = []
        self._resume()

    # ------------------------------------------------------------------ state
    def _state_path(self) -> Path:
        return self.run_dir / STATE_FILE

    def _resume(self) -> None:
        path = self._state_path()
        if not path.exists():
            return
        state = load_torch_file(path, STATE_FORMAT, "distillation state")
        if state["teacher_sha256"] != self.teacher_sha256 or state["cfg"] != asdict(self.cfg):
            raise GGIKError(
                f"{path} was written for another teacher or recipe (teacher sha256 {state['teacher_sha256'][:12]}, "
                f"recipe {state['cfg']}); use another --run-dir"
            )
        self.student.load_state_dict(state["student"])
        self.opt.load_state_dict(state["optimizer"])
        self.step, self.wall_s, self.log = int(state["step"]), float(state["wall_s"]), list(state["log"])

    def save(self) -> Path:
        """Write the resumable state atomically; returns its path."""
        state = {
            "format": STATE_FORMAT,
            "ggik_version": __version__,
            "teacher_sha256": self.teacher_sha256,
            "cfg": asdict(self.cfg),
            "student": self.student.state_dict(),
            "optimizer": self.opt.state_dict(),
            "step": self.step,
            "wall_s": self.wall_s,
            "log": self.log,
        }
        self.run_dir.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        torch.save(state, buffer)
        return atomic_write(self._state_path(), lambda f: f.write(buffer.getvalue()))

    # ------------------------------------------------------------------ training
    def _decodings(
        self, step: int, batch_size: int, rank: int = 0
    ) -> tuple[torch.Tensor, torch.Tensor, ProblemEncoding, torch.Tensor]:
        """The teacher's decodings of the problems of ``step``: (z (B S, L, Z), x_teacher (B S, N, 3) [m], problem
        encoding repeated S times, node mask (B S, N))."""
        batch = self.data.examples(step, rank, batch_size=batch_size).to(dtype=torch.float32)
        S, g = self.cfg.samples, step_generator(self.cfg.seed, 7919, step, rank)
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.cfg.bf16):
            problem = self.teacher.encode_problem(batch)
            B, N = batch.node_mask.shape
            L = self.teacher.latent_mask(batch.node_mask).shape[1]
            u = torch.rand((B, S, L), generator=g)
            eps = torch.randn((B, S, L, self.teacher.cfg.latent), generator=g)
            z = self.teacher.prior_latents(problem, u, eps).reshape(B * S, L, -1).float()
            rep = problem.repeat_for_samples(S)
            mask = batch.node_mask[:, None].expand(B, S, N).reshape(B * S, N)
            x_t = self.teacher.decode(z, rep, mask).float()
        return z, x_t, rep, mask

    def _loss(self, z: torch.Tensor, x_t: torch.Tensor, rep: ProblemEncoding, mask: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.cfg.bf16):
            x_s = self.student.decode(z, rep, mask).float()
        free = rep.movable.to(x_s.dtype)
        d2 = ((x_s - x_t) ** 2).sum(-1)
        delta = self.cfg.huber_m
        if delta > 0:
            d = torch.sqrt(d2 + 1e-12)
            d2 = torch.where(d < delta, d2, 2 * delta * d - delta**2)  # 2 x Huber: d^2 under delta, then linear
        return (d2 * free).sum(-1).mean()

    def lr_at(self, step: int) -> float:
        c = self.cfg
        t = min(1.0, step / c.steps)
        return c.lr * (c.min_lr_ratio + (1 - c.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * t)))

    def gap(self) -> dict[str, float]:
        """The student's distance from the teacher on fixed problems (of a data rank no step uses): RMS, mean and
        median over the free nodes, and the 95th percentile of a decoding's largest node distance, all [mm]."""
        z, x_t, rep, mask = self._decodings(0, self.cfg.gap_problems // self.cfg.samples, GAP_RANK)
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.cfg.bf16):
            x_s = self.student.decode(z, rep, mask).float()
        d = (x_s - x_t).norm(dim=-1) * rep.movable
        free = rep.movable.sum()
        return {
            "rms_mm": 1e3 * float(((d**2).sum() / free).sqrt()),
            "mean_mm": 1e3 * float(d.sum() / free),
            "median_mm": 1e3 * float(d[rep.movable].median()),
            "p95_max_mm": 1e3 * float(d.amax(-1).quantile(0.95)),
        }

    def run(
        self, minutes: float, progress: bool = True, gap_every_s: float = 300.0, until_step: int | None = None
    ) -> dict:
        """Train until ``cfg.steps`` (or ``until_step``, a sitting's end), ``minutes`` of this sitting [min], SIGTERM
        or Ctrl-C; saves every ``checkpoint_every_s`` and at the end. Returns the last log entry (step, wall time [s],
        loss [m^2], gap [mm])."""
        from tqdm import tqdm

        start = time.monotonic()
        last_save = last_gap = start
        bar = tqdm(total=self.cfg.steps, initial=self.step, disable=not progress, desc="distil", unit="step")
        loss_avg = None
        last = self.cfg.steps if until_step is None else min(until_step, self.cfg.steps)
        stop = {"now": False}
        previous = install_stop_handlers(lambda: stop.__setitem__("now", True))  # SIGTERM, Ctrl-C: save and stop
        try:
            while self.step < last and time.monotonic() - start < 60 * minutes and not stop["now"]:
                t0 = time.monotonic()
                for group in self.opt.param_groups:
                    group["lr"] = self.lr_at(self.step)
                loss = self._loss(*self._decodings(self.step, self.cfg.batch_size))
                self.opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.trained, self.cfg.grad_clip)
                self.opt.step()
                self.step += 1
                self.wall_s += time.monotonic() - t0
                value = float(loss.detach())
                loss_avg = value if loss_avg is None else 0.98 * loss_avg + 0.02 * value
                bar.update(1)
                bar.set_postfix(loss_mm2=f"{1e6 * loss_avg:.1f}")
                now = time.monotonic()
                if now - last_gap >= gap_every_s:
                    self.log.append({"step": self.step, "wall_s": self.wall_s, "loss": loss_avg, **self.gap()})
                    bar.write(json.dumps(self.log[-1]))
                    last_gap = now
                if now - last_save >= self.cfg.checkpoint_every_s:
                    self.save()
                    last_save = now
        finally:
            bar.close()
            restore_handlers(previous)
        self.log.append({"step": self.step, "wall_s": self.wall_s, "loss": loss_avg, **self.gap()})
        self.save()
        return self.log[-1]


def export_student(run: Distillation, out: str | Path) -> Path:
    """Write ``run``'s student as a weights-only model file (atomically): the teacher's training record and config with
    the student's model config and weights, and a ``distillation`` record (teacher sha256, recipe, steps, wall time
    [s], the last measured gap). Returns ``out``."""
    ckpt = read_checkpoint(run.teacher_path)
    payload = {key: ckpt[key] for key in TEACHER_RECORD if key in ckpt}
    payload.update(
        format=WEIGHTS_FORMAT,
        ggik_version=__version__,
        source_ggik_version=ckpt.get("source_ggik_version") or ckpt.get("ggik_version"),
        config={**ckpt["config"], "model": asdict(run.student.cfg)},
        model={k: v.detach().float().contiguous().clone() for k, v in run.student.state_dict().items()},
        distillation={
            "teacher_sha256": run.teacher_sha256,
            "recipe": asdict(run.cfg),
            "steps": run.step,
            "wall_s": run.wall_s,
            "gap": run.log[-1] if run.log else run.gap(),
        },
    )
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    out = atomic_write(Path(out), lambda f: f.write(buffer.getvalue()))
    load_model(out)  # the file loads as a model: a check, not a hope
    return out
