"""Learned IK baselines (ggik.baselines): the distal teacher's config, training, answers and model files."""

from __future__ import annotations

import pytest
import torch

from ggik import Robot, random_robot, randomize_links
from ggik.baselines import DistalConfig, DistalTeacher, IKNet, IKNetConfig
from ggik.baselines.goals import goal_features
from ggik.baselines.iknet import sparsemax
from ggik.baselines.model_file import BASELINE_FORMAT, load_baseline, robot_fingerprint
from ggik.errors import GGIKError
from ggik.ik.tolerances import SOLVE_TOLERANCES

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


def rotation_angle(Ra: torch.Tensor, Rb: torch.Tensor) -> torch.Tensor:
    """The angle [rad] of the rotation between Ra and Rb (..., 3, 3), by hand: atan2 of the axis part's norm and the
    trace part of R = Ra^T Rb."""
    R = Ra.transpose(-1, -2) @ Rb
    axis = torch.stack([R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1)
    return torch.atan2(axis.norm(dim=-1) / 2, (R.diagonal(dim1=-2, dim2=-1).sum(-1) - 1) / 2)


def test_pose_models_report_orientation_errors(arm, position_model):
    """A pose model's rot_err is the angle between its answer's EE rotation and the goal's (a position model's is 0
    for the same goals), pos_err the distance, and success both within the tolerances."""
    model = DistalTeacher.fit(arm, DistalConfig(goal="pose", **{**TINY, "steps": 20}))
    T = arm.fk(arm.sample_q(4, torch.Generator().manual_seed(4)))
    res = model.solve(arm, T)
    E = arm.fk(res.q[:, 0])
    torch.testing.assert_close(res.rot_err[:, 0], rotation_angle(E[:, :3, :3], T[:, :3, :3]), rtol=0, atol=1e-9)
    torch.testing.assert_close(res.pos_err[:, 0], (E[:, :3, 3] - T[:, :3, 3]).norm(dim=-1), rtol=0, atol=1e-12)
    assert (res.rot_err > 1e-3).all()  # 20 steps of training miss the orientation: the comparison is not of zeros
    assert (position_model.solve(arm, T).rot_err == 0).all()
    loose = model.solve(arm, T, pos_tol=1.0, rot_tol=float(res.rot_err.median()))  # some within, some not
    assert torch.equal(loose.success, (loose.pos_err < 1.0) & (loose.rot_err < float(res.rot_err.median())))
    assert loose.success.any() and not loose.success.all()


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


# ---------------------------------------------------------------------------------------------------------- IKNet
def assert_sorted_best_first(res, arm: Robot, pos_tol: float, rot_tol: float) -> None:
    """Each goal's answers in the order of the key (not successful, not within limits, pos/pos_tol + rot/rot_tol),
    compared lexicographically between neighbours, with success and within_limits recomputed here."""
    assert torch.equal(res.success, (res.pos_err < pos_tol) & (res.rot_err < rot_tol))
    assert torch.equal(res.within_limits, arm.within_limits(res.q))
    fail, out = (~res.success).long(), (~res.within_limits).long()
    score = res.pos_err / pos_tol + res.rot_err / rot_tol
    f0, f1, w0, w1, s0, s1 = fail[:, :-1], fail[:, 1:], out[:, :-1], out[:, 1:], score[:, :-1], score[:, 1:]
    in_order = (f0 < f1) | ((f0 == f1) & ((w0 < w1) | ((w0 == w1) & (s0 <= s1))))
    assert in_order.all(), f"answers out of order at (goal, column) {in_order.logical_not().nonzero().tolist()}"


ITINY = dict(hyper_width=32, hyper_layers=2, embedding=16, primary_hidden=8, components=4, samples=2000, steps=120,
             batch=128, lr=3e-3, validate_every=40, val_targets=20, val_samples=4)  # fmt: skip


@pytest.fixture(scope="module")
def iknet(arm) -> IKNet:
    return IKNet.fit(arm, IKNetConfig(**ITINY))


def test_sparsemax_is_a_projection_onto_the_simplex():
    z = torch.randn(200, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64) * 3
    p = sparsemax(z)
    torch.testing.assert_close(p.sum(-1), torch.ones(200, dtype=torch.float64))
    assert (p >= 0).all() and (p == 0).any()
    # the projection: p = argmin |p - z| over the simplex, so z - p is constant on the support
    for row_z, row_p in zip(z, p):
        d = (row_z - row_p)[row_p > 0]
        torch.testing.assert_close(d, d[0].expand_as(d))
        assert (row_z[row_p == 0] <= d[0] + 1e-12).all()


@pytest.mark.parametrize(
    "bad",
    [{"goal": "joints"}, {"components": 0}, {"min_std": 0.0}, {"hyper_width": 2.5}, {"grad_clip": -1.0},
     {"validate_every": -1}, {"patience": 1.5}, {"embedding": 0}, {"mixture_weights": "max"}, {"head_gain": 0.0},
     {"batch": 1}],
)  # fmt: skip
def test_iknet_config_refuses_bad_values(bad):
    with pytest.raises(ValueError, match="IKNetConfig"):
        IKNetConfig(**bad)


def test_iknet_training_raises_the_likelihood_and_samples_within_limits(arm, iknet):
    q = arm.sample_q(256, torch.Generator().manual_seed(6))
    feats = goal_features(arm.fk(q).float(), "position", iknet.scale)
    untrained = IKNet.fit(arm, IKNetConfig(**{**ITINY, "steps": 1}))
    with torch.no_grad():
        before = IKNet._joint_log_likelihood(untrained.net, feats, q.float()).mean()
        after = IKNet._joint_log_likelihood(iknet.net, feats, q.float()).mean()
    assert after > before + 0.5
    res = iknet.solve(arm, arm.fk(q[:5]), samples=16, generator=torch.Generator().manual_seed(0))
    assert res.q.shape == (5, 16, arm.dof) and res.within_limits.all()
    assert_sorted_best_first(res, arm, SOLVE_TOLERANCES.pos_tol, SOLVE_TOLERANCES.rot_tol)
    draws = iknet.sample(arm.fk(q[:5]), 16, generator=torch.Generator().manual_seed(0))
    key = torch.arange(1.0, arm.dof + 1, dtype=torch.float64)
    for answers, drawn in zip(res.q, draws):  # the answers are the draws, reordered
        torch.testing.assert_close(
            answers[torch.argsort(answers @ key)], drawn[torch.argsort(drawn @ key)], rtol=0, atol=0
        )
    tol = float(res.pos_err.median())  # half of the answers succeed at this tolerance: success goes first
    mixed = iknet.solve(arm, arm.fk(q[:5]), samples=16, generator=torch.Generator().manual_seed(0), pos_tol=tol)
    assert mixed.success.any() and not mixed.success.all()
    assert_sorted_best_first(mixed, arm, tol, SOLVE_TOLERANCES.rot_tol)
    again = iknet.solve(arm, arm.fk(q[:5]), samples=16, generator=torch.Generator().manual_seed(0))
    assert torch.equal(res.q, again.q)  # seeded
    with pytest.raises(ValueError, match="samples"):
        iknet.solve(arm, arm.fk(q[:1]), samples=0)


def test_iknet_keeps_the_weights_of_its_best_validation(arm, iknet):
    curve = iknet.training["validation"]
    assert [s for s, _ in curve] == [40, 80, 120] and iknet.training["steps_run"] == 120
    assert iknet.training["best_step"] == min(curve, key=lambda c: c[1])[0] and not iknet.net.training


def test_train_iknet_validates_in_eval_mode_and_restores_the_best_weights(arm):
    from ggik.baselines.iknet import IKNetModule, train_iknet

    cfg = IKNetConfig(**{**ITINY, "steps": 30, "validate_every": 10})
    net = IKNetModule(3, arm.dof, cfg)
    q = arm.sample_q(64, torch.Generator().manual_seed(0)).float()
    feats = goal_features(arm.fk(q.double()).float(), "position", 1.0)
    scores, seen = iter([3.0, 1.0, 2.0]), []

    def validate(n) -> float:
        seen.append((n.training, {k: v.clone() for k, v in n.state_dict().items()}))
        return next(scores)

    run = train_iknet(net, cfg, lambda: (feats, q), validate)
    assert [t for t, _ in seen] == [False, False, False] and not net.training
    assert run["best_step"] == 20 and [s for s, _ in run["validation"]] == [10, 20, 30]
    for k, v in net.state_dict().items():  # the weights (and batch-norm statistics) of the second validation
        assert torch.equal(v, seen[1][1][k]), k
    assert not all(torch.equal(v, seen[2][1][k]) for k, v in net.state_dict().items())


def test_iknet_reference_settings_are_the_authors_and_train():
    ref = IKNetConfig.reference(steps=3)
    assert (ref.mixture_weights, ref.head_gain, ref.batch, ref.hyper_width, ref.primary_hidden, ref.components) == (
        "sparsemax",
        1.0,
        1024,
        1024,
        256,
        50,
    )
    arm = random_robot(3, generator=torch.Generator().manual_seed(4))
    small = IKNetConfig.reference(**{**ITINY, "steps": 20})
    model = IKNet.fit(arm, small)
    T = arm.fk(arm.sample_q(4, torch.Generator().manual_seed(1)))
    q = arm.sample_q(64, torch.Generator().manual_seed(2))
    with torch.no_grad():
        pi = model.net.mixture(model.net.primary(goal_features(arm.fk(q).float(), "position", model.scale))[1],
                               q[:, None, :1].float())[2]  # fmt: skip
    torch.testing.assert_close(pi.sum(-1), torch.ones(64, 1))
    assert model.solve(arm, T, 5).q.shape == (4, 5, 3)


def test_iknet_stops_after_its_patience():
    arm = random_robot(3, generator=torch.Generator().manual_seed(4))
    # a learning rate too small to matter: the validations differ only by the batch-norm statistics and the draws,
    # and the run stops 2 validations after its best
    model = IKNet.fit(arm, IKNetConfig(**{**ITINY, "steps": 400, "validate_every": 10, "patience": 2, "lr": 1e-12}))
    run = model.training
    assert run["steps_run"] < 400 and run["steps_run"] - run["best_step"] == 20
    assert [s for s, _ in run["validation"]][-1] == run["steps_run"]
    without = IKNet.fit(arm, IKNetConfig(**{**ITINY, "steps": 30, "validate_every": 0}))
    assert without.training["validation"] == [] and without.training["best_step"] == 30


def test_iknet_files_and_fine_tuning(arm, iknet, tmp_path):
    back = IKNet.load(iknet.save(tmp_path / "iknet.pt"))
    T = arm.fk(arm.sample_q(3, torch.Generator().manual_seed(7)))
    g = torch.Generator
    torch.testing.assert_close(
        back.solve(arm, T, 8, g().manual_seed(1)).q, iknet.solve(arm, T, 8, g().manual_seed(1)).q
    )
    changed = randomize_links(arm, 0.2, generator=torch.Generator().manual_seed(8))
    frozen = IKNet.fit(changed, IKNetConfig(**{**ITINY, "steps": 1, "lr": 1e-12, "validate_every": 0}), init=iknet)
    source = dict(iknet.net.named_parameters())
    for name, p in frozen.net.named_parameters():  # starts from the source's weights (one step of lr 1e-12 away)
        torch.testing.assert_close(p, source[name], atol=1e-9, rtol=0)
    with pytest.raises(GGIKError, match="head_gain"):
        IKNet.fit(changed, IKNetConfig(**{**ITINY, "head_gain": 1.0}), init=iknet)
    tuned = IKNet.fit(changed, IKNetConfig(**{**ITINY, "steps": 10}), init=iknet)
    assert tuned.training["fine_tuned"] and tuned.scale == iknet.scale
    assert tuned.solve(changed, changed.fk(changed.sample_q(2)), 4).q.shape == (2, 4, arm.dof)
    with pytest.raises(GGIKError, match="fine-tuning"):
        IKNet.fit(Robot.from_name("panda"), IKNetConfig(**ITINY), init=iknet)
    with pytest.raises(GGIKError, match="not a 'distal-teacher' model"):
        DistalTeacher.load(tmp_path / "iknet.pt")


def test_iknet_path_sampling_stays_in_the_neighbourhood(arm, iknet):
    q = arm.sample_q(1, torch.Generator().manual_seed(9))[0]
    qs = q + torch.linspace(0, 0.3, 12, dtype=torch.float64)[:, None]  # a smooth joint motion
    targets = arm.fk(qs.clamp(arm.lower, arm.upper))[:, :3, 3]
    path = iknet.sample_path(arm, targets, q_start=q, radius=0.1, generator=torch.Generator().manual_seed(0))
    assert path.shape == (12, arm.dof) and bool(arm.within_limits(path).all())
    steps = torch.diff(torch.cat([q[None], path]), dim=0).abs()
    assert (steps <= 0.1 + 1e-6).all()
    again = iknet.sample_path(arm, targets, q_start=q, radius=0.1, generator=torch.Generator().manual_seed(0))
    assert torch.equal(path, again)
    free = iknet.sample_path(arm, targets, generator=torch.Generator().manual_seed(0))  # first waypoint unrestricted
    assert (torch.diff(free, dim=0).abs() <= 0.1 + 1e-6).all()
    with pytest.raises(ValueError, match="radius"):
        iknet.sample_path(arm, targets, radius=0.0)
