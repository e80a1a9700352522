"""Figures of solutions, errors and generalisation (matplotlib, optional: ``pip install 'ggik[plot]'``).

Every function renders with matplotlib's Agg canvas on a standalone :class:`matplotlib.figure.Figure`
(no pyplot, no global backend switch, nothing left open), writes the PNG atomically with
:func:`ggik.fileio.atomic_write` (a file is either the whole new image or untouched) and returns the
path. matplotlib is imported inside the functions, so ``import ggik`` never needs it.

* :func:`plot_solutions`: 3D stick figures of several IK solutions of one goal (the GGIK paper's Fig. 3).
* :func:`plot_solution_grid`: several such panels in one figure (``ggik demo``).
* :func:`plot_error_histograms`: position and rotation error histograms on log axes, with the tolerances.
* :func:`plot_generalisation`: raw and refined success against the distance of a robot from the training set.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import torch

from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot import Robot

__all__ = [
    "plot_solutions",
    "plot_solution_grid",
    "plot_error_histograms",
    "plot_generalisation",
    "new_figure",
    "save_figure",
    "line_colors",
]

_DPI = 120


def new_figure(figsize: tuple[float, float]):
    """A standalone Agg figure: (fig, canvas)."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise GGIKError("plotting needs matplotlib: pip install 'ggik[plot]'") from None
    fig = Figure(figsize=figsize, dpi=_DPI)
    canvas = FigureCanvasAgg(fig)
    return fig, canvas


def save_figure(fig, canvas, path: str | Path) -> Path:
    """Render ``fig`` on its Agg canvas and write it to ``path`` as PNG, atomically."""
    path = Path(path)
    if path.suffix.lower() != ".png":
        raise ValueError(f"plots are written as PNG: the path must end in .png, got {str(path)!r}")
    return atomic_write(path, lambda f: canvas.print_png(f))


def _as_numpy(x, name: str, ndim: int) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().to(torch.float64).numpy()
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {a.shape}")
    return a


# ---------------------------------------------------------------------------------------------- solutions
def _polyline(points: np.ndarray, eps: float = 1e-9) -> np.ndarray:
    """(L, 3) link origins without consecutive duplicates (fixed joints without offset)."""
    keep = [0] + [k for k in range(1, len(points)) if np.linalg.norm(points[k] - points[k - 1]) > eps]
    return points[keep]


def plot_solutions(robot: Robot, q, T_goal, path: str | Path, title: str | None = None) -> Path:
    """3D stick figures of ``S`` solutions of one goal, in the robot's base-link frame.

    Args:
        robot: the chain.
        q: (S, dof) joint values [rad] (a single (dof,) configuration is taken as S = 1).
        T_goal: (4, 4) goal pose of the end effector in the base-link frame [m]; drawn as three short
            axes (x red, y green, z blue).
        path: output ``.png``.
        title: figure title (default: robot name and S).
    Each solution is the polyline through its link origins (:meth:`Robot.link_poses`, consecutive
    duplicates dropped), drawn semi-transparent; the base is a black square. Axes are scaled equally.
    Returns the path written.
    """
    q, T = _check_solutions(robot, q, T_goal)
    fig, canvas = new_figure((6.4, 6.0))
    _draw_solutions(fig.add_subplot(projection="3d"), robot, q, T, title)
    return save_figure(fig, canvas, path)


def plot_solution_grid(
    panels: Sequence[tuple], path: str | Path, ncols: int | None = None, title: str | None = None
) -> Path:
    """Several :func:`plot_solutions` panels in one figure (e.g. one column per robot, raw and refined rows).

    Args:
        panels: ``(robot, q, T_goal, panel_title)`` tuples, as the arguments of :func:`plot_solutions`,
            laid out row by row.
        path: output ``.png``.
        ncols: panels per row (default: all in one row).
        title: figure title (optional).
    Returns the path written.
    """
    panels = list(panels)
    if not panels:
        raise ValueError("plot_solution_grid needs at least one panel")
    checked = []
    for k, panel in enumerate(panels):
        if len(panel) != 4:
            raise ValueError(f"panel {k} must be (robot, q, T_goal, title), got {len(panel)} items")
        robot, q, T_goal, panel_title = panel
        checked.append((robot, *_check_solutions(robot, q, T_goal), panel_title))
    ncols = len(checked) if ncols is None else int(ncols)
    if ncols < 1:
        raise ValueError(f"ncols must be >= 1, got {ncols}")
    nrows = math.ceil(len(checked) / ncols)
    fig, canvas = new_figure((4.4 * ncols, 4.2 * nrows + (0.3 if title else 0.0)))
    for k, (robot, q, T, panel_title) in enumerate(checked):
        _draw_solutions(fig.add_subplot(nrows, ncols, k + 1, projection="3d"), robot, q, T, panel_title, small=True)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return save_figure(fig, canvas, path)


def _check_solutions(robot: Robot, q, T_goal) -> tuple[torch.Tensor, np.ndarray]:
    """(q (S, dof) float64 tensor, T (4, 4) numpy) after the checks of :func:`plot_solutions`."""
    if not isinstance(robot, Robot):
        raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
    q = torch.as_tensor(q, dtype=torch.float64)
    if q.ndim == 1:
        q = q[None]
    if q.ndim != 2 or q.shape[0] == 0:
        raise ValueError(f"q must have shape (S, {robot.dof}) with S >= 1, got {tuple(q.shape)}")
    robot.check_q(q)
    T = _as_numpy(T_goal, "T_goal", 2)
    if T.shape != (4, 4) or not np.isfinite(T).all():
        raise ValueError(f"T_goal must be a finite (4, 4) pose, got shape {T.shape}")
    return q, T


def _draw_solutions(ax, robot: Robot, q: torch.Tensor, T: np.ndarray, title: str | None, small: bool = False) -> None:
    """Draw checked solutions ``q`` (S, dof) and the goal ``T`` on a 3D axes."""
    import mpl_toolkits.mplot3d  # noqa: F401  (registers the 3d projection on older matplotlib)

    origins = robot.link_poses(q)[..., :3, 3].numpy()  # (S, L, 3) [m]
    lines = [_polyline(o) for o in origins]
    S = len(lines)
    alpha = float(np.clip(3.0 / math.sqrt(S), 0.15, 0.9))
    colors = line_colors(S)
    for k, pts in enumerate(lines):
        ax.plot(pts[:, 0], pts[:, 1], pts[:, 2], "-", color=colors[k], alpha=alpha, lw=1.6)
        ax.scatter(pts[1:-1, 0], pts[1:-1, 1], pts[1:-1, 2], color=colors[k], alpha=alpha, s=6, depthshade=False)
    ax.scatter([0], [0], [0], marker="s", color="k", s=40, label=f"base ({robot.base_link})", depthshade=False)

    everything = np.concatenate([np.concatenate(lines), T[None, :3, 3], np.zeros((1, 3))])
    lo, hi = everything.min(0), everything.max(0)
    centre, half = (lo + hi) / 2, max(float((hi - lo).max()) / 2, 1e-3) * 1.1
    axis_len = 0.25 * half
    p = T[:3, 3]
    for i, c in enumerate(("tab:red", "tab:green", "tab:blue")):
        e = p + axis_len * T[:3, i]
        ax.plot([p[0], e[0]], [p[1], e[1]], [p[2], e[2]], color=c, lw=2.5)
    ax.scatter([p[0]], [p[1]], [p[2]], marker="*", color="k", s=60, label="goal", depthshade=False)

    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.set_zlabel("z [m]")
    ax.legend(loc="upper left", fontsize=7 if small else 8)
    ax.set_title(
        title or f"{robot.name}: {S} solution{'s' if S != 1 else ''} for one goal", fontsize=9 if small else None
    )


def line_colors(n: int, qualitative: bool = False) -> list:
    """n colours: a viridis ramp (solutions), or distinct tab10/tab20 colours (labelled curves)."""
    from matplotlib import colormaps

    if qualitative:
        cmap = colormaps["tab10" if n <= 10 else "tab20"]
        return [cmap(k % cmap.N) for k in range(n)]
    cmap = colormaps["viridis"]
    return [cmap(0.5)] if n == 1 else [cmap(0.05 + 0.85 * k / (n - 1)) for k in range(n)]


# ---------------------------------------------------------------------------------------------- errors
def _log_hist(ax, values: np.ndarray, tol: float, unit: str, what: str) -> None:
    finite = values[np.isfinite(values)]
    floor = 1e-9
    v = np.maximum(finite, floor)
    lo = min(float(v.min()), tol) if len(v) else tol
    hi = max(float(v.max()), tol) if len(v) else tol
    lo, hi = lo / 1.5, hi * 1.5
    bins = np.logspace(math.log10(lo), math.log10(hi), 40)
    ax.hist(v, bins=bins, color="tab:blue", alpha=0.8)
    ax.set_xscale("log")
    within = float((finite < tol).mean()) if len(finite) else float("nan")
    ax.axvline(tol, color="tab:red", ls="--", label=f"tolerance {tol:g} {unit}: {100 * within:.1f} % below")
    ax.set_xlabel(f"{what} [{unit}]")
    ax.set_ylabel("count")
    dropped = len(values) - len(finite)
    if dropped:
        ax.text(0.98, 0.95, f"{dropped} non-finite left out", transform=ax.transAxes, ha="right", va="top", fontsize=8)
    ax.legend(fontsize=8)


def plot_error_histograms(
    pos_err, rot_err, path: str | Path, title: str | None = None, pos_tol: float = 0.01, rot_tol_deg: float = 1.0
) -> Path:
    """Two histograms on log-x axes: position error [mm] and rotation error [degrees].

    Args:
        pos_err: (N,) position errors [m]; rot_err: (N,) rotation errors [rad] (tensors or arrays;
            zeros are drawn at 1e-9, NaN/inf are left out and counted on the panel).
        path: output ``.png``.
        pos_tol: position tolerance [m] (default 1 cm), drawn as a dashed line in mm with the fraction below it.
        rot_tol_deg: rotation tolerance [degrees] (default 1), drawn the same way.
    Returns the path written.
    """
    pos = _as_numpy(pos_err, "pos_err", 1)
    rot = _as_numpy(rot_err, "rot_err", 1)
    if len(pos) == 0 or len(pos) != len(rot):
        raise ValueError(f"pos_err and rot_err must be non-empty and of equal length, got {len(pos)} and {len(rot)}")
    if not (pos_tol > 0 and rot_tol_deg > 0):
        raise ValueError(f"tolerances must be positive, got pos_tol={pos_tol}, rot_tol_deg={rot_tol_deg}")
    fig, canvas = new_figure((10.0, 4.0))
    a1, a2 = fig.subplots(1, 2)
    _log_hist(a1, 1e3 * pos, 1e3 * pos_tol, "mm", "position error")
    _log_hist(a2, np.degrees(rot), rot_tol_deg, "deg", "rotation error")
    fig.suptitle(title or f"Errors of {len(pos)} solutions")
    fig.tight_layout()
    return save_figure(fig, canvas, path)


# ---------------------------------------------------------------------------------------------- generalisation
def plot_generalisation(points: Iterable[Sequence], path: str | Path, title: str | None = None) -> Path:
    """Success [%] against the distance from the training set: raw samples (left), refined with LM (right).

    Args:
        points: ``(family, distance, raw success [%], refined success [%])`` per robot (e.g. from
            :func:`ggik.evaluation.generalisation.generalisation_points`); one colour and marker per family, in order
            of first appearance. Robots without a distance (NaN) cannot be placed: they are left out and counted on the
            figure.
        path: output ``.png``.
    Returns the path written.
    """
    placed: dict[str, list[tuple[float, float, float]]] = {}
    unplaced = total = 0
    for row in points:
        if len(row) != 4:
            raise ValueError(f"each point must be (family, distance, raw success, refined success), got {row!r}")
        family, dist, raw, refined = str(row[0]), float(row[1]), float(row[2]), float(row[3])
        if not all(0.0 <= v <= 100.0 for v in (raw, refined)):
            raise ValueError(f"success rates are percentages in [0, 100], got {raw!r} and {refined!r} in {row!r}")
        total += 1
        if math.isnan(dist):
            unplaced += 1
            placed.setdefault(family, [])
            continue
        if not (dist >= 0.0 and math.isfinite(dist)):
            raise ValueError(f"distance must be finite and >= 0 (or NaN: unknown), got {dist!r} in {row!r}")
        placed.setdefault(family, []).append((dist, raw, refined))
    if not total:
        raise ValueError("plot_generalisation needs at least one point")
    fig, canvas = new_figure((11.0, 4.5))
    axes = fig.subplots(1, 2, sharey=True)
    markers = "osD^vP*Xh<>p"
    colors = line_colors(len(placed), qualitative=True)
    for k, ((family, pts), c) in enumerate(zip(placed.items(), colors)):
        if not pts:
            continue
        a = np.array(pts)
        for ax, col in zip(axes, (1, 2)):
            ax.scatter(
                a[:, 0],
                a[:, col],
                color=c,
                marker=markers[k % len(markers)],
                s=28,
                alpha=0.8,
                label=f"{family} ({len(pts)})",
            )
    for ax, what in zip(axes, ("raw samples: best within 1 cm and 1 deg", "refined with LM: within 1 mm and 0.01 rad")):
        ax.set_xlabel("distance from the training set (randomize_links: r; else relative edge difference)", fontsize=8)
        ax.set_title(what, fontsize=10)
        ax.set_ylim(-3, 103)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("success [%]")
    if unplaced:
        axes[0].text(
            0.02,
            0.98,
            f"{unplaced} of {total} robots have no distance (n/a): not shown",
            transform=axes[0].transAxes,
            fontsize=8,
            va="top",
        )
    if any(placed.values()):
        axes[1].legend(fontsize=7, loc="lower left")
    fig.suptitle(title or "Success against distance from the training set")
    fig.tight_layout()
    return save_figure(fig, canvas, path)
