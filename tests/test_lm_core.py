"""The one LM step definition (ggik.ik.lm.core): the damped matrix, the damping schedule and the limit hold, the same
for torch tensors, numpy arrays and numbers, and used by every LM in the package."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch

from ggik.ik.lm import core
from ggik.ik.lm.core import DAMPING_MAX, DAMPING_MIN, HOLD_GRADIENT, damped, damped_step, held_joints, next_damping

PACKAGE = Path(core.__file__).parents[2]


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
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == Path(core.__file__):
            continue
        text = path.read_text()
        assert not re.search(r"lam\w* / 3\.0|lam\w* \* 4\.0|1e-9\), 1e6", text), path.name
        assert not re.search(r"& \(g < 0\)\)|& \(g > 0\)\)", text), path.name


@pytest.mark.parametrize("seed", range(4))
def test_the_kernels_step_is_the_one_step(seed):
    """The compiled kernel writes its step out per element (numba): run as plain Python (or compiled, once built), it
    gives :func:`damped_step`'s dq, joints on a limit and pushed outward held, for numpy and torch alike."""
    from ggik.ik.lm import kernel

    rng = np.random.default_rng(seed)
    n, m, dof = 5, 6, 7
    J, e = rng.normal(size=(n, m, dof)), rng.normal(size=(n, m))
    lo, hi = -np.ones(dof), np.ones(dof)
    q = rng.uniform(-1, 1, size=(n, dof))
    q[:, :3] = np.array([-1.0, 1.0, -1.0])  # on a limit: held or not by the gradient's sign
    lam = rng.uniform(1e-3, 1.0, size=n)
    expected = damped_step(J, e, q, lo, hi, lam)
    # numpy and torch solve with LU, the kernel with a Cholesky: they differ by eps * cond(A) * |dq| ~ 1e-13 at most for
    # these well-conditioned systems (lam >= 1e-3), far inside the tolerances below (1e-12 and 1e-10)
    g = (J.transpose(0, 2, 1) @ e[..., None])[..., 0]
    free = J * (~held_joints(q, lo, hi, g))[:, None, :]
    cond = np.linalg.cond(damped(free.transpose(0, 2, 1) @ free, lam))
    assert (np.finfo(float).eps * cond * np.abs(expected).max(-1)).max() < 1e-13, "the tolerances assume this"
    torch.testing.assert_close(
        damped_step(*(torch.from_numpy(a) for a in (J, e, q, lo, hi, lam))),
        torch.from_numpy(expected),
        rtol=0,
        atol=1e-12,
    )
    chain = kernel.Chain(*(np.zeros(1) for _ in range(8)), lo, hi, np.zeros(3), np.zeros((16, 9)), np.zeros(16))
    for i in range(n):
        dq = np.zeros(dof)
        kernel._step(J[i], m, e[i], q[i], chain, lam[i], HOLD_GRADIENT, dq)
        np.testing.assert_allclose(dq, expected[i], rtol=0, atol=1e-10)
    assert (expected[:, :3] == 0).any(), "the test needs held joints"
