"""ggik.Robot: FK, link poses, Jacobian, sampling, locking, URDF export, DH, chain selection, randomize_links."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from conftest import HAND_URDFS, MIMIC_TAG, REFERENCE_FILES, shared_path

from ggik import ChainError, Robot, random_robot, randomize_links
from ggik.kinematics import geometry as geo

F64 = torch.float64


def random_q(robot: Robot, n: int, gen: torch.Generator) -> torch.Tensor:
    """Configurations inside the sampling range, plus a margin beyond it (FK/Jacobian ignore limits)."""
    span = robot.upper - robot.lower
    u = torch.rand(n, robot.dof, generator=gen, dtype=F64) * 1.2 - 0.1
    return robot.lower + span * u


# ---------------------------------------------------------------------------------------------- FK
def test_fk_is_batched_over_leading_dims(kin_robot, rng):
    q = random_q(kin_robot, 24, rng)
    flat = kin_robot.fk(q)
    assert flat.shape == (24, 4, 4)
    torch.testing.assert_close(
        kin_robot.fk(q.reshape(2, 3, 4, kin_robot.dof)), flat.reshape(2, 3, 4, 4, 4), rtol=0, atol=0
    )
    single = torch.stack([kin_robot.fk(q[k]) for k in range(5)])
    assert kin_robot.fk(q[0]).shape == (4, 4)
    torch.testing.assert_close(single, flat[:5], rtol=0, atol=1e-15)
    assert kin_robot.fk(q[:0]).shape == (0, 4, 4)
    geo.check_pose(flat, tol=1e-12)


def test_fk_follows_dtype(kin_robot, rng):
    q = random_q(kin_robot, 16, rng)
    T64 = kin_robot.fk(q)
    T32 = kin_robot.fk(q.float())
    assert T64.dtype == F64 and T32.dtype == torch.float32
    torch.testing.assert_close(T32.double(), T64, rtol=0, atol=2e-5)
    assert kin_robot.link_poses(q.float()).dtype == torch.float32
    assert kin_robot.jacobian(q.float()).dtype == torch.float32
    # Lists and numpy arrays are accepted and read as float64.
    torch.testing.assert_close(kin_robot.fk(q[0].tolist()), T64[0], rtol=0, atol=1e-15)
    torch.testing.assert_close(kin_robot.fk(q[0].numpy()), T64[0], rtol=0, atol=1e-15)


def test_fk_is_the_last_link_pose(kin_robot, rng):
    q = random_q(kin_robot, 12, rng).reshape(3, 4, kin_robot.dof)
    poses = kin_robot.link_poses(q)
    assert poses.shape == (3, 4, len(kin_robot.link_names), 4, 4)
    assert kin_robot.link_names[0] == kin_robot.base_link and kin_robot.link_names[-1] == kin_robot.ee_link
    assert len(kin_robot.link_names) == len(kin_robot.joints) + 1
    torch.testing.assert_close(poses[..., 0, :, :], torch.eye(4, dtype=F64).expand(3, 4, 4, 4), rtol=0, atol=0)
    torch.testing.assert_close(poses[..., -1, :, :], kin_robot.fk(q), rtol=0, atol=1e-14)


def test_link_poses_follow_urdf_joint_transforms(hand_robot, rng):
    """Each link pose = parent pose @ origin @ motion, with motion from the joint's own axis and value."""
    robot = hand_robot
    q = random_q(robot, 6, rng)
    poses = robot.link_poses(q)
    values = {}
    for j in robot.joints:
        if j.type in ("revolute", "continuous", "prismatic") and j.mimic is None:
            values[j.name] = q[:, robot.joint_names.index(j.name)]
    for j in robot.joints:
        if j.mimic is not None:
            src, mult, off = j.mimic
            values[j.name] = mult * values[src] + off
    for k, j in enumerate(robot.joints):
        motion = torch.eye(4, dtype=F64).expand(6, 4, 4).clone()
        if j.type in ("revolute", "continuous"):
            motion[:, :3, :3] = geo.axis_angle_to_matrix(torch.as_tensor(j.axis).expand(6, 3), values[j.name])
        elif j.type == "prismatic":
            motion[:, :3, 3] = torch.as_tensor(j.axis) * values[j.name][:, None]
        expected = poses[:, k] @ torch.as_tensor(j.origin) @ motion
        torch.testing.assert_close(poses[:, k + 1], expected, rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------------- Jacobian
def autograd_jacobian(robot: Robot, q: torch.Tensor) -> torch.Tensor:
    """(B, 6, dof) from autograd: v rows = dp/dq, w rows from [w]x = dR/dq R^T."""
    dT = torch.autograd.functional.jacobian(lambda x: robot.fk(x).sum(0), q, vectorize=True)  # (4, 4, B, dof)
    dT = dT.permute(2, 3, 0, 1)  # (B, dof, 4, 4)
    R = robot.fk(q)[:, None, :3, :3]
    W = dT[..., :3, :3] @ R.transpose(-1, -2)  # (B, dof, 3, 3), skew-symmetric
    torch.testing.assert_close(W, -W.transpose(-1, -2), rtol=0, atol=1e-12)
    w = torch.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], dim=-1)
    return torch.cat([dT[..., :3, 3], w], dim=-1).transpose(-1, -2)


def test_jacobian_matches_autograd(kin_robot, rng):
    q = random_q(kin_robot, 8, rng)
    J = kin_robot.jacobian(q)
    assert J.shape == (8, 6, kin_robot.dof)
    torch.testing.assert_close(J, autograd_jacobian(kin_robot, q), rtol=0, atol=1e-12)
    torch.testing.assert_close(kin_robot.jacobian(q.reshape(2, 4, -1)), J.reshape(2, 4, 6, -1), rtol=0, atol=0)


def test_jacobian_matches_finite_differences(hand_robot, rng):
    """An independent check of the autograd reference: central differences of FK on the hand chains."""
    q = random_q(hand_robot, 3, rng)
    J = hand_robot.jacobian(q)
    h = 1e-6
    for k in range(hand_robot.dof):
        dq = torch.zeros(hand_robot.dof, dtype=F64)
        dq[k] = h
        Tp, Tm = hand_robot.fk(q + dq), hand_robot.fk(q - dq)
        v = (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * h)
        W = (Tp[:, :3, :3] - Tm[:, :3, :3]) / (2 * h) @ hand_robot.fk(q)[:, :3, :3].transpose(-1, -2)
        w = torch.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], -1)
        torch.testing.assert_close(J[:, :3, k], v, rtol=0, atol=1e-8)
        torch.testing.assert_close(J[:, 3:, k], w, rtol=0, atol=1e-8)


def test_prismatic_and_mimic_jacobian_columns(rng):
    """A prismatic column is (axis in base, 0); a mimic joint adds multiplier x its column to its source's."""
    robot = Robot.from_urdf(HAND_URDFS["prismatic"])
    q = robot.sample_q(5, rng)
    k = robot.joint_names.index("slide")
    frames = robot.link_poses(q)
    idx = robot.link_names.index("l2")  # child of the slide: its rotation is the joint frame's
    axis = frames[:, idx, :3, :3] @ torch.tensor([0.6, 0.0, 0.8], dtype=F64)
    J = robot.jacobian(q)
    torch.testing.assert_close(J[:, :3, k], axis, rtol=0, atol=1e-14)
    assert J[:, 3:, k].abs().max() == 0

    mimic = Robot.from_urdf(HAND_URDFS["mimic"])
    assert mimic.joint_names == ("j1", "j2", "j4", "j5") and mimic.moving_joint_names == ("j1", "j2", "j3", "j4", "j5")
    free = Robot.from_urdf(HAND_URDFS["mimic"].replace(MIMIC_TAG, ""))
    q = mimic.sample_q(5, rng)
    q5 = torch.stack([q[:, 0], q[:, 1], -0.5 * q[:, 1] + 0.1, q[:, 2], q[:, 3]], -1)
    J, J_free = mimic.jacobian(q), free.jacobian(q5)
    torch.testing.assert_close(J[..., 1], J_free[..., 1] - 0.5 * J_free[..., 2], rtol=0, atol=1e-14)
    torch.testing.assert_close(J[..., [0, 2, 3]], J_free[..., [0, 3, 4]], rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------------- sampling
def test_sample_q_within_limits_and_reproducible(kin_robot):
    q = kin_robot.sample_q(500, torch.Generator().manual_seed(7))
    assert q.shape == (500, kin_robot.dof) and q.dtype == F64
    assert (q >= kin_robot.lower).all() and (q <= kin_robot.upper).all()
    # Fills the range: every joint's samples cover most of it.
    span = (q.max(0).values - q.min(0).values) / (kin_robot.upper - kin_robot.lower)
    assert (span > 0.9).all()
    again = kin_robot.sample_q(500, torch.Generator().manual_seed(7))
    assert torch.equal(q, again)
    other = kin_robot.sample_q(500, torch.Generator().manual_seed(8))
    assert not torch.equal(q, other)
    assert kin_robot.sample_q(3, torch.Generator().manual_seed(7), dtype=torch.float32).dtype == torch.float32


def test_continuous_joints_sample_in_pi_range_and_are_unlimited():
    robot = Robot.from_urdf(HAND_URDFS["continuous"])
    cont = [i for i, t in enumerate(robot.joint_types) if t == "continuous"]
    assert [robot.joint_names[i] for i in cont] == ["j1", "j3", "j5"]
    assert robot.limited.tolist() == [t != "continuous" for t in robot.joint_types]
    torch.testing.assert_close(robot.lower[cont], torch.full((3,), -math.pi, dtype=F64), rtol=0, atol=0)
    torch.testing.assert_close(robot.upper[cont], torch.full((3,), math.pi, dtype=F64), rtol=0, atol=0)
    q = robot.sample_q(2000, torch.Generator().manual_seed(0))
    assert (q[:, cont].abs() <= math.pi).all() and (q[:, cont].abs().max(0).values > 3.0).all()
    # FK of a continuous joint is 2 pi periodic.
    shift = torch.zeros(robot.dof, dtype=F64)
    shift[cont] = 2 * math.pi
    torch.testing.assert_close(robot.fk(q[:20] + shift), robot.fk(q[:20]), rtol=0, atol=1e-12)


def test_limits_are_the_urdf_limits():
    robot = Robot.from_name("panda")
    torch.testing.assert_close(robot.lower[3], torch.tensor(-3.0718, dtype=F64), rtol=0, atol=0)
    torch.testing.assert_close(robot.upper[3], torch.tensor(-0.0698, dtype=F64), rtol=0, atol=0)
    prism = Robot.from_urdf(HAND_URDFS["prismatic"])
    k = prism.joint_names.index("slide")
    assert prism.joint_types[k] == "prismatic" and (float(prism.lower[k]), float(prism.upper[k])) == (0.0, 0.4)


# ---------------------------------------------------------------------------------------------- lock
def _insert(full: Robot, locked: Robot, q_free: torch.Tensor, values: dict[str, float]) -> torch.Tensor:
    q = torch.empty(q_free.shape[:-1] + (full.dof,), dtype=F64)
    for i, name in enumerate(full.joint_names):
        q[..., i] = values[name] if name in values else q_free[..., locked.joint_names.index(name)]
    return q


def test_lock_random_joints_keeps_fk(kin_robot, rng):
    k = int(torch.randint(1, min(3, kin_robot.dof - 1) + 1, (), generator=rng))
    names = [kin_robot.joint_names[i] for i in torch.randperm(kin_robot.dof, generator=rng)[:k].tolist()]
    value_q = kin_robot.sample_q(1, rng)[0]
    values = {n: float(value_q[kin_robot.joint_names.index(n)]) for n in names}
    locked = kin_robot.lock(values)
    assert locked.dof == kin_robot.dof - k
    assert locked.joint_names == tuple(n for n in kin_robot.joint_names if n not in values)
    assert (locked.base_link, locked.ee_link, locked.link_names) == (
        kin_robot.base_link,
        kin_robot.ee_link,
        kin_robot.link_names,
    )
    keep = [kin_robot.joint_names.index(n) for n in locked.joint_names]
    torch.testing.assert_close(locked.lower, kin_robot.lower[keep], rtol=0, atol=0)
    torch.testing.assert_close(locked.upper, kin_robot.upper[keep], rtol=0, atol=0)
    q_free = locked.sample_q(20, rng)
    q_full = _insert(kin_robot, locked, q_free, values)
    torch.testing.assert_close(locked.fk(q_free), kin_robot.fk(q_full), rtol=0, atol=1e-12)
    # The Jacobian of the locked robot is the full one without the locked columns.
    torch.testing.assert_close(locked.jacobian(q_free), kin_robot.jacobian(q_full)[..., keep], rtol=0, atol=1e-12)


def test_lock_prismatic_joint():
    robot = Robot.from_urdf(HAND_URDFS["prismatic"])
    locked = robot.lock({"slide": 0.25})
    assert "slide" not in locked.joint_names and locked.dof == 4
    assert next(j for j in locked.joints if j.name == "slide").type == "fixed"
    q_free = locked.sample_q(30, torch.Generator().manual_seed(1))
    torch.testing.assert_close(
        locked.fk(q_free), robot.fk(_insert(robot, locked, q_free, {"slide": 0.25})), rtol=0, atol=1e-12
    )
    # The slide moves the chain by 0.25 m along its axis (0.6, 0, 0.8) in link l1.
    shorter = robot.lock({"slide": 0.0})
    zero = torch.zeros(4, dtype=F64)
    d = locked.fk(zero)[:3, 3] - shorter.fk(zero)[:3, 3]
    torch.testing.assert_close(d, 0.25 * torch.tensor([0.6, 0.0, 0.8], dtype=F64), rtol=0, atol=1e-15)


def test_lock_mimic_source_fixes_the_mimic_joint():
    robot = Robot.from_urdf(HAND_URDFS["mimic"])
    locked = robot.lock({"j2": 0.4})
    j3 = next(j for j in locked.joints if j.name == "j3")
    assert j3.type == "fixed" and j3.mimic is None
    q_free = locked.sample_q(30, torch.Generator().manual_seed(2))
    torch.testing.assert_close(
        locked.fk(q_free), robot.fk(_insert(robot, locked, q_free, {"j2": 0.4})), rtol=0, atol=1e-12
    )
    # j3 = -0.5 * j2 + 0.1: with j2 locked at 0.4, j3 sits at -0.1 rad about y.
    expected = j3.origin[:3, :3]
    rot = geo.axis_angle_to_matrix(torch.tensor([0.0, 1.0, 0.0], dtype=F64), torch.tensor(-0.1, dtype=F64))
    original = next(j for j in robot.joints if j.name == "j3").origin[:3, :3]
    np.testing.assert_allclose(expected, original @ rot.numpy(), rtol=0, atol=1e-15)


def test_mimic_follows_its_source(rng):
    """The mimic chain equals the chain with the mimic joint written as an independent joint at m q + o."""
    robot = Robot.from_urdf(HAND_URDFS["mimic"])
    free = Robot.from_urdf(HAND_URDFS["mimic"].replace(MIMIC_TAG, ""))
    assert free.dof == 5
    q = robot.sample_q(40, rng)
    j2 = q[:, robot.joint_names.index("j2")]
    q5 = torch.stack([q[:, 0], q[:, 1], -0.5 * j2 + 0.1, q[:, 2], q[:, 3]], -1)
    torch.testing.assert_close(robot.fk(q), free.fk(q5), rtol=0, atol=1e-14)


# ---------------------------------------------------------------------------------------------- URDF export
def test_to_urdf_round_trip(kin_robot, rng):
    text = kin_robot.to_urdf()
    back = Robot.from_urdf(text)
    assert (back.base_link, back.ee_link, back.name) == (kin_robot.base_link, kin_robot.ee_link, kin_robot.name)
    assert back.joint_names == kin_robot.joint_names and back.joint_types == kin_robot.joint_types
    assert [(j.name, j.type, j.mimic) for j in back.joints] == [(j.name, j.type, j.mimic) for j in kin_robot.joints]
    torch.testing.assert_close(back.lower, kin_robot.lower, rtol=0, atol=0)
    torch.testing.assert_close(back.upper, kin_robot.upper, rtol=0, atol=0)
    assert torch.equal(back.limited, kin_robot.limited)
    q = random_q(kin_robot, 50, rng)
    torch.testing.assert_close(back.fk(q), kin_robot.fk(q), rtol=0, atol=1e-12)


@pytest.mark.parametrize("pitch", ["1.5707963", "1.57079632679", "-1.5707963267948966"], ids=["1e-8", "5e-12", "exact"])
def test_to_urdf_round_trip_near_gimbal_lock(pitch, rng):
    """Origins at and near |pitch| = pi/2 (as written, and composed with a locked joint's motion) export exactly."""
    text = (
        HAND_URDFS["urdf_defaults"]
        .replace('rpy="0 1.2 0"', f'rpy="0.3 {pitch} 0.2"')
        .replace('<origin xyz="0 0 0.15" rpy="0.3 0 0"/>', f'<origin xyz="0 0 0.15" rpy="-0.4 {pitch} 1.3"/>')
    )
    assert text.count(f" {pitch} ") == 2
    robot = Robot.from_urdf(text)
    for values in ({"j3": 0.7}, {"j5": -2.2}, {"j3": 1e-3, "j5": 2.4}):
        locked = robot.lock(values)
        back = Robot.from_urdf(locked.to_urdf())
        q = locked.sample_q(20, rng)
        torch.testing.assert_close(back.fk(q), locked.fk(q), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- DH
def numpy_dh_fk(a, d, alpha, theta, q, modified: bool) -> np.ndarray:
    """Textbook DH product in numpy: standard Rz Tz Tx Rx, modified (Craig) Tx Rx Rz Tz."""

    def rz(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([[c, -s, 0, 0], [s, c, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])

    def rx(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([[1, 0, 0, 0], [0, c, -s, 0], [0, s, c, 0], [0, 0, 0, 1]])

    def tr(x, y, z):
        T = np.eye(4)
        T[:3, 3] = (x, y, z)
        return T

    T = np.eye(4)
    for i in range(len(a)):
        th = theta[i] + q[i]
        if modified:
            T = T @ tr(a[i], 0, 0) @ rx(alpha[i]) @ rz(th) @ tr(0, 0, d[i])
        else:
            T = T @ rz(th) @ tr(0, 0, d[i]) @ tr(a[i], 0, 0) @ rx(alpha[i])
    return T


@pytest.mark.parametrize("modified", [False, True], ids=["standard", "modified"])
@pytest.mark.parametrize("dof", [1, 3, 6, 8])
def test_from_dh_matches_numpy_product(dof, modified, rng):
    a, d, theta = (torch.rand(3, dof, generator=rng, dtype=F64) * 2 - 1).tolist()
    alpha = (torch.rand(dof, generator=rng, dtype=F64) * 2 * math.pi - math.pi).tolist()
    robot = Robot.from_dh(a, d, alpha, theta, modified=modified)
    assert robot.dof == dof and robot.base_link == "base_link" and robot.ee_link == "ee_link"
    assert robot.link_names == ("base_link",) + tuple(f"link_{i}" for i in range(1, dof + 1)) + ("ee_link",)
    q = robot.sample_q(20, rng)
    T = robot.fk(q).numpy()
    for k in range(20):
        np.testing.assert_allclose(T[k], numpy_dh_fk(a, d, alpha, theta, q[k].tolist(), modified), rtol=0, atol=1e-13)


def test_standard_and_modified_dh_differ():
    """The same numbers read as standard and as modified DH are different robots (the flag matters)."""
    a, d, alpha = [0.1, 0.2, 0.3], [0.3, 0.0, 0.1], [0.5, -1.0, 0.2]
    q = torch.tensor([0.3, -0.2, 0.9], dtype=F64)
    std = Robot.from_dh(a, d, alpha).fk(q)
    mod = Robot.from_dh(a, d, alpha, modified=True).fk(q)
    assert (std - mod).abs().max() > 0.05


def test_from_dh_limits_and_name():
    robot = Robot.from_dh([0, 0.5], [0.1, 0], [math.pi / 2, 0], lower=[-1, -2], upper=[1, 2], name="two")
    assert robot.name == "two"
    assert robot.lower.tolist() == [-1.0, -2.0] and robot.upper.tolist() == [1.0, 2.0]
    default = Robot.from_dh([0, 0.5], [0.1, 0], [math.pi / 2, 0])
    assert default.lower.tolist() == [-math.pi] * 2 and default.upper.tolist() == [math.pi] * 2


def test_ggik_dh_tables_of_robots_md(dh_tables, rng):
    """The four standard-DH robots of the GGIK accuracy experiment (robots.md, committed in golden_fk.json)
    load and match the numpy DH product."""
    assert set(dh_tables) == {"UR10", "KUKA iiwa", "Schunk LWA4D", "Schunk LWA4P"}
    for name, (a, d, alpha) in dh_tables.items():
        robot = Robot.from_dh(a, d, alpha, name=name)
        assert robot.dof == (6 if name in ("UR10", "Schunk LWA4P") else 7)
        q = robot.sample_q(10, rng)
        T = robot.fk(q).numpy()
        for k in range(10):
            np.testing.assert_allclose(
                T[k], numpy_dh_fk(a, d, alpha, [0.0] * len(a), q[k].tolist(), False), rtol=0, atol=1e-13
            )
    # Facts of robots.md: the iiwa DH table has the EE 1.266 m above the base at q = 0.
    kuka = Robot.from_dh(*dh_tables["KUKA iiwa"])
    home = kuka.fk(torch.zeros(7, dtype=F64))
    torch.testing.assert_close(home[:3, 3], torch.tensor([0.0, 0.0, 1.266], dtype=F64), rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- chain selection
TREE = """<robot name="tree">
  <link name="root"/><link name="a"/><link name="b"/><link name="c"/><link name="cam"/><link name="cam_opt"/>
  <joint name="ja" type="revolute"><parent link="root"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1"/></joint>
  <joint name="fcam" type="fixed"><parent link="root"/><child link="cam"/><origin xyz="0.1 0 0.5"/></joint>
  <joint name="fopt" type="fixed"><parent link="cam"/><child link="cam_opt"/></joint>
  <joint name="jb" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1"/></joint>
  <joint name="fc" type="fixed"><parent link="b"/><child link="c"/><origin xyz="0 0 0.2"/></joint>
  {extra}
</robot>"""
BRANCH = """<link name="d"/><link name="e"/>
  <joint name="jd" type="revolute"><parent link="a"/><child link="d"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1"/></joint>
  <joint name="je" type="continuous"><parent link="d"/><child link="e"/></joint>"""


def test_default_ee_ignores_fixed_only_branches():
    robot = Robot.from_urdf(TREE.format(extra=""))
    assert (robot.base_link, robot.ee_link) == ("root", "c")
    assert robot.joint_names == ("ja", "jb") and [j.name for j in robot.joints] == ["ja", "jb", "fc"]


def test_ambiguous_tree_lists_candidates():
    text = TREE.format(extra=BRANCH)
    with pytest.raises(
        ChainError, match=r"end-effector link is ambiguous below 'root'; pass ee_link= one of \['c', 'e'\]"
    ):
        Robot.from_urdf(text)
    robot = Robot.from_urdf(text, ee_link="e")
    assert robot.joint_names == ("ja", "jd", "je")
    sub = Robot.from_urdf(text, base_link="a", ee_link="c")
    assert sub.joint_names == ("jb",) and sub.base_link == "a"
    # A sub-chain's FK is the full chain's, seen from its base.
    full = Robot.from_urdf(text, ee_link="c")
    q = torch.tensor([0.4, -0.7], dtype=F64)
    T_a = full.link_poses(q)[..., 1, :, :]
    torch.testing.assert_close(T_a @ sub.fk(q[1:]), full.fk(q), rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ["irb140", "kr16_2"])
def test_default_ee_ignores_the_base_link_of_the_rtb_originals(name):
    """The originals hang a `base` link off `base_link` by a fixed joint; it is not an EE candidate."""
    path = shared_path("reference-urdfs", REFERENCE_FILES[name])
    assert 'name="base"' in path.read_text(encoding="utf-8")
    robot = Robot.from_urdf(path)
    assert (robot.base_link, robot.ee_link) == ("base_link", "tool0")
    assert "base" not in robot.link_names


# ---------------------------------------------------------------------------------------------- randomize_links
@pytest.mark.parametrize("r", [0.0, 0.2, 0.4])
def test_randomize_links_scales_translations_only(named_robot, r, rng):
    new = randomize_links(named_robot, r, rng)
    assert new.joint_names == named_robot.joint_names and new.dof == named_robot.dof
    torch.testing.assert_close(new.lower, named_robot.lower, rtol=0, atol=0)
    torch.testing.assert_close(new.upper, named_robot.upper, rtol=0, atol=0)
    scales = []
    for old, j in zip(named_robot.joints, new.joints):
        assert (j.name, j.type, j.parent, j.child) == (old.name, old.type, old.parent, old.child)
        np.testing.assert_array_equal(j.axis, old.axis)
        np.testing.assert_array_equal(j.origin[:3, :3], old.origin[:3, :3])
        np.testing.assert_array_equal(j.origin[3], old.origin[3])
        t_old, t_new = old.origin[:3, 3], j.origin[:3, 3]
        if np.linalg.norm(t_old) > 0:
            s = float(t_new @ t_old / (t_old @ t_old))
            np.testing.assert_allclose(t_new, s * t_old, rtol=0, atol=1e-15)
            assert 1 - r - 1e-15 <= s <= 1 + r + 1e-15
            scales.append(s)
        else:
            np.testing.assert_array_equal(t_new, t_old)
    if r == 0:
        q = named_robot.sample_q(5, rng)
        torch.testing.assert_close(new.fk(q), named_robot.fk(q), rtol=0, atol=0)
    else:
        assert max(abs(s - 1) for s in scales) > r / 4  # the links really change
    again = randomize_links(named_robot, r, torch.Generator().manual_seed(5))
    same = randomize_links(named_robot, r, torch.Generator().manual_seed(5))
    assert all(np.array_equal(x.origin, y.origin) for x, y in zip(again.joints, same.joints))


def test_random_robot_family(random_robots):
    """The suite's random family: >= 50 distinct chains of 3..10 DOF from all four recipes."""
    assert len(random_robots) >= 50
    assert {r.dof for r in random_robots.values()} == set(range(3, 11))
    names = " ".join(random_robots)
    assert all(kind in names for kind in ("rand", "~0.3", "~0.2", "~0.4", "mdh"))
    fks = {}
    for case_id, robot in random_robots.items():
        q = torch.full((robot.dof,), 0.3, dtype=F64)
        fks[case_id] = tuple(robot.fk(q)[:3].flatten().tolist())
    assert len(set(fks.values())) == len(fks)


def test_random_robot_is_seeded_and_follows_the_ggik_rules():
    for dof in range(2, 11):
        a = random_robot(dof, torch.Generator().manual_seed(dof))
        b = random_robot(dof, dof)  # an integer seed is the same as a generator seeded with it
        assert a.dof == dof and set(a.joint_types) == {"revolute"}
        assert all(np.array_equal(x.origin, y.origin) for x, y in zip(a.joints, b.joints))
        # The last joint is on the EE axis (alpha = a = 0): the tool is a pure z translation in [0, 0.5].
        tool = a.joints[-1].origin
        np.testing.assert_allclose(tool[:3, :3], np.eye(3), rtol=0, atol=1e-15)
        assert tool[0, 3] == 0 and tool[1, 3] == 0 and 0 <= tool[2, 3] <= 0.5
        # Joint 1 at the base; each link is a twist in {+-pi/2} with an offset d in [0, 0.5] along z, or a
        # twist in {0, pi} with an offset |a| <= 0.5 along x (never both); the first twist is +-pi/2.
        np.testing.assert_array_equal(a.joints[0].origin, np.eye(4))
        for i, j in enumerate(a.joints[1:-1]):
            R, t = j.origin[:3, :3], j.origin[:3, 3]
            alpha = math.atan2(R[2, 1], R[1, 1])
            c, s = math.cos(alpha), math.sin(alpha)
            np.testing.assert_allclose(R, [[1, 0, 0], [0, c, -s], [0, s, c]], rtol=0, atol=1e-15)
            if abs(abs(alpha) - math.pi / 2) < 1e-12:
                assert t[0] == 0 and t[1] == 0 and 0 <= t[2] <= 0.5
            else:
                assert i > 0 and min(abs(alpha), abs(abs(alpha) - math.pi)) < 1e-12
                assert t[1] == 0 and t[2] == 0 and abs(t[0]) <= 0.5
    seeds = {tuple(random_robot(6, s).joints[2].origin.ravel().tolist()) for s in range(20)}
    assert len(seeds) > 5
