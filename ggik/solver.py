"""The solver users call: a trained GGIK model + angle recovery + optional local refinement (:meth:`GGIK.solve`,
layer :mod:`ggik.ik`), and path following with it (:meth:`GGIK.solve_path`, layer :mod:`ggik.path`).

from ggik import GGIK, Robot, SolveConfig
solver = GGIK.load("runs/panda/last.pt")        # or GGIK.pretrained()
robot = Robot.from_name("panda")
result = solver.solve(robot, T_goal, SolveConfig(samples=32, refine="lm"))
result.best()                                    # (B, dof) best joint values per goal
path = solver.solve_path(robot, poses)           # poses (T, 4, 4): a joint trajectory through all of them
"""

from __future__ import annotations

import os
import threading
import warnings
import weakref
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from ggik.checkpoint import PRETRAINED_CHECKPOINT, load_model, load_model_or_shipped, recorded_training_set
from ggik.collision import Clearance, CollisionConfig, CollisionModel, Scene
from ggik.graph import Goals, RobotGraph
from ggik.graph.goal_kinds import check_goal_kind, goal_poses, tool_axis
from ggik.ik import single_goal
from ggik.ik.dg_refine import DGConfig
from ggik.ik.refine_config import RefineConfig
from ggik.ik.result import IKResult, sort_best_first
from ggik.ik.sampling import SamplingOptions
from ggik.ik.solve_config import DEFAULT_SAMPLES, REFINE_METHODS, SolveConfig
from ggik.ik.strategies import (
    ModelDraw,
    Refinement,
    model_first_strategy,
    random_points_strategy,
    random_strategy,
    restart_generator,
    samples_strategy,
)
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel
from ggik.path import PathConfig, PathProgress, PathResult, solve_path

__all__ = ["GGIK", "IKResult", "PathResult", "SolveConfig", "PRETRAINED_CHECKPOINT", "sort_best_first"]


class GGIK:
    """A trained GGIK model as an IK solver for any revolute chain the graph takes.

    Args:
        model: a :class:`GGIKModel`, used as given (moved to ``device``): its train/eval mode and a decoder compiled
            by the caller (:meth:`GGIKModel.compile_decoder`) stay as they are. The solver's own loads
            (:meth:`load`, :meth:`pretrained`) are in eval mode.
        checkpoint: the checkpoint dict it came from (for ``training_robots``, version), optional.
        device: where the model runs. On a CUDA GPU the whole solve stays there (sampling, angle recovery, LM, ranking;
            float64) and the result comes back to the CPU at the end, except with obstacles, SLSQP or DG (CPU);
            LM's backend is chosen per call (:func:`ggik.ik.lm.select.select_backend`: a small problem on a GPU is
            solved on the CPU).
        tolerances: :class:`RefineConfig` (``pos_tol`` [m], ``rot_tol`` [rad] define success).
        dg: :class:`DGConfig`, the budget of ``refine="dg"`` (distance-geometric projection of the samples).
        compile_sampler: True: compile the model's decoder (:meth:`GGIKModel.compile_decoder`: the decoder's
            element-wise work fused; the first pass of each padded shape pays the compilation). False: the model's
            decoder as given (compiled only if the caller compiled it).
    """

    REFINE_METHODS = REFINE_METHODS  #: what ``SolveConfig.refine`` takes

    def __init__(
        self,
        model: GGIKModel,
        checkpoint: dict | None = None,
        device: str | torch.device = "cpu",
        tolerances: RefineConfig | None = None,
        dg: DGConfig | None = None,
        compile_sampler: bool = False,
    ) -> None:
        self.model = model.to(device)
        if compile_sampler and not model.decoder_compiled:
            self.model.compile_decoder()
        self.checkpoint = checkpoint or {}
        self.device = torch.device(device)
        self.config = tolerances or RefineConfig()
        self.dg_config = dg or DGConfig()
        self._collision_models: weakref.WeakKeyDictionary[Robot, dict[tuple, CollisionModel]] = (
            weakref.WeakKeyDictionary()
        )
        self._graphs: weakref.WeakKeyDictionary[Robot, RobotGraph] = weakref.WeakKeyDictionary()
        self._robot_solvers: dict[tuple[Robot, tuple, int], single_goal.RobotSolver] = {}
        self._robot_solvers_lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu", compile_sampler: bool = False) -> GGIK:
        """A solver from a checkpoint written by ``ggik train`` or ``ggik export`` (GGIKError if corrupt or
        incompatible)."""
        model, ckpt = load_model(path, device)
        return cls(model, ckpt, device, compile_sampler=compile_sampler)

    @classmethod
    def pretrained(cls, device: str | torch.device = "cpu", compile_sampler: bool = False) -> GGIK:
        """The model shipped inside the package: ``ggik/weights/ggik_default.pt``, a weights-only export
        (``ggik export``, :func:`ggik.checkpoint.export_checkpoint`) of the default multi-robot training run."""
        return cls.load_or_pretrained(None, device, compile_sampler)

    @classmethod
    def load_or_pretrained(
        cls, path: str | Path | None, device: str | torch.device = "cpu", compile_sampler: bool = False
    ) -> GGIK:
        """:meth:`load` of ``path``, or :meth:`pretrained` when ``path`` is None (what ``--ckpt`` means in every
        command)."""
        model, ckpt = load_model_or_shipped(path, device)
        return cls(model, ckpt, device, compile_sampler=compile_sampler)

    @classmethod
    def adapt(
        cls,
        robot: Robot | str | Path,
        minutes: float = 15.0,
        *,
        out: str | Path | None = None,
        base: str | Path | None = None,
        config: Any = None,
        device: str = "cpu",
        progress: bool = True,
        force: bool = False,
    ) -> GGIK:
        """A solver adapted to ``robot`` (a :class:`Robot`, kept as its URDF text, or a URDF file's path, its chain
        found as :meth:`Robot.from_urdf` finds it) in ``minutes`` of fine-tuning of model ``base`` (default: the
        shipped model), replaying the model's own training robots (:func:`ggik.training.adapt.adapt`).

        ``out``: the adapted model file (default ``ggik-adapted/ROBOT.pt`` in the working directory; its resumable
        run in ``OUT.adapt/``: calling again with the same arguments continues it). ``config``: an
        :class:`ggik.training.adapt.AdaptConfig` (its ``minutes`` replaced by ``minutes``). ``force``: write over an
        existing ``out`` that this run did not write. Returns the solver of the best model measured on the arm."""
        from ggik.kinematics.robot_files import RobotFile
        from ggik.training.adapt import AdaptConfig
        from ggik.training.adapt import adapt as run_adapt

        arm = robot if isinstance(robot, Robot) else RobotFile(str(robot))
        name = robot.name if isinstance(robot, Robot) else Path(str(robot)).stem
        cfg = replace(config or AdaptConfig(), minutes=minutes)
        out = out or Path("ggik-adapted") / f"{name}.pt"
        result = run_adapt(arm, out, cfg, base, device=device, progress=progress, force=force)
        if result.fault is not None:  # the run stopped at its last finite state; the best model measured is returned
            warnings.warn(f"ggik adapt stopped early: {result.fault}", RuntimeWarning, stacklevel=2)
        return cls.load(result.out, device)

    @property
    def training_robots(self) -> dict:
        """What the model was trained on (:func:`ggik.checkpoint.training_set`; {} for a model without a checkpoint)."""
        return recorded_training_set(self.checkpoint) or {}

    def _graph(self, robot: Robot) -> RobotGraph:
        if robot not in self._graphs:
            # the graph of the model's convention; GraphError for chains the graph cannot take
            self._graphs[robot] = self.model.graph(robot)
        return self._graphs[robot]

    def solve(
        self,
        robot: Robot,
        T_goal: Any,
        config: SolveConfig | None = None,
        *,
        generator: torch.Generator | None = None,
        goal: str = "pose",
        obstacles: Scene | Clearance | None = None,
        collision: CollisionConfig | str | Path | None = None,
    ) -> IKResult:
        """IK solutions for goals ``T_goal`` (4, 4) or (B, 4, 4): EE poses in ``robot``'s base-link frame.

        ``config``: :class:`SolveConfig` (default ``SolveConfig()``: 32 raw model samples per goal, the solver's
        tolerances). Its ``strategy``: ``"samples"`` (every model sample, refined by ``refine``: None, "lm" (batched
        Levenberg-Marquardt from every sample), "slsqp" (scipy, slower), "dg" (the sampled point sets projected onto
        the problem's known distances, :mod:`ggik.ik.dg_refine`, then angle recovery) or "dg+lm" (LM from the "dg"
        result)), ``"model-first"`` (LM from the samples, random restarts only for the goals they leave unsolved) or
        ``"random"`` (LM from random starts, or with ``refine`` "dg" / "dg+lm" the random starts' point sets projected
        on the model's graph; the model is not used). All goals and samples go through the model in
        one batched pass. ``pos_tol`` [m] and ``rot_tol`` [rad]: the success tolerances of this call (default the
        solver's, 1 mm and 0.01 rad); LM refines until they are met. ``generator``: every random draw (sampling
        noise, then random starts). Returns an :class:`IKResult`, sorted best first, with B = number of goals and
        S = ``samples`` (``random_starts`` for the strategy "random").

        ``goal``: the goal kind (:mod:`ggik.graph.goal_kinds`). ``"pose"``: ``T_goal`` as above. ``"position"``:
        positions (3,) or (B, 3), or poses whose rotation is ignored; the model gets p_n only. ``"position+axis"``:
        a pair (position, axis) of (3,) or (B, 3) each, or poses of which only the tool axis (``RobotGraph.tool_axis``,
        the last joint's axis in the EE frame) counts; the roll about it is free. ``rot_err`` is then the angle
        between the tool axes (0 for ``"position"``). The shipped model was trained on all three kinds, but its raw
        samples are rough starts for every kind (centimetres off); refine (e.g. ``refine="lm"``) for solutions
        within tolerance.

        ``obstacles``: a :class:`ggik.Scene` in the base-link frame. LM (``refine`` "lm" or "dg+lm", and the strategies
        "model-first" and "random") and SLSQP keep every link capsule of the robot's collision model
        (:meth:`collision_model`, made once per robot) clear of the obstacles and of the robot's other links by
        ``collision.margin`` (:class:`ggik.collision.CollisionConfig`: also ``model_file``, a collision file of
        capsules and spheres per link, and ``srdf``, whose disabled pairs are not checked; a path alone stands for
        ``CollisionConfig(model_file=path)``); "dg" pushes the joint
        points out of the obstacles between its steps (:func:`ggik.ik.dg_refine.push_out`); raw samples are only
        checked. The result then reports ``collision_free`` and ``clearance`` per solution, and ``success``
        requires collision-free; the restarts of "model-first" go to the goals without such a solution. Or
        ``obstacles`` is a :class:`ggik.collision.Clearance` of ``robot``: its own collision model, scene (None:
        self-collision alone) and settings (``collision`` must then be None). SLSQP takes the clearances as inequality
        constraints (distance >= margin).

        The goals are checked once here (:meth:`ggik.RobotGraph.goals`) and passed down checked.
        """
        if not isinstance(robot, Robot):
            raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
        config = SolveConfig() if config is None else config
        if not isinstance(config, SolveConfig):
            raise TypeError(f"config must be a ggik.SolveConfig, got {type(config).__name__}")
        cfg = self._refine_config(config)
        clearance = self._clearance(robot, obstacles, collision)
        # on a GPU the whole solve stays there (sampling, angle recovery, LM, ranking), the result comes back at the end
        resident = self.device.type == "cuda" and clearance is None and config.method in (None, "lm")
        where = self.device if resident else torch.device("cpu")
        if config.strategy == "random" and config.method not in ("dg", "dg+lm"):  # no model, no graph: any LM chain
            if not resident and single_goal.takes(T_goal, goal, config.method, clearance):
                one_goal = self._robot_solver(robot, cfg, config.starts)
                if one_goal.fast:  # select_backend chose a backend other than torch for the call's problem
                    return one_goal.solve(T_goal, generator)
            T, kind = self._checked_goals(robot, T_goal, goal, None)
            refinement = Refinement(config.method, cfg, clearance)
            return random_strategy(robot, T.to(where), kind, config.starts, refinement, generator).result.to("cpu")
        samples = DEFAULT_SAMPLES if config.samples is None else config.samples
        graph = self._graph(robot)
        goals = self._checked_goals(robot, T_goal, goal, graph)
        assert isinstance(goals, Goals)
        goals = goals.to(torch.float64, where)
        if config.strategy == "random":  # distance geometry from random starts: the model's graph, not the model
            refinement = Refinement(config.method, cfg, clearance)
            return random_points_strategy(graph, goals, config.starts, refinement, self.dg_config, generator)
        options = SamplingOptions(oversample=config.oversample or 1, on_device=resident)
        draw = ModelDraw(self.model, graph, samples, options)
        if config.strategy == "samples":
            refinement = Refinement(config.refine, cfg, clearance)
            return samples_strategy(draw, goals, refinement, self.dg_config, generator).to("cpu")
        refinement = Refinement(config.method, cfg, clearance)
        restarts = restart_generator(generator)  # the strategy "random"'s starts for this generator (before the noise)
        return model_first_strategy(draw, goals, config.starts, refinement, generator, restarts).result.to("cpu")

    def _robot_solver(self, robot: Robot, cfg: RefineConfig, starts: int) -> single_goal.RobotSolver:
        """The warm single-goal solver of (robot, settings), made on first use and kept (the last 16 kept)."""
        key = (robot, tuple(vars(cfg).values()), starts)  # RefineConfig's fields: hashable
        with self._robot_solvers_lock:  # calls from several threads share the cache
            if key not in self._robot_solvers:
                if len(self._robot_solvers) >= 16:
                    self._robot_solvers.pop(next(iter(self._robot_solvers)))
                self._robot_solvers[key] = single_goal.RobotSolver(robot, cfg, starts)
            return self._robot_solvers[key]

    def collision_model(self, robot: Robot, config: CollisionConfig | None = None) -> CollisionModel:
        """The :class:`ggik.collision.CollisionModel` of ``robot`` that ``config`` names (default: the robot's own;
        :meth:`ggik.collision.CollisionConfig.collision_model`: a collision file, an SRDF), made on first use and
        kept with the robot (made again when a file has changed)."""
        config = config or CollisionConfig()
        key = tuple(_file_stamp(f) for f in (config.model_file, config.srdf))
        models = self._collision_models.setdefault(robot, {})
        if key not in models:
            if len(models) >= 8:
                models.pop(next(iter(models)))
            models[key] = config.collision_model(robot)
        return models[key]

    def _clearance(
        self, robot: Robot, obstacles: Scene | Clearance | None, config: CollisionConfig | str | Path | None
    ) -> Clearance | None:
        """The :class:`ggik.collision.Clearance` of a call with obstacles (None without)."""
        if isinstance(config, (str, os.PathLike)):
            config = CollisionConfig(model_file=config)
        if obstacles is None:
            if config is not None:
                raise ValueError(
                    "a CollisionConfig was given without obstacles (obstacles=Scene() checks self-collision alone)"
                )
            return None
        if isinstance(obstacles, Clearance):
            if config is not None:
                raise ValueError("a Clearance carries its own CollisionConfig: pass collision=None with it")
            if obstacles.robot is not robot:
                raise ValueError(f"the Clearance is of robot {obstacles.robot.name!r}, not of {robot.name!r}")
            return obstacles
        if not isinstance(obstacles, Scene):
            raise TypeError(
                f"obstacles must be a ggik.Scene (Scene.from_file reads a file) or a ggik.collision.Clearance, got "
                f"{type(obstacles).__name__}"
            )
        model = self.collision_model(robot, config)
        return Clearance(robot, model, obstacles, None if config is None else config.without_files())

    @staticmethod
    def _checked_goals(robot: Robot, T_goal: Any, goal: str, graph: RobotGraph | None) -> Any:
        """The goals of one call, checked once: :class:`Goals` (B,) float64 with a graph, else (canonical poses
        (B, 4, 4) float64 in the base-link frame, kind)."""
        if goal == "pose":
            T_goal = torch.as_tensor(T_goal)
            if T_goal.shape == (4, 4):
                T_goal = T_goal[None]
            if T_goal.ndim != 3 or T_goal.shape[-2:] != (4, 4):
                raise ValueError(f"T_goal must have shape (4, 4) or (B, 4, 4), got {tuple(T_goal.shape)}")
            T_goal = T_goal.to(torch.float64)
        if graph is None:
            kind = check_goal_kind(goal)
            T = goal_poses(T_goal, kind, tool_axis(robot))
            shape = T.shape[:-2]
        else:
            goals = graph.goals(T_goal, goal)  # checked and mapped into the graph frame once
            shape = goals.shape
        if len(shape) not in (0, 1):
            raise ValueError(f"{goal} goals must be one goal or a batch (B, ...), got batch shape {tuple(shape)}")
        if graph is None:
            return (T[None] if len(shape) == 0 else T).to(torch.float64), kind
        return (goals[None] if len(shape) == 0 else goals).to(torch.float64)

    def _refine_config(self, config: SolveConfig) -> RefineConfig:
        """The solver's :class:`RefineConfig` with the tolerances of ``config`` where it sets them, stopping each goal
        at its first solution with ``config.first_solution``."""
        tol = config.tolerances(self.config.tolerances)
        stop = config.first_solution or self.config.stop_at_first
        return replace(self.config, pos_tol=tol.pos_tol, rot_tol=tol.rot_tol, stop_at_first=stop)

    def solve_path(
        self,
        robot: Robot,
        poses: torch.Tensor,
        config: PathConfig | None = None,
        *,
        q_start: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        obstacles: Scene | Clearance | None = None,
        collision: CollisionConfig | str | Path | None = None,
        progress: PathProgress | None = None,
    ) -> PathResult:
        """A joint trajectory that follows the EE path ``poses`` (T, 4, 4) (base-link frame), by
        :func:`ggik.path.solve_path` with this solver's model: start candidates from ``config.samples`` model samples
        (0: random starts only; the model is not used unless ``config.track_samples`` > 0) and random starts,
        continuation along the path, a search over all candidates and LM on the whole trajectory, in rounds until a
        valid trajectory or ``config.time_limit``.

        ``config``: :class:`ggik.PathConfig` (default ``PathConfig()``), every option of path following, its
        tolerances and time limit included. Valid: every waypoint within ``config.pos_tol`` and ``config.rot_tol``,
        every configuration within the joint limits, no joint moving more than ``config.max_jump`` between
        waypoints. ``q_start`` (dof,): the configuration the robot starts from. The poses are checked on entry (as a
        path, and with the model as its graph's goals), and nothing after that checks them again.
        ``obstacles``, ``collision``: as in :meth:`solve`; valid then also means collision-free
        at every waypoint and on every motion between them, and the result names the collisions, the waypoints
        without any valid candidate and the closest obstacle. ``progress``: called after every round
        (:data:`ggik.path.PathProgress`). Returns a :class:`ggik.PathResult`.
        """
        if not isinstance(robot, Robot):
            raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
        config = PathConfig() if config is None else config
        if not isinstance(config, PathConfig):
            raise TypeError(
                f"config must be a ggik.PathConfig (paths take their samples, time limit and tolerances there), "
                f"got {type(config).__name__}"
            )
        config.check()  # ValueError naming the field, before the config is read here
        clearance = self._clearance(robot, obstacles, collision)
        model = self.model if config.samples > 0 or config.track_samples > 0 else None
        return solve_path(robot, poses, config, model, q_start, generator, clearance, progress)

    def with_tolerances(self, pos_tol: float, rot_tol: float) -> GGIK:
        """A solver sharing this model with other success tolerances [m, rad]."""
        other = GGIK.__new__(GGIK)
        other.__dict__.update(self.__dict__)
        other.config = replace(self.config, pos_tol=pos_tol, rot_tol=rot_tol)
        return other


def _file_stamp(path: str | Path | None) -> tuple[str, int, int] | None:
    """(resolved path, modification time [ns], size) of a file, to key cached models by (None for no file; a missing
    file gets zeros and fails where it is read)."""
    if path is None:
        return None
    p = Path(path).resolve()
    try:
        stat = p.stat()
    except OSError:
        return (str(p), 0, 0)
    return (str(p), stat.st_mtime_ns, stat.st_size)
