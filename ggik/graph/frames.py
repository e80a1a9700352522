"""The point set of graph frames, joint rotations about z, and classical multidimensional scaling: the small pieces
of geometry that :class:`ggik.graph.RobotGraph` and :class:`ggik.graph.stacked.StackedGraphs` share."""

from __future__ import annotations

import torch

__all__ = ["AXIS_LENGTH", "classical_mds", "points_from_frames", "rz_left"]

AXIS_LENGTH = 1.0  #: L, distance from p_i to q_i [m]


def classical_mds(D: torch.Tensor, dim: int = 3) -> torch.Tensor:
    """Points (..., N, dim) whose pairwise distances best match the distance matrix ``D`` (..., N, N).

    Classical (Torgerson) multidimensional scaling: double-centre ``-D^2 / 2`` and keep the top
    ``dim`` eigenpairs. Exact, up to a rigid motion and reflection, for Euclidean distances.
    """
    N = D.shape[-1]
    J = torch.eye(N, dtype=D.dtype, device=D.device) - 1.0 / N
    G = -0.5 * J @ (D * D) @ J
    evals, evecs = torch.linalg.eigh(G)
    evals, evecs = evals[..., -dim:], evecs[..., :, -dim:]
    return evecs * evals.clamp(min=0.0).sqrt()[..., None, :]


def points_from_frames(F: torch.Tensor) -> torch.Tensor:
    """The point set (..., 2 k + 2, 3) ``[p0, x, y, q0, p1, q1, ...]`` of graph frames F (..., k, 4, 4) [m]:
    each frame's origin p_i and q_i = p_i + L z_i, and the base points x, y."""
    p = F[..., :3, 3]
    q = p + AXIS_LENGTH * F[..., :3, 2]
    pts = torch.stack([p, q], dim=-2).flatten(-3, -2)  # (..., 2(n+1), 3): p0 q0 p1 q1 ...
    e = AXIS_LENGTH * torch.eye(3, dtype=F.dtype, device=F.device)  # made on the device: no copy from the host
    x = e[0].expand(pts.shape[:-2] + (1, 3))  # (L, 0, 0)
    y = (0.0 - e[1]).expand(pts.shape[:-2] + (1, 3))  # (0, -L, 0)
    return torch.cat([pts[..., :1, :], x, y, pts[..., 1:, :]], dim=-2)


def rz_left(theta: torch.Tensor, C: torch.Tensor) -> torch.Tensor:
    """Rz(theta) @ C for theta (...) and C (..., 4, 4) without building Rz."""
    c, s = torch.cos(theta)[..., None], torch.sin(theta)[..., None]
    r0, r1 = C[..., 0, :], C[..., 1, :]
    new0, new1 = c * r0 - s * r1, s * r0 + c * r1
    return torch.stack([new0, new1, C[..., 2, :].expand_as(new0), C[..., 3, :].expand_as(new0)], -2)
