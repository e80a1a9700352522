"""benchmarks/training_speed/batch_sweep.py: one real training step per size through the paper's config, and the
sweep's stops (step time, resident size, out of memory) from measurements given to it."""

from __future__ import annotations

import warnings

import pytest
import torch

from benchmarks.training_speed import batch_sweep


def test_sweep_trains_the_paper_config_and_writes_its_table(tmp_path, capsys):
    """Two tiny sizes, really trained: a row each with a finite loss, the model named (volume inputs) in the notes."""
    out = tmp_path / "sweep"
    argv = ["--threads", "1", "--batches", "4", "2", "--steps", "1", "--warmup", "0", "--out", str(out)]
    assert batch_sweep.main(argv) == 0
    text = (tmp_path / "sweep.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| 2 |") or line.startswith("| 4 |")]
    assert len(rows) == 2 and text.index("| 2 |") < text.index("| 4 |")  # ascending
    for row in rows:
        loss = float(row.strip("|").split("|")[-2])
        assert torch.isfinite(torch.tensor(loss))
    assert '"volume_inputs": true' in text and "paper.yaml" in text and "631,988 parameters" in text
    assert "sha256 e8d7ff315194" in text  # the model file measured, in the header
    assert all(row.endswith("| n/a (CPU) |") for row in rows)  # syncs are counted on CUDA


def fake_measure(
    step_s_per_example: float, gb_per_example: float, oom_at: int | None = None, syncs: dict | None = None
):
    def measure(cfg, init, device, batch, warmup, steps):
        if oom_at is not None and batch >= oom_at:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        step_s = step_s_per_example * batch
        return {"examples_per_s": batch / step_s, "step_ms": 1e3 * step_s, "warmup_s": 0.0,
                "memory_gb": gb_per_example * batch, "loss": 1.0, "parameters": 10,
                "syncs": None if syncs is None else sum(syncs.values()), "sync_sites": syncs or {}}  # fmt: skip

    return measure


@pytest.mark.parametrize(
    "fake, options, measured, note",
    [
        (fake_measure(0.01, 1e-4), ["--max-step-s", "30"], [512, 1024, 2048], "batch 4096 and larger not run: a step "
         "would take ~41 s > --max-step-s 30"),
        (fake_measure(1e-4, 2e-3), ["--max-rss-gb", "8"], [512, 1024, 2048], "batch 4096 and larger not run: ~8.2 GB "
         "resident > --max-rss-gb 8"),
        (fake_measure(1e-4, 1e-4, oom_at=2048), [], [512, 1024], "batch 2048 and larger not run: out of memory (CUDA "
         "out of memory. Tried to allocate 2.00 GiB)"),
    ],
    ids=["step-time", "resident-size", "out-of-memory"],
)  # fmt: skip
def test_sweep_stops_before_a_size_it_cannot_afford(monkeypatch, capsys, fake, options, measured, note):
    """Sizes 512, 1024, 2048, 4096 (sorted from any order): the sweep measures the first ones and names why it stopped
    (a step of 4096 at 10 ms per example is 41 s; 2048 examples at 2 MB are 4.1 GB, so 4096 would be 8.2 GB)."""
    monkeypatch.setattr(batch_sweep, "measure", fake)
    batches = ["4096", "1024", "2048", "512"]
    assert batch_sweep.main(["--batches", *batches, "--threads", "1", *options]) == 0
    text = capsys.readouterr().out
    got = [int(line.split("|")[1]) for line in text.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert got == measured
    assert note in text


def test_the_syncs_of_a_step_are_a_column_and_their_sites_a_note(monkeypatch, capsys):
    """Where measure counted syncs (CUDA), the column holds the syncs per step and a note names where they came from,
    the most first."""
    sites = {"distance_geometry.py:151": 2.0, "trainer.py:260": 0.5}
    monkeypatch.setattr(batch_sweep, "measure", fake_measure(1e-4, 1e-4, syncs=sites))
    assert batch_sweep.main(["--batches", "512", "--threads", "1"]) == 0
    text = capsys.readouterr().out
    assert "| host syncs per step |" in text and "| 2.5 |" in text
    assert (
        "batch 512: host syncs per step by where they were called: distance_geometry.py:151 2, trainer.py:260 0.5"
        in text
    )


def test_counted_syncs_counts_the_sync_debug_modes_warnings(monkeypatch):
    """On CUDA the sync debug mode is set to "warn" inside the block and back after it; its warnings are counted by
    where they were raised (others are not); on a CPU nothing is counted."""
    with batch_sweep.counted_syncs(torch.device("cpu")) as none:
        pass
    assert none is None
    modes = []
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", modes.append)
    with batch_sweep.counted_syncs(torch.device("cuda")) as where:
        for _ in range(3):
            warnings.warn("called a synchronizing CUDA operation", stacklevel=1)
        warnings.warn("something else", stacklevel=1)
    assert modes == ["warn", 0]
    assert sum(where.values()) == 3 and all(k.startswith("test_batch_sweep.py:") for k in where)
