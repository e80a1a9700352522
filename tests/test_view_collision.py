"""The viewer's collision model (``ggik view --show-collision``, :mod:`ggik.viewer.collision_view`): one translucent
node per capsule or sphere of the model the solves use (a collision file, else the robot's own), posed with its link at
the displayed configuration and moved with it, red where it overlaps an obstacle or another link; none without the
option. A server on a free local port, driven from Python; no browser."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ggik import GGIK, Robot, Scene
from ggik.cli import main
from ggik.collision import CollisionConfig, CollisionModel
from ggik.errors import GGIKError
from ggik.kinematics.geometry import quat_to_matrix
from ggik.viewer.config import ViewerConfig

pytest.importorskip("viser", reason="the viewer's optional dependency: pip install 'ggik[view]'")

from ggik.viewer.app import Viewer  # noqa: E402  (after the skip: it needs viser)

COLLISION_FILE = """ggik_collision: 1
robot: panda
frame: link
links:
  panda_link1:
    capsules: [{a: [0, 0, -0.15], b: [0, 0, 0.05], radius: 0.07}]
  panda_link3:
    capsules: [{a: [0, 0, -0.1], b: [0.08, 0, 0], radius: 0.06}]
    spheres: [{center: [0, 0, 0.02], radius: 0.05}]
  panda_link5:
    spheres: [{center: [0, 0.03, -0.1], radius: 0.055}]
  panda_link7:
    capsules: [{a: [0, 0, 0], b: [0, 0, 0.1], radius: 0.04}]
"""


@pytest.fixture(scope="module")
def panda():
    return Robot.from_name("panda")


@pytest.fixture(scope="module")
def trajectory(panda):
    q = panda.sample_q(1, torch.Generator().manual_seed(1)) + torch.linspace(0, 0.3, 6)[:, None]
    return torch.minimum(q, panda.upper).to(torch.float64)


def point_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(V,) distances [m] of points p (V, 3) to the segment a-b (3,) (a point when a == b)."""
    ab = b - a
    t = np.clip((p - a) @ ab / max(float(ab @ ab), 1e-300), 0.0, 1.0)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def check_posed(viewer: Viewer, robot: Robot, q: torch.Tensor) -> None:
    """Every capsule node of ``viewer`` is drawn on ``q``: its mesh's corners lie on the capsule around the segment
    between its link-posed ends (float64 to 1e-9; what the scene holds, float32, to 1e-5) and reach both ends."""
    layer = viewer.collision_layer
    model = layer.model
    a, b = (x.numpy() for x in model.capsules_at(robot.link_poses(q.to(torch.float64))))
    for k, name in enumerate(layer.nodes):
        r = float(model.radius[k])
        v = layer.world_vertices(k)
        assert np.abs(point_segment(v, a[k], b[k]) - r).max() < 1e-9, name
        axis = b[k] - a[k]
        if np.linalg.norm(axis) > 0:  # the caps reach r past both ends along the axis
            u = axis / np.linalg.norm(axis)
            assert ((v - a[k]) @ u).min() == pytest.approx(-r, abs=1e-9)
            assert ((v - b[k]) @ u).max() == pytest.approx(r, abs=1e-9)
        else:
            assert np.abs(v.mean(0) - a[k]).max() < 1e-9  # a ball of radius r around it (its corners symmetric)
        handle = viewer.server.scene.get_handle_by_name(name)
        assert handle is not None and handle.visible
        R = quat_to_matrix(torch.tensor(np.asarray(handle.wxyz), dtype=torch.float64)).numpy()
        world = np.asarray(handle.vertices, np.float64) @ R.T + np.asarray(handle.position)
        assert np.abs(point_segment(world, a[k], b[k]) - r).max() < 1e-5, name


def test_show_collision_draws_each_capsule_and_sphere_of_a_collision_file_on_the_played_waypoint(
    tmp_path, panda, trajectory
):
    import ggik

    path = tmp_path / "panda.collision.yaml"
    path.write_text(COLLISION_FILE)
    model = CollisionModel.from_file(path, panda)
    v = ggik.view(
        panda, trajectory, block=False, port=0, show_collision=True, collision=CollisionConfig(model_file=path)
    )
    try:
        nodes = v.summary()["collision"]
        assert len(nodes) == len(model.source) == 5  # one node per capsule of the file, spheres included
        assert [name.rsplit("_", 1)[1] for name in nodes] == ["capsule", "capsule", "sphere", "sphere", "capsule"]
        assert [name.split("_", 1)[1].rsplit("_", 1)[0] for name in nodes] == [
            model.link_names[int(k)] for k in model.link
        ]
        assert torch.equal(v.collision_layer.model.radius, model.radius)
        check_posed(v, panda, trajectory[0])
        v.playback.slider.value = len(trajectory)  # the waypoint slider: the last waypoint
        check_posed(v, panda, trajectory[-1])
        v.panel.collision.value = False  # the panel's checkbox hides the model, and shows it again where it was
        assert v.summary()["collision"] == [] and v.summary()["arms"] == 1
        v.panel.collision.value = True
        assert v.summary()["collision"] == nodes
        check_posed(v, panda, trajectory[-1])
    finally:
        v.close()


def test_without_show_collision_no_capsule_is_drawn(panda, trajectory):
    with Viewer(panda, trajectory=trajectory, config=ViewerConfig(port=0)) as v:
        assert v.collision_layer is None and v.panel.collision is None and v.summary()["collision"] == []
        model = CollisionModel.from_robot(panda)
        with Viewer(panda, trajectory=trajectory, config=ViewerConfig(port=0, show_collision=True)) as shown:
            names = shown.summary()["collision"]
            assert len(names) == len(model.source) and all(n.endswith("_capsule") for n in names)
        assert all(v.server.scene.get_handle_by_name(n) is None for n in names)


def test_capsules_that_overlap_an_obstacle_or_another_link_are_red(panda, trajectory):
    config = ViewerConfig(port=0, show_collision=True)
    model = CollisionModel.from_robot(panda)
    q = trajectory[0]
    a, b = (x.numpy() for x in model.capsules_at(panda.link_poses(q)))
    k = int(np.argmax(model.moving.numpy() * np.arange(len(model.source))))  # the last moving capsule
    centre = (a[k] + b[k]) / 2
    scene = Scene.from_dict({"frame": panda.base_link, "spheres": [{"xyz": centre.tolist(), "radius": 0.02}]})
    free = CollisionConfig(self_collision=False)
    with Viewer(panda, trajectory=trajectory[:1], obstacles=scene, collision=free, config=config) as v:
        hit = np.array([point_segment(centre[None], a[c], b[c])[0] < float(model.radius[c]) + 0.02 for c in range(6)])
        expected = hit & model.moving.numpy()
        assert expected[k] and not expected.all()
        assert np.array_equal(v.collision_layer.hits, expected)
        colors = [tuple(v.server.scene.get_handle_by_name(n).color) for n in v.collision_layer.nodes]
        assert colors == [config.collision_hit_color if h else config.collision_color for h in expected]
    # self-collision: a configuration where some pair of the model overlaps
    qs = panda.sample_q(400, torch.Generator().manual_seed(0)).to(torch.float64)
    d = model.self_distances(panda, qs)
    n = int((d < 0).any(1).nonzero()[0])
    with Viewer(panda, trajectory=qs[n : n + 1], config=config) as v:
        pairs = model.self_pairs[d[n] < 0]
        expected = np.zeros(len(model.source), bool)
        expected[pairs.reshape(-1).numpy()] = True
        assert expected.any() and np.array_equal(v.collision_layer.hits, expected)
        red = [n for n, h in zip(v.collision_layer.nodes, expected) if h]
        assert all(tuple(v.server.scene.get_handle_by_name(m).color) == config.collision_hit_color for m in red)


@pytest.mark.timing
def test_the_collision_model_follows_the_first_distinct_solution_of_a_live_goal(panda):
    with Viewer(panda, GGIK.pretrained(), config=ViewerConfig(port=0, samples=8, show_collision=True)) as v:
        for seed in (None, 4):
            if seed is not None:
                v.set_goal(panda.fk(panda.sample_q(1, torch.Generator().manual_seed(seed))[0]))
            assert v.wait_idle(60.0)
            outcome = v.outcome
            assert outcome.distinct and v.summary()["collision"] == v.collision_layer.nodes
            check_posed(v, panda, outcome.shown.q[0, outcome.distinct[0]])


def test_the_command_names_the_flag_and_a_bad_collision_file_is_an_error_before_serving(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["view", "--help"])
    assert "--show-collision" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(COLLISION_FILE.replace("radius: 0.04", "radius: -0.04"))
    scene = tmp_path / "scene.yaml"
    scene.write_text("frame: panda_link0\nspheres: [{xyz: [2, 0, 0], radius: 0.1}]\n")
    argv = ["view", "--robot", "panda", "--show-collision", "--port", "0", "--obstacles", str(scene)]
    assert main([*argv, "--collision", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "ggik: error:" in err and str(bad) in err and "radius" in err
    assert main(["view", "--robot", "panda", "--show-collision", "--port", "0", "--collision", str(bad)]) == 2
    err = capsys.readouterr().err  # without --obstacles (self-collision alone) the file is read before serving too
    assert "ggik: error:" in err and str(bad) in err and "radius" in err
    with pytest.raises(GGIKError, match="collision_opacity"):
        ViewerConfig(collision_opacity=1.5)
