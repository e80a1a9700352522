"""ggik.nn.distance_geometry (float64): known-edge residuals and the differentiable damped Gauss-Newton step.

The reference for one step is built independently: the residual vector of the known edges (one row per edge),
its Jacobian by autograd, and the damped normal equations (J^T J + lambda I) delta = -J^T r over the free
coordinates, solved densely. (:func:`ggik.ik.dg_refine.project_point_sets` iterates this same step.)
"""

from __future__ import annotations

import math

import pytest
import torch
from conftest import orthogonal

from ggik import RobotGraph, random_robot
from ggik.graph.batch import GraphBatch
from ggik.nn.distance_geometry import block_jacobi_step, fixed_size_steps, gauss_newton_step, known_residuals

F64 = torch.float64
TOL = 1e-9
DOFS = (3, 5, 7, 9)


def graph_of(dof: int) -> RobotGraph:
    return RobotGraph.from_robot(random_robot(dof, torch.Generator().manual_seed(100 + dof), name=f"rand{dof}"))


GRAPHS = {dof: graph_of(dof) for dof in DOFS}


def solved(dof: int, P: int = 4, seed: int = 0) -> GraphBatch:
    graph = GRAPHS[dof]
    return GraphBatch.from_graph(graph, q=graph.robot.sample_q(P, torch.Generator().manual_seed(seed)))


def movable(batch: GraphBatch) -> torch.Tensor:
    return batch.node_mask & ~batch.anchor_mask


def perturbed(batch: GraphBatch, scale: float, seed: int = 1) -> torch.Tensor:
    """The true point sets with ``scale`` m of Gaussian noise on the free nodes; anchors exactly at their known
    positions, padding at 0."""
    noise = scale * torch.randn(batch.pos.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
    x = torch.where(batch.anchor_mask[..., None], batch.known_positions, batch.pos + noise)
    return x * batch.node_mask[..., None]


def cost(x: torch.Tensor, batch: GraphBatch) -> torch.Tensor:
    """f(X) = 1/2 sum over known edges of r_ij^2 [m^4], (B,)."""
    r, _ = known_residuals(x, batch.known_distances, batch.known_mask)
    return 0.25 * (r**2).sum((-1, -2))


def step(x: torch.Tensor, batch: GraphBatch, **kwargs) -> torch.Tensor:
    return gauss_newton_step(x, batch.known_distances, batch.known_mask, movable(batch), **kwargs)


def motion(seed: int, det: float, B: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    R = torch.stack([orthogonal(gen, det) for _ in range(B)])
    return R, 2.0 * torch.randn(B, 1, 3, generator=gen, dtype=F64)


def padded() -> tuple[GraphBatch, list[GraphBatch]]:
    alone = [solved(3, P=2, seed=5), solved(7, P=2, seed=6)]
    return GraphBatch.cat(alone), alone


# ---------------------------------------------------------------------------------------------- residuals
@pytest.mark.parametrize("dof", DOFS)
def test_residuals_vanish_on_true_solutions(dof):
    batch = solved(dof, seed=dof)
    assert batch.known_mask.any(-1).all(), "every node has a known edge"
    r, e = known_residuals(batch.pos, batch.known_distances, batch.known_mask)
    assert r.shape == batch.known_mask.shape and e.shape == batch.known_mask.shape + (3,)
    assert r.abs().max() < TOL
    torch.testing.assert_close(e, batch.pos[:, :, None] - batch.pos[:, None], rtol=0, atol=0)
    # ... and not on another configuration's point set (the check above can fail)
    other = solved(dof, seed=dof + 50).pos
    assert known_residuals(other, batch.known_distances, batch.known_mask)[0].abs().max() > 1e-3


@pytest.mark.parametrize("dof", DOFS)
def test_residuals_match_a_loop_and_ignore_unknown_entries(dof):
    batch = solved(dof, P=2, seed=dof)
    x = perturbed(batch, 0.1, seed=dof)
    gen = torch.Generator().manual_seed(dof)
    noise = 10.0 * torch.randn(batch.known_mask.shape, generator=gen, dtype=F64)
    junk = torch.where(batch.known_mask, batch.known_distances, noise)  # anything where unknown
    for mask in (batch.known_mask, batch.known_mask.to(F64)):  # bool or float mask
        r, _ = known_residuals(x, junk, mask)
        B, N = batch.known_mask.shape[:2]
        want = torch.zeros(B, N, N, dtype=F64)
        for b in range(B):
            for i in range(N):
                for j in range(N):
                    if batch.known_mask[b, i, j]:
                        want[b, i, j] = (
                            float(((x[b, i] - x[b, j]) ** 2).sum()) - float(batch.known_distances[b, i, j]) ** 2
                        )
        torch.testing.assert_close(r, want, rtol=0, atol=1e-12)
        assert want.abs().max() > 1e-3


@pytest.mark.parametrize("det", [1.0, -1.0], ids=["rotation", "reflection"])
@pytest.mark.parametrize("dof", DOFS)
def test_residuals_are_invariant_and_differences_equivariant(dof, det):
    batch = solved(dof, seed=dof)
    x = perturbed(batch, 0.05, seed=dof)
    R, t = motion(dof, det, batch.batch_size)
    r, e = known_residuals(x, batch.known_distances, batch.known_mask)
    r2, e2 = known_residuals(x @ R.transpose(-1, -2) + t, batch.known_distances, batch.known_mask)
    torch.testing.assert_close(r2, r, rtol=0, atol=TOL)
    torch.testing.assert_close(e2, e @ R.transpose(-1, -2)[:, None], rtol=0, atol=TOL)


# ---------------------------------------------------------------------------------------------- one step
def reference_step(
    x: torch.Tensor, D: torch.Tensor, K: torch.Tensor, free: torch.Tensor, damping: float
) -> torch.Tensor:
    """One damped Gauss-Newton step of one point set x (N, 3) from an autograd Jacobian of the edge residuals."""
    i, j = torch.triu_indices(x.shape[0], x.shape[0])
    edge = K[i, j] > 0
    i, j = i[edge], j[edge]

    def residuals(y: torch.Tensor) -> torch.Tensor:
        z = x.clone()
        z[free] = y.view(-1, 3)
        return ((z[i] - z[j]) ** 2).sum(-1) - D[i, j] ** 2

    y = x[free].reshape(-1)
    J = torch.autograd.functional.jacobian(residuals, y)
    JtJ = J.T @ J
    lam = damping * torch.diagonal(JtJ).mean()
    delta = torch.linalg.solve(JtJ + lam * torch.eye(y.numel(), dtype=x.dtype), -J.T @ residuals(y))
    out = torch.zeros_like(x)
    out[free] = delta.view(-1, 3)
    return out


@pytest.mark.parametrize("damping", [1e-3, 1e-2, 1e-1])
@pytest.mark.parametrize("dof", DOFS)
@pytest.mark.parametrize("solver", ["full", "jacobi"])
def test_step_equals_its_autograd_reference(solver, dof, damping):
    """full: a dense autograd Gauss-Newton step; jacobi: per-node autograd Newton steps with the other nodes fixed."""
    ours, reference = {"full": (step, reference_step), "jacobi": (jacobi, reference_jacobi_step)}[solver]
    batch = solved(dof, seed=dof)
    x = perturbed(batch, 0.02, seed=dof)
    free = movable(batch)
    want = torch.stack(
        [
            reference(x[b], batch.known_distances[b], batch.known_mask[b], free[b], damping)
            for b in range(batch.batch_size)
        ]
    )
    got = ours(x, batch, damping=damping, max_step=math.inf)
    assert want.abs().max() > 1e-3, "the reference moves the points"
    torch.testing.assert_close(got, want, rtol=0, atol=TOL)


@pytest.mark.parametrize("dof", DOFS)
def test_the_fixed_size_system_of_cuda_gives_the_same_step(dof):
    """The fixed-size system (CUDA's form, fixed_size_steps: every node a column, no host sync) solves the same system
    as the reduced one."""
    joint, _ = padded()
    for batch in (solved(dof, seed=dof + 1), joint):
        x = perturbed(batch, 0.03, seed=dof)
        for max_step in (math.inf, 0.1):
            reduced = step(x, batch, max_step=max_step)  # a CPU's default
            with fixed_size_steps():  # a sync-free training step's default on any device (Trainer(sync_free=True))
                full = step(x, batch, max_step=max_step)
            assert reduced.abs().max() > 1e-4
            torch.testing.assert_close(full, reduced, rtol=0, atol=TOL)
    reduced = step(x, batch)
    with fixed_size_steps():
        full = step(x, batch)
        with fixed_size_steps(False):
            assert torch.equal(step(x, batch), reduced)
        assert torch.equal(step(x, batch), full), "the outer setting back"
    assert torch.equal(step(x, batch), reduced)


def test_step_is_zero_on_fixed_nodes_and_padding_and_padding_changes_nothing():
    joint, alone = padded()
    x = perturbed(joint, 0.05)
    assert not joint.node_mask.all(), "the batch must be padded"
    for max_step in (math.inf, 0.25, 0.01):
        got = step(x, joint, max_step=max_step)
        fixed = ~movable(joint)
        assert (got[fixed] == 0).all(), "anchors and padding never move"
        assert got[movable(joint)].norm(dim=-1).min() > 1e-6
        row = 0
        for single in alone:
            B, N = single.batch_size, single.num_nodes
            torch.testing.assert_close(
                step(x[row : row + B, :N], single, max_step=max_step), got[row : row + B, :N], rtol=0, atol=1e-12
            )
            row += B
    # Whatever the padding rows and columns hold, they change nothing.
    junk = joint.known_distances + (~joint.node_mask[:, :, None] | ~joint.node_mask[:, None, :]) * 7.0
    x_junk = torch.where(joint.node_mask[..., None], x, torch.full_like(x, 3.0))
    got = step(x, joint)
    again = gauss_newton_step(x_junk, junk, joint.known_mask, movable(joint))
    torch.testing.assert_close(again, got, rtol=0, atol=1e-12)


def test_step_is_zero_when_nothing_may_move():
    batch = solved(5, P=2)
    x = perturbed(batch, 0.05)
    got = gauss_newton_step(x, batch.known_distances, batch.known_mask, torch.zeros_like(batch.node_mask))
    assert torch.equal(got, torch.zeros_like(x))


@pytest.mark.parametrize("max_step", [math.inf, 0.25, 0.02])
@pytest.mark.parametrize("det", [1.0, -1.0], ids=["rotation", "reflection"])
@pytest.mark.parametrize("dof", (3, 7))
def test_step_is_equivariant(dof, det, max_step):
    batch = solved(dof, seed=dof)
    x = perturbed(batch, 0.05, seed=dof)
    R, t = motion(dof + 1, det, batch.batch_size)
    got = step(x, batch, max_step=max_step)
    assert got.abs().max() > 1e-3
    rotated = step(x @ R.transpose(-1, -2), batch, max_step=max_step)
    torch.testing.assert_close(rotated, got @ R.transpose(-1, -2), rtol=0, atol=TOL)
    moved = step(x @ R.transpose(-1, -2) + t, batch, max_step=max_step)
    torch.testing.assert_close(moved, got @ R.transpose(-1, -2), rtol=0, atol=TOL)
    translated = step(x + t, batch, max_step=max_step)
    torch.testing.assert_close(translated, got, rtol=0, atol=TOL)


@pytest.mark.parametrize("dof", DOFS)
def test_one_step_from_a_small_perturbation_reduces_the_cost(dof):
    batch = solved(dof, seed=dof)
    x = perturbed(batch, 0.005, seed=dof)
    before = cost(x, batch)
    after = cost(x + step(x, batch), batch)
    assert before.min() > 1e-8
    assert (after < 0.1 * before).all(), (before, after)


@pytest.mark.parametrize("quantile", [0.25, 0.75])
def test_max_step_bounds_each_nodes_step_and_keeps_its_direction(quantile):
    batch = solved(7, seed=3)
    x = perturbed(batch, 0.1, seed=3)  # far from a solution: large steps
    free = step(x, batch, max_step=math.inf)
    lengths = free.norm(dim=-1)
    max_step = float(torch.quantile(lengths[movable(batch)], quantile))  # cuts some steps, not all
    capped = step(x, batch, max_step=max_step)
    assert max_step > 1e-3 and (lengths > 1.5 * max_step).any() and (lengths[movable(batch)] < 0.9 * max_step).any()
    assert capped.norm(dim=-1).max() <= max_step * (1 + 1e-12)
    factor = torch.clamp(max_step / torch.sqrt(lengths**2 + 1e-12), max=1.0)[..., None]
    torch.testing.assert_close(capped, free * factor, rtol=0, atol=1e-12)
    short = lengths < max_step
    torch.testing.assert_close(capped[short], free[short], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- gradients and dtypes
@pytest.mark.parametrize("max_step", [1e6, 0.02], ids=["uncut", "cut"])
def test_step_passes_gradcheck(max_step):
    batch = solved(3, P=1, seed=4)
    x = perturbed(batch, 0.05, seed=4).requires_grad_(True)
    d = batch.known_distances.clone().requires_grad_(True)
    if max_step < 1.0:
        lengths = step(x.detach(), batch, max_step=math.inf).norm(dim=-1)[movable(batch)]
        assert (lengths > max_step * 1.1).any() and ((lengths - max_step).abs() > 1e-3).all(), "cut steps, no kink"

    def f(x_, d_):
        return gauss_newton_step(x_, d_, batch.known_mask, movable(batch), 1e-2, max_step)

    assert torch.autograd.gradcheck(f, (x, d), eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradients_are_finite_without_a_trust_region():
    """The forward step is fine with max_step=inf (tested above); its backward pass should be too."""
    batch = solved(3, P=1, seed=4)
    x = perturbed(batch, 0.05, seed=4).requires_grad_(True)
    step(x, batch, max_step=math.inf).sum().backward()
    assert torch.isfinite(x.grad).all()


def test_gradients_are_finite_on_a_padded_batch_with_coincident_points():
    joint, _ = padded()
    x = perturbed(joint, 0.05)
    x[:, 5] = x[:, 4]  # two coincident free nodes
    x.requires_grad_(True)
    out = step(x, joint)
    (out**2).sum().backward()
    assert torch.isfinite(x.grad).all() and x.grad.abs().max() > 0
    assert (x.grad[~joint.node_mask] == 0).all()


def test_float32_input_gives_float32_close_to_float64_also_under_autocast():
    batch = solved(5, seed=2)
    x = perturbed(batch, 0.02, seed=2)
    want = step(x, batch)
    got = gauss_newton_step(x.float(), batch.known_distances.float(), batch.known_mask, movable(batch))
    assert got.dtype == torch.float32
    torch.testing.assert_close(got.double(), want, rtol=0, atol=1e-4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        auto = gauss_newton_step(x.float(), batch.known_distances.float(), batch.known_mask, movable(batch))
    assert auto.dtype == torch.float32
    torch.testing.assert_close(auto.double(), want, rtol=0, atol=1e-4)


# ---------------------------------------------------------------------------------------------- block-Jacobi step
def reference_jacobi_step(
    x: torch.Tensor, D: torch.Tensor, K: torch.Tensor, free: torch.Tensor, damping: float
) -> torch.Tensor:
    """Each free node alone: its own edges' residuals, their autograd Jacobian in its 3 coordinates (neighbours held),
    and the damped normal equations with lambda = damping * trace(J^T J) / 3 (+ 1e-9)."""
    out = torch.zeros_like(x)
    for i in free.nonzero()[:, 0].tolist():
        nbr = (K[i] > 0).nonzero()[:, 0]

        def residuals(p: torch.Tensor, x_nbr: torch.Tensor = x[nbr], d_nbr: torch.Tensor = D[i, nbr]) -> torch.Tensor:
            return ((p - x_nbr) ** 2).sum(-1) - d_nbr**2

        J = torch.autograd.functional.jacobian(residuals, x[i])  # (edges, 3)
        JtJ = J.T @ J
        lam = damping * torch.diagonal(JtJ).sum() / 3 + 1e-9
        out[i] = torch.linalg.solve(JtJ + lam * torch.eye(3, dtype=x.dtype), -J.T @ residuals(x[i]))
    return out


def jacobi(x: torch.Tensor, batch: GraphBatch, **kwargs) -> torch.Tensor:
    return block_jacobi_step(x, batch.known_distances, batch.known_mask, movable(batch), **kwargs)


@pytest.mark.parametrize("det", [1.0, -1.0])
@pytest.mark.parametrize("dof", (3, 7))
def test_jacobi_step_is_equivariant_zero_at_solutions_and_on_fixed_nodes(dof, det):
    batch = solved(dof, P=3, seed=2)
    x = perturbed(batch, 0.05, seed=3)
    R, t = motion(dof, det, batch.batch_size)
    got = jacobi(x, batch, max_step=0.02)
    moved = jacobi(x @ R.transpose(-1, -2) + t, batch, max_step=0.02)
    torch.testing.assert_close(moved, got @ R.transpose(-1, -2), rtol=0, atol=TOL)
    assert (got[~movable(batch)] == 0).all() and got[movable(batch)].norm(dim=-1).max() <= 0.02 + 1e-12
    assert jacobi(batch.pos, batch).abs().max() < TOL, "a solution is a fixed point"


def test_jacobi_steps_of_a_single_free_node_converge_to_its_edges():
    """With all other nodes at their true positions, the block-Jacobi step is the node's own Gauss-Newton step:
    iterating it puts the node back on its known distances."""
    batch = solved(7, P=2, seed=4)
    free = movable(batch)
    one = torch.zeros_like(free)
    one[:, free[0].nonzero()[3, 0]] = True
    x = torch.where(one[..., None], batch.pos + 0.05, batch.pos)
    for _ in range(20):
        x = x + block_jacobi_step(x, batch.known_distances, batch.known_mask, one, 1e-3, math.inf)
    r, _ = known_residuals(x, batch.known_distances, batch.known_mask)
    assert r.abs().max() < 1e-9
