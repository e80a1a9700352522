"""The oversampling study (benchmarks/sampling/oversample.py) and the training-step study
(benchmarks/training_speed/step_time.py): rows, files, bad options."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import REPO_ROOT

from benchmarks.sampling import oversample
from benchmarks.training_speed import step_time

pytestmark = pytest.mark.slow


def test_oversample_study_rows(tiny_ckpt, tmp_path):
    argv = ["--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "2", "-s", "2", "--oversample", "1", "3"]
    assert oversample.main(argv + ["--out", str(tmp_path / "o")]) == 0
    rows = [line for line in (tmp_path / "o.md").read_text().splitlines() if line.startswith("| ur10 |")]
    assert [r.split(" | ")[1] for r in rows] == ["1", "3"]
    with pytest.raises(SystemExit):
        oversample.main(["--oversample", "0"])


def test_step_time_study_rows(tmp_path):
    argv = ["--batch", "4", "--steps", "1", "--warmup", "0", "--bf16", "off", "--threads", "1"]
    assert step_time.main(argv + ["--micro-batches", "0", "3", "--out", str(tmp_path / "s")]) == 0
    text = (tmp_path / "s.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| stacked |") or line.startswith("| per-robot |")]
    assert len(rows) == 4 and "Command: `python -m benchmarks.training_speed.step_time" in text
    assert [r.split(" | ")[2] for r in rows] == ["one pass", "3"] * 2
    with pytest.raises(SystemExit):
        step_time.main(["--samplers", "auto"])
    with pytest.raises(SystemExit):
        step_time.main(["--micro-batches", "-1"])


def test_step_time_notes_a_mode_the_trainer_refuses_and_goes_on(tmp_path, monkeypatch):
    from benchmarks.training_speed import step_timing
    from ggik.errors import GGIKError

    def check(mode, device, model):  # as the trainer's check on CUDA, here on the CPU
        if mode == "reduce-overhead":
            raise GGIKError("compile=reduce-overhead uses CUDA graphs, which cannot capture this model")

    def measure(device, batch, steps, warmup, sampler, mode, bf16, micro=0):
        assert mode != "reduce-overhead", "a refused mode is not measured"
        return {"examples_per_s": 1.0, "step_ms": 2.0, "data_ms": 1.0, "loss": 0.0}

    monkeypatch.setattr(step_timing, "check_compile_mode", check)
    monkeypatch.setattr(step_timing, "measure", measure)
    argv = ["--samplers", "stacked", "--compile", "reduce-overhead", "default", "--micro-batches", "0"]
    assert step_time.main(argv + ["--out", str(tmp_path / "s")]) == 0
    text = (tmp_path / "s.md").read_text()
    assert "| stacked | default |" in text and "| stacked | reduce-overhead |" not in text
    assert "stacked / reduce-overhead: refused by the trainer: compile=reduce-overhead uses CUDA graphs" in text

    def diverging(*args, **kwargs):  # any other error of a measurement is not a refusal: the study fails
        raise GGIKError("the training loss became NaN")

    monkeypatch.setattr(step_timing, "measure", diverging)
    with pytest.raises(GGIKError, match="NaN"):
        step_time.main(["--samplers", "stacked", "--compile", "default", "--micro-batches", "0"])


def test_latency_study_rows(tmp_path):
    from benchmarks.solvers import latency

    argv = ["--robots", "ur10", "--goals", "3", "--starts", "2", "--batch-sizes", "1", "5", "--iters", "2"]
    assert latency.main(argv + ["--out", str(tmp_path / "lat")]) == 0
    text = (tmp_path / "lat.md").read_text()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| ur10 |")]
    paths = [("2", "compiled"), ("2", "numpy"), ("2", "torch")]
    import importlib.util

    if importlib.util.find_spec("pytracik") is not None:  # TRAC-IK on the same goals, where installed
        paths.append(("1", "TRAC-IK"))
    assert [(r[2], r[3]) for r in rows] == paths
    assert all(0 <= float(r[6]) <= 1 and float(r[4]) > 0 for r in rows)
    batch = (tmp_path / "lat_batch.md").read_text()
    assert "| 1 |" in batch and "| 5 |" in batch and "Command: `python -m benchmarks.solvers.latency" in batch
    with pytest.raises(SystemExit):
        latency.main(["--goals", "0"])


def test_cost_bound_study_rows(tiny_ckpt, tmp_path):
    """Work per goal, time, and the bound at the matmul rate: consistent with each other, bad options refused."""
    import csv

    from benchmarks.sampling import cost_bound

    argv = ["--ckpt", str(tiny_ckpt), "--robots", "ur10", "panda", "-n", "3", "-s", "2", "--repeats", "1"]
    assert cost_bound.main(argv + ["--threads", "1", "--target-ms", "4", "--out", str(tmp_path / "b")]) == 0
    with open(tmp_path / "b.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["robot"], r["decoder"]) for r in rows] == [("ur10", "eager"), ("panda", "eager")]
    for r in rows:
        gflop, ms = float(r["GFLOP per goal"]), float(r["measured ms per goal"])
        assert gflop > 0 and ms > 0
        assert float(r["achieved GFLOP/s"]) == pytest.approx(gflop / ms * 1e3, rel=1e-3)
        assert float(r["GFLOP/s the target needs"]) == pytest.approx(gflop / 4 * 1e3, rel=1e-3)
    assert float(rows[1]["GFLOP per goal"]) > float(rows[0]["GFLOP per goal"])  # 18 graph nodes against 16
    # the work per goal does not depend on how many goals a call takes (it is counted on min(8, n) of them)
    argv9 = ["--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "9", "-s", "2", "--repeats", "1", "--threads", "1"]
    assert cost_bound.main(argv9 + ["--out", str(tmp_path / "n9")]) == 0
    with open(tmp_path / "n9.csv") as f:
        assert float(next(csv.DictReader(f))["GFLOP per goal"]) == pytest.approx(
            float(rows[0]["GFLOP per goal"]), rel=1e-4
        )
    assert "matrix-product rate" in (tmp_path / "b.md").read_text()
    with pytest.raises(SystemExit):
        cost_bound.main(["--target-ms", "0"])


def test_cost_bound_study_compiled_rows(tiny_ckpt, tmp_path):
    """--compile measures each robot again with the decoder layers compiled; the work counted is the same."""
    import csv

    from benchmarks.sampling import cost_bound

    argv = ["--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "2", "-s", "2", "--repeats", "1", "--compile"]
    assert cost_bound.main(argv + ["--threads", "1", "--out", str(tmp_path / "b")]) == 0
    with open(tmp_path / "b.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["decoder"] for r in rows] == ["eager", "compiled"]
    assert "compilation included" in (tmp_path / "b.md").read_text()


def test_compile_decoder_compiles_every_decoder_layer(tiny_ckpt):
    from benchmarks.common.robots import load_bench_model
    from benchmarks.sampling.cost_bound_runs import compile_decoder
    from ggik.nn.egnn import EGNNLayer

    model = load_bench_model(tiny_ckpt)[0]
    layers = [m for m in model.decoder.modules() if isinstance(m, EGNNLayer)]
    eager = [layer.forward for layer in layers]
    assert compile_decoder(model) == len(layers) == model.cfg.dec_layers > 0
    assert all(layer.forward is not f for layer, f in zip(layers, eager))


@pytest.mark.parametrize("study", ["oversample", "cascade", "step_time"])
def test_a_device_the_machine_lacks_is_a_clear_error(study, tiny_ckpt):
    """--device names a device torch cannot use here: a one-line exit, not a traceback from deep inside torch."""
    from benchmarks.cascade import bench_cascade

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    argv = {
        "oversample": (oversample.main, ["--ckpt", tiny_ckpt, "--robots", "ur10", "-n", "1", "--device", "cuda"]),
        "cascade": (bench_cascade.main, ["--ckpt", tiny_ckpt, "--robots", "ur10", "-n", "1", "--device", "cuda"]),
        "step_time": (step_time.main, ["--steps", "1", "--device", "cuda"]),
    }[study]
    with pytest.raises(SystemExit, match="torch sees no CUDA device"):
        argv[0](argv[1])
    with pytest.raises(SystemExit, match="--device"):
        argv[0](argv[1][:-1] + ["gpu7"])


def test_cli_startup_study_rows(tmp_path):
    """One timed run per command, this code and a second checkout of it: six rows, each with its target."""
    from benchmarks.cli_startup import measure

    assert measure.main(["--runs", "1", "--before", str(REPO_ROOT), "--out", str(tmp_path / "startup")]) == 0
    rows = [line for line in (tmp_path / "startup.md").read_text().splitlines() if line.startswith("| `ggik")]
    assert len(rows) == 6 and sum("| this |" in r for r in rows) == 3
    assert all(float(r.split("|")[3]) > 0 for r in rows)
    assert rows[0].endswith("< 0.5 |") and rows[2].endswith("< 1.5 |")


def test_device_solve_study_rows(tmp_path):
    """The whole-solve study on the CPU (its CUDA rows come from a GPU machine): every strategy and sampling alone."""
    from benchmarks.solvers import device_solve, device_study

    out = tmp_path / "device"
    assert device_solve.main(["--robots", "panda", "--goals", "2", "--repeats", "1", "--out", str(out)]) == 0
    rows = [line for line in (tmp_path / "device.md").read_text().splitlines() if line.startswith("| panda")]
    assert len(rows) == len(device_study.CONFIGS) + 1
    assert all(float(r.split("|")[4]) > 0 for r in rows)


def test_hard_paths_have_collision_free_witnesses():
    """Every hard path comes with a witness motion that reaches its waypoints (exactly, or within the path tolerances
    of 0.1 mm and 0.1 deg for an insertion, whose witness is a solved trajectory), moves at most 7 deg between them and
    is collision-free in its scene at every degree."""
    from benchmarks.obstacles.hard_group import HARD_SCENES, hard_paths
    from benchmarks.obstacles.scenes import reach
    from ggik import Robot
    from ggik.collision import Clearance, CollisionModel
    from ggik.kinematics.geometry import pose_errors
    from ggik.path.motion import motion_clearance

    robot = Robot.from_name("panda")
    model = CollisionModel.from_robot(robot)
    for scene in HARD_SCENES:
        found = hard_paths(robot, model, scene, reach(robot), 1, 30, 0)
        assert found, scene
        for hp in found:
            pos, rot = pose_errors(robot.fk(hp.witness), hp.poses)
            assert float(pos.max()) < 1e-4 and float(rot.max()) < math.radians(0.1)
            assert float((hp.witness[1:] - hp.witness[:-1]).abs().max()) <= torch.pi / 180 * 7
            assert float(motion_clearance(Clearance(robot, model, hp.scene), hp.witness).min()) >= 0
    (slots,) = hard_paths(robot, model, "slots", reach(robot), 1, 30, 0)  # no witness: a scene and its waypoints
    assert slots.witness is None and len(slots.scene.boxes) == 6 and slots.poses.shape == (30, 4, 4)
    with pytest.raises(ValueError, match="unknown hard scene 'maze'"):
        hard_paths(robot, model, "maze", 1.0, 1, 30, 0)
