"""A training run's metrics: ``RUN_DIR/metrics.jsonl`` (one JSON object per line, written by rank 0) and, if asked,
Weights & Biases (imported only when enabled)."""

from __future__ import annotations

import json
from pathlib import Path

from ggik.errors import GGIKError
from ggik.fileio import atomic_write

__all__ = ["MetricsLog", "WANDB_MODES"]

WANDB_MODES = ("disabled", "offline", "online")


class MetricsLog:
    """Appends records to ``run_dir/metrics.jsonl`` (rank 0 only) and mirrors them to wandb once :meth:`start` ran.

    Args:
        run_dir: the run folder.
        rank: the process rank; other ranks write nothing.
        wandb: one of :data:`WANDB_MODES` (checked by :meth:`start`).
    """

    def __init__(self, run_dir: Path, rank: int, wandb: str = "disabled") -> None:
        self.run_dir, self.rank, self.wandb_mode = Path(run_dir), rank, wandb
        self._wandb = None

    @property
    def path(self) -> Path:
        return self.run_dir / "metrics.jsonl"

    def log(self, record: dict) -> None:
        """Append ``record`` (it must hold ``step``)."""
        if self.rank != 0:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        if self._wandb is not None:
            self._wandb.log(record, step=record["step"])

    def truncate(self, step: int) -> None:
        """Drop records written after ``step`` (a crash between checkpoints), so that none repeat on resume."""
        if self.rank != 0 or not self.path.is_file():
            return
        lines = self.path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if line.strip() and json.loads(line).get("step", 0) <= step]
        if len(kept) != len(lines):
            atomic_write(self.path, lambda f: f.write("".join(kept).encode("utf-8")))

    def start(self, config: dict) -> None:
        """Start wandb for this run (rank 0, mode not "disabled"); :class:`GGIKError` for an unknown mode or a
        missing wandb."""
        if self.wandb_mode == "disabled" or self.rank != 0:
            return
        if self.wandb_mode not in WANDB_MODES:
            raise GGIKError(f"--wandb must be disabled, offline or online, got {self.wandb_mode!r}")
        try:
            import wandb
        except ImportError:
            raise GGIKError("wandb logging asked for but wandb is not installed: pip install 'ggik[wandb]'") from None
        self._wandb = wandb.init(
            project="ggik", dir=str(self.run_dir), mode=self.wandb_mode, config=config, resume="allow"
        )

    def finish(self) -> None:
        if self._wandb is not None:
            self._wandb.finish()
            self._wandb = None
