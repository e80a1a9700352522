"""Serial kinematic chains: URDF / DH -> :class:`Robot` with batched, differentiable FK and Jacobians.

A :class:`Robot` is the chain of URDF joints from a base link to an end-effector (EE) link. Joint
values ``q`` (..., dof) hold the *independent* joints (revolute, continuous, prismatic; mimic joints
follow their source, fixed joints are constant) in chain order, in radians or metres. Poses are
(..., 4, 4) homogeneous matrices in the base-link frame.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import torch

from ggik.errors import ChainError
from ggik.kinematics import geometry as geo
from ggik.kinematics.chain_fk import chain_constants, chain_frames
from ggik.kinematics.chains import dh_chain, serial_chain
from ggik.kinematics.consts import ConstCache
from ggik.kinematics.derived import MOVING_JOINT_TYPES, locked_joints, tool_joints
from ggik.kinematics.registry import available_robots, shipped_robots
from ggik.kinematics.urdf import SUPPORTED_JOINT_TYPES, JointSpec, read_urdf, write_urdf
from ggik.kinematics.urdf_collision import CollisionShape

__all__ = ["Robot", "available_robots"]  # available_robots: re-exported from ggik.kinematics.registry

_MOVING = MOVING_JOINT_TYPES


class Robot:
    """A serial chain with batched forward kinematics.

    Build one with :meth:`from_urdf`, :meth:`from_dh` or :meth:`from_name`.

    Attributes:
        name: robot name.
        base_link, ee_link: names of the chain's first and last links.
        joints: every URDF joint on the chain (fixed and mimic included), base to EE.
        joint_names: the ``dof`` independent joints in chain order (the columns of ``q``).
        joint_types: their URDF types.
        lower, upper: (dof,) float64 sampling range per joint [rad or m]; a continuous joint
            samples in [-pi, pi] but is unbounded for refinement (``limited`` False).
        limited: (dof,) bool, whether ``lower``/``upper`` are hard limits.
    """

    def __init__(
        self,
        joints: Sequence[JointSpec],
        name: str = "robot",
        source: str = "",
        collision_shapes: Mapping[str, tuple[CollisionShape, ...]] | None = None,
        urdf_links: Sequence[str] | None = None,
    ) -> None:
        joints = tuple(joints)
        if not joints:
            raise ChainError(f"{name}: the chain has no joints")
        for prev, nxt in zip(joints[:-1], joints[1:]):
            if prev.child != nxt.parent:
                raise ChainError(f"{name}: joints {prev.name!r} and {nxt.name!r} are not consecutive on a chain")
        for j in joints:
            if j.type not in SUPPORTED_JOINT_TYPES:
                raise ChainError(
                    f"{name}: joint {j.name!r} has type {j.type!r}; ggik supports {', '.join(SUPPORTED_JOINT_TYPES)}"
                )
        self.name = name
        self.joints = joints
        self.base_link = joints[0].parent
        self.ee_link = joints[-1].child
        self.source = source
        #: the URDF ``<collision>`` shapes of the chain's links ({link: shapes}; :mod:`ggik.collision` reads them)
        self.collision_shapes = {k: tuple(v) for k, v in (collision_shapes or {}).items() if k in self.link_names}
        #: every link of the URDF the chain came from (off the chain too: grippers, sensors), the chain's links first;
        #: the chain's links alone for a robot without a URDF (an SRDF's link names are checked against these)
        self.urdf_links = tuple(dict.fromkeys([*self.link_names, *(urdf_links or ())]))

        moving = [j for j in joints if j.type in _MOVING]
        if not moving:
            raise ChainError(
                f"{name}: no movable joint between {self.base_link!r} and {self.ee_link!r} (all joints are fixed)"
            )
        independent = [j for j in moving if j.mimic is None]
        if not independent:
            raise ChainError(f"{name}: every movable joint on the chain is a mimic joint; nothing to solve for")
        index = {j.name: i for i, j in enumerate(independent)}
        by_name = {j.name: j for j in moving}

        # value(moving joint k) = A[k] @ q + b[k]; mimic chains are resolved to independent sources.
        A = np.zeros((len(moving), len(independent)))
        b = np.zeros(len(moving))
        for k, j in enumerate(moving):
            mult, off, cur, seen = 1.0, 0.0, j, {j.name}
            while cur.mimic is not None:
                src, m, o = cur.mimic
                if src not in by_name:
                    raise ChainError(
                        f"{name}: mimic joint {cur.name!r} follows {src!r}, which is not a movable joint on the "
                        f"chain from {self.base_link!r} to {self.ee_link!r}"
                    )
                if src in seen:
                    raise ChainError(f"{name}: mimic joints form a cycle through {src!r}")
                seen.add(src)
                off, mult, cur = mult * o + off, mult * m, by_name[src]
            A[k, index[cur.name]] = mult
            b[k] = off

        lower, upper, limited = [], [], []
        for j in independent:
            if j.type == "continuous":
                lower.append(-math.pi)
                upper.append(math.pi)
                limited.append(False)
                continue
            if j.lower is None or j.upper is None:
                raise ChainError(
                    f"{name}: {j.type} joint {j.name!r} has no <limit lower=... upper=...>; URDF requires limits "
                    "for revolute and prismatic joints (use type='continuous' for an unlimited revolute joint)"
                )
            if not j.lower <= j.upper:
                raise ChainError(f"{name}: joint {j.name!r} has lower limit {j.lower} > upper limit {j.upper}")
            lower.append(j.lower)
            upper.append(j.upper)
            limited.append(True)

        # Constant transforms between moving joints: T_ee = P_1 M_1 P_2 M_2 ... P_n M_n @ tool.
        pre, acc = [], np.eye(4)
        for j in joints:
            acc = acc @ j.origin
            if j.type in _MOVING:
                pre.append(acc)
                acc = np.eye(4)
        self._np: dict[str, np.ndarray] = dict(
            pre=np.stack(pre),
            tool=acc,
            axes=np.stack([j.axis for j in moving]),
            prismatic=np.array([j.type == "prismatic" for j in moving]),
            A=A,
            b=b,
        )
        self._consts = ConstCache(self._np, derive=chain_constants)
        #: revolute joints only, each its own independent joint: the Jacobian needs no type mask and no joint map
        plain_map = np.array_equal(A, np.eye(A.shape[0])) and not b.any()
        self._plain = plain_map and not self._np["prismatic"].any()
        self._np_chain: dict[str, np.ndarray] | None = None  #: :meth:`chain_constants`, made on first use
        self.moving_joint_names = tuple(j.name for j in moving)
        self.joint_names = tuple(j.name for j in independent)
        self.joint_types = tuple(j.type for j in independent)
        self.dof = len(independent)
        self.lower = torch.tensor(lower, dtype=torch.float64)
        self.upper = torch.tensor(upper, dtype=torch.float64)
        self.limited = torch.tensor(limited, dtype=torch.bool)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_urdf(cls, path_or_xml: str | Path, base_link: str | None = None, ee_link: str | None = None) -> Robot:
        """Chain from a URDF file path or XML string.

        Args:
            path_or_xml: file path, or the XML text itself (a string starting with '<').
            base_link: first link of the chain; default the URDF root link.
            ee_link: last link; default the one leaf below ``base_link`` reached through a movable
                joint (an error lists the candidates when there are several).
        Raises:
            URDFError: the document cannot be read (see :func:`ggik.kinematics.urdf.read_urdf`).
            ChainError: unknown links, a base that is not an ancestor of the EE, no movable joint,
                unsupported joint types or limits on the chain.
        """
        model = read_urdf(path_or_xml)
        joints = serial_chain(model, base_link, ee_link)
        return cls(
            joints, name=model.name, source=model.source, collision_shapes=model.collisions, urdf_links=model.links
        )

    @classmethod
    def from_dh(
        cls,
        a: Sequence[float],
        d: Sequence[float],
        alpha: Sequence[float],
        theta_offset: Sequence[float] | None = None,
        modified: bool = False,
        lower: Sequence[float] | None = None,
        upper: Sequence[float] | None = None,
        name: str | None = None,
    ) -> Robot:
        """All-revolute chain from Denavit-Hartenberg parameters (lengths in m, angles in rad).

        Standard DH: link i is ``Rz(q_i + theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``, joint i turning
        about z of frame i-1. Modified (Craig) DH: ``Tx(a_i) Rx(alpha_i) Tz(d_i) Rz(q_i + theta_i)``.
        Links are ``base_link``, ``link_1`` .. ``link_n`` and the EE link ``ee_link`` (frame n).
        Limits default to [-pi, pi].
        """
        joints = dh_chain(a, d, alpha, theta_offset, modified, lower, upper)
        return cls(joints, name=name or f"dh{len(a)}")

    @classmethod
    def from_name(cls, name: str) -> Robot:
        """One of the robots shipped in ``urdfs/`` (see :func:`available_robots`)."""
        registry = shipped_robots()
        if name not in registry:
            raise ChainError(f"unknown robot {name!r}; shipped robots: {', '.join(sorted(registry))}")
        entry = registry[name]
        text = resources.files("ggik.urdfs").joinpath(entry["file"]).read_text(encoding="utf-8")
        robot = cls.from_urdf(text, base_link=entry["base_link"], ee_link=entry["ee_link"])
        robot.source = f"urdfs/{entry['file']}"
        return robot

    # ------------------------------------------------------------------ derived robots
    def with_tool(self, tool, link: str = "tool") -> Robot:
        """A new Robot whose end effector is ``link``, fixed at the rigid transform ``tool`` (4, 4) [m] in this robot's
        EE frame (a tool, a flange adapter, another ``tool0`` convention). ``ValueError`` for a non-rigid transform,
        :class:`ChainError` for a link name already on the chain."""
        joints = tool_joints(self, tool, link)
        return Robot(
            joints,
            name=f"{self.name}+{link}",
            source=self.source,
            collision_shapes=self.collision_shapes,
            urdf_links=self.urdf_links,
        )

    def lock(self, values: Mapping[str, float]) -> Robot:
        """A new Robot with the named independent joints fixed at the given values (:func:`locked_joints`).

        Mimic joints that follow a locked joint are fixed at their resulting value too. Use it for
        prismatic torsos, grippers or any joint the IK should not move.
        """
        joints, locked = locked_joints(self, values)
        source = f"{self.source} (locked: {sorted(locked)})"
        return Robot(
            joints, name=self.name, source=source, collision_shapes=self.collision_shapes, urdf_links=self.urdf_links
        )

    # ------------------------------------------------------------------ kinematics
    def _const(self, dtype: torch.dtype, device: torch.device) -> dict[str, torch.Tensor]:
        return self._consts.get(dtype, device)

    def chain_constants(self) -> tuple[dict[str, np.ndarray], bool]:
        """The chain's float64 constants as numpy arrays (:func:`ggik.kinematics.chain_fk.chain_constants`, plus
        ``A``, ``b``, ``axes``, ``pre``, ``tool``, ``prismatic``; read-only, shared) and whether the chain is plain
        (revolute joints only, each its own independent joint), for numpy code on the same chain."""
        if self._np_chain is None:  # once per robot: every small LM call asks for them
            self._np_chain = {k: v.numpy() for k, v in self._const(torch.float64, torch.device("cpu")).items()}
            for a in self._np_chain.values():
                a.flags.writeable = False  # views of the cached tensors
        return self._np_chain, self._plain

    def check_q(self, q) -> torch.Tensor:
        """Validate joint values: a floating tensor (..., dof) of finite numbers (array-likes are converted)."""
        if not isinstance(q, torch.Tensor):
            q = torch.as_tensor(np.asarray(q, dtype=np.float64))
        if not q.is_floating_point():
            q = q.to(torch.float64)
        if q.ndim == 0 or q.shape[-1] != self.dof:
            raise ValueError(f"{self.name}: q must have shape (..., {self.dof}) (dof={self.dof}), got {tuple(q.shape)}")
        if not torch.isfinite(q).all():
            raise ValueError(f"{self.name}: q contains NaN or inf")
        return q

    def _motions(self, q: torch.Tensor) -> torch.Tensor:
        """(..., n_moving, 4, 4) joint motions for independent values q (..., dof)."""
        c = self._const(q.dtype, q.device)
        v = q @ c["A"].T + c["b"]  # (..., n_moving)
        s, co = torch.sin(v)[..., None, None], torch.cos(v)[..., None, None]
        eye = torch.eye(3, dtype=q.dtype, device=q.device)
        R = eye + s * c["K"] + (1.0 - co) * c["K2"]
        pris = c["prismatic"]
        R = torch.where(pris[:, None, None], eye, R)
        t = torch.where(pris[:, None], c["axes"] * v[..., None], torch.zeros_like(c["axes"]))
        return geo.make_transform(R, t)

    def _joint_frames(self, q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Frames of the moving joints before their motion (..., n_moving, 4, 4) and the EE pose."""
        return chain_frames(self._const(q.dtype, q.device), q)

    def joint_frames(self, q, trusted: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
        """Frames of the moving joints *before* their own motion (..., n_moving, 4, 4) and the EE pose (..., 4, 4),
        both in the base-link frame, for joint values q (..., dof). Joint k turns about :attr:`joint_axes` [k]
        expressed in its frame. ``trusted``: q is a floating tensor its caller checked (:meth:`check_q`) and kept
        finite; it is not checked again (the solvers' inner loops)."""
        return self._joint_frames(q if trusted else self.check_q(q))

    @property
    def joint_axes(self) -> torch.Tensor:
        """(n_moving, 3) float64 unit axes of the moving joints, each in its own joint frame (:meth:`joint_frames`)."""
        return torch.as_tensor(self._np["axes"], dtype=torch.float64).clone()

    def joints_within_limits(self, q, tol: float = 1e-9) -> torch.Tensor:
        """(..., dof) bool: each joint of q (..., dof) [rad or m] within [lower - tol, upper + tol]; continuous joints
        always count as within (a numpy array for a numpy array). The one within-limits rule of the solver, the
        evaluation and the benchmarks."""
        if isinstance(q, np.ndarray) and q.ndim and q.shape[-1] == self.dof:
            low, high = self.lower.numpy(), self.upper.numpy()
            return ((q >= low - tol) & (q <= high + tol)) | ~self.limited.numpy()
        q = torch.as_tensor(q)
        if q.ndim == 0 or q.shape[-1] != self.dof:
            raise ValueError(f"{self.name}: q must have shape (..., {self.dof}), got {tuple(q.shape)}")
        lo, hi = self.lower.to(q), self.upper.to(q)
        return ((q >= lo - tol) & (q <= hi + tol)) | ~self.limited.to(q.device)

    def within_limits(self, q, tol: float = 1e-9) -> torch.Tensor:
        """(...,) bool: every joint of q (..., dof) within its limits (:meth:`joints_within_limits`)."""
        return self.joints_within_limits(q, tol).all(-1)

    def fk(self, q) -> torch.Tensor:
        """End-effector pose (..., 4, 4) in the base-link frame for joint values q (..., dof).

        Batched over any leading dimensions, follows q's dtype and device, differentiable.
        """
        q = self.check_q(q)
        return self._joint_frames(q)[1]

    @property
    def link_names(self) -> tuple[str, ...]:
        """Links of the chain, base first: the frames returned by :meth:`link_poses`."""
        return (self.base_link,) + tuple(j.child for j in self.joints)

    def link_poses(self, q) -> torch.Tensor:
        """Poses (..., L, 4, 4) of every chain link (:attr:`link_names`) in the base-link frame."""
        q = self.check_q(q)
        M = self._motions(q)
        eye = torch.eye(4, dtype=q.dtype, device=q.device).expand(q.shape[:-1] + (4, 4))
        poses, T, k = [eye], eye, 0
        for j in self.joints:
            T = T @ torch.as_tensor(j.origin, dtype=q.dtype, device=q.device)
            if j.type in _MOVING:
                T = T @ M[..., k, :, :]
                k += 1
            poses.append(T)
        return torch.stack(poses, dim=-3)

    def jacobian(self, q) -> torch.Tensor:
        """Geometric Jacobian (..., 6, dof) of the EE in the base frame, rows (v_x, v_y, v_z, w_x, w_y, w_z).

        ``v`` is the velocity of the EE origin and ``w`` the angular velocity, both in base-frame
        coordinates, per unit joint velocity (mimic joints included through their multipliers).
        """
        return self.jacobian_at(*self._joint_frames(self.check_q(q)))

    def jacobian_at(self, frames: torch.Tensor, T: torch.Tensor) -> torch.Tensor:
        """:meth:`jacobian` from the (frames, EE pose) that :meth:`joint_frames` returned: no second FK pass."""
        c = self._const(frames.dtype, frames.device)
        w = (frames[..., :3, :3] * c["axes"][:, None, :]).sum(-1)  # (..., n_moving, 3) the axes in the base frame
        rot_v = torch.linalg.cross(w, T[..., None, :3, 3] - frames[..., :3, 3])
        if self._plain:
            return torch.cat([rot_v, w], dim=-1).transpose(-1, -2)  # (..., 6, dof)
        pris = c["prismatic"][:, None]
        v = torch.where(pris, w, rot_v)
        om = torch.where(pris, torch.zeros_like(w), w)
        J_moving = torch.cat([v, om], dim=-1).transpose(-1, -2)  # (..., 6, n_moving)
        return J_moving @ c["A"]

    def sample_q(
        self,
        n: int,
        generator: torch.Generator | None = None,
        dtype: torch.dtype = torch.float64,
        device: torch.device | str | None = None,
    ) -> torch.Tensor:
        """``n`` configurations (n, dof) uniform in the limits (continuous: [-pi, pi]), drawn on generator's device."""
        on = generator.device if generator is not None else None
        u = torch.rand(n, self.dof, generator=generator, dtype=torch.float64, device=on)
        q = self.lower.to(u.device) + (self.upper - self.lower).to(u.device) * u
        return q.to(dtype=dtype, device=device)

    # ------------------------------------------------------------------ export / display
    def to_urdf(self) -> str:
        """A minimal kinematics-only URDF of the chain (links, joints, limits, mimic); reads back exactly."""
        return write_urdf(self.name, self.joints)

    def describe(self) -> str:
        """A human-readable table of the chain: joints, types, axes, limits."""
        lines = [
            f"robot {self.name}: {self.base_link} -> {self.ee_link}, {self.dof} DOF, "
            f"{len(self.joints)} joints on the chain",
            f"  {'#':>2}  {'joint':<28} {'type':<10} {'axis':<22} {'lower':>9} {'upper':>9}  note",
        ]
        for i, j in enumerate(self.joints, 1):
            axis = "" if j.type == "fixed" else " ".join(f"{v:+.3f}" for v in j.axis)
            lo = "" if j.lower is None else f"{j.lower:9.4f}"
            hi = "" if j.upper is None else f"{j.upper:9.4f}"
            note = f"mimic {j.mimic[0]} x{j.mimic[1]:g} {j.mimic[2]:+g}" if j.mimic else ""
            if j.type == "continuous":
                note = "unbounded"
            lines.append(f"  {i:>2}  {j.name:<28} {j.type:<10} {axis:<22} {lo:>9} {hi:>9}  {note}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Robot(name={self.name!r}, dof={self.dof}, base_link={self.base_link!r}, ee_link={self.ee_link!r})"
