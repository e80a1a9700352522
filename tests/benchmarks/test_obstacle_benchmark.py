"""The obstacle benchmark (benchmarks/obstacles): scenes and their goals and paths, and a tiny run of the script."""

from __future__ import annotations

import csv

import pytest
import torch

from benchmarks.obstacles import bench_obstacles
from benchmarks.obstacles.scenes import SCENES, build_scene, reach, scene_goals, scene_paths
from ggik import Robot
from ggik.collision import Clearance, CollisionModel
from ggik.path.motion import motion_clearance

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scene", SCENES)
def test_goals_and_paths_have_collision_free_witnesses(scene):
    robot = Robot.from_name("ur10")
    model = CollisionModel.from_robot(robot)
    case = build_scene(scene, reach(robot))
    check = Clearance(robot, model, case.scene)
    T, witnesses = scene_goals(robot, case, model, 5, seed=1)
    assert T.shape == (5, 4, 4)
    torch.testing.assert_close(robot.fk(witnesses), T)
    assert check.collision_free(witnesses).all() and case.inside(T[:, :3, 3].float()).all()
    for poses, motion in scene_paths(robot, case, model, witnesses, 2, 20, seed=1):
        torch.testing.assert_close(robot.fk(motion), poses)
        assert (motion_clearance(check, motion) >= 0).all()
        assert bool(case.inside(poses[0, :3, 3].float())) == (scene == "corridor")  # threads along, or reaches in
        assert bool(case.inside(poses[-1, :3, 3].float()))
    with pytest.raises(ValueError, match="unknown scene"):
        build_scene("kitchen", 1.0)


def test_bench_obstacles_tiny_run(tmp_path, capsys):
    out = tmp_path / "obstacles"
    args = ["--robots", "panda", "--scenes", "gap", "--goals", "3", "--samples", "4", "--reference-goals", "2",
            "--reference-starts", "16", "--paths", "1", "--waypoints", "15", "--path-time-limit", "3",
            "--threads", "1", "--out", str(out), "--figures", str(tmp_path / "figs")]  # fmt: skip
    assert bench_obstacles.main(args) == 0
    with open(f"{out}.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["method"] for r in rows][:3] == ["GGIK + LM, clearance", "random + LM, clearance",
                                               "random + LM, then checked"]  # fmt: skip
    assert all(0 <= float(r["solved [%]"]) <= 100 for r in rows)
    with open(f"{out}_paths.csv", newline="") as f:
        paths = list(csv.DictReader(f))
    assert len(paths) == 4 and all(r["scene"] == "gap" for r in paths)
    assert (tmp_path / "figs" / "panda_gap.png").stat().st_size > 10_000
    assert "sha256" in (tmp_path / "obstacles.md").read_text()
    with pytest.raises(SystemExit, match="unknown"):
        bench_obstacles.main(["--robots", "panda", "--scenes", "kitchen", "--threads", "1"])
    with pytest.raises(SystemExit, match="--robots"):
        bench_obstacles.main(["--robots", "r2d2", "--threads", "1"])
