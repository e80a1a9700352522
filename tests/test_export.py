"""ggik.export (weights-only checkpoints, ``ggik export``), the shipped model (``GGIK.pretrained()``) and its packaging.

Export tests use a tiny model trained for 0 steps (initial weights): they check the file, not the model.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest
import tomllib
import torch

import ggik.checkpoint
from ggik import GGIK, GGIKError, Robot, RobotGraph, SolveConfig, __version__
from ggik.checkpoint import (
    CHECKPOINT_FORMAT,
    MAX_EXPORT_BYTES,
    WEIGHTS_FORMAT,
    export_checkpoint,
    load_checkpoint,
    load_model,
)
from ggik.cli import main
from ggik.graph.batch import GraphBatch
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import apply_overrides, from_dict, load_yaml

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "train" / "configs" / "tiny.yaml"
WEIGHTS_ONLY_KEYS = {
    "format",
    "ggik_version",
    "source_ggik_version",
    "torch_version",
    "config",
    "model",
    "training_robots",
    "step",
    "examples",
    "wall_s",
    "world_size",
    "cpu_s",
    "cpu_untracked_wall_s",
}


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    """A tiny run trained for 0 steps: RUN_DIR with last.pt (read-only)."""
    cfg = from_dict(TrainConfig, apply_overrides(load_yaml(TINY), ["steps=0"]))
    run = tmp_path_factory.mktemp("tiny0") / "run"
    Trainer(cfg, run, progress=False).train()
    return run


@pytest.fixture(scope="module")
def exported(run, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export") / "weights.pt"
    export_checkpoint(run / "last.pt", out)
    return out


def test_export_holds_weights_and_provenance_only(run, exported):
    full, light = load_checkpoint(run / "last.pt"), load_checkpoint(exported)
    assert full["format"] == CHECKPOINT_FORMAT and light["format"] == WEIGHTS_FORMAT
    assert set(light) == WEIGHTS_ONLY_KEYS  # no optimizer, scheduler or rng; no init_from unless the run had one
    for key in (
        "config",
        "training_robots",
        "step",
        "examples",
        "wall_s",
        "world_size",
        "torch_version",
        "cpu_s",
        "cpu_untracked_wall_s",
    ):
        assert light[key] == full[key], key
    assert light["ggik_version"] == __version__ and light["source_ggik_version"] == full["ggik_version"]
    assert light["model"].keys() == full["model"].keys()
    for k, v in light["model"].items():
        assert torch.equal(v, full["model"][k].to(v.dtype)), k
        assert v.dtype == torch.float32 or not v.is_floating_point(), k
    assert exported.stat().st_size < (run / "last.pt").stat().st_size
    assert not [p for p in exported.parent.iterdir() if p.name.endswith(".tmp")]


def test_export_gives_the_same_model(run, exported):
    (m_full, _), (m_light, ckpt) = load_model(run / "last.pt"), load_model(exported)
    assert not m_light.training and ckpt["format"] == WEIGHTS_FORMAT
    panda = Robot.from_name("panda")
    graph = RobotGraph.from_robot(panda)
    q = panda.sample_q(3, torch.Generator().manual_seed(1))
    batch = GraphBatch.from_graph(graph, q=q).to(dtype=torch.float32)
    with torch.no_grad():
        a = m_full.sample(batch, 4, generator=torch.Generator().manual_seed(2))
        b = m_light.sample(batch, 4, generator=torch.Generator().manual_seed(2))
    assert torch.equal(a, b)
    solver = GGIK.load(exported)
    res = solver.solve(panda, panda.fk(q), SolveConfig(samples=4), generator=torch.Generator().manual_seed(3))
    ref = GGIK.load(run / "last.pt").solve(
        panda, panda.fk(q), SolveConfig(samples=4), generator=torch.Generator().manual_seed(3)
    )
    assert torch.equal(res.q, ref.q)


def test_cpu_time_and_init_source_are_carried_over(run, tmp_path):
    ckpt = load_checkpoint(run / "last.pt")
    ckpt.update(cpu_s=4500.0, cpu_untracked_wall_s=1516.0, init_from={"path": "a.pt", "step": 3, "examples": 384})
    torch.save(ckpt, tmp_path / "with_hours.pt")
    payload = export_checkpoint(tmp_path / "with_hours.pt", tmp_path / "w.pt")
    saved = load_checkpoint(tmp_path / "w.pt")
    for key in ("cpu_s", "cpu_untracked_wall_s", "init_from"):
        assert payload[key] == saved[key] == ckpt[key], key


def test_exporting_an_export_is_the_same_file_content(exported, tmp_path):
    export_checkpoint(exported, tmp_path / "again.pt")
    a, b = load_checkpoint(exported), load_checkpoint(tmp_path / "again.pt")
    assert a.keys() == b.keys() and all(torch.equal(v, b["model"][k]) for k, v in a["model"].items())
    assert {k: v for k, v in a.items() if k != "model"} == {k: v for k, v in b.items() if k != "model"}


def test_re_export_keeps_the_training_runs_ggik_version(run, tmp_path):
    ckpt = load_checkpoint(run / "last.pt")
    ckpt["ggik_version"] = "0.0.1-training-run"
    torch.save(ckpt, tmp_path / "old.pt")
    first = export_checkpoint(tmp_path / "old.pt", tmp_path / "first.pt")
    second = export_checkpoint(tmp_path / "first.pt", tmp_path / "second.pt")
    assert first["source_ggik_version"] == second["source_ggik_version"] == "0.0.1-training-run"
    assert first["ggik_version"] == second["ggik_version"] == __version__


def test_export_over_the_size_limit_writes_nothing(run, tmp_path):
    assert MAX_EXPORT_BYTES == 20 * 2**20
    with pytest.raises(GGIKError, match=r"over the .* MB limit of a shipped model .* nothing was written"):
        export_checkpoint(run / "last.pt", tmp_path / "big.pt", max_bytes=1000)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kind", ["truncated", "garbage"])
def test_corrupt_weights_file_is_a_clear_error(kind, exported, tmp_path, capsys):
    data = exported.read_bytes()
    path = tmp_path / "bad.pt"
    path.write_bytes(data[: len(data) // 2] if kind == "truncated" else b"not a checkpoint at all")
    for load in (load_checkpoint, load_model, GGIK.load):
        with pytest.raises(GGIKError, match=r"is not a readable ggik checkpoint \(corrupt or truncated\?\)"):
            load(path)
    with pytest.raises(GGIKError, match="corrupt or truncated"):
        export_checkpoint(path, tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()
    assert main(["export", str(path), str(tmp_path / "out.pt")]) == 2
    assert "ggik: error:" in capsys.readouterr().err


def test_export_of_a_missing_or_foreign_file(tmp_path, capsys):
    with pytest.raises(FileNotFoundError, match="checkpoint not found"):
        export_checkpoint(tmp_path / "missing.pt", tmp_path / "out.pt")
    torch.save({"format": "ggik-problems/1"}, tmp_path / "problems.pt")
    with pytest.raises(
        GGIKError,
        match=r"incompatible checkpoint format 'ggik-problems/1'; .* reads 'ggik-checkpoint/1' or 'ggik-weights/1'",
    ):
        export_checkpoint(tmp_path / "problems.pt", tmp_path / "out.pt")
    assert main(["export", str(tmp_path / "missing.pt"), str(tmp_path / "out.pt")]) == 2
    assert "not found" in capsys.readouterr().err


def test_resuming_from_a_weights_only_file_is_a_clear_error(exported, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / "last.pt").write_bytes(exported.read_bytes())
    with pytest.raises(GGIKError, match=r"is a weights-only export .* cannot be resumed"):
        Trainer.resume(run, progress=False)
    assert main(["train", "--resume", str(run), "--no-progress"]) == 2
    assert "weights-only export" in capsys.readouterr().err


def test_cli_export_and_info(run, tmp_path, capsys):
    out = tmp_path / "sub" / "w.pt"
    assert main(["export", str(run / "last.pt"), str(out)]) == 0
    text = capsys.readouterr().out
    assert f"wrote {out}" in text and "weights only (ggik-weights/1)" in text and "step 0" in text
    assert main(["info", str(out)]) == 0
    assert "format ggik-weights/1" in capsys.readouterr().out


# ---------------------------------------------------------------------------------------------- the shipped model
def test_pretrained_loads_the_shipped_model_and_solves_panda():
    ref = resources.files("ggik").joinpath("weights", ggik.solver.PRETRAINED_CHECKPOINT)
    assert ref.is_file(), "ggik/weights/ggik_default.pt is not shipped"
    with resources.as_file(ref) as path:
        assert path.stat().st_size <= MAX_EXPORT_BYTES
    solver = GGIK.pretrained()
    assert solver.checkpoint["format"] == WEIGHTS_FORMAT and not solver.model.training
    assert "panda" in solver.training_robots["named"]
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(2, torch.Generator().manual_seed(0)))
    res = solver.solve(panda, T, SolveConfig(samples=8, refine="lm"), generator=torch.Generator().manual_seed(0))
    assert res.q.shape == (2, 8, 7) and torch.isfinite(res.q).all()
    assert bool(res.success[:, 0].all()), "LM from 8 samples of the shipped model should solve both goals"


def test_pretrained_without_the_file_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(ggik.checkpoint, "PRETRAINED_CHECKPOINT", "no_such_model.pt")
    with pytest.raises(GGIKError, match=r"no pretrained model is shipped with this ggik version .*GGIK\.load"):
        GGIK.pretrained()


def test_the_shipped_model_is_package_data():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "*.pt" in cfg["package-data"]["ggik.weights"]  # a package in setup.py: no "would be ignored" warning
    assert (REPO / "ggik" / "weights" / ggik.checkpoint.PRETRAINED_CHECKPOINT).is_file()


def test_the_wheel_holds_every_subpackage_the_urdfs_and_the_weights(tmp_path):
    """Packages are discovered (setup.py): a new subpackage of ggik/ cannot be left out of the wheel."""
    import subprocess
    import sys
    import zipfile

    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-v",  # the build backend's own output: its warnings too
            "-w",
            str(tmp_path),
            str(REPO),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert "would be ignored" not in build.stdout + build.stderr  # setuptools' warning of data outside a package
    (wheel,) = tmp_path.glob("ggik-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {str(p.relative_to(REPO)) for p in (REPO / "ggik").rglob("__init__.py")}
    assert expected and expected <= names, sorted(expected - names)
    assert "ggik/weights/" + ggik.checkpoint.PRETRAINED_CHECKPOINT in names
    assert {"ggik/urdfs/panda.urdf", "ggik/urdfs/robots.yaml"} <= names
