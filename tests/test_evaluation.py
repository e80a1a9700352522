"""The evaluation suite: MMD diversity score, the three tables, the `ggik eval` command."""

from __future__ import annotations

import csv
import math

import pytest
import torch

from ggik import Robot
from ggik.checkpoint import load_model
from ggik.cli import main
from ggik.evaluation.tables import (
    EvalConfig,
    accuracy_table,
    angle_mmd,
    limits_table,
    reference_solutions,
    seeding_table,
)
from ggik.ik.refine_config import RefineConfig
from ggik.ik.tolerances import SOLVE_TOLERANCES
from ggik.kinematics.geometry import pose_errors
from ggik.training.config import TrainConfig
from ggik.typed_config import from_dict, load_yaml

F64 = torch.float64


def test_mmd_is_zero_for_identical_sets_and_positive_otherwise():
    g = torch.Generator().manual_seed(0)
    a = torch.rand(5, 8, 6, generator=g, dtype=F64) * 6 - 3
    assert torch.allclose(angle_mmd(a, a.clone()), torch.zeros(5, dtype=F64), atol=1e-12)
    b = a + 1.0
    assert (angle_mmd(a, b) > 1e-3).all()


def test_mmd_treats_angles_2pi_apart_as_equal_and_is_symmetric():
    g = torch.Generator().manual_seed(1)
    a = torch.rand(3, 6, 4, generator=g, dtype=F64) * 6 - 3
    b = torch.rand(3, 7, 4, generator=g, dtype=F64) * 6 - 3
    assert torch.allclose(angle_mmd(a, b + 2 * math.pi), angle_mmd(a, b), atol=1e-12)
    assert torch.allclose(angle_mmd(a, b), angle_mmd(b, a), atol=1e-12)


def test_mmd_masks_reference_solutions_and_needs_two():
    g = torch.Generator().manual_seed(2)
    a = torch.rand(2, 5, 3, generator=g, dtype=F64)
    b = torch.cat([a, torch.full((2, 5, 3), 2.5, dtype=F64)], 1)  # second half: far away, masked out
    valid = torch.cat([torch.ones(2, 5, dtype=torch.bool), torch.zeros(2, 5, dtype=torch.bool)], 1)
    assert torch.allclose(angle_mmd(a, b, valid), torch.zeros(2, dtype=F64), atol=1e-12)
    one = torch.zeros(2, 10, dtype=torch.bool)
    one[:, 0] = True
    assert torch.isnan(angle_mmd(a, b, one)).all()


def test_reference_solutions_are_exact_where_converged():
    """With tight tolerances the converged reference solutions are exact (independent FK: 1e-9 m and rad), inside the
    limits, and ``converged`` is exactly the FK errors' verdict."""
    robot = Robot.from_name("ur10")
    g = torch.Generator().manual_seed(3)
    T = robot.fk(robot.sample_q(4, g))
    q, ok = reference_solutions(robot, T, 8, g, RefineConfig(pos_tol=1e-9, rot_tol=1e-9, max_iters=100))
    assert q.shape == (4, 8, 6) and ok.any(-1).all()
    pos, rot = pose_errors(robot.fk(q), T[:, None])
    assert pos[ok].max() < 1e-9 and rot[ok].max() < 1e-9, (pos[ok].max().item(), rot[ok].max().item())
    assert torch.equal(ok, (pos < 1e-9) & (rot < 1e-9))
    assert robot.within_limits(q).all()


def test_default_reference_solutions_are_within_the_solve_tolerances():
    """The tables' default (LM's 1 mm / 0.01 rad, :data:`SOLVE_TOLERANCES`; LM stops at the first iterate inside, so
    these are not exact): ``converged`` is exactly what independent FK says of the solutions."""
    robot = Robot.from_name("ur10")
    g = torch.Generator().manual_seed(3)
    T = robot.fk(robot.sample_q(4, g))
    q, ok = reference_solutions(robot, T, 8, g)
    assert ok.any(-1).all()
    pos, rot = pose_errors(robot.fk(q), T[:, None])
    tol = SOLVE_TOLERANCES
    assert torch.equal(ok, (pos < tol.pos_tol) & (rot < tol.rot_tol))
    assert robot.within_limits(q).all()


def _read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("which", ["accuracy", "seeding", "limits"])
def test_tables_have_one_row_per_robot_and_sane_values(tiny_ckpt, which):
    model, _ = load_model(tiny_ckpt)
    robots = [Robot.from_name("panda"), Robot.from_name("schunk_lwa4p")]
    cfg = EvalConfig(problems=5, samples=3, seed=0, mmd_problems=3, slsqp_problems=2)
    make = {"accuracy": accuracy_table, "seeding": seeding_table, "limits": limits_table}[which]
    table = make(model, robots, cfg, progress=False)
    per_robot = {"accuracy": 1, "seeding": 4, "limits": 1}[which]
    assert len(table.rows) == per_robot * len(robots)
    assert [r[0] for r in table.rows] == [n for n in ("panda", "schunk_lwa4p") for _ in range(per_robot)]
    for row in table.rows:
        for col, v in zip(table.columns, row):
            if "[%]" in col and v != "":
                assert 0.0 <= v <= 100.0, (col, v)
            if "[mm]" in col or "[deg]" in col:
                assert math.isfinite(v) and v >= 0.0, (col, v)
    if which == "seeding":
        lm_random = [r for r in table.rows if r[1] == "LM" and r[2] == "random"]
        assert all(r[4] >= 60.0 for r in lm_random), "LM from random starts solves most goals"
        assert all(r[7] == 0.0 for r in table.rows if r[2] == "random"), "random starts cost no sampling time"


def test_seeding_table_compares_few_samples_with_many_random_starts(tiny_ckpt):
    """``random_starts`` sets the random starts per goal apart from the model samples; the default keeps them equal,
    and the random rows of the default repeat those of a run whose random starts are named explicitly."""
    model, _ = load_model(tiny_ckpt)
    robots = [Robot.from_name("ur10")]
    cfg = EvalConfig(problems=4, samples=2, seed=0, slsqp_problems=1, random_starts=5)
    rows = [dict(zip(t.columns, r)) for t in [seeding_table(model, robots, cfg, progress=False)] for r in t.rows]
    assert {(r["solver"], r["starts"]): r["starts per goal"] for r in rows} == {
        ("LM", "random"): 5,
        ("LM", "GGIK"): 2,
        ("SLSQP", "random"): 5,
        ("SLSQP", "GGIK"): 2,
    }
    same = seeding_table(model, robots, EvalConfig(problems=4, samples=2, seed=0, slsqp_problems=1), progress=False)
    named = seeding_table(
        model, robots, EvalConfig(problems=4, samples=2, seed=0, slsqp_problems=1, random_starts=2), progress=False
    )
    assert [r[-1] for r in same.rows] == [2, 2, 2, 2]
    lm_random = [[r for r in t.rows if r[1] == "LM" and r[2] == "random"][0] for t in (same, named)]
    assert lm_random[0][4:6] == lm_random[1][4:6]  # success and iterations: same starts
    with pytest.raises(ValueError, match="random start"):
        seeding_table(model, robots, EvalConfig(problems=2, samples=2, random_starts=0), progress=False)


def test_ggik_eval_seeding_random_starts_flag(tiny_ckpt, tmp_path):
    argv = [
        "eval",
        "seeding",
        "--ckpt",
        str(tiny_ckpt),
        "--robots",
        "ur10",
        "-n",
        "2",
        "-s",
        "2",
        "--random-starts",
        "3",
        "--slsqp-goals",
        "1",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    rows = _read_csv(tmp_path / "seeding.csv")
    assert {(r["starts"], r["starts per goal"]) for r in rows} == {("random", "3"), ("GGIK", "2")}
    assert "2 GGIK samples vs 3 random starts per goal" in (tmp_path / "seeding.md").read_text()


def test_accuracy_stats_are_ordered(tiny_ckpt):
    model, _ = load_model(tiny_ckpt)
    table = accuracy_table(
        model, [Robot.from_name("ur10")], EvalConfig(problems=6, samples=5, mmd_problems=3), progress=False
    )
    row = dict(zip(table.columns, table.rows[0]))
    for unit in ("pos", "rot"):
        u = "mm" if unit == "pos" else "deg"
        assert (
            row[f"{unit} min [{u}]"] <= row[f"{unit} Q1 [{u}]"] <= row[f"{unit} Q3 [{u}]"] <= row[f"{unit} max [{u}]"]
        )
        assert row[f"{unit} min [{u}]"] <= row[f"{unit} mean [{u}]"] <= row[f"{unit} max [{u}]"]


def test_ggik_eval_writes_markdown_and_csv(tiny_ckpt, tmp_path, capsys):
    argv = [
        "eval",
        "limits",
        "--ckpt",
        str(tiny_ckpt),
        "--robots",
        "ur10",
        "-n",
        "3",
        "-s",
        "2",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    md = (tmp_path / "limits.md").read_text()
    assert "Command: `" in md and "--robots ur10" in md and "Machine:" in md and "Seed: 0" in md
    rows = _read_csv(tmp_path / "limits.csv")
    assert [r["robot"] for r in rows] == ["ur10"] and float(
        rows[0]["all joints"]
    ) == 100.0  # UR10 limits hold by wrapping


def test_ggik_eval_accuracy_writes_figures(tiny_ckpt, tmp_path):
    argv = [
        "eval",
        "accuracy",
        "--ckpt",
        str(tiny_ckpt),
        "--robots",
        "ur10",
        "-n",
        "3",
        "-s",
        "2",
        "--mmd-goals",
        "2",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    for name in ("accuracy.md", "accuracy.csv", "accuracy_ur10_errors.png", "accuracy_ur10_solutions.png"):
        data = (tmp_path / name).read_bytes()
        assert len(data) > 100
        if name.endswith(".png"):
            assert data[:8] == b"\x89PNG\r\n\x1a\n"


def test_ggik_eval_without_a_model_is_a_clear_error(tmp_path, capsys):
    assert main(["eval", "accuracy", "--ckpt", str(tmp_path / "none.pt"), "-n", "2"]) == 2
    assert "checkpoint not found" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- generalisation
from ggik import GGIKError, available_robots  # noqa: E402
from ggik.checkpoint import training_set  # noqa: E402
from ggik.data import TrainingData  # noqa: E402
from ggik.evaluation.generalisation import (  # noqa: E402
    FAMILY_MEAN,
    UnseenFamilies,
    generalisation_points,
    generalisation_table,
    structure_lengths,
)
from ggik.graph.robot_graph import RobotGraph  # noqa: E402
from ggik.kinematics.random_robots import randomize_links  # noqa: E402
from ggik.nn.cvae import GGIKModel  # noqa: E402

TINY_GEN = EvalConfig(problems=2, samples=2, seed=0)
#: panda and ur10 trained, kuka_lwr listed with weight 0 (so unseen), random 6-DOF robots trained
TRAINING = {
    "named": {"panda": 1.0, "ur10": 1.0, "kuka_lwr": 0.0},
    "random": {"weight": 1.0, "dofs": [6]},
    "randomized": {"weight": 0.0, "fraction": 0.2},
}


@pytest.fixture(scope="module")
def untrained_model():
    """The tiny architecture at initialisation (0 steps): the table's logic does not need a good model."""
    torch.manual_seed(0)
    return GGIKModel(from_dict(TrainConfig, load_yaml("train/configs/tiny.yaml")).model).eval()


def _rows(table):
    return [dict(zip(table.columns, row)) for row in table.rows]


def test_generalisation_table_families_exclusion_distances_and_means(untrained_model):
    table = generalisation_table(
        untrained_model,
        TRAINING,
        TINY_GEN,
        progress=False,
        families=UnseenFamilies(dofs=[6, 8], scales=[0.2], family_size=2),
    )
    rows = _rows(table)
    families = list(dict.fromkeys(r["family"] for r in rows))
    assert families == ["unseen named", "random 6-DOF", "random 8-DOF", "randomized r=0.2"]
    named = [r["robot"] for r in rows if r["family"] == "unseen named" and r["robot"] != FAMILY_MEAN]
    assert named == [n for n in available_robots() if n not in ("panda", "ur10")]  # weight 0 counts as unseen
    by_robot = {r["robot"]: r for r in rows if r["robot"] != FAMILY_MEAN}
    # distances: r for randomised training robots (bases cycle through the trained ones), edges otherwise
    assert [(n, r["distance to training set"], r["distance measure"]) for n, r in by_robot.items() if "~" in n] == [
        ("panda~0.2#0", 0.2, "scale r of panda"),
        ("ur10~0.2#1", 0.2, "scale r of ur10"),
    ]
    assert (
        by_robot["lbr_iiwa"]["distance measure"] == "edges vs panda"
        and 0 < by_robot["lbr_iiwa"]["distance to training set"] < 1
    )
    assert by_robot["puma560"]["distance measure"].startswith(
        "edges vs ur10 (upper bound"
    )  # random 6-DOF robots trained
    assert math.isnan(by_robot["random8_0"]["distance to training set"])
    assert by_robot["random8_0"]["distance measure"] == "n/a: no named training robot has 8 DOF"
    # one mean row closes every family, averaging its robots
    for fam in families:
        members = [r for r in rows if r["family"] == fam and r["robot"] != FAMILY_MEAN]
        (mean,) = [r for r in rows if r["family"] == fam and r["robot"] == FAMILY_MEAN]
        assert rows.index(mean) == max(rows.index(m) for m in members) + 1
        for col in table.columns[5:]:
            assert mean[col] == pytest.approx(sum(m[col] for m in members) / len(members)), (fam, col)
        known = [m["distance to training set"] for m in members if not math.isnan(m["distance to training set"])]
        if known:
            assert mean["distance to training set"] == pytest.approx(sum(known) / len(known))
        else:
            assert math.isnan(mean["distance to training set"])
    assert {r["dof"] for r in rows if r["family"] == "random 8-DOF"} == {8}
    for r in rows:
        for col in table.columns[5:]:
            assert math.isfinite(r[col]) and r[col] >= 0.0, (r["robot"], col)
            if "[%]" in col:
                assert r[col] <= 100.0
        assert r["pos best [mm]"] <= r["pos mean [mm]"] and r["rot best [deg]"] <= r["rot mean [deg]"]
    points = generalisation_points(table)
    assert [p[1] for p in points] == list(by_robot) and all(len(p) == 5 for p in points)
    assert any("independent streams" in n for n in table.notes)


def test_generalisation_random_robots_follow_the_seed(untrained_model):
    def random_edges(seed):
        t = generalisation_table(
            untrained_model,
            TRAINING,
            EvalConfig(problems=1, samples=1, seed=seed),
            progress=False,
            families=UnseenFamilies(robots=[], dofs=[6], scales=[], family_size=2),
        )
        return [r["distance to training set"] for r in _rows(t) if r["robot"] != FAMILY_MEAN]

    assert random_edges(0) == random_edges(0)
    assert random_edges(0) != random_edges(1)


def test_edge_distance_is_zero_for_a_copy_of_a_training_robot(untrained_model):
    copy = Robot.from_name("lbr_iiwa")
    copy.name = "my_iiwa"
    far = randomize_links(Robot.from_name("lbr_iiwa"), 0.4, 5)
    table = generalisation_table(
        untrained_model,
        {"named": {"lbr_iiwa": 1.0}},
        TINY_GEN,
        progress=False,
        families=UnseenFamilies(robots=[copy, far], dofs=[], scales=[]),
    )
    rows = _rows(table)
    assert rows[0]["distance to training set"] == 0.0 and rows[0]["distance measure"] == "edges vs lbr_iiwa"
    assert rows[1]["distance to training set"] > 0.01
    s = structure_lengths(RobotGraph.from_robot(copy))
    assert s.shape == (4 * 7,) and (s >= 0).all() and s.max() > 0.1


def test_generalisation_says_so_when_every_named_robot_was_trained(untrained_model):
    everything = {"named": {n: 1.0 for n in available_robots()}}
    table = generalisation_table(
        untrained_model,
        everything,
        TINY_GEN,
        progress=False,
        families=UnseenFamilies(dofs=[7], scales=[], family_size=1),
    )
    assert {r["family"] for r in _rows(table)} == {"random 7-DOF"}
    assert any("no unseen named robot" in n for n in table.notes)
    with pytest.raises(GGIKError, match="nothing to evaluate: All 9 named robots"):
        generalisation_table(
            untrained_model, everything, TINY_GEN, progress=False, families=UnseenFamilies(dofs=[], scales=[])
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(dofs=[1]), "integer DOF >= 2"),
        (dict(scales=[0.0]), r"must lie in \(0, 1\)"),
        (dict(scales=[1.0]), r"must lie in \(0, 1\)"),
        (dict(family_size=0), "positive integer"),
        (dict(robots=[Robot.from_name("panda")]), "in the checkpoint's training set"),
        (dict(cfg=EvalConfig(problems=0, samples=2)), "must be >= 1"),
    ],
)
def test_generalisation_bad_options_are_errors(untrained_model, kwargs, message):
    cfg = kwargs.pop("cfg", TINY_GEN)
    with pytest.raises(GGIKError, match=message):
        families = UnseenFamilies(**{"dofs": [6], "scales": [], **kwargs})
        generalisation_table(untrained_model, TRAINING, cfg, families, progress=False)


def test_training_set_from_checkpoint_or_config():
    cfg = from_dict(TrainConfig, load_yaml("train/configs/tiny.yaml"))
    described = TrainingData(cfg.data).describe()
    assert training_set({"training_robots": described}) == described
    from ggik.typed_config import to_dict

    assert training_set({"config": to_dict(cfg)}) == described  # a file without training_robots
    with pytest.raises(GGIKError, match="cannot tell which robots are unseen"):
        training_set({})


def test_ggik_eval_generalisation_writes_table_and_figure(tiny_ckpt, tmp_path, capsys):
    import importlib.util

    figure = importlib.util.find_spec("matplotlib") is not None
    argv = [
        "eval",
        "generalisation",
        "--ckpt",
        str(tiny_ckpt),
        "--robots",
        "ur10",
        "--dofs",
        "7",
        "--scales",
        "0.1",
        "--family-size",
        "1",
        "-n",
        "2",
        "-s",
        "2",
        "--out-dir",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv + (["--figure"] if figure else [])) == 0
    md = (tmp_path / "generalisation.md").read_text()
    assert "Command: `ggik eval generalisation" in md and "Machine:" in md and "Seed: 0" in md
    rows = _read_csv(tmp_path / "generalisation.csv")
    assert [(r["family"], r["robot"]) for r in rows] == [
        ("unseen named", "ur10"),
        ("unseen named", FAMILY_MEAN),
        ("random 7-DOF", "random7_0"),
        ("random 7-DOF", FAMILY_MEAN),
        ("randomized r=0.1", "panda~0.1#0"),
        ("randomized r=0.1", FAMILY_MEAN),
    ]
    if figure:
        assert (tmp_path / "generalisation.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()
    assert main(["eval", "generalisation", "--ckpt", str(tiny_ckpt), "--robots", "panda", "-n", "2"]) == 2
    assert "training set" in capsys.readouterr().err
