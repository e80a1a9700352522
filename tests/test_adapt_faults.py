"""``ggik adapt``'s faults and the files it leaves: a non-finite step keeps the run's last finite state and still
finishes the model and its report; ``--out`` never writes over the base model or a model file the run did not make;
damaged or unreadable inputs are GGIKErrors naming the file; a run of another ggik version is named as such. Every
test checks the files on disk afterwards. The tiny model and the tick clock of ``test_adapt``."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import replace
from pathlib import Path

import pytest
import test_adapt
import torch
from test_adapt import QUICK, TickClock

import ggik.training.adapt as adapt_module
import ggik.training.trainer as trainer_module
from ggik.checkpoint import read_checkpoint
from ggik.cli import main as cli_main
from ggik.errors import GGIKError
from ggik.kinematics.robot_files import RobotFile
from ggik.training.adapt import STATE_FILE, adapt

NAN = float("nan")
clock = test_adapt.clock  # the fixtures of test_adapt: its tick clock (autouse) and the arm file
arm_file = test_adapt.arm_file


@pytest.fixture
def base(tiny_ckpt, tmp_path) -> Path:
    """A copy of the tiny model, which tests may try to write over."""
    path = tmp_path / "base.pt"
    path.write_bytes(Path(tiny_ckpt).read_bytes())
    return path


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def finite(tensors) -> bool:
    """Whether every floating-point tensor of a (nested) state dict is finite."""
    if isinstance(tensors, torch.Tensor):
        return not tensors.is_floating_point() or bool(torch.isfinite(tensors).all())
    if isinstance(tensors, dict):
        return all(finite(v) for v in tensors.values())
    if isinstance(tensors, (list, tuple)):
        return all(finite(v) for v in tensors)
    return True


def no_partial_files(*folders: Path) -> bool:
    """No temporary file of an atomic write is left in ``folders``."""
    return not [p for folder in folders for p in folder.glob(".*.tmp")]


def plant(monkeypatch, what: str, at: int) -> None:
    """A fault at step ``at``: a NaN loss, a finite loss whose gradient is NaN (d sqrt(0 x)/dx = inf x 0), or NaN in
    the weights after the step (through the anchor's pull, which follows every step)."""
    if what == "weights":

        def pull(a, lr):
            if a.trainer.step == at + 1:
                with torch.no_grad():
                    next(a.trainer.model.parameters()).fill_(NAN)

        monkeypatch.setattr(adapt_module, "_pull_to_base", pull)
        return
    real = trainer_module.step_objective

    def objective(out, step, cfg):
        stats = real(out, step, cfg)
        if step == at:
            loss = stats["loss"]
            stats["loss"] = loss * NAN if what == "loss" else loss + torch.sqrt(loss * 0)
        return stats

    monkeypatch.setattr(trainer_module, "step_objective", objective)


@pytest.mark.parametrize(
    ("what", "kept", "message"),
    [
        # the loss checked before the backward pass, the gradient before the optimiser step: the state before the
        # bad step is finite and kept (step 3); NaN weights: the last state saved, at the measurement of step 2
        ("loss", 3, "non-finite loss at step 3"),
        ("gradient", 3, "non-finite gradients of a finite loss at step 3"),
        ("weights", 2, "non-finite weights or optimiser state at step 4"),
    ],
)
def test_a_non_finite_step_keeps_the_last_finite_state_and_finishes_the_model(
    what, kept, message, base, arm_file, tmp_path, monkeypatch
):
    """Steps 0 and 1, a measurement (saved), steps 2 and 3, a measurement at step 4: the fault planted at step 3."""
    out, run = tmp_path / "m.pt", tmp_path / "run"
    before = sha(base)
    cfg = replace(QUICK, minutes=0.05, anchor=1e-6)  # the anchor: its pull follows every step (the weights' fault)
    plant(monkeypatch, what, at=3)
    result = adapt(RobotFile(str(arm_file)), out, cfg, base, run, progress=False)
    assert result.fault is not None and message in result.fault
    assert f"keeps the last finite state (step {kept})" in result.fault
    assert result.steps == kept
    last = torch.load(run / "last.pt", weights_only=True)
    assert last["step"] == kept and finite(last["model"]) and finite(last["optimizer"])
    state = json.loads((run / STATE_FILE).read_text())
    assert state["fault"] == result.fault and state["curve"][-1]["step"] <= kept
    assert state["elapsed_s"] == result.elapsed_s and math.isfinite(state["test_success"])  # the report ran
    model = read_checkpoint(out)
    assert finite(model["model"]) and model["adaptation"]["test_success"] == result.test_success
    assert sha(base) == before and no_partial_files(run, tmp_path)
    monkeypatch.undo()  # the fault gone: the next sitting goes on from the kept state, to its budget
    monkeypatch.setattr(adapt_module, "_clock", TickClock())
    more = adapt(RobotFile(str(arm_file)), out, replace(cfg, minutes=0.07), base, run, progress=False)
    assert more.fault is None and more.steps > kept and more.curve[: len(state["curve"])] == state["curve"]
    assert "fault" not in json.loads((run / STATE_FILE).read_text())


def test_a_run_left_non_finite_by_an_earlier_ggik_is_named_and_still_reported(base, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    ckpt = torch.load(run / "last.pt", weights_only=True)  # what the old finally saved after a NaN step
    next(iter(ckpt["model"].values())).fill_(NAN)
    torch.save(ckpt, run / "last.pt")
    before = sha(run / "last.pt")
    result = adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=0.06), base, run, progress=False)
    assert result.fault is not None and "holds non-finite weights (step 6)" in result.fault
    assert result.steps == 6 and sha(run / "last.pt") == before  # nothing trained, nothing saved over it
    assert finite(read_checkpoint(out)["model"]) and math.isfinite(result.test_success)


def test_the_command_line_says_what_happened_and_exits_1(base, arm_file, tmp_path, monkeypatch, capsys):
    plant(monkeypatch, "gradient", at=1)
    out = tmp_path / "m.pt"
    argv = ["adapt", "--urdf", str(arm_file), "--minutes", "0.02", "--out", str(out), "--ckpt", str(base)]
    assert cli_main([*argv, "--no-progress", "--threads", "1"]) == 1
    captured = capsys.readouterr()
    assert "non-finite gradients of a finite loss at step 1" in captured.err
    assert "held-out raw success" in captured.out and finite(read_checkpoint(out)["model"])


def test_the_python_api_warns_and_returns_the_best_model(base, arm_file, tmp_path, monkeypatch):
    from ggik import GGIK

    plant(monkeypatch, "gradient", at=1)
    out = tmp_path / "m.pt"
    with pytest.warns(RuntimeWarning, match="non-finite gradients of a finite loss at step 1"):
        solver = GGIK.adapt(arm_file, 0.02, out=out, base=base, config=QUICK, progress=False)
    assert finite(solver.model.state_dict()) and finite(read_checkpoint(out)["model"])


@pytest.mark.parametrize("how", ["same path", "symbolic link", "hard link", "relative path"])
def test_out_is_never_the_base_model(how, base, arm_file, tmp_path, monkeypatch):
    if how == "same path":
        out = base
    elif how == "symbolic link":
        out = tmp_path / "link.pt"
        out.symlink_to(base)
    elif how == "hard link":
        out = tmp_path / "hard.pt"
        os.link(base, out)
    else:
        monkeypatch.chdir(tmp_path)
        out = Path("sub/../base.pt")
        (tmp_path / "sub").mkdir()
    before = sha(base)
    for force in (False, True):  # --force does not lift it
        with pytest.raises(GGIKError, match=r"is the base model .*would write over the model it starts from"):
            adapt(RobotFile(str(arm_file)), out, QUICK, base, tmp_path / "run", progress=False, force=force)
    assert sha(base) == before and not (tmp_path / "run").exists()


def test_out_is_never_the_arm_file_or_a_file_of_the_run(base, arm_file, tmp_path):
    before = sha(arm_file)
    with pytest.raises(GGIKError, match="is the arm's URDF file"):
        adapt(RobotFile(str(arm_file)), arm_file, QUICK, base, tmp_path / "run", progress=False, force=True)
    assert sha(arm_file) == before
    run = tmp_path / "run"
    adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", QUICK, base, run, progress=False)
    last = sha(run / "last.pt")
    with pytest.raises(GGIKError, match="is a file of the run folder"):
        adapt(RobotFile(str(arm_file)), run / "last.pt", QUICK, base, run, progress=False, force=True)
    assert sha(run / "last.pt") == last


def test_an_existing_out_the_run_did_not_write_is_kept_unless_forced(base, arm_file, tmp_path):
    out = tmp_path / "m.pt"
    out.write_bytes(b"the user's own model")
    with pytest.raises(GGIKError, match=r"--out .*m.pt exists and .*holds no run that wrote it.*--force"):
        adapt(RobotFile(str(arm_file)), out, QUICK, base, tmp_path / "run", progress=False)
    assert out.read_bytes() == b"the user's own model" and not (tmp_path / "run").exists()
    first = adapt(RobotFile(str(arm_file)), out, QUICK, base, tmp_path / "run", progress=False, force=True)
    assert read_checkpoint(out)["adaptation"]["test_success"] == first.test_success
    # the run's own out is continued; another run's, or a file put in its place, is not
    longer = replace(QUICK, minutes=0.06)
    assert adapt(RobotFile(str(arm_file)), out, longer, base, tmp_path / "run", progress=False).steps > first.steps
    other = tmp_path / "other.pt"
    adapt(RobotFile(str(arm_file)), other, QUICK, base, tmp_path / "run2", progress=False)
    mine = sha(out)
    with pytest.raises(GGIKError, match="the run in .*run2 did not write it"):
        adapt(RobotFile(str(arm_file)), out, longer, base, tmp_path / "run2", progress=False)
    assert sha(out) == mine


def test_a_run_from_before_run_ids_knows_its_own_out(base, arm_file, tmp_path):
    """A state and model file without ``run`` (written before run ids): the out is the run's when its arm file, base
    model and base success are the run's; then it carries the run's new id."""
    out, run = tmp_path / "m.pt", tmp_path / "run"
    adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    state = json.loads((run / STATE_FILE).read_text())
    del state["run"]
    (run / STATE_FILE).write_text(json.dumps(state))
    payload = torch.load(out, weights_only=True)
    del payload["adaptation"]["run"]
    torch.save({**payload, "adaptation": {**payload["adaptation"], "base_success": -1.0}}, out)
    with pytest.raises(GGIKError, match="did not write it"):  # another run's model
        adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=0.06), base, run, progress=False)
    torch.save(payload, out)
    adapt(RobotFile(str(arm_file)), out, replace(QUICK, minutes=0.06), base, run, progress=False)
    run_id = json.loads((run / STATE_FILE).read_text())["run"]
    assert read_checkpoint(out)["adaptation"]["run"] == run_id


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b'{"config": {', "is damaged (not JSON"),
        (b"\xff\xfe[1]", "is damaged (not JSON"),
        (b"[1, 2]", "is damaged (a JSON list"),
    ],
)
def test_a_damaged_state_is_named(content, match, base, arm_file, tmp_path):
    out, run = tmp_path / "m.pt", tmp_path / "run"
    adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    (run / STATE_FILE).write_bytes(content)
    files = {p.name: sha(p) for p in (out, run / "last.pt", run / "best.pt", run / STATE_FILE)}
    with pytest.raises(GGIKError, match=re.escape(f"adaptation state {run / STATE_FILE} {match}")):
        adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    assert {p.name: sha(p) for p in (out, run / "last.pt", run / "best.pt", run / STATE_FILE)} == files


def test_an_unreadable_base_model_is_named(base, arm_file, tmp_path, monkeypatch):
    real = Path.read_bytes

    def read_bytes(path):  # chmod 000 does not stop root: the OSError a reader without permission gets
        if Path(path) == base:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(
        GGIKError, match=re.escape(f"the base model {base.resolve()} cannot be read: Permission denied")
    ):
        adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", QUICK, base, progress=False)
    assert not (tmp_path / "m.pt").exists() and not (tmp_path / "m.pt.adapt").exists()


def test_a_run_folder_that_is_a_file_is_named(base, arm_file, tmp_path):
    run = tmp_path / "run"
    run.write_text("notes")
    with pytest.raises(GGIKError, match=re.escape(f"the run folder (--run-dir) {run} is a file")):
        adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", QUICK, base, run, progress=False)
    assert run.read_text() == "notes" and not (tmp_path / "m.pt").exists()
    with pytest.raises(GGIKError, match=re.escape(f"the run folder (--run-dir) {run / 'sub'} cannot be made")):
        adapt(RobotFile(str(arm_file)), tmp_path / "m.pt", QUICK, base, run / "sub", progress=False)


def test_a_run_of_an_older_ggik_is_named_as_such(base, arm_file, tmp_path):
    """The state of the first ggik adapt (no arm or base sha256, a recipe without test_problems): refused as a run of
    another version, not as another arm file."""
    out, run = tmp_path / "m.pt", tmp_path / "run"
    adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    state = json.loads((run / STATE_FILE).read_text())
    for key in ("arm_sha256", "base_sha256", "base_test_success", "run"):
        state.pop(key, None)
    for key in ("test_problems", "retain_margin"):
        del state["config"][key]
    (run / STATE_FILE).write_text(json.dumps(state))
    files = {p.name: sha(p) for p in (out, run / "last.pt", run / STATE_FILE)}
    with pytest.raises(GGIKError, match="written by another version of ggik") as caught:
        adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    assert "lacks arm_sha256, base_sha256, base_test_success" in str(caught.value)
    assert "another arm file" not in str(caught.value) and "another base model" not in str(caught.value)
    state.update(  # only the recipe's fields differ
        arm_sha256=sha(arm_file), base_sha256=sha(base), base_test_success=0.0
    )
    (run / STATE_FILE).write_text(json.dumps(state))
    with pytest.raises(GGIKError, match="its recipe lacks retain_margin, test_problems"):
        adapt(RobotFile(str(arm_file)), out, QUICK, base, run, progress=False)
    assert {p.name: sha(p) for p in (out, run / "last.pt")} == {k: files[k] for k in (out.name, "last.pt")}
