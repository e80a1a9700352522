"""Provenance of result tables: the code version and the model (file, sha256 prefix, step) in every header."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
import torch

from ggik.checkpoint import load_checkpoint
from ggik.cli import main
from ggik.errors import GGIKError
from ggik.evaluation.report import SHA256_PREFIX, Table, code_version, model_stamp, provenance


def test_model_stamp_names_file_hash_and_step(tiny_ckpt):
    stamp = model_stamp(tiny_ckpt)
    digest = hashlib.sha256(Path(tiny_ckpt).read_bytes()).hexdigest()[:SHA256_PREFIX]
    step = int(load_checkpoint(tiny_ckpt)["step"])
    assert stamp.startswith(str(tiny_ckpt) + " (") and f"sha256 {digest}" in stamp and f"step {step:,}" in stamp


def test_model_stamp_of_the_shipped_model():
    stamp = model_stamp(None)
    assert stamp.startswith("shipped ggik/weights/ggik_default.pt (sha256 ")
    assert re.search(r"sha256 [0-9a-f]{12}, step [\d,]+, [\d,]+ examples", stamp)


def test_model_stamp_of_a_corrupt_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(GGIKError):
        model_stamp(bad)
    torch.save({"format": "something else"}, tmp_path / "other.pt")
    with pytest.raises(GGIKError):
        model_stamp(tmp_path / "other.pt")


def test_code_version_names_the_package_version():
    assert code_version().startswith("ggik ")


def test_code_version_is_read_once_per_process(monkeypatch):
    first = code_version()
    monkeypatch.setattr("subprocess.run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("git read again")))
    assert code_version() == first  # a run's tables name the code it started with


def test_table_header_lists_command_model_code_machine_and_seed(tmp_path):
    table = Table("t", ["a", "b"])
    table.add(1, 2.5)
    md, _ = table.write(
        tmp_path / "t", command="cmd --x", seed=3, model="m.pt (sha256 0123456789ab, step 1, 2 examples)"
    )
    lines = md.read_text().splitlines()
    assert lines[2:7] == provenance("cmd --x", 3, "m.pt (sha256 0123456789ab, step 1, 2 examples)")
    assert (
        lines[2] == "Command: `cmd --x`" and lines[3].startswith("Model: m.pt") and lines[4].startswith("Code: ggik ")
    )
    assert lines[5].startswith("Machine: ") and lines[6] == "Seed: 3"
    no_model = Table("u", ["a"]).markdown("cmd")
    assert "Model:" not in no_model and "Code: ggik " in no_model and "Seed:" not in no_model


def test_ggik_eval_tables_name_their_model(tiny_ckpt, tmp_path):
    argv = [
        "eval",
        "limits",
        "--ckpt",
        str(tiny_ckpt),
        "--robots",
        "ur10",
        "-n",
        "2",
        "-s",
        "2",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    md = (tmp_path / "limits.md").read_text()
    assert f"Model: {model_stamp(tiny_ckpt)}" in md and "Code: ggik " in md
