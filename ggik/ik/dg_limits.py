"""Joint limits as residuals of the distance-geometric projection (:mod:`ggik.ik.dg_refine`, ``DGConfig.limits``).

A revolute joint's angle is a function of points of the two links it joins. Joint i (1 .. n) turns about its axis, the
line through ``a = p_{i-1}`` along ``z = (q_{i-1} - p_{i-1}) / L`` (L = :data:`ggik.graph.frames.AXIS_LENGTH`). Take a
point u rigid with the link before the joint and a point v rigid with the link after it:

* u: ``p_{i-2}`` or ``q_{i-2}`` (the axis of joint i - 1, on the link between joints i - 1 and i); for joint 1 the
  base points ``x`` or ``y``;
* v: ``p_i`` or ``q_i`` (the axis of joint i + 1, carried by link i); for the last joint of a *pose* goal the goal
  point ``w = o_n + L x_n`` of the goal frame F_n (``Goals.in_graph``; p_n and q_n lie on the joint's own axis and do
  not turn with it). Of the two or four pairs, the one with the largest ``rho_u rho_v`` (below) is taken.

Write each about the axis: ``u - a = alpha_u z + rho_u (cos phi_u e1 + sin phi_u e2)`` and v alike. Joint value theta
turns v about z by theta from its home azimuth (the graph's joint value is the robot's: the home transforms C_i absorb
the file's zero, :meth:`ggik.graph.structure.GraphStructure.frames`), so ``phi_v(theta) = phi_v(0) + theta`` and

    d^2(theta) = |u - v|^2                   = A - B cos(theta - theta0)          [m^2]
    V(theta)   = det[q_{i-1} - a, u - a, v - a] = (L B / 2) sin(theta - theta0)    [m^3]

    A = (alpha_u - alpha_v)^2 + rho_u^2 + rho_v^2,   B = 2 rho_u rho_v,   theta0 = phi_u - phi_v(0),

all three from the home point set (q = 0): the distance is smallest (A - B) where v has turned towards u (theta =
theta0) and largest (A + B) half a turn away; the signed volume of the four points tells theta - theta0 from its
negative.

**The bound.** Limits [lo, hi] with hi - lo < 2 pi, middle m = (lo + hi) / 2, half-width h = (hi - lo) / 2: theta lies
within them (up to 2 pi, which the angle recovery takes care of, :func:`ggik.graph.angles.wrap_to_limits`) exactly when
|theta - m| <= h, the difference taken into (-pi, pi]. From one squared distance and one signed volume of the point set,

    C = A - d^2,   S = 2 V / L      [m^2]     (B cos(theta - theta0) and B sin(theta - theta0) on a realization)
    phi = atan2(S, C) - (m - theta0), taken into (-pi, pi]       (theta - m on a realization)

and the residual of the joint is the hinge

    r = B max(0, |phi| - (h - eps))   [m^2]

(eps = ``DGConfig.limit_margin``, so that a projection that stops on the boundary lies within the limits, not 1e-10 rad
outside them): an area like the distance residuals, B times the angle by which the joint leaves its limits. Its square
joins the cost f(X) and its Jacobian (:func:`limit_rows`: B sign(phi) (C dS - S dC) / (C^2 + S^2)) the same
Gauss-Newton step as the distances and the link volumes (:func:`ggik.nn.distance_geometry.gauss_newton_step`,
``extra``). The hinge is linear in the angle, so its gradient does not vanish inside the forbidden arc (a hinge on
cos(theta - m) >= cos h would be flat at the arc's middle, where a far sample starts).

**Where it is exact, where it only bounds.** On a point set that realizes the arm (its known distances held), C and S
are B times the cosine and sine of theta - theta0, so r = 0 exactly when the joint lies within its limits less eps:
exact for every interval narrower than 2 pi, wherever theta0 lies. The GGIK authors' form bounds the distance alone,
d^2 <= A - B cos h: exact only for limits symmetric about theta0 (or, as the lower bound d^2 >= A + B cos h, about
theta0 + pi). The distance is a function of |theta - theta0| only, so a distance bound admits the interval's mirror
image about theta0 as well: for an interval that is not symmetric about theta0 (or theta0 + pi) it bounds one side
only (the side farther from theta0 is relaxed to the nearer side's mirror), and the signed volume is what removes
that mirror. On the projection's iterates, which miss their distances, phi is a proxy that the distance residuals pull
onto the circle: the claim holds where the projection converges (its whole cost below ``DGConfig.tol``), and
:class:`ggik.ik.dg_refine.DGResult` reports per sample whether the recovered angles lie within the limits. The hinges
are penalties, not a feasible set: a sample whose nearby solutions all lie outside the limits (another branch of the
arm's solutions) settles between the limits and its distances, or wanders, and does not converge; its cost says so,
and ``within_limits`` where it ended. No residual: continuous joints and limits 2 pi wide or wider (no bound); a joint
whose candidate points u or v all lie on its axis (consecutive axes that coincide: the angle is not a function of
these points, B = 0); and for position and position + axis goals the last joint, whose roll moves no point and which
the angle recovery sets to 0 within its limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ggik.graph.frames import AXIS_LENGTH
from ggik.graph.structure import CONSTANT_TOL, GraphStructure

__all__ = ["LimitTerms", "limit_terms", "goal_point", "limit_quantities", "limit_angles", "limit_rows", "limit_slots"]


@dataclass(frozen=True)
class LimitTerms:
    """The limited joints of one graph and goal kind as K residual rows (module docstring); float64 on the CPU.

    Attributes:
        joint: (K,) long, the joint (0-based) of each row.
        nodes: (K, 4) long, (a, b, u, v) = (p_{i-1}, q_{i-1}, a point of the link before, one of the link after),
            indices into the point set extended by the goal point w (index :attr:`num_nodes`: :func:`goal_point`).
        A, B: (K,) [m^2]; theta0: (K,) [rad]: d^2(theta) = A - B cos(theta - theta0).
        middle, half: (K,) [rad], the limits' middle m and half-width h; reach: (K,) [rad], h less the margin.
        num_nodes: N, the graph's nodes.
    """

    joint: torch.Tensor
    nodes: torch.Tensor
    A: torch.Tensor
    B: torch.Tensor
    theta0: torch.Tensor
    middle: torch.Tensor
    half: torch.Tensor
    reach: torch.Tensor
    num_nodes: int


def _p(i: int) -> int:
    """Node index of p_i in ``[p0, x, y, q0, p1, q1, ...]``."""
    return 0 if i == 0 else 2 * i + 2


def _q(i: int) -> int:
    """Node index of q_i."""
    return 3 if i == 0 else 2 * i + 3


def limit_terms(graph: GraphStructure, kind: str, margin: float) -> LimitTerms | None:
    """The limit rows of ``graph`` (the graph that poses goals of ``kind``, :meth:`ggik.RobotGraph.for_goal_kind`) for
    goals of ``kind``, the hinge ``margin`` [rad] inside the limits (module docstring); None when no joint has a row."""
    robot, n, N = graph.robot, graph.n, graph.num_nodes
    F = graph.frames(torch.zeros(n, dtype=torch.float64))  # home frames (n + 1, 4, 4), graph frame
    w_home = F[-1, :3, 3] + AXIS_LENGTH * F[-1, :3, 0]
    X = torch.cat([graph.home.to(torch.float64), w_home[None]])  # (N + 1, 3): the home points and the goal point
    lower, upper, limited = robot.lower.double(), robot.upper.double(), robot.limited
    rows: list[tuple] = []
    for i in range(1, n + 1):
        lo, hi = float(lower[i - 1]), float(upper[i - 1])
        if not bool(limited[i - 1]) or hi - lo >= 2 * math.pi:
            continue
        if i == n and kind != "pose":
            continue  # the roll moves no point; the angle recovery sets it 0, within its limits
        a, b = _p(i - 1), _q(i - 1)
        o, z = X[a], (X[b] - X[a]) / AXIS_LENGTH
        us = [1, 2] if i == 1 else [_p(i - 2), _q(i - 2)]
        vs = [_p(i), _q(i)] + ([N] if i == n else [])
        best: tuple[float, int, int, float, float] | None = None
        for u in us:
            for v in vs:
                ru, rv = X[u] - o, X[v] - o
                au, av = float(ru @ z), float(rv @ z)
                ru, rv = ru - au * z, rv - av * z  # radial parts
                rho_u, rho_v = float(ru.norm()), float(rv.norm())
                if min(rho_u, rho_v) < CONSTANT_TOL:
                    continue
                if best is None or rho_u * rho_v > best[0]:
                    psi = math.atan2(float(z @ torch.linalg.cross(ru, rv)), float(ru @ rv))  # azimuth of v from u
                    best = (rho_u * rho_v, u, v, (au - av) ** 2 + rho_u**2 + rho_v**2, -psi)
        if best is None:
            continue
        prod, u, v, area, zero = best
        rows.append((i - 1, (a, b, u, v), area, 2.0 * prod, zero, 0.5 * (lo + hi), 0.5 * (hi - lo)))
    if not rows:
        return None
    cols = list(zip(*rows))
    f64 = torch.float64
    half_t = torch.tensor(cols[6], dtype=f64)
    return LimitTerms(
        joint=torch.tensor(cols[0]),
        nodes=torch.tensor(cols[1]),
        A=torch.tensor(cols[2], dtype=f64),
        B=torch.tensor(cols[3], dtype=f64),
        theta0=torch.tensor(cols[4], dtype=f64),
        middle=torch.tensor(cols[5], dtype=f64),
        half=half_t,
        reach=(half_t - margin).clamp_min(0.0),
        num_nodes=N,
    )


def goal_point(in_graph: torch.Tensor) -> torch.Tensor:
    """The goal point w = o_n + L x_n (..., 3) [m, graph frame] of goal poses of the last graph frame ``in_graph``
    (..., 4, 4) (``Goals.in_graph``): rigid with the last link, off the last axis by L."""
    return in_graph[..., :3, 3] + AXIS_LENGTH * in_graph[..., :3, 0]


def _tetra(points: torch.Tensor, terms: LimitTerms) -> tuple[torch.Tensor, ...]:
    """The rows' four points a, b, u, v (..., K, 3) of the extended point sets ``points`` (..., N + 1, 3)."""
    idx = terms.nodes.to(points.device)
    return tuple(points[..., idx[:, k], :] for k in range(4))


def limit_quantities(points: torch.Tensor, terms: LimitTerms) -> tuple[torch.Tensor, torch.Tensor]:
    """(d^2 = |u - v|^2 (..., K) [m^2], V = det[b - a, u - a, v - a] (..., K) [m^3]) of the extended point sets
    ``points`` (..., N + 1, 3) [m] (the graph's nodes, then the goal point w)."""
    a, b, u, v = _tetra(points, terms)
    e = u - v
    return (e * e).sum(-1), ((b - a) * torch.linalg.cross(u - a, v - a)).sum(-1)


def limit_angles(points: torch.Tensor, terms: LimitTerms) -> torch.Tensor:
    """The rows' joint angles theta (..., K) [rad] in (theta0 - pi, theta0 + pi] from the extended point sets
    ``points`` (..., N + 1, 3): theta0 + atan2(2 V / L, A - d^2) (module docstring; exact on a realization)."""
    d2, V = limit_quantities(points, terms)
    t = terms.A.to(points) - d2
    return terms.theta0.to(points) + torch.atan2(2.0 * V / AXIS_LENGTH, t)


def limit_rows(points: torch.Tensor, terms: LimitTerms) -> tuple[torch.Tensor, torch.Tensor]:
    """The hinge residuals r = B max(0, |phi| - (h - margin)) (..., K) [m^2] of the extended point sets ``points``
    (..., N + 1, 3) [m] and their Jacobian dr/dx (..., K, N + 1, 3) [m] (zero where r = 0, and at nodes that no row
    holds); phi = atan2(S, C) - delta wrapped into (-pi, pi], C = A - d^2, S = 2 V / L (module docstring)."""
    r, slots = limit_slots(points, terms)
    onehot = torch.nn.functional.one_hot(terms.nodes.to(points.device), terms.num_nodes + 1).to(points.dtype)
    return r, torch.einsum("ksn,...ksc->...knc", onehot, slots)


def limit_slots(points: torch.Tensor, terms: LimitTerms) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`limit_rows` with the Jacobian per row at its four nodes ``terms.nodes`` only: (r (..., K) [m^2],
    dr/dx at (a, b, u, v) (..., K, 4, 3) [m]), for a step that places them itself (:mod:`ggik.ik.dg_step`)."""
    a, b, u, v = _tetra(points, terms)
    e = u - v
    E1, E2, E3 = b - a, u - a, v - a
    gb, gu, gv = torch.linalg.cross(E2, E3), torch.linalg.cross(E3, E1), torch.linalg.cross(E1, E2)
    C = terms.A.to(points) - (e * e).sum(-1)
    S = (2.0 / AXIS_LENGTH) * (E1 * gb).sum(-1)
    delta = terms.middle.to(points) - terms.theta0.to(points)
    phi = torch.remainder(torch.atan2(S, C) - delta + math.pi, 2 * math.pi) - math.pi
    over = phi.abs() - terms.reach.to(points)
    B = terms.B.to(points)
    on = (over > 0).to(points.dtype)
    # dr/dx = B sign(phi) (C dS - S dC) / (C^2 + S^2), dC = -d(d^2)/dx, dS = (2 / L) dV/dx, where the hinge is on
    k = (B * torch.sign(phi) * on / (C * C + S * S).clamp_min(1e-300))[..., None, None]
    cS, sS = (2.0 / AXIS_LENGTH) * C[..., None], S[..., None]
    # per slot (a, b, u, v): C dS - S dC with dV = (-(gb + gu + gv), gb, gu, gv) and d(d^2) = (0, 0, 2 e, -2 e)
    slots = torch.stack([-cS * (gb + gu + gv), cS * gb, cS * gu + 2.0 * sS * e, cS * gv - 2.0 * sS * e], -2)
    return B * over.clamp_min(0.0), slots * k
