"""ggik.model.GGIKModel (tiny, float64): E(3) equivariance of every graph network, the goal-feature flag,
and prior sampling of padded batches (problems sampled jointly = each problem sampled alone)."""

from __future__ import annotations

import operator
from dataclasses import replace

import pytest
import torch
from conftest import orthogonal

from ggik import Robot, RobotGraph, random_robot
from ggik.graph.batch import GraphBatch
from ggik.kinematics.geometry import matrix_to_rotvec
from ggik.nn.cvae import GGIKModel, ModelConfig

F64 = torch.float64
TOL = 1e-10


def tiny_model(
    goal_features: bool = False, pin_anchors: bool = True, seed: int = 0, prior_mixture: str = "graph"
) -> GGIKModel:
    torch.manual_seed(seed)
    cfg = ModelConfig(
        dim=8,
        hidden=16,
        enc_layers=1,
        dec_layers=2,
        latent=4,
        prior_components=3,
        max_index=8,
        goal_features=goal_features,
        pin_anchors=pin_anchors,
        prior_mixture=prior_mixture,
        coord_gain=0.5,
    )  # a large gain: coordinates really move
    return GGIKModel(cfg).double().eval()


PIN = {"pinned": True, "free-anchors": False}


@pytest.fixture(scope="module")
def graphs() -> list[RobotGraph]:
    """Panda (7 DOF, 18 nodes), a random 5-DOF (14 nodes) and a random 3-DOF (10 nodes) robot."""
    gen = torch.Generator().manual_seed(2024)
    robots = [Robot.from_name("panda"), random_robot(5, gen, name="rand5"), random_robot(3, gen, name="rand3")]
    return [RobotGraph.from_robot(r) for r in robots]


def solved_batch(graphs: list[RobotGraph], per_robot: int = 2, seed: int = 1) -> GraphBatch:
    gen = torch.Generator().manual_seed(seed)
    return GraphBatch.cat([GraphBatch.from_graph(g, q=g.robot.sample_q(per_robot, gen)) for g in graphs])


def problem_batch(graphs: list[RobotGraph], seed: int = 2) -> tuple[GraphBatch, list[GraphBatch]]:
    """One problem per robot, jointly (padded) and alone."""
    gen = torch.Generator().manual_seed(seed)
    goals = [g.robot.fk(g.robot.sample_q(1, gen)) for g in graphs]
    alone = [GraphBatch.from_graph(g, T_goal=T) for g, T in zip(graphs, goals)]
    return GraphBatch.cat(alone), alone


#: name -> (determinant of the orthogonal part or None for none, with a translation)
TRANSFORMS = {
    "rotation": (1.0, False),
    "reflection": (-1.0, False),
    "translation": (None, True),
    "rotation+translation": (1.0, True),
    "reflection+translation": (-1.0, True),
}


def random_motions(kind: str, B: int, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    """A different rigid motion (or reflection) per example: R (B, 3, 3), t (B, 3)."""
    gen = torch.Generator().manual_seed(seed)
    det, translate = TRANSFORMS[kind]
    R = torch.stack([orthogonal(gen, det) if det is not None else torch.eye(3, dtype=F64) for _ in range(B)])
    t = 2.0 * torch.randn(B, 3, generator=gen, dtype=F64) if translate else torch.zeros(B, 3, dtype=F64)
    return R, t


def apply(points: torch.Tensor, R: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Points (B, ..., N, 3) moved by per-example R (B, 3, 3), t (B, 3)."""
    shape = (R.shape[0],) + (1,) * (points.ndim - 3)
    return points @ R.transpose(-1, -2).view(*shape, 3, 3) + t.view(*shape, 1, 3)


def transform_batch(batch: GraphBatch, R: torch.Tensor, t: torch.Tensor, move_goal: bool = True) -> GraphBatch:
    """The same problems (and solutions) in another frame: only known positions move; unknown stay 0."""
    T = torch.eye(4, dtype=F64).repeat(batch.batch_size, 1, 1)
    T[:, :3, :3], T[:, :3, 3] = R, t
    known = batch.anchor_mask[..., None]
    changes = dict(known_positions=torch.where(known, apply(batch.known_positions, R, t), 0.0))
    if batch.pos is not None:
        changes["pos"] = torch.where(batch.node_mask[..., None], apply(batch.pos, R, t), 0.0)
    if move_goal:
        changes["goal"] = T @ batch.goal
    return replace(batch, **changes)


# ---------------------------------------------------------------------------------------------- the batch helper
def test_transformed_batch_keeps_unknown_positions_zero(graphs):
    batch = solved_batch(graphs)
    R, t = random_motions("rotation+translation", batch.batch_size)
    moved = transform_batch(batch, R, t)
    assert (moved.known_positions[~batch.anchor_mask] == 0).all()
    assert (moved.pos[~batch.node_mask] == 0).all()
    # The moved goal still matches the moved anchors p_n: node 2n + 2 is the origin of F_n.
    for b in range(batch.batch_size):
        n = int(batch.num_joints[b])
        torch.testing.assert_close(moved.goal[b, :3, 3], moved.known_positions[b, 2 * n + 2], rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- equivariance
@pytest.mark.parametrize("pin", list(PIN.values()), ids=list(PIN))
@pytest.mark.parametrize("kind", list(TRANSFORMS), ids=list(TRANSFORMS))
def test_encode_problem_invariant_features_equivariant_positions(graphs, kind, pin):
    model = tiny_model(pin_anchors=pin)
    batch = solved_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    a = model.encode_problem(batch)
    b = model.encode_problem(transform_batch(batch, R, t))
    real = batch.node_mask
    assert (a.x_partial - model.initial_positions(batch))[real].abs().max() > 1e-2, "x~ must move (else trivial)"
    for key in ("h0", "h_partial", "prior.logits", "prior.mu", "prior.log_std", "edge_attr"):
        ta, tb = (operator.attrgetter(key)(e) for e in (a, b))
        per_node = ta.shape[:2] == real.shape  # the "graph" mixture's logits are (B, K)
        sel = real if per_node else slice(None)
        torch.testing.assert_close(tb[sel], ta[sel], rtol=0, atol=TOL, msg=f"{key} is not invariant")
    torch.testing.assert_close(b.x_partial[real], apply(a.x_partial, R, t)[real], rtol=0, atol=TOL)


@pytest.mark.parametrize("pin", list(PIN.values()), ids=list(PIN))
@pytest.mark.parametrize("kind", list(TRANSFORMS), ids=list(TRANSFORMS))
def test_decoder_is_equivariant(graphs, kind, pin):
    assert_decoder_equivariant(tiny_model(pin_anchors=pin), solved_batch(graphs), kind, TOL)


def assert_decoder_equivariant(model: GGIKModel, batch: GraphBatch, kind: str, tol: float) -> None:
    """Decoding the same latents for the moved problems gives the moved point sets (also used by the variants'
    tests)."""
    R, t = random_motions(kind, batch.batch_size)
    latent_nodes = model.latent_mask(batch.node_mask).shape[1]
    z = torch.randn(
        batch.batch_size, latent_nodes, model.cfg.latent, generator=torch.Generator().manual_seed(4), dtype=F64
    )
    pa = model.encode_problem(batch)
    x = model.decode(z, pa, batch.node_mask)
    x_moved = model.decode(z, model.encode_problem(transform_batch(batch, R, t)), batch.node_mask)
    real = batch.node_mask
    assert (x - pa.x_partial)[real].abs().max() > 1e-2, "the decoder must move points (else trivial)"
    torch.testing.assert_close(x_moved[real], apply(x, R, t)[real], rtol=0, atol=tol)


@pytest.mark.parametrize("pin", list(PIN.values()), ids=list(PIN))
@pytest.mark.parametrize("kind", list(TRANSFORMS), ids=list(TRANSFORMS))
def test_forward_loss_terms_are_invariant(graphs, kind, pin):
    model = tiny_model(pin_anchors=pin)
    batch = solved_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    torch.manual_seed(7)
    a = model(batch)
    torch.manual_seed(7)
    b = model(transform_batch(batch, R, t))
    for key in ("anchor_se", "free_se", "kl"):
        if key != "anchor_se" or not pin:  # pinned anchors: anchor_se ~ 0 (tested below)
            assert a[key].abs().min() > 1e-3, f"{key} is ~0: the test would be trivial"
        torch.testing.assert_close(b[key], a[key], rtol=TOL, atol=TOL, msg=f"{key} is not invariant")
    torch.testing.assert_close(b["x"][batch.node_mask], apply(a["x"], R, t)[batch.node_mask], rtol=0, atol=TOL)


@pytest.mark.parametrize("kind", ["rotation+translation", "reflection"])
def test_prior_samples_are_equivariant(graphs, kind):
    model = tiny_model()
    batch, _ = problem_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    gen = torch.Generator().manual_seed(8)
    B, N, S, Z = batch.batch_size, batch.num_nodes, 3, model.cfg.latent
    noise = {
        "u": torch.rand(B, S, N, generator=gen, dtype=F64),
        "eps": torch.randn(B, S, N, Z, generator=gen, dtype=F64),
    }
    x = model.sample(batch, S, noise=noise)
    x_moved = model.sample(transform_batch(batch, R, t), S, noise=noise)
    real = batch.node_mask[:, None, :].expand(B, S, N)
    torch.testing.assert_close(x_moved[real], apply(x, R, t)[real], rtol=0, atol=TOL)


@pytest.mark.parametrize("pin", list(PIN.values()), ids=list(PIN))
def test_every_parameter_gets_a_gradient(graphs, pin):
    """DistributedDataParallel refuses parameters that never get a gradient (a 2-process run failed so)."""
    model = tiny_model(pin_anchors=pin).train()
    out = model(solved_batch(graphs))
    (10 * out["anchor_se"].mean() + 100 * out["free_se"].mean() + out["kl"].mean()).backward()
    assert [n for n, p in model.named_parameters() if p.grad is None] == []


def test_pinned_anchors_stay_at_their_known_positions(graphs):
    model = tiny_model(pin_anchors=True)
    batch = solved_batch(graphs)
    anchors = batch.anchor_mask
    problem = model.encode_problem(batch)
    assert torch.equal(problem.x_partial[anchors], batch.known_positions[anchors])
    torch.manual_seed(7)
    out = model(batch)
    assert torch.equal(out["x"][anchors], batch.known_positions[anchors])
    assert out["anchor_se"].max() < 1e-24, "the known anchors are reproduced (up to FK rounding of pos)"
    samples = model.sample(problem_batch(graphs)[0], 2, generator=torch.Generator().manual_seed(1))
    joint = problem_batch(graphs)[0]
    assert torch.equal(samples[:, 0][joint.anchor_mask], joint.known_positions[joint.anchor_mask])


def test_free_anchors_move(graphs):
    model = tiny_model(pin_anchors=False)
    batch = solved_batch(graphs)
    problem = model.encode_problem(batch)
    assert (problem.x_partial - batch.known_positions)[batch.anchor_mask].abs().max() > 1e-3
    torch.manual_seed(7)
    assert model(batch)["anchor_se"].min() > 1e-6


# ---------------------------------------------------------------------------------------------- goal features
def test_goal_features_are_each_examples_own_goal(graphs):
    model = tiny_model(goal_features=True)
    batch = solved_batch(graphs)
    feats = model.node_features(batch)
    assert feats.shape[-1] == model.cfg.node_features == ModelConfig(max_index=8).node_features + 6
    expected = torch.cat([batch.goal[:, :3, 3], matrix_to_rotvec(batch.goal[:, :3, :3])], -1)  # (B, 6)
    for b in range(batch.batch_size):
        n_real = int(batch.node_mask[b].sum())
        torch.testing.assert_close(feats[b, :n_real, -6:], expected[b].expand(n_real, 6), rtol=0, atol=0)
        assert (feats[b, n_real:] == 0).all(), "padding nodes get no features"
    # Examples of one robot have different goals, so their goal features differ.
    assert (feats[0, 0, -6:] - feats[1, 0, -6:]).abs().max() > 1e-3


def test_goal_features_break_equivariance_and_nothing_else(graphs):
    """With goal_features=True the goal log-features are frame dependent: moving the whole problem
    (anchors and goal) changes h~, the loss and the decoded points beyond the rigid motion. The flag is
    the only frame-dependent input: moving the coordinates while the goal features stay fixed is still
    exactly equivariant."""
    model = tiny_model(goal_features=True)
    batch = solved_batch(graphs)
    R, t = random_motions("rotation+translation", batch.batch_size)
    real = batch.node_mask
    a = model.encode_problem(batch)

    whole = model.encode_problem(transform_batch(batch, R, t, move_goal=True))
    assert (whole.h_partial - a.h_partial)[real].abs().max() > 1e-4
    assert (whole.x_partial - apply(a.x_partial, R, t))[real].abs().max() > 1e-6
    torch.manual_seed(7)
    loss_a = model(batch)["free_se"]
    torch.manual_seed(7)
    loss_b = model(transform_batch(batch, R, t, move_goal=True))["free_se"]
    assert (loss_a - loss_b).abs().max() > 1e-6

    coords_only = model.encode_problem(transform_batch(batch, R, t, move_goal=False))
    torch.testing.assert_close(coords_only.h_partial[real], a.h_partial[real], rtol=0, atol=TOL)
    torch.testing.assert_close(coords_only.x_partial[real], apply(a.x_partial, R, t)[real], rtol=0, atol=TOL)


def test_default_model_ignores_the_goal_matrix(graphs):
    """goal_features=False: the goal enters only through the anchors p_n, q_n (the same inputs, another goal
    matrix, give identical outputs)."""
    model = tiny_model(goal_features=False)
    batch = solved_batch(graphs)
    other = replace(batch, goal=batch.goal.flip(0))
    a, b = model.encode_problem(batch), model.encode_problem(other)
    assert torch.equal(a.h_partial, b.h_partial) and torch.equal(a.x_partial, b.x_partial)


# ---------------------------------------------------------------------------------------------- sampling
VARIANTS = {
    "default": {},
    "goal-features": {"goal_features": True},
    "free-anchors": {"pin_anchors": False},
    "node-mixture": {"prior_mixture": "node"},
}


@pytest.mark.parametrize("variant", list(VARIANTS.values()), ids=list(VARIANTS))
def test_joint_sampling_equals_each_problem_alone(graphs, variant):
    """The reference's tiling bug (ggik_spec.md 3.7) mixed problems when B > 1 and S > 1."""
    model = tiny_model(**variant)
    joint, alone = problem_batch(graphs)
    B, N, S, Z = joint.batch_size, joint.num_nodes, 4, model.cfg.latent
    assert B == 3 and len({b.num_nodes for b in alone}) == 3
    gen = torch.Generator().manual_seed(9)
    noise = {
        "u": torch.rand(B, S, N, generator=gen, dtype=F64),
        "eps": torch.randn(B, S, N, Z, generator=gen, dtype=F64),
    }
    x = model.sample(joint, S, noise=noise)
    assert x.shape == (B, S, N, 3)
    for b, single in enumerate(alone):
        n = single.num_nodes
        own = {"u": noise["u"][b : b + 1, :, :n], "eps": noise["eps"][b : b + 1, :, :n]}
        x_alone = model.sample(single, S, noise=own)
        assert x_alone.shape == (1, S, n, 3)
        torch.testing.assert_close(x[b, :, :n], x_alone[0], rtol=0, atol=1e-12)
        assert (x[b, :, n:] == 0).all(), "padding nodes stay at 0"
    # The S samples of one problem differ (the noise is used), and so do problems.
    assert (x[0, 0] - x[0, 1]).abs().max() > 1e-4


def test_sampling_with_a_generator_is_reproducible(graphs):
    model = tiny_model()
    batch, _ = problem_batch(graphs)
    s1 = model.sample(batch, 5, generator=torch.Generator().manual_seed(10))
    s2 = model.sample(batch, 5, generator=torch.Generator().manual_seed(10))
    s3 = model.sample(batch, 5, generator=torch.Generator().manual_seed(11))
    assert s1.shape == (3, 5, 18, 3) and s1.dtype == F64
    assert torch.equal(s1, s2)
    assert (s1 - s3).abs().max() > 1e-4


def test_sample_rejects_bad_arguments(graphs):
    model = tiny_model()
    batch, _ = problem_batch(graphs)
    with pytest.raises(ValueError, match="num_samples must be >= 1"):
        model.sample(batch, 0)
    bad = {"u": torch.rand(3, 2, 17, dtype=F64), "eps": torch.randn(3, 2, 17, model.cfg.latent, dtype=F64)}
    with pytest.raises(ValueError, match=r"noise must have u \(3, 2, 18\)"):
        model.sample(batch, 2, noise=bad)
    with pytest.raises(ValueError, match="needs solved examples"):
        model(batch)


@pytest.mark.parametrize("mixture", ["graph", "node"])
def test_prior_log_prob_matches_explicit_mixture(graphs, mixture):
    """log p(z) of a whole graph against a direct sum over components (graph) or nodes (node)."""
    model = tiny_model(prior_mixture=mixture)
    batch = problem_batch(graphs)[0]
    problem = model.encode_problem(batch)
    z = torch.randn(
        batch.batch_size, batch.num_nodes, model.cfg.latent, generator=torch.Generator().manual_seed(2), dtype=F64
    )
    got = model.prior_log_prob(z, problem, batch.node_mask)
    mu, ls = problem.prior.mu, problem.prior.log_std
    normal = torch.distributions.Normal(mu, ls.exp())
    logn = normal.log_prob(z[:, :, None, :]).sum(-1)  # (B, N, K)
    for b in range(batch.batch_size):
        real = batch.node_mask[b]
        if mixture == "graph":
            log_pi = torch.log_softmax(problem.prior.logits[b], -1)
            want = torch.logsumexp(log_pi + logn[b][real].sum(0), -1)
        else:
            log_pi = torch.log_softmax(problem.prior.logits[b], -1)[real]
            want = torch.logsumexp(log_pi + logn[b][real], -1).sum()
        torch.testing.assert_close(got[b], want, rtol=0, atol=1e-10)


def test_graph_mixture_shares_one_component_per_sample(graphs):
    """With the graph mixture all nodes of a sample use the same component: only u[..., 0] matters."""
    model = tiny_model(prior_mixture="graph")
    batch = problem_batch(graphs)[0]
    B, N, S, Z = batch.batch_size, batch.num_nodes, 3, model.cfg.latent
    gen = torch.Generator().manual_seed(4)
    noise = {
        "u": torch.rand(B, S, N, generator=gen, dtype=F64),
        "eps": torch.randn(B, S, N, Z, generator=gen, dtype=F64),
    }
    other = {"u": noise["u"].clone(), "eps": noise["eps"]}
    other["u"][..., 1:] = torch.rand(B, S, N - 1, generator=gen, dtype=F64)
    torch.testing.assert_close(model.sample(batch, S, noise=noise), model.sample(batch, S, noise=other), rtol=0, atol=0)


# ---------------------------------------------------------------- known-distance error of prior samples
def brute_force_distance_se(x: torch.Tensor, batch: GraphBatch) -> torch.Tensor:
    out = torch.zeros(batch.batch_size, dtype=x.dtype)
    for b in range(batch.batch_size):
        for i, j in batch.known_mask[b].nonzero().tolist():
            if i < j:
                out[b] += ((x[b, i] - x[b, j]).norm() - batch.known_distances[b, i, j]) ** 2
    return out


def test_distance_se_is_zero_on_solutions_and_matches_brute_force(graphs):
    batch = solved_batch(graphs, per_robot=3)
    assert GGIKModel.distance_se(batch.pos, batch).max() < 1e-18, "true solutions satisfy every known distance"
    gen = torch.Generator().manual_seed(5)
    x = batch.pos + 0.05 * torch.randn(batch.pos.shape, generator=gen, dtype=F64) * batch.node_mask[..., None]
    se = GGIKModel.distance_se(x, batch)
    assert se.min() > 1e-4
    torch.testing.assert_close(se, brute_force_distance_se(x, batch), rtol=1e-9, atol=1e-14)


def test_distance_se_is_invariant_and_ignores_padding(graphs):
    batch = solved_batch(graphs, per_robot=2)
    gen = torch.Generator().manual_seed(6)
    x = batch.pos + 0.05 * torch.randn(batch.pos.shape, generator=gen, dtype=F64)  # padding moved too
    R, t = random_motions("rotation+translation", batch.batch_size)
    torch.testing.assert_close(
        GGIKModel.distance_se(apply(x, R, t), batch), GGIKModel.distance_se(x, batch), rtol=1e-9, atol=1e-14
    )
    torch.testing.assert_close(
        GGIKModel.distance_se(x, batch), brute_force_distance_se(x, batch), rtol=1e-9, atol=1e-14
    )


@pytest.mark.parametrize("mixture", ["node", "graph"])
def test_prior_sample_term_trains_the_prior_and_the_decoder(graphs, mixture):
    model = tiny_model(prior_mixture=mixture).train()
    torch.manual_seed(3)
    out = model(solved_batch(graphs), prior_samples=True)
    assert out["prior_dist_se"].shape == out["kl"].shape and out["prior_dist_se"].min() > 1e-4
    out["prior_dist_se"].mean().backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    assert any(n.startswith("prior.") and g is not None and g.abs().max() > 0 for n, g in grads.items())
    assert any(n.startswith("decoder.") and g is not None and g.abs().max() > 0 for n, g in grads.items())
    assert all(g is None for n, g in grads.items() if n.startswith(("enc_full.", "posterior."))), (
        "no true solution is used"
    )
    assert "prior_dist_se" not in model(solved_batch(graphs))
