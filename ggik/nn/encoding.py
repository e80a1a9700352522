"""What the model computes from a problem once (:class:`ProblemEncoding`) and its mixture prior, plus small helpers.

Shapes: B problems, N nodes, L latent nodes (N for per-node latents, 1 for one latent per graph), K mixture
components, Z latent size, D feature width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["MixturePrior", "ProblemEncoding", "mlp", "normal_log_prob"]


def mlp(inp: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inp, hidden), nn.LayerNorm(hidden), nn.SiLU(), nn.Linear(hidden, out))


def normal_log_prob(z: torch.Tensor, mu: torch.Tensor, log_std: torch.Tensor) -> torch.Tensor:
    """log N(z; mu, diag(exp(log_std)^2)) summed over the last dim."""
    return (-0.5 * ((z - mu) * torch.exp(-log_std)) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)


@dataclass
class MixturePrior:
    """The prior p(z | G~) of a batch of B problems: a mixture of K diagonal Gaussians over Z-dim latents.

    Attributes:
        logits: (B, L, K) mixture logits per latent node ("node" mixture) or (B, K) per graph ("graph" mixture).
        mu: (B, L, K, Z) component means; log_std: (B, L, K, Z) component log standard deviations.
    """

    logits: torch.Tensor
    mu: torch.Tensor
    log_std: torch.Tensor


@dataclass
class ProblemEncoding:
    """Everything the model computes from the problem (partial graph) alone, once per problem.

    Attributes (B problems, N nodes, D features):
        h0: (B, N, D) embedded node-role features; h_partial: (B, N, D) partial-encoder features h~.
        x_partial: (B, N, 3) partial-encoder positions x~ [m, graph frame], where the decoder starts.
        edge_attr: (B, N, N, 2) known distance [m] (0 if unknown) and known flag.
        movable: (B, N) bool, nodes whose positions the networks may change.
        frame: (B, 3, 3) anchor-frame axes (:meth:`GGIKModel.anchor_frame`).
        prior: the mixture prior p(z | G~), or None in a copy made for decoding only.
    """

    h0: torch.Tensor
    h_partial: torch.Tensor
    x_partial: torch.Tensor
    edge_attr: torch.Tensor
    movable: torch.Tensor
    frame: torch.Tensor
    prior: MixturePrior | None = None

    def repeat_for_samples(self, num_samples: int) -> ProblemEncoding:
        """The decoder inputs of each problem repeated ``num_samples`` times: (B, ...) -> (B * S, ...),
        problem-major (rows b * S .. b * S + S - 1 are problem b); the prior is left out."""
        S = int(num_samples)

        def tile(t: torch.Tensor) -> torch.Tensor:
            return t[:, None].expand(t.shape[0], S, *t.shape[1:]).reshape(t.shape[0] * S, *t.shape[1:])

        return ProblemEncoding(
            h0=tile(self.h0),
            h_partial=tile(self.h_partial),
            x_partial=tile(self.x_partial),
            edge_attr=tile(self.edge_attr),
            movable=tile(self.movable),
            frame=tile(self.frame),
        )
