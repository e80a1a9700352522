"""The viewer: a viser server showing a robot, its obstacles, a goal gizmo and the solutions of that goal, re-solved
on a worker thread whenever the goal or a setting changes; or a given IK result, or a trajectory played back.

``Viewer`` is the one object behind ``ggik view`` and :func:`ggik.view`; it can be driven from Python (tests, the
latency benchmark): :meth:`Viewer.set_goal` moves the gizmo as a drag does, :meth:`Viewer.wait_idle` waits for the
solutions to be in the scene, :meth:`Viewer.summary` says what the scene holds.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ggik.collision import CollisionConfig, CollisionModel, Scene
from ggik.errors import GGIKError
from ggik.ik import IKResult
from ggik.kinematics.geometry import make_transform, matrix_to_quat, quat_to_matrix
from ggik.kinematics.robot import Robot
from ggik.solver import GGIK
from ggik.viewer.arms import ArmLayer, ArmSet
from ggik.viewer.collision_view import CollisionLayer
from ggik.viewer.config import ViewerConfig, require_viser
from ggik.viewer.meshes import link_meshes, obstacle_meshes
from ggik.viewer.panel import Panel
from ggik.viewer.playback import Playback, check_trajectory
from ggik.viewer.solving import SolveOutcome, SolveRequest, run_request
from ggik.viewer.worker import SolveWorker

__all__ = ["Viewer"]

HIDE_NOTICES = "<style>.mantine-Notifications-root { display: none !important; }</style>"


def _reach(robot: Robot) -> float:
    """[m] an upper bound of the arm's reach: the sum of its joints' offsets (at least 0.3 m)."""
    return max(0.3, float(sum(np.linalg.norm(j.origin[:3, 3]) for j in robot.joints)))


class Viewer:
    """A running viewer of ``robot`` (the server starts in the constructor; :meth:`close` stops it).

    Args:
        robot: the robot, drawn from its URDF visual meshes where found, else capsules (:mod:`ggik.viewer.meshes`).
        solver: the GGIK solver of live goals, or the path of a model file to load on the first goal; None: the
            shipped model, loaded on the first goal (and not at all when only ``result`` or ``trajectory`` is shown).
        obstacles: a :class:`ggik.Scene` drawn in place and passed to every solve (SceneError for a frame the robot
            lacks).
        result: an :class:`ggik.IKResult` to show (its first goal's solutions) instead of solving a first goal.
        trajectory: (T, dof) joint values [rad] to play back (e.g. ``PathResult.q``), checked against the limits.
        goal: the first goal (4, 4) [m]; default the EE pose at the middle of the joint ranges (or the result's best).
        config: :class:`ViewerConfig` (port, solve settings, colours, ``live``).
        collision: :class:`ggik.CollisionConfig` of the solves among ``obstacles`` (default: the solver's); with
            ``config.show_collision`` its collision model (a collision file, an SRDF; else the robot's own) is drawn
            on the displayed configuration (:mod:`ggik.viewer.collision_view`; GGIKError for a malformed file,
            before the server starts).
    """

    def __init__(
        self,
        robot: Robot,
        solver: GGIK | str | Path | None = None,
        obstacles: Scene | None = None,
        result: IKResult | None = None,
        trajectory: torch.Tensor | None = None,
        goal: torch.Tensor | None = None,
        config: ViewerConfig | None = None,
        collision: CollisionConfig | None = None,
    ) -> None:
        require_viser()
        import viser

        self.ckpt = None if solver is None or isinstance(solver, GGIK) else str(solver)  # loaded on the first goal
        self.robot, self.solver, self.obstacles = robot, solver if isinstance(solver, GGIK) else None, obstacles
        self.collision = collision
        self.config = config = config or ViewerConfig()
        self.live = (result is None and trajectory is None) if config.live is None else config.live
        self.meshes = link_meshes(robot, config.capsule_radius)
        scene_meshes = obstacle_meshes(obstacles, robot) if obstacles is not None else []  # SceneError: bad frame
        self.trajectory = None if trajectory is None else check_trajectory(robot, trajectory, "trajectory")
        model = (collision or CollisionConfig()).collision_model(robot) if config.show_collision else None
        self.outcome: SolveOutcome | None = None
        self.lock = threading.Lock()  #: one scene update at a time (worker, playback, GUI threads)
        self.reach = _reach(robot)
        if result is not None and (result.q.ndim != 3 or result.q.shape[-1] != robot.dof):
            shape = tuple(result.q.shape)
            raise ValueError(f"result.q must have shape (B, S, {robot.dof}) for {robot.name}, got {shape}")
        start = self._checked_goal(goal) if goal is not None else self._first_goal(result)
        try:
            self.server = viser.ViserServer(host=config.host, port=config.port, verbose=False)
        except OSError as exc:
            raise GGIKError(f"--port {config.port}: cannot listen on {config.host}:{config.port} ({exc})") from None
        try:
            self._start(robot, config, scene_meshes, start, result, model)
        except BaseException:  # nothing left listening or running after a failed start
            if hasattr(self, "worker"):
                self.worker.stop()
            self.server.stop()
            raise

    def _start(
        self,
        robot: Robot,
        config: ViewerConfig,
        scene_meshes: list,
        start: torch.Tensor,
        result: IKResult | None,
        model: CollisionModel | None,
    ) -> None:
        """The scene, the panel, the gizmo and the worker of a started server (``__init__``); ``model``: the collision
        model to draw (None: none)."""
        self.server.scene.set_up_direction("+z")
        self.server.initial_camera.position = (1.1 * self.reach, -1.0 * self.reach, 0.75 * self.reach)
        # the robot left of the centre, clear of the control panel on the right: look at a point right of the base
        self.server.initial_camera.look_at = (0.25 * self.reach, 0.25 * self.reach, 0.3 * self.reach)
        self.server.scene.add_grid("/grid", width=2 * self.reach, height=2 * self.reach, cell_size=0.1)
        if config.hide_notifications:
            self.server.gui.add_html(HIDE_NOTICES)
        self.obstacle_nodes = [f"/obstacles/{name}" for name, _, _ in scene_meshes]
        for node, (_, vertices, faces) in zip(self.obstacle_nodes, scene_meshes):
            self.server.scene.add_mesh_simple(node, vertices, faces, color=config.obstacle_color)
        self.arms = ArmLayer(self.server.scene, robot, self.meshes, "/arms")
        self.collision_layer = None
        if model is not None:
            self.collision_layer = CollisionLayer(
                self.server.scene, robot, model, self.obstacles, self.collision, config
            )
        self.panel = Panel(self.server.gui, config, self.settings_changed, self.set_goal, self.live, self.redraw)
        self.goal = start.to(torch.float64)
        self.gizmo = self.server.scene.add_transform_controls(
            "/goal", scale=0.35 * self.reach / 1.5, position=self._position(self.goal), wxyz=self._wxyz(self.goal)
        )

        async def on_gizmo(event: Any) -> None:  # on viser's event loop, in order; submit never blocks
            if event.phase == "update":  # grab and release repeat the pose of the last update
                self.gizmo_moved()

        self.gizmo.on_update(on_gizmo)
        self.panel.show_goal(self.goal)
        self.solved_once = False  #: the worker has solved a request (the first one's times include one-off costs)
        self.worker: SolveWorker[SolveRequest, SolveOutcome] = SolveWorker(self._solve, self._solved)
        self.playback: Playback | None = None
        if self.trajectory is not None:
            tool = robot.fk(self.trajectory)[:, :3, 3].numpy()
            self.playback = Playback(
                self.server.gui,
                self.server.scene,
                self.trajectory,
                tool,
                config.path_color,
                config.playback_fps,
                self.show_configuration,
            )
        if result is not None:
            self.show_result(result)
        elif self.live:
            self.submit()

    # ------------------------------------------------------------------ goal and settings
    @staticmethod
    def _position(T: torch.Tensor) -> tuple[float, float, float]:
        x, y, z = (float(v) for v in T[:3, 3])
        return (x, y, z)

    @staticmethod
    def _wxyz(T: torch.Tensor) -> tuple[float, float, float, float]:
        w, x, y, z = (float(v) for v in matrix_to_quat(T[:3, :3].to(torch.float64)))
        return (w, x, y, z)

    def _first_goal(self, result: IKResult | None) -> torch.Tensor:
        if result is not None:
            return self.robot.fk(result.q[0, 0].to(torch.float64))
        mid = torch.where(self.robot.limited, (self.robot.lower + self.robot.upper) / 2, torch.zeros(self.robot.dof))
        return self.robot.fk(mid + 0.3 * (self.robot.upper - self.robot.lower) * torch.linspace(-0.5, 0.5, len(mid)))

    @property
    def url(self) -> str:
        """The address to open in a browser."""
        host = self.config.host if self.config.host not in ("0.0.0.0", "::") else "127.0.0.1"
        return f"http://{host}:{self.server.get_port()}"

    def request(self) -> SolveRequest:
        """The solve of the current goal with the panel's settings."""
        p = self.panel
        return SolveRequest(
            goal=self.goal.clone(),
            kind=str(p.kind.value),
            strategy=str(p.strategy.value),
            samples=int(p.samples.value),
            refine=bool(p.refine.value),
            raw=bool(p.raw.value),
            seed=self.config.seed,
        )

    def submit(self) -> int:
        """Queue the solve of the current goal on the worker (a pending one is superseded); its number."""
        self.live = True
        return self.worker.submit(self.request())

    @staticmethod
    def _checked_goal(T: Any) -> torch.Tensor:
        T = torch.as_tensor(T, dtype=torch.float64)
        if T.shape != (4, 4) or not torch.isfinite(T).all():
            raise ValueError(f"a goal is a finite (4, 4) pose, got shape {tuple(T.shape)}")
        return T

    def set_goal(self, T: Any) -> int:
        """Move the goal to the pose ``T`` (4, 4) [m] (base-link frame), as a drag of the gizmo does, and solve it."""
        T = self._checked_goal(T)
        self.goal = T
        self.gizmo.position = self._position(T)
        self.gizmo.wxyz = self._wxyz(T)
        self.panel.show_goal(T)
        return self.submit()

    def gizmo_moved(self) -> None:
        """The gizmo was dragged in a browser: its pose is the goal (solved unless it is the goal already)."""
        wxyz = torch.tensor(self.gizmo.wxyz, dtype=torch.float64)
        T = make_transform(quat_to_matrix(wxyz), torch.tensor(self.gizmo.position, dtype=torch.float64))
        if torch.allclose(T, self.goal, rtol=0.0, atol=1e-9):  # the goal already (up to the quaternion round trip)
            return
        self.goal = T
        self.panel.show_goal(T)
        self.submit()

    def settings_changed(self) -> None:
        """A panel setting of the solve changed: re-solve (live) or redraw (a shown result)."""
        if self.live:
            self.submit()
        else:
            self.redraw()

    def redraw(self) -> None:
        """A setting of the drawing changed (layout, refined shown, raw hidden, collision model shown): the last
        outcome drawn again."""
        if self.collision_layer is not None and self.panel.collision is not None:
            with self.lock:
                self.collision_layer.enable(bool(self.panel.collision.value))
        if self.outcome is not None:
            self.draw(self.outcome)

    # ------------------------------------------------------------------ solving and drawing
    def _solve(self, request: SolveRequest) -> SolveOutcome:
        if self.solver is None:
            self.solver = GGIK.load_or_pretrained(self.ckpt)
        try:
            outcome = run_request(
                self.solver, self.robot, request, self.obstacles, self.collision, self.config.max_distinct
            )
            outcome.first, self.solved_once = not self.solved_once, True
            return outcome
        except Exception as exc:  # shown in the panel (run_request already turns a bad goal into its message)
            return SolveOutcome(request, error=f"{type(exc).__name__}: {exc}")

    def _solved(self, outcome: SolveOutcome) -> None:
        self.outcome = outcome
        self.draw(outcome)

    def arm_set(self, outcome: SolveOutcome) -> ArmSet:
        """The arms of an outcome as the panel asks: raw samples, refined solutions, the distinct ones highlighted
        (in the palette's colours; "side by side": each distinct solution in its own slot of a square grid in the
        x-y plane, ``spacing`` apart, the first at the base)."""
        c, p, dof = self.config, self.panel, self.robot.dof
        sets = []
        side = p.layout.value == "side by side"
        spacing = c.spacing or 0.8 * self.reach
        columns = max(1, math.ceil(math.sqrt(len(outcome.distinct))))

        def arms(q: torch.Tensor, color: tuple[int, int, int], opacity: float) -> ArmSet:
            n = q.shape[0]
            return ArmSet(q, np.tile(np.array(color, np.uint8), (n, 1)), np.full(n, opacity), np.zeros((n, 3)))

        if not side and p.raw.value and outcome.raw is not None and outcome.refined is not None:
            sets.append(arms(outcome.raw.q[0], c.raw_color, c.raw_opacity))
        shown = outcome.shown
        if shown is not None:
            rest = [k for k in range(shown.q.shape[1]) if k not in outcome.distinct]
            if not side and p.refined.value and rest and outcome.refined is not None:
                sets.append(arms(shown.q[0, rest], c.refined_color, c.refined_opacity))
            for rank, k in enumerate(outcome.distinct):
                one = arms(shown.q[0, k : k + 1], c.palette[rank % len(c.palette)], c.distinct_opacity)
                if side:
                    row, col = divmod(rank, columns)
                    one.offsets[:] = (-spacing * row, spacing * col, 0.0)
                sets.append(one)
        return ArmSet.concat(sets, dof)

    def draw(self, outcome: SolveOutcome) -> None:
        """Put ``outcome``'s arms and table into the scene and panel (atomically for the browser)."""
        with self.lock, self.server.atomic():
            self.arms.draw(self.arm_set(outcome))
            if self.collision_layer is not None:
                self.collision_layer.show(self.displayed(outcome))
            self.panel.show(outcome, self.config.max_distinct)

    @staticmethod
    def displayed(outcome: SolveOutcome) -> torch.Tensor | None:
        """The configuration (dof,) [rad] the collision model is drawn on: the first distinct solution of
        ``outcome`` (at the base in either layout), or None when it has none."""
        shown = outcome.shown
        if shown is None or not outcome.distinct:
            return None
        return shown.q[0, outcome.distinct[0]]

    def show_result(self, result: IKResult) -> None:
        """Show ``result``'s first goal (an :class:`ggik.IKResult`): its solutions as refined, the distinct ones
        highlighted (its raw samples are not known)."""
        if result.q.ndim != 3 or result.q.shape[-1] != self.robot.dof:
            raise ValueError(f"result.q must have shape (B, S, {self.robot.dof}), got {tuple(result.q.shape)}")
        self.live = False
        request = replace(self.request(), refine=True, raw=False)
        outcome = SolveOutcome(request, refined=result)
        from ggik.ik.metrics import distinct_solutions

        ok = result.success[0] & result.within_limits[0]
        outcome.distinct = distinct_solutions(result.q[0], ok, ~self.robot.limited, self.config.max_distinct)
        self._solved(outcome)

    def show_configuration(self, q: torch.Tensor) -> None:
        """Draw one configuration ``q`` (dof,) [rad] (the playback's current waypoint) as the one arm."""
        color = np.array([self.config.palette[0]], np.uint8)
        with self.lock:
            self.arms.draw(ArmSet(q.reshape(1, -1).to(torch.float64), color, np.ones(1), np.zeros((1, 3))))
            if self.collision_layer is not None:
                self.collision_layer.show(q)

    # ------------------------------------------------------------------ driving and inspecting
    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until the latest goal's solutions are in the scene (False after ``timeout`` [s])."""
        return self.worker.wait_idle(timeout)

    def summary(self) -> dict[str, Any]:
        """What the scene holds now: the link nodes and arms drawn, obstacles, the goal, the last solve's counts, the
        collision model's capsule nodes drawn."""
        outcome = self.outcome
        names = [n for n in ("/grid", "/goal") if self.server.scene.get_handle_by_name(n) is not None]
        return {
            "links": sorted(self.arms.handles),
            "arms": len(self.arms.shown),
            "obstacles": [n for n in self.obstacle_nodes if self.server.scene.get_handle_by_name(n) is not None],
            "nodes": names,
            "goal": self.goal.clone(),
            "samples": None if outcome is None or outcome.shown is None else int(outcome.shown.q.shape[1]),
            "distinct": None if outcome is None else len(outcome.distinct),
            "path": self.server.scene.get_handle_by_name("/path/tool") is not None,
            "collision": [] if self.collision_layer is None else self.collision_layer.shown(),
            "error": "" if outcome is None else outcome.error,
        }

    def serve_forever(self) -> None:
        """Block until Ctrl-C, then close."""
        try:
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()

    def close(self) -> None:
        """Stop the worker, the playback and the server."""
        self.worker.stop()
        if self.playback is not None:
            self.playback.stop()
        self.server.stop()

    def __enter__(self) -> Viewer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
