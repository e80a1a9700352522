"""The viewer in a real browser: a headless Chromium (the distribution's package) loads the page from 127.0.0.1 and
takes a screenshot in which the arm is drawn (its highlight colour covers part of the 3D view). Skipped, with the
reason, where viser or a Chromium browser is not installed. With ``show_collision`` the collision model's capsules are
drawn in their colours (the one that overlaps an obstacle in its own)."""

from __future__ import annotations

import numpy as np
import pytest

from ggik import GGIK, Robot
from ggik.viewer.config import ViewerConfig
from ggik.viewer.screenshot import BROWSERS, find_browser

pytest.importorskip("viser", reason="the viewer's optional dependency: pip install 'ggik[view]'")
pytestmark = [
    pytest.mark.skipif(
        find_browser() is None,
        reason=f"no Chromium browser on PATH ({', '.join(BROWSERS)}; e.g. apt-get install chromium)",
    ),
    pytest.mark.timing,  # a server, a browser process and its time budget
]


MAGENTA = (200, 0, 200)  #: the arms' colour here: nothing else on the page (grid, gizmo, panel) is magenta


def magenta_pixels(image: np.ndarray) -> int:
    """Pixels of ``image`` (H, W, 3+) whose colour is a shade of magenta: red and blue alike, green well below both
    (lighting scales the channels, it keeps the hue)."""
    r, g, b = (image[..., k].astype(int) for k in range(3))
    return int(((r > 60) & (b > 60) & (abs(r - b) < 0.25 * np.maximum(r, b)) & (g < 0.6 * np.minimum(r, b))).sum())


def test_the_page_draws_the_arm(tmp_path):
    import imageio.v3 as iio

    from ggik.viewer.app import Viewer
    from ggik.viewer.screenshot import screenshot

    config = ViewerConfig(
        port=0, samples=8, show_raw=False, show_refined=False, palette=(MAGENTA,), hide_notifications=True
    )
    with Viewer(Robot.from_name("ur10"), GGIK.pretrained(), config=config) as viewer:
        assert viewer.wait_idle(60)
        assert viewer.summary()["distinct"] >= 1
        # the page draws once its websocket has delivered the scene: on a loaded machine (the suite in parallel)
        # that can take longer than the browser's time budget, so a blank view is taken again with a longer one
        for attempt, wait_ms in enumerate((4000, 10000, 20000)):
            out = screenshot(viewer.url, tmp_path / f"view{attempt}.png", width=800, height=600, wait_ms=wait_ms)
            image = iio.imread(out)
            if magenta_pixels(image[:, :460]) > 300:
                break
    assert image.shape[:2] == (600, 800)
    assert magenta_pixels(image[:, :460]) > 300, "the arms' colour is not in the 3D view (left of the panel)"


CYAN, YELLOW = (0, 200, 200), (220, 220, 0)  #: the collision model's colours here (hit, clear): nowhere else


def shade_pixels(image: np.ndarray, hue: tuple[int, int, int]) -> int:
    """Pixels of ``image`` (H, W, 3+) that are a shade of ``hue``, one channel of which is 0: the two others alike
    (within a quarter) and that one well below both."""
    channels = [image[..., k].astype(int) for k in range(3)]
    zero = hue.index(0)
    x, y = (c for k, c in enumerate(channels) if k != zero)
    low = channels[zero]
    return int(((x > 60) & (y > 60) & (abs(x - y) < 0.25 * np.maximum(x, y)) & (low < 0.5 * np.minimum(x, y))).sum())


def test_the_page_draws_the_collision_model_the_capsule_that_overlaps_an_obstacle_in_its_own_colour(tmp_path):
    import imageio.v3 as iio
    import torch

    from ggik import Scene
    from ggik.collision import CollisionModel
    from ggik.viewer.app import Viewer
    from ggik.viewer.screenshot import screenshot

    panda = Robot.from_name("panda")
    q = torch.tensor([[0.3, 0.4, 0.0, -1.8, 0.0, 2.0, 0.7]], dtype=torch.float64)
    a, b = CollisionModel.from_robot(panda).capsules_at(panda.link_poses(q[0]))
    x, y, z = ((a[3] + b[3]) / 2).tolist()  # the middle of the fourth capsule (the upper arm's)
    scene = Scene.from_dict({"frame": panda.base_link, "spheres": [{"xyz": [x, y - 0.08, z], "radius": 0.06}]})
    config = ViewerConfig(
        port=0,
        palette=(MAGENTA,),
        hide_notifications=True,
        show_collision=True,
        collision_color=YELLOW,
        collision_hit_color=CYAN,
        collision_opacity=1.0,
    )
    with Viewer(panda, trajectory=q, obstacles=scene, config=config) as viewer:
        assert viewer.collision_layer.hits.tolist() == [False, False, False, True, False, False]
        for attempt, wait_ms in enumerate((4000, 10000, 20000)):  # as above: a blank view is taken again
            out = screenshot(viewer.url, tmp_path / f"collision{attempt}.png", width=800, height=600, wait_ms=wait_ms)
            view = iio.imread(out)[:, :460]
            if shade_pixels(view, CYAN) > 200:
                break
    assert shade_pixels(view, CYAN) > 200, "the capsule in collision is not drawn in its colour"
    assert shade_pixels(view, YELLOW) > 300, "the capsules clear of the obstacle are not drawn in theirs"
