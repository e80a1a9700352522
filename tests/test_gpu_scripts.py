"""train/gpu/paper_sitting.sh, the prepared call of a lent GPU (issue 61), runs on the CPU path (``DEVICE=cpu``: the
same phases at tiny budgets) as the device tool would run it: from a copy's root, into an ``$OUT`` of at most 8 files
(all the tool brings back), and the run it trains comes back resumable, one step further."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import torch

from ggik.checkpoint import CHECKPOINT_FORMAT, load_checkpoint
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import from_dict, load_yaml, merge

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # this environment's python3 (the script calls python3)
#: the paper's config at small widths: a run of a few steps to resume
SMALL = {
    "model": {"dim": 16, "hidden": 32, "enc_layers": 1, "dec_layers": 3},
    "data": {"batch_size": 8},
    "val": {"every": 0},
    "steps": 1000,
}
HANG_GUARD_S = 900  #: [s] not a limit on speed: a hung script fails with its output instead of stopping the suite


def test_the_paper_sitting_on_the_cpu_path_brings_the_run_back_resumable(tmp_path):
    run, out, work = tmp_path / "run", tmp_path / "out", tmp_path / "work"
    cfg = from_dict(TrainConfig, merge(load_yaml(REPO / "train/configs/paper.yaml"), SMALL))
    trainer = Trainer(cfg, run, progress=False)
    trainer.train(max_minutes=1e-6)  # one step
    assert load_checkpoint(run / "last.pt")["step"] == 1
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "DEVICE": "cpu",
        "RUN": str(run),
        "OUT": str(out),
        "WORK": str(work),
        "BATCH": "16",
        "LR": "1e-4",
        "TRAIN_SET": "checkpoint_every=7 log_every=1",
        "GGIK_URDF_LINK": "0",  # the .venv's editable install maps the robots: the checkout is left as it is
        "OMP_NUM_THREADS": "1",
    }
    done = subprocess.run(
        ["bash", str(REPO / "train/gpu/paper_sitting.sh")],
        cwd=tmp_path,  # the script runs from the repository root wherever it is called from
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    files = sorted(p.name for p in out.iterdir())
    assert files == ["config.yaml", "last.pt", "metrics.jsonl", "sitting.tar.gz"] and len(files) <= 8, files
    ckpt = load_checkpoint(out / "last.pt")
    assert ckpt["format"] == CHECKPOINT_FORMAT and ckpt["step"] == 2, "one step further"
    assert ckpt["examples"] == 8 + 16 and ckpt["config"]["data"]["batch_size"] == 16
    assert ckpt["config"]["optim"]["lr"] == 1e-4 and ckpt["optimizer"]["param_groups"][0]["initial_lr"] == 1e-4
    assert ckpt["config"]["checkpoint_every"] == 7 and ckpt["config"]["log_every"] == 1  # TRAIN_SET
    assert load_checkpoint(run / "last.pt")["step"] == 1, "the run folder itself is not touched"
    resumed = Trainer.resume(out, progress=False)
    assert resumed.step == 2 and all(torch.equal(v, ckpt["model"][k]) for k, v in resumed.model.state_dict().items())
    with tarfile.open(out / "sitting.tar.gz") as tar:
        names = {Path(n).name for n in tar.getnames()}
        assert {"sitting.log", "batch_sweep_cpu.md", "batch_sweep_cpu.csv"} <= names
        table = tar.extractfile("./batch_sweep_cpu.md").read().decode()
    assert "| 32 |" in table and "| 64 |" in table and "n/a (CPU)" in table
    assert "checks: skipped on cpu" in log and "4 files in" in log
    assert [r["step"] for r in map(json.loads, (out / "metrics.jsonl").read_text().splitlines())] == [2]
