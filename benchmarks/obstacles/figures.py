"""The obstacle benchmark's figure: a robot's collision capsules at one configuration, the scene's boxes, spheres and
capsules, and a path's EE trace, in 3D (base-link frame, metres)."""

from __future__ import annotations

import itertools
from pathlib import Path

import torch

from benchmarks.obstacles.scenes import SceneCase
from ggik import Robot
from ggik.collision import CollisionModel
from ggik.evaluation.plots import new_figure, save_figure

__all__ = ["plot_scene"]


def _box_edges(centre: torch.Tensor, R: torch.Tensor, half: torch.Tensor) -> list[torch.Tensor]:
    corners = {
        s: centre + R @ (torch.tensor(s, dtype=torch.float64) * half) for s in itertools.product((-1, 1), repeat=3)
    }
    return [torch.stack([corners[a], corners[b]]) for a in corners for b in corners
            if a < b and sum(x != y for x, y in zip(a, b)) == 1]  # fmt: skip


def plot_scene(
    robot: Robot, model: CollisionModel, case: SceneCase, q: torch.Tensor, path_q: torch.Tensor | None, out: Path
) -> Path:
    """Draw and save (PNG) ``case``'s obstacles, ``robot``'s capsules at q (dof,) (lines as thick as their radius)
    and the EE trace of trajectory ``path_q`` (T, dof) when given."""
    fig, canvas = new_figure(figsize=(6.5, 5.5))
    ax = fig.add_subplot(projection="3d")
    c, R, h = case.scene.box_arrays()
    for k in range(len(h)):
        for edge in _box_edges(c[k], R[k], h[k]):
            ax.plot(*edge.T.tolist(), color="0.55", lw=0.8)
    a, b, r = case.scene.capsule_arrays()
    for k in range(len(r)):
        ax.plot(*torch.stack([a[k], b[k]]).T.tolist(), color="tab:red", lw=4, alpha=0.6)
        ax.scatter(*a[k].tolist(), s=(400 * float(r[k])) ** 2 / 4, color="tab:red", alpha=0.3)
    ca, cb = model.capsules_at(robot.link_poses(q))
    for k in range(ca.shape[0]):
        ax.plot(*torch.stack([ca[k], cb[k]]).T.tolist(), color="tab:blue", lw=max(1.0, 250 * float(model.radius[k])),
                alpha=0.7, solid_capstyle="round")  # fmt: skip
    if path_q is not None:
        ee = robot.fk(path_q)[:, :3, 3]
        ax.plot(*ee.T.tolist(), color="tab:green", lw=2, label="path (EE)")
        ax.legend(loc="upper left")
    lo, hi = case.lo.tolist(), case.hi.tolist()
    span = max(max(abs(v) for v in lo + hi), 0.3)
    ax.set(xlim=(-span, span), ylim=(-span, span), zlim=(-0.05, 1.5 * span), xlabel="x [m]", ylabel="y [m]",
           zlabel="z [m]", title=f"{robot.name}, {case.name}: capsules at a solution (blue)")  # fmt: skip
    return save_figure(fig, canvas, out)
