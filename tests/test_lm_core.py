"""The one LM step definition (ggik.ik.lm_core): the damped matrix, the damping schedule and the limit hold, the same
for torch tensors, numpy arrays and numbers, and used by every LM in the package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from ggik.ik import lm_core
from ggik.ik.lm_core import DAMPING_MAX, DAMPING_MIN, HOLD_GRADIENT, damped, held_joints, next_damping

IK = Path(lm_core.__file__).parent


@pytest.mark.parametrize("seed", range(5))
def test_damped_adds_lam_times_diagonal_plus_one_on_the_diagonal_only(seed):
    g = torch.Generator().manual_seed(seed)
    J = torch.randn(4, 6, 7, generator=g, dtype=torch.float64)
    JtJ = J.transpose(-1, -2) @ J
    lam = torch.rand(4, generator=g, dtype=torch.float64)
    expected = JtJ + lam[:, None, None] * (torch.diag_embed(torch.diagonal(JtJ, dim1=-2, dim2=-1)) + torch.eye(7))
    assert torch.equal(damped(JtJ, lam), expected)  # bit for bit: the solvers' results do not move
    assert np.array_equal(damped(JtJ.numpy(), lam.numpy()), expected.numpy())
    scalar = damped(JtJ.numpy(), 0.25)
    off = ~np.eye(7, dtype=bool)
    assert np.array_equal(scalar[:, off], JtJ.numpy()[:, off])
    diagonal = np.diagonal(JtJ.numpy(), 0, 1, 2)
    np.testing.assert_allclose(np.diagonal(scalar, 0, 1, 2), 1.25 * diagonal + 0.25, rtol=1e-15)


def test_the_damping_schedule_is_one_for_numbers_arrays_and_tensors():
    lam = np.array([1.0, 1.0, DAMPING_MIN, DAMPING_MAX])
    better = np.array([True, False, True, False])
    expected = np.array([1.0 / 3.0, 4.0, DAMPING_MIN, DAMPING_MAX])
    np.testing.assert_array_equal(next_damping(lam, better), expected)
    np.testing.assert_array_equal(next_damping(torch.from_numpy(lam), torch.from_numpy(better)).numpy(), expected)
    assert [next_damping(v, b) for v, b in zip(lam.tolist(), better.tolist())] == expected.tolist()


def test_a_joint_is_held_only_when_on_a_limit_and_pushed_outward_beyond_noise():
    lo, hi = np.array([-1.0, -1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0, 1.0])
    q = np.array([-1.0, 1.0, -1.0, 0.0])
    g = np.array([-1e-3, 1e-3, -0.5 * HOLD_GRADIENT, -1.0])  # out, out, noise, inside
    np.testing.assert_array_equal(held_joints(q, lo, hi, g), [True, True, False, False])
    held = held_joints(*(torch.from_numpy(a) for a in (q, lo, hi, g)))
    assert torch.equal(held, torch.tensor([True, True, False, False]))


def test_no_lm_in_the_package_writes_its_own_schedule_or_hold():
    """The step's constants live in lm_core alone: no other solver module divides lam by 3, multiplies it by 4 or holds
    a joint on a bare sign test (the drift a review found between four copies of the step)."""
    for path in sorted(IK.glob("*.py")):
        if path.name == "lm_core.py":
            continue
        text = path.read_text()
        assert not re.search(r"lam\w* / 3\.0|lam\w* \* 4\.0|1e-9\), 1e6", text), path.name
        assert not re.search(r"& \(g < 0\)\)|& \(g > 0\)\)", text), path.name
