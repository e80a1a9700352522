"""The benchmarks and summaries behind eval/*.py, called as library functions on a tiny checkpoint with tiny sizes
(files, columns, values), and the scripts themselves as thin command lines (--help, exit messages)."""
from __future__ import annotations

import ast
import csv
import importlib
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from ggik.evaluation.bench_setup import BenchmarkError, script_command
from ggik.evaluation.sampling_benchmark import COLUMNS as SAMPLING_COLUMNS
from ggik.evaluation.sampling_benchmark import SamplingBenchmark, run_sampling_benchmark
from ggik.evaluation.solver_benchmark import COLUMNS as SOLVER_COLUMNS
from ggik.evaluation.solver_benchmark import SolverBenchmark, run_solver_benchmark

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (REPO / "eval").glob("*.py"))


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames), list(reader)


def finite(row: dict, columns: list[str]) -> None:
    for c in columns:
        v = float(row[c])
        assert math.isfinite(v), f"{c} = {row[c]!r} in {row}"


# ---------------------------------------------------------------------------------------------- the scripts
def test_eval_scripts_are_thin_callers():
    """No sys.path edits, no helper modules beside them: every script imports the library and nothing of eval/."""
    assert "_benchutil.py" not in SCRIPTS and {"bench_sampling.py", "bench_solvers.py", "bench_train.py", "raw_success.py",
                                               "readme_tables.py", "plot_training.py", "generalisation_summary.py"} <= set(SCRIPTS)
    for name in SCRIPTS:
        text = (REPO / "eval" / name).read_text(encoding="utf-8")
        assert "sys.path" not in text, name
        tree = ast.parse(text)
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        local = {p[:-3] for p in SCRIPTS}
        assert not [m for m in imported if m and m.split(".")[0] in local], f"{name} imports another script"
        assert len(text.splitlines()) < 70, f"{name}: argparse, one library call and printing only"


def test_every_script_answers_help_and_exits_with_the_librarys_message(tiny_ckpt, tmp_path):
    """`python eval/X.py --help` from the repo root (all at once, in parallel), and a bad option's clean exit."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    runs = {name: [sys.executable, f"eval/{name}", "--help"] for name in SCRIPTS}
    runs["bad samples"] = [sys.executable, "eval/bench_sampling.py", "--ckpt", tiny_ckpt, "--samples", "0"]
    runs["bad robot"] = [sys.executable, "eval/bench_solvers.py", "--ckpt", tiny_ckpt, "--robots", "random1",
                         "--load-probe", "0.1"]
    runs["no study"] = [sys.executable, "eval/generalisation_summary.py", "--runs", str(tmp_path), "--results", str(tmp_path)]
    procs = {k: subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k, cmd in runs.items()}
    done = {}
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=120)
        done[key] = (proc.returncode, out, err)
    for name in SCRIPTS:
        rc, out, err = done[name]
        assert rc == 0 and out.startswith("usage:"), f"{name}: rc {rc}\n{err}"
    assert "--distinct-tol" in done["bench_solvers.py"][1] and "--fit-after" in done["plot_training.py"][1]
    expected = {"bad samples": "bench_sampling: --samples must be integers >= 1, got [0]",
                "bad robot": "random1: a random robot needs at least 2 DOF",
                "no study": "run eval/table4.sh first"}
    for key, message in expected.items():
        rc, _, err = done[key]
        assert rc == 1 and message in err and "Traceback" not in err, f"{key}: rc {rc}\n{err}"


def test_script_command_is_the_rerunnable_command(monkeypatch):
    monkeypatch.chdir(REPO)
    assert script_command(str(REPO / "eval" / "bench_sampling.py"), ["--samples", "1", "4"]) == \
        "python eval/bench_sampling.py --samples 1 4"


# ---------------------------------------------------------------------------------------------- sampling time
def test_bench_sampling(tiny_ckpt, tmp_path):
    opts = SamplingBenchmark(samples=[4, 1, 4], dofs=[], robots=["panda"], repeats=2, load_probe=0.2, progress=False)
    table = run_sampling_benchmark(tiny_ckpt, opts, tmp_path, "python eval/bench_sampling.py --samples 4 1 4")
    md = (tmp_path / "timing.md").read_text()
    assert "python eval/bench_sampling.py --samples 4 1 4" in md  # the rerunnable command
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
    assert "| panda | 7 |" in table.markdown("cmd", 0)


def test_bench_sampling_skips_sizes_above_the_memory_guard(tiny_ckpt, tmp_path):
    opts = SamplingBenchmark(samples=[1], dofs=[4], robots=[], repeats=1, max_gb=1e-9, load_probe=0.2, progress=False)
    run_sampling_benchmark(tiny_ckpt, opts, tmp_path, "cmd")
    _, rows = read_csv(tmp_path / "timing.csv")
    assert rows[0]["robot"] == "random4" and math.isnan(float(rows[0]["model sampling [ms]"]))
    assert "Skipped" in (tmp_path / "timing.md").read_text()
    assert not (tmp_path / "timing.png").exists()  # nothing measured, nothing to plot


BAD_COMMON = [({"robots": ["nosuch"]}, "unknown robot 'nosuch'"), ({"robots": ["random1"]}, "at least 2 DOF"),
              ({"ckpt": "/nonexistent/last.pt"}, "--ckpt: checkpoint not found")]


@pytest.mark.parametrize("options, message", [({"samples": [0]}, "bench_sampling: --samples"), ({"repeats": 0}, "--repeats"),
                                              ({"dofs": [1]}, "--dofs"), ({"threads": -1}, "--threads"),
                                              ({"dofs": [], "robots": []}, "no robots to time")] + BAD_COMMON)
def test_bench_sampling_bad_options(tiny_ckpt, tmp_path, options, message):
    options = dict(options)
    ckpt = options.pop("ckpt", tiny_ckpt)
    with pytest.raises(BenchmarkError, match=message):
        run_sampling_benchmark(ckpt, SamplingBenchmark(**{"dofs": [], "robots": ["panda"], **options}), tmp_path, "cmd")
    assert not (tmp_path / "timing.csv").exists()


# ---------------------------------------------------------------------------------------------- solvers
def test_bench_solvers(tiny_ckpt, tmp_path):
    opts = SolverBenchmark(robots=["panda"], goals=3, single_goals=2, samples=4, slsqp_goals=1, slsqp_iters=10, iters=5,
                           load_probe=0.2, progress=False)
    table = run_solver_benchmark(tiny_ckpt, opts, tmp_path, "python eval/bench_solvers.py --goals 3")
    md = (tmp_path / "solvers.md").read_text()
    assert "bench_solvers.py --goals 3" in md
    assert "at least 0.1 rad apart in joint space" in md  # the one distinct rule, ggik.ik.metrics.DISTINCT_TOL
    columns, rows = read_csv(tmp_path / "solvers.csv")
    assert columns == SOLVER_COLUMNS
    got = {(r["method"], r["mode"]): r for r in rows}
    expected = {"GGIK + LM", "LM (random starts)", "SLSQP (random starts)"}
    try:
        importlib.import_module("pytracik")
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
    assert "| panda | 7 | LM (random starts) | batch | 3 | 4 |" in table.markdown("cmd", 0)


def test_bench_solvers_without_pytracik_says_so(tiny_ckpt, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pytracik", None)  # makes `import pytracik` raise ImportError
    opts = SolverBenchmark(robots=["random5"], goals=2, single_goals=0, samples=2, iters=3,
                           methods=["LM (random starts)", "TRAC-IK"], load_probe=0.2, progress=False)
    run_solver_benchmark(tiny_ckpt, opts, tmp_path, "cmd")
    md = (tmp_path / "solvers.md").read_text()
    assert "TRAC-IK: not measured, pytracik is not importable" in md and "pip install 'ggik[bench]'" in md
    _, rows = read_csv(tmp_path / "solvers.csv")
    assert [(r["robot"], r["method"], r["mode"]) for r in rows] == [("random5", "LM (random starts)", "batch")]


def test_strict_validity_and_distinct_solutions():
    from conftest import build_robot

    from ggik.evaluation.report import Table
    from ggik.evaluation.solver_benchmark import add_row
    from ggik.evaluation.solver_runs import Outcome, strict_valid
    from ggik.ik.metrics import count_distinct
    from ggik.ik.refine import RefineConfig
    from ggik.kinematics import Robot

    panda = Robot.from_name("panda")
    q = panda.sample_q(2, torch.Generator().manual_seed(0))
    T = panda.fk(q)
    cands = torch.stack([q, q + 1e-3, q + 0.5, torch.full_like(q, float("nan")), q + 2 * torch.pi], 1)  # (2, 5, 7)
    ok = strict_valid(panda, cands, T, RefineConfig())
    assert ok[:, 0].all() and not ok[:, 3].any()  # exact solutions valid, "no solution" rows not
    assert not ok[:, 4].any()  # the same pose, but outside panda's limits
    both = torch.ones(2, 2, dtype=torch.bool)
    unbounded = ~panda.limited
    assert count_distinct(torch.stack([q, q + 1e-3], 1), both, unbounded).tolist() == [1.0, 1.0]
    assert count_distinct(torch.stack([q, q + 0.5], 1), both, unbounded).tolist() == [2.0, 2.0]
    table = Table("t", SOLVER_COLUMNS)
    distinct = SOLVER_COLUMNS.index("distinct strict per goal")
    # continuous joints: angles 2 pi apart are the same configuration, a limited joint's are not
    robot = build_robot("continuous")
    q = robot.sample_q(1, torch.Generator().manual_seed(0))
    shift = torch.where(robot.limited, 0.0, 2 * torch.pi).to(q)
    qs = torch.stack([q, q + shift], 1)
    add_row(table, robot, "m", "batch", Outcome(qs, 1.0, 1.0, None, torch.zeros(1, 2)), robot.fk(q), RefineConfig(), 0.1)
    assert table.rows[-1][distinct] == 1.0 and table.rows[-1][SOLVER_COLUMNS.index("strict solutions per goal")] == 2.0


@pytest.mark.parametrize("options, message", [({"goals": 0}, "bench_solvers: --goals"), ({"samples": 0}, "--samples"),
                                              ({"tracik_timeout": 0}, "--tracik-timeout"),
                                              ({"single_goals": -1}, "--single-goals"),
                                              ({"distinct_tol": 0}, "--distinct-tol")] + BAD_COMMON)
def test_bench_solvers_bad_options(tiny_ckpt, tmp_path, options, message):
    options = dict(options)
    ckpt = options.pop("ckpt", tiny_ckpt)
    with pytest.raises(BenchmarkError, match=message):
        run_solver_benchmark(ckpt, SolverBenchmark(**{"robots": ["panda"], "load_probe": 0.1, **options}), tmp_path, "cmd")
    assert not (tmp_path / "solvers.csv").exists()


# ---------------------------------------------------------------------------------------------- training speed
def test_bench_train_variants_compute_the_same_model():
    """The three EGNN layer forms measured by eval/bench_train.py run and give the same loss as the kept layer."""
    from ggik.data import DataConfig, TrainingData
    from ggik.evaluation.layer_variants import VARIANTS, swap_layers
    from ggik.nn.cvae import GGIKModel, ModelConfig

    batch = TrainingData(DataConfig(robots={"panda": 1.0}, random_weight=1.0, batch_size=4)).batch(0)[0].to("cpu", torch.float64)
    cfg = ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=4, prior_components=2, coord_gain=0.5)
    losses = {}
    for variant in VARIANTS:
        torch.manual_seed(0)
        model = swap_layers(GGIKModel(cfg), variant).double()
        torch.manual_seed(1)
        out = model(batch)
        losses[variant] = (out["free_se"] + out["kl"]).mean()
    torch.testing.assert_close(losses["concat"], losses["split"], rtol=0, atol=1e-9)
    torch.testing.assert_close(losses["pyg"], losses["split"], rtol=0, atol=1e-9)


def test_bench_train_report():
    from ggik.evaluation.training_speed import measure_training_speed

    threads = torch.get_num_threads()
    lines = []
    try:
        speed = measure_training_speed(["default"], ["split", "concat", "pyg"], [1], batch_size=4, steps=1, warmup=0,
                                       log=lines.append)
    finally:
        torch.set_num_threads(threads)
    assert len(speed.rows) == len(lines) == 6 and all(r.examples_per_s > 0 for r in speed.rows)
    md = speed.markdown("python eval/bench_train.py --batch 4")
    assert "Command: `python eval/bench_train.py --batch 4`" in md and md.count("| default |") == 6
    assert "| PyG MessagePassing | on | 1 |" in md and "batch 4 from the default robot mix" in md


# ---------------------------------------------------------------------------------------------- raw success
def test_raw_success_report_against_uniform_configurations(tiny_ckpt):
    from ggik.evaluation.raw_success import raw_success_report

    text = raw_success_report(tiny_ckpt, ["panda"], problems=2, samples=3, seed=0, command="python eval/raw_success.py x")
    assert text.startswith("# Raw success: best of 3 within 1 cm and 1 degree, 2 problems per robot\n")
    assert "Command: `python eval/raw_success.py x`" in text and "Checkpoint: step 3," in text
    assert "| panda | GGIK samples | " in text and "| panda | uniform random configurations | " in text
    assert "| panda | sampling time: " in text and "s for 2 x 3 samples" in text
    again = raw_success_report(tiny_ckpt, ["panda"], problems=2, samples=3, seed=0, command="python eval/raw_success.py x")
    strip = lambda t: [line for line in t.splitlines() if "sampling time" not in line]  # noqa: E731
    assert strip(again) == strip(text)  # seeded: everything but the timing repeats


# ---------------------------------------------------------------------------------------------- README tables
def test_readme_tables_put_the_papers_numbers_beside_the_measured_ones(tiny_ckpt, tmp_path):
    from ggik.evaluation.paper_tables import readme_tables

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
    out = readme_tables(tmp_path, tiny_ckpt)
    assert out.startswith(f"Checkpoint `{tiny_ckpt}`: 3 steps") and "CPU-hours measured" in out
    assert "| panda | 12.5 (97.5) | >= 97.5 | 123.5 (36.5) | 7.9 (3.6) | 45.6 | 0.32 (0.08) | 9.9 |" in out
    assert "| puma560 | 96.0 | >= 95.0 | 11.0 | 1.0 | 2.0 | 0.10 | 5.0 |" in out
    assert "| panda | 100 | 99.5 / 98.0 | 7.2 / 21.0 | 20.5 (18.0) / 3.5 | - | - |" in out
    assert out.endswith("| paper, Table 2 (5 robots, SLSQP) | 2000 | - | - | - | 100.0 / 95.0 | 4.4 / 11.3 |")


def test_readme_budget_of_a_checkpoint_from_before_cpu_tracking(tiny_ckpt, tmp_path):
    """Its whole wall time is untracked (as Trainer.resume counts it), not 0 CPU-hours and nothing else."""
    from ggik.checkpoint import load_checkpoint
    from ggik.evaluation.paper_tables import budget_line

    ckpt = load_checkpoint(tiny_ckpt)
    del ckpt["cpu_s"], ckpt["cpu_untracked_wall_s"]
    ckpt["wall_s"] = 3600.0
    torch.save(ckpt, tmp_path / "old.pt")
    text = budget_line(tmp_path / "old.pt")
    assert "0.00 CPU-hours measured plus 1.00 h of wall time from before CPU time was tracked" in text


# ---------------------------------------------------------------------------------------------- training curves
def test_power_law_fit_of_validation_errors_recovers_the_law():
    from ggik.evaluation.training_curves import power_law_fit

    val = [{"examples": e, "val/panda/pos_err_best_m": 2.0 * e**-0.3, "val/ur10/pos_err_best_m": 4.0 * e**-0.3}
           for e in (1e3, 1e4, 1e5, 1e6)]
    val.insert(0, {"examples": 10, "val/panda/pos_err_best_m": 9.0, "val/ur10/pos_err_best_m": 9.0})  # skipped
    a, b = power_law_fit(val, skip_examples=100)
    assert a == pytest.approx(3.0, rel=1e-9) and b == pytest.approx(-0.3, rel=1e-9)
    with pytest.raises(ValueError, match="at least 3"):
        power_law_fit(val, skip_examples=10**5)


def test_training_curves_of_a_run(tiny_ckpt, tmp_path):
    """A run folder as `ggik train` leaves it: its records, the figure with the run's budget, the fit report."""
    import json

    from ggik.evaluation.training_curves import plot_training_curves, power_law_lines, read_metrics, run_budget_line

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(tiny_ckpt, run / "last.pt")
    recs = [{"kind": "init"}]
    for e in (100, 10_000, 1_000_000):
        recs.append({"kind": "train", "examples": e, "free_se": 1.0 / e, "kl": 3.0})
        recs.append({"kind": "val", "examples": e, "val/panda/success": 0.5, "val/panda/pos_err_best_m": 2.0 * e**-0.5,
                     # other goal kinds (val.goal_kinds) are neither robots nor part of the pose fit
                     "val/panda/position/success": 0.1, "val/panda/position/pos_err_best_m": 9.0,
                     "val/success_mean": 0.5, "val/position/success_mean": 0.1})
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    train, val = read_metrics(run)
    assert [r["kind"] for r in train] == ["train"] * 3 and [r["kind"] for r in val] == ["val"] * 3
    assert run_budget_line(run / "last.pt").startswith("run: 3 steps")
    out = plot_training_curves([run], tmp_path / "sub" / "curves.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = power_law_lines(run, 0)
    assert lines[0].startswith(f"{run}: mean best-of-S error ~ 2 m * examples^-0.500 over 3 validation points (100..1,000,000")
    assert lines[1].startswith("  extrapolated to 10 mm at 4e+04 examples")
