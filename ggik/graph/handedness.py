"""Handedness of a GGIK point set: the signed volumes of its links.

For link i (i = 1 .. n) the four points ``(p_{i-1}, q_{i-1}, p_i, q_i)`` are fixed in one rigid body: ``p_{i-1}``,
``q_{i-1}`` lie on the axis of joint i, about which the link turns, and ``p_i``, ``q_i`` on the axis of joint i + 1,
which the link carries. Their *signed volume*

    V_i(X) = det[q_{i-1} - p_{i-1}, p_i - p_{i-1}, q_i - p_{i-1}]   [m^3]

(six times the tetrahedron's) is therefore a constant of the arm: ``L^2 a_i sin(alpha_i)`` up to sign, with ``L`` the
axis length (:data:`ggik.graph.frames.AXIS_LENGTH`), ``a_i`` the length of the common normal of the two axes and
``alpha_i`` their angle. The six distances of the four points are known edges of the graph; they fix ``|V_i|`` but not
its sign, since the mirror image of the tetrahedron has the same six distances. A link is *skew* when its two axes
neither meet nor are parallel (``V_i != 0``): an arm with k skew links has 2^k distance-equal realizations of every
configuration, and only the one whose volumes all have the arm's signs is the arm. The volumes are the handedness
the distances cannot hold.

Skewness is decided with a tolerance that scales with the arm (:func:`skew_tolerance`): ``|V_i|`` above
:data:`SKEW_TOL` times ``L^2`` times the arm's size (the largest distance between consecutive joint points), i.e. a
common normal of at least a ten-thousandth of the arm's size at right angles (0.1 mm for a 1 m arm). Axes closer than
that to meeting (a file's rounding: one training file has a 1 um volume) have mirror images within about twice that
distance, a hundredth of a 1 cm goal tolerance: they count as meeting, and their volume as 0.

Node layout (:class:`ggik.graph.structure.GraphStructure`): ``[p0, x, y, q0, p1, q1, ..., pn, qn]``, so link i has the
nodes ``(0, 3, 4, 5)`` for i = 1 and ``(2i, 2i + 1, 2i + 2, 2i + 3)`` after. Padded batches (``N`` nodes of the
largest graph) have ``(N - 4) // 2`` link slots; a smaller graph's slots past its own links are padding.
"""

from __future__ import annotations

import torch

from ggik.graph.frames import AXIS_LENGTH

__all__ = ["SKEW_TOL", "link_nodes", "signed_volumes", "volume_jacobian", "skew_tolerance", "link_slots"]

SKEW_TOL = 1e-4  #: a link is skew when |V_i| > SKEW_TOL * L^2 * (the arm's size) (module docstring)


def link_slots(num_nodes: int) -> int:
    """The number of links of a graph (or padded batch) of ``num_nodes`` nodes: ``(N - 4) // 2``."""
    return max((num_nodes - 4) // 2, 0)


def link_nodes(num_links: int, device: torch.device | str | None = None) -> torch.Tensor:
    """(num_links, 4) long: the nodes (p_{i-1}, q_{i-1}, p_i, q_i) of links i = 1 .. num_links."""
    i = torch.arange(1, num_links + 1, device=device)
    first = i == 1  # link 1 turns about (p0, q0), nodes 0 and 3 (made on the device: no copy from the host)
    return torch.stack([torch.where(first, 0, 2 * i), torch.where(first, 3, 2 * i + 1), 2 * i + 2, 2 * i + 3], -1)


def _edges(points: torch.Tensor, num_links: int | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The three edges b - a, c - a, d - a (..., L, 3) of each link's tetrahedron (a, b, c, d) = link_nodes."""
    L = link_slots(points.shape[-2]) if num_links is None else num_links
    idx = link_nodes(L, points.device)
    a, b, c, d = (points[..., idx[:, k], :] for k in range(4))
    return b - a, c - a, d - a


def signed_volumes(points: torch.Tensor, num_links: int | None = None) -> torch.Tensor:
    """Signed volumes V_i (..., L) [m^3] of the links of point sets ``points`` (..., N, 3) [m] (module docstring);
    L = ``num_links`` (None: every slot of N nodes, :func:`link_slots`)."""
    u, v, w = _edges(points, num_links)
    return (u * torch.linalg.cross(v, w)).sum(-1)


def volume_jacobian(points: torch.Tensor, num_links: int | None = None) -> torch.Tensor:
    """dV_i / dx_a (..., L, 4, 3) [m^2]: the gradient of each link's signed volume with respect to its four points
    (p_{i-1}, q_{i-1}, p_i, q_i), ``points`` (..., N, 3) [m]. The gradient of a point is a cross product of the two
    edges that do not hold it; the four sum to zero (a translation keeps the volume). Under a rotation of the points
    it rotates with them; under a reflection it is reflected and negated (the volume changes sign)."""
    u, v, w = _edges(points, num_links)
    gb, gc, gd = torch.linalg.cross(v, w), torch.linalg.cross(w, u), torch.linalg.cross(u, v)
    return torch.stack([-(gb + gc + gd), gb, gc, gd], -2)


def skew_tolerance(points: torch.Tensor, num_links: int) -> float:
    """The volume below which a link of this arm counts as not skew [m^3]: :data:`SKEW_TOL` x L^2 x the arm's size,
    the size being the largest distance between consecutive joint points p_{i-1}, p_i of the point set ``points``
    (N, 3) [m] (at least 1 cm, so that a degenerate arm keeps a meaningful tolerance)."""
    idx = link_nodes(num_links, points.device)
    size = float(torch.linalg.vector_norm(points[idx[:, 2]] - points[idx[:, 0]], dim=-1).max()) if num_links else 0.0
    return SKEW_TOL * AXIS_LENGTH**2 * max(size, 0.01)
