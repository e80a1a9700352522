"""Several robots' graphs as one padded stack of tensors: solved examples of any mix of robots and goal kinds in one
vectorised pass, on any device.

:meth:`GraphBatch.from_graph` builds the examples of one robot and one goal kind; a training batch of nine robots and
three goal kinds then takes 27 such calls and a concatenation, a few hundred small operations per robot that dominate
a training step on a GPU and cost most of a CPU step's data time. :class:`StackedGraphs` holds every per-robot constant
padded to the largest chain (``n_max`` joints, ``N = 2 n_max + 4`` nodes) and makes the same examples for B (robot,
configuration, goal kind) triples at once: one forward-kinematics loop over ``n_max`` joints, the goal of each kind,
the partial graph, all with per-example indexing instead of per-robot loops. The result equals
:meth:`GraphBatch.from_graph` of each example to rounding (tested), padded to ``N`` nodes like :meth:`GraphBatch.cat`.

Padding: a robot of n < n_max joints gets identity joint transforms beyond its last joint (with its padded joint values
forced to 0 its last frame is unchanged); its padded nodes are 0 with ``node_mask`` False, as :meth:`GraphBatch.cat`
pads them.
"""

from __future__ import annotations

import torch

from ggik.errors import GGIKError
from ggik.graph.batch import GraphBatch, node_volumes
from ggik.graph.frames import AXIS_LENGTH, points_from_frames, rz_left
from ggik.graph.goal_kinds import GOAL_KINDS
from ggik.graph.robot_graph import RobotGraph
from ggik.kinematics import geometry as geo
from ggik.kinematics.joint_draws import uniform_joints

__all__ = ["StackedGraphs"]

_POSE, _AXIS, _POSITION = (GOAL_KINDS.index(k) for k in ("pose", "position+axis", "position"))


def _pad(t: torch.Tensor, size: tuple[int, ...], fill: float | bool = 0) -> torch.Tensor:
    """``t`` placed at the start of a tensor of ``size`` filled with ``fill``."""
    out = torch.full(size, fill, dtype=t.dtype)
    out[tuple(slice(0, s) for s in t.shape)] = t
    return out


class StackedGraphs:
    """The graphs of R robots, padded to ``n_max`` joints, as tensors on one device.

    Args:
        graphs: the robots' graphs (R >= 1).
        device: where the tensors live and examples are made.
        dtype: floating dtype of the constants and examples (float64 by default: examples equal the per-robot path).

    Attributes:
        n_max: the largest DOF; N = 2 n_max + 4 nodes.
        lower, upper: (R, n_max) joint limits [rad], 0 beyond a robot's DOF (continuous joints: -pi, pi).
        partial_ok: (R,) bool, whether the robot takes partial goal kinds (:attr:`RobotGraph.supports_partial_goals`).
    """

    def __init__(
        self, graphs: list[RobotGraph], device: torch.device | str = "cpu", dtype: torch.dtype = torch.float64
    ) -> None:
        if not graphs:
            raise GGIKError("StackedGraphs needs at least one robot graph")
        self.graphs = list(graphs)
        self.device, self.dtype = torch.device(device), dtype
        n_max = max(g.n for g in graphs)
        N = 2 * n_max + 4
        self.n_max, self.num_nodes = n_max, N

        def stack(items: list[torch.Tensor], size: tuple[int, ...], fill: float | bool = 0) -> torch.Tensor:
            return torch.stack([_pad(t, size, fill) for t in items]).to(self.device)

        eye = torch.eye(4, dtype=torch.float64)

        def floats(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=self.device, dtype=dtype)

        #: (R, n_max, 4, 4) F_{i-1}^-1 F_i at home, identity beyond each chain
        self.C = floats(torch.stack([torch.cat([g.C, eye.expand(n_max - g.n, 4, 4)]) for g in graphs]))
        self.T_base_graph = floats(torch.stack([g.T_base_graph for g in graphs]))  # (R, 4, 4)
        self.graph_base = floats(torch.stack([geo.invert_transform(g.T_base_graph) for g in graphs]))
        self.T_tool = floats(torch.stack([g.T_tool for g in graphs]))
        self.tool_ee = floats(torch.stack([geo.invert_transform(g.T_tool) for g in graphs]))
        self.tool_axis = floats(torch.stack([g.tool_axis for g in graphs]))  # (R, 3)
        self.home_base = floats(torch.stack([g.home[:4] for g in graphs]))  # (R, 4, 3): p0, x, y, q0
        self.D_const = floats(torch.stack([_pad(g.D_const, (N, N)) for g in graphs]))
        self.lower = floats(torch.stack([_pad(g.robot.lower, (n_max,)) for g in graphs]))
        self.upper = floats(torch.stack([_pad(g.robot.upper, (n_max,)) for g in graphs]))
        self.node_mask = stack([torch.ones(g.num_nodes, dtype=torch.bool) for g in graphs], (N,), False)
        self.anchor_mask = stack([g.anchor_mask for g in graphs], (N,), False)
        self.known_mask = stack([g.known_mask for g in graphs], (N, N), False)
        self.constant_mask = stack([g.constant_mask for g in graphs], (N, N), False)
        self.node_type = stack([g.node_type for g in graphs], (N,))
        self.node_kind = stack([g.node_kind for g in graphs], (N,))
        self.node_frame = stack([g.node_frame for g in graphs], (N,))
        self.node_volume = floats(stack([node_volumes(g) for g in graphs], (N,)))  # (R, N) [m^3]
        self.num_joints = torch.tensor([g.n for g in graphs], device=self.device)
        self.joint_mask = torch.arange(n_max, device=self.device) < self.num_joints[:, None]  # (R, n_max)
        self.partial_ok = torch.tensor([g.supports_partial_goals for g in graphs], device=self.device)

    def __len__(self) -> int:
        return len(self.graphs)

    def sample_q(self, robot: torch.Tensor, u: torch.Tensor, unlimited: torch.Tensor | None = None) -> torch.Tensor:
        """Configurations (B, n_max) [rad] uniform within the limits from uniforms ``u`` (B, n_max) in [0, 1) (on this
        device), as :meth:`Robot.sample_q` maps them; 0 beyond each robot's DOF. ``unlimited``: optional (B,) bool,
        the examples whose joints are instead uniform in [-pi, pi] (limits ignored; the same ``u``, mapped to that
        range)."""
        free = None if unlimited is None else unlimited[:, None] & self.joint_mask[robot]  # padded joints stay 0
        return uniform_joints(u.to(self.dtype), self.lower[robot], self.upper[robot], free)

    def examples(
        self, robot: torch.Tensor, q: torch.Tensor, kind: torch.Tensor, tool_offset: torch.Tensor | None = None
    ) -> GraphBatch:
        """Solved examples (a :class:`GraphBatch` of B problems, N nodes, on this device).

        Args:
            robot: (B,) long, index of each example's robot in ``graphs``.
            q: (B, n_max) its joint values [rad] (entries beyond the robot's DOF are ignored and stored as 0).
            kind: (B,) long, its goal kind as an index into :data:`ggik.graph.goal_kinds.GOAL_KINDS`; a partial kind
                needs a robot with ``partial_ok``. Not checked here (a check waits for the device): the sampler never
                draws one for another robot; other callers check with :meth:`check_kinds`.
            tool_offset: optional (B,) [m]: each example's robot gets its end effector moved this far along the tool
                axis (``robot.with_tool(translation(offset * tool_axis))``): the last graph frame moves with it, and
                the constant known distances are measured on the solution's points. That is the graph of such a robot
                where p_n is the tool point (every "frames" graph, the canonical graphs of position goals); a
                canonical pose graph keeps p_n where it is, so give its examples no offset (as
                :meth:`ggik.data.TrainingData.stacked_draws` does).
        """
        B, n_max, N = robot.shape[0], self.n_max, self.num_nodes
        if q.shape != (B, n_max) or kind.shape != (B,):
            raise GGIKError(
                f"examples needs robot (B,), q (B, {n_max}) and kind (B,), got "
                f"{tuple(robot.shape)}, {tuple(q.shape)}, {tuple(kind.shape)}"
            )
        dev, dt = self.device, self.dtype
        q = torch.where(self.joint_mask[robot], q.to(dev, dt), torch.zeros((), dtype=dt, device=dev))
        C = self.C[robot]
        if tool_offset is not None:  # F_n' = F_n @ translation(offset e_z): the last C's translation moves along its z
            last = self.num_joints[robot] - 1
            rows = torch.arange(B, device=dev)
            C = C.clone()
            C[rows, last, :3, 3] += tool_offset.to(dev, dt)[:, None] * C[rows, last, :3, 2]
        T = torch.eye(4, dtype=dt, device=dev).expand(B, 4, 4)
        frames = [T]
        for i in range(n_max):
            T = T @ rz_left(q[:, i], C[:, i])
            frames.append(T)
        node_mask = self.node_mask[robot]
        pos = points_from_frames(torch.stack(frames, dim=1)) * node_mask[..., None]
        T_ee = self.T_base_graph[robot] @ T @ self.T_tool[robot]  # T = F_n: identity joints beyond the chain

        # goals of each kind as canonical poses (ggik.graph.goal_kinds.goal_poses), selected per example
        p, axis = T_ee[:, :3, 3], self.tool_axis[robot]
        a = T_ee[:, :3, :3] @ axis[:, :, None]
        axis_goal = geo.make_transform(geo.rotation_between(axis, a[..., 0]), p)
        position_goal = geo.translation(p)
        is_axis, is_position = (kind == _AXIS)[:, None, None], (kind == _POSITION)[:, None, None]
        T_goal = torch.where(is_position, position_goal, torch.where(is_axis, axis_goal, T_ee))
        G = self.graph_base[robot] @ T_goal @ self.tool_ee[robot]

        # the partial graph (RobotGraph.partial), with per-example node indices of p_n and q_n
        rows = torch.arange(B, device=dev)
        pn, qn = 2 * self.num_joints[robot] + 2, 2 * self.num_joints[robot] + 3
        known_positions = torch.zeros(B, N, 3, dtype=dt, device=dev)
        known_positions[:, :4] = self.home_base[robot]
        known_positions[rows, pn] = G[:, :3, 3]
        known_positions[rows, qn] = G[:, :3, 3] + AXIS_LENGTH * G[:, :3, 2]
        D_goal = RobotGraph.distances(known_positions)
        position = kind == _POSITION
        known_positions[rows, qn] *= (~position)[:, None].to(dt)
        anchor_mask = self.anchor_mask[robot].clone()
        anchor_mask[rows, qn] &= ~position
        known_mask = self.known_mask[robot].clone()
        base = torch.arange(4, device=dev)
        keep = ~position[:, None].expand(B, 4)
        known_mask[rows[:, None], base[None, :], qn[:, None]] &= keep
        known_mask[rows[:, None], qn[:, None], base[None, :]] &= keep
        goal_mask = known_mask & ~self.constant_mask[robot]
        constant = self.constant_mask[robot]
        D_const = self.D_const[robot] if tool_offset is None else RobotGraph.distances(pos) * constant
        known_distances = torch.where(goal_mask, D_goal, D_const)
        return GraphBatch(
            node_mask=node_mask,
            anchor_mask=anchor_mask,
            node_type=self.node_type[robot],
            node_kind=self.node_kind[robot],
            node_frame=self.node_frame[robot],
            num_joints=self.num_joints[robot],
            known_positions=known_positions,
            known_distances=known_distances,
            known_mask=known_mask,
            goal=G,
            T_goal=T_goal,
            pos=pos,
            q=q,
            node_volume=self.node_volume[robot],
        )

    def check_kinds(self, robot: torch.Tensor, kind: torch.Tensor) -> None:
        """``GGIKError`` if an example asks a partial goal kind of a robot whose EE is off its last joint axis."""
        bad = (kind != _POSE) & ~self.partial_ok[robot]
        if bool(bad.any()):
            names = sorted({self.graphs[int(r)].robot.name for r in robot[bad].tolist()})
            raise GGIKError(f"partial goal kinds asked of robots whose EE is off the last joint axis: {names}")
