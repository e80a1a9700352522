"""Training robots from URDF files (``data.robots`` entries with ``urdf:``): resolution, errors naming the entry, the
texts kept in checkpoints, training, validation and ``ggik info`` on them."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch

from ggik.checkpoint import load_checkpoint, merge_training_sets
from ggik.cli import main as cli_main
from ggik.data import DataConfig, TrainingData
from ggik.errors import GGIKError
from ggik.kinematics import Robot, random_robot
from ggik.kinematics.robot_files import (
    RobotFile,
    chain_differences,
    chain_options,
    kinematic_signature,
    robot_from_record,
    training_robots,
)
from ggik.training.config import TrainConfig
from ggik.training.trainer import Trainer
from ggik.typed_config import ConfigError, apply_overrides, from_dict, load_yaml

REPO = Path(__file__).resolve().parents[1]
FETCH = REPO / "benchmarks/adapt/urdfs/fetch_formatted.urdf"


def _random_file(tmp_path: Path, dof: int, seed: int, name: str | None = None) -> Path:
    robot = random_robot(dof, torch.Generator().manual_seed(seed), name=name or f"arm{seed}")
    path = tmp_path / f"{robot.name}.urdf"
    path.write_text(robot.to_urdf())
    return path


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_file_robot_is_the_file_chain_and_its_record_rebuilds_it(tmp_path, seed):
    path = _random_file(tmp_path, 5 + seed % 3, seed)
    (tr,) = training_robots({"mine": {"urdf": str(path), "weight": 2.5}})
    direct = Robot.from_urdf(path)
    q = direct.sample_q(16, torch.Generator().manual_seed(seed))
    assert tr.name == "mine" and tr.weight == 2.5 and tr.robot.name == "mine"
    torch.testing.assert_close(tr.robot.fk(q), direct.fk(q), atol=1e-12, rtol=0)
    assert tr.record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    path.unlink()  # the record keeps the text: the robot no longer needs the file
    again = robot_from_record("mine", tr.record)
    torch.testing.assert_close(again.fk(q), direct.fk(q), atol=1e-12, rtol=0)
    assert kinematic_signature(again) == kinematic_signature(direct)


def test_kinematic_signature_tells_arms_apart_and_ignores_names(tmp_path):
    a, b = (random_robot(6, torch.Generator().manual_seed(s)) for s in (10, 11))
    renamed = Robot.from_urdf(a.to_urdf().replace(a.name, "other_name"))
    assert kinematic_signature(a) != kinematic_signature(b)
    assert kinematic_signature(a) == kinematic_signature(renamed)


def test_a_folder_is_one_robot_per_file(tmp_path):
    folder = tmp_path / "arms"
    folder.mkdir()
    for seed in (4, 5):
        _random_file(folder, 6, seed)
    out = training_robots({"family": {"urdf": str(folder), "weight": 0.5}, "panda": 1.0})
    assert [tr.name for tr in out] == ["family.arm4", "family.arm5", "panda"]
    assert [tr.weight for tr in out] == [0.5, 0.5, 1.0]
    assert out[2].record is None and out[0].record["path"].endswith("arm4.urdf")


def test_errors_name_the_entry(tmp_path):
    with pytest.raises(GGIKError, match=r"data.robots.gone: URDF file .*missing.urdf not found"):
        training_robots({"gone": {"urdf": str(tmp_path / "missing.urdf")}})
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(GGIKError, match=r"data.robots.fam: folder .* holds no \*.urdf"):
        training_robots({"fam": {"urdf": str(empty)}})
    path = _random_file(tmp_path, 6, 7)
    with pytest.raises(GGIKError, match=r"data.robots.arm \(.*\): .*nowhere"):
        training_robots({"arm": {"urdf": str(path), "ee_link": "nowhere"}})
    with pytest.raises(GGIKError, match=r"data.robots.fetch .*torso_lift_joint.* prismatic.*lock: \{torso_lift_joint"):
        training_robots({"fetch": {"urdf": str(FETCH), "base_link": "base_link", "ee_link": "gripper_link"}})
    with pytest.raises(GGIKError, match=r"data.robots.fetch .*lock: .*no_such_joint"):
        training_robots({"fetch": {"urdf": str(FETCH), "ee_link": "gripper_link", "lock": {"no_such_joint": 0.0}}})
    with pytest.raises(GGIKError, match=r"data.robots.pandaa: unknown shipped robot"):
        training_robots({"pandaa": 1.0})
    with pytest.raises(GGIKError, match=r"data.robots.arm: weight must be a finite number >= 0"):
        training_robots({"arm": {"urdf": str(path), "weight": -1.0}})
    twin = tmp_path / "panda_copy.urdf"
    twin.write_text(Robot.from_name("panda").to_urdf())
    with pytest.raises(GGIKError, match=r"copy and panda are the same arm"):
        training_robots({"panda": 1.0, "copy": {"urdf": str(twin)}})
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['wieght'\]"):
        from_dict(DataConfig, {"robots": {"arm": {"urdf": str(path), "wieght": 1.0}}})


def test_a_locked_prismatic_joint_trains(tmp_path):
    entry = {"urdf": str(FETCH), "base_link": "base_link", "ee_link": "gripper_link", "lock": {"torso_lift_joint": 0.1}}
    data = TrainingData(from_dict(DataConfig, {"robots": {"fetch": entry}, "batch_size": 8}), "canonical")
    (tr,) = data.robots
    assert tr.robot.dof == 7 and tr.record["lock"] == {"torso_lift_joint": 0.1}
    batch = data.examples(0)
    assert batch.batch_size == 8
    assert data.describe()["files"]["fetch"]["sha256"] == hashlib.sha256(FETCH.read_bytes()).hexdigest()
    assert data.describe()["named"] == {}


def test_merge_keeps_the_files_of_both_stages_with_their_largest_weight():
    before = {
        "named": {"panda": 1.0},
        "files": {"a": {"sha256": "1", "weight": 2.0}, "c": {"sha256": "3", "weight": 1.0}},
    }
    now = {"named": {}, "files": {"b": {"sha256": "2", "weight": 1.0}, "a": {"sha256": "1b", "weight": 0.0}}}
    assert merge_training_sets(before, now)["files"] == {
        "a": {"sha256": "1b", "weight": 2.0},  # the later record; seen once is seen
        "b": {"sha256": "2", "weight": 1.0},
        "c": {"sha256": "3", "weight": 1.0},
    }
    assert "files" not in merge_training_sets({"named": {}}, {"named": {}})


def test_a_run_with_a_file_robot_trains_validates_resumes_and_names_the_file(tmp_path, capsys):
    path = _random_file(tmp_path, 6, 21)
    overrides = [
        f"data.robots={{panda: 1.0, mine: {{urdf: {path}, weight: 2.0}}}}",
        "data.random_weight=0.0",
        "val.every=2",
        "steps=2",
        "checkpoint_every=2",
    ]
    cfg = from_dict(TrainConfig, apply_overrides(load_yaml(REPO / "train/configs/tiny.yaml"), overrides))
    run = tmp_path / "run"
    Trainer(cfg, run, progress=False).train()
    records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    val = [r for r in records if r["kind"] == "val"]
    assert val and "val/mine/success" in val[0] and "val/panda/success" in val[0]
    ckpt = load_checkpoint(run / "last.pt")
    assert ckpt["training_robots"]["files"]["mine"]["urdf"] == path.read_text()
    assert ckpt["training_robots"]["named"] == {"panda": 1.0}
    assert cli_main(["info", str(run / "last.pt")]) == 0
    out = capsys.readouterr().out
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    assert f"mine: {path} sha256 {sha}" in out and "weight 2" in out
    path.write_text(random_robot(6, torch.Generator().manual_seed(99)).to_urdf())  # the file changes on disk
    trainer = Trainer.resume(run, {"steps": 3}, progress=False)
    assert kinematic_signature(trainer.data.robots[1].robot) == kinematic_signature(
        robot_from_record("mine", ckpt["training_robots"]["files"]["mine"])
    )
    trainer.train()
    assert trainer.step == 3


def test_a_yaml_file_of_robots_is_taken_wherever_robots_are_named(tmp_path, capsys):
    from ggik.cli.robots import resolve_robots

    path = _random_file(tmp_path, 6, 31)
    spec = tmp_path / "robots.yaml"
    spec.write_text(f"robots:\n  panda: 1.0\n  mine: {{urdf: {path}}}\n")
    robots = resolve_robots([str(spec), "ur10"])
    assert [r.name for r in robots] == ["panda", "mine", "ur10"]
    out = tmp_path / "problems.pt"
    assert cli_main(["data", "make", "--robots", str(spec), "-n", "2", "-o", str(out)]) == 0
    assert "robots ['panda', 'mine']" in capsys.readouterr().out
    spec.write_text(f"robots:\n  mine: {{urdf: {path}, ee_link: nowhere}}\n")
    assert cli_main(["data", "make", "--robots", str(spec), "-n", "2", "-o", str(out)]) == 2
    assert f"{spec}: data.robots.mine" in capsys.readouterr().err


def test_file_faults_name_the_entry(tmp_path, monkeypatch):
    folder = tmp_path / "fam"
    folder.mkdir()
    _random_file(folder, 6, 41)
    (folder / "odd.urdf").mkdir()  # a folder named like a file: unreadable as one
    with pytest.raises(GGIKError, match=r"data.robots.fam: cannot read .*odd.urdf"):
        training_robots({"fam": {"urdf": str(folder)}})
    path = _random_file(tmp_path, 6, 42)
    real = Path.read_bytes

    def denied(self):
        if self == path:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", denied)  # chmod 000 does not stop root
    with pytest.raises(GGIKError, match=r"data.robots.arm: cannot read .*arm42.urdf: Permission denied"):
        training_robots({"arm": {"urdf": str(path)}})
    monkeypatch.undo()
    text = tmp_path / "notes.urdf"
    text.write_text("a robot, one day\n")
    with pytest.raises(GGIKError, match=r"data.robots.notes \(.*notes.urdf\): not a URDF document"):
        training_robots({"notes": {"urdf": str(text)}})
    for weight in (float("inf"), float("nan"), -1.0):
        with pytest.raises(GGIKError, match=r"data.robots.arm: weight must be a finite number >= 0"):
            training_robots({"arm": {"urdf": str(path), "weight": weight}})
        with pytest.raises(GGIKError, match=r"data.robots.panda: weight must be a finite number >= 0"):
            training_robots({"panda": weight})


def test_a_file_with_a_byte_order_mark_reads_as_without(tmp_path):
    plain = _random_file(tmp_path, 6, 43)
    marked = tmp_path / "marked.urdf"
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    (tr,) = training_robots({"marked": {"urdf": str(marked)}})
    assert tr.record["urdf"] == plain.read_text() and kinematic_signature(tr.robot) == kinematic_signature(
        Robot.from_urdf(plain)
    )
    assert tr.record["sha256"] == hashlib.sha256(marked.read_bytes()).hexdigest()  # of the bytes, as they are


def test_a_resumed_run_keeps_its_chain_or_names_the_change(tmp_path):
    path = _random_file(tmp_path, 6, 44)
    (tr,) = training_robots({"mine": {"urdf": str(path)}})
    stored = {"mine": tr.record}
    (again,) = training_robots({"mine": {"urdf": str(path), "weight": 3.0}}, stored)  # a weight may change
    assert again.weight == 3.0 and kinematic_signature(again.robot) == kinematic_signature(tr.robot)
    with pytest.raises(GGIKError, match=r"data.robots.mine: ee_link 'link_4', but the run kept the file with ee_link"):
        training_robots({"mine": {"urdf": str(path), "ee_link": "link_4"}}, stored)
    with pytest.raises(GGIKError, match=r"data.robots.mine: lock \{'joint_1': 0.1\}"):
        training_robots({"mine": {"urdf": str(path), "lock": {"joint_1": 0.1}}}, stored)


def test_one_rule_compares_chain_options_for_a_resumed_run_and_a_resumed_adaptation():
    """:func:`chain_differences`, read by training_robots (a kept file record) and by ggik adapt (its state's arm):
    locks compared as numbers, a missing option read as None (no lock: {})."""
    kept = {"base_link": None, "ee_link": "link_4", "lock": {"joint_1": 1}}
    assert chain_differences(kept, chain_options(RobotFile("x.urdf", ee_link="link_4", lock={"joint_1": 1.0}))) == []
    assert chain_differences({}, chain_options(RobotFile("x.urdf"))) == []
    asked = chain_options(RobotFile("x.urdf", base_link="b", lock={"joint_1": 0.5}))
    assert chain_differences(kept, asked) == [
        ("base_link", "b", None),
        ("ee_link", None, "link_4"),
        ("lock", {"joint_1": 0.5}, {"joint_1": 1.0}),
    ]
