"""The global search of path following: dynamic programming over a layered graph of IK candidates.

Layer t holds the candidate configurations of waypoint t (K per layer, padded; invalid ones masked). An edge
joins every candidate of layer t to every candidate of layer t + 1; its *jump* is the largest joint move
between them, each joint measured against its own allowed move (``max_jump`` [rad] for revolute and
continuous joints, ``max_jump_m`` [m] for prismatic ones), so a jump <= 1 is an allowed move. Continuous joints
are compared modulo 2 pi (a wrap is no move). The search runs in two passes:

1. *bottleneck*: the path whose largest jump B* is smallest (the minimax path; exact, O(T K^2));
2. *smooth*: among the paths whose every jump is at most ``max(B*, allow)``, the one with the least sum of
   squared normalised joint moves plus a penalty on configurations near a joint limit (exact, O(T K^2)).

All in numpy float64 on the CPU. :func:`unwrap` then turns the chosen candidates into one continuous
trajectory (continuous joints unwrapped along it).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ggik.kinematics.robot import Robot

__all__ = [
    "SearchResult",
    "JointScale",
    "joint_scale",
    "jumps",
    "wrap_difference",
    "limit_penalty",
    "bottleneck_path",
    "smooth_path",
    "search_path",
    "unwrap",
]

INF = float("inf")


@dataclass
class JointScale:
    """Per-joint units of the search (dof,) numpy arrays: ``step`` the allowed move [rad or m], ``wrap`` whether
    a joint is continuous (compared modulo 2 pi), ``lo``/``hi`` hard limits (+-inf for continuous joints)."""

    step: np.ndarray
    wrap: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


def joint_scale(robot: Robot, max_jump: float, max_jump_m: float) -> JointScale:
    """The :class:`JointScale` of ``robot``: ``max_jump`` [rad] per revolute or continuous joint, ``max_jump_m`` [m]
    per prismatic joint."""
    if not (max_jump > 0 and max_jump_m > 0):
        raise ValueError(f"max_jump and max_jump_m must be positive, got {max_jump} and {max_jump_m}")
    prismatic = np.array([t == "prismatic" for t in robot.joint_types])
    limited = robot.limited.numpy()
    return JointScale(
        step=np.where(prismatic, max_jump_m, max_jump),
        wrap=~limited & ~prismatic,
        lo=np.where(limited, robot.lower.numpy(), -INF),
        hi=np.where(limited, robot.upper.numpy(), INF),
    )


def joint_moves(a: np.ndarray, b: np.ndarray, scale: JointScale) -> np.ndarray:
    """Normalised joint moves (..., dof) from configurations ``a`` to ``b`` (broadcast): (b - a) / step, continuous
    joints wrapped to [-pi, pi] first."""
    d = b - a
    d = np.where(scale.wrap, np.mod(d + np.pi, 2 * np.pi) - np.pi, d)
    return d / scale.step


def wrap_difference(d: torch.Tensor, scale: JointScale) -> torch.Tensor:
    """Joint differences d (..., dof) [rad or m] with those of continuous joints wrapped to [-pi, pi) (torch; the
    numpy counterpart is inside :func:`joint_moves`)."""
    wrap = torch.as_tensor(scale.wrap, device=d.device)
    return torch.where(wrap, torch.remainder(d + torch.pi, 2 * torch.pi) - torch.pi, d) if bool(wrap.any()) else d


def jumps(a: np.ndarray, b: np.ndarray, scale: JointScale) -> np.ndarray:
    """(...,) the largest normalised joint move between configurations ``a`` and ``b`` (..., dof) (1 = allowed)."""
    return np.abs(joint_moves(a, b, scale)).max(-1)


def limit_penalty(q: np.ndarray, scale: JointScale, margin: float) -> np.ndarray:
    """(...,) sum over the limited joints of ``max(0, 1 - distance to the nearer limit / margin)^2`` for q (..., dof)
    [rad or m]: 0 away from the limits, 1 per joint sitting on one."""
    dist = np.minimum(q - scale.lo, scale.hi - q)
    return (np.clip(1.0 - dist / margin, 0.0, None) ** 2).sum(-1)


def bottleneck_path(edges: list[np.ndarray], start: np.ndarray) -> tuple[np.ndarray, float]:
    """The path through layers 0..T-1 minimising its largest cost: ``start`` (K_0,) costs of entering layer 0
    (inf = forbidden node), ``edges[t]`` (K_t, K_{t+1}) costs from layer t to t + 1 (inf = no edge).
    Returns (node index per layer (T,), the path's largest cost; inf when every path is forbidden)."""
    best = np.asarray(start, dtype=np.float64)
    back = []
    for E in edges:
        through = np.maximum(best[:, None], E)  # (K_t, K_{t+1})
        arg = through.argmin(0)
        back.append(arg)
        best = through[arg, np.arange(E.shape[1])]
    return _trace(back, best), float(best.min())


def smooth_path(edges: list[np.ndarray], nodes: list[np.ndarray], start: np.ndarray) -> tuple[np.ndarray, float]:
    """The path minimising ``start[i_0] + sum_t nodes[t][i_t] + sum_t edges[t][i_t, i_{t+1}]`` (inf = forbidden).
    Returns (node index per layer (T,), its total cost; inf when every path is forbidden)."""
    best = np.asarray(start, dtype=np.float64) + nodes[0]
    back = []
    for t, E in enumerate(edges):
        through = best[:, None] + E
        arg = through.argmin(0)
        back.append(arg)
        best = through[arg, np.arange(E.shape[1])] + nodes[t + 1]
    return _trace(back, best), float(best.min())


def _trace(back: list[np.ndarray], last: np.ndarray) -> np.ndarray:
    path = [int(last.argmin())]
    for arg in reversed(back):
        path.append(int(arg[path[-1]]))
    return np.array(path[::-1], dtype=np.int64)


@dataclass
class SearchResult:
    """The chosen candidate per waypoint.

    Attributes:
        index: (T,) candidate index per waypoint.
        q: (T, dof) those candidates, continuous joints unwrapped along the path (:func:`unwrap`) [rad or m].
        bottleneck: the path's largest normalised jump (1 = the allowed move; inf: no path through valid candidates).
        cost: the smooth pass's total cost.
    """

    index: np.ndarray
    q: np.ndarray
    bottleneck: float
    cost: float


def search_path(
    q: torch.Tensor,
    valid: torch.Tensor,
    scale: JointScale,
    allow: float = 0.75,
    limit_margin: float = 0.1,
    limit_weight: float = 1.0,
    q_start: torch.Tensor | None = None,
) -> SearchResult:
    """The two-pass search of the module docstring over candidates ``q`` (T, K, dof) with ``valid`` (T, K) bool.

    ``allow``: the smooth pass may use any jump up to ``max(B*, allow)``; ``limit_margin`` [rad or m] and
    ``limit_weight``: the node penalty ``limit_weight * limit_penalty``; ``q_start`` (dof,): the configuration the
    robot starts from (the move onto waypoint 0 counts as a jump), or None. Raises ValueError for bad shapes.
    """
    qn = np.asarray(q.detach().cpu().numpy(), dtype=np.float64)
    ok = np.asarray(valid.detach().cpu().numpy(), dtype=bool)
    if qn.ndim != 3 or ok.shape != qn.shape[:2] or qn.shape[-1] != scale.step.shape[0] or 0 in qn.shape[:2]:
        raise ValueError(
            f"search_path takes q (T, K, dof) and valid (T, K) with T, K >= 1, got {qn.shape} and {ok.shape}"
        )
    T = qn.shape[0]
    if q_start is None:
        start_jump = np.zeros(qn.shape[1])
        start_move = np.zeros(qn.shape[1])
    else:
        qs = np.asarray(torch.as_tensor(q_start).detach().cpu().numpy(), dtype=np.float64)
        start_jump = jumps(qs, qn[0], scale)
        start_move = (joint_moves(qs, qn[0], scale) ** 2).sum(-1)
    forbid = np.where(ok, 0.0, INF)
    start_jump = start_jump + forbid[0]
    layers, squares = [], []
    for t in range(T - 1):
        m = joint_moves(qn[t][:, None], qn[t + 1][None], scale)  # (K, K, dof)
        layers.append(np.abs(m).max(-1) + forbid[t][:, None] + forbid[t + 1][None])
        squares.append((m * m).sum(-1))
    _, B = bottleneck_path(layers, start_jump)
    if not np.isfinite(B):
        return SearchResult(index=np.zeros(T, dtype=np.int64), q=qn[:, 0], bottleneck=INF, cost=INF)
    cap = max(B, allow) * (1 + 1e-12)
    moves = [np.where(jump <= cap, sq, INF) for jump, sq in zip(layers, squares)]
    nodes = [limit_weight * limit_penalty(qn[t], scale, limit_margin) + forbid[t] for t in range(T)]
    index, cost = smooth_path(moves, nodes, np.where(start_jump <= cap, start_move, INF))
    chosen = qn[np.arange(T), index]
    return SearchResult(index=index, q=unwrap(chosen, scale, None if q_start is None else qs), bottleneck=B, cost=cost)


def unwrap(q: np.ndarray, scale: JointScale, q_start: np.ndarray | None = None) -> np.ndarray:
    """(T, dof) trajectory with each continuous joint moved by multiples of 2 pi so that every step (and the
    step from ``q_start``, if given) is the wrapped one, in [-pi, pi]; other joints unchanged."""
    q = np.array(q, dtype=np.float64, copy=True)
    prev = q[0] if q_start is None else q_start
    for t in range(q.shape[0]):
        d = q[t] - prev
        q[t] = np.where(scale.wrap, prev + np.mod(d + np.pi, 2 * np.pi) - np.pi, q[t])
        prev = q[t]
    return q
