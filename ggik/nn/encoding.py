"""What the model computes from a problem once (:class:`ProblemEncoding`) and its mixture prior, the model's
equivariant inputs of a problem (initial positions, anchor frame, edge attributes), plus small helpers.

Shapes: B problems, N nodes, L latent nodes (N for per-node latents, 1 for one latent per graph), K mixture
components, Z latent size, D feature width.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from ggik.graph.batch import GraphBatch

__all__ = [
    "MixturePrior",
    "latent_noise",
    "ProblemEncoding",
    "mlp",
    "normal_log_prob",
    "initial_positions",
    "anchor_frame",
    "edge_attr",
    "distance_se",
]


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
        volumes: (B, L) the arm's signed link volumes [m^3] (:meth:`ggik.graph.GraphBatch.link_volumes`), for a model
            that reads handedness (``ModelConfig.volume_inputs``); None otherwise.
    """

    h0: torch.Tensor
    h_partial: torch.Tensor
    x_partial: torch.Tensor
    edge_attr: torch.Tensor
    movable: torch.Tensor
    frame: torch.Tensor
    prior: MixturePrior | None = None
    volumes: torch.Tensor | None = None

    def rows(self, index: torch.Tensor) -> ProblemEncoding:
        """The decoder inputs of the problems ``index`` (a (B',) index tensor, repeats allowed); the prior is left
        out."""
        return ProblemEncoding(
            h0=self.h0[index],
            h_partial=self.h_partial[index],
            x_partial=self.x_partial[index],
            edge_attr=self.edge_attr[index],
            movable=self.movable[index],
            frame=self.frame[index],
            volumes=None if self.volumes is None else self.volumes[index],
        )

    def repeat_for_samples(self, num_samples: int) -> ProblemEncoding:
        """The decoder inputs of each problem repeated ``num_samples`` times: (B, ...) -> (B * S, ...),
        problem-major (rows b * S .. b * S + S - 1 are problem b); the prior is left out."""
        return self.rows(torch.arange(self.h0.shape[0], device=self.h0.device).repeat_interleave(int(num_samples)))


def initial_positions(batch: GraphBatch) -> torch.Tensor:
    """(B, N, 3): anchors at their known positions; other nodes of frame i at p0 + (i / n)(p_n - p0)."""
    p0 = batch.known_positions[:, 0, :]
    last = (2 * batch.num_joints + 2)[:, None, None].expand(-1, 1, 3)
    pn = torch.gather(batch.known_positions, 1, last)[:, 0, :]  # p_n is node 2n + 2
    frac = (batch.node_frame.to(p0.dtype) / batch.num_joints[:, None].to(p0.dtype))[..., None]
    guess = p0[:, None, :] + frac * (pn - p0)[:, None, :]
    return torch.where(batch.anchor_mask[..., None], batch.known_positions, guess * batch.node_mask[..., None])


def anchor_frame(batch: GraphBatch) -> torch.Tensor:
    """(B, 3, 3) rows = axes of the base frame built from the known anchors: x - p0, p0 - y, q0 - p0.

    They are equivariant vectors (the identity in the graph frame), which lets a coordinate update
    place a node anywhere with three invariant coefficients.
    """
    p0, x, y, q0 = batch.known_positions[:, :4].unbind(1)
    return torch.stack([x - p0, p0 - y, q0 - p0], 1)


def edge_attr(batch: GraphBatch) -> torch.Tensor:
    """(B, N, N, 2): known distance [m] (0 if unknown) and the known flag."""
    known = batch.known_mask.to(batch.known_distances.dtype)
    return torch.stack([batch.known_distances * known, known], -1)


def latent_noise(
    size: tuple[int, ...],
    latent_dim: int,
    generator: torch.Generator | None,
    dtype: torch.dtype,
    device: torch.device | str,
) -> dict[str, torch.Tensor]:
    """The prior's sampling noise for latent nodes of shape ``size`` (e.g. (B, S, L)): ``{"u": size, "eps": size +
    (latent_dim,)}``, uniform then standard normal (the one order every sampler draws them in), in ``dtype``, drawn on
    ``generator``'s device (None: the global generator of ``device``)."""
    at = device if generator is None else generator.device
    return {
        "u": torch.rand(size, generator=generator, dtype=dtype, device=at),
        "eps": torch.randn(size + (latent_dim,), generator=generator, dtype=dtype, device=at),
    }


def distance_se(x: torch.Tensor, batch: GraphBatch) -> torch.Tensor:
    """(B,) [m^2]: sum over the known edges {i, j} of (|x_i - x_j| - d_ij)^2, for positions x (B, N, 3).

    Zero exactly when the point set satisfies every distance the problem fixes (robot structure and
    goal), i.e. when it is a valid configuration reaching the goal.
    """
    if x.dtype in (torch.bfloat16, torch.float16):
        x = x.float()  # distances of ~1 m need more than bf16's 3 digits
    diff = x[:, :, None, :] - x[:, None, :, :]
    dist = torch.sqrt((diff**2).sum(-1).clamp_min(1e-20))  # no infinite gradient at coincident points
    known = batch.known_mask.to(x.dtype)
    return 0.5 * (((dist - batch.known_distances.to(x.dtype)) * known) ** 2).sum((-1, -2))
