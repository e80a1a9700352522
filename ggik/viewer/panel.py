"""The viewer's control panel: how to solve (strategy, samples, refine, goal kind), what to draw (layout, raw samples,
refined solutions, the collision model when the viewer draws one), a goal typed in, and the table of the last solve's
timings and errors.

Every control calls back into the app (:class:`ggik.viewer.app.Viewer`), which re-solves the current goal on the
worker thread; the panel itself never solves.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from ggik.ik.solve_config import STRATEGIES
from ggik.kinematics.geometry import make_transform, matrix_to_quat, quat_to_matrix
from ggik.viewer.config import GOAL_KINDS, LAYOUTS, MAX_SAMPLES, ViewerConfig
from ggik.viewer.solving import SolveOutcome

__all__ = ["Panel", "parse_goal", "outcome_markdown", "MAX_SAMPLES"]


def parse_goal(position: tuple[float, ...], quaternion: str) -> torch.Tensor:
    """(4, 4) float64 goal pose from a position [m] and the text "QW QX QY QZ" (a unit quaternion, w first);
    ValueError naming the field for anything else."""
    if len(position) != 3 or not all(math.isfinite(v) for v in position):
        raise ValueError(f"goal position: 3 finite numbers [m], got {position}")
    try:
        quat = [float(v) for v in quaternion.replace(",", " ").split()]
    except ValueError:
        raise ValueError(f"goal quaternion: expected QW QX QY QZ, got {quaternion!r}") from None
    norm = math.sqrt(sum(v * v for v in quat)) if len(quat) == 4 and all(map(math.isfinite, quat)) else 0.0
    if abs(norm - 1.0) > 1e-3:
        raise ValueError(f"goal quaternion: QW QX QY QZ must have unit length, got {quaternion!r}")
    rotation = quat_to_matrix(torch.tensor(quat, dtype=torch.float64))
    return make_transform(rotation, torch.tensor(position, dtype=torch.float64))


def outcome_markdown(outcome: SolveOutcome, limit: int) -> str:
    """The panel's table of one solve: its timings [ms], then each distinct solution's errors [mm, deg]."""
    if outcome.error:
        return f"**error:** {outcome.error}"
    lines = []
    if outcome.raw is not None:
        lines.append(f"raw samples: {outcome.raw.q.shape[1]} in {outcome.raw_ms:.1f} ms")
    if outcome.refined is not None:
        solved = int((outcome.refined.success[0] & outcome.refined.within_limits[0]).sum())
        lines.append(f"refined: {solved} of {outcome.refined.q.shape[1]} solved in {outcome.refined_ms:.1f} ms")
    if outcome.first and lines:
        lines.append("(the first solve: its times include loading the robot's graph and the solvers)")
    shown = outcome.shown
    if shown is None:
        return "  \n".join(lines)
    what = "distinct solutions" if outcome.refined is not None else "distinct raw samples"
    lines.append(f"**{len(outcome.distinct)} {what}** (0.1 rad apart, at most {limit})")
    table = ["| # | pos err [mm] | rot err [deg] | ok |", "|---|---|---|---|"]
    ok = shown.success[0] & shown.within_limits[0]
    for rank, k in enumerate(outcome.distinct, start=1):
        pos, rot = 1e3 * float(shown.pos_err[0, k]), math.degrees(float(shown.rot_err[0, k]))
        table.append(f"| {rank} | {pos:.3g} | {rot:.3g} | {'yes' if bool(ok[k]) else 'no'} |")
    return "  \n".join(lines) + "\n\n" + "\n".join(table)


class Panel:
    """The GUI controls in ``gui`` (``server.gui``), starting from ``config``.

    ``changed()`` is called when a setting changes (re-solve, redraw); ``goal_typed(T)`` with a typed goal (4, 4).
    """

    def __init__(
        self,
        gui: Any,
        config: ViewerConfig,
        changed: Callable[[], None],
        goal_typed: Callable[[torch.Tensor], object],
        live: bool = True,
        redraw: Callable[[], None] | None = None,
    ) -> None:
        self.gui, self.changed, self.goal_typed = gui, changed, goal_typed
        self.redraw = redraw or changed  #: what a setting that changes only the drawing calls
        with gui.add_folder("Solve"):
            self.strategy = gui.add_dropdown("strategy", STRATEGIES, initial_value=config.strategy)
            self.samples = gui.add_slider("samples", min=1, max=MAX_SAMPLES, step=1, initial_value=config.samples)
            self.refine = gui.add_checkbox("refine (LM)", initial_value=config.refine)
            self.kind = gui.add_dropdown("goal kind", GOAL_KINDS, initial_value=config.goal_kind)
        with gui.add_folder("Draw"):
            self.layout = gui.add_dropdown("layout", LAYOUTS, initial_value=config.layout)
            self.raw = gui.add_checkbox("raw samples", initial_value=config.show_raw)
            self.refined = gui.add_checkbox("refined solutions", initial_value=config.show_refined)
            #: shown only when the viewer draws a collision model (``show_collision``)
            self.collision = gui.add_checkbox("collision model", initial_value=True) if config.show_collision else None
        with gui.add_folder("Goal", expand_by_default=False):
            self.position = gui.add_vector3("position [m]", initial_value=(0.0, 0.0, 0.0), step=0.01)
            self.quaternion = gui.add_text("quaternion w x y z", initial_value="1 0 0 0")
            self.set_goal = gui.add_button("set goal")
            self.goal_error = gui.add_markdown("")
        self.table = gui.add_markdown("" if live else "a result, no live solver")
        for handle in (self.strategy, self.samples, self.refine, self.kind):
            handle.on_update(lambda _event: self.changed())
        for handle in (self.layout, self.refined, self.collision):  # drawing only: no new solve
            if handle is not None:
                handle.on_update(lambda _event: self.redraw())
        # raw samples on need a solve that draws them; off, only a redraw
        self.raw.on_update(lambda _event: self.changed() if self.raw.value else self.redraw())
        self.set_goal.on_click(lambda _event: self.type_goal())

    def type_goal(self) -> None:
        """The typed goal, checked, to ``goal_typed``; a bad one is reported under the fields."""
        try:
            T = parse_goal(tuple(self.position.value), self.quaternion.value)
        except ValueError as exc:
            self.goal_error.content = f"**{exc}**"
            return
        self.goal_error.content = ""
        self.goal_typed(T)

    def show_goal(self, T: torch.Tensor) -> None:
        """Write a goal pose (4, 4) into the typed fields (without re-solving)."""
        q = matrix_to_quat(T[:3, :3].to(torch.float64))
        self.position.value = tuple(round(float(v), 4) for v in T[:3, 3])
        self.quaternion.value = " ".join(f"{float(v):.4f}" for v in q)

    def show(self, outcome: SolveOutcome, limit: int) -> None:
        self.table.content = outcome_markdown(outcome, limit)
