"""The viewer's one source of defaults (:class:`ViewerConfig`) and the check that its optional dependency is there.

The viewer is an optional extra: ``pip install 'ggik[view]'`` installs viser (the web viewer, served from its wheel,
no network needed). Nothing in :mod:`ggik` imports viser until a viewer is started.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

from ggik.errors import GGIKError

__all__ = ["ViewerConfig", "GOAL_KINDS", "LAYOUTS", "INSTALL_HINT", "require_viser"]

GOAL_KINDS = ("pose", "position", "position+axis")  #: the goal kinds of the panel (as ``ggik solve``)
MAX_SAMPLES = 256  #: the most samples per goal the panel's slider offers
LAYOUTS = ("overlay", "side by side")  #: every arm at the base, or each distinct solution in its own slot
INSTALL_HINT = "pip install 'ggik[view]'"  #: what installs the viewer's dependency

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class ViewerConfig:
    """Defaults of ``ggik view`` and :func:`ggik.view` (every option of the command line starts from here).

    Attributes:
        host: the address the server listens on ("127.0.0.1": this machine only; "0.0.0.0": every interface).
        port: its TCP port (1-65535; 0: a free one, chosen by the system).
        strategy, samples, refine: the solve of every goal (:class:`ggik.SolveConfig`: "samples" refines every model
            sample, so that the raw samples and what LM makes of each are shown together; ``refine`` False: raw only).
        goal_kind: one of :data:`GOAL_KINDS`; the gizmo's pose gives the position, its z axis the tool axis.
        layout: one of :data:`LAYOUTS`; ``spacing`` [m] between the slots of "side by side" (0: from the reach).
        show_raw, show_refined: draw the model's raw samples and the refined non-distinct solutions (the distinct
            solutions are always drawn).
        seed: seed of every solve (the same goal gives the same samples).
        capsule_radius: [m] the capsules drawn along the links of a robot without visual meshes.
        raw_color, refined_color, palette: RGB 0-255 of the raw samples, of the refined solutions, and of the
            distinct solutions (in turn); raw_opacity, refined_opacity, distinct_opacity: 0-1.
        obstacle_color, path_color: RGB of the obstacles and of the tool path.
        playback_fps: frames per second of the path animation.
        max_distinct: at most this many distinct solutions are highlighted (and listed in the panel).
        hide_notifications: hide the browser's notices (e.g. "software WebGL"): for screenshots.
        show_collision: draw the robot's collision model (its capsules and spheres, :mod:`ggik.viewer.collision_view`)
            on the displayed configuration: the first distinct solution, or the playback's waypoint.
        collision_color, collision_hit_color, collision_opacity: RGB of the collision model's capsules, of those in
            collision (with an obstacle or, in a self-collision pair, another link), and their opacity 0-1.
        live: solve the goal when it moves (None: unless only a result or a trajectory is shown).
    """

    host: str = "127.0.0.1"
    port: int = 8080
    strategy: str = "samples"
    samples: int = 32
    refine: bool = True
    goal_kind: str = "pose"
    layout: str = "overlay"
    spacing: float = 0.0
    show_raw: bool = True
    show_refined: bool = True
    seed: int = 0
    capsule_radius: float = 0.035
    raw_color: RGB = (150, 150, 160)
    raw_opacity: float = 0.18
    refined_color: RGB = (90, 140, 230)
    refined_opacity: float = 0.3
    palette: tuple[RGB, ...] = field(
        default=((240, 120, 20), (40, 170, 90), (200, 50, 160), (30, 160, 200), (210, 60, 50), (150, 110, 40))
    )
    distinct_opacity: float = 0.95
    obstacle_color: RGB = (120, 120, 120)
    path_color: RGB = (220, 30, 30)
    playback_fps: float = 20.0
    max_distinct: int = 12
    hide_notifications: bool = False
    show_collision: bool = False
    collision_color: RGB = (120, 145, 185)
    collision_hit_color: RGB = (230, 30, 30)
    collision_opacity: float = 0.4
    live: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.port, int) or not 0 <= self.port <= 65535:
            raise GGIKError(f"port must be an integer in 0-65535 (0: any free port), got {self.port!r}")
        if self.goal_kind not in GOAL_KINDS:
            raise GGIKError(f"goal kind must be one of {GOAL_KINDS}, got {self.goal_kind!r}")
        if self.layout not in LAYOUTS:
            raise GGIKError(f"layout must be one of {LAYOUTS}, got {self.layout!r}")
        if not 1 <= self.samples <= MAX_SAMPLES or self.max_distinct < 1:
            raise GGIKError(
                f"samples must be in 1-{MAX_SAMPLES} and max_distinct >= 1, got {self.samples} and {self.max_distinct}"
            )
        from ggik.ik.solve_config import STRATEGIES

        if self.strategy not in STRATEGIES:
            raise GGIKError(f"strategy must be one of {STRATEGIES}, got {self.strategy!r}")
        if not self.playback_fps > 0:
            raise GGIKError(f"playback_fps must be positive, got {self.playback_fps!r}")
        if not 0.0 <= self.collision_opacity <= 1.0:
            raise GGIKError(f"collision_opacity must be in 0-1, got {self.collision_opacity!r}")
        if not self.palette:
            raise GGIKError("palette needs at least one colour")


def require_viser() -> None:
    """GGIKError naming :data:`INSTALL_HINT` when viser, the viewer's optional dependency, is not installed."""
    try:
        found = importlib.util.find_spec("viser") is not None
    except (ImportError, ValueError):  # a broken install, or sys.modules["viser"] = None (blocked)
        found = False
    if not found:
        raise GGIKError(f"the viewer needs viser, an optional dependency: {INSTALL_HINT}")
