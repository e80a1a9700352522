"""The viewer in a real browser: a headless Chromium (the distribution's package) loads the page from 127.0.0.1 and
takes a screenshot in which the arm is drawn (its highlight colour covers part of the 3D view). Skipped, with the
reason, where viser or a Chromium browser is not installed."""

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
