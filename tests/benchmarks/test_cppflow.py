"""CppFlow's benchmark problems as ggik inputs (benchmarks/cppflow): the loader follows CppFlow's own rules (the path's
offset in its frame, w-first quaternions, cubes in the world frame), and a problem runs end to end."""

from __future__ import annotations

import csv
import math

import pytest
import torch
import yaml

from benchmarks.common.scripts import BenchmarkError
from benchmarks.cppflow.problems import DATA, OBSTACLE_PROBLEMS, PROBLEMS, cppflow_robot, load_problem
from benchmarks.cppflow.run_runs import COLUMNS, RUN_COLUMNS, cppflow_table, solve_problem
from ggik import GGIK, PathConfig
from ggik.kinematics.geometry import check_pose


def raw(name: str) -> tuple[dict, list[list[float]]]:
    spec = yaml.safe_load((DATA / "problems" / f"{name}.yaml").read_text())
    with (DATA / "paths" / f"{spec['path_name']}.csv").open() as f:
        rows = [[float(v) for v in r[1:]] for r in list(csv.reader(f))[1:]]
    return spec, rows


@pytest.mark.parametrize("name", PROBLEMS)
def test_every_problem_loads_as_its_files_say(name):
    problem = load_problem(name)
    spec, rows = raw(name)
    check_pose(problem.poses, name)
    assert problem.poses.shape == (len(rows), 4, 4)
    robot = problem.robot
    origin = [0.0, 0.0, 0.0]
    if spec["path_offset_frame"] != "world":  # the frame's position at the zero configuration, by FK here
        k = robot.link_names.index(spec["path_offset_frame"])
        origin = robot.link_poses(torch.zeros(robot.dof, dtype=torch.float64))[k, :3, 3].tolist()
    for t in (0, len(rows) // 2, len(rows) - 1):
        want = [rows[t][i] + spec["path_xyz_offset"][i] + origin[i] for i in range(3)]
        assert problem.poses[t, :3, 3].tolist() == pytest.approx(want, abs=1e-12)
        w, x, y, z = rows[t][3:7]  # R_offset is the identity in every file: the rotation is the quaternion's
        R = problem.poses[t, :3, :3]
        n = math.sqrt(w * w + x * x + y * y + z * z)
        assert float(R[0, 0]) == pytest.approx(1 - 2 * (y * y + z * z) / n**2, abs=1e-9)
        assert float(R[1, 0]) == pytest.approx(2 * (x * y + w * z) / n**2, abs=1e-9)
    cubes = spec.get("obstacles") or []
    assert len(problem.scene.boxes) == len(cubes) and (name in OBSTACLE_PROBLEMS) == bool(cubes)
    for box, entries in zip(problem.scene.boxes, cubes):
        cube = {k: v for e in entries for k, v in e.items()}
        assert box.size == (cube["size_x"], cube["size_y"], cube["size_z"])
        assert box.xyz == pytest.approx([cube[k] + spec["obstacle_xyz_offset"][i] for i, k in enumerate("xyz")])
    assert robot.dof == {"panda": 7, "fetch": 8, "fetch_arm": 7}[spec["robot"]]


def test_the_robots_are_cppflows_and_bad_names_are_refused():
    fetch, arm = cppflow_robot("fetch"), cppflow_robot("fetch_arm")
    assert fetch.joint_types[0] == "prismatic" and "torso_lift_joint" not in arm.joint_names
    assert cppflow_robot("panda").ee_link == "panda_hand"
    with pytest.raises(BenchmarkError, match="unknown CppFlow robot"):
        cppflow_robot("ur5")
    with pytest.raises(BenchmarkError, match="unknown CppFlow problem"):
        load_problem("panda__maze")


@pytest.mark.parametrize("name", ["panda__flappy_bird", "fetch__s"])
def test_a_problem_runs_end_to_end_on_its_first_waypoints(name):
    """Five waypoints, one round: a row of every column (the Fetch with its torso from random starts only)."""
    problem = load_problem(name)
    short = type(problem)(problem.name, problem.robot, problem.poses[:5], problem.scene, problem.source)
    config = PathConfig(samples=2, starts=8, max_rounds=1)
    for keep_clear in ("ggik", "cppflow"):
        row = solve_problem(GGIK.pretrained(), short, config, torch.Generator().manual_seed(0), keep_clear)
        assert len(row) == len(RUN_COLUMNS) and row[0] == name and row[2] == 5 and {row[4], row[5]} <= {"yes", "no"}


def test_the_table_counts_valid_runs_each_from_its_own_seed(monkeypatch):
    """--reruns N: N runs per problem from N seeds; the row shows the first run, the valid count and the times of
    the valid runs only (median and max), and a note sums every run."""
    from argparse import Namespace

    import benchmarks.cppflow.run_runs as runs

    seen: list[int] = []

    def fake(solver, problem, config, generator, keep_clear):
        seen.append(int(generator.initial_seed()))
        valid = "no" if len(seen) == 2 else "yes"
        return [problem.name, 7, 200, 2, valid, "yes", 0.1, 0.1, 1.0, 0.0, 0, 0, float(len(seen)), 9.0]

    monkeypatch.setattr(runs, "solve_problem", fake)
    options = dict(time_limit=1.0, max_rounds=1, starts=None, samples=None, reruns=3, seed=0, progress=False)
    args = Namespace(collision_model="cppflow", **options)
    table = cppflow_table(args, GGIK.pretrained(), ["panda__1cube"])
    assert len(set(seen)) == 3 and len(table.rows) == 1
    row = dict(zip(COLUMNS, table.rows[0]))
    assert row["valid runs (CppFlow's capsules)"] == "2/3" and row["time to valid [s]"] == 1.0
    assert row["median time to valid over valid runs [s]"] == 2.0
    assert row["max time to valid over valid runs [s]"] == 3.0
    assert "all runs: 2 of 3 valid" in table.notes[-1]
    with pytest.raises(BenchmarkError, match="unknown problems"):
        cppflow_table(args, GGIK.pretrained(), ["panda__square"])


def test_cppflows_capsules_follow_its_pair_rule_and_clear_the_home_configuration():
    """jrl's rule: every pair of capsuled links but the ignored ones and those joined by a joint of the chain (the
    Panda: 9 capsules, 36 pairs, 7 adjacent, 13 ignored: 16 checked); the head of the Fetch rides on its torso; at the
    middle of the joint ranges neither robot collides with itself."""
    from benchmarks.cppflow.capsules import cppflow_collision_model

    panda = cppflow_robot("panda")
    model = cppflow_collision_model(panda, "panda")
    assert len(model.radius) == 9 and len(model.self_pairs) == 16
    fetch = cppflow_robot("fetch")
    head = cppflow_collision_model(fetch, "fetch")
    assert fetch.link_names[int(head.link[-1])] == "torso_lift_link" and len(head.radius) == 11
    for robot, m in ((panda, model), (fetch, head)):
        mid = torch.where(robot.limited, (robot.lower + robot.upper) / 2, torch.zeros(robot.dof, dtype=torch.float64))
        assert float(m.self_distances(robot, mid[None]).min()) > 0
    with pytest.raises(BenchmarkError, match="no CppFlow capsules"):
        cppflow_collision_model(panda, "ur5")


def test_fetch_arm_rot_yz2_is_valid_by_cppflows_rules_once_self_pairs_are_kept_off_contact():
    """The regression of CollisionConfig.self_margin: with 0 (pairs pushed only to contact), LM left the Fetch's forearm
    and wrist capsules at distance 0 to round-off, where CppFlow's ``< 0`` test counted some waypoints as colliding
    and no round of path following got a valid trajectory; with the 1 mm default the first round does."""
    from benchmarks.cppflow.run_runs import CPPFLOW_PATHS
    from ggik.rng import step_generator

    name = "fetch_arm__rot_yz2"
    generator = step_generator(0, CPPFLOW_PATHS, list(PROBLEMS).index(name))
    row = solve_problem(GGIK.pretrained(), load_problem(name), PathConfig(max_rounds=1), generator, "cppflow")
    assert row[COLUMNS.index("valid (CppFlow's capsules)")] == "yes", row
    assert row[COLUMNS.index("colliding waypoints (CppFlow's capsules)")] == 0


def test_the_comparison_has_cppflows_published_row_for_every_problem_and_counts_runs():
    from benchmarks.cppflow.compare import PUBLISHED, compare_table

    assert set(PUBLISHED) == set(PROBLEMS)
    fake = {
        p: {"valid runs (CppFlow's capsules)": f"{i % 3}/2", "median time to valid over valid runs [s]": "n/a"}
        for i, p in enumerate(PROBLEMS)
    }
    table = compare_table({"A": fake}).splitlines()
    assert len(table) == 2 + len(PROBLEMS) + 1
    assert table[-1].split("|")[4].strip() == f"{sum(i % 3 for i in range(len(PROBLEMS)))}/{2 * len(PROBLEMS)}"
    flappy = PROBLEMS.index("panda__flappy_bird") % 3
    assert f"| panda__flappy_bird | 0.630 | 100 / 100 % | {flappy}/2 | n/a |" in table


def test_the_committed_comparison_is_the_committed_runs():
    from benchmarks.cppflow.compare import RUNS, compare_table, read_run

    committed = (DATA.parent / "results" / "compare.md").read_text(encoding="utf-8")
    assert committed.endswith(compare_table({name: read_run(path) for name, path in RUNS.items()}))
