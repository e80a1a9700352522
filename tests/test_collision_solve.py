"""Robot collision models, clearance derivatives, and IK among obstacles (GGIK.solve, lm_refine, ggik solve)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from ggik import GGIK, PathConfig, Robot, SolveConfig, random_robot
from ggik.cli import main
from ggik.collision import Box, Clearance, CollisionConfig, CollisionModel, Scene, Sphere, segment_segment
from ggik.errors import ChainError, URDFError
from ggik.graph.goal_kinds import tool_axis
from ggik.ik.refine import lm_refine_checked
from ggik.ik.refine_config import RefineConfig
from ggik.path.motion import motion_clearance

F64 = torch.float64

URDF = """<robot name="arm">
  <link name="base"/>
  <link name="l1"><collision><origin xyz="0 0 0.2" rpy="0 0 0"/><geometry><cylinder radius="0.05" length="0.4"/>
  </geometry></collision></link>
  <link name="l2"><collision><origin xyz="0.15 0 0" rpy="0 1.5707963 0"/><geometry><box size="0.06 0.08 0.3"/>
  </geometry></collision><collision><geometry><sphere radius="0.07"/></geometry></collision></link>
  <link name="l3"><collision><geometry><mesh filename="package://arm/l3.stl"/></geometry></collision></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j4" type="fixed"><parent link="l3"/><child link="tool"/><origin xyz="0.2 0 0"/></joint>
</robot>"""


def test_urdf_primitives_are_covered_by_their_capsules():
    robot = Robot.from_urdf(URDF)
    model = CollisionModel.from_robot(robot, self_samples=0)
    by_link = {}
    for c, link in enumerate(model.link.tolist()):
        by_link.setdefault(robot.link_names[link], []).append(c)
    assert [model.source[c] for c in by_link["l1"]] == ["urdf"]
    assert sorted(model.source[c] for c in by_link["l2"]) == ["urdf", "urdf"]
    assert [model.source[c] for c in by_link["l3"]] == ["segment; mesh 'package://arm/l3.stl' not found"]
    torch.testing.assert_close(model.b[by_link["l3"][0]], torch.tensor([0.2, 0, 0], dtype=F64))
    gen = torch.Generator().manual_seed(0)
    # every point of the cylinder (link l1) and of the box (link l2) lies inside its capsule
    u = torch.rand(4000, 3, generator=gen, dtype=F64) * 2 - 1
    cyl = torch.stack([u[:, 0] * 0.05, u[:, 1] * 0.05, 0.2 + u[:, 2] * 0.2], -1)[(u[:, :2] ** 2).sum(-1) <= 1]
    box_local = u * torch.tensor([0.03, 0.04, 0.15], dtype=F64)
    shape = robot.collision_shapes["l2"][0]
    box = box_local @ torch.as_tensor(shape.origin[:3, :3]).T + torch.as_tensor(shape.origin[:3, 3])
    for points, c in ((cyl, by_link["l1"][0]), (box, [i for i in by_link["l2"] if model.radius[i] < 0.07][0])):
        d = segment_segment(points, points, model.a[c], model.b[c])[0]
        assert (d <= model.radius[c] + 1e-12).all()


def test_meshes_are_covered_by_a_capsule_when_their_files_are_found(tmp_path):
    import trimesh

    (tmp_path / "arm" / "meshes").mkdir(parents=True)
    (tmp_path / "arm" / "urdf").mkdir()
    box = trimesh.creation.box(extents=(0.3, 0.05, 0.08))
    box.apply_transform(trimesh.transformations.rotation_matrix(0.4, (0, 0, 1)))
    box.export(tmp_path / "arm" / "meshes" / "l3.stl")
    text = URDF.replace("package://arm/l3.stl", 'package://arm/meshes/l3.stl" scale="2 1 1')
    (tmp_path / "arm" / "urdf" / "arm.urdf").write_text(text)
    robot = Robot.from_urdf(tmp_path / "arm" / "urdf" / "arm.urdf")
    model = CollisionModel.from_robot(robot, self_samples=0)
    (c,) = [k for k, link in enumerate(model.link.tolist()) if robot.link_names[link] == "l3"]
    assert model.source[c] == "urdf"
    vertices = torch.as_tensor(np.asarray(box.vertices) * np.array([2.0, 1.0, 1.0]))
    d = segment_segment(vertices, vertices, model.a[c], model.b[c])[0]
    assert (d <= model.radius[c] + 1e-9).all()
    assert float(torch.linalg.vector_norm(model.b[c] - model.a[c])) > 0.5  # along the scaled box's long side
    (tmp_path / "arm" / "meshes" / "l3.stl").write_text("not a mesh")
    broken = CollisionModel.from_robot(Robot.from_urdf(tmp_path / "arm" / "urdf" / "arm.urdf"), self_samples=0)
    assert "segment; mesh l3.stl has no usable vertices" in broken.source


def test_collision_shapes_survive_derived_robots_and_bad_numbers_are_refused():
    robot = Robot.from_urdf(URDF)
    assert set(robot.with_tool(np.eye(4), link="flange").collision_shapes) == {"l1", "l2", "l3"}
    assert set(robot.lock({"j2": 0.1}).collision_shapes) == {"l1", "l2", "l3"}
    with pytest.raises(URDFError, match="cylinder radius"):
        Robot.from_urdf(URDF.replace('radius="0.05"', 'radius="-0.05"'))
    with pytest.raises(URDFError, match="box size"):
        Robot.from_urdf(URDF.replace('size="0.06 0.08 0.3"', 'size="0.06 nan 0.3"'))
    with pytest.raises(URDFError, match="unknown shape"):
        Robot.from_urdf(URDF.replace("<sphere", "<cone").replace("sphere>", "cone>"))
    capsule = Robot.from_urdf(URDF.replace('<sphere radius="0.07"/>', '<capsule radius="0.07" length="0.1"/>'))
    assert [s.kind for s in capsule.collision_shapes["l2"]] == ["box", "capsule"]


def test_default_model_options_and_errors():
    robot = Robot.from_name("ur10")
    model = CollisionModel.from_robot(robot, radius=0.06, radii={robot.link_names[2]: 0.02})
    assert set(model.source) == {"segment"}
    r = dict(zip((robot.link_names[i] for i in model.link.tolist()), model.radius.tolist()))
    assert r[robot.link_names[2]] == 0.02 and 0.06 in r.values()
    assert not bool(model.moving[model.link == 0].any())
    again = CollisionModel.from_robot(robot, radius=0.06, radii={robot.link_names[2]: 0.02})
    assert torch.equal(model.self_pairs, again.self_pairs)  # seeded
    assert "capsules" in model.describe()
    with pytest.raises(ChainError, match="not on the chain"):
        CollisionModel.from_robot(robot, radii={"nope": 0.1})
    with pytest.raises(ValueError, match="positive length"):
        CollisionModel.from_robot(robot, radius=0.0)
    with pytest.raises(ValueError, match="built for"):
        Clearance(Robot.from_name("panda"), model)
    with pytest.raises(ValueError, match="margin"):
        CollisionConfig(margin=-0.01)


def test_dropped_self_pairs_are_never_or_always_in_contact():
    robot = Robot.from_name("kr16_2")
    kept = CollisionModel.from_robot(robot, self_samples=500, seed=3)
    every = CollisionModel.from_robot(robot, self_samples=0)
    q = robot.sample_q(500, torch.Generator().manual_seed(3))
    hit = every.self_distances(robot, q) < 0
    keep = hit.any(0) & ~hit.all(0)
    assert torch.equal(every.self_pairs[keep], kept.self_pairs)
    assert kept.dropped_pairs == (int((~hit.any(0)).sum()), int(hit.all(0).sum()))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clearance_rows_are_the_derivatives_of_the_distances(seed):
    gen = torch.Generator().manual_seed(seed)
    robot = random_robot(6 + seed, generator=gen)
    model = CollisionModel.from_robot(robot, self_samples=0)
    scene = Scene(
        boxes=(Box((0.3, 0.2, 0.1), (0.3, 0.1, 0.2), (0.2, 0.1, 0.4)),),
        spheres=(Sphere(0.1, (0.2, -0.3, 0.3)),),
    )
    check = Clearance(robot, model, scene)
    q = robot.sample_q(40, gen)
    d, J = check.rows(q)
    exact = check.distances(q)
    near = exact <= check.config.margin  # exact there; further, a lower bound above the margin (zero rows)
    torch.testing.assert_close(d[near], exact[near])
    assert (d[~near] <= exact[~near] + 1e-12).all() and (d[~near] > check.config.margin).all()
    assert (J[~near & (d != exact)] == 0).all()
    wide = Clearance(robot, model, scene, CollisionConfig(margin=10.0))  # every pair within the margin: all exact
    d, J = wide.rows(q)
    torch.testing.assert_close(d, exact)
    eps = 1e-6
    fd = torch.stack(
        [
            (check.distances(q + eps * e) - check.distances(q - eps * e)) / (2 * eps)
            for e in torch.eye(robot.dof, dtype=F64)
        ],
        -1,
    )
    smooth = d > 1e-3  # apart (inside a box the depth's direction is held fixed: not an exact derivative)
    assert (J - fd).abs()[smooth].max() < 1e-6


def _free_goals(robot: Robot, check: Clearance, n: int, seed: int) -> torch.Tensor:
    q = robot.sample_q(20 * n, torch.Generator().manual_seed(seed))
    return robot.fk(q[check.collision_free(q)][:n])


def test_lm_with_clearance_rows_returns_collision_free_solutions():
    robot = Robot.from_name("panda")
    table = Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06))
    block = Box((0.2, 0.3, 0.1), (0.4, 0.1, 0.4), (0.3, 0.2, 0.1))
    scene = Scene(boxes=(table, block), spheres=(Sphere(0.1, (0.4, 0.2, 0.55)),))
    check = Clearance(robot, CollisionModel.from_robot(robot), scene)
    T = _free_goals(robot, check, 12, seed=0)
    q0 = robot.sample_q(12 * 16, torch.Generator().manual_seed(1)).view(12, 16, robot.dof)
    plain, info_plain = lm_refine_checked(robot, T[:, None], q0, RefineConfig(), "pose", tool_axis(robot))
    q, info = lm_refine_checked(robot, T[:, None], q0, RefineConfig(), "pose", tool_axis(robot), check)
    free = check.collision_free(q)
    assert free[info.converged].float().mean() > 0.95  # without the rows: fewer (below)
    assert check.collision_free(plain)[info_plain.converged].float().mean() < 0.95
    good = info.converged & free
    good_plain = info_plain.converged & check.collision_free(plain)
    assert good.any(-1).all()
    assert good.sum() >= 0.9 * good_plain.sum()
    # elements that stopped before the budget are collision-free
    stopped = info.converged & (info.iterations < RefineConfig().max_iters)
    assert stopped.sum() > 50
    assert (check.distances(q)[stopped] >= 0).all()


def test_solve_with_obstacles_reports_and_requires_collision_free():
    solver = GGIK.pretrained()
    robot = Robot.from_name("panda")
    scene = Scene(boxes=(Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06)),), spheres=(Sphere(0.12, (0.45, 0.0, 0.45)),))
    check = Clearance(robot, solver.collision_model(robot), scene)
    T = _free_goals(robot, check, 6, seed=4)
    configs = (
        SolveConfig(samples=8, refine="lm"),
        SolveConfig(strategy="random", random_starts=8),
        SolveConfig(samples=8, strategy="model-first", random_starts=8),
        SolveConfig(samples=8),
    )
    for config in configs:
        res = solver.solve(robot, T, config, obstacles=scene, generator=torch.Generator().manual_seed(0))
        assert res.clearance is not None and res.collision_free is not None
        torch.testing.assert_close(res.clearance, check.min_clearance(res.q))
        obstacle, own = brute_force_clearances(robot, check.model, res.q, scene)  # the same, by hand
        torch.testing.assert_close(res.clearance, torch.minimum(obstacle, own), rtol=0, atol=1e-9)
        assert torch.equal(res.collision_free, res.clearance >= 0)
        assert not (res.success & ~res.collision_free).any()
        if config.method == "lm":
            assert res.success[:, 0].all()
    plain = solver.solve(robot, T, SolveConfig(samples=8, refine="lm"), generator=torch.Generator().manual_seed(0))
    assert plain.clearance is None and plain.collision_free is None
    res = solver.solve(robot, T[:2], SolveConfig(samples=8, refine="slsqp"), obstacles=scene,
                       generator=torch.Generator().manual_seed(0))  # fmt: skip
    assert res.success[:, 0].all()  # SLSQP, clearances as constraints (3 samples left a goal to chance)
    assert (res.clearance[res.success] >= -1e-9).all()
    with pytest.raises(TypeError, match="Scene"):
        solver.solve(robot, T, SolveConfig(samples=2), obstacles="scene.yaml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="without obstacles"):
        solver.solve(robot, T, SolveConfig(samples=2), collision=CollisionConfig())


def test_a_clearance_as_obstacles_brings_its_own_model_and_settings():
    """``obstacles`` may be a ready Clearance (its collision model, scene and settings): the same solve as the scene
    with those settings; with a CollisionConfig beside it, or of another robot, it is refused."""
    robot, solver = Robot.from_name("panda"), GGIK.pretrained()
    scene = Scene(spheres=(Sphere(0.05, (0.4, 0.0, 0.4)),))
    margin = CollisionConfig(margin=0.02)
    check = Clearance(robot, solver.collision_model(robot), scene, margin)
    T = robot.fk(robot.sample_q(2, torch.Generator().manual_seed(3)))
    config = SolveConfig(strategy="random", random_starts=8)
    a = solver.solve(robot, T, config, generator=torch.Generator().manual_seed(1), obstacles=check)
    b = solver.solve(robot, T, config, generator=torch.Generator().manual_seed(1), obstacles=scene, collision=margin)
    assert torch.equal(a.q, b.q) and torch.equal(a.clearance, b.clearance) and a.collision_free is not None
    with pytest.raises(ValueError, match="carries its own CollisionConfig"):
        solver.solve(robot, T, config, obstacles=check, collision=margin)
    ur10 = Robot.from_name("ur10")
    with pytest.raises(ValueError, match="is of robot 'panda'"):
        solver.solve(ur10, ur10.fk(ur10.sample_q(1)), config, obstacles=check)


def _convex_min(f, shape: torch.Size, iters: int = 100) -> torch.Tensor:
    """min over s in [0, 1] of a convex function f(s) (batched over ``shape``): ternary search, to (2/3)^100 in s."""
    lo, hi = torch.zeros(shape, dtype=F64), torch.ones(shape, dtype=F64)
    for _ in range(iters):
        m1, m2 = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        left = f(m1) <= f(m2)  # a minimiser lies in [lo, m2] (convexity), else in [m1, hi]
        lo, hi = torch.where(left, lo, m1), torch.where(left, m2, hi)
    return f((lo + hi) / 2)


def _point_segment(p: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Distance from points p to segments [a, b] (..., 3): the projection clamped to the segment."""
    ab = b - a
    t = (((p - a) * ab).sum(-1) / (ab * ab).sum(-1).clamp(min=1e-300)).clamp(0, 1)
    return (p - a - t[..., None] * ab).norm(dim=-1)


def _box_sdf(p: torch.Tensor, box: Box) -> torch.Tensor:
    """Signed distance from points p (..., 3) to an axis-aligned box (negative inside)."""
    assert box.rpy == (0.0, 0.0, 0.0), "axis-aligned boxes only"
    d = (p - torch.tensor(box.xyz, dtype=F64)).abs() - torch.tensor(box.size, dtype=F64) / 2
    return d.clamp(min=0).norm(dim=-1) + d.amax(-1).clamp(max=0)


def brute_force_clearances(robot: Robot, model: CollisionModel, q: torch.Tensor, scene: Scene):
    """(obstacle, self) clearances (...,) [m] at q (..., dof), by hand: the lowest signed distance between a moving
    capsule and an axis-aligned box or a sphere of ``scene``, and between the capsules of the model's self-collision
    pairs. The distance from a point moving along one segment to a box, a sphere centre or another segment is convex in
    the point's parameter, so a ternary search finds its minimum (no closed-form segment-box or segment-segment
    distance involved)."""
    a, b = model.capsules_at(robot.link_poses(q))  # (..., C, 3)
    r = model.radius.to(F64)
    m = model.moving.nonzero()[:, 0]
    am, dm = a[..., m, :], b[..., m, :] - a[..., m, :]
    along = lambda s: am + s[..., None] * dm  # noqa: E731
    near = [_convex_min(lambda s, box=box: _box_sdf(along(s), box), am.shape[:-1]) - r[m] for box in scene.boxes]
    for ball in scene.spheres:
        centre = torch.tensor(ball.xyz, dtype=F64)
        to_centre = lambda s, c=centre: (along(s) - c).norm(dim=-1)  # noqa: E731
        near.append(_convex_min(to_centre, am.shape[:-1]) - r[m] - ball.radius)
    i, j = model.self_pairs[:, 0], model.self_pairs[:, 1]
    ai, di, aj, bj = a[..., i, :], b[..., i, :] - a[..., i, :], a[..., j, :], b[..., j, :]
    own = _convex_min(lambda s: _point_segment(ai + s[..., None] * di, aj, bj), ai.shape[:-1]) - r[i] - r[j]
    return torch.cat(near, -1).amin(-1), own.amin(-1)


def test_cli_solve_with_obstacles(tmp_path, capsys):
    (tmp_path / "scene.yaml").write_text("frame: panda_link0\nboxes: [{size: [1, 1, 0.02], xyz: [0.4, 0, -0.06]}]\n")
    args = ["solve", "--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "1", "0", "0", "--refine", "lm", "-s", "4"]
    assert main([*args, "--obstacles", str(tmp_path / "scene.yaml"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["solutions"]
    # Each row's clearances are those computed here by brute force from its angles (rounded to 1e-6 rad in the JSON:
    # 1e-5 m), and collision_free says whether both are >= 0.
    robot = Robot.from_name("panda")
    model = GGIK.pretrained().collision_model(robot)
    scene = Scene(boxes=(Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06)),))
    assert rows
    for r in rows:
        obstacle, own = brute_force_clearances(robot, model, torch.tensor(r["q"], dtype=F64), scene)
        assert abs(r["obstacle_clearance_m"] - float(obstacle)) < 1e-5, (r["obstacle_clearance_m"], float(obstacle))
        assert abs(r["self_clearance_m"] - float(own)) < 1e-5, (r["self_clearance_m"], float(own))
        assert r["collision_free"] == bool(obstacle >= 0 and own >= 0)
    assert main([*args, "--obstacles", str(tmp_path / "scene.yaml"), "--margin", "0.02"]) == 0
    out = capsys.readouterr().out
    assert "obstacle [mm]" in out and "self [mm]" in out and "closest pairs of #1: " in out
    (tmp_path / "bad.yaml").write_text("frame: panda_link5\n")
    assert main([*args, "--obstacles", str(tmp_path / "bad.yaml")]) != 0
    assert "base-link frame" in capsys.readouterr().err
    assert main([*args, "--margin", "0.02"]) == 0  # no --obstacles: the robot kept clear of its own links alone
    out = capsys.readouterr().out
    assert "among 0 obstacles" in out and "self [mm]" in out and "(self)" in out


def _panda_path() -> tuple[Robot, torch.Tensor, torch.Tensor]:
    robot = Robot.from_name("panda")
    qa = torch.tensor([0.0, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8], dtype=F64)
    qb = torch.tensor([0.6, 0.5, 0.2, -1.5, 0.1, 2.0, 0.9], dtype=F64)
    qs = qa + torch.linspace(0, 1, 30, dtype=F64)[:, None] * (qb - qa)
    return robot, qs, robot.fk(qs)


def test_motion_clearance_sees_collisions_between_waypoints():
    robot, _, _ = _panda_path()
    model = CollisionModel.from_robot(robot)
    q1 = torch.tensor([-0.15, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8], dtype=F64)
    q2 = q1.clone()
    q2[0] = 0.15  # the first joint turns by 17 deg: the arm sweeps through a sphere at the middle's flange
    mid = (q1 + q2) / 2
    a, b = model.capsules_at(robot.link_poses(mid))
    scene = Scene(spheres=(Sphere(0.01, tuple(b[-1].tolist())),))
    check = Clearance(robot, model, scene)
    assert bool(check.collision_free(torch.stack([q1, q2])).all())
    clear = motion_clearance(check, torch.stack([q1, q2]))
    assert clear[0] >= 0 and clear[1] < 0
    assert motion_clearance(check, q2[None], q_start=q1)[0] < 0  # the motion from the start configuration


@pytest.mark.parametrize(
    "swing, link, height, radius", [(0.3, 3, 0.04, 0.01), (0.45, 3, 0.03, 0.005), (0.45, 1, 0.04, 0.005)]
)
def test_trajectory_lm_clears_a_motion_whose_waypoints_are_clear(swing, link, height, radius):
    """A sphere that the joint-space motion between two clear waypoints passes through (the first joint turns by
    2 swing [rad]; the sphere sits ``height`` above the end of capsule ``link`` at the motion's middle): the waypoints'
    own hinge rows are zero there, so only the motion's midpoint rows can move the trajectory; trajectory LM keeps
    the poses and clears the motion."""
    import math

    from ggik.path.config import TrajectoryConfig
    from ggik.path.search import joint_scale
    from ggik.path.trajectory import trajectory_refine

    robot = Robot.from_name("panda")
    model = CollisionModel.from_robot(robot)
    q = torch.tensor([[-swing, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8]] * 2, dtype=F64)
    q[1, 0] = swing
    _, b = model.capsules_at(robot.link_poses(q.mean(0)))
    centre = b[link] + torch.tensor([0.0, 0.0, height], dtype=F64)
    check = Clearance(robot, model, Scene(spheres=(Sphere(radius, tuple(centre.tolist())),)))
    assert bool((check.min_clearance(q) > 2 * check.config.margin).all()) and motion_clearance(check, q)[1] < 0
    scale = joint_scale(robot, math.radians(60.0), 0.02)  # moves of 2 swing allowed: only the collision fails it
    out, info = trajectory_refine(robot, robot.fk(q), q, scale, TrajectoryConfig(), clearance=check)
    assert info.valid and bool(info.reached.all()) and float(motion_clearance(check, out).min()) >= 0


def test_paths_among_obstacles_are_collision_free_or_say_where_not():
    robot, qs, poses = _panda_path()
    solver = GGIK.pretrained()
    model = solver.collision_model(robot)
    a, b = model.capsules_at(robot.link_poses(qs[15]))
    elbow = b[1] + torch.tensor([0.0, 0.0, 0.1], dtype=F64)
    scene = Scene(spheres=(Sphere(0.1, tuple(elbow.tolist())),))
    check = Clearance(robot, model, scene)
    assert motion_clearance(check, qs).min() < 0  # the arm's own interpolation goes through the sphere
    still = PathConfig(time_limit=10, clock=lambda: 0.0)  # rounds, not this machine's speed, bound the search
    res = solver.solve_path(robot, poses, still, obstacles=scene, generator=torch.Generator().manual_seed(0))
    assert res.valid and res.collision_free and res.collisions == []
    assert (
        res.min_clearance is not None and abs(res.min_clearance - float(motion_clearance(check, res.q).min())) < 1e-12
    )
    assert float(motion_clearance(check, res.q).min()) >= 0
    # an obstacle on the EE path itself: no valid trajectory, and the result says where
    ee = robot.fk(qs[15])[:3, 3]
    blocked = Scene(spheres=(Sphere(0.03, tuple(ee.tolist())),))
    res = solver.solve_path(robot, poses, PathConfig(time_limit=1), obstacles=blocked,
                            generator=torch.Generator().manual_seed(0))  # fmt: skip
    assert not res.valid and not res.collision_free and 15 in res.collisions
    assert "collisions" in res.summary()
    free = solver.solve_path(robot, poses, still, generator=torch.Generator().manual_seed(0))
    assert free.collision_free is None and free.min_clearance is None


def test_cli_path_with_obstacles(tmp_path, capsys):
    robot, qs, poses = _panda_path()
    from ggik.path.files import write_path_csv

    write_path_csv(tmp_path / "path.csv", poses)
    (tmp_path / "scene.yaml").write_text("spheres: [{radius: 0.05, xyz: [0.6, -0.4, 0.2]}]\n")
    for samples in ("0", "4"):
        code = main(["path", "--robot", "panda", "--path", str(tmp_path / "path.csv"), "-s", samples,
                     "--obstacles", str(tmp_path / "scene.yaml"), "--json"])  # fmt: skip
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["valid"] and out["collision_free"] and out["collisions"] == []


def test_dg_pushes_the_joint_points_out_of_the_obstacles():
    from ggik import RobotGraph
    from ggik.ik.dg_refine import push_out

    robot = Robot.from_name("panda")
    graph = RobotGraph.from_robot(robot)
    q = robot.sample_q(50, torch.Generator().manual_seed(5))
    X = graph.realize(q)  # (50, N, 3) graph frame
    to_base = graph.T_base_graph
    p3 = X[:, graph.node_names.index("p3")] @ to_base[:3, :3].T + to_base[:3, 3]  # one joint point, base frame
    scene = Scene(spheres=(Sphere(0.05, tuple(p3[0].tolist())),), boxes=(Box((0.2, 0.2, 0.2), tuple(p3[1].tolist())),))
    check = Clearance(robot, CollisionModel.from_robot(robot), scene)
    Y = push_out(graph, X, check)
    free = ((graph.node_kind == 0) & ~graph.anchor_mask).nonzero()[:, 0]
    moved = (Y - X).norm(dim=-1) > 0
    assert moved[:, free].any() and not moved[:, ~torch.isin(torch.arange(graph.num_nodes), free)].any()
    reach = float(check.model.radius.max()) + check.config.margin
    base = Y[:, free] @ to_base[:3, :3].T + to_base[:3, 3]
    sphere = (base - p3[0]).norm(dim=-1) - 0.05
    assert (sphere[0] >= reach - 1e-9).all()
    res = GGIK.pretrained().solve(robot, robot.fk(q[:3]), SolveConfig(samples=4, refine="dg"), obstacles=scene)
    assert res.clearance is not None and res.clearance.shape == (3, 4)


def test_sequential_lm_baseline_takes_obstacles():
    from ggik.evaluation.path_baselines import sequential_lm

    robot, qs, poses = _panda_path()
    scene = Scene(spheres=(Sphere(0.05, (0.6, -0.4, 0.2)),))
    check = Clearance(robot, CollisionModel.from_robot(robot), scene)
    res = sequential_lm(robot, poses, 4, generator=torch.Generator().manual_seed(0), clearance=check)
    assert res.collision_free is not None and res.min_clearance is not None
    assert res.collision_free == bool(motion_clearance(check, res.q).min() >= 0)
    plain = sequential_lm(robot, poses, 4, generator=torch.Generator().manual_seed(0))
    assert plain.collision_free is None
