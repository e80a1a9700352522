"""The resumable trainer of the GGIK model: checkpoints, validation, metrics, DDP.

* Configuration: :class:`ggik.training.config.TrainConfig`.
* Checkpoints: ``RUN_DIR/last.pt`` (always the newest), written atomically every ``checkpoint_every`` steps and at
  exit. It holds the config, the ggik version, the training robots (with the text of robots from URDF files), model,
  optimiser, scheduler and every process's RNG state; the model can be rebuilt from the file alone
  (:func:`load_model`), and ``--resume`` continues bit for bit on CPU.
* Data: ``TrainingData.examples`` on the training device (the stacked sampler makes a batch of all robots and goal
  kinds in one vectorised pass there, in the same shapes every step).
* Sync-free steps (``sync_free``, by default on CUDA): a step never waits for its device except at log and checkpoint
  steps (no ``.item()``, no shape that depends on the data; tests/test_sync_free_step.py checks it on a CPU).
* Metrics: ``RUN_DIR/metrics.jsonl``, one JSON object per line (``kind`` = "train" or "val"; a run started
  from another model's weights, :meth:`Trainer.init_from`, begins with one ``kind`` = "init" record).
* Fine-tuning: ``Trainer.init_from(ckpt)`` (``ggik train --init CKPT``) starts a new run (step 0, fresh optimiser and
  schedule) from the weights of a full or weights-only checkpoint; its checkpoints record the source in ``init_from``.
* Scale-out: run under ``torchrun`` and the trainer uses DistributedDataParallel (gloo on CPU, nccl on
  CUDA); each process draws its own data (``TrainingData.examples(step, rank)``), rank 0 writes files.
"""

from __future__ import annotations

import contextlib
import gc
import os
import time
from pathlib import Path

import torch
import torch.distributed as dist

from ggik.checkpoint import CHECKPOINT_FORMAT, cpu_time, load_checkpoint, merge_training_sets, recorded_training_set
from ggik.data import ProblemSet, TrainingData
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.graph.goal_kinds import check_goal_kind
from ggik.ik.sampling import native_bf16
from ggik.nn.cvae import GGIKModel
from ggik.nn.distance_geometry import fixed_size_steps
from ggik.training.compile_modes import check_compile_mode
from ggik.training.config import TrainConfig
from ggik.training.fine_tune import load_initial_weights
from ggik.training.metrics_log import MetricsLog
from ggik.training.nonfinite import NonFiniteLoss, NonFiniteWatch
from ggik.training.objective import micro_batches, step_objective
from ggik.training.schedules import apply_optim_config, beta_at, lr_factor, rec_gain_at
from ggik.training.signals import install_stop_handlers, restore_handlers
from ggik.training.validation import (
    ValidationGroup,
    success_summary,
    validate,
    validation_groups,
    validation_problems,
    validation_problems_file,
)
from ggik.typed_config import from_dict, merge, to_dict
from ggik.version import __version__

__all__ = ["Trainer", "NonFiniteLoss"]


class Trainer:
    """Trains a :class:`GGIKModel` on :class:`TrainingData`; see the module docstring.

    Args:
        cfg: the full configuration.
        run_dir: folder for ``last.pt``, ``metrics.jsonl``, ``config.yaml`` and the validation set.
        device: "cpu", "cuda", "cuda:1", ...; under torchrun with CUDA each process takes its LOCAL_RANK.
        wandb: "disabled" (default), "offline" or "online"; wandb is imported only when enabled.
        progress: show a tqdm progress bar (rank 0).
        stored_files: {name: record} of the robots from files a checkpoint kept: rebuilt from the kept URDF text.
        sync_free: take GPU steps, which never wait for the device (None: on CUDA): one pass per step
            (``cpu_micro_batch`` ignored: its passes sort and trim with host syncs), fused AdamW, the Gauss-Newton moves
            in fixed size (:func:`ggik.nn.distance_geometry.fixed_size_steps`), and a non-finite loss recorded on the
            device and raised at the next log or checkpoint step, the run then ending without a checkpoint
            (:class:`ggik.training.nonfinite.NonFiniteWatch`). False: each pass's loss checked before its backward.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        run_dir: str | Path,
        device: str = "cpu",
        wandb: str = "disabled",
        progress: bool = True,
        stored_files: dict | None = None,
        sync_free: bool | None = None,
    ) -> None:
        if not [check_goal_kind(k) for k in cfg.val.goal_kinds]:  # GoalError for a kind that does not exist
            raise GGIKError("val.goal_kinds must name at least one goal kind")
        check_compile_mode(cfg.compile, torch.device(device), cfg.model)  # before any process group or device work
        if cfg.cpu_micro_batch < 0:
            raise GGIKError(f"cpu_micro_batch must be >= 0 (0: one pass), got {cfg.cpu_micro_batch}")
        self.cfg = cfg
        self.run_dir = Path(run_dir)
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self._owns_process_group = False
        if self.world > 1 and not dist.is_initialized():
            backend = "nccl" if str(device).startswith("cuda") else "gloo"
            dist.init_process_group(backend=backend)
            self._owns_process_group = True
        if str(device).startswith("cuda") and self.world > 1:
            device = f"cuda:{int(os.environ.get('LOCAL_RANK', '0'))}"
        self.device = torch.device(device)
        self.sync_free = self.device.type == "cuda" if sync_free is None else bool(sync_free)  #: see the class
        if cfg.threads > 0:
            torch.set_num_threads(cfg.threads)
        torch.manual_seed(cfg.seed + self.rank)
        self.model = GGIKModel(cfg.model).to(self.device)
        self.ddp = None
        if self.world > 1:
            from torch.nn.parallel import DistributedDataParallel

            self.ddp = DistributedDataParallel(self.model)  # every parameter gets a gradient (see EGNN outputs)
        self.optimizer = torch.optim.AdamW(  # fused: one kernel for all parameters, and no .item() of its step count
            self.model.parameters(),
            lr=cfg.optim.lr,
            weight_decay=cfg.optim.weight_decay,
            fused=True if self.sync_free else None,
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: lr_factor(s, cfg))
        self.data = TrainingData(cfg.data, cfg.model.graph, stored_files)
        self.step = 0
        self.examples = 0
        self.wall_s = 0.0
        #: CPU time [s] of this process (all threads) in steps and validation, but ``cpu_untracked_wall_s`` of old runs
        self.cpu_s = 0.0
        self.cpu_untracked_wall_s = 0.0
        self.progress = progress and self.rank == 0
        self.metrics = MetricsLog(self.run_dir, self.rank, wandb)
        self._val_set: ProblemSet | None = None
        self._val_groups: list[ValidationGroup] | None = None
        self._stop_requested = False
        self.init_source: dict | None = None  #: where the initial weights came from (init_from), else None
        self.trained_before: dict | None = None  #: what the weights saw before (a resumed or init source's robots)
        self._bf16 = cfg.bf16 and native_bf16(self.device)  #: bf16 autocast where the device computes it natively
        self._nonfinite = NonFiniteWatch(self.device, deferred=self.sync_free)
        self._compiled = torch.compile(self.model, mode=cfg.compile) if cfg.compile != "eager" else None

    # ----- state
    def _rng_states(self) -> list[torch.Tensor]:
        state = torch.get_rng_state()
        if self.world == 1:
            return [state]
        gathered: list[torch.Tensor | None] = [None] * self.world
        dist.all_gather_object(gathered, state)
        states = [s for s in gathered if s is not None]
        assert len(states) == self.world  # all_gather_object fills every slot
        return states

    def state_dict(self) -> dict:
        return {
            "format": CHECKPOINT_FORMAT,
            "ggik_version": __version__,
            "torch_version": str(torch.__version__),
            "config": to_dict(self.cfg),
            "training_robots": self.training_robots(),
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "step": self.step,
            "examples": self.examples,
            "wall_s": self.wall_s,
            "cpu_s": self.cpu_s,
            "cpu_untracked_wall_s": self.cpu_untracked_wall_s,
            "rng": self._rng_states(),
            "rng_cuda": torch.cuda.get_rng_state(self.device) if self.device.type == "cuda" else None,
            "world_size": self.world,
            "init_from": self.init_source,
            "robot_files": self.data.describe()["files"],  # this run's own robots from files (resumed from these)
        }

    def training_robots(self) -> dict:
        """What the model has been trained on: this run's data mix, merged with what its weights saw before
        (:func:`ggik.checkpoint.merge_training_sets`); stored in checkpoints, it decides which robots are unseen."""
        now = self.data.describe()
        return now if self.trained_before is None else merge_training_sets(self.trained_before, now)

    def save(self) -> Path | None:
        state = self.state_dict()  # collective under DDP: every rank takes part
        if self.rank != 0:
            return None
        return atomic_write(self.run_dir / "last.pt", lambda f: torch.save(state, f))

    def load_state(self, ckpt: dict) -> None:
        """Continue from a checkpoint of the same configuration (model, optimiser, schedule, RNG, counters)."""
        self.model.load_state_dict(ckpt["model"])
        self.optimizer.load_state_dict(ckpt["optimizer"])
        self.scheduler.load_state_dict(ckpt["scheduler"])
        self.step, self.examples, self.wall_s = int(ckpt["step"]), int(ckpt["examples"]), float(ckpt["wall_s"])
        apply_optim_config(self.optimizer, self.scheduler, self.cfg, self.step)  # --set optim.lr/weight_decay apply
        self.cpu_s, self.cpu_untracked_wall_s = cpu_time(ckpt)
        rng = ckpt["rng"]
        if len(rng) != self.world:
            raise GGIKError(
                f"checkpoint was written by {len(rng)} processes, resuming with {self.world}: not an exact resume"
            )
        torch.set_rng_state(rng[self.rank])
        if self.device.type == "cuda" and ckpt.get("rng_cuda") is not None and self.world == 1:
            torch.cuda.set_rng_state(ckpt["rng_cuda"], self.device)  # the model's noise on the GPU
        self.init_source = ckpt.get("init_from")
        self.trained_before = recorded_training_set(ckpt)

    def init_from(self, path: str | Path, partial: bool = False) -> dict:
        """Start this new run from the model weights of checkpoint ``path`` (full or weights-only).

        Only the weights are taken: optimiser, schedule, step and example counts stay fresh. The model
        config of this trainer must equal the checkpoint's (:func:`config_for_init` builds one that does), unless
        ``partial``: then the architecture may differ and whatever fits is taken (:func:`transfer_weights`; the
        record's ``transfer`` counts copied, widened, fresh and dropped tensors;
        :func:`ggik.training.fine_tune.load_initial_weights`). Records the source (path, its step and examples) in
        ``self.init_source``, in every checkpoint of this run (``init_from``) and as a ``kind`` = "init" metrics
        record. Returns that record.
        """
        if self.step != 0:
            raise GGIKError(f"init_from starts a new run, but this trainer is at step {self.step}")
        self.init_source, self.trained_before = load_initial_weights(self.model, path, partial)
        self.metrics.log({"kind": "init", "step": 0, "examples": 0, "init_from": self.init_source})
        return self.init_source

    @classmethod
    def resume(cls, run_dir: str | Path, overrides: dict | None = None, **kwargs) -> Trainer:
        """A trainer that continues ``run_dir/last.pt`` (``overrides`` may change e.g. ``steps``)."""
        ckpt = load_checkpoint(Path(run_dir) / "last.pt")
        if ckpt["format"] != CHECKPOINT_FORMAT:
            raise GGIKError(
                f"{Path(run_dir) / 'last.pt'} is a weights-only export ({ckpt['format']}: no optimiser, "
                "scheduler or RNG state) and cannot be resumed; resume from the run's own last.pt"
            )
        data = merge(ckpt["config"], overrides or {})
        if data.get("model") != ckpt["config"]["model"]:
            raise GGIKError(
                "cannot change the model architecture (or graph convention) when resuming; start a new run from the "
                "checkpoint with --init instead"
            )
        stored = ckpt.get("robot_files")  # this run's robots from files, as it began
        trainer = cls(from_dict(TrainConfig, data), run_dir, stored_files=stored, **kwargs)
        trainer.load_state(ckpt)
        trainer.metrics.truncate(trainer.step)
        return trainer

    # ----- one step
    def _autocast(self):
        return torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=self._bf16)

    def _train_step_tensors(self) -> dict[str, torch.Tensor]:
        """One optimiser step (on a CPU in passes of ``cpu_micro_batch`` examples unless ``sync_free``); the step's
        statistics as 0-d tensors on the training device. Not ``sync_free``, each pass's loss is checked before its
        backward; ``sync_free``, the step never waits for the device and the first step with a non-finite loss is
        recorded there and reported at the next log or checkpoint step; the run then stops without writing a
        checkpoint, so ``last.pt`` stays the last periodic one, from before the bad step."""
        cfg = self.cfg
        batch = self.data.examples(self.step, self.rank, self.device).to(self.device, torch.float32)
        net = next(m for m in (self.ddp, self._compiled, self.model) if m is not None)  # no truthiness: len()
        self.model.train()
        self.optimizer.zero_grad(set_to_none=True)
        micro = cfg.cpu_micro_batch if self.device.type == "cpu" and not self.sync_free else 0
        parts = micro_batches(batch, micro)
        stats: dict[str, torch.Tensor] = {}
        for k, (part, share) in enumerate(parts):
            last = k == len(parts) - 1  # DDP averages the gradients across processes once, after the last pass
            with self.ddp.no_sync() if self.ddp is not None and not last else contextlib.nullcontext():
                with self._autocast(), fixed_size_steps(self.sync_free):
                    out = net(part, kl_samples=cfg.loss.kl_samples, prior_samples=cfg.loss.prior_gain > 0)
                part_stats = step_objective(out, self.step, cfg.loss)
                self._nonfinite.check_pass(self.step, part_stats)
                (part_stats["loss"] * share).backward()
            for name, v in part_stats.items():
                stats[name] = v.detach() * share + stats.get(name, 0.0)
        grad_norm = torch.nn.utils.clip_grad_norm_(
            self.model.parameters(), cfg.optim.grad_clip if cfg.optim.grad_clip > 0 else float("inf")
        )
        self._nonfinite.record(self.step, stats["loss"])
        self.optimizer.step()
        self.scheduler.step()
        self.step += 1
        self.examples += batch.batch_size * self.world
        return {**stats, "grad_norm": grad_norm}

    def _check_finite(self, stats: dict) -> None:
        """``sync_free``: raise (one host sync) if a step had a non-finite loss (:class:`NonFiniteWatch`)."""
        self._nonfinite.check(stats)

    def train_step(self) -> dict:  # one optimiser step; its statistics as floats (one host sync)
        step, lr = self.step, self.optimizer.param_groups[0]["lr"]
        stats = self._train_step_tensors()
        self._check_finite(stats)
        return self._record(stats, lr, step)

    def _record(self, stats: dict, lr: float, step: int) -> dict:
        """The statistics of the step that began at ``step`` with learning rate ``lr``, as floats."""
        out = {k: float(v) for k, v in stats.items()}
        out.update(beta=beta_at(step, self.cfg.loss), lr=lr)
        if self.cfg.loss.rec_gain_final > 0:
            out["rec_gain"] = rec_gain_at(step, self.cfg.loss)
        return out

    # ----- validation
    def validation_set(self) -> ProblemSet:
        """The run's validation problems (:func:`validation_problems`), in RUN_DIR/:func:`validation_problems_file`."""
        if self._val_set is None:
            path = self.run_dir / validation_problems_file(self.cfg)
            if path.is_file():
                self._val_set = ProblemSet.load(path)
            else:
                self._val_set = validation_problems(self.cfg, [tr.robot for tr in self.data.robots])
                _ = self._val_set.save(path) if self.rank == 0 else None
        return self._val_set

    def validate(self) -> dict:
        """:func:`ggik.training.validation.validate` of the model on :meth:`validation_set`."""
        if self._val_groups is None:
            self._val_groups = validation_groups(self.validation_set(), self.cfg.model.graph)
        return validate(self.model, self._val_groups, self.cfg, self.device)

    # ----- the loop
    def train(self, max_minutes: float | None = None, max_cpu_minutes: float | None = None) -> dict:
        """Run until ``cfg.steps``, ``max_minutes`` of wall time (this call), ``max_cpu_minutes`` of the run's
        CPU time (:attr:`cpu_s`, counted over all sittings: a resumed run stops at the same budget), or
        SIGTERM/SIGINT; checkpoint at exit.

        Returns the last training record.
        """
        from tqdm import tqdm

        cfg = self.cfg
        if self.rank == 0:
            self.run_dir.mkdir(parents=True, exist_ok=True)
            import yaml

            (self.run_dir / "config.yaml").write_text(yaml.safe_dump(to_dict(cfg), sort_keys=False))
        self.metrics.start(to_dict(cfg))
        deadline = None if max_minutes is None else time.monotonic() + 60.0 * max_minutes
        cpu_budget = None if max_cpu_minutes is None else 60.0 * max_cpu_minutes
        self._stop_requested = False
        previous = install_stop_handlers(self._request_stop)
        bar = tqdm(total=cfg.steps, initial=self.step, disable=not self.progress, unit="step", dynamic_ncols=True)
        window_t, window_ex, last = 0.0, 0, {}
        saved = True
        try:
            while self.step < cfg.steps and (cpu_budget is None or self.cpu_s < cpu_budget):
                t0, c0 = time.perf_counter(), time.process_time()
                step, lr = self.step, self.optimizer.param_groups[0]["lr"]
                tensors = self._train_step_tensors()
                logging = self.step % cfg.log_every == 0 or self.step == cfg.steps
                if logging:  # the only host sync of a step on CUDA
                    self._check_finite(tensors)
                    stats = self._record(tensors, lr, step)
                dt = time.perf_counter() - t0
                self.cpu_s += time.process_time() - c0
                self.wall_s += dt
                window_t += dt
                window_ex += cfg.data.batch_size * self.world
                bar.update(1)
                if logging:
                    last = {"kind": "train", "step": self.step, "examples": self.examples, **stats,
                            "examples_per_s": window_ex / window_t, "wall_s": self.wall_s, "cpu_s": self.cpu_s,
                            "device": self.device.type}  # fmt: skip  # a run's budget per device: wall_s, cpu_s
                    self.metrics.log(last)
                    bar.set_postfix(
                        loss=f"{stats['loss']:.3g}", kl=f"{stats['kl']:.3g}", ex_s=f"{last['examples_per_s']:.0f}"
                    )
                    window_t, window_ex = 0.0, 0
                if cfg.val.every and self.step % cfg.val.every == 0:
                    t1, c1 = time.perf_counter(), time.process_time()
                    if self.rank == 0:
                        rec = {
                            "kind": "val",
                            "step": self.step,
                            "examples": self.examples,
                            "wall_s": self.wall_s,
                            **self.validate(),
                        }
                        rec["val_s"] = time.perf_counter() - t1
                        self.cpu_s += time.process_time() - c1
                        self.metrics.log(rec)
                        bar.write(f"step {self.step}: val success {success_summary(rec)}")
                    if self.world > 1:
                        dist.barrier()
                if self.step % cfg.checkpoint_every == 0:
                    self._check_finite(tensors)  # never a checkpoint after a bad step
                    self.save()
                if self._stop_now(deadline):
                    break
        except NonFiniteLoss:
            if self.sync_free:  # the bad step (and any after it) was taken: keep last.pt as it is
                saved = False
            raise
        finally:
            bar.close()
            restore_handlers(previous)
            if saved:
                self.save()
            self.metrics.finish()
        return last

    def close(self) -> None:
        """Tear down the process group this trainer created (DDP): the DDP wrapper (which holds the group's last work)
        freed first, then after every rank got here (else gloo's threads can abort a rank at exit). Idempotent."""
        if self._owns_process_group and dist.is_initialized():
            self.ddp = None
            gc.collect()
            dist.barrier()
            dist.destroy_process_group()
        self._owns_process_group = False

    def _request_stop(self) -> None:
        self._stop_requested = True

    def _stop_now(self, deadline: float | None) -> bool:
        """True when the time budget is spent or a stop signal arrived (agreed by all ranks under DDP)."""
        late = deadline is not None and time.monotonic() > deadline
        stop = torch.tensor(float(late or self._stop_requested))
        if self.world > 1:
            dist.all_reduce(stop, op=dist.ReduceOp.MAX)  # all ranks stop at the same step
        return bool(stop.item())
