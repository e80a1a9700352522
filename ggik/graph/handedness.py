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

Which links are skew is one rule, the graph's (:func:`skew_links`): a link is skew when its two axes are neither
parallel nor meeting.

* *Parallel*: the sine of their angle under :data:`ggik.graph.conventions.PARALLEL_TOL` (0.57 deg), by
  :func:`ggik.graph.conventions.axes_parallel`, the test by which the canonical points take parallel axes (rule 2). A
  calibrated file tilts an arm's parallel axes by 1e-4-1e-3 rad: with a 0.4 m common normal that is a volume of
  0.04-0.4 mm x L^2, which a bare volume test would call skew in that file and not in another of the same arm. A link of
  axes this close to parallel is treated as flat (volume 0), as the canonical graph treats its axes as parallel; its
  mirror image turns the far axis by twice the tilt (0.1 deg at 1e-3 rad, 1.1 deg just under the tolerance).
* *Meeting*: ``|V_i|`` at most :func:`skew_tolerance`, :data:`SKEW_TOL` times ``L^2`` times the arm's size
  (:func:`arm_size`, the largest distance between consecutive canonical points: a function of the joint axes alone,
  so the same for every graph of the arm, either convention and every goal kind, and every file of it), i.e. a
  common normal of at most a ten-thousandth of the arm's size at right angles (0.1 mm for a 1 m arm). Axes closer
  than that to meeting (a file's rounding: one training file has a 1 um volume) have mirror images within about twice
  that distance, a hundredth of a 1 cm goal tolerance: they count as meeting.

A link that is not skew has volume 0 (:attr:`ggik.graph.structure.GraphStructure.link_volumes`).

Node layout (:class:`ggik.graph.structure.GraphStructure`): ``[p0, x, y, q0, p1, q1, ..., pn, qn]``, so link i has the
nodes ``(0, 3, 4, 5)`` for i = 1 and ``(2i, 2i + 1, 2i + 2, 2i + 3)`` after. Padded batches (``N`` nodes of the
largest graph) have ``(N - 4) // 2`` link slots; a smaller graph's slots past its own links are padding.
"""

from __future__ import annotations

import torch

from ggik.graph.conventions import axes_parallel, axis_lines, canonical_points
from ggik.graph.frames import AXIS_LENGTH
from ggik.kinematics.robot import Robot

__all__ = [
    "SKEW_TOL",
    "MIN_ARM_SIZE",
    "link_nodes",
    "signed_volumes",
    "volume_jacobian",
    "arm_size",
    "skew_tolerance",
    "skew_links",
    "link_slots",
]

SKEW_TOL = 1e-4  #: a link is skew only when |V_i| > SKEW_TOL * L^2 * (the arm's size) (module docstring)
MIN_ARM_SIZE = 0.01  #: [m] the least size :func:`arm_size` gives, so that a degenerate arm keeps a tolerance


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


def arm_size(robot: Robot) -> float:
    """The size of an arm [m] that scales its skew tolerance: the largest distance between consecutive canonical points
    c_i, c_{i+1} of its joint axes (:func:`ggik.graph.conventions.canonical_points`), at least :data:`MIN_ARM_SIZE`.
    A function of the axes as lines: every graph of the arm has it (the EE anchor, which the graphs of pose and
    position goals place apart, is none of these points), and every file of it. Like the canonical graph, it grows
    where two axes are a few degrees from parallel (rule 1's foot lies about a / sin(alpha) away)."""
    o, u, _ = axis_lines(robot)
    c = canonical_points(o, u)
    size = float(torch.linalg.vector_norm(c[1:] - c[:-1], dim=-1).max()) if len(c) > 1 else 0.0
    return max(size, MIN_ARM_SIZE)


def skew_tolerance(robot: Robot) -> float:
    """The volume at or below which a link of ``robot`` has axes that meet [m^3]: :data:`SKEW_TOL` x L^2 x
    :func:`arm_size`, a property of the arm (module docstring)."""
    return SKEW_TOL * AXIS_LENGTH**2 * arm_size(robot)


def skew_links(points: torch.Tensor, num_links: int, tol: float) -> torch.Tensor:
    """(..., L) bool: the skew links of point sets ``points`` (..., N, 3) [m] (L = ``num_links``), those whose signed
    volume exceeds ``tol`` [m^3] (:func:`skew_tolerance`: the axes do not meet) and whose two axes, (p_{i-1},
    q_{i-1}) and (p_i, q_i), are not parallel (:func:`ggik.graph.conventions.axes_parallel`): the module docstring's
    one rule."""
    idx = link_nodes(num_links, points.device)
    near = points[..., idx[:, 1], :] - points[..., idx[:, 0], :]
    far = points[..., idx[:, 3], :] - points[..., idx[:, 2], :]
    near = near / torch.linalg.vector_norm(near, dim=-1, keepdim=True)
    far = far / torch.linalg.vector_norm(far, dim=-1, keepdim=True)
    return (signed_volumes(points, num_links).abs() > tol) & ~axes_parallel(near, far)
