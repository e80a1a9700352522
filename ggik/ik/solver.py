"""The IK solver users call: a trained GGIK model + angle recovery + optional local refinement.

    from ggik import GGIK, Robot
    solver = GGIK.load("runs/panda/last.pt")        # or GGIK.pretrained()
    robot = Robot.from_name("panda")
    result = solver.solve(robot, T_goal, num_samples=32, refine="lm")
    result.best()                                    # (B, dof) best joint values per goal
    path = solver.solve_path(robot, poses)           # poses (T, 4, 4): a joint trajectory through all of them
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from pathlib import Path

import torch

from ggik.checkpoint import PRETRAINED_CHECKPOINT, load_model, load_model_or_shipped, recorded_training_set
from ggik.graph import RobotGraph
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.path import PathConfig, PathResult, solve_path
from ggik.ik.refine import RefineConfig, lm_refine, slsqp_refine
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.nn.cvae import GGIKModel

__all__ = ["GGIK", "IKResult", "PathResult", "PRETRAINED_CHECKPOINT"]


@dataclass
class IKResult:
    """Solutions for B goals, S per goal, sorted best first per goal.

    Attributes:
        q: (B, S, dof) joint values [rad].
        pos_err: (B, S) EE position error [m]; rot_err: (B, S) rotation error [rad].
        success: (B, S) bool, both errors within the solver's tolerances.
        within_limits: (B, S) bool, every joint within its limits.
    """

    q: torch.Tensor
    pos_err: torch.Tensor
    rot_err: torch.Tensor
    success: torch.Tensor
    within_limits: torch.Tensor

    def best(self) -> torch.Tensor:
        """(B, dof): the best solution of each goal."""
        return self.q[:, 0]

    def __len__(self) -> int:
        return self.q.shape[0]


def sort_best_first(q, pos, rot, success, within, pos_tol, rot_tol) -> IKResult:
    """Order each goal's solutions: successful first, then within limits, then by pos/pos_tol + rot/rot_tol."""
    order = torch.argsort(pos / pos_tol + rot / rot_tol, dim=-1, stable=True)
    for key in (within, success):  # stable sorts: the last key applied is the primary one
        k = torch.gather((~key).to(torch.int8), 1, order)
        order = torch.gather(order, 1, torch.argsort(k, dim=-1, stable=True))
    take = lambda t: torch.gather(t, 1, order if t.ndim == 2 else order[..., None].expand_as(t))  # noqa: E731
    return IKResult(q=take(q), pos_err=take(pos), rot_err=take(rot), success=take(success), within_limits=take(within))


class GGIK:
    """A trained GGIK model as an IK solver for any revolute chain the graph takes.

    Args:
        model: a :class:`GGIKModel` (eval mode is set).
        checkpoint: the checkpoint dict it came from (for ``training_robots``, version), optional.
        device: where the model runs; FK, angle recovery and refinement run in float64 on the CPU.
        tolerances: :class:`RefineConfig` (``pos_tol`` [m], ``rot_tol`` [rad] define success).
        dg: :class:`DGConfig`, the budget of ``refine="dg"`` (distance-geometric projection of the samples).
    """

    REFINE_METHODS = (None, "lm", "slsqp", "dg", "dg+lm")  #: what ``solve(refine=...)`` takes

    def __init__(self, model: GGIKModel, checkpoint: dict | None = None, device: str | torch.device = "cpu",
                 tolerances: RefineConfig | None = None, dg: DGConfig | None = None) -> None:
        self.model = model.to(device).eval()
        self.checkpoint = checkpoint or {}
        self.device = torch.device(device)
        self.config = tolerances or RefineConfig()
        self.dg_config = dg or DGConfig()
        self._graphs: weakref.WeakKeyDictionary[Robot, RobotGraph] = weakref.WeakKeyDictionary()

    @classmethod
    def load(cls, path: str | Path, device: str | torch.device = "cpu") -> "GGIK":
        """A solver from a checkpoint written by ``ggik train`` or ``ggik export`` (GGIKError if corrupt or incompatible)."""
        model, ckpt = load_model(path, device)
        return cls(model, ckpt, device)

    @classmethod
    def pretrained(cls, device: str | torch.device = "cpu") -> "GGIK":
        """The model shipped inside the package: ``ggik/weights/ggik_default.pt``, a weights-only export
        (``ggik export``, :func:`ggik.checkpoint.export_checkpoint`) of the default multi-robot training run."""
        return cls.load_or_pretrained(None, device)

    @classmethod
    def load_or_pretrained(cls, path: str | Path | None, device: str | torch.device = "cpu") -> "GGIK":
        """:meth:`load` of ``path``, or :meth:`pretrained` when ``path`` is None (what ``--ckpt`` means in every command)."""
        model, ckpt = load_model_or_shipped(path, device)
        return cls(model, ckpt, device)

    @property
    def training_robots(self) -> dict:
        """What the model was trained on (:func:`ggik.checkpoint.training_set`; {} for a model without a checkpoint)."""
        return recorded_training_set(self.checkpoint) or {}

    def _graph(self, robot: Robot) -> RobotGraph:
        if robot not in self._graphs:
            self._graphs[robot] = RobotGraph.from_robot(robot)  # GraphError for chains the graph cannot take
        return self._graphs[robot]

    def solve(
        self,
        robot: Robot,
        T_goal: torch.Tensor,
        num_samples: int = 32,
        refine: str | None = None,
        generator: torch.Generator | None = None,
        pos_tol: float | None = None,
        rot_tol: float | None = None,
        goal: str = "pose",
    ) -> IKResult:
        """IK solutions for goals ``T_goal`` (4, 4) or (B, 4, 4): EE poses in ``robot``'s base-link frame.

        ``refine``: None (raw model samples), "lm" (batched Levenberg-Marquardt in joint space from every
        sample), "slsqp" (scipy SLSQP from every sample, slower), "dg" (every sampled point set projected
        onto the problem's known distances by Gauss-Newton, :mod:`ggik.ik.dg_refine`, then angle recovery) or
        "dg+lm" (LM from the "dg" result). All goals and samples go through the model in one batched pass.
        ``pos_tol`` [m] and ``rot_tol`` [rad]: the success tolerances of this call (default the solver's, 1 mm and
        0.01 rad); LM refines until they are met. Returns an :class:`IKResult` with B = number of goals,
        S = ``num_samples``.

        ``goal``: the goal kind (:mod:`ggik.graph.goal_kinds`). ``"pose"``: ``T_goal`` as above. ``"position"``:
        positions (3,) or (B, 3), or poses whose rotation is ignored; the model gets p_n only. ``"position+axis"``:
        a pair (position, axis) of (3,) or (B, 3) each, or poses of which only the tool axis (``RobotGraph.tool_axis``,
        the last joint's axis in the EE frame) counts; the roll about it is free. ``rot_err`` is then the angle
        between the tool axes (0 for ``"position"``). The shipped model was trained on all three kinds (v3 on), but its
        raw samples are rough starts for every kind (centimetres off, README "Where the model stands"); use ``refine="lm"``
        for solutions within tolerance.
        """
        if not isinstance(robot, Robot):
            raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
        if refine not in self.REFINE_METHODS:
            raise ValueError(f"refine must be one of {self.REFINE_METHODS}, got {refine!r}")
        if int(num_samples) != num_samples or num_samples < 1:
            raise ValueError(f"num_samples must be a positive integer, got {num_samples!r}")
        graph = self._graph(robot)
        if goal == "pose":
            T_goal = torch.as_tensor(T_goal)
            if T_goal.shape == (4, 4):
                T_goal = T_goal[None]
            if T_goal.ndim != 3 or T_goal.shape[-2:] != (4, 4):
                raise ValueError(f"T_goal must have shape (4, 4) or (B, 4, 4), got {tuple(T_goal.shape)}")
            T_goal = T_goal.to(torch.float64)
        goals = graph.goals(T_goal, goal)  # checked and mapped into the graph frame once
        if len(goals.shape) == 0:
            goals = goals[None]
        if len(goals.shape) != 1:
            raise ValueError(f"{goal} goals must be one goal or a batch (B, ...), got batch shape {tuple(goals.shape)}")
        goals = goals.to(torch.float64)
        raw = sample_joint_angles(self.model, graph, goals, num_samples, generator=generator)
        q, pos, rot = raw.q, raw.pos_err, raw.rot_err
        cfg = self._tolerances(pos_tol, rot_tol)
        if refine in ("dg", "dg+lm"):
            projected = dg_refine(graph, raw.points, goals, self.dg_config)
            q, pos, rot = projected.q, projected.pos_err, projected.rot_err
        if refine in ("lm", "slsqp", "dg+lm"):
            fn = slsqp_refine if refine == "slsqp" else lm_refine
            q, info = fn(robot, goals[:, None], q, cfg)
            pos, rot = info.pos_err, info.rot_err
        success = (pos < cfg.pos_tol) & (rot < cfg.rot_tol)
        return sort_best_first(q, pos, rot, success, robot.within_limits(q), cfg.pos_tol, cfg.rot_tol)

    def _tolerances(self, pos_tol: float | None, rot_tol: float | None) -> RefineConfig:
        for name, v in (("pos_tol", pos_tol), ("rot_tol", rot_tol)):
            if v is not None and not v > 0:
                raise ValueError(f"{name} must be positive, got {v!r}")
        return replace(self.config, pos_tol=pos_tol or self.config.pos_tol, rot_tol=rot_tol or self.config.rot_tol)

    def solve_path(
        self,
        robot: Robot,
        poses: torch.Tensor,
        num_samples: int | None = None,
        q_start: torch.Tensor | None = None,
        time_limit: float | None = None,
        pos_tol: float | None = None,
        rot_tol: float | None = None,
        config: PathConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> PathResult:
        """A joint trajectory that follows the EE path ``poses`` (T, 4, 4) (base-link frame), by
        :func:`ggik.ik.path.solve_path`: start candidates from ``num_samples`` model samples (None: the config's
        ``samples``, 8 by default; 0: random starts only, no model) and random starts (16 seeds in all), continuation along the path, a dynamic-programming
        search and LM on the whole trajectory, in rounds until a valid trajectory or ``time_limit`` [s].

        Valid: every waypoint within ``pos_tol`` (default 0.1 mm) and ``rot_tol`` (default 0.1 deg, in rad), every
        configuration within the joint limits, no joint moving more than 7 deg between waypoints
        (:class:`ggik.ik.path.PathConfig` holds these and every other option; the arguments override it).
        ``q_start`` (dof,): the configuration the robot starts from. Returns a :class:`PathResult`.
        """
        if not isinstance(robot, Robot):
            raise TypeError(f"robot must be a ggik.Robot, got {type(robot).__name__}")
        cfg = config or PathConfig()
        if num_samples is not None:
            if int(num_samples) != num_samples or num_samples < 0:
                raise ValueError(f"num_samples must be a non-negative integer, got {num_samples!r}")
            cfg = replace(cfg, samples=int(num_samples))
        for name, v in (("time_limit", time_limit), ("pos_tol", pos_tol), ("rot_tol", rot_tol)):
            if v is not None:
                cfg = replace(cfg, **{name: v})
        use_model = cfg.samples > 0 or cfg.track_samples > 0
        graph = self._graph(robot) if use_model else None
        return solve_path(robot, poses, cfg, self.model if use_model else None, graph, q_start, generator)

    def with_tolerances(self, pos_tol: float, rot_tol: float) -> "GGIK":
        """A solver sharing this model with other success tolerances [m, rad]."""
        other = GGIK.__new__(GGIK)
        other.__dict__.update(self.__dict__)
        other.config = replace(self.config, pos_tol=pos_tol, rot_tol=rot_tol)
        return other

