"""A robot's collision model: capsules fixed to its links, and the link pairs that self-collision checks.

Where each capsule comes from (per link, :meth:`CollisionModel.from_robot`):

* the link's URDF ``<collision>`` primitives, each covered by one capsule: a sphere exactly; a cylinder or capsule by
  the capsule along its axis (a cylinder's flat ends are covered by the capsule's caps, so the model is conservative); a
  box by the capsule along its longest edge whose radius is half the diagonal of the other two edges;
* a mesh by the capsule covering its vertices, where the file can be found and read (:mod:`ggik.collision.meshes`);
* otherwise (a kinematics-only file, a mesh that cannot be found or read) one capsule along the link's segment, from
  its frame's origin to the origin of the next joint on the chain, of radius ``radius`` (default
  :data:`DEFAULT_LINK_RADIUS`) or the link's entry in ``radii``. Links whose segment is shorter than 1 mm get none
  (their neighbours' caps cover the joint).

Self-collision is checked between capsules of links with at least two moving joints between them (links one joint apart
touch at that joint by construction; this rule always holds). Like the disabled-collision lists of motion-planning
stacks, pairs found in collision at every one of ``self_samples`` random configurations (always touching) or at none of
them (never colliding) are left out, once per model; an SRDF's ``<disable_collisions>`` (``srdf=``,
:mod:`ggik.collision.srdf`) or a collision file's ``skip_pairs`` (:mod:`ggik.collision.collision_file`) replaces that
sampled rule. Capsules fixed to links that no joint moves (the base) are left out of robot-obstacle checks: no joint
values can change them, so an obstacle there is a scene error, not an IK problem.

A collision file (:meth:`CollisionModel.from_file`, :meth:`CollisionModel.to_file`) gives the capsules and spheres per
link by hand; ``ggik robot collision ARM --out FILE`` writes the model ggik would use, to start from.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ggik.collision.collision_file import read_collision_file, write_collision_file
from ggik.collision.distance import segment_segment
from ggik.collision.mesh_fit import MeshFitConfig, attached_transform, fit_shapes, link_shapes
from ggik.collision.meshes import mesh_capsule, shape_capsule
from ggik.collision.srdf import SRDF, read_srdf
from ggik.errors import ChainError, GGIKError
from ggik.kinematics.robot import Robot

__all__ = ["CollisionModel", "DEFAULT_LINK_RADIUS", "DEFAULT_SELF_SAMPLES", "MIN_SEGMENT", "moving_joints_before"]

DEFAULT_LINK_RADIUS = 0.04  #: [m] radius of a link's segment capsule when the file has no primitives for it
DEFAULT_SELF_SAMPLES = 2000  #: random configurations that find the self-collision pairs never or always in contact
MIN_SEGMENT = 1e-3  #: [m] links with a shorter segment get no segment capsule


def _segment_end(robot: Robot, i: int) -> np.ndarray | None:
    """(3,) the origin of the joint after link ``i`` in its frame [m]: the end of its segment capsule (None where the
    link is the chain's last or the segment is shorter than :data:`MIN_SEGMENT`)."""
    if i >= len(robot.joints):
        return None
    end = np.asarray(robot.joints[i].origin[:3, 3], dtype=np.float64)
    return end if np.linalg.norm(end) >= MIN_SEGMENT else None


@dataclass
class CollisionModel:
    """Capsules fixed to a robot's links (C of them) and the self-collision pairs to check (P).

    Attributes:
        robot_name: the robot it was built for (its :attr:`~ggik.Robot.link_names` index ``link``).
        link: (C,) long, index into ``Robot.link_names`` of the link each capsule is fixed to.
        a, b: (C, 3) float64 segment ends in that link's frame [m]; radius: (C,) float64 [m].
        source: (C,) "urdf" (from a ``<collision>`` primitive or mesh) or "segment" (the default link capsule; with the
            reason when the link has a mesh that could not be used).
        moving: (C,) bool, some joint moves the capsule (only those are checked against obstacles).
        self_pairs: (P, 2) long, capsule index pairs checked for self-collision.
        dropped_pairs: how many candidate pairs the sampled rule found never (first) or always (second) in contact.
        skipped: the candidate pairs left out of ``self_pairs``: (capsule i, capsule j, reason), the reason "Never" or
            "Always" (the sampled rule) or the SRDF's / the collision file's.
        pairs_from: where the rule for the pairs came from: "" (sampled at random configurations), "SRDF FILE" or
            "collision file FILE".
        notes: remarks for :meth:`describe` (e.g. SRDF links that are not on the chain, ignored).
        covers: (C,) the URDF link each capsule covers, by which an SRDF names it (:meth:`apply_srdf`): a link off the
            chain attached by :meth:`from_meshes`, else the chain link it is fixed to; () for the latter throughout.
    """

    robot_name: str
    link_names: tuple[str, ...]
    link: torch.Tensor
    a: torch.Tensor
    b: torch.Tensor
    radius: torch.Tensor
    source: tuple[str, ...]
    moving: torch.Tensor
    self_pairs: torch.Tensor
    dropped_pairs: tuple[int, int] = (0, 0)
    skipped: tuple[tuple[int, int, str], ...] = ()
    pairs_from: str = ""
    notes: tuple[str, ...] = ()
    covers: tuple[str, ...] = ()

    @classmethod
    def from_robot(
        cls,
        robot: Robot,
        radius: float = DEFAULT_LINK_RADIUS,
        radii: Mapping[str, float] | None = None,
        self_samples: int = DEFAULT_SELF_SAMPLES,
        seed: int = 0,
        srdf: str | Path | None = None,
    ) -> CollisionModel:
        """The model of ``robot`` (module docstring). ``radius`` [m]: segment capsules' radius; ``radii``: per link
        name (a link named here gets its segment capsule with this radius, also when the file has primitives for
        it); ``self_samples``: configurations drawn (seeded by ``seed``) to find the self-collision pairs to drop
        (0: keep every candidate pair); ``srdf``: an SRDF file whose disabled link pairs replace that sampled rule.
        ValueError for a radius that is not positive, ChainError for a link in ``radii`` that is not on the chain,
        GGIKError naming the file for a malformed SRDF."""
        radii = dict(radii or {})
        for name, r in [("radius", radius), *((f"radii[{k!r}]", v) for k, v in radii.items())]:
            if not (isinstance(r, (int, float)) and np.isfinite(r) and r > 0):
                raise ValueError(f"collision model: {name} must be a positive length [m], got {r!r}")
        links = robot.link_names
        unknown = sorted(set(radii) - set(links))
        if unknown:
            raise ChainError(f"{robot.name}: radii names links {unknown} that are not on the chain {list(links)}")
        caps: list[tuple[int, np.ndarray, np.ndarray, float, str]] = []
        urdf_dir = Path(robot.source).parent if robot.source and Path(robot.source).is_file() else None
        for i, name in enumerate(links):
            shapes = [] if name in radii else list(robot.collision_shapes.get(name, ()))
            covered = [shape_capsule(s) if s.kind != "mesh" else mesh_capsule(s, urdf_dir) for s in shapes]
            prims = [c for c in covered if not isinstance(c, str)]
            caps.extend((i, a, b, r, "urdf") for a, b, r in prims)
            if prims and len(prims) == len(shapes):
                continue
            why = next((c for c in covered if isinstance(c, str)), "")
            end = _segment_end(robot, i)  # the segment to the next joint's origin, in this link's frame
            if end is not None:
                caps.append(
                    (i, np.zeros(3), end, float(radii.get(name, radius)), f"segment{'; ' + why if why else ''}")
                )
        if not caps:
            raise ChainError(f"{robot.name}: no link has collision geometry or a segment of at least {MIN_SEGMENT} m")
        model = cls.from_capsules(robot, caps)
        if srdf is not None:
            model.apply_srdf(read_srdf(srdf, robot))
        elif self_samples:
            model.sample_pairs(robot, self_samples, seed)
        return model

    @classmethod
    def from_meshes(
        cls,
        robot: Robot,
        urdf: str | Path | None = None,
        srdf: str | Path | None = None,
        fit: MeshFitConfig | None = None,
        radius: float = DEFAULT_LINK_RADIUS,
        self_samples: int = DEFAULT_SELF_SAMPLES,
        seed: int = 0,
    ) -> CollisionModel:
        """The model of capsules fitted to each link's meshes (:mod:`ggik.collision.mesh_fit`): its ``<collision>``
        meshes where it has any, else its ``<visual>`` meshes, read from ``urdf`` (default ``robot.source``; the
        chain's links by name); its primitives covered as in :meth:`from_robot`; ``fit``: how (capsules per link,
        padding, links off the chain to attach). A chain link with no geometry, or whose meshes cannot be found or
        read, gets its segment capsule of ``radius`` [m], with a warning and a note naming the link and the radius:
        that part of the model is a guess. ``srdf``, ``self_samples``, ``seed``: the pairs as :meth:`from_robot`,
        except that with an SRDF the pairs it checks that are in contact as capsules at every sampled configuration
        are left out too (:meth:`drop_always`). GGIKError naming the file for a URDF that cannot be read or an
        attached link it lacks."""
        fit = fit or MeshFitConfig()
        if not (isinstance(radius, (int, float)) and np.isfinite(radius) and radius > 0):
            raise ValueError(f"collision model: radius must be a positive length [m], got {radius!r}")
        path = Path(urdf) if urdf is not None else Path(robot.source)
        if not path.is_file():
            raise GGIKError(f"{robot.name}: no URDF file to read meshes from ({str(path)!r}); pass urdf=")
        shapes_of = link_shapes(path)
        caps: list[tuple[int, np.ndarray, np.ndarray, float, str]] = []
        covers: list[str] = []
        notes = []
        targets = [(name, i, np.eye(4)) for i, name in enumerate(robot.link_names)]
        for name in fit.attach:
            parent, T = attached_transform(path, name, robot.link_names)
            targets.append((name, robot.link_names.index(parent), T))
        for name, i, T in targets:
            found, why = fit_shapes(name, shapes_of.get(name, ("", ())), path.parent, fit, seed)
            where = "" if name in robot.link_names else f"{name} (attached, its joints at zero): "
            for a, b, r, source in found:
                caps.append((i, T[:3, :3] @ a + T[:3, 3], T[:3, :3] @ b + T[:3, 3], r, where + source))
                covers.append(name)
            if name not in robot.link_names:
                notes += [f"{name} (attached): {why or 'no geometry'}; no capsule"] if why or not found else []
                continue
            if found and not why:
                continue
            end = _segment_end(robot, i)
            reason = why or "no collision or visual geometry"
            guess = f"segment capsule r={radius:g} m (a guess)" if end is not None else "no capsule (segment < 1 mm)"
            notes.append(f"{name}: {reason}; {guess}")
            if end is not None or why:  # a capsule guessed, or meshes that could not be used
                warnings.warn(f"collision model of {robot.name}: link {notes[-1]}", stacklevel=2)
            if end is not None:
                caps.append((i, np.zeros(3), end, float(radius), f"segment; {reason}"))
                covers.append(name)
        if not caps:
            raise ChainError(f"{robot.name}: no link has meshes, primitives or a segment of at least {MIN_SEGMENT} m")
        model = cls.from_capsules(robot, caps)
        model.notes, model.covers = tuple(notes), tuple(covers)
        if srdf is not None:
            model.apply_srdf(read_srdf(srdf, robot, fit.attach))
            model.drop_always(robot, self_samples, seed)
        elif self_samples:
            model.sample_pairs(robot, self_samples, seed)
        return model

    @classmethod
    def from_capsules(cls, robot: Robot, caps: list[tuple[int, np.ndarray, np.ndarray, float, str]]) -> CollisionModel:
        """The model of capsules ``caps`` (link index, a (3,), b (3,) [m] in that link's frame, radius [m], source) on
        ``robot``, every candidate pair checked (links at least two moving joints apart; no rule applied yet)."""
        moved_by = moving_joints_before(robot)  # (L,) moving joints above each link
        link = torch.tensor([c[0] for c in caps], dtype=torch.long)
        pairs = [
            (i, j)
            for i in range(len(caps))
            for j in range(i + 1, len(caps))
            if abs(moved_by[caps[j][0]] - moved_by[caps[i][0]]) >= 2
        ]
        return cls(
            robot_name=robot.name,
            link_names=robot.link_names,
            link=link,
            a=torch.tensor(np.stack([c[1] for c in caps]), dtype=torch.float64).reshape(-1, 3),
            b=torch.tensor(np.stack([c[2] for c in caps]), dtype=torch.float64).reshape(-1, 3),
            radius=torch.tensor([c[3] for c in caps], dtype=torch.float64),
            source=tuple(c[4] for c in caps),
            moving=torch.as_tensor(moved_by[link.numpy()] > 0),
            self_pairs=torch.tensor(pairs, dtype=torch.long).reshape(-1, 2),
        )

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        robot: Robot,
        srdf: str | Path | None = None,
        self_samples: int = DEFAULT_SELF_SAMPLES,
        seed: int = 0,
    ) -> CollisionModel:
        """The model of a collision file (:mod:`ggik.collision.collision_file`) for ``robot``. Its self-collision
        pairs: the candidates less the SRDF's disabled pairs (``srdf``), else less the file's ``skip_pairs``, else by
        the sampled rule (``self_samples``, ``seed``: as :meth:`from_robot`). GGIKError naming the file and the field
        for a malformed file."""
        shapes = read_collision_file(path, robot)
        model = cls.from_capsules(robot, shapes.capsules)
        if srdf is not None:
            model.apply_srdf(read_srdf(srdf, robot))
        elif shapes.skip is not None:
            model.skip_pairs(shapes.skip, "User", f"collision file {path}")
        elif self_samples:
            model.sample_pairs(robot, self_samples, seed)
        return model

    def to_file(self, path: str | Path) -> Path:
        """Write this model as a collision file (atomically; :meth:`from_file` reads it back to the same capsules and
        pairs). Returns the path."""
        return write_collision_file(self, path)

    def sample_pairs(self, robot: Robot, self_samples: int, seed: int = 0) -> None:
        """Drop the candidate pairs in contact at none (never) or all (always) of ``self_samples`` random
        configurations of ``robot`` (seeded by ``seed``): the sampled rule of the module docstring."""
        if not len(self.self_pairs):
            return
        d = self.self_distances(robot, robot.sample_q(self_samples, torch.Generator().manual_seed(seed)))  # (N, P)
        hit = d < 0
        never, always = ~hit.any(0), hit.all(0)
        reasons = {tuple(p): "Never" for p in self.self_pairs[never].tolist()}
        reasons.update({tuple(p): "Always" for p in self.self_pairs[always].tolist()})
        self.skip_pairs(reasons, "", "")
        self.dropped_pairs = (int(never.sum()), int(always.sum()))

    def drop_always(self, robot: Robot, self_samples: int, seed: int = 0) -> None:
        """Leave out the checked pairs in contact at every one of ``self_samples`` random configurations of ``robot``
        (seeded by ``seed``), with a note naming them: capsules are coarser than the meshes an SRDF was written for,
        and no configuration would clear such a pair (e.g. a torso and the shoulder link beside it)."""
        if not len(self.self_pairs) or not self_samples:
            return
        d = self.self_distances(robot, robot.sample_q(self_samples, torch.Generator().manual_seed(seed)))  # (N, P)
        always = [tuple(p) for p in self.self_pairs[(d < 0).all(0)].tolist()]
        if not always:
            return
        before, rule = self.skipped, self.pairs_from
        self.skip_pairs(always, "Always", rule)
        self.skipped = (*before, *self.skipped)
        names = ", ".join(
            f"{self.link_names[int(self.link[i])]} - {self.link_names[int(self.link[j])]}" for i, j in always
        )
        self.notes = (
            *self.notes,
            f"{len(always)} pair(s) in contact as capsules at every one of {self_samples} random configurations, left "
            f"out (Always): {names}",
        )

    def skip_pairs(
        self, pairs: Mapping[tuple[int, int], str] | Iterable[tuple[int, int]], reason: str, rule: str
    ) -> None:
        """Leave capsule pairs out of ``self_pairs``: a mapping (i, j) -> reason, or pairs that all get ``reason``;
        ``rule`` becomes :attr:`pairs_from`. Pairs that are not candidates (e.g. links one joint apart) are ignored."""
        reasons = dict(pairs) if isinstance(pairs, Mapping) else dict.fromkeys(pairs, reason)
        reasons = {(min(i, j), max(i, j)): why for (i, j), why in reasons.items()}
        kept, skipped = [], []
        for i, j in self.self_pairs.tolist():
            if (i, j) in reasons:
                skipped.append((i, j, reasons[i, j]))
            else:
                kept.append((i, j))
        self.self_pairs = torch.tensor(kept, dtype=torch.long).reshape(-1, 2)
        self.skipped, self.pairs_from = tuple(skipped), rule

    def apply_srdf(self, srdf: SRDF) -> None:
        """Leave out every candidate pair of capsules on two links that ``srdf`` (:func:`read_srdf`) disables, with its
        reason; its notes (links off the chain) kept."""
        disabled = {frozenset(p): why for p, why in srdf.disabled.items()}
        names = list(self.covers) or [self.link_names[int(k)] for k in self.link]
        reasons = {}
        for i, j in self.self_pairs.tolist():
            why = disabled.get(frozenset((names[i], names[j])))
            if why is not None:
                reasons[i, j] = why
        self.skip_pairs(reasons, "", f"SRDF {srdf.source}")
        self.notes = (*self.notes, *srdf.notes)

    def check_robot(self, robot: Robot) -> None:
        """ValueError unless ``robot`` has the links this model was built for."""
        if robot.link_names != self.link_names:
            raise ValueError(
                f"this collision model was built for {self.robot_name!r} (links {list(self.link_names)}), "
                f"not for {robot.name!r} (links {list(robot.link_names)})"
            )

    def capsules_at(self, link_poses: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """World ends (a, b), each (..., C, 3) [m], of the capsules for link poses (..., L, 4, 4) (base-link frame)."""
        T = link_poses[..., self.link.to(link_poses.device), :, :]
        R, p = T[..., :3, :3], T[..., :3, 3]
        a = (R @ self.a.to(T)[..., None])[..., 0] + p
        b = (R @ self.b.to(T)[..., None])[..., 0] + p
        return a, b

    def self_distances(self, robot: Robot, q: torch.Tensor) -> torch.Tensor:
        """(..., P) signed distances [m] of the self-collision pairs at joint values q (..., dof)."""
        a, b = self.capsules_at(robot.link_poses(q))
        i, j = self.self_pairs[:, 0].to(a.device), self.self_pairs[:, 1].to(a.device)
        d = segment_segment(a[..., i, :], b[..., i, :], a[..., j, :], b[..., j, :])[0]
        return d - self.radius.to(d)[i] - self.radius.to(d)[j]

    def describe(self) -> str:
        """Lines for ``ggik robot show``: the capsules per link and the self-collision pairs."""
        if self.pairs_from:
            rule = f"{len(self.skipped)} left out by the {self.pairs_from}"
        else:
            rule = (
                f"{self.dropped_pairs[0]} never and {self.dropped_pairs[1]} always in contact at "
                "random configurations, dropped"
            )
        checked = f"{len(self.self_pairs)} self-collision pairs checked"
        lines = [f"collision model: {len(self.source)} capsules, {checked} ({rule})"]
        lines += [f"  note: {note}" for note in self.notes]
        for c in range(len(self.source)):
            length = float(torch.linalg.vector_norm(self.b[c] - self.a[c]))
            moves = "" if bool(self.moving[c]) else ", fixed (not checked against obstacles)"
            lines.append(
                f"  {self.link_names[int(self.link[c])]}: capsule r={float(self.radius[c]):.3f} m, "
                f"length {length:.3f} m ({self.source[c]}{moves})"
            )
        return "\n".join(lines)


def moving_joints_before(robot: Robot) -> np.ndarray:
    """(L,) the number of moving joints between the base and each link of ``robot.link_names``."""
    counts, n = [0], 0
    for j in robot.joints:
        n += j.type != "fixed"
        counts.append(n)
    return np.array(counts)
