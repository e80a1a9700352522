"""Distance-geometric refinement: project sampled point sets onto the problem's known distances.

A GGIK sample is a point set X (N, 3) in the graph frame. The problem fixes the anchors (p0, x, y, q0 of
the base, p_n, q_n of the goal) and the lengths d_ij of the known edges (robot structure and goal). The
sample is a valid solution exactly when every known edge has its length; a raw sample misses by
centimetres but lies mostly in the right basin. This refinement moves the free nodes (anchors stay) to
minimise

    f(X) = 1/2 sum_{known {i, j}} r_ij^2,   r_ij = |x_i - x_j|^2 - d_ij^2   [m^2]

with damped Gauss-Newton steps on all samples at once (:func:`ggik.ik.dg_step.sparse_step`: per sample the normal
equations of the 3M free coordinates, M free nodes, built from the known edges and solved by Cholesky, in chunks of
64 samples; the step of :func:`ggik.nn.distance_geometry.gauss_newton_step`, which the model's decoder follows, to
rounding) with a relative damping that shrinks 3x per step
(1e-3 at first); every step is taken and the last iterate returned (f need not fall monotonically on the way into
a solution's basin), except a step that leaves a sample's cost non-finite (a nearly singular system at a vanishing
damping), which that sample skips. ``DGConfig.damping_decay = 1`` gives the fixed-damping variant.
Joint angles are then recovered from the projected point sets as from raw samples
(:meth:`ggik.RobotGraph.joint_angles`). This is the local solver the GGIK authors seed with their samples, in
point-set space instead of joint space: it needs no Jacobian of the kinematics and keeps the sample's configuration
(elbow, wrist) while repairing it.

Handedness (``DGConfig.volumes``, on by default): distances do not tell an arm from its mirror images. Each *skew*
link (two consecutive axes that neither meet nor are parallel, :mod:`ggik.graph.handedness`) has a signed volume
``V_l`` [m^3], a constant of the arm whose sign the distances leave free: an arm with k skew links has 2^k
distance-equal realizations of every configuration, and only one is the arm (the angles recovered from another miss
the goal). The projection therefore also minimises

    1/2 sum_{skew l} w (V_l(X) - V_l)^2,   w = 1 / L^2   [m^4]

(L the axis length, :data:`ggik.graph.frames.AXIS_LENGTH`): the weight makes a volume residual ``sqrt(w) r_l``
[m^3 / m = m^2] an area like a distance residual ``r_ij`` [m^2]; f(X) then holds this term too, and the stopping
test (``DGConfig.tol``) and the reported cost count both alike. Without it (``volumes=False``) a start converges
to one of the 2^k images by its basin, and about 1 / 2^k of the converged projections reach the goal. The result
says per sample whether the projected point set has the arm's handedness (``DGResult.handed``,
:meth:`ggik.RobotGraph.handedness`): one that has not is a mirror image, reported, never silently taken for the arm.

Joint limits (``DGConfig.limits``, on by default): each joint with limits narrower than 2 pi adds one hinge residual,
B max(0, |phi| - h) [m^2], phi the joint's angle from the middle of its limits measured by one squared distance and one
signed volume of points of the two links it joins, h the limits' half-width (:mod:`ggik.ik.dg_limits`, which derives
it and says where it is exact); f(X) holds their squares too, so a sample outside its limits is never done. The
hinges are penalties of a local method: they cannot take a sample whose nearby solutions lie outside the limits to
another branch of the arm's solutions. Axis reversal does (``DGConfig.flips``, 3 passes):

1. the first pass fits distances and volumes alone: most samples converge to their nearby solution, within the
   limits or not;
2. each further pass takes the samples that the last one left outside their limits (or not converged), reverses the
   axis of every joint outside its limits (q_{i-1} reflected through p_{i-1}, :func:`reverse_axes`: the joint turns
   the other way, a realization near the same pose on the arm's other branch, where theta is near -theta and its
   neighbours have turned half a turn) and projects again with the hinges (they join after ``DGConfig.limits_after``
   steps, 5: the first steps find the new basin); each sample keeps the pass of lowest cost.

``flips = 0`` gives one pass with the hinges. A converged projection is within the limits, and the result says per
sample whether the recovered angles are (``DGResult.within_limits``). ``benchmarks/dg_budget`` measures both.

Budget: at most ``DGConfig.iterations`` steps (30, ``benchmarks/dg_budget``) per pass; a sample whose cost f is below
``DGConfig.tol`` is done and leaves the batch: its points no longer change, and it costs nothing more.

Obstacles (``clearance``): the graph form of obstacles of the GGIK authors' distance-geometry work, minimum distances
between the chain's points and the obstacles. After every Gauss-Newton step each free joint point p_i closer to an
obstacle than the collision model's largest link radius plus the margin is pushed out along the distance's gradient
(:func:`push_out`), a projection onto the obstacle-free side that the next step reconciles with the known distances
(alternating projections). Only the joint points are constrained: the links between them are not, so the
recovered angles are checked (and refined by LM with clearance for "dg+lm") as every other candidate is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch

from ggik.graph import Goals, PartialGraph, RobotGraph
from ggik.graph.frames import AXIS_LENGTH
from ggik.graph.goal_kinds import goal_errors
from ggik.graph.handedness import signed_volumes
from ggik.ik.dg_limits import LimitTerms, goal_point, limit_slots, limit_terms
from ggik.ik.dg_step import StepStructure, chunked_cost, chunked_step, step_structure

if TYPE_CHECKING:
    from ggik.collision import Clearance

__all__ = [
    "DGConfig",
    "DGResult",
    "project_point_sets",
    "dg_refine",
    "distance_cost",
    "volume_terms",
    "push_out",
    "reverse_axes",
]


@dataclass
class DGConfig:
    """Budget of the distance-geometric projection."""

    #: Gauss-Newton steps at most (each one batched solve of 3M x 3M per sample not yet done), for model samples
    #: and random starts alike: the fewest of 5-30 steps that converge at least 0.95 of what 30 converge on every arm
    #: of the handedness study, from the shipped model's samples and from random starts (``benchmarks/dg_budget``:
    #: 30, where the slowest arms were still converging at 25)
    iterations: int = 30
    damping: float = 1e-3  #: damping of the first step, relative to the mean diagonal of J^T J
    damping_decay: float = 3.0  #: the damping is divided by this after every step
    tol: float = 1e-20  #: a sample stops when f(X) is below this [m^4] (distance errors ~1e-10 m)
    #: the skew links' signed volumes join the residuals, weight 1 / L^2 (module docstring); False: distances only
    volumes: bool = True
    #: the joint limits join the residuals as hinges (:mod:`ggik.ik.dg_limits`; rows only for the joints with limits
    #: narrower than 2 pi, so nothing changes for a robot without them); False: no limits
    limits: bool = True
    limit_margin: float = 1e-6  #: [rad] the hinges hold each joint this far inside its limits
    #: the hinges join the steps after this many (no later than a third of the budget): the first steps find the
    #: sample's basin on distances and volumes, then the limits move it within them (module docstring)
    limits_after: int = 5
    #: the step's normal equations through ``torch.compile`` (:mod:`ggik.ik.dg_step`: about 3x faster per step, but
    #: each robot and goal kind compiles first, seconds; for long runs of one arm)
    compiled: bool = False
    #: passes after the first, with the limits, for the samples the first left outside them or not done: each reverses
    #: the axes of the joints outside their limits (:func:`reverse_axes`) and projects again; each sample keeps its best
    #: pass. The first pass then fits distances and volumes alone (module docstring); 0: one pass with the hinges.
    #: 3: the fewest of 0-4 whose share of samples exact within the limits is at least 0.95 of 4's on every arm of the
    #: handedness study from the shipped model's samples (``benchmarks/dg_budget/flips.py``; from random starts: 4)
    flips: int = 3
    #: [m^4] a sample within its limits whose cost is below this has converged (if slowly, towards ``tol``) and takes
    #: no further pass (the handedness study's definition, ``benchmarks/handedness``)
    converged: float = 1e-8

    def __post_init__(self) -> None:
        checks = {
            "iterations": self.iterations >= 0,
            "damping": self.damping > 0,
            "damping_decay": self.damping_decay >= 1,
            "tol": self.tol >= 0,
            "limit_margin": self.limit_margin >= 0,
            "limits_after": self.limits_after >= 0,
            "flips": self.flips >= 0,
            "converged": self.converged >= 0,
        }
        for name, ok in checks.items():
            if not ok:
                need = {"damping": "> 0", "damping_decay": ">= 1"}.get(name, ">= 0")
                raise ValueError(f"DGConfig.{name} must be {need}, got {getattr(self, name)!r}")


def _edge_mask(problem: PartialGraph) -> torch.Tensor:
    """(N, N) bool, symmetric: the problem's known edges with at least one free node (edges between anchors are
    constant). From the problem, not the robot's graph: a position goal leaves q_n free and its base edges unknown."""
    free = ~problem.anchor_mask
    return problem.known_mask & (free[:, None] | free[None, :])


def distance_cost(
    points: torch.Tensor,
    known_sq: torch.Tensor,
    mask: torch.Tensor,
    volumes: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> torch.Tensor:
    """f(X) = 1/4 sum over ordered known pairs of r_ij^2 (= 1/2 over edges) [m^4], points (..., N, 3) -> (...).

    ``volumes``: (V (..., L) [m^3], w (..., L) [1/m^2]), broadcasting against ``points``' batch: f gains
    ``1/2 sum_l w_l (V_l(X) - V_l)^2`` over the first L links (:func:`ggik.graph.handedness.signed_volumes`), the
    cost :func:`ggik.nn.distance_geometry.gauss_newton_step` minimises with the same argument."""
    diff = points[..., :, None, :] - points[..., None, :, :]
    r = ((diff**2).sum(-1) - known_sq) * mask
    cost = 0.25 * (r**2).sum((-1, -2))
    if volumes is not None:
        V, w = volumes
        cost = cost + 0.5 * (w * (signed_volumes(points, V.shape[-1]) - V) ** 2).sum(-1)
    return cost


def volume_terms(graph: RobotGraph, weighted: bool) -> tuple[torch.Tensor, torch.Tensor] | None:
    """(V (n,) [m^3], w (n,) [1/m^2]) float64: ``graph``'s link volumes and the weight 1 / L^2 on its skew links, 0 on
    the others (module docstring); None when not ``weighted`` or when the arm has no skew link (the same cost and
    steps as without volumes, for less work)."""
    skew = graph.skew_links
    if not weighted or not bool(skew.any()):
        return None
    return graph.link_volumes.to(torch.float64), skew.to(torch.float64) / AXIS_LENGTH**2


@torch.no_grad()
def push_out(graph: RobotGraph, X: torch.Tensor, clearance: Clearance) -> torch.Tensor:
    """Point sets X (..., N, 3) [m, graph frame] with every free joint point p_i moved out to ``radius + margin`` from
    each obstacle of ``clearance`` it is closer to (radius: the collision model's largest link radius; one pass over
    the obstacles, in order)."""
    from ggik.collision import point_box, segment_segment

    T = torch.linalg.inv(graph.T_base_graph.to(X))  # base -> graph frame
    R, t = T[:3, :3], T[:3, 3]
    reach = float(clearance.model.radius.max()) + clearance.config.margin
    nodes = ((graph.node_kind == 0) & ~graph.anchor_mask).nonzero()[:, 0]
    x = X[..., nodes, :]
    for a, b, r in zip(clearance.cap_a.to(X) @ R.T + t, clearance.cap_b.to(X) @ R.T + t, clearance.cap_r.to(X)):
        d, _, _, n = segment_segment(x, x, a, b)
        x = x + ((reach + r - d).clamp(min=0))[..., None] * n
    for c, Rb, h in zip(clearance.box_c.to(X) @ R.T + t, R @ clearance.box_R.to(X), clearance.box_h.to(X)):
        d, n = point_box(x, c, Rb, h)
        x = x + ((reach - d).clamp(min=0))[..., None] * n
    X = X.clone()
    X[..., nodes, :] = x
    return X


def reverse_axes(x: torch.Tensor, goal: torch.Tensor, limits: LimitTerms, anchors: torch.Tensor) -> None:
    """In place: in point sets ``x`` (B, N, 3) [m] with goal points ``goal`` (B, 1, 3), the axis of every joint
    outside its limits (its hinge row on, :func:`ggik.ik.dg_limits.limit_slots`) reversed, q_{i-1} reflected through
    p_{i-1}; not the joints whose q_{i-1} is an anchor (``anchors`` (N,) bool: the first joint's base axis). The joint
    then turns the other way: a realization with theta outside its limits becomes one with the neighbouring joints
    turned half a turn and the joint near -theta (exactly so where the neighbouring axes meet it, as in an
    spherical-wrist or SRS elbow), the other branch of the arm's solutions, which the next projection completes."""
    r, _ = limit_slots(torch.cat([x, goal], 1), limits)
    a, b = limits.nodes[:, 0], limits.nodes[:, 1]
    for k in (~anchors[b]).nonzero()[:, 0].tolist():
        out = r[:, k] > 0
        x[out, b[k]] = 2.0 * x[out, a[k]] - x[out, b[k]]


@dataclass
class _Run:
    """What the passes of one projection share: the graph, goal points (B, 1, 3), squared lengths (B, E), budget
    and obstacles."""

    graph: RobotGraph
    goal: torch.Tensor
    d2: torch.Tensor
    cfg: DGConfig
    clearance: Clearance | None

    def steps(self, flat: torch.Tensor, ids: torch.Tensor, st: StepStructure, first_limit_step: int) -> torch.Tensor:
        """Up to ``cfg.iterations`` damped Gauss-Newton steps of the point sets ``flat`` (B', N, 3), in place, the
        samples ``ids`` (B',) of the run (their goal points and lengths), each sample until its cost is below
        ``cfg.tol``, the limit rows of ``st`` from step ``first_limit_step``. Returns their final cost (B',) [m^4]
        under ``st``."""
        cfg, goal, d2 = self.cfg, self.goal[ids], self.d2[ids]
        cost = chunked_cost(flat, goal, d2, st, cfg.compiled)
        every = torch.arange(flat.shape[0])
        for k in range(cfg.iterations):
            rows = (cost > cfg.tol).nonzero()[:, 0]  # the samples not done: they alone take the step
            if rows.numel() == 0:
                break
            if rows.numel() == flat.shape[0]:
                rows = every
            damping = cfg.damping * cfg.damping_decay**-k
            x, g, d = flat[rows], goal[rows], d2[rows]
            with_limits = st.limits is not None and k >= first_limit_step
            before = x.clone()
            x[:, st.cols] += chunked_step(x, g, d, st, damping, with_limits, cfg.compiled)
            new = chunked_cost(x, g, d, st, cfg.compiled)
            lost = ~torch.isfinite(new)  # a nearly singular step at a vanishing damping sent the sample off: stay put
            x[lost], new[lost] = before[lost], cost[rows][lost]
            flat[rows], cost[rows] = x, new
            if self.clearance is not None and k < cfg.iterations - 1:  # the last step stays on the known distances
                flat.copy_(push_out(self.graph, flat, self.clearance))  # every sample: a pushed point is not done
                cost = chunked_cost(flat, goal, d2, st, cfg.compiled)
        return cost


def project_point_sets(
    graph: RobotGraph,
    points: torch.Tensor,
    goals: torch.Tensor | Goals,
    cfg: DGConfig | None = None,
    clearance: Clearance | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Move the free nodes of point sets ``points`` (P, S, N, 3) [m, graph frame] onto the known distances of the
    problems ``goals`` (P goals, (P, 4, 4) in the base-link frame or :class:`Goals`); anchors are set to their
    known positions; with ``clearance``, each step is followed by :func:`push_out`; with ``cfg.volumes`` the skew links'
    signed volumes are residuals too, with ``cfg.limits`` the joint limits' hinges (module docstring). A sample whose
    cost is below ``cfg.tol`` is done: it leaves the batch and keeps its points. Returns (projected points
    (P, S, N, 3) float64, final cost f (P, S) [m^4], the volume and limit terms included when on)."""
    cfg = cfg or DGConfig()
    if points.ndim != 4 or points.shape[-2:] != (graph.num_nodes, 3):
        raise ValueError(f"points must have shape (P, S, {graph.num_nodes}, 3), got {tuple(points.shape)}")
    goals = graph.goals(goals)
    if goals.shape != points.shape[:1]:
        raise ValueError(f"{goals.shape[0] if len(goals.shape) else 0} goals for {points.shape[0]} groups of samples")
    problem = graph.partial(goals.to(torch.float64))
    kind_graph = graph.for_goal_kind(goals.kind)
    terms = volume_terms(kind_graph, cfg.volumes)
    limits = limit_terms(kind_graph, goals.kind, cfg.limit_margin) if cfg.limits else None
    X = points.to(torch.float64).clone()
    anchors = problem.anchor_mask
    X[:, :, anchors] = problem.known_positions[:, None, anchors]
    P, S, N, _ = X.shape
    st = step_structure(_edge_mask(problem), ~anchors, terms, limits)
    goal = goal_point(problem.goal)[:, None, None].expand(P, S, 1, 3).reshape(P * S, 1, 3)  # the limit rows' node N
    ends = st.ends
    d2 = (problem.known_distances[:, ends[:, 0], ends[:, 1]] ** 2)[:, None].expand(P, S, -1).reshape(P * S, -1)
    flat = X.reshape(P * S, N, 3)
    run = _Run(graph, goal, d2, cfg, clearance)
    first_limit_step = min(cfg.limits_after, cfg.iterations // 3)
    if limits is None or cfg.flips == 0:
        cost = run.steps(flat, torch.arange(P * S), st, first_limit_step)
    else:  # distances and volumes first, then the hinges from the samples with the axes outside their limits reversed
        run.steps(flat, torch.arange(P * S), step_structure(_edge_mask(problem), ~anchors, terms, None), 0)
        cost = chunked_cost(flat, goal, d2, st, cfg.compiled)
        last = flat.clone()  # each sample's last pass (the next pass reverses its axes)
        for _ in range(cfg.flips):
            outside = (limit_slots(torch.cat([last, goal], 1), limits)[0] > 0).any(1)
            redo = ((cost > cfg.tol) & (outside | (cost > cfg.converged))).nonzero()[:, 0]
            if redo.numel() == 0:
                break
            x = last[redo]
            reverse_axes(x, goal[redo], limits, anchors)
            c = run.steps(x, redo, st, first_limit_step)
            last[redo] = x
            better = c < cost[redo]  # each sample keeps its best pass
            flat[redo[better]], cost[redo[better]] = x[better], c[better]
    X = flat.reshape(P, S, N, 3)
    cost = cost.reshape(P, S)
    return X, cost


@dataclass
class DGResult:
    """Outcome of :func:`dg_refine` for P goals x S samples.

    Attributes:
        q: (P, S, dof) joint angles recovered from the projected point sets [rad].
        pos_err: (P, S) EE position error [m]; rot_err: (P, S) rotation error [rad] (FK, float64).
        cost: (P, S) final distance cost f [m^4]; points: (P, S, N, 3) projected point sets [m, graph frame].
        handed: (P, S) bool, the projected point set has the arm's handedness (:meth:`ggik.RobotGraph.handedness`):
            False marks a mirror image of the arm in some skew link, whose angles miss the goal however small its cost.
        within_limits: (P, S) bool, the recovered angles lie within the joint limits (:meth:`ggik.Robot.within_limits`;
            with ``DGConfig.limits`` a converged projection does, :mod:`ggik.ik.dg_limits`).
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    cost: torch.Tensor
    points: torch.Tensor
    handed: torch.Tensor
    within_limits: torch.Tensor


def dg_refine(
    graph: RobotGraph,
    points: torch.Tensor,
    goals: torch.Tensor | Goals,
    cfg: DGConfig | None = None,
    goals_per_pass: int = 16,
    clearance: Clearance | None = None,
) -> DGResult:
    """:func:`project_point_sets` (with ``clearance``: its obstacle projection), then joint angles and their FK errors,
    in passes of ``goals_per_pass`` goals (the (S, N, N, 3, 3) blocks of a pass stay cache-sized), and each projected
    point set's handedness and whether its angles lie within the limits."""
    goals = graph.goals(goals).to(torch.float64, "cpu")
    parts = []
    for start in range(0, points.shape[0], goals_per_pass):
        g = goals[start : start + goals_per_pass]
        X, cost = project_point_sets(graph, points[start : start + goals_per_pass].cpu(), g, cfg, clearance)
        parts.append((graph.joint_angles(X, g[:, None]), cost, X))
    q = torch.cat([p[0] for p in parts])
    pos, rot = goal_errors(graph.robot.fk(q), goals.in_base[:, None], goals.kind, graph.tool_axis)
    X = torch.cat([p[2] for p in parts])
    handed = graph.for_goal_kind(goals.kind).handedness(X)
    cost = torch.cat([p[1] for p in parts])
    inside = graph.robot.within_limits(q)
    return DGResult(q=q, pos_err=pos, rot_err=rot, cost=cost, points=X, handed=handed, within_limits=inside)
