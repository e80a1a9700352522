"""The training objective of one step, and the micro-batches a step's forward and backward passes run on.

The loss is a mean over examples of per-example terms, so a batch split into micro-batches, each pass's loss weighted
by its share of the batch and the gradients accumulated, takes the same step up to float rounding (the model's noise
is drawn per pass, so not the same draws). On a CPU that is faster: a pass over 512 small dense graphs runs out of
cache (training-speed study: 2 cores ran 50 examples/s in passes of 512, 122 in passes of 32).
"""

from __future__ import annotations

import torch

from ggik.graph.batch import GraphBatch
from ggik.training.config import LossConfig
from ggik.training.schedules import beta_at, rec_gain_at

__all__ = ["step_objective", "micro_batches"]


def step_objective(out: dict[str, torch.Tensor], step: int, cfg: LossConfig) -> dict[str, torch.Tensor]:
    """The loss at ``step`` of a training pass's output (:meth:`GGIKModel.forward`) and its terms, each a 0-d float32
    tensor (float64 for a float64 model) and a mean over the pass's examples: ``loss``, ``anchor_se``, ``free_se``
    [m^2], ``kl`` [nats], and ``prior_dist_se`` [m^2] when ``cfg.prior_gain`` > 0."""
    terms = {k: v if v.dtype == torch.float64 else v.float() for k, v in out.items() if k != "x"}  # bf16 -> float32
    anchor, free, kl = terms["anchor_se"].mean(), terms["free_se"].mean(), terms["kl"].mean()
    kl_term = terms["kl"].clamp(min=cfg.kl_free_nats).mean() if cfg.kl_free_nats > 0 else kl
    loss = cfg.anchor_gain * anchor + rec_gain_at(step, cfg) * free + beta_at(step, cfg) * kl_term
    stats = {"loss": loss, "anchor_se": anchor, "free_se": free, "kl": kl}
    if cfg.prior_gain > 0:
        stats["prior_dist_se"] = terms["prior_dist_se"].mean()
        stats["loss"] = loss + cfg.prior_gain * stats["prior_dist_se"]
    return stats


def micro_batches(batch: GraphBatch, size: int) -> list[tuple[GraphBatch, float]]:
    """``batch`` as passes of at most ``size`` examples (``size`` <= 0: one pass), each with its share of the batch
    (the weight of its mean loss). Examples are ordered by node count first and each pass drops the padding none of
    its graphs needs (:meth:`GraphBatch.trimmed`), so small robots do not pay for the largest one's nodes."""
    B = batch.batch_size
    if size <= 0 or size >= B:
        return [(batch, 1.0)]
    order = torch.argsort(batch.node_mask.sum(1), stable=True)
    return [(batch.select(order[i : i + size]).trimmed(), min(size, B - i) / B) for i in range(0, B, size)]
