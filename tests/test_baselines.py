"""Learned IK baselines (ggik.baselines): the distal teacher's config, training, answers and model files."""

from __future__ import annotations

import pytest
import torch

from ggik import Robot, random_robot
from ggik.baselines import DistalConfig, DistalTeacher
from ggik.baselines.model_file import BASELINE_FORMAT, load_baseline, robot_fingerprint
from ggik.errors import GGIKError

TINY = dict(hidden=32, layers=2, samples=2000, steps=150, batch=128, lr=3e-3)


@pytest.fixture(scope="module")
def arm() -> Robot:
    return random_robot(4, generator=torch.Generator().manual_seed(3))


@pytest.fixture(scope="module")
def position_model(arm) -> DistalTeacher:
    return DistalTeacher.fit(arm, DistalConfig(goal="position", **TINY))


@pytest.mark.parametrize(
    "bad",
    [{"goal": "orientation"}, {"hidden": 0}, {"steps": 1.5}, {"lr": -1.0}, {"rot_weight": float("inf")},
     {"layers": True}],
)  # fmt: skip
def test_config_refuses_bad_values(bad):
    with pytest.raises(ValueError, match="DistalConfig"):
        DistalConfig(**bad)


def test_training_lowers_the_error(arm, position_model):
    T = arm.fk(arm.sample_q(300, torch.Generator().manual_seed(1)))
    untrained = DistalTeacher.fit(arm, DistalConfig(goal="position", **{**TINY, "steps": 1}))
    before, after = untrained.solve(arm, T).pos_err.mean(), position_model.solve(arm, T).pos_err.mean()
    assert after < 0.6 * before
    assert position_model.training["steps"] == 150 and position_model.training["cpu_s"] > 0


def test_answers_are_one_per_goal_with_fk_errors(arm, position_model):
    q = arm.sample_q(5, torch.Generator().manual_seed(2))
    T = arm.fk(q)
    res = position_model.solve(arm, T)
    assert res.q.shape == (5, 1, arm.dof) and res.pos_err.shape == (5, 1)
    torch.testing.assert_close(res.pos_err[:, 0], (arm.fk(res.q[:, 0])[:, :3, 3] - T[:, :3, 3]).norm(dim=-1))
    assert (res.rot_err == 0).all()  # position-only
    same = position_model.solve(arm, T[:, :3, 3])  # positions instead of poses
    torch.testing.assert_close(same.q, res.q)
    assert position_model.solve(arm, T[0]).q.shape == (1, 1, arm.dof)
    with pytest.raises(ValueError, match="T_goal"):
        position_model.solve(arm, torch.full((2, 4, 4), float("nan")))


def test_pose_models_report_orientation_errors(arm):
    model = DistalTeacher.fit(arm, DistalConfig(goal="pose", **{**TINY, "steps": 20}))
    res = model.solve(arm, arm.fk(arm.sample_q(4, torch.Generator().manual_seed(4))))
    assert (res.rot_err > 0).all() and res.success.dtype == torch.bool


def test_model_files_round_trip_and_refuse_other_robots(arm, position_model, tmp_path):
    path = position_model.save(tmp_path / "distal.pt")
    back = DistalTeacher.load(path)
    T = arm.fk(arm.sample_q(7, torch.Generator().manual_seed(5)))
    torch.testing.assert_close(back.solve(arm, T).q, position_model.solve(arm, T).q)
    assert back.config == position_model.config and back.scale == position_model.scale
    assert robot_fingerprint(back.robot) == robot_fingerprint(arm)
    payload = load_baseline(path, "distal-teacher")
    assert payload["format"] == BASELINE_FORMAT and payload["robot"]["dof"] == arm.dof
    other = Robot.from_name("panda")
    with pytest.raises(GGIKError, match="trained for"):
        back.solve(other, other.fk(other.sample_q(2)))
    with pytest.raises(GGIKError, match="not a 'iknet' model"):
        load_baseline(path, "iknet")
    (tmp_path / "bad.pt").write_bytes(b"not a model")
    with pytest.raises(GGIKError, match="corrupt"):
        DistalTeacher.load(tmp_path / "bad.pt")
    with pytest.raises(FileNotFoundError):
        DistalTeacher.load(tmp_path / "missing.pt")
