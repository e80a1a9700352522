"""Training data generated on the fly, and fixed problem sets stored in files.

* :class:`TrainingData` draws each training batch from a weighted mix of robots: named robots of
  ``urdfs/``, random DH robots (:func:`random_robot`) and randomised named robots
  (:func:`randomize_links`), all joints (the last included) uniform within their limits (or, for a share
  ``unlimited_fraction`` of the examples, uniform in [-pi, pi]). A batch is a
  pure function of ``(seed, step, rank)``: no state to save, exact resumption, and distinct data on
  every distributed rank.
* :class:`ProblemSet` is a fixed, seeded set of IK problems (goal poses with one known solution each)
  written by ``ggik data make`` and read back bit-identically. Robots are stored by name (shipped
  robots) or as URDF text (random robots), so a file is self-contained.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from ggik.errors import GGIKError
from ggik.fileio import atomic_write, load_torch_file
from ggik.graph.batch import GraphBatch
from ggik.graph.conventions import check_convention
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.graph.robot_graph import RobotGraph
from ggik.graph.stacked import StackedGraphs
from ggik.kinematics.joint_draws import uniform_joints
from ggik.kinematics.random_robots import random_robot, randomize_links
from ggik.kinematics.robot import Robot, available_robots
from ggik.kinematics.robot_files import RobotFile, training_robots
from ggik.rng import PROBLEM_GOALS, STACKED_RANDOM_ROBOTS, step_generator

__all__ = ["DataConfig", "TrainingData", "ProblemSet", "robot_from_entry", "robot_entry"]

PROBLEM_SET_FORMAT = "ggik-problems/1"
SAMPLERS = ("auto", "stacked", "per-robot")  #: values of :attr:`DataConfig.sampler`

#: the robots of ``urdfs/`` that the shipped model was trained on, in the order of its recorded config
SHIPPED_RECIPE_ROBOTS = (
    "ur10",
    "lbr_iiwa",
    "panda",
    "schunk_lwa4d",
    "schunk_lwa4p",
    "kuka_lwr",
    "irb140",
    "kr16_2",
    "puma560",
)


@dataclass
class DataConfig:
    """The mix of robots and goal kinds that training batches are drawn from. The defaults are the shipped
    model's mix: the nine robots of ``urdfs/`` alike, no random robots, goal kinds pose 0.5, position + tool axis
    0.2, position 0.3."""

    #: a urdfs/ robot's name -> its weight, or any name -> a URDF file or folder with its chain, locks and weight
    #: (:class:`ggik.kinematics.robot_files.RobotFile`, e.g. ``{urdf: F, ee_link: L, lock: {J: V}, weight: W}``)
    robots: dict[str, float | RobotFile] = field(default_factory=lambda: {name: 1.0 for name in SHIPPED_RECIPE_ROBOTS})
    random_weight: float = 0.0  #: weight of random DH robots
    random_dofs: list[int] = field(default_factory=lambda: [6, 7])  #: DOFs of random robots
    #: random robots of each kind (random, randomised) drawn for each batch (the stacked sampler: exactly so many of
    #: each kind, new every ``random_refresh`` steps; the per-robot sampler: at most so many)
    random_robots_per_batch: int = 8
    #: the stacked sampler draws new random and randomised robots every this many steps (1: every step). Drawing them
    #: can cost more than a GPU step: there a few consecutive steps may share them (their examples stay distinct)
    random_refresh: int = 1
    randomized_weight: float = 0.0  #: weight of randomize_links(named robot) examples
    randomize_fraction: float = 0.2  #: per-link scale range r of those, U[1 - r, 1 + r]
    batch_size: int = 128  #: examples per step (per process under DDP)
    seed: int = 0
    #: goal kind -> weight (:data:`ggik.graph.goal_kinds.GOAL_KINDS`): each robot's examples are split among the
    #: kinds by these weights. "pose" and "position+axis" give the model the same inputs (both anchor p_n and q_n);
    #: "position" anchors p_n alone. A robot whose EE is off its last joint axis gets pose goals only.
    goal_kinds: dict[str, float] = field(default_factory=lambda: {"pose": 0.5, "position+axis": 0.2, "position": 0.3})
    #: how a batch is made (:meth:`TrainingData.examples`): "stacked" (all robots and goal kinds in one vectorised pass
    #: on the training device, :class:`ggik.graph.stacked.StackedGraphs`: the named robots and the step's
    #: ``random_robots_per_batch`` random and randomised robots), "per-robot" (one robot and goal kind at a time on the
    #: CPU, :meth:`TrainingData.batch`) or "auto" (stacked for named robots only, else per-robot: the stream of runs
    #: made before random robots could be stacked). The two draw different examples from the same seed.
    sampler: str = "auto"
    #: r [m] > 0: each example's end effector is moved along its tool axis by U[-r, r] (a random tool offset, so that
    #: a tool frame moved along the last axis is no new robot to the model; stacked sampler only). 0: off
    tool_offset: float = 0.0
    #: f in [0, 1]: the share of examples whose joint values are drawn uniformly in [-pi, pi] on every joint, limits
    #: ignored (the GGIK paper's protocol; unlike the paper, the last joint is drawn too, not set to 0), instead of
    #: within the limits. Each example's choice is one more uniform of the step's stream, drawn only when f > 0: at 0
    #: the examples are exactly those of a run without this key. Both samplers
    unlimited_fraction: float = 0.0
    #: with ``unlimited_fraction`` > 0: those examples' last joint is 0 instead of drawn, as the GGIK paper's data and
    #: goals have it (:func:`ggik.kinematics.paper_goals.paper_goal_q`); no number is drawn for it, and the other
    #: joints are those of a run without this key. False: the last joint is drawn like the others
    unlimited_last_joint_zero: bool = False


def _pick(weights: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """(B,) long: per row of ``weights`` (B, K) >= 0 (positive sums), the index that uniforms ``u`` (B,) in [0, 1)
    pick with probability proportional to the weights (an index of weight 0 is never picked)."""
    cum = weights.cumsum(-1)
    idx = torch.searchsorted(cum, (u * cum[:, -1])[:, None], right=True)[:, 0]
    return idx.clamp(max=weights.shape[1] - 1)


def _categorical(weights: list[float], n: int, g: torch.Generator) -> torch.Tensor:
    w = torch.tensor(weights, dtype=torch.float64)
    idx = torch.multinomial(w / w.sum(), n, replacement=True, generator=g)
    return torch.bincount(idx, minlength=len(weights))


class TrainingData:
    """Batches of solved examples, drawn on the fly from :class:`DataConfig`, on graphs of ``convention`` (the model's
    ``cfg.graph``). ``stored_files``: {name: record} a checkpoint kept: those robots are rebuilt from the kept text."""

    def __init__(self, cfg: DataConfig, convention: str = "frames", stored_files: dict | None = None) -> None:
        self.robots = training_robots(cfg.robots, stored_files)  #: the named robots (shipped and from files), in order
        self._named_weights = [tr.weight for tr in self.robots]
        weights = self._named_weights + [cfg.random_weight, cfg.randomized_weight]
        if any(w < 0 for w in weights) or sum(weights) <= 0:
            raise GGIKError(f"data weights must be >= 0 with a positive sum, got {weights}")
        if cfg.randomized_weight > 0 and not cfg.robots:
            raise GGIKError("randomized_weight > 0 needs named robots to randomise")
        if cfg.random_weight > 0 and (not cfg.random_dofs or min(cfg.random_dofs) < 2):
            raise GGIKError(f"random_dofs must be a non-empty list of DOF >= 2, got {cfg.random_dofs}")
        bad_kinds = [k for k in cfg.goal_kinds if k not in GOAL_KINDS]
        if bad_kinds or any(w < 0 for w in cfg.goal_kinds.values()) or sum(cfg.goal_kinds.values()) <= 0:
            raise GGIKError(
                f"data.goal_kinds must map kinds of {GOAL_KINDS} to weights >= 0 with a positive sum, "
                f"got {cfg.goal_kinds}"
            )
        if cfg.sampler not in SAMPLERS:
            raise GGIKError(f"data.sampler must be one of {SAMPLERS}, got {cfg.sampler!r}")
        named_only = cfg.random_weight == 0 and cfg.randomized_weight == 0
        if not named_only and (cfg.random_robots_per_batch < 1 or cfg.random_refresh < 1):
            n, k = cfg.random_robots_per_batch, cfg.random_refresh
            raise GGIKError(f"data.random_robots_per_batch and data.random_refresh must be >= 1, got {n} and {k}")
        if cfg.random_refresh != 1 and cfg.sampler != "stacked":  # the per-robot sampler draws new ones every step
            raise GGIKError(f"data.random_refresh {cfg.random_refresh} needs data.sampler 'stacked'")
        if not 0.0 <= cfg.unlimited_fraction <= 1.0:  # NaN fails too
            raise GGIKError(f"data.unlimited_fraction must be a share in [0, 1], got {cfg.unlimited_fraction}")
        if cfg.unlimited_last_joint_zero and cfg.unlimited_fraction == 0:
            raise GGIKError("data.unlimited_last_joint_zero needs data.unlimited_fraction > 0 (their last joint)")
        if cfg.tool_offset < 0 or cfg.tool_offset != cfg.tool_offset:
            raise GGIKError(f"data.tool_offset must be a length >= 0 [m], got {cfg.tool_offset}")
        self.cfg = cfg
        self.sampler = "stacked" if cfg.sampler == "auto" and named_only else cfg.sampler.replace("auto", "per-robot")
        self._kinds = {k: float(w) for k, w in cfg.goal_kinds.items() if w > 0}
        self.convention = check_convention(convention)
        self.graphs = {tr.name: RobotGraph.from_robot(tr.robot, convention) for tr in self.robots}
        self._weights = weights
        self._stacks: dict[tuple, tuple[StackedGraphs, torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        if cfg.tool_offset > 0 and self.sampler != "stacked":
            raise GGIKError(
                "data.tool_offset needs the stacked sampler (data.sampler 'stacked', or 'auto' with named robots only)"
            )

    def describe(self) -> dict:
        """What the model is trained on (stored in checkpoints): decides what counts as unseen."""
        c = self.cfg
        return {
            "named": {tr.name: tr.weight for tr in self.robots if tr.record is None},
            "files": {tr.name: tr.record for tr in self.robots if tr.record is not None},
            "random": {"weight": c.random_weight, "dofs": list(c.random_dofs)},
            "randomized": {"weight": c.randomized_weight, "fraction": c.randomize_fraction},
            "goal_kinds": dict(self._kinds),
        }

    def batch(
        self, step: int, rank: int = 0, batch_size: int | None = None
    ) -> tuple[GraphBatch, list[RobotGraph], list[int]]:
        """The batch of ``step`` for process ``rank``: (GraphBatch in float64, graphs, examples per graph)."""
        c = self.cfg
        B = batch_size or c.batch_size
        g = step_generator(c.seed, step, rank)
        counts = _categorical(self._weights, B, g).tolist()
        names = list(self.graphs)
        graphs: list[RobotGraph] = []
        sizes: list[int] = []
        for name, k in zip(names, counts[: len(names)]):
            if k:
                graphs.append(self.graphs[name])
                sizes.append(k)
        n_random, n_randomized = counts[len(names)], counts[len(names) + 1]
        if n_random:
            R = min(c.random_robots_per_batch, n_random)
            split = [n_random // R + (1 if i < n_random % R else 0) for i in range(R)]
            for k in split:
                dof = c.random_dofs[int(torch.randint(len(c.random_dofs), (), generator=g))]
                graphs.append(RobotGraph.from_robot(random_robot(dof, g), self.convention))
                sizes.append(k)
        if n_randomized:
            R = min(c.random_robots_per_batch, n_randomized)
            split = [n_randomized // R + (1 if i < n_randomized % R else 0) for i in range(R)]
            base_w = self._named_weights
            for k in split:
                base = names[int(torch.multinomial(torch.tensor(base_w, dtype=torch.float64), 1, generator=g))]
                robot = randomize_links(self.graphs[base].robot, c.randomize_fraction, g)
                graphs.append(RobotGraph.from_robot(robot, self.convention))
                sizes.append(k)
        parts = [self._examples(gr, self._sample_q(gr.robot, k, g), g) for gr, k in zip(graphs, sizes)]
        return GraphBatch.cat(parts), graphs, sizes

    def examples(self, step: int, rank: int = 0, device: torch.device | str = "cpu", batch_size: int | None = None):
        """The training batch of ``step`` for process ``rank`` (a float64 :class:`GraphBatch` on ``device``), made by
        the configured sampler: :meth:`stacked_batch` or, for "per-robot", :meth:`batch` moved to ``device``."""
        if self.sampler == "stacked":
            return self.stacked_batch(step, rank, device, batch_size)
        return self.batch(step, rank, batch_size)[0].to(device)

    def stack(self, device: torch.device | str = "cpu", step: int = 0, rank: int = 0) -> StackedGraphs:
        """The robots of the stacked batch of ``(step, rank)`` as one :class:`StackedGraphs` on ``device``: the R named
        robots (with no random robots the same stack for every step, built once per device), then the step's random
        and randomised robots (:meth:`random_graphs`). On canonical graphs these R' robots are followed by their graphs
        for position goals (:meth:`RobotGraph.for_goal_kind`), never drawn, only mapped to."""
        return self._stacked(device, step, rank)[0]

    def random_graphs(self, step: int, rank: int = 0) -> tuple[list[RobotGraph], list[float]]:
        """The random DH robots and randomised named robots that the stacked sampler draws for ``(step, rank)`` (each
        kind ``random_robots_per_batch`` robots, from their own stream, the same for the ``random_refresh`` steps of a
        block), their graphs and their weights (the kind's weight shared among them)."""
        c = self.cfg
        block = step - step % c.random_refresh  # keyed by the block's first step: changing random_refresh replays none
        g = step_generator(c.seed, STACKED_RANDOM_ROBOTS, block, rank, 1)  # a last key != 0 (SeedSequence drops zeros)
        R, graphs, weights = c.random_robots_per_batch, [], []
        for i in range(R if c.random_weight > 0 else 0):
            dof = c.random_dofs[int(torch.randint(len(c.random_dofs), (), generator=g))]
            graphs.append(RobotGraph.from_robot(random_robot(dof, g, name=f"random{i}"), self.convention))
        named, base_w = list(self.graphs.values()), torch.tensor(self._named_weights, dtype=torch.float64)
        for _ in range(R if c.randomized_weight > 0 else 0):
            base = named[int(torch.multinomial(base_w, 1, generator=g))].robot
            graphs.append(RobotGraph.from_robot(randomize_links(base, c.randomize_fraction, g), self.convention))
        for w in (c.random_weight, c.randomized_weight):
            weights += [w / R] * (R if w > 0 else 0)
        return graphs, weights

    def _stacked(
        self, device: torch.device | str, step: int, rank: int
    ) -> tuple[StackedGraphs, torch.Tensor, torch.Tensor, torch.Tensor]:
        """(the stack, robot weights (len(stack),), goal-kind weights (kinds,) and pose-only weights (kinds,) stacked as
        (2, kinds), and (len(stack), kinds) the stack index of the graph that poses each kind for each robot
        (:meth:`ggik.RobotGraph.for_goal_kind`)) on ``device``: built once for named robots only (no per-step tensor
        construction or host-to-device copy of constants), else once per block of ``random_refresh`` steps (the last
        block's kept). Sibling graphs for position goals (canonical graphs) weigh 0: they are never drawn, only mapped
        to."""
        device = torch.device(device)
        fixed = self.cfg.random_weight == 0 and self.cfg.randomized_weight == 0
        key = (device,) if fixed else (device, step // self.cfg.random_refresh, rank)
        if key not in self._stacks:
            if not fixed:  # only the current block's stack is kept
                self._stacks.clear()
            graphs, weights = list(self.graphs.values()), list(self._named_weights)
            if not fixed:
                extra, extra_w = self.random_graphs(step, rank)
                graphs, weights = graphs + extra, weights + extra_w
            if self.convention == "canonical":  # position goals fix the tool point: their own graphs, never drawn
                graphs += [g.for_goal_kind("position") for g in graphs]
                weights += [0.0] * len(weights)
            stack = StackedGraphs(graphs, device)
            at = {id(g): i for i, g in enumerate(graphs)}  # (R, kinds): the stack index of the graph posing each kind
            posing = torch.tensor([[at[id(g.for_goal_kind(k))] for k in GOAL_KINDS] for g in graphs], device=device)
            robot_w = torch.tensor(weights, dtype=torch.float64, device=device)
            kind_w = torch.tensor([self._kinds.get(k, 0.0) for k in GOAL_KINDS], dtype=torch.float64, device=device)
            pose_only = (torch.arange(len(GOAL_KINDS), device=device) == GOAL_KINDS.index("pose")).to(torch.float64)
            self._stacks[key] = (stack, robot_w, torch.stack([kind_w, pose_only]), posing)
        return self._stacks[key]

    def stacked_batch(
        self, step: int, rank: int = 0, device: torch.device | str = "cpu", batch_size: int | None = None
    ) -> GraphBatch:
        """The batch of ``step`` for ``rank``, all robots and goal kinds made in one vectorised pass on ``device``
        (:meth:`StackedGraphs.examples` of :meth:`stacked_draws`). Examples are interleaved, not grouped by robot."""
        robot, q, kind, offset = self.stacked_draws(step, rank, device, batch_size)
        return self.stack(device, step, rank).examples(robot, q, kind, offset)

    def stacked_draws(
        self, step: int, rank: int = 0, device: torch.device | str = "cpu", batch_size: int | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """What the batch of ``step`` for ``rank`` holds: robot (B,) (index into :meth:`stack`), q (B, n_max), goal kind
        (B,) (index into :data:`GOAL_KINDS`) and tool offset (B,) [m] (None when ``tool_offset`` is 0), on ``device``.

        Per example, one row of uniforms drawn on the CPU from ``(seed, step, rank)`` (so the data are the same on every
        device) picks the robot among the R' robots of ``stack(device, step, rank)`` (by ``robots`` weights and, shared
        among the step's random and randomised robots, ``random_weight`` and ``randomized_weight``), the goal kind (by
        ``goal_kinds`` weights among the kinds the robot takes: a robot whose EE is off its last axis gets poses) and
        the configuration (uniform within the limits, all joints; a share ``unlimited_fraction`` of the examples, picked
        by a last column of uniforms drawn only when it is > 0: uniform in [-pi, pi], their last joint 0 with
        ``unlimited_last_joint_zero``). On canonical graphs a position goal's example is made on its robot's graph for
        position goals (the stack index of the graph posing each kind: from :meth:`ggik.RobotGraph.for_goal_kind`), and
        only those examples keep a tool offset (the other kinds' graphs do not depend on the tool).
        """
        c = self.cfg
        if not self.graphs:
            raise GGIKError("the stacked sampler needs named robots (data.robots is empty)")
        stack, robot_w, kind_w, posing = self._stacked(device, step, rank)
        B = batch_size or c.batch_size
        g = step_generator(c.seed, step, rank)
        u = torch.rand(B, 2 + stack.n_max, generator=g, dtype=torch.float64)
        if c.tool_offset > 0:  # drawn after the rest: the other draws are those of a run without offsets
            u = torch.cat([u, torch.rand(B, 1, generator=g, dtype=torch.float64)], dim=1)
        if c.unlimited_fraction > 0:  # drawn last: the other draws are those of a run without it
            u = torch.cat([u, torch.rand(B, 1, generator=g, dtype=torch.float64)], dim=1)
        if stack.device.type == "cuda":
            u = u.pin_memory().to(stack.device, non_blocking=True)
        u = u.to(stack.device)
        robot = _pick(robot_w.expand(B, -1), u[:, 0])
        per_robot = torch.where(stack.partial_ok[:, None], kind_w[0], kind_w[1])  # (R, kinds): off-axis EE: poses
        kind = _pick(per_robot[robot], u[:, 1])
        offset = c.tool_offset * (2.0 * u[:, 2 + stack.n_max] - 1.0) if c.tool_offset > 0 else None
        unlimited = u[:, -1] < c.unlimited_fraction if c.unlimited_fraction > 0 else None
        robot = posing[robot, kind]  # each example on the graph that poses its kind
        if self.convention == "canonical" and offset is not None:  # it moves no point of a canonical graph but p_n of
            position = kind == GOAL_KINDS.index("position")  # the graph of position goals, the tool point
            offset = torch.where(position, offset, torch.zeros_like(offset))
        q = stack.sample_q(robot, u[:, 2 : 2 + stack.n_max], unlimited)
        if c.unlimited_last_joint_zero and unlimited is not None:  # the paper's data: their last joint 0
            last = torch.arange(stack.n_max, device=q.device) == (stack.num_joints[robot] - 1)[:, None]  # (B, n_max)
            q = q.masked_fill(last & unlimited[:, None], 0.0)
        return robot, q, kind, offset

    def _sample_q(self, robot: Robot, k: int, g: torch.Generator) -> torch.Tensor:
        """``k`` configurations (k, dof) [rad] of the per-robot sampler: :meth:`Robot.sample_q` (uniform within the
        limits) and, when ``unlimited_fraction`` f > 0, then one uniform per example: below f, that example's joints
        are uniform in [-pi, pi] (its uniforms mapped to that range; its last joint 0 with
        ``unlimited_last_joint_zero``)."""
        f = self.cfg.unlimited_fraction
        if f == 0:
            return robot.sample_q(k, g)
        u = torch.rand(k, robot.dof, generator=g, dtype=torch.float64)  # the draws of Robot.sample_q
        free = (torch.rand(k, generator=g, dtype=torch.float64) < f)[:, None]
        q = uniform_joints(u, robot.lower.to(torch.float64), robot.upper.to(torch.float64), free)
        if self.cfg.unlimited_last_joint_zero:  # the paper's data: their last joint 0
            q[:, -1] = torch.where(free[:, 0], 0.0, q[:, -1])
        return q

    def _examples(self, graph: RobotGraph, q: torch.Tensor, g: torch.Generator) -> GraphBatch:
        """Solved examples of configurations ``q`` (k, dof), their goals split among the goal kinds.

        With one kind no random number is drawn (the data stream of runs made before goal kinds is unchanged).
        """
        kinds = list(self._kinds) if graph.supports_partial_goals else ["pose"]
        if len(kinds) == 1:
            return GraphBatch.from_graph(graph, q=q, kind=kinds[0])
        counts = _categorical([self._kinds[k] for k in kinds], q.shape[0], g).tolist()
        chunks = torch.split(q, counts)
        return GraphBatch.cat([GraphBatch.from_graph(graph, q=c, kind=k) for k, c in zip(kinds, chunks) if c.shape[0]])


# ---------------------------------------------------------------------- problem sets
def robot_entry(robot: Robot) -> dict:
    """How a robot is stored in files: by name if it is a shipped robot, else as URDF text."""
    if robot.name in available_robots() and robot.source.startswith("urdfs/"):
        return {"name": robot.name, "urdf": ""}
    return {"name": robot.name, "urdf": robot.to_urdf()}


def robot_from_entry(entry: dict) -> Robot:
    return Robot.from_name(entry["name"]) if not entry["urdf"] else Robot.from_urdf(entry["urdf"])


@dataclass
class ProblemSet:
    """P fixed IK problems over R robots.

    Attributes:
        robots: R entries ``{"name", "urdf"}`` (``urdf`` empty for shipped robots).
        robot_index: (P,) long, the robot of each problem.
        q: (P, dof_max) float64, one known solution per problem (0-padded beyond the robot's DOF).
        T_goal: (P, 4, 4) float64, EE goal in the robot's base-link frame (= FK(q)).
        seed: the seed it was generated with.
    """

    robots: list[dict]
    robot_index: torch.Tensor
    q: torch.Tensor
    T_goal: torch.Tensor
    seed: int

    @classmethod
    def generate(cls, robots: list[Robot], per_robot: int, seed: int) -> ProblemSet:
        """``per_robot`` problems for each robot, q uniform within the limits (all joints)."""
        if per_robot < 1 or not robots:
            raise GGIKError("a problem set needs at least one robot and one problem per robot")
        g = step_generator(seed, PROBLEM_GOALS)
        dof_max = max(r.dof for r in robots)
        qs, Ts, idx = [], [], []
        for i, robot in enumerate(robots):
            q = robot.sample_q(per_robot, g)
            Ts.append(robot.fk(q))
            qs.append(torch.nn.functional.pad(q, (0, dof_max - robot.dof)))
            idx.append(torch.full((per_robot,), i, dtype=torch.long))
        return cls([robot_entry(r) for r in robots], torch.cat(idx), torch.cat(qs), torch.cat(Ts), seed)

    def save(self, path: str | Path) -> Path:
        payload = {
            "format": PROBLEM_SET_FORMAT,
            "robots": self.robots,
            "robot_index": self.robot_index,
            "q": self.q,
            "T_goal": self.T_goal,
            "seed": self.seed,
        }
        return atomic_write(path, lambda f: torch.save(payload, f))

    @classmethod
    def load(cls, path: str | Path) -> ProblemSet:
        payload = load_torch_file(path, PROBLEM_SET_FORMAT, "problem set")
        return cls(payload["robots"], payload["robot_index"], payload["q"], payload["T_goal"], int(payload["seed"]))

    def __len__(self) -> int:
        return int(self.robot_index.shape[0])

    def groups(self) -> list[tuple[Robot, torch.Tensor, torch.Tensor]]:
        """Per robot: (Robot, q (P_r, dof), T_goal (P_r, 4, 4))."""
        out = []
        for i, entry in enumerate(self.robots):
            robot = robot_from_entry(entry)
            sel = self.robot_index == i
            out.append((robot, self.q[sel, : robot.dof], self.T_goal[sel]))
        return out
