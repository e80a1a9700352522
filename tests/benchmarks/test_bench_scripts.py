"""The lab's studies (benchmarks/), called as functions on a tiny checkpoint with tiny sizes (files, columns,
values), and their scripts as command lines (``python -m benchmarks.STUDY.SCRIPT``: --help, usage errors for bad
numbers, exit messages)."""

from __future__ import annotations

import argparse
import ast
import csv
import importlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
import torch
from test_layers import MAX_LINES

from benchmarks.common.scripts import BenchmarkError, nonnegative_int, positive_float, positive_int, script_command
from benchmarks.sampling.sampling_benchmark import COLUMNS as SAMPLING_COLUMNS
from benchmarks.sampling.sampling_benchmark import SamplingBenchmark, run_sampling_benchmark
from benchmarks.solvers.solver_benchmark import COLUMNS as SOLVER_COLUMNS
from benchmarks.solvers.solver_benchmark import SolverBenchmark, run_solver_benchmark

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
#: every script of the lab, as the module ``python -m`` runs
SCRIPTS = sorted(
    ".".join(p.relative_to(REPO).with_suffix("").parts)
    for p in (REPO / "benchmarks").rglob("*.py")
    if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")
)
#: the scripts that take --threads
THREADED = [
    "benchmarks.adapt.run_study",
    "benchmarks.baselines.bench_baselines",
    "benchmarks.cascade.bench_cascade",
    "benchmarks.cppflow.probe",
    "benchmarks.cppflow.run",
    "benchmarks.obstacles.bench_obstacles",
    "benchmarks.recipe.bench_recipe",
    "benchmarks.refinement.bench_refinement",
    "benchmarks.sampler_price.candidates",
    "benchmarks.sampler_price.distill",
    "benchmarks.sampler_price.parts",
    "benchmarks.sampler_price.seeds",
    "benchmarks.sampling.bench_sampling",
    "benchmarks.solvers.bench_solvers",
    "benchmarks.training_speed.bench_train",
]


def read_csv(path: Path) -> tuple[list[str], list[dict]]:
    with path.open(newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames), list(reader)


def finite(row: dict, columns: list[str]) -> None:
    for c in columns:
        v = float(row[c])
        assert math.isfinite(v), f"{c} = {row[c]!r} in {row}"


# ---------------------------------------------------------------------------------------------- the scripts
#: distribution -> import name, where they differ
IMPORT_NAMES = {"pyyaml": "yaml", "pytest-xdist": "xdist"}


def declared_imports() -> set[str]:
    """The import names of the project's declared dependencies (pyproject.toml: ``dependencies`` and every optional
    extra): the distribution's name, normalised (``torch-geometric`` -> ``torch_geometric``), or its import name
    where the two differ (:data:`IMPORT_NAMES`)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = [*project["dependencies"], *(s for extra in project["optional-dependencies"].values() for s in extra)]
    names = {re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", s)[0]).lower() for s in specs}
    return {IMPORT_NAMES.get(n, n.replace("-", "_")) for n in names}


def test_lab_scripts_import_only_the_lab_the_library_and_declared_dependencies():
    """Every script of the lab: no sys.path edits; imports only from the lab (``benchmarks``), the library (``ggik``),
    the Python standard library and the project's declared dependencies (pyproject.toml, optional extras included);
    and no longer than a module of the library may be (tests/test_layers.py's MAX_LINES)."""
    assert set(THREADED) <= set(SCRIPTS) and "benchmarks.generalisation_study.generalisation_summary" in SCRIPTS
    assert {"torch", "yaml", "numpy", "matplotlib"} <= declared_imports()
    allowed = {"benchmarks", "ggik", *sys.stdlib_module_names, *declared_imports()}
    for module in SCRIPTS:
        text = (REPO / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")
        assert "sys.path" not in text, module
        tree = ast.parse(text)
        imported = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0]
        imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        others = [m for m in imported if m and m.split(".")[0] not in allowed]
        assert not others, f"{module} imports {others}: neither the lab, ggik, the standard library nor declared"
        lines = text.count("\n")
        assert lines <= MAX_LINES, f"{module} has {lines} lines (at most {MAX_LINES}, as a module of ggik: split it)"


def test_every_script_answers_help_and_refuses_bad_numbers(tiny_ckpt, tmp_path):
    """`python -m benchmarks.X.Y --help` from the repo root (all at once, in parallel); --threads 0 is a usage error
    (exit status 2, argparse's message) in every script that takes it; a bad option's clean exit (status 1)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    runs = {name: [sys.executable, "-m", name, "--help"] for name in SCRIPTS}
    runs.update({f"{name} --threads 0": [sys.executable, "-m", name, "--threads", "0"] for name in THREADED})
    runs["bad samples"] = [
        sys.executable,
        "-m",
        "benchmarks.sampling.bench_sampling",
        "--ckpt",
        tiny_ckpt,
        "--samples",
        "0",
    ]
    runs["bad robot"] = [
        sys.executable,
        "-m",
        "benchmarks.solvers.bench_solvers",
        "--ckpt",
        tiny_ckpt,
        "--robots",
        "random1",
        "--load-probe",
        "0.1",
    ]
    runs["no study"] = [
        sys.executable,
        "-m",
        "benchmarks.generalisation_study.generalisation_summary",
        "--runs",
        str(tmp_path),
        "--results",
        str(tmp_path),
    ]
    procs = {
        k: subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for k, cmd in runs.items()
    }
    done = {}
    for key, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        done[key] = (proc.returncode, out, err)
    for name in SCRIPTS:
        rc, out, err = done[name]
        assert rc == 0 and out.startswith("usage:"), f"{name}: rc {rc}\n{err}"
    assert "--distinct-tol" in done["benchmarks.solvers.bench_solvers"][1]
    for name in THREADED:
        rc, _, err = done[f"{name} --threads 0"]
        assert rc == 2 and "argument --threads: must be an integer >= 1, got '0'" in err and "Traceback" not in err, (
            f"{name}: rc {rc}\n{err}"
        )
    rc, _, err = done["bad samples"]
    assert rc == 2 and "argument -s/--samples: must be an integer >= 1, got '0'" in err, err
    expected = {
        "bad robot": "random1: a random robot needs at least 2 DOF",
        "no study": "run benchmarks/generalisation_study/table4.sh first",
    }
    for key, message in expected.items():
        rc, _, err = done[key]
        assert rc == 1 and message in err and "Traceback" not in err, f"{key}: rc {rc}\n{err}"


def test_argument_types_turn_bad_numbers_into_usage_errors():
    assert positive_int("3") == 3 and nonnegative_int("0") == 0 and positive_float("0.5") == 0.5
    for parse, text in (
        (positive_int, "0"),
        (positive_int, "-2"),
        (positive_int, "1.5"),
        (positive_int, "x"),
        (nonnegative_int, "-1"),
        (positive_float, "0"),
        (positive_float, "nan"),
        (positive_float, "-1e-3"),
    ):
        with pytest.raises(argparse.ArgumentTypeError, match="must be"):
            parse(text)


def test_script_command_is_the_rerunnable_command():
    assert (
        script_command(str(REPO / "benchmarks" / "sampling" / "bench_sampling.py"), ["--samples", "1", "4"])
        == "python -m benchmarks.sampling.bench_sampling --samples 1 4"
    )
    assert (
        script_command(str(REPO / "benchmarks" / "cascade" / "bench_cascade.py"), ["--out", "a b"])
        == "python -m benchmarks.cascade.bench_cascade --out 'a b'"
    )


# ---------------------------------------------------------------------------------------------- sampling time
def test_bench_sampling(tiny_ckpt, tmp_path):
    opts = SamplingBenchmark(samples=[4, 1, 4], dofs=[], robots=["panda"], repeats=2, load_probe=0.2, progress=False)
    table = run_sampling_benchmark(
        tiny_ckpt, opts, tmp_path, "python -m benchmarks.sampling.bench_sampling --samples 4 1 4"
    )
    md = (tmp_path / "timing.md").read_text()
    assert "python -m benchmarks.sampling.bench_sampling --samples 4 1 4" in md  # the rerunnable command
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


@pytest.mark.parametrize("bf16, says", [(True, "bfloat16 autocast (--bf16 on"), (False, "float32 (--bf16 off")])
def test_bench_sampling_names_the_precision_it_timed(tiny_ckpt, tmp_path, bf16, says):
    opts = SamplingBenchmark(
        samples=[2], dofs=[], robots=["ur10"], repeats=1, load_probe=0.2, progress=False, bf16=bf16
    )
    run_sampling_benchmark(tiny_ckpt, opts, tmp_path, "cmd")
    assert says in (tmp_path / "timing.md").read_text()


def test_bench_sampling_skips_sizes_above_the_memory_guard(tiny_ckpt, tmp_path):
    opts = SamplingBenchmark(samples=[1], dofs=[4], robots=[], repeats=1, max_gb=1e-9, load_probe=0.2, progress=False)
    run_sampling_benchmark(tiny_ckpt, opts, tmp_path, "cmd")
    _, rows = read_csv(tmp_path / "timing.csv")
    assert rows[0]["robot"] == "random4" and math.isnan(float(rows[0]["model sampling [ms]"]))
    assert "Skipped" in (tmp_path / "timing.md").read_text()
    assert not (tmp_path / "timing.png").exists()  # nothing measured, nothing to plot


BAD_COMMON = [
    ({"robots": ["nosuch"]}, "'nosuch' is neither a URDF file nor a shipped robot"),
    ({"robots": ["random1"]}, "at least 2 DOF"),
    ({"ckpt": "/nonexistent/last.pt"}, "--ckpt: checkpoint not found"),
]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"samples": [0]}, "bench_sampling: --samples"),
        ({"repeats": 0}, "--repeats"),
        ({"dofs": [1]}, "--dofs"),
        ({"threads": 0}, "--threads"),
        ({"dofs": [], "robots": []}, "no robots to time"),
    ]
    + BAD_COMMON,
)
def test_bench_sampling_bad_options(tiny_ckpt, tmp_path, options, message):
    options = dict(options)
    ckpt = options.pop("ckpt", tiny_ckpt)
    with pytest.raises(BenchmarkError, match=message):
        run_sampling_benchmark(ckpt, SamplingBenchmark(**{"dofs": [], "robots": ["panda"], **options}), tmp_path, "cmd")
    assert not (tmp_path / "timing.csv").exists()


# ---------------------------------------------------------------------------------------------- solvers
def test_bench_solvers(tiny_ckpt, tmp_path):
    opts = SolverBenchmark(
        robots=["panda"],
        goals=3,
        single_goals=2,
        samples=4,
        slsqp_goals=1,
        slsqp_iters=10,
        iters=5,
        load_probe=0.2,
        progress=False,
    )
    table = run_solver_benchmark(tiny_ckpt, opts, tmp_path, "python -m benchmarks.solvers.bench_solvers --goals 3")
    md = (tmp_path / "solvers.md").read_text()
    assert "bench_solvers --goals 3" in md
    assert "at least 0.1 rad apart in joint space" in md  # the one distinct rule, ggik.ik.metrics.DISTINCT_TOL
    columns, rows = read_csv(tmp_path / "solvers.csv")
    assert columns == SOLVER_COLUMNS
    got = {(r["method"], r["mode"]): r for r in rows}
    expected = {"GGIK + LM", "LM (random starts)", "LM (random starts, first solution)", "SLSQP (random starts)"}
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
        finite(
            r,
            [
                "success [%]",
                "strict solutions per goal",
                "distinct strict per goal",
                "strict solutions per CPU-s",
                "wall per goal [ms]",
                "CPU per goal [ms]",
            ],
        )
        assert 0 <= float(r["success [%]"]) <= 100
        assert (
            0
            <= float(r["distinct strict per goal"])
            <= float(r["strict solutions per goal"])
            <= int(r["starts per goal"])
        )
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
    # the same starts stopped at a goal's first solution: the same goals solved, never more iterations
    every, first = (got[("LM (random starts" + tail, "batch")] for tail in (")", ", first solution)"))
    assert first["success [%]"] == every["success [%]"]
    assert float(first["mean iterations"]) <= float(every["mean iterations"])


def test_bench_solvers_without_pytracik_says_so(tiny_ckpt, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pytracik", None)  # makes `import pytracik` raise ImportError
    opts = SolverBenchmark(
        robots=["random5"],
        goals=2,
        single_goals=0,
        samples=2,
        iters=3,
        methods=["LM (random starts)", "TRAC-IK"],
        load_probe=0.2,
        progress=False,
    )
    run_solver_benchmark(tiny_ckpt, opts, tmp_path, "cmd")
    md = (tmp_path / "solvers.md").read_text()
    assert "TRAC-IK: not measured, pytracik is not importable" in md and "pip install 'ggik[bench]'" in md
    _, rows = read_csv(tmp_path / "solvers.csv")
    assert [(r["robot"], r["method"], r["mode"]) for r in rows] == [("random5", "LM (random starts)", "batch")]


def test_strict_validity_and_distinct_solutions():
    from conftest import build_robot

    from benchmarks.common.measure import strict_valid
    from benchmarks.solvers.solver_benchmark import add_row
    from benchmarks.solvers.solver_runs import Outcome
    from ggik.evaluation.report import Table
    from ggik.ik.metrics import count_distinct
    from ggik.ik.refine_config import RefineConfig
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
    add_row(
        table, robot, "m", "batch", Outcome(qs, 1.0, 1.0, None, torch.zeros(1, 2)), robot.fk(q), RefineConfig(), 0.1
    )
    assert table.rows[-1][distinct] == 1.0 and table.rows[-1][SOLVER_COLUMNS.index("strict solutions per goal")] == 2.0


@pytest.mark.parametrize(
    "options, message",
    [
        ({"goals": 0}, "bench_solvers: --goals"),
        ({"samples": 0}, "--samples"),
        ({"tracik_timeout": 0}, "--tracik-timeout"),
        ({"single_goals": -1}, "--single-goals"),
        ({"distinct_tol": 0}, "--distinct-tol"),
        ({"threads": 0}, "--threads"),
    ]
    + BAD_COMMON,
)
def test_bench_solvers_bad_options(tiny_ckpt, tmp_path, options, message):
    options = dict(options)
    ckpt = options.pop("ckpt", tiny_ckpt)
    with pytest.raises(BenchmarkError, match=message):
        run_solver_benchmark(
            ckpt, SolverBenchmark(**{"robots": ["panda"], "load_probe": 0.1, **options}), tmp_path, "cmd"
        )
    assert not (tmp_path / "solvers.csv").exists()


# ---------------------------------------------------------------------------------------------- training speed
def test_bench_train_variants_compute_the_same_model():
    """The three EGNN layer forms measured by the training-speed study run and give the same loss as the kept layer."""
    from benchmarks.training_speed.layer_variants import VARIANTS, swap_layers
    from ggik.data import DataConfig, TrainingData
    from ggik.nn.cvae import GGIKModel, ModelConfig

    batch = TrainingData(
        DataConfig(robots={"panda": 1.0}, random_weight=1.0, goal_kinds={"pose": 1.0}, batch_size=4)
    ).batch(0)[0]
    batch = batch.to("cpu", torch.float64)
    cfg = ModelConfig(
        dim=8,
        hidden=16,
        enc_layers=1,
        dec_layers=2,
        latent=4,
        prior_components=2,
        coord_gain=0.5,
        residual_inputs=False,
        gn_steps=0,
    )  # the plain layer, which all three forms compute
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
    from benchmarks.training_speed.training_speed import measure_training_speed

    threads = torch.get_num_threads()
    lines = []
    try:
        speed = measure_training_speed(
            ["default"], ["split", "concat", "pyg"], [1], batch_size=4, steps=1, warmup=0, log=lines.append
        )
    finally:
        torch.set_num_threads(threads)
    assert len(speed.rows) == len(lines) == 6 and all(r.examples_per_s > 0 for r in speed.rows)
    md = speed.markdown("python -m benchmarks.training_speed.bench_train --batch 4")
    assert "Command: `python -m benchmarks.training_speed.bench_train --batch 4`" in md and md.count("| default |") == 6
    assert "| PyG MessagePassing | on | 1 |" in md and "batch 4 from the default robot mix" in md


# ---------------------------------------------------------------------------------------------- raw success
def test_raw_success_report_against_uniform_configurations(tiny_ckpt):
    from benchmarks.raw_success.raw_success_report import raw_success_report

    text = raw_success_report(
        tiny_ckpt, ["panda"], problems=2, samples=3, seed=0, command="python -m benchmarks.raw_success.raw_success x"
    )
    assert text.startswith("# Raw success: best of 3 within 1 cm and 1 degree, 2 problems per robot\n")
    assert "Command: `python -m benchmarks.raw_success.raw_success x`" in text and "Checkpoint: step 3," in text
    assert f"Model: {tiny_ckpt} (sha256 " in text
    assert "| panda | GGIK samples | " in text and "| panda | uniform random configurations | " in text
    assert "| panda | sampling time: " in text and "s for 2 x 3 samples" in text
    again = raw_success_report(
        tiny_ckpt, ["panda"], problems=2, samples=3, seed=0, command="python -m benchmarks.raw_success.raw_success x"
    )
    strip = lambda t: [line for line in t.splitlines() if "sampling time" not in line]  # noqa: E731
    assert strip(again) == strip(text)  # seeded: everything but the timing repeats


# ---------------------------------------------------------------------------------------------- README tables
def test_readme_tables_put_the_papers_numbers_beside_the_measured_ones(tiny_ckpt, tmp_path):
    from benchmarks.paper_tables.paper_tables import readme_tables

    acc_cols = [
        "robot",
        "dof",
        "pos mean [mm]",
        "pos min [mm]",
        "rot mean [deg]",
        "success 1cm&1deg [%]",
        "MMD^2",
        "sampling time per goal [ms]",
    ]
    with open(tmp_path / "accuracy.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(acc_cols)
        w.writerow(["panda", 7, 123.45, 45.6, 7.89, 12.5, 0.321, 9.87])
        w.writerow(["puma560", 6, 11.0, 2.0, 1.0, 96.0, 0.1, 5.0])
    seed_cols = [
        "robot",
        "solver",
        "starts",
        "goals",
        "success [%]",
        "mean iterations",
        "time per goal [ms]",
        "of which sampling [ms]",
    ]
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
    # the layout of eval/results: one folder per table
    for name in ("accuracy", "seeding"):
        (tmp_path / name).mkdir()
        (tmp_path / f"{name}.csv").rename(tmp_path / name / f"{name}.csv")
    nested = readme_tables(tmp_path, tiny_ckpt)
    assert nested.replace("accuracy/accuracy.md", "accuracy.md").replace("seeding/seeding.md", "seeding.md") == out
    (tmp_path / "seeding" / "seeding.csv").unlink()
    with pytest.raises(FileNotFoundError, match="no seeding.csv"):
        readme_tables(tmp_path, tiny_ckpt)


def test_readme_budget_of_a_checkpoint_from_before_cpu_tracking(tiny_ckpt, tmp_path):
    """Its whole wall time is untracked (as Trainer.resume counts it), not 0 CPU-hours and nothing else."""
    from benchmarks.paper_tables.paper_tables import budget_line
    from ggik.checkpoint import load_checkpoint

    ckpt = load_checkpoint(tiny_ckpt)
    del ckpt["cpu_s"], ckpt["cpu_untracked_wall_s"]
    ckpt["wall_s"] = 3600.0
    torch.save(ckpt, tmp_path / "old.pt")
    text = budget_line(tmp_path / "old.pt")
    assert "0.00 CPU-hours measured plus 1.00 h of wall time from before CPU time was tracked" in text
