"""A model that reads handedness (``ModelConfig.volume_inputs``, issue 56): the arm's signed link volumes reach the
decoder (ggik.nn.decoders.VolumeInputs, the Gauss-Newton moves). It must stay exactly equivariant to rotations and
translations, must NOT be equivariant to reflections on a chiral arm (a mirrored problem is another arm's), must sample
exactly as the model it starts from while its new parts are zero, and must keep the model's other guarantees (padding,
gradients). Tiny float64 models; the graph side is tests/test_handedness.py."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from test_model import apply, assert_decoder_equivariant, problem_batch, random_motions, solved_batch, transform_batch
from test_model_variants import sample_noise, tiny_model

from ggik import GGIKError, Robot, RobotGraph, random_robot
from ggik.checkpoint import WEIGHTS_FORMAT, load_model, read_checkpoint, shipped_model_path, transfer_weights
from ggik.graph.batch import GraphBatch
from ggik.graph.handedness import signed_volumes
from ggik.graph.stacked import StackedGraphs
from ggik.nn.distance_geometry import volume_residuals

F64 = torch.float64
TOL = 1e-9
HANDED = {"residual_inputs": True, "gn_steps": 2, "volume_inputs": True}


def handed_model(seed: int = 0, pin_anchors: bool = True):
    """A tiny model that reads handedness, its new parts given random weights (they start at zero, which would hide
    what they do from every test here)."""
    model = tiny_model(HANDED, pin_anchors=pin_anchors, seed=seed)
    gen = torch.Generator().manual_seed(seed + 100)
    with torch.no_grad():
        for part in model.dec_volumes:
            part.message.weight.copy_(torch.randn(part.message.weight.shape, generator=gen, dtype=F64))
            part.coef.weight.copy_(0.3 * torch.randn(part.coef.weight.shape, generator=gen, dtype=F64))
        model.gn_follow.volume_weight.fill_(0.7)
    return model


@pytest.fixture(scope="module")
def graphs() -> list[RobotGraph]:
    """Panda (3 skew links), a random 5-DOF and a random 3-DOF robot (random_robot's axes meet or are parallel)."""
    gen = torch.Generator().manual_seed(2025)
    robots = [Robot.from_name("panda"), random_robot(5, gen, name="rand5"), random_robot(3, gen, name="rand3")]
    return [RobotGraph.from_robot(r) for r in robots]


def test_the_graphs_here_are_one_chiral_arm_and_two_that_are_not(graphs):
    assert [int(g.skew_links.sum()) for g in graphs] == [3, 0, 0]


# ---------------------------------------------------------------------------------------------- the volumes as inputs
@pytest.mark.parametrize("seed", range(3))
def test_volume_residuals_are_zero_on_the_arm_and_their_gradient_is_the_cost_gradient(graphs, seed):
    batch = solved_batch(graphs, seed=seed)
    volumes = batch.link_volumes()
    residual, grad = volume_residuals(batch.pos, volumes)
    assert residual.abs().max() < 1e-12 and grad.abs().max() < 1e-12  # a realization has the arm's handedness
    x = batch.pos + 0.05 * torch.randn(batch.pos.shape, generator=torch.Generator().manual_seed(seed), dtype=F64)
    x = x * batch.node_mask[..., None]
    residual, grad = volume_residuals(x, volumes)
    xr = x.clone().requires_grad_()
    r = (signed_volumes(xr) - volumes) * (volumes != 0)
    (auto,) = torch.autograd.grad(0.5 * (r**2).sum(), xr)
    torch.testing.assert_close(grad, auto, rtol=1e-12, atol=1e-14)
    far = residual[..., 0][:, 4::2][:, : r.shape[1]]  # at p_i: link i's residual
    torch.testing.assert_close(far, r.detach(), rtol=0, atol=1e-15)


def test_stacked_batches_carry_the_same_volumes_as_the_per_robot_path(graphs):
    stacked = StackedGraphs(graphs)
    gen = torch.Generator().manual_seed(5)
    robot = torch.tensor([0, 1, 2, 0])
    q = stacked.sample_q(robot, torch.rand(4, stacked.n_max, generator=gen, dtype=F64))
    batch = stacked.examples(robot, q, torch.zeros(4, dtype=torch.long))
    for row, r in enumerate(robot.tolist()):
        g = graphs[r]
        alone = GraphBatch.from_graph(g, q=q[row : row + 1, : g.n])
        assert torch.equal(batch.node_volume[row, : g.num_nodes], alone.node_volume[0])
        assert torch.equal(batch.link_volumes()[row, : g.n], g.link_volumes)
        assert not batch.link_volumes()[row, g.n :].any()  # padding links are left out


def test_a_batch_without_volumes_reads_as_all_links_free():
    graph = RobotGraph.from_robot(Robot.from_name("panda"))
    batch = GraphBatch.from_graph(graph, q=torch.zeros(2, 7, dtype=F64))
    bare = GraphBatch(**{**batch.__dict__, "node_volume": None})
    assert bare.link_volumes().shape == (2, 7) and not bare.link_volumes().any()
    joined = GraphBatch.cat([bare, batch])
    assert torch.equal(joined.link_volumes()[2:], batch.link_volumes()) and not joined.link_volumes()[:2].any()


# ---------------------------------------------------------------------------------------------- symmetry
@pytest.mark.parametrize("pin", [True, False], ids=["pinned", "free-anchors"])
@pytest.mark.parametrize("kind", ["rotation", "translation", "rotation+translation"])
def test_the_decoder_is_equivariant_to_rotations_and_translations(graphs, kind, pin):
    assert_decoder_equivariant(handed_model(pin_anchors=pin), solved_batch(graphs), kind, TOL)


@pytest.mark.parametrize("kind", ["reflection", "reflection+translation"])
def test_a_mirrored_problem_is_not_decoded_as_the_mirrored_output(graphs, kind):
    """On a chiral arm (the Panda) the mirrored problem is another arm's: the output for it is not the mirror image of
    the output. An arm without skew links has no handedness: there the model stays reflection-equivariant. The same
    weights without the volumes are exactly reflection-equivariant everywhere (the control)."""
    batch = solved_batch(graphs)
    R, t = random_motions(kind, batch.batch_size)
    z = torch.randn(batch.batch_size, batch.num_nodes, 4, generator=torch.Generator().manual_seed(4), dtype=F64)
    real = batch.node_mask[..., None]
    handed = handed_model()
    blind = tiny_model(HANDED, seed=0)
    blind.load_state_dict(handed.state_dict())
    blind.dec_volumes = None  # the same weights, no volume inputs: the decoder of a model that cannot see them
    blind.gn_follow.volume_weight = None
    for model, equivariant in ((blind, True), (handed, False)):
        x = model.decode(z, model.encode_problem(batch), batch.node_mask)
        x_mirror = model.decode(z, model.encode_problem(transform_batch(batch, R, t)), batch.node_mask)
        gap = ((x_mirror - apply(x, R, t)) * real).abs().amax((1, 2))  # (B,) per problem
        chiral = torch.tensor([bool(g.skew_links.any()) for g in graphs for _ in range(2)])  # solved_batch: 2 each
        if equivariant:
            assert gap.max() < TOL
        else:
            # TOL bounds the rounding of an exact symmetry in this float64 computation (the control's gaps and those
            # of the arms without skew links: 3e-16 to 1e-14), so a gap above it is no rounding: the symmetry is
            # broken. Measured on the Panda's two problems: 3.49 and 2.80, for both kinds (print gap here).
            assert gap[chiral].min() > TOL, f"a mirrored problem was decoded as the mirror image: {gap.tolist()}"
            assert gap[~chiral].max() < TOL


def test_the_loss_is_invariant_to_rotations(graphs):
    model = handed_model()
    batch = solved_batch(graphs)
    R, t = random_motions("rotation+translation", batch.batch_size)
    torch.manual_seed(7)
    a = model(batch)
    torch.manual_seed(7)
    b = model(transform_batch(batch, R, t))
    for key in ("free_se", "kl"):
        torch.testing.assert_close(b[key], a[key], rtol=TOL, atol=TOL)


# ---------------------------------------------------------------------------------------------- starting from a model
def test_with_its_new_parts_at_zero_the_model_samples_exactly_as_the_model_it_starts_from(graphs):
    source = tiny_model({"residual_inputs": True, "gn_steps": 2}, seed=3)
    handed = tiny_model(HANDED, seed=11)  # other random weights, overwritten below where they fit
    moved = transfer_weights(handed, source.state_dict())
    assert sorted(moved["fresh"]) == sorted(
        ["gn_follow.volume_weight"] + [f"dec_volumes.{k}.{p}.weight" for k in range(2) for p in ("message", "coef")]
    )
    batch, _ = problem_batch(graphs)
    noise = sample_noise(source, batch, 4, seed=9)
    assert torch.equal(handed.sample(batch, 4, noise=noise), source.sample(batch, 4, noise=noise))
    with torch.no_grad():
        handed.dec_volumes[0].coef.weight.fill_(0.1)
    assert not torch.equal(handed.sample(batch, 4, noise=noise), source.sample(batch, 4, noise=noise))


def test_every_new_part_gets_a_gradient_from_its_zero_start(graphs):
    model = tiny_model(HANDED, seed=1).train()
    batch = solved_batch(graphs)
    torch.manual_seed(3)
    out = model(batch)
    (out["free_se"].mean() + out["kl"].mean()).backward()
    for name, p in model.named_parameters():
        if "volume" in name:
            assert p.grad is not None and p.grad.abs().max() > 0, name


def test_joint_sampling_equals_each_problem_alone(graphs):
    model = handed_model()
    joint, alone = problem_batch(graphs)
    noise = sample_noise(model, joint, 3, seed=6)
    x = model.sample(joint, 3, noise=noise)
    for b, one in enumerate(alone):
        n = one.num_nodes
        own = {k: v[b : b + 1, ..., :n] if k == "u" else v[b : b + 1, :, :n] for k, v in noise.items()}
        torch.testing.assert_close(model.sample(one, 3, noise=own)[0], x[b, :, :n], rtol=1e-10, atol=1e-10)


def test_old_files_read_as_models_without_volume_inputs(graphs, tmp_path):
    """A file whose config does not record volume_inputs (written before it existed) loads as a model without the
    volume parts: the shipped model, such a file, and a tiny model with Gauss-Newton moves written that way, which
    then samples exactly as the model written. The same file claiming volume_inputs: true does not load (its weights
    lack the parts): how the absent key reads decides."""
    with shipped_model_path() as path:
        assert "volume_inputs" not in read_checkpoint(path)["config"]["model"]
        shipped, _ = load_model(path)
    assert shipped.dec_volumes is None and (shipped.gn_follow is None or shipped.gn_follow.volume_weight is None)

    source = tiny_model({"residual_inputs": True, "gn_steps": 2}, seed=3).float().double()  # float32 weights, as read
    recorded = {k: v for k, v in dataclasses.asdict(source.cfg).items() if k != "volume_inputs"}
    torch.save({"format": WEIGHTS_FORMAT, "config": {"model": recorded}, "model": source.state_dict()}, tmp_path / "a")
    loaded, ckpt = load_model(tmp_path / "a")
    loaded = loaded.double()
    assert ckpt["config"]["model"]["volume_inputs"] is False
    assert loaded.dec_volumes is None and loaded.gn_follow.volume_weight is None
    batch, _ = problem_batch(graphs)
    noise = sample_noise(source, batch, 4, seed=9)
    assert torch.equal(loaded.sample(batch, 4, noise=noise), source.sample(batch, 4, noise=noise))
    claims = {"model": {**recorded, "volume_inputs": True}}
    torch.save({"format": WEIGHTS_FORMAT, "config": claims, "model": source.state_dict()}, tmp_path / "b")
    with pytest.raises(GGIKError, match="does not match this ggik version's model"):
        load_model(tmp_path / "b")


def test_a_trimmed_sub_batch_keeps_its_volumes(graphs):
    joint = GraphBatch.cat([GraphBatch.from_graph(g, q=torch.zeros(1, g.n, dtype=F64)) for g in graphs])
    small = joint.select(slice(1, 3)).trimmed()  # the 5- and 3-DOF robots, cut to 14 nodes
    assert small.num_nodes == graphs[1].num_nodes
    assert torch.equal(small.node_volume, joint.node_volume[1:3, : small.num_nodes])
