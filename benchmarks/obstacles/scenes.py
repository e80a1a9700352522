"""The obstacle benchmark's scenes, goals and paths, built for any upright arm from its reach.

Scenes (base-link frame, z up, every length a fraction of the arm's reach R: the 95th percentile of its EE's distance
from the base over random configurations), each on a table whose top is 1 cm below the base:

* ``table``: the table alone; goals with the EE less than 0.3 R above it;
* ``shelf``: a shelf in front of the arm (side walls, back wall, three boards: two compartments reachable); goals with
  the EE inside a compartment;
* ``bin``: an open box on the table in front of the arm; goals with the EE inside it, below its rim;
* ``gap``: two cubes side by side with a gap of 0.2 R between them; goals with the EE inside the gap;
* ``corridor``: two thin walls (1 cm) 0.3 R apart and 0.6 R high; goals with the EE between them.

Goals are the EE poses of uniform configurations that are collision-free (robot model: the default
:class:`ggik.collision.CollisionModel`) with the EE inside the scene's region: every goal has a collision-free
solution by construction (the configuration it came from).

Paths (:func:`scene_paths`): joint-space straight motions from a collision-free configuration to a goal's witness,
collision-free at every degree, whose EE starts outside the region and ends inside it (a reach into the shelf or the
bin, a pass into the gap); in the corridor, from a configuration whose EE is between the walls too, so that the tool
threads along between them. The waypoints are the EE poses along the motion, so a valid collision-free path exists.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ggik import Robot, Scene
from ggik.collision import Box, Clearance, CollisionModel
from ggik.path.motion import motion_clearance

__all__ = ["SCENES", "SceneCase", "reach", "build_scene", "scene_goals", "scene_paths"]

SCENES = ("table", "shelf", "bin", "gap", "corridor")
_WALL = 0.02  #: [m] thickness of the shelf's and the bin's walls


@dataclass
class SceneCase:
    """A scene for one robot and the box (lo, hi) (3,) each [m] where its goals' EE lies."""

    name: str
    scene: Scene
    lo: torch.Tensor
    hi: torch.Tensor

    def inside(self, p: torch.Tensor) -> torch.Tensor:
        """(...,) bool: points p (..., 3) inside the goal region."""
        return ((p >= self.lo) & (p <= self.hi)).all(-1)


def reach(robot: Robot, samples: int = 4000, seed: int = 0) -> float:
    """R [m]: the 95th percentile of the EE's distance from the base over uniform random configurations."""
    q = robot.sample_q(samples, torch.Generator().manual_seed(seed))
    return float(torch.linalg.vector_norm(robot.fk(q)[:, :3, 3], dim=-1).quantile(0.95))


def _box(lo: list[float], hi: list[float]) -> Box:
    lo_t, hi_t = torch.tensor(lo), torch.tensor(hi)
    return Box(tuple((hi_t - lo_t).tolist()), tuple(((hi_t + lo_t) / 2).tolist()))


def build_scene(name: str, R: float) -> SceneCase:
    """The scene ``name`` (one of :data:`SCENES`) for an arm of reach R [m], with its goal region."""
    table = _box([-1.2 * R, -1.2 * R, -0.05], [1.2 * R, 1.2 * R, -0.01])
    w = _WALL
    if name == "table":
        return SceneCase(name, Scene(boxes=(table,)), torch.tensor([-R, -R, 0.0]), torch.tensor([R, R, 0.3 * R]))
    if name == "shelf":
        x0, x1, y = 0.45 * R, 0.8 * R, 0.35 * R
        boards = [0.15 * R, 0.45 * R, 0.75 * R]
        parts = [table, _box([x1, -y, 0.0], [x1 + w, y, boards[-1] + w])]  # back wall
        parts += [_box([x0, s * y - (w if s > 0 else 0), 0.0], [x1, s * y + (0 if s > 0 else w), boards[-1] + w])
                  for s in (-1, 1)]  # fmt: skip
        parts += [_box([x0, -y, z], [x1, y, z + w]) for z in boards]
        lo = torch.tensor([x0 + 0.02, -y + w + 0.02, boards[0] + w + 0.02])
        hi = torch.tensor([x1 - 0.02, y - 0.02, boards[2] - 0.02])
        return SceneCase(name, Scene(boxes=tuple(parts)), lo, hi)
    if name == "bin":
        x0, x1, y, h = 0.35 * R, 0.75 * R, 0.25 * R, 0.25 * R
        parts = [table, _box([x0, -y, 0.0], [x1, -y + w, h]), _box([x0, y - w, 0.0], [x1, y, h])]
        parts += [_box([x0, -y, 0.0], [x0 + w, y, h]), _box([x1 - w, -y, 0.0], [x1, y, h])]
        lo = torch.tensor([x0 + w + 0.02, -y + w + 0.02, 0.02])
        hi = torch.tensor([x1 - w - 0.02, y - w - 0.02, h - 0.02])
        return SceneCase(name, Scene(boxes=tuple(parts)), lo, hi)
    if name == "gap":
        x0, x1, g, s, h = 0.4 * R, 0.7 * R, 0.1 * R, 0.3 * R, 0.5 * R
        parts = [table, _box([x0, g, 0.0], [x1, g + s, h]), _box([x0, -g - s, 0.0], [x1, -g, h])]
        lo, hi = torch.tensor([x0, -g + 0.02, 0.05 * R]), torch.tensor([x1, g - 0.02, h])
        return SceneCase(name, Scene(boxes=tuple(parts)), lo, hi)
    if name == "corridor":
        x0, x1, g, h, t = 0.3 * R, 0.8 * R, 0.15 * R, 0.6 * R, 0.01
        parts = [table, _box([x0, g, 0.0], [x1, g + t, h]), _box([x0, -g - t, 0.0], [x1, -g, h])]
        lo, hi = torch.tensor([x0, -g + 0.03, 0.1 * R]), torch.tensor([x1, g - 0.03, h - 0.05 * R])
        return SceneCase(name, Scene(boxes=tuple(parts)), lo, hi)
    raise ValueError(f"unknown scene {name!r}; scenes: {SCENES}")


def scene_goals(
    robot: Robot, case: SceneCase, model: CollisionModel, n: int, seed: int, tries: int = 400_000
) -> tuple[torch.Tensor, torch.Tensor]:
    """(poses (n', 4, 4), witnesses (n', dof)): goals of ``case`` (module docstring), n' <= n when ``tries`` uniform
    configurations hold fewer."""
    gen = torch.Generator().manual_seed(seed)
    check = Clearance(robot, model, case.scene)
    found: list[torch.Tensor] = []
    count = 0
    for _ in range(0, tries, 20_000):
        q = robot.sample_q(20_000, gen)
        q = q[case.inside(robot.fk(q)[:, :3, 3].float())]
        if q.shape[0]:
            q = q[check.collision_free(q)]
            found.append(q)
            count += q.shape[0]
        if count >= n:
            break
    q = torch.cat(found)[:n] if found else torch.zeros(0, robot.dof, dtype=torch.float64)
    return robot.fk(q), q


def scene_paths(
    robot: Robot, case: SceneCase, model: CollisionModel, witnesses: torch.Tensor, n: int, waypoints: int, seed: int
) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Up to ``n`` paths (poses (waypoints, 4, 4), the witness motion (waypoints, dof)) into the goal region of
    ``case``: each a straight joint motion from a random collision-free configuration within 1 rad (per joint) of a
    goal witness, whose EE starts outside the region, to that witness, collision-free at every degree. In the
    corridor the motion starts inside the region instead, within 0.6 rad per joint of the witness and at least 0.1 m
    from it by the EE."""
    gen = torch.Generator().manual_seed(seed)
    check = Clearance(robot, model, case.scene)
    lo, hi = robot.lower, robot.upper
    out: list[tuple[torch.Tensor, torch.Tensor]] = []
    s = torch.linspace(0, 1, waypoints, dtype=torch.float64)[:, None]
    for qb in witnesses[: 4 * n]:  # a few tries per path at most
        if len(out) == n:
            break
        thread = case.name == "corridor"
        step = 0.6 if thread else 1.0  # [rad] the largest joint change of a start from the witness
        for _ in range(60 if thread else 40):
            qa = (qb + step * (torch.rand(robot.dof, generator=gen, dtype=torch.float64) * 2 - 1)).clamp(lo, hi)
            ee = robot.fk(qa)[:3, 3]
            if bool(case.inside(ee.float())) != thread:
                continue
            if thread and float(torch.linalg.vector_norm(ee - robot.fk(qb)[:3, 3])) < 0.1:
                continue
            motion = qa + s * (qb - qa)
            if bool((motion_clearance(check, motion) >= 0).all()):
                out.append((robot.fk(motion), motion))
                break
    return out
