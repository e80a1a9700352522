"""ggik.nn: the dense EGNN layer and stack (float64): E(3) equivariance, permutations, padding, gradients."""

from __future__ import annotations

import pytest
import torch
from conftest import orthogonal

from ggik.nn import EGNN, EGNNLayer

F64 = torch.float64
D, H, E = 6, 12, 2  # feature width, hidden width, edge attributes
TOL = 1e-10


def make_gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def inputs(gen: torch.Generator, B: int = 2, N: int = 7, sizes: tuple[int, ...] | None = None):
    """Random h (B, N, D), x (B, N, 3), symmetric edge_attr (B, N, N, E) and a prefix node mask."""
    h = torch.randn(B, N, D, generator=gen, dtype=F64)
    x = torch.randn(B, N, 3, generator=gen, dtype=F64)
    ea = torch.randn(B, N, N, E, generator=gen, dtype=F64)
    ea = 0.5 * (ea + ea.transpose(1, 2))
    sizes = sizes or (N,) * B
    mask = torch.arange(N)[None, :] < torch.tensor(sizes)[:, None]
    return h, x, ea, mask


def make_layer(seed: int = 0, **kw) -> EGNNLayer:
    torch.manual_seed(seed)
    # A large coordinate gain so that the coordinate update is far from the identity (non-trivial test).
    return EGNNLayer(D, H, E, coord_gain=kw.pop("coord_gain", 1.0), **kw).double()


def make_stack(seed: int = 0, layers: int = 3) -> EGNN:
    torch.manual_seed(seed)
    return EGNN(D, H, E, layers, coord_gain=1.0).double()


NETS = {"layer": make_layer, "stack": make_stack}
#: name -> (determinant of the orthogonal part or None for none, with a translation)
TRANSFORMS = {
    "rotation": (1.0, False),
    "reflection": (-1.0, False),
    "translation": (None, True),
    "rotation+translation": (1.0, True),
}


# ---------------------------------------------------------------------------------------------- E(3)
@pytest.mark.parametrize("net", list(NETS), ids=list(NETS))
@pytest.mark.parametrize("transform", list(TRANSFORMS), ids=list(TRANSFORMS))
def test_features_invariant_and_coordinates_equivariant(net, transform):
    gen = make_gen(11)
    model = NETS[net]()
    h, x, ea, mask = inputs(gen, B=3, N=7, sizes=(7, 5, 3))
    det, translate = TRANSFORMS[transform]
    # A different rigid motion for each graph of the batch: graphs must not see each other.
    R = torch.stack([orthogonal(gen, det) if det is not None else torch.eye(3, dtype=F64) for _ in range(3)])
    t = 3.0 * torch.randn(3, 1, 3, generator=gen, dtype=F64) if translate else torch.zeros(3, 1, 3, dtype=F64)
    x_moved = x @ R.transpose(1, 2) + t

    h1, x1 = model(h, x, ea, mask)
    h2, x2 = model(h, x_moved, ea, mask)
    m = mask[..., None]
    assert (torch.where(m, x1 - x, 0.0)).abs().max() > 1e-2, "coordinates barely move: the test would be trivial"
    torch.testing.assert_close(h2[mask], h1[mask], rtol=0, atol=TOL)
    torch.testing.assert_close(x2[mask], (x1 @ R.transpose(1, 2) + t)[mask], rtol=0, atol=TOL)


def test_feature_only_layer_keeps_coordinates_exactly():
    gen = make_gen(3)
    layer = make_layer(update_coords=False)
    h, x, ea, mask = inputs(gen)
    h1, x1 = layer(h, x, ea, mask)
    assert torch.equal(x1, x)
    assert (h1 - h).abs().max() > 1e-3


def test_coordinate_only_output_matches_the_full_stack():
    """outputs="coords" drops the last feature update and the output norm: same coordinates, and every
    parameter gets a gradient from the coordinates alone (what DistributedDataParallel needs)."""
    gen = make_gen(23)
    full = make_stack(layers=3)
    torch.manual_seed(1)
    coords_only = EGNN(D, H, E, 3, coord_gain=1.0, outputs="coords").double()
    missing, unexpected = coords_only.load_state_dict(full.state_dict(), strict=False)
    assert missing == [] and unexpected, "the coordinate-only stack is the full stack minus feature heads"
    assert all(k.startswith(("layers.2.msg", "layers.2.norm", "layers.2.node", "out_norm")) for k in unexpected)
    h, x, ea, mask = inputs(gen, B=2, N=6, sizes=(6, 4))
    _, x_full = full(h, x, ea, mask)
    _, x_only = coords_only(h, x, ea, mask)
    assert torch.equal(x_only, x_full)
    (x_only * torch.randn(x_only.shape, generator=gen, dtype=F64)).sum().backward()
    no_grad = [n for n, p in coords_only.named_parameters() if p.grad is None or not p.grad.abs().max() > 0]
    assert no_grad == []


# ---------------------------------------------------------------------------------------------- pinned nodes
@pytest.mark.parametrize("net", list(NETS), ids=list(NETS))
def test_coord_mask_pins_nodes_and_keeps_equivariance(net):
    gen = make_gen(19)
    model = NETS[net]()
    h, x, ea, mask = inputs(gen, B=2, N=7, sizes=(7, 5))
    movable = mask.clone()
    movable[:, :3] = False  # e.g. the known anchors of an IK problem
    h1, x1 = model(h, x, ea, mask, movable)
    assert torch.equal(x1[~movable], x[~movable])
    assert (x1 - x)[movable].abs().max() > 1e-2
    h_free, _ = model(h, x, ea, mask)
    if net == "layer":  # pinning coordinates does not change the features of that layer
        assert torch.equal(h1, h_free)
    R, t = orthogonal(gen, -1.0), torch.randn(1, 3, generator=gen, dtype=F64)
    h2, x2 = model(h, x @ R.T + t, ea, mask, movable)
    torch.testing.assert_close(h2[mask], h1[mask], rtol=0, atol=TOL)
    torch.testing.assert_close(x2[mask], (x1 @ R.T + t)[mask], rtol=0, atol=TOL)


# ---------------------------------------------------------------------------------------------- permutations
@pytest.mark.parametrize("net", list(NETS), ids=list(NETS))
def test_permutation_equivariance(net):
    gen = make_gen(5)
    model = NETS[net]()
    N = 8
    h, x, ea, mask = inputs(gen, B=2, N=N, sizes=(8, 6))
    perm = torch.randperm(N, generator=gen)
    inv = torch.argsort(perm)
    h1, x1 = model(h, x, ea, mask)
    hp, xp = model(h[:, perm], x[:, perm], ea[:, perm][:, :, perm], mask[:, perm])
    torch.testing.assert_close(hp[:, inv], h1, rtol=0, atol=1e-12)
    torch.testing.assert_close(xp[:, inv], x1, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------------------------- padding
@pytest.mark.parametrize("net", list(NETS), ids=list(NETS))
def test_padded_graph_matches_graph_alone(net):
    """A 5-node graph padded to 9 nodes (with garbage in the padding) in a batch next to a full 9-node graph."""
    gen = make_gen(7)
    model = NETS[net]()
    n, N = 5, 9
    h, x, ea, _ = inputs(gen, B=1, N=n)
    out_h, out_x = model(h, x, ea, torch.ones(1, n, dtype=torch.bool))

    hb, xb, eab, maskb = inputs(gen, B=2, N=N, sizes=(N, n))
    hb[1, :n], xb[1, :n], eab[1, :n, :n] = h[0], x[0], ea[0]
    hb[1, n:] *= 100.0  # padding content must not leak into real nodes
    xb[1, n:] *= 100.0
    eab[1, n:, :] = 50.0
    eab[1, :, n:] = -50.0
    hp, xp = model(hb, xb, eab, maskb)
    torch.testing.assert_close(hp[1, :n], out_h[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(xp[1, :n], out_x[0], rtol=0, atol=1e-12)
    assert torch.equal(xp[1, n:], xb[1, n:]), "padding nodes must keep their coordinates"


def test_masked_nodes_keep_their_inputs_in_a_layer():
    gen = make_gen(9)
    layer = make_layer()
    h, x, ea, mask = inputs(gen, B=2, N=7, sizes=(7, 4))
    h1, x1 = layer(h, x, ea, mask)
    assert torch.equal(h1[1, 4:], h[1, 4:])
    assert torch.equal(x1[1, 4:], x[1, 4:])
    assert (h1[1, :4] - h[1, :4]).abs().min() > 0, "real nodes are updated"


def test_single_real_node_is_finite_and_keeps_its_position():
    """A graph of one real node has no neighbours: no division by zero, the position does not move."""
    gen = make_gen(13)
    layer = make_layer()
    h, x, ea, mask = inputs(gen, B=1, N=4, sizes=(1,))
    h1, x1 = layer(h, x, ea, mask)
    assert torch.isfinite(h1).all()
    assert torch.equal(x1[0, 0], x[0, 0])


# ---------------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("case", ["two_coincident", "all_at_origin"], ids=["two-coincident", "all-at-origin"])
def test_coincident_nodes_give_finite_gradients(case):
    gen = make_gen(17)
    model = make_stack()
    h, x, ea, mask = inputs(gen, B=1, N=6)
    if case == "two_coincident":
        x[0, 3] = x[0, 1]
    else:
        x.zero_()
    x.requires_grad_(True)
    h.requires_grad_(True)
    h1, x1 = model(h, x, ea, mask)
    wh, wx = torch.randn(h1.shape, generator=gen, dtype=F64), torch.randn(x1.shape, generator=gen, dtype=F64)
    loss = (h1 * wh).sum() + (x1 * wx).sum()
    loss.backward()
    grads = [x.grad, h.grad] + [p.grad for p in model.parameters()]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)
    assert x.grad.abs().max() > 0
