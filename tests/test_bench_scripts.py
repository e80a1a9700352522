"""eval/bench_sampling.py and eval/bench_solvers.py on a tiny checkpoint with tiny sizes: files, columns, values."""
from __future__ import annotations

import csv
import importlib.util
import math
import sys
from pathlib import Path

import pytest

from ggik.typed_config import from_dict, load_yaml
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer

REPO = Path(__file__).resolve().parents[1]

SAMPLING_COLUMNS = [
    "robot", "dof", "nodes", "samples", "model sampling [ms]", "model per sample [us]",
    "sampling + angles + FK per goal [ms]", "per sample [us]", "samples per second", "spread [%]",
]
SOLVER_COLUMNS = [
    "robot", "dof", "method", "mode", "goals", "starts per goal", "success [%]", "strict solutions per goal",
    "distinct strict per goal", "strict solutions per CPU-s", "wall per goal [ms]", "CPU per goal [ms]",
    "first strict solution [ms]", "mean iterations",
]


def load_script(name: str):
    """Import eval/NAME.py as a module (eval/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"ggik_eval_{name}", REPO / "eval" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames), list(reader)


def finite(row: dict, columns: list[str]) -> None:
    for c in columns:
        v = float(row[c])
        assert math.isfinite(v), f"{c} = {row[c]!r} in {row}"


def test_bench_sampling(tiny_ckpt, tmp_path, capsys):
    bench = load_script("bench_sampling")
    argv = ["--ckpt", tiny_ckpt, "--samples", "1", "4", "--dofs", "--robots", "panda", "--repeats", "2",
            "--out-dir", str(tmp_path), "--no-progress", "--load-probe", "0.2"]
    assert bench.main(argv) == 0
    md = (tmp_path / "timing.md").read_text()
    assert "python " in md and "bench_sampling.py" in md and "--samples 1 4" in md  # the rerunnable command
    assert "Other processes on the machine" in md
    assert (tmp_path / "timing.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    columns, rows = read_csv(tmp_path / "timing.csv")
    assert columns == SAMPLING_COLUMNS
    assert [(r["robot"], int(r["dof"]), int(r["samples"])) for r in rows] == [("panda", 7, 1), ("panda", 7, 4)]
    for r in rows:
        finite(r, SAMPLING_COLUMNS[4:])
        assert float(r["model sampling [ms]"]) > 0
        assert float(r["sampling + angles + FK per goal [ms]"]) >= 0.5 * float(r["model sampling [ms]"])
        per_sample = float(r["sampling + angles + FK per goal [ms]"]) * 1e3 / int(r["samples"])
        assert float(r["per sample [us]"]) == pytest.approx(per_sample, rel=1e-9)
    assert "| panda | 7 |" in capsys.readouterr().out


def test_bench_sampling_skips_sizes_above_the_memory_guard(tiny_ckpt, tmp_path):
    bench = load_script("bench_sampling")
    argv = ["--ckpt", tiny_ckpt, "--samples", "1", "--dofs", "4", "--robots", "--repeats", "1", "--max-gb", "1e-9",
            "--out-dir", str(tmp_path), "--no-progress", "--load-probe", "0.2"]
    assert bench.main(argv) == 0
    _, rows = read_csv(tmp_path / "timing.csv")
    assert rows[0]["robot"] == "random4" and math.isnan(float(rows[0]["model sampling [ms]"]))
    assert "Skipped" in (tmp_path / "timing.md").read_text()
    assert not (tmp_path / "timing.png").exists()  # nothing measured, nothing to plot


BAD_COMMON = [(["--robots", "nosuch"], "unknown robot 'nosuch'"), (["--robots", "random1"], "at least 2 DOF"),
              (["--ckpt", "/nonexistent/last.pt"], "checkpoint not found")]


@pytest.mark.parametrize("args, message", [(["--samples", "0"], "--samples"), (["--repeats", "0"], "--repeats"),
                                           (["--dofs", "1"], "--dofs"), (["--threads", "-1"], "--threads")] + BAD_COMMON)
def test_bench_sampling_bad_arguments(tiny_ckpt, tmp_path, args, message):
    bench = load_script("bench_sampling")
    with pytest.raises(SystemExit, match=message):
        bench.main(["--ckpt", tiny_ckpt, "--out-dir", str(tmp_path)] + args)


def test_bench_solvers(tiny_ckpt, tmp_path, capsys):
    bench = load_script("bench_solvers")
    argv = ["--ckpt", tiny_ckpt, "--robots", "panda", "--goals", "3", "--single-goals", "2", "--samples", "4",
            "--slsqp-goals", "1", "--slsqp-iters", "10", "--iters", "5", "--out-dir", str(tmp_path), "--no-progress", "--load-probe", "0.2"]
    assert bench.main(argv) == 0
    md = (tmp_path / "solvers.md").read_text()
    assert "bench_solvers.py" in md and "--goals 3" in md
    columns, rows = read_csv(tmp_path / "solvers.csv")
    assert columns == SOLVER_COLUMNS
    got = {(r["method"], r["mode"]): r for r in rows}
    expected = {"GGIK + LM", "LM (random starts)", "SLSQP (random starts)"}
    try:
        import pytracik  # noqa: F401

        expected.add("TRAC-IK")
    except ImportError:
        assert "TRAC-IK: not measured" in md
    assert set(got) == {(m, mode) for m in expected for mode in ("single", "batch")}
    for (method, mode), r in got.items():
        assert r["robot"] == "panda" and int(r["dof"]) == 7
        goals = {"single": 2, "batch": 3}[mode] if method != "SLSQP (random starts)" else 1
        assert int(r["goals"]) == goals, (method, mode)
        assert int(r["starts per goal"]) == (1 if method == "TRAC-IK" else 4)
        finite(r, ["success [%]", "strict solutions per goal", "distinct strict per goal", "strict solutions per CPU-s",
                   "wall per goal [ms]", "CPU per goal [ms]"])
        assert 0 <= float(r["success [%]"]) <= 100
        assert 0 <= float(r["distinct strict per goal"]) <= float(r["strict solutions per goal"]) <= int(r["starts per goal"])
        assert float(r["wall per goal [ms]"]) > 0 and float(r["CPU per goal [ms]"]) > 0
        iters = float(r["mean iterations"])
        if method == "TRAC-IK":
            assert math.isnan(iters)
        else:
            assert 0 <= iters <= (10 if method.startswith("SLSQP") else 5)
        if float(r["success [%]"]) > 0:  # the time to a first solution exists once something was solved
            assert float(r["first strict solution [ms]"]) > 0
        else:
            assert math.isnan(float(r["first strict solution [ms]"]))
    assert "| panda | 7 | LM (random starts) | batch | 3 | 4 |" in capsys.readouterr().out


def test_bench_solvers_without_pytracik_says_so(tiny_ckpt, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pytracik", None)  # makes `import pytracik` raise ImportError
    bench = load_script("bench_solvers")
    argv = ["--ckpt", tiny_ckpt, "--robots", "random5", "--goals", "2", "--single-goals", "0", "--samples", "2",
            "--iters", "3", "--methods", "LM (random starts)", "TRAC-IK", "--out-dir", str(tmp_path), "--no-progress", "--load-probe", "0.2"]
    assert bench.main(argv) == 0
    md = (tmp_path / "solvers.md").read_text()
    assert "TRAC-IK: not measured, pytracik is not importable" in md and "pip install 'ggik[bench]'" in md
    _, rows = read_csv(tmp_path / "solvers.csv")
    assert [(r["robot"], r["method"], r["mode"]) for r in rows] == [("random5", "LM (random starts)", "batch")]


def test_strict_validity_and_distinct_solutions():
    import torch

    from ggik import Robot
    from ggik.ik.refine import RefineConfig

    bench = load_script("bench_solvers")
    panda = Robot.from_name("panda")
    q = panda.sample_q(2, torch.Generator().manual_seed(0))
    T = panda.fk(q)
    cands = torch.stack([q, q + 1e-3, q + 0.5, torch.full_like(q, float("nan"))], 1)  # (2, 4, 7)
    ok = bench.strict_valid(panda, cands, T, RefineConfig())
    assert ok[:, 0].all() and not ok[:, 3].any()  # exact solutions valid, "no solution" rows not
    both = torch.ones(2, 2, dtype=torch.bool)
    assert bench.distinct_count(torch.stack([q, q + 1e-3], 1), both, 0.05).tolist() == [1.0, 1.0]
    assert bench.distinct_count(torch.stack([q, q + 0.5], 1), both, 0.05).tolist() == [2.0, 2.0]
    # angles 2 pi apart are the same configuration
    assert bench.distinct_count(torch.stack([q, q + 2 * torch.pi], 1), both, 0.05).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("args, message", [(["--goals", "0"], "--goals"), (["--samples", "0"], "--samples"),
                                           (["--tracik-timeout", "0"], "--tracik-timeout"),
                                           (["--single-goals", "-1"], "--single-goals")] + BAD_COMMON)
def test_bench_solvers_bad_arguments(tiny_ckpt, tmp_path, args, message):
    bench = load_script("bench_solvers")
    with pytest.raises(SystemExit, match=message):
        bench.main(["--ckpt", tiny_ckpt, "--out-dir", str(tmp_path)] + args)


def test_bench_train_variants_compute_the_same_model(tmp_path):
    """The three EGNN layer variants of eval/bench_train.py run and give the same loss as the kept layer."""
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("bench_train", Path(__file__).resolve().parents[1] / "eval" / "bench_train.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_train"] = bench  # PyG's MessagePassing inspects its subclass's module
    spec.loader.exec_module(bench)
    from ggik.data import DataConfig, TrainingData
    from ggik.nn.cvae import GGIKModel, ModelConfig

    batch = TrainingData(DataConfig(robots={"panda": 1.0}, random_weight=1.0, batch_size=4)).batch(0)[0].to("cpu", torch.float64)
    cfg = ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2, coord_gain=0.5)
    losses = {}
    for variant in ("split", "concat", "pyg"):
        torch.manual_seed(0)
        model = bench.swap_layers(GGIKModel(cfg), variant).double()
        torch.manual_seed(1)
        out = model(batch)
        losses[variant] = (out["free_se"] + out["kl"]).mean()
    torch.testing.assert_close(losses["concat"], losses["split"], rtol=0, atol=1e-9)
    torch.testing.assert_close(losses["pyg"], losses["split"], rtol=0, atol=1e-9)
    out = tmp_path / "bench.md"
    assert bench.main(["--steps", "1", "--warmup", "0", "--batch", "4", "--threads", "1", "--sizes", "default", "--out", str(out)]) == 0
    assert out.read_text().count("| default |") == 6


def test_readme_tables_put_the_papers_numbers_beside_the_measured_ones(tiny_ckpt, tmp_path, capsys):
    tables = load_script("readme_tables")
    acc_cols = ["robot", "dof", "pos mean [mm]", "pos min [mm]", "rot mean [deg]", "success 1cm&1deg [%]", "MMD^2",
                "sampling time per goal [ms]"]
    with open(tmp_path / "accuracy.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(acc_cols)
        w.writerow(["panda", 7, 123.45, 45.6, 7.89, 12.5, 0.321, 9.87])
        w.writerow(["puma560", 6, 11.0, 2.0, 1.0, 96.0, 0.1, 5.0])
    seed_cols = ["robot", "solver", "starts", "goals", "success [%]", "mean iterations", "time per goal [ms]",
                 "of which sampling [ms]"]
    with open(tmp_path / "seeding.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(seed_cols)
        w.writerow(["panda", "LM", "GGIK", 100, 99.5, 7.25, 20.5, 18.0])
        w.writerow(["panda", "LM", "random", 100, 98.0, 21.0, 3.5, 0.0])
    assert tables.main(["--results", str(tmp_path), "--ckpt", tiny_ckpt]) == 0
    out = capsys.readouterr().out
    assert "3 steps" in out and "CPU-hours measured" in out
    assert "| panda | 12.5 (97.5) | >= 97.5 | 123.5 (36.5) | 7.9 (3.6) | 45.6 | 0.32 (0.08) | 9.9 |" in out
    assert "| puma560 | 96.0 | >= 95.0 | 11.0 | 1.0 | 2.0 | 0.10 | 5.0 |" in out
    assert "| panda | 100 | 99.5 / 98.0 | 7.2 / 21.0 | 20.5 (18.0) / 3.5 | - | - |" in out
    assert "| paper, Table 2 (5 robots, SLSQP) | 2000 | - | - | - | 100.0 / 95.0 | 4.4 / 11.3 |" in out


def test_power_law_fit_of_validation_errors_recovers_the_law():
    plot = load_script("plot_training")
    val = [{"examples": e, "val/panda/pos_err_best_m": 2.0 * e**-0.3, "val/ur10/pos_err_best_m": 4.0 * e**-0.3}
           for e in (1e3, 1e4, 1e5, 1e6)]
    val.insert(0, {"examples": 10, "val/panda/pos_err_best_m": 9.0, "val/ur10/pos_err_best_m": 9.0})  # skipped
    a, b = plot.power_law_fit(val, skip_examples=100)
    assert a == pytest.approx(3.0, rel=1e-9) and b == pytest.approx(-0.3, rel=1e-9)
    with pytest.raises(ValueError, match="at least 3"):
        plot.power_law_fit(val, skip_examples=10**5)


def test_readme_budget_of_a_checkpoint_from_before_cpu_tracking(tiny_ckpt, tmp_path):
    """Its whole wall time is untracked (as Trainer.resume counts it), not 0 CPU-hours and nothing else."""
    import torch

    from ggik.checkpoint import load_checkpoint

    ckpt = load_checkpoint(tiny_ckpt)
    del ckpt["cpu_s"], ckpt["cpu_untracked_wall_s"]
    ckpt["wall_s"] = 3600.0
    torch.save(ckpt, tmp_path / "old.pt")
    text = load_script("readme_tables").budget(tmp_path / "old.pt")
    assert "0.00 CPU-hours measured plus 1.00 h of wall time from before CPU time was tracked" in text
