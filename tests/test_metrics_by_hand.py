"""The published metrics on hand-made errors with answers worked out by hand: :func:`ggik.ik.metrics.success_rate`
(the raw success of the accuracy table), :func:`ggik.evaluation.tables.raw_stats` (the accuracy table's error
statistics) and :func:`ggik.evaluation.tables.refined_stats` (the seeding table's success, iterations and best
errors), including the edges: errors exactly at a tolerance (strict: not within), nothing within, NaN errors."""

from __future__ import annotations

import math

import pytest
import torch

from ggik import Robot
from ggik.evaluation.tables import raw_stats, refined_stats
from ggik.ik.metrics import success_rate
from ggik.ik.refine import RefineInfo
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import RawSamples

F64 = torch.float64
DEG = math.radians(1.0)  #: the raw-success rotation tolerance [rad] (the GGIK paper's 1 degree)


def t(rows) -> torch.Tensor:
    return torch.tensor(rows, dtype=F64)


def below(x: float) -> float:
    """The largest float64 below x."""
    return math.nextafter(x, -math.inf)


# ---------------------------------------------------------------------------------------------- success_rate
def test_success_needs_one_sample_within_both_tolerances():
    pos = t([[0.005, 0.02], [0.02, 0.005], [0.009, 0.0095]])  # [m]
    rot = t([[0.001, 0.0], [0.0, 0.02], [0.017, 0.001]])  # [rad]; 1 deg = 0.01745
    # goal 0: sample 0 is within both; goal 1: each sample misses one of the two (no sample within both);
    # goal 2: both samples are within both
    assert success_rate(pos, rot) == pytest.approx(2 / 3, abs=1e-15)
    assert success_rate(pos[1:2], rot[1:2]) == 0.0


def test_an_error_exactly_at_a_tolerance_is_not_within_it():
    pos = t([[0.01], [0.0], [below(0.01)], [0.0]])
    rot = t([[0.0], [DEG], [0.0], [below(DEG)]])
    assert success_rate(pos[:2], rot[:2]) == 0.0  # at 1 cm, at 1 deg: both outside
    assert success_rate(pos[2:], rot[2:]) == 1.0  # one ulp inside: within
    assert success_rate(pos, rot) == 0.5


def test_success_rate_with_other_tolerances_all_and_none():
    pos = t([[0.0009, 0.5], [0.002, 0.0011], [0.0, 0.0]])
    rot = t([[math.radians(0.4), 0.0], [0.0, 0.0], [math.radians(0.6), math.radians(0.5)]])
    # 1 mm and 0.5 deg: goal 0 within (0.9 mm, 0.4 deg); goal 1 outside (2 mm, 1.1 mm); goal 2 outside (0.6 deg,
    # and 0.5 deg exactly at the tolerance)
    assert success_rate(pos, rot, pos_tol=1e-3, rot_tol_deg=0.5) == pytest.approx(1 / 3, abs=1e-15)
    assert success_rate(pos, rot, pos_tol=1.0, rot_tol_deg=1.0) == 1.0
    assert success_rate(pos, rot, pos_tol=1e-6, rot_tol_deg=1.0) == pytest.approx(1 / 3, abs=1e-15)  # goal 2 alone
    assert success_rate(pos + 1.0, rot) == 0.0
    assert isinstance(success_rate(pos, rot), float)


def test_a_nan_error_is_never_within():
    nan = math.nan
    pos = t([[nan, 0.001], [nan, nan], [0.001, 0.001]])
    rot = t([[0.0, 0.0], [0.0, 0.0], [nan, 0.0]])
    # goal 0: the NaN sample misses, the other is within; goal 1: only NaNs; goal 2: NaN rotation misses, the other in
    assert success_rate(pos, rot) == pytest.approx(2 / 3, abs=1e-15)
    assert success_rate(pos[1:2], rot[1:2]) == 0.0


# ---------------------------------------------------------------------------------------------- raw_stats
def raw(pos_mm, rot_deg) -> RawSamples:
    pos, rot = t(pos_mm) / 1e3, torch.deg2rad(t(rot_deg))
    P, S = pos.shape
    return RawSamples(q=torch.zeros(P, S, 2, dtype=F64), pos_err=pos, rot_err=rot, points=torch.zeros(P, S, 4, 3))


def test_raw_stats_average_each_goals_statistics_over_the_goals():
    # Five samples per goal (in no order): Q1 and Q3 are the 2nd and 4th smallest (linear interpolation lands on them)
    pos_mm = [[3.0, 10.0, 1.0, 4.0, 2.0], [6.0, 5.0, 20.0, 8.0, 5.0]]
    rot_deg = [[0.5, 0.1, 2.0, 3.0, 0.9], [1.0, 4.0, 1.5, 2.0, 1.2]]
    # goal 0: mean 4, min 1, max 10, Q1 2, Q3 4;      rot: mean 1.3, min 0.1, max 3, Q1 0.5, Q3 2
    # goal 1: mean 8.8, min 5, max 20, Q1 5, Q3 8;    rot: mean 1.94, min 1, max 4, Q1 1.2, Q3 2
    pos, rot, success = raw_stats(raw(pos_mm, rot_deg))
    assert pos == pytest.approx([6.4, 3.0, 15.0, 3.5, 6.0], rel=1e-12)
    assert rot == pytest.approx([1.62, 0.55, 3.5, 0.85, 2.0], rel=1e-12)
    # goal 0: (3 mm, 0.5 deg) is within 1 cm and 1 deg ((10 mm, 0.1 deg) is exactly at 1 cm: not);
    # goal 1: (6 mm, 1.0 deg) is exactly at 1 deg, the others miss a tolerance: 50 %
    assert success == pytest.approx(50.0, abs=1e-12)


def test_raw_stats_quartiles_interpolate_between_samples():
    # Four samples: Q1 at rank 0.75 (1 + 0.75 * (2 - 1)), Q3 at rank 2.25 (3 + 0.25 * (5 - 3))
    pos, rot, success = raw_stats(raw([[5.0, 1.0, 3.0, 2.0]], [[20.0, 10.0, 30.0, 40.0]]))
    assert pos == pytest.approx([2.75, 1.0, 5.0, 1.75, 3.5], rel=1e-12)
    assert rot == pytest.approx([25.0, 10.0, 40.0, 17.5, 32.5], rel=1e-12)
    assert success == 0.0  # every sample misses 1 deg


# ---------------------------------------------------------------------------------------------- refined_stats
TWO_JOINTS = """<robot name="two">
  <link name="l0"/><link name="l1"/><link name="l2"/>
  <joint name="j1" type="revolute"><parent link="l0"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.5 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


def info(converged, iterations, pos, rot) -> RefineInfo:
    return RefineInfo(torch.tensor(converged), torch.tensor(iterations), t(pos), t(rot))


def test_refined_stats_by_hand():
    robot = Robot.from_urdf(TWO_JOINTS)  # both joints within [-1, 1]
    q = t([[[0.5, 0.5], [0.0, 0.0]], [[1.5, 0.0], [0.0, 0.2]], [[0.0, 0.0], [0.1, 0.1]]])
    res = info(
        converged=[[True, False], [True, False], [False, False]],
        iterations=[[3, 30], [5, 30], [30, 30]],
        pos=[[0.5e-3, 0.9e-3], [2e-4, 1e-3], [0.05, 0.04]],
        rot=[[0.009, 0.001], [1e-4, 0.0], [0.1, 0.3]],
    )
    success, iterations, best_pos_mm, best_rot_deg = refined_stats(
        robot, q, res, RefineConfig(pos_tol=1e-3, rot_tol=1e-2)
    )
    # success: goal 0 converged within the limits; goal 1's converged start has joint 1 at 1.5 (outside); goal 2 none
    assert success == pytest.approx(100 / 3, rel=1e-12)
    assert iterations == pytest.approx(128 / 6, rel=1e-12)  # the mean over all starts, converged or not
    # best start = least pos/pos_tol + rot/rot_tol: goal 0 start 1 (0.9 + 0.1 < 0.5 + 0.9: not the smaller position
    # error, nor the converged start), goal 1 start 0 (0.2 + 0.01 < 1 + 0), goal 2 start 0 (50 + 10 < 40 + 30)
    assert best_pos_mm == pytest.approx((0.9 + 0.2 + 50.0) / 3, rel=1e-12)
    assert best_rot_deg == pytest.approx(math.degrees((0.001 + 1e-4 + 0.1) / 3), rel=1e-12)
    # a looser rotation tolerance weighs rotation less: goal 0's best is then start 0 (0.5 + 0.09 < 0.9 + 0.01) and
    # goal 2's start 1 (40 + 3 < 50 + 1); goal 1 keeps start 0 (0.2 + 0.001 < 1 + 0)
    _, _, best_pos_mm, best_rot_deg = refined_stats(robot, q, res, RefineConfig(pos_tol=1e-3, rot_tol=1e-1))
    assert best_pos_mm == pytest.approx((0.5 + 0.2 + 40.0) / 3, rel=1e-12)
    assert best_rot_deg == pytest.approx(math.degrees((0.009 + 1e-4 + 0.3) / 3), rel=1e-12)


def test_refined_stats_limits_edges_and_nothing_solved():
    robot = Robot.from_urdf(TWO_JOINTS)
    refine = RefineConfig()
    errors = dict(iterations=[[1], [1], [1]], pos=[[0.0], [0.0], [0.0]], rot=[[0.0], [0.0], [0.0]])
    at_limits = t([[[1.0, -1.0]], [[1.0 + 1e-3, 0.0]], [[0.0, 0.0]]])
    # joints exactly on their limits count as within; 1 mrad beyond does not; an unconverged start never counts
    success, *_ = refined_stats(robot, at_limits, info([[True], [True], [False]], **errors), refine)
    assert success == pytest.approx(100 / 3, rel=1e-12)
    success, iterations, _, _ = refined_stats(robot, at_limits, info([[False], [False], [False]], **errors), refine)
    assert success == 0.0 and iterations == 1.0
