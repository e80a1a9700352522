"""Micro-batches of a training step (ggik.training.objective, GraphBatch.trimmed): the same step as one pass.

The model's noise is set to zero here (``torch.randn`` patched), which makes a training pass deterministic, so a batch
split into passes must give the one-pass loss and gradients up to float32 rounding, and a trimmed batch the untrimmed
batch's per-example terms."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from ggik import GGIKError
from ggik.data import TrainingData
from ggik.nn.cvae import GGIKModel
from ggik.training.config import TrainConfig
from ggik.training.objective import micro_batches, step_objective
from ggik.training.trainer import Trainer
from ggik.typed_config import apply_overrides, from_dict, load_yaml

TINY = Path(__file__).resolve().parents[1] / "train" / "configs" / "tiny.yaml"
#: two robots of different node counts (16 and 18 nodes) and two goal kinds, made by the stacked sampler
MIXED = (
    "data.robots={ur10: 1.0, panda: 1.0}",
    "data.random_weight=0",
    "data.sampler=stacked",
    "data.goal_kinds={pose: 0.5, position: 0.5}",
    "data.batch_size=24",
)


def mixed_cfg(*overrides: str) -> TrainConfig:
    return from_dict(TrainConfig, apply_overrides(load_yaml(TINY), [*MIXED, *overrides]))


@pytest.fixture
def zero_noise(monkeypatch):
    """torch.randn returns zeros: the posterior sample is its mean."""
    monkeypatch.setattr(torch, "randn", lambda *shape, **kw: torch.zeros(*shape, **kw))


def mixed_batch(seed: int = 0):
    cfg = mixed_cfg(f"data.seed={seed}")
    return TrainingData(cfg.data).examples(0, 0, torch.device("cpu")).to(dtype=torch.float32), cfg


@pytest.mark.parametrize("size", [0, 1, 5, 8, 23, 24, 100])
def test_micro_batches_cover_the_batch_once_ordered_by_size(size):
    batch, _ = mixed_batch()
    B = batch.batch_size
    parts = micro_batches(batch, size)
    assert len(parts) == (1 if size <= 0 or size >= B else -(-B // size))
    assert sum(share for _, share in parts) == pytest.approx(1.0, abs=1e-12)
    for part, share in parts:
        assert share == part.batch_size / B and part.batch_size <= (size if 0 < size < B else B)
    # every example exactly once: match each goal to the batch's goals
    goals = torch.cat([part.T_goal for part, _ in parts]).flatten(1)
    matches = (goals[:, None, :] == batch.T_goal.flatten(1)[None, :, :]).all(-1)
    assert torch.equal(matches.sum(0), torch.ones(B, dtype=torch.long))
    counts = torch.cat([part.node_mask.sum(1) for part, _ in parts])
    if 0 < size < B:
        assert torch.equal(counts, counts.sort().values), "passes ordered by node count"
        for part, _ in parts:  # padding no graph of the pass needs is gone
            assert part.num_nodes == int(part.node_mask.sum(1).max())


def test_trimmed_batch_gives_the_same_per_example_terms(zero_noise):
    batch, cfg = mixed_batch(seed=3)
    small = batch.select(batch.node_mask.sum(1) == 16)
    assert small.batch_size > 0 and small.num_nodes == 18
    cut = small.trimmed()
    assert cut.num_nodes == 16 and cut.trimmed() is cut
    torch.manual_seed(0)
    model = GGIKModel(cfg.model)
    with torch.no_grad():
        full_out, cut_out = model(small), model(cut)
    for key in ("anchor_se", "free_se", "kl"):
        torch.testing.assert_close(cut_out[key], full_out[key], rtol=1e-5, atol=1e-7)
    torch.testing.assert_close(cut_out["x"], full_out["x"][:, :16], rtol=1e-5, atol=1e-6)


def test_trimmed_keeps_a_batch_whose_padding_is_not_at_the_end():
    batch, _ = mixed_batch()
    small = batch.select(batch.node_mask.sum(1) == 16)
    mask = small.node_mask.clone()
    mask[:, [0, 17]] = mask[:, [17, 0]]  # a real node in the last column
    moved = small.select(slice(None))
    moved.node_mask = mask
    assert moved.trimmed() is moved


@pytest.mark.parametrize("micro", [5, 8, 16])
def test_a_step_in_micro_batches_is_the_one_pass_step(micro, zero_noise, tmp_path):
    trainers = []
    for size in (0, micro):
        torch.manual_seed(0)
        trainer = Trainer(
            mixed_cfg(f"cpu_micro_batch={size}", "optim.grad_clip=0"), tmp_path / str(size), progress=False
        )
        stats = trainer._train_step_tensors()
        trainers.append((trainer, stats))
    (one, one_stats), (split, split_stats) = trainers
    assert one_stats.keys() == split_stats.keys()
    for key in one_stats:
        torch.testing.assert_close(split_stats[key], one_stats[key], rtol=2e-5, atol=1e-7, msg=key)
    # float32 sums in another order (gradients up to ~4e5 here): the whole gradient agrees to ~3e-5 relative
    pairs = [(p.grad, q.grad) for p, q in zip(one.model.parameters(), split.model.parameters())]
    err = sum(float(((b - a) ** 2).sum()) for a, b in pairs) ** 0.5
    assert err <= 2e-4 * sum(float((a**2).sum()) for a, _ in pairs) ** 0.5


@pytest.mark.parametrize("micro", [1, 7, 16])
def test_micro_batch_gradients_in_float64_equal_one_pass(micro, zero_noise):
    """The trainer's accumulation (each pass's objective weighted by its share) in float64: equal to 1e-9."""
    batch, cfg = mixed_batch(seed=5)
    batch = batch.to(dtype=torch.float64)
    torch.manual_seed(0)
    model = GGIKModel(cfg.model).double()

    def gradient(parts):
        model.zero_grad()
        loss = 0.0
        for part, share in parts:
            term = step_objective(model(part), 1000, cfg.loss)["loss"] * share
            term.backward()
            loss += float(term.detach())
        return loss, [p.grad.clone() for p in model.parameters()]

    loss_one, grad_one = gradient(micro_batches(batch, 0))
    loss_split, grad_split = gradient(micro_batches(batch, micro))
    assert loss_split == pytest.approx(loss_one, rel=1e-10)
    for a, b in zip(grad_one, grad_split):
        torch.testing.assert_close(b, a, rtol=1e-9, atol=1e-9 * max(1.0, float(a.abs().max())))


def test_negative_micro_batch_is_a_clear_error(tmp_path):
    with pytest.raises(GGIKError, match="cpu_micro_batch must be >= 0"):
        Trainer(mixed_cfg("cpu_micro_batch=-1"), tmp_path, progress=False)
