"""Oversampling: draw K x S samples, keep the S that best satisfy the known distances (ggik.ik.sampling), through
sample_joint_angles, SolveConfig and ``ggik solve --oversample``."""

from __future__ import annotations

import json

import pytest
import torch

from ggik import GGIK, Robot, RobotGraph, SolveConfig
from ggik.cli import main
from ggik.graph.batch import GraphBatch
from ggik.ik.sampling import SamplingOptions, known_distance_cost, sample_joint_angles
from ggik.nn.cvae import GGIKModel, ModelConfig


@pytest.fixture(scope="module")
def model() -> GGIKModel:
    torch.manual_seed(0)
    cfg = ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=2, prior_components=2, gn_steps=1)
    return GGIKModel(cfg).eval()


@pytest.fixture(scope="module")
def graph() -> RobotGraph:
    return RobotGraph.from_robot(Robot.from_name("panda"))


def goals(graph: RobotGraph, n: int, seed: int) -> torch.Tensor:
    return graph.robot.fk(graph.robot.sample_q(n, torch.Generator().manual_seed(seed)))


def test_known_distance_cost_is_zero_for_solutions_and_grows_with_noise(graph):
    q = graph.robot.sample_q(6, torch.Generator().manual_seed(1))
    batch = GraphBatch.from_graph(graph, q=q)
    pts = batch.pos[:, None].expand(6, 3, -1, -1).clone()
    g = torch.Generator().manual_seed(2)
    pts[:, 1] += 0.01 * torch.randn(pts[:, 1].shape, generator=g, dtype=torch.float64)
    pts[:, 2] += 0.05 * torch.randn(pts[:, 2].shape, generator=g, dtype=torch.float64)
    cost = known_distance_cost(pts, batch.known_distances, batch.known_mask)
    assert cost.shape == (6, 3) and (cost[:, 0] < 1e-24).all()
    assert (cost[:, 1] > 0).all() and (cost[:, 2] > cost[:, 1]).all()
    # by hand for one sample: the sum over known edges (each once) of (|x_i - x_j|^2 - d_ij^2)^2
    x, D, M = pts[0, 2], batch.known_distances[0], batch.known_mask[0]
    i, j = torch.triu_indices(*M.shape, offset=1)
    keep = M[i, j]
    want = (((x[i[keep]] - x[j[keep]]).square().sum(-1) - D[i[keep], j[keep]] ** 2) ** 2).sum()
    assert torch.allclose(cost[0, 2], want, rtol=1e-12)


@pytest.mark.parametrize("k", [2, 3])
def test_oversampling_keeps_the_lowest_cost_samples_of_the_same_draw(model, graph, k):
    T = goals(graph, 5, 3)
    S = 4
    everything = sample_joint_angles(model, graph, T, S * k, generator=torch.Generator().manual_seed(7))
    kept = sample_joint_angles(
        model, graph, T, S, generator=torch.Generator().manual_seed(7), options=SamplingOptions(oversample=k)
    )
    assert kept.q.shape == (5, S, graph.n) and kept.points.shape == (5, S, graph.num_nodes, 3)
    batch = GraphBatch.from_graph(graph, T_goal=T)
    cost = known_distance_cost(everything.points, batch.known_distances, batch.known_mask)
    chosen = cost.topk(S, dim=1, largest=False).indices.sort(dim=1).values
    for p in range(5):
        assert torch.allclose(kept.points[p], everything.points[p, chosen[p]], atol=1e-6)
        assert torch.allclose(kept.pos_err[p], everything.pos_err[p, chosen[p]], atol=1e-6)


def test_oversample_one_is_plain_sampling_and_bad_values_are_refused(model, graph):
    T = goals(graph, 3, 4)
    a = sample_joint_angles(model, graph, T, 4, generator=torch.Generator().manual_seed(5))
    b = sample_joint_angles(
        model, graph, T, 4, generator=torch.Generator().manual_seed(5), options=SamplingOptions(oversample=1)
    )
    assert torch.equal(a.q, b.q)
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="oversample must be an integer >= 1"):
            sample_joint_angles(model, graph, T, 4, options=SamplingOptions(oversample=bad))
    noise = {"u": torch.rand(4, graph.num_nodes), "eps": torch.randn(4, graph.num_nodes, 2)}
    with pytest.raises(ValueError, match="shared noise"):
        sample_joint_angles(model, graph, T, 4, options=SamplingOptions(noise=noise, oversample=2))


def test_solve_config_takes_oversample_where_a_model_samples(model, graph):
    solver = GGIK(model)
    T = goals(graph, 2, 6)
    res = solver.solve(graph.robot, T, SolveConfig(samples=3, oversample=2))
    assert res.q.shape == (2, 3, graph.n)
    with pytest.raises(ValueError, match="oversample must be an integer >= 1"):
        SolveConfig(oversample=0)
    with pytest.raises(ValueError, match="uses no model"):
        SolveConfig(strategy="random", oversample=2)


def test_cli_solve_oversample_starts_from_the_best_of_k_times_the_samples(capsys, monkeypatch):
    """``ggik solve -s S --oversample K`` samples K x S per goal and goes on with the S whose point sets best satisfy
    the known distances: they are points of a plain K x S draw from the same generator state, and none of the draws
    left out has a lower known-distance cost than one kept. Without the flag: S samples, no oversampling."""
    import ggik.ik.strategies as strategies

    calls = []

    def spy(model, graph, goals, samples, generator=None, options=None):
        state = generator.get_state()
        raw = sample_joint_angles(model, graph, goals, samples, generator, options)
        k = options.oversample
        calls.append(dict(model=model, graph=graph, goals=goals, samples=samples, k=k, state=state, raw=raw))
        return raw

    monkeypatch.setattr(strategies, "sample_joint_angles", spy)
    args = ["solve", "--robot", "ur10", "--position", "0.5", "0.2", "0.4", "-s", "2", "--json"]
    assert main([*args, "--oversample", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["solutions"]
    assert main(args) == 0
    capsys.readouterr()
    assert [(c["samples"], c["k"]) for c in calls] == [(2, 3), (2, 1)]
    c = calls[0]
    same_state = torch.Generator().set_state(c["state"])
    drawn = sample_joint_angles(c["model"], c["graph"], c["goals"], 6, generator=same_state)
    batch = GraphBatch.from_graph(c["graph"], T_goal=c["goals"])
    cost = known_distance_cost(drawn.points, batch.known_distances.double(), batch.known_mask)[0]  # (6,)
    kept = c["raw"].points[0]  # (2, N, 3)
    match = [int((drawn.points[0] - x).abs().amax((-1, -2)).argmin()) for x in kept]
    for x, m in zip(kept, match):
        torch.testing.assert_close(x, drawn.points[0, m], rtol=0, atol=1e-12)  # a point set of the plain draw
    dropped = [i for i in range(6) if i not in match]
    assert len(set(match)) == 2 and cost[match].max() <= cost[dropped].min(), (match, cost.tolist())
    with pytest.raises(SystemExit):
        main(["solve", "--robot", "ur10", "--position", "0.5", "0.2", "0.4", "--oversample", "0"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_sampling_on_cuda_recovers_angles_there_and_matches_the_cpu(model, graph):
    """With the model on CUDA, angles and errors are computed on the device (float64) and returned on the CPU; with
    the same noise they equal the CPU's to float32 rounding of the network."""
    from ggik.ik.sampling import shared_noise

    T = goals(graph, 4, 8)
    noise = shared_noise(model, graph, 3, torch.Generator().manual_seed(9))
    cpu = sample_joint_angles(model, graph, T, 3, options=SamplingOptions(noise=noise, bf16=False))
    gpu_model = GGIKModel(model.cfg).eval().to("cuda")
    gpu_model.load_state_dict(model.state_dict())
    gpu = sample_joint_angles(gpu_model, graph, T, 3, options=SamplingOptions(noise=noise, bf16=False))
    assert gpu.q.device.type == "cpu" and gpu.q.dtype == torch.float64
    assert torch.allclose(gpu.points, cpu.points, atol=1e-4)
    assert torch.allclose(gpu.pos_err, cpu.pos_err, atol=1e-3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_a_cpu_generator_samples_a_cuda_model_with_the_cpus_draws(model, graph):
    """A seeded CPU generator (what the CLI and the benchmarks pass) works with a CUDA model and draws the same latents
    as on the CPU, so the samples agree to the network's float32 rounding."""
    T = goals(graph, 3, 5)
    cpu = sample_joint_angles(
        model, graph, T, 4, generator=torch.Generator().manual_seed(3), options=SamplingOptions(bf16=False)
    )
    gpu_model = GGIKModel(model.cfg).eval().to("cuda")
    gpu_model.load_state_dict(model.state_dict())
    gpu = sample_joint_angles(
        gpu_model, graph, T, 4, generator=torch.Generator().manual_seed(3), options=SamplingOptions(bf16=False)
    )
    assert torch.allclose(gpu.points, cpu.points, atol=1e-4)
