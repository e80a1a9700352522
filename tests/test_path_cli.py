"""Path files (ggik.path.files), ``ggik path`` and ``ggik eval paths`` on a tiny suite, the suite's shapes, and the
path figure."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest
import torch

from ggik import Robot
from ggik.cli import main
from ggik.cli.path_output import ProgressBar
from ggik.errors import PathFileError
from ggik.evaluation.path_baselines import sequential_lm
from ggik.evaluation.path_suite import PathSuiteError, SuitePath, read_suite
from ggik.kinematics.geometry import matrix_to_quat, pose_errors
from ggik.path.files import read_path_csv, read_trajectory_csv, write_path_csv, write_trajectory_csv

F64 = torch.float64


def smooth_poses(robot: Robot, T: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    mid, half = (robot.lower + robot.upper) / 2, (robot.upper - robot.lower) / 2
    qa = mid + 0.4 * half * (2 * torch.rand(robot.dof, generator=g, dtype=F64) - 1)
    s = torch.linspace(0, 1, T, dtype=F64)[:, None]
    q = qa + 0.5 * (2 * torch.rand(robot.dof, generator=g, dtype=F64) - 1) * s
    return q, robot.fk(q)


# ---------------------------------------------------------------------------------------------- files
def test_path_file_round_trip_with_header_index_and_comments(tmp_path):
    robot = Robot.from_name("panda")
    _, poses = smooth_poses(robot, 7)
    write_path_csv(tmp_path / "p.csv", poses)
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "x,y,z,qw,qx,qy,qz" and len(lines) == 8
    back = read_path_csv(tmp_path / "p.csv")
    torch.testing.assert_close(back, poses, rtol=0, atol=1e-11)
    # an index column, a comment, blank lines, no header, a quaternion rounded to 4 digits: all accepted
    quat = matrix_to_quat(poses[:, :3, :3])
    rows = ["# written by hand", ""] + [
        ",".join([str(i)] + [f"{v:.12g}" for v in poses[i, :3, 3].tolist()] + [f"{v:.4f}" for v in quat[i].tolist()])
        for i in range(7)
    ]
    (tmp_path / "q.csv").write_text("\n".join(rows) + "\n")
    back = read_path_csv(tmp_path / "q.csv")
    pos, rot = pose_errors(back, poses)
    assert pos.max() < 1e-11 and rot.max() < 1e-3
    torch.testing.assert_close(
        back[:, :3, :3] @ back[:, :3, :3].transpose(-1, -2), torch.eye(3, dtype=F64).expand(7, 3, 3), rtol=0, atol=1e-12
    )  # normalised


@pytest.mark.parametrize(
    "text, message",
    [
        ("x,y,z,qw,qx,qy,qz\n", r"no waypoints"),
        ("", r"no waypoints"),
        ("0.1,0.2,0.3,1,0,0\n", r"line 1: expected 7 columns x,y,z,qw,qx,qy,qz \(or 8 with an index first\), found 6"),
        ("x,y,z,qw,qx,qy,qz\n0.1,0.2,0.3,1,0,0,0\n0.1,0.2,0.3,1,0,0,0,0,0\n", r"line 3: expected 7 columns"),
        ("0.1,0.2,0.3,1,0,0,0\n0.1,0.2,nan,1,0,0,0\n", r"line 2: NaN or inf"),
        (
            "0.1,0.2,0.3,1,0,0,0\n0.1,0.2,0.3,0.5,0,0,0\n",
            r"line 2: the quaternion \(qw, qx, qy, qz\) must be a unit quaternion, its norm is 0\.5",
        ),
        ("0.1,0.2,0.3,1,0,0,0\n0.1,zero,0.3,1,0,0,0\n", r"line 2: not a number"),
    ],
)
def test_malformed_path_files_are_clear_errors(tmp_path, text, message):
    f = tmp_path / "bad.csv"
    f.write_text(text)
    with pytest.raises(PathFileError, match=message):
        read_path_csv(f)
    with pytest.raises(FileNotFoundError, match="path file not found"):
        read_path_csv(tmp_path / "missing.csv")


def test_trajectory_file_round_trip(tmp_path):
    q = torch.randn(5, 3, generator=torch.Generator().manual_seed(0), dtype=F64)
    write_trajectory_csv(tmp_path / "t.csv", q, ["a", "b", "c"])
    assert (tmp_path / "t.csv").read_text().splitlines()[0] == "a,b,c"
    torch.testing.assert_close(read_trajectory_csv(tmp_path / "t.csv", 3), q, rtol=0, atol=1e-11)
    with pytest.raises(PathFileError, match="expected 4 finite numbers"):
        read_trajectory_csv(tmp_path / "t.csv", 4)
    with pytest.raises(ValueError, match=r"q must have shape \(T, 2\)"):
        write_trajectory_csv(tmp_path / "u.csv", q, ["a", "b"])


# ---------------------------------------------------------------------------------------------- ggik path
@pytest.mark.timing  # a search on the real clock, its time limit
def test_cli_path_round_trip_without_a_model(tmp_path, capsys):
    robot = Robot.from_name("ur10")
    _, poses = smooth_poses(robot, 40, seed=1)
    write_path_csv(tmp_path / "path.csv", poses)
    out = tmp_path / "traj.csv"
    code = main(
        [
            "path",
            "--robot",
            "ur10",
            "--path",
            str(tmp_path / "path.csv"),
            "--out",
            str(out),
            "-s",
            "0",
            "--time-limit",
            "10",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert "\nvalid trajectory\n" in text and f"wrote {out}" in text and "random starts only" in text
    assert re.search(r"time to the first valid trajectory \[s\]: +\d", text)
    q = read_trajectory_csv(out, robot.dof)
    assert out.read_text().splitlines()[0] == ",".join(robot.joint_names)
    pos, rot = pose_errors(robot.fk(q), read_path_csv(tmp_path / "path.csv"))
    assert q.shape == (40, robot.dof) and pos.max() < 1e-4 and rot.max() < math.radians(0.1)
    assert (q[1:] - q[:-1]).abs().max() <= math.radians(7.0)


@pytest.mark.timing  # a search on the real clock, its time limit
def test_cli_path_with_a_model_start_configuration_and_json(tmp_path, capsys, tiny_ckpt):
    robot = Robot.from_name("panda")
    q_true, poses = smooth_poses(robot, 30, seed=2)
    write_path_csv(tmp_path / "path.csv", poses)
    code = main(
        [
            "path",
            "--robot",
            "panda",
            "--path",
            str(tmp_path / "path.csv"),
            "-s",
            "4",
            "--ckpt",
            tiny_ckpt,
            "--start",
            *[str(v) for v in q_true[0].tolist()],
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["valid"] and out["waypoints"] == 30 and out["unreached"] == []
    q = torch.tensor(out["q"], dtype=F64)
    assert (q[0] - q_true[0]).abs().max() <= math.radians(7.0)


@pytest.mark.timing  # a search on the real clock, its time limit
def test_cli_path_names_unreachable_waypoints(tmp_path, capsys):
    robot = Robot.from_name("panda")
    _, poses = smooth_poses(robot, 20, seed=3)
    poses[[5, 6, 7], 2, 3] += 4.0  # 4 m up: out of reach
    write_path_csv(tmp_path / "path.csv", poses)
    code = main(
        [
            "path",
            "--robot",
            "panda",
            "--path",
            str(tmp_path / "path.csv"),
            "-s",
            "0",
            "--time-limit",
            "0.5",
            "--out",
            str(tmp_path / "t.csv"),
        ]
    )
    text = capsys.readouterr().out
    assert code == 1
    # poses[5:8] (0-based) are the waypoints 6-8, numbered from 1 as the CSV's data rows
    assert "no valid trajectory" in text and "waypoints not reached (tolerance or limits): 6-8" in text
    assert "waypoints where no valid configuration was found at all (likely impossible there): 6-8" in text
    assert re.search(r"time to the first valid trajectory \[s\]: +never \(no valid trajectory\)", text)
    assert read_trajectory_csv(tmp_path / "t.csv").shape == (20, 7)  # the best trajectory is written anyway


def test_the_progress_bar_shows_once_the_search_reports_its_delay(capsys):
    """``ggik path``'s bar (stderr) appears once the search reports a second elapsed on its own clock, not before;
    the elapsed times here are the ones a search would report, so no wall clock decides what is shown."""
    bar = ProgressBar(10.0)
    bar(1, 0.4, 1200, False)
    bar(2, 0.99, 1200, False)
    bar.close()
    assert capsys.readouterr().err == "" and bar.bar is None  # a search under a second prints nothing
    bar = ProgressBar(10.0)
    bar(1, 0.5, 1200, False)
    bar(2, 1.0, 12, False)
    assert bar.bar is not None and bar.bar.n == 1.0 and bar.bar.total == 10.0
    bar(3, 25.0, 0, True)  # past the limit (the round that started before it ran on): the bar stops at the limit
    assert bar.bar.n == 10.0
    bar.close()
    err = capsys.readouterr().err
    assert "path search" in err and "round 2, 12 waypoints failing" in err and "1200" not in err
    quick = ProgressBar(10.0, delay=0.0)
    quick(1, 0.0, 3, False)
    quick.close()
    assert "round 1, 3 waypoints failing" in capsys.readouterr().err


def test_cli_path_bad_options(tmp_path, capsys):
    robot = Robot.from_name("panda")
    write_path_csv(tmp_path / "path.csv", smooth_poses(robot, 3)[1])
    assert main(["path", "--robot", "panda", "--path", str(tmp_path / "path.csv"), "-s", "0", "--start", "0.1"]) == 2
    assert re.search(r"--start must be one configuration of 7 joint values \(panda_joint1, ", capsys.readouterr().err)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--time-limit", "0"], r"argument --time-limit: must be a positive number, got 0"),
        (["--time-limit", "inf"], r"argument --time-limit: must be a positive number, got inf"),
        (["-s", "-1"], r"argument -s/--samples: must be an integer >= 0, got -1"),
        (["-s", "two"], r"argument -s/--samples: expected an integer, got 'two'"),
        (["--pos-tol=-1e-4"], r"argument --pos-tol: must be a positive number, got -1e-4"),
    ],
)
def test_cli_path_bad_values_are_argparse_errors(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as exit_:
        main(["path", "--robot", "panda", "--path", str(tmp_path / "path.csv"), *args])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)


def test_cli_path_malformed_file_exits_2(tmp_path, capsys):
    (tmp_path / "bad.csv").write_text("0.1,0.2,0.3,1,0,0\n")
    assert main(["path", "--robot", "panda", "--path", str(tmp_path / "bad.csv"), "-s", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ggik: error: ") and "bad.csv, line 1: expected 7 columns" in err
    assert main(["path", "--robot", "panda", "--path", str(tmp_path / "none.csv"), "-s", "0"]) == 2
    assert "path file not found" in capsys.readouterr().err


# ---------------------------------------------------------------------------------------------- suite, benchmark
@pytest.mark.timing  # a search on the real clock, its time limit
def test_eval_paths_on_a_tiny_suite(tmp_path, capsys):
    robot = Robot.from_name("kr16_2")
    q, poses = smooth_poses(robot, 25, seed=4)
    write_path_csv(tmp_path / "suite" / "kr16_2_easy.csv", poses)
    entry = SuitePath(
        name="kr16_2_easy",
        robot="kr16_2",
        kind="line",
        file="kr16_2_easy.csv",
        waypoints=25,
        q_start=q[0].tolist(),
        note="test",
    )
    (tmp_path / "suite" / "suite.json").write_text(
        json.dumps({"format": "ggik-path-suite-1", "paths": [entry.__dict__]})
    )
    assert read_suite(tmp_path / "suite") == [entry]
    out = tmp_path / "results"
    code = main(
        [
            "eval",
            "paths",
            "--suite",
            str(tmp_path / "suite"),
            "--out-dir",
            str(out),
            "--no-progress",
            "--methods",
            "random starts + continuation",
            "sequential LM",
            "--chains",
            "4",
            "--time-limit",
            "5",
        ]
    )
    assert code == 0
    rows = list(csv.DictReader(io.StringIO((out / "paths.csv").read_text())))
    assert list(rows[0])[:6] == ["path", "robot", "dof", "waypoints", "method", "valid"] and len(rows) == 2
    assert [r["method"] for r in rows] == ["random starts + continuation", "sequential LM"]
    assert all(r["valid"] == "True" and float(r["mjac [deg]"]) <= 7.0 for r in rows)
    assert (out / "paths_summary.md").is_file() and (out / "paths" / "kr16_2_easy.png").is_file()
    assert "Command: `ggik eval paths --suite" in (out / "paths.md").read_text()


# ---------------------------------------------------------------------------------------------- fixed in review
def test_a_bad_first_waypoint_is_an_error_not_a_header(tmp_path):
    """Only a line without any number is a header: a typo in the first waypoint used to drop it silently."""
    f = tmp_path / "p.csv"
    f.write_text("0.1,zero,0.3,1,0,0,0\n0.1,0.2,0.3,1,0,0,0\n")
    with pytest.raises(PathFileError, match=r"line 1: not a number"):
        read_path_csv(f)
    f.write_text("a,b\n0.1,0.2\n0.3,bad\n")
    with pytest.raises(PathFileError, match=r"line 3: expected 2 finite numbers"):
        read_trajectory_csv(f)
    f.write_text("a,2\n0.1,0.2\n")  # a header with a number in it is read as data
    with pytest.raises(PathFileError, match=r"line 1: expected 2 finite numbers"):
        read_trajectory_csv(f)


def test_write_path_csv_rejects_bad_poses(tmp_path):
    with pytest.raises(ValueError, match=r"poses must have shape \(T, 4, 4\)"):
        write_path_csv(tmp_path / "p.csv", torch.eye(4, dtype=F64))
    with pytest.raises(ValueError, match="not a rigid transform"):
        write_path_csv(tmp_path / "p.csv", torch.diag(torch.tensor([2.0, 1.0, 1.0, 1.0], dtype=F64))[None])


@pytest.mark.timing  # a search on the real clock, its time limit
def test_cli_path_json_is_strict_json_when_invalid(tmp_path, capsys):
    """time_to_valid is NaN without a valid trajectory: --json writes null (NaN is not JSON)."""
    robot = Robot.from_name("panda")
    _, poses = smooth_poses(robot, 8, seed=5)
    poses[3, 2, 3] += 4.0
    write_path_csv(tmp_path / "path.csv", poses)
    code = main(
        ["path", "--robot", "panda", "--path", str(tmp_path / "path.csv"), "-s", "0", "--time-limit", "0.5", "--json"]
    )

    def no_constants(name):
        raise AssertionError(f"not JSON: {name}")

    out = json.loads(capsys.readouterr().out, parse_constant=no_constants)
    assert code == 1 and out["valid"] is False and out["time_to_valid_s"] is None and out["unreached"] == [4]
    assert out["no_candidate"] == [4]


def test_suite_and_baseline_inputs_are_checked(tmp_path):
    robot = Robot.from_name("panda")
    (tmp_path / "suite.json").write_text(json.dumps({"paths": []}))
    with pytest.raises(PathSuiteError, match="not a path suite"):
        read_suite(tmp_path)
    _, poses = smooth_poses(robot, 3)
    with pytest.raises(ValueError, match=r"poses must have shape \(T, 4, 4\)"):
        sequential_lm(robot, poses[0], 2)
    with pytest.raises(ValueError, match="q_start must be one configuration within the joint limits"):
        sequential_lm(robot, poses, 2, q_start=robot.upper + 1)


def test_cli_path_start_outside_the_limits_names_the_joints(tmp_path, capsys):
    robot = Robot.from_name("panda")
    write_path_csv(tmp_path / "path.csv", smooth_poses(robot, 3)[1])
    start = [str(v) for v in ((robot.lower + robot.upper) / 2).tolist()]
    start[3] = "3.5"  # panda_joint4 lies in [-3.07, -0.07]
    argv = ["path", "--robot", "panda", "--path", str(tmp_path / "path.csv"), "-s", "0", "--start", *start]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--start must be one configuration within the joint limits: panda_joint4 = 3.5 outside [" in err
    assert "panda_joint1" not in err
    start[3] = "nan"
    assert main(argv[:-7] + start) == 2
    assert "--start: every value must be a finite number" in capsys.readouterr().err
