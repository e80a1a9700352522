"""The hard group's dead ends (benchmarks/obstacles/decoys.py): balls that make a decoy trajectory collide and leave
the witness clear, and the dense motions they are checked on."""

from __future__ import annotations

import math

import pytest
import torch

from benchmarks.obstacles.decoys import block_decoys, dense_motion
from ggik import Robot, Scene
from ggik.collision import Clearance, CollisionModel
from ggik.path.motion import motion_clearance


def _straight(robot: Robot, seed: int, T: int = 20) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    qa = robot.sample_q(1, gen)[0]
    qb = torch.minimum(torch.maximum(qa + 0.6 * (torch.rand(robot.dof, generator=gen, dtype=qa.dtype) - 0.5),
                                     robot.lower), robot.upper)  # fmt: skip
    return qa + torch.linspace(0, 1, T, dtype=qa.dtype)[:, None] * (qb - qa)


@pytest.mark.parametrize("seed", range(3))
def test_dense_motion_keeps_the_waypoints_and_moves_at_most_a_degree(seed):
    q = _straight(Robot.from_name("panda"), seed, 8)
    dense = dense_motion(q)
    assert float((dense[1:] - dense[:-1]).abs().max()) <= math.radians(1.0) + 1e-12
    assert torch.equal(dense[-1], q[-1]) and torch.equal(dense[0], q[0])
    step = (dense.shape[0] - 1) // (q.shape[0] - 1)
    torch.testing.assert_close(dense[::step], q, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name, seed", [("panda", 0), ("ur10", 1), ("lbr_iiwa", 2)])
def test_blocked_decoys_collide_and_the_witness_stays_clear(name, seed):
    robot = Robot.from_name(name)
    model = CollisionModel.from_robot(robot)
    witness = _straight(robot, seed)
    decoy = witness.clone()
    decoy[:, 0] = torch.clamp(decoy[:, 0] + 1.2, robot.lower[0], robot.upper[0])  # the arm swung aside
    if float((decoy[:, 0] - witness[:, 0]).abs().min()) < 1.0:
        decoy[:, 0] = torch.clamp(witness[:, 0] - 1.2, robot.lower[0], robot.upper[0])
    free = Clearance(robot, model, Scene())
    assert bool((motion_clearance(free, witness) >= 0).all())
    scene = block_decoys(robot, model, Scene(), witness, [decoy])
    assert scene is not None and len(scene.spheres) > 0
    check = Clearance(robot, model, scene)
    assert float(motion_clearance(check, witness).min()) >= 0
    assert float(motion_clearance(check, decoy).min()) < 0
    # a decoy on the witness itself cannot be blocked without blocking the witness
    assert block_decoys(robot, model, Scene(), witness, [witness.clone()]) is None
