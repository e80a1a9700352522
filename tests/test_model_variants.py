"""ggik.nn.cvae.GGIKModel variants of the recipe study (tiny, float64): residual inputs, Gauss-Newton moves in the
EGNN or node decoder, one latent per graph, each added to the reference architecture (all options off). Each must
keep what the model guarantees (tests/test_model.py): E(3) equivariance, invariant losses, a gradient for every
parameter, pinned anchors, joint sampling = each problem alone; plus ModelConfig.check, and that no two
architectures share a parameter set. Old files and the defaults: tests/test_checkpoint_history.py."""

from __future__ import annotations

import pytest
import torch
from test_model import (
    TRANSFORMS,
    apply,
    assert_decoder_equivariant,
    problem_batch,
    random_motions,
    solved_batch,
    transform_batch,  # as for the default model
)

from ggik import Robot, RobotGraph, random_robot
from ggik.checkpoint import CHECKPOINT_FORMAT, IMPLIED_CONFIG
from ggik.graph.batch import GraphBatch
from ggik.nn import EGNN
from ggik.nn.cvae import GGIKModel, ModelConfig
from ggik.nn.distance_geometry import block_jacobi_step, gauss_newton_step

F64 = torch.float64
TOL = 1e-9

#: the reference architecture (every option off: the v1 model), which the variants below change
REFERENCE = {"residual_inputs": False, "gn_steps": 0, "decoder": "egnn", "latent_scope": "node", "gn_solver": "full"}
VARIANTS = {
    "residual-gn2": {"residual_inputs": True, "gn_steps": 2},  # the shipped model's (the ModelConfig defaults)
    "residual-inputs": {"residual_inputs": True},
    "gn1-egnn": {"gn_steps": 1},
    "gn2-egnn": {"gn_steps": 2},
    "graph-latent": {"latent_scope": "graph"},
    "graph-latent-node-mixture": {"latent_scope": "graph", "prior_mixture": "node"},
    "node-decoder": {"decoder": "node", "dec_layers": 2},
    "node-gn2-graph-latent": {"decoder": "node", "gn_steps": 2, "latent_scope": "graph"},
    "residual-gn1": {"residual_inputs": True, "gn_steps": 1},
    "node-jacobi3": {"decoder": "node", "gn_steps": 3, "gn_solver": "jacobi"},
    "egnn-jacobi1": {"gn_steps": 1, "gn_solver": "jacobi"},
}
VARIANT_ARGS = dict(argvalues=list(VARIANTS.values()), ids=list(VARIANTS))
PIN = {"pinned": True, "free-anchors": False}
PIN_ARGS = dict(argvalues=list(PIN.values()), ids=list(PIN))


def tiny_model(variant: dict, pin_anchors: bool = True, seed: int = 0, gn_weights: bool = True) -> GGIKModel:
    """A tiny float64 model; ``gn_weights``: the Gauss-Newton coefficient heads get random weights (they start at
    zero, which would hide their dependence on the features from the equivariance tests)."""
    torch.manual_seed(seed)
    cfg = ModelConfig(
        **{
            **dict(
                dim=8,
                hidden=16,
                enc_layers=1,
                dec_layers=2,
                latent=4,
                prior_components=3,
                max_index=8,
                prior_mixture="graph",
                pin_anchors=pin_anchors,
                coord_gain=0.5,
            ),
            **REFERENCE,
            **variant,
        }
    )
    model = GGIKModel(cfg).double().eval()
    if gn_weights and model.gn_follow is not None:
        with torch.no_grad():
            for head in model.gn_follow.coef:
                head.weight.normal_(0.0, 0.3)
    return model


def latent_nodes(model: GGIKModel, batch: GraphBatch) -> int:
    return model.latent_mask(batch.node_mask).shape[1]


@pytest.fixture(scope="module")
def graphs() -> list[RobotGraph]:
    """Panda (7 DOF, 18 nodes), a random 5-DOF (14 nodes) and a random 3-DOF (10 nodes) robot."""
    gen = torch.Generator().manual_seed(2025)
    robots = [Robot.from_name("panda"), random_robot(5, gen, name="rand5"), random_robot(3, gen, name="rand3")]
    return [RobotGraph.from_robot(r) for r in robots]


def sample_noise(model: GGIKModel, batch: GraphBatch, S: int, seed: int) -> dict[str, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    B, L, Z = batch.batch_size, latent_nodes(model, batch), model.cfg.latent
    return {
        "u": torch.rand(B, S, L, generator=gen, dtype=F64),
        "eps": torch.randn(B, S, L, Z, generator=gen, dtype=F64),
    }


# ---------------------------------------------------------------------------------------------- shapes of the latent
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_latent_has_one_node_per_graph_or_per_node(graphs, variant):
    model = tiny_model(variant)
    batch = solved_batch(graphs)
    B, N, K, Z = batch.batch_size, batch.num_nodes, model.cfg.prior_components, model.cfg.latent
    L = 1 if model.cfg.latent_scope == "graph" else N
    assert model.latent_mask(batch.node_mask).shape == (B, L)
    prior = model.encode_problem(batch).prior
    assert prior.mu.shape == prior.log_std.shape == (B, L, K, Z)
    assert prior.logits.shape == ((B, K) if model.cfg.prior_mixture == "graph" else (B, L, K))


# ---------------------------------------------------------------------------------------------- equivariance
@pytest.mark.parametrize("pin", **PIN_ARGS)
@pytest.mark.parametrize("kind", list(TRANSFORMS))
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_decoder_is_equivariant(graphs, variant, kind, pin):
    assert_decoder_equivariant(tiny_model(variant, pin_anchors=pin), solved_batch(graphs), kind, TOL)


@pytest.mark.parametrize("kind", list(TRANSFORMS))
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_forward_loss_terms_are_invariant(graphs, variant, kind):
    model = tiny_model(variant)
    batch = solved_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    torch.manual_seed(7)
    a = model(batch, prior_samples=True)
    torch.manual_seed(7)
    b = model(transform_batch(batch, R, t), prior_samples=True)
    for key in ("free_se", "kl", "prior_dist_se"):
        assert a[key].abs().min() > 1e-3, f"{key} is ~0: the test would be trivial"
        torch.testing.assert_close(b[key], a[key], rtol=TOL, atol=TOL, msg=f"{key} is not invariant")
    torch.testing.assert_close(b["anchor_se"], a["anchor_se"], rtol=0, atol=1e-20)
    torch.testing.assert_close(b["x"][batch.node_mask], apply(a["x"], R, t)[batch.node_mask], rtol=0, atol=TOL)


@pytest.mark.parametrize("kind", ["rotation", "reflection+translation"])
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_prior_samples_are_equivariant(graphs, variant, kind):
    model = tiny_model(variant)
    batch, _ = problem_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    S = 3
    noise = sample_noise(model, batch, S, seed=8)
    x = model.sample(batch, S, noise=noise)
    x_moved = model.sample(transform_batch(batch, R, t), S, noise=noise)
    real = batch.node_mask[:, None, :].expand(-1, S, -1)
    assert (x[:, 0] - x[:, 1])[batch.node_mask].abs().max() > 1e-4, "samples differ"
    torch.testing.assert_close(x_moved[real], apply(x, R, t)[real], rtol=0, atol=TOL)


# ---------------------------------------------------------------------------------------------- gradients, anchors
@pytest.mark.parametrize("pin", **PIN_ARGS)
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_every_parameter_gets_a_gradient(graphs, variant, pin):
    """DistributedDataParallel refuses parameters that never get a gradient; the new parts must also be used."""
    model = tiny_model(variant, pin_anchors=pin, gn_weights=False).train()  # zero-initialised GN heads, as trained
    out = model(solved_batch(graphs), prior_samples=True)
    (1000 * out["free_se"].mean() + out["kl"].mean() + out["prior_dist_se"].mean()).backward()
    assert [n for n, p in model.named_parameters() if p.grad is None] == []
    assert [n for n, p in model.named_parameters() if not torch.isfinite(p.grad).all()] == []
    new = [
        n
        for n in dict(model.named_parameters())
        if n.startswith(("gn_follow.", "decoder.body.", "decoder.coef.")) or ".grad_coef." in n
    ]
    expected = (model.cfg.gn_steps > 0) + (model.cfg.decoder == "node") + model.cfg.residual_inputs
    assert bool(new) == bool(expected)
    assert [n for n in new if model.get_parameter(n).grad.abs().max() == 0] == []
    if model.cfg.residual_inputs:  # the residual is the last input column of every decoder layer's edge map
        for layer in model.decoder.layers:
            assert layer.lin_edge.weight.shape[1] == 4 and layer.lin_edge.weight.grad[:, -1].abs().max() > 0


@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_pinned_anchors_stay_at_their_known_positions(graphs, variant):
    model = tiny_model(variant, pin_anchors=True)
    batch = solved_batch(graphs)
    anchors = batch.anchor_mask
    torch.manual_seed(7)
    out = model(batch, prior_samples=True)
    assert torch.equal(out["x"][anchors], batch.known_positions[anchors])
    assert out["anchor_se"].max() < 1e-24
    joint = problem_batch(graphs)[0]
    samples = model.sample(joint, 2, generator=torch.Generator().manual_seed(1))
    for s in range(2):
        assert torch.equal(samples[:, s][joint.anchor_mask], joint.known_positions[joint.anchor_mask])
    assert (samples[:, 0] - samples[:, 1])[joint.node_mask].abs().max() > 1e-4


@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_free_anchors_move(graphs, variant):
    model = tiny_model(variant, pin_anchors=False)
    torch.manual_seed(7)
    assert model(solved_batch(graphs))["anchor_se"].min() > 1e-6


# ---------------------------------------------------------------------------------------------- sampling
@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_joint_sampling_equals_each_problem_alone(graphs, variant):
    model = tiny_model(variant)
    joint, alone = problem_batch(graphs)
    B, N, S = joint.batch_size, joint.num_nodes, 4
    assert B == 3 and len({b.num_nodes for b in alone}) == 3
    noise = sample_noise(model, joint, S, seed=9)
    x = model.sample(joint, S, noise=noise)
    assert x.shape == (B, S, N, 3)
    for b, single in enumerate(alone):
        n = single.num_nodes
        L = latent_nodes(model, single)
        own = {"u": noise["u"][b : b + 1, :, :L], "eps": noise["eps"][b : b + 1, :, :L]}
        x_alone = model.sample(single, S, noise=own)
        assert x_alone.shape == (1, S, n, 3)
        torch.testing.assert_close(x[b, :, :n], x_alone[0], rtol=0, atol=1e-12)
        assert (x[b, :, n:] == 0).all(), "padding nodes stay at 0"
    assert (x[0, 0] - x[0, 1]).abs().max() > 1e-4


@pytest.mark.parametrize("variant", **VARIANT_ARGS)
def test_noise_of_the_wrong_shape_is_a_clear_error(graphs, variant):
    model = tiny_model(variant)
    batch, _ = problem_batch(graphs)
    B, N, Z = batch.batch_size, batch.num_nodes, model.cfg.latent
    L = 1 if model.cfg.latent_scope == "graph" else N
    wrong_L = N if L == 1 else 1  # node-shaped noise for a graph latent and the reverse
    u = f"u \\({B}, 2, {L}\\) and eps \\({B}, 2, {L}, {Z}\\)"
    with pytest.raises(ValueError, match=f"noise must have {u}"):
        model.sample(
            batch, 2, noise={"u": torch.rand(B, 2, wrong_L, dtype=F64), "eps": torch.randn(B, 2, wrong_L, Z, dtype=F64)}
        )
    with pytest.raises(ValueError, match=f"noise must have {u}"):
        model.sample(
            batch, 2, noise={"u": torch.rand(B, 2, L, dtype=F64), "eps": torch.randn(B, 2, L, Z + 1, dtype=F64)}
        )
    with pytest.raises(ValueError, match=f"noise must have {u}"):
        model.sample(batch, 2, noise={"u": torch.rand(B, 3, L, dtype=F64), "eps": torch.randn(B, 3, L, Z, dtype=F64)})
    assert model.sample(batch, 2, noise=sample_noise(model, batch, 2, seed=0)).shape == (B, 2, N, 3)


# ------------------------------------------------------------------------------------------- what the decoders compute
@pytest.mark.parametrize("decoder", ["egnn", "node"])
@pytest.mark.parametrize("solver", ["full", "jacobi"])
def test_gauss_newton_moves_start_as_plain_damped_steps(graphs, decoder, solver):
    """At initialisation (zero weights, bias gn_init) every move is gn_init times the damped Gauss-Newton step; in
    the EGNN decoder the moves come before each of the last gn_steps layers, in the node decoder after it."""
    gn_init, damping = 0.75, 3e-2  # 0.75: exact in float32, where the model is built
    model = tiny_model(
        {
            "decoder": decoder,
            "gn_steps": 2,
            "gn_init": gn_init,
            "gn_damping": damping,
            "dec_layers": 2,
            "gn_solver": solver,
        },
        gn_weights=False,
    )
    step = {"full": gauss_newton_step, "jacobi": block_jacobi_step}[solver]
    batch = solved_batch(graphs)
    z = torch.randn(
        batch.batch_size, batch.num_nodes, model.cfg.latent, generator=torch.Generator().manual_seed(5), dtype=F64
    )
    pa = model.encode_problem(batch)
    got = model.decode(z, pa, batch.node_mask)

    dist, known = pa.edge_attr[..., 0], pa.edge_attr[..., 1]

    def move(x):
        return x + gn_init * step(x, dist, known, pa.movable, damping, 0.25)

    h = model.dec_in(torch.cat([z, pa.h_partial, pa.h0], -1))
    if decoder == "node":
        x = move(move(model.decoder(h, pa.x_partial, pa.frame, pa.movable)))
    else:
        x = pa.x_partial
        for layer in model.decoder.layers:
            x = move(x)
            h, x = layer(h, x, pa.edge_attr, batch.node_mask, pa.movable, pa.frame)
    assert (move(got) - got)[batch.node_mask].abs().max() > 1e-6, "the moves matter"
    torch.testing.assert_close(got, x, rtol=0, atol=1e-12)


def test_node_decoder_output_is_start_plus_frame_combination(graphs):
    model = tiny_model({"decoder": "node", "dec_layers": 2})
    batch = solved_batch(graphs)
    z = torch.randn(
        batch.batch_size, batch.num_nodes, model.cfg.latent, generator=torch.Generator().manual_seed(6), dtype=F64
    )
    pa = model.encode_problem(batch)
    x = model.decode(z, pa, batch.node_mask)
    h = model.dec_in(torch.cat([z, pa.h_partial, pa.h0], -1))
    coef = model.decoder.coef(model.decoder.body(h))  # (B, N, 3)
    want = torch.where(pa.movable[..., None], pa.x_partial + torch.einsum("bnf,bfk->bnk", coef, pa.frame), pa.x_partial)
    torch.testing.assert_close(x, want, rtol=0, atol=1e-12)


def test_residual_inputs_are_only_an_extra_input(graphs):
    """An EGNN with residual_inputs whose residual weights are zero computes what the plain EGNN computes."""
    torch.manual_seed(0)
    plain = EGNN(8, 16, 2, 2, coord_gain=0.5, outputs="coords", frame_vectors=3).double()
    with_r = EGNN(8, 16, 2, 2, coord_gain=0.5, outputs="coords", frame_vectors=3, residual_inputs=True).double()
    state = plain.state_dict()
    with torch.no_grad():
        for k, layer in enumerate(with_r.layers):
            for name, p in layer.named_parameters():
                key = f"layers.{k}.{name}"
                if name == "lin_edge.weight":
                    p.copy_(torch.cat([state[key], torch.zeros(16, 1, dtype=F64)], 1))
                elif name == "grad_coef.weight":
                    p.zero_()
                else:
                    p.copy_(state[key])
    batch = solved_batch(graphs)
    model = tiny_model({})
    pa = model.encode_problem(batch)
    h = torch.randn(batch.batch_size, batch.num_nodes, 8, generator=torch.Generator().manual_seed(1), dtype=F64)
    args = (h, pa.x_partial, pa.edge_attr, batch.node_mask, pa.movable, pa.frame)
    _, xa = plain(*args)
    _, xb = with_r(*args)
    torch.testing.assert_close(xb, xa, rtol=0, atol=1e-12)
    with torch.no_grad():
        with_r.layers[0].grad_coef.weight.normal_()
    assert (with_r(*args)[1] - xa).abs().max() > 1e-4, "the residual step is used once its weight is not zero"


# ---------------------------------------------------------------------------------------------- configuration
BAD_CONFIGS = {
    "decoder": ({"decoder": "x"}, r"model.decoder must be one of \('egnn', 'node'\), got 'x'"),
    "latent-scope": ({"latent_scope": "x"}, r"model.latent_scope must be one of \('graph', 'node'\), got 'x'"),
    "prior-mixture": ({"prior_mixture": "x"}, r"model.prior_mixture must be one of"),
    "gn-steps-above-dec-layers": ({"gn_steps": 3, "dec_layers": 2}, r"gn_steps must be in .* = \[0, 2\].*got 3"),
    "negative-gn-steps": ({"gn_steps": -1}, r"gn_steps must be in"),
    "gn-solver": ({"gn_solver": "lu"}, r"model.gn_solver must be one of \('full', 'jacobi'\), got 'lu'"),
    "node-decoder-without-frame": (
        {"decoder": "node", "anchor_frame": False},
        r"decoder='node'.*needs anchor_frame=True",
    ),
}


@pytest.mark.parametrize("changes, message", list(BAD_CONFIGS.values()), ids=list(BAD_CONFIGS))
def test_model_config_check_refuses_bad_settings(changes, message):
    cfg = ModelConfig(dim=8, hidden=16, enc_layers=1, latent=4, prior_components=3, **changes)
    with pytest.raises(ValueError, match=message):
        cfg.check()
    with pytest.raises(ValueError, match=message):
        GGIKModel(cfg)


def test_model_config_check_accepts_the_variants():
    for variant in VARIANTS.values():
        ModelConfig(**{**REFERENCE, **variant}).check()
        ModelConfig(**variant).check()  # over the defaults
    ModelConfig().check()
    ModelConfig(gn_steps=5, dec_layers=5).check()  # as many moves as layers
    ModelConfig(decoder="node", dec_layers=1, gn_steps=4).check()  # the node decoder has no such limit
    with pytest.raises(ValueError, match="at least one hidden layer"):
        GGIKModel(ModelConfig(dim=8, hidden=16, decoder="node", dec_layers=0))


def test_every_variant_changes_the_parameters_of_the_reference_model():
    """A file of one architecture is never silently loaded as another: every option that changes the computation
    changes the parameter names or shapes of the reference (v1) model, at full size (the graph-latent variants
    change only how the same parameters are used)."""

    def shapes(cfg: ModelConfig) -> dict[str, tuple[int, ...]]:
        return {k: tuple(v.shape) for k, v in GGIKModel(cfg).state_dict().items()}

    reference = IMPLIED_CONFIG[CHECKPOINT_FORMAT]["model"]
    assert {k: reference[k] for k in REFERENCE} == REFERENCE
    old = shapes(ModelConfig(**reference))
    for name, variant in VARIANTS.items():
        if name in ("graph-latent", "graph-latent-node-mixture"):
            continue  # same parameters, another use of them
        assert shapes(ModelConfig(**{**reference, **variant})) != old, name
