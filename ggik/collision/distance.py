"""Signed distances between the primitives of collision checking, batched over any leading dimensions.

Every robot part is a *capsule*: the points within radius r of a segment [a, b] (a sphere when a == b). Obstacles are
capsules (spheres included) or oriented boxes. Two kernels give every pair:

* :func:`segment_segment` - closest points of two segments (capsule vs capsule and sphere: subtract the radii);
* :func:`segment_box` - the distance between a segment and a box, minus the penetration depth when they overlap
  (capsule vs box: subtract the radius).

Signed: positive = separated by that gap [m], negative = overlapping. Each kernel also returns the unit direction
``n`` in which the distance grows fastest when the first shape's closest point moves (pointing away from the other
shape), so that a solver gets d(distance)/dq as ``n . dc/dq`` for the closest point c on the moving segment (the
closest parameter is held fixed: its own derivative does not change a minimum's value to first order).
All lengths in metres, all points in one frame (the robot's base-link frame in ggik).
"""

from __future__ import annotations

import torch

from ggik.kinematics.geometry import broadcast_shapes

__all__ = ["segment_segment", "point_box", "segment_box"]


def _unit_or(v: torch.Tensor, fallback: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(unit v, |v|), with ``fallback`` (unit) where v is (numerically) zero."""
    norm = torch.linalg.vector_norm(v, dim=-1)
    tiny = norm <= 1e-15
    n = v / torch.where(tiny, torch.ones_like(norm), norm)[..., None]
    return torch.where(tiny[..., None], fallback, n), norm


def _any_perpendicular(d: torch.Tensor) -> torch.Tensor:
    """A unit vector perpendicular to d (..., 3) (x when d is zero)."""
    ex = torch.zeros_like(d)
    ex[..., 0] = 1.0
    ey = torch.zeros_like(d)
    ey[..., 1] = 1.0
    use_y = d[..., 0].abs() > 0.9 * torch.linalg.vector_norm(d, dim=-1)
    c = torch.linalg.cross(d, torch.where(use_y[..., None], ey, ex), dim=-1)
    n, norm = _unit_or(c, ex)
    return n


def segment_segment(
    a1: torch.Tensor, b1: torch.Tensor, a2: torch.Tensor, b2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Closest points of segments [a1, b1] and [a2, b2] (each (..., 3), broadcast).

    Returns ``(dist, s, t, n)``: the distance (...) [m] between ``a1 + s (b1 - a1)`` and ``a2 + t (b2 - a2)``, the
    parameters s, t in [0, 1], and the unit direction n (..., 3) from the second closest point to the first (for
    crossing segments, a direction perpendicular to both). Degenerate segments (points) are handled; parallel
    segments return one of their closest pairs. Ericson, *Real-Time Collision Detection*, 5.1.9, without branches.
    """
    a1, b1, a2, b2 = torch.broadcast_tensors(a1, b1, a2, b2)
    d1, d2, r = b1 - a1, b2 - a2, a1 - a2
    a = (d1 * d1).sum(-1)
    e = (d2 * d2).sum(-1)
    f = (d2 * r).sum(-1)
    c = (d1 * r).sum(-1)
    b = (d1 * d2).sum(-1)
    p1, p2 = a <= 1e-24, e <= 1e-24  # points (segments shorter than 1e-12 m)
    one = torch.ones_like(a)
    a_safe, e_safe = torch.where(p1, one, a), torch.where(p2, one, e)
    denom = a * e - b * b
    parallel = denom <= 1e-12 * a_safe * e_safe
    s = torch.where(parallel, torch.zeros_like(a), ((b * f - c * e) / torch.where(parallel, one, denom)).clamp(0, 1))
    t = (b * s + f) / e_safe
    # t outside [0, 1]: clamp it and recompute s for the clamped t
    s = torch.where(t < 0, (-c / a_safe).clamp(0, 1), torch.where(t > 1, ((b - c) / a_safe).clamp(0, 1), s))
    t = t.clamp(0, 1)
    # degenerate cases: a point against a segment, or two points
    t = torch.where(p1, (f / e_safe).clamp(0, 1), t)
    s = torch.where(p1, torch.zeros_like(s), s)
    s = torch.where(p2 & ~p1, (-c / a_safe).clamp(0, 1), s)
    t = torch.where(p2, torch.zeros_like(t), t)
    x1 = a1 + s[..., None] * d1
    x2 = a2 + t[..., None] * d2
    fallback = _any_perpendicular(torch.linalg.cross(d1, d2, dim=-1) + 1e-300 * d1)
    n, dist = _unit_or(x1 - x2, fallback)
    return dist, s, t, n


def point_box(
    p: torch.Tensor, centre: torch.Tensor, rotation: torch.Tensor, half: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Signed distance from points p (..., 3) to boxes (centre (..., 3), rotation (..., 3, 3) box -> frame, half
    extents (..., 3) [m]), broadcast: ``(dist (...), n (..., 3))``, n the unit gradient of the distance at p (outside:
    from the box's closest point to p; inside: the normal of the nearest face)."""
    local = ((p - centre)[..., None, :] @ rotation)[..., 0, :]  # R^T (p - c)
    q = local.abs() - half
    outside = q.clamp(min=0)
    out_norm = torch.linalg.vector_norm(outside, dim=-1)
    qmax, face = q.max(-1)
    inside = qmax < 0
    sign = torch.where(local < 0, -1.0, 1.0).to(p.dtype)
    g_out = sign * outside / torch.where(out_norm > 0, out_norm, torch.ones_like(out_norm))[..., None]
    g_in = sign * torch.nn.functional.one_hot(face, 3).to(p.dtype)
    g_local = torch.where(inside[..., None] | (out_norm <= 0)[..., None], g_in, g_out)
    dist = torch.where(inside, qmax, out_norm)
    n = (rotation @ g_local[..., None])[..., 0]
    return dist, n


def segment_box(
    a: torch.Tensor, b: torch.Tensor, centre: torch.Tensor, rotation: torch.Tensor, half: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Signed distance between segments [a, b] (..., 3) and boxes (as in :func:`point_box`, broadcast):
    ``(dist (...), t (...), n (..., 3))`` with ``a + t (b - a)`` the segment point that decides it and n the unit
    direction in which moving that point increases the distance.

    Apart: the exact distance. The squared distance to a box, g(t) along the segment, is convex and piecewise
    quadratic with its pieces joined where a coordinate crosses a face plane (at most six points); its derivative is
    piecewise linear and non-decreasing, so its zero is read off the pieces in closed form.
    Overlapping: minus the penetration depth, the shortest translation that separates the segment from the box
    (:func:`_segment_box_depth`); n is then that translation's direction and t the segment end deepest against it.
    The result is continuous through contact. Without autograd: the solvers take the derivatives through n."""
    with torch.no_grad():
        shape = broadcast_shapes(a.shape[:-1], b.shape[:-1], centre.shape[:-1], half.shape[:-1], rotation.shape[:-2])
        a, b, centre, half = (x.expand(shape + (3,)) for x in (a, b, centre, half))
        rotation = rotation.expand(shape + (3, 3))
        p0 = ((a - centre)[..., None, :] @ rotation)[..., 0, :]  # the segment in box coordinates
        v = ((b - a)[..., None, :] @ rotation)[..., 0, :]
        moving = v.abs() > 1e-300
        safe_v = torch.where(moving, v, torch.ones_like(v))
        cross = torch.cat([(half - p0) / safe_v, (-half - p0) / safe_v], -1)  # where p_k(t) = +-h_k
        cross = torch.where(torch.cat([moving, moving], -1), cross, torch.zeros_like(cross)).clamp(0, 1)
        zero, one = (
            torch.zeros(shape + (1,), dtype=a.dtype, device=a.device),
            torch.ones(shape + (1,), dtype=a.dtype, device=a.device),
        )
        knots = torch.cat([zero, cross, one], -1).sort(-1).values  # (..., 8)

        def slope(t: torch.Tensor) -> torch.Tensor:  # g'(t) / 2 at knots t (..., K)
            p = p0[..., None, :] + t[..., None] * v[..., None, :]
            return (torch.sign(p) * (p.abs() - half[..., None, :]).clamp(min=0) * v[..., None, :]).sum(-1)

        gp = slope(knots)
        rising = gp >= 0
        j = torch.where(rising.any(-1), rising.to(torch.int8).argmax(-1), knots.shape[-1] - 1)
        jm = (j - 1).clamp(min=0)
        t1, t0 = knots.gather(-1, j[..., None])[..., 0], knots.gather(-1, jm[..., None])[..., 0]
        g1, g0 = gp.gather(-1, j[..., None])[..., 0], gp.gather(-1, jm[..., None])[..., 0]
        flat = (g1 - g0) <= 0
        t = torch.where(flat, t1, t0 - g0 * (t1 - t0) / torch.where(flat, torch.ones_like(g1), g1 - g0))
        t = torch.where(j == 0, zero[..., 0], t).clamp(0, 1)
        dist, n = point_box(a + t[..., None] * (b - a), centre, rotation, half)
        inside = dist <= 1e-12  # touching within rounding, or an end inside
        if bool(inside.any()):  # the segment touches or enters the box: minus its penetration depth instead
            at = inside.nonzero(as_tuple=True)  # only those pairs (usually few)
            depth, n_in, t_in = _segment_box_depth(a[at], b[at], centre[at], rotation[at], half[at])
            dist[at], n[at], t[at] = -depth.clamp(min=0), n_in, t_in
    return dist, t, n


def _segment_box_depth(
    a: torch.Tensor, b: torch.Tensor, centre: torch.Tensor, rotation: torch.Tensor, half: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Penetration depth of segments into boxes: the shortest translation that separates them (separating-axis test
    over the box's face normals and the crossings of the segment with its edges, the face normals of their Minkowski
    sum). Returns (depth (...), n (..., 3) the direction the segment must move, t (...) the end of the segment deepest
    against n; a segment that does not overlap gets a depth <= 0)."""
    d = b - a
    axes = rotation.transpose(-1, -2)  # (..., 3, 3) rows: the box's axes in the frame
    cross = torch.linalg.cross(d[..., None, :].expand(axes.shape), axes, dim=-1)
    norm = torch.linalg.vector_norm(cross, dim=-1)
    usable = norm > 1e-9 * torch.linalg.vector_norm(d, dim=-1)[..., None].clamp(min=1e-300)
    cross = cross / torch.where(usable, norm, torch.ones_like(norm))[..., None]
    u = torch.cat([axes, cross], -2)  # (..., 6, 3)
    ok = torch.cat([torch.ones_like(usable), usable], -1)
    rb = (half[..., None, :] * (u @ rotation).abs()).sum(-1)  # box half-width along each axis
    pa = ((a - centre)[..., None, :] * u).sum(-1)
    pb = ((b - centre)[..., None, :] * u).sum(-1)
    lo, hi = torch.minimum(pa, pb), torch.maximum(pa, pb)
    up, down = rb - lo, hi + rb  # shifts that clear the box along +u and -u
    depth_u = torch.where(ok, torch.minimum(up, down), torch.inf)
    depth, k = depth_u.min(-1)
    sign = torch.where(torch.gather(up, -1, k[..., None]) <= torch.gather(down, -1, k[..., None]), 1.0, -1.0)
    n = sign.to(a.dtype) * torch.gather(u, -2, k[..., None, None].expand(k.shape + (1, 3)))[..., 0, :]
    t = ((b - a) * n).sum(-1) < 0  # b lies deeper against n than a
    return depth, n, t.to(a.dtype)
