"""ggik.evaluation.plots: every figure is a valid PNG rendered by matplotlib's Agg canvas, written atomically."""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest
import torch

pytest.importorskip("matplotlib", reason="matplotlib is not installed (pip install 'ggik[plot]'): no plots to test")

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from ggik import Robot  # noqa: E402
from ggik.evaluation.plots import plot_error_histograms, plot_generalisation, plot_solution_grid, plot_solutions  # noqa: E402
from ggik.ik.refine import lm_refine  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def agg_calls(monkeypatch) -> list:
    """Records every PNG rendered by the Agg canvas (the spy calls the real method)."""
    calls = []
    real = FigureCanvasAgg.print_png

    def spy(self, *args, **kwargs):
        calls.append(type(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FigureCanvasAgg, "print_png", spy)
    return calls


def assert_png(path, min_size=(200, 200)) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= min_size[0] and height >= min_size[1], (width, height)
    assert len(data) > 2000  # a real image, not an empty canvas header
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")], "a temporary file was left behind"


def test_solutions_plot(tmp_path, agg_calls, rng):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, rng))[0]
    q, _ = lm_refine(panda, T, panda.sample_q(6, rng))
    out = plot_solutions(panda, q, T, tmp_path / "sol.png", title="panda test")
    assert out == tmp_path / "sol.png"
    assert_png(out)
    assert agg_calls == [FigureCanvasAgg]
    # one configuration (dof,) is one solution; numpy goals work too
    assert_png(plot_solutions(panda, q[0], T.numpy(), tmp_path / "one.png"))


def test_solution_grid(tmp_path, agg_calls, rng):
    panda, ur10 = Robot.from_name("panda"), Robot.from_name("ur10")
    panels = [(r, r.sample_q(3, rng), r.fk(r.sample_q(1, rng))[0], f"{r.name} panel") for r in (panda, ur10, panda)]
    out = plot_solution_grid(panels, tmp_path / "grid.png", ncols=2, title="grid test")
    assert_png(out, min_size=(800, 800))  # 2 x 2 panels
    assert agg_calls == [FigureCanvasAgg]
    with pytest.raises(ValueError, match="at least one panel"):
        plot_solution_grid([], tmp_path / "g.png")
    with pytest.raises(ValueError, match=r"panel 1 must be \(robot, q, T_goal, title\)"):
        plot_solution_grid([panels[0], panels[1][:3]], tmp_path / "g.png")
    with pytest.raises(ValueError, match="dof=7"):
        plot_solution_grid([(panda, torch.zeros(2, 6), panels[0][2], None)], tmp_path / "g.png")
    assert [p.name for p in tmp_path.iterdir()] == ["grid.png"]


def test_solutions_plot_rejects_bad_input(tmp_path, rng):
    panda = Robot.from_name("panda")
    T = panda.fk(panda.sample_q(1, rng))[0]
    with pytest.raises(ValueError, match="dof=7"):
        plot_solutions(panda, torch.zeros(3, 6), T, tmp_path / "a.png")
    with pytest.raises(ValueError, match="T_goal"):
        plot_solutions(panda, torch.zeros(3, 7), torch.eye(3), tmp_path / "a.png")
    with pytest.raises(ValueError, match=".png"):
        plot_solutions(panda, torch.zeros(3, 7), T, tmp_path / "a.jpg")
    with pytest.raises(TypeError, match="ggik.Robot"):
        plot_solutions("panda", torch.zeros(3, 7), T, tmp_path / "a.png")
    assert not list(tmp_path.iterdir())


def test_error_histograms(tmp_path, agg_calls, rng):
    pos = torch.rand(300, generator=rng, dtype=torch.float64) ** 4 * 0.05  # [m]
    rot = torch.rand(300, generator=rng, dtype=torch.float64) ** 4 * 0.1  # [rad]
    pos[0], rot[1], pos[2] = 0.0, 0.0, float("nan")  # zeros and a non-finite value are handled
    out = plot_error_histograms(pos, rot, tmp_path / "hist.png", title="errors", pos_tol=1e-3, rot_tol_deg=0.5)
    assert_png(out)
    assert agg_calls == [FigureCanvasAgg]
    with pytest.raises(ValueError, match="equal length"):
        plot_error_histograms(pos, rot[:10], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="positive"):
        plot_error_histograms(pos, rot, tmp_path / "bad.png", pos_tol=0)


def test_an_existing_file_is_replaced_whole(tmp_path):
    path = tmp_path / "t.png"
    path.write_bytes(b"old")
    with pytest.raises(ValueError):
        plot_generalisation([("a", float("inf"), 1.0, 0.0)], path)
    assert path.read_bytes() == b"old"
    plot_generalisation([("a", 0.1, 1.0, 0.0), ("a", 0.2, 2.0, 50.0)], path)
    assert_png(path)


def test_importing_ggik_plots_does_not_import_matplotlib():
    code = "import sys, ggik.evaluation.plots; assert 'matplotlib' not in sys.modules, 'matplotlib imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_generalisation_plot(tmp_path, agg_calls):
    points = [
        ("unseen named", 0.13, 40.0, 100.0),
        ("unseen named", float("nan"), 10.0, 90.0),
        ("randomized r=0.2", 0.2, 60.0, 100.0),
        ("random 8-DOF", float("nan"), 0.0, 80.0),
    ]
    out = plot_generalisation(points, tmp_path / "gen.png", title="test")
    assert_png(out)
    assert agg_calls == [FigureCanvasAgg]
    assert_png(plot_generalisation([("random 8-DOF", float("nan"), 0.0, 80.0)], tmp_path / "none_placed.png"))
    with pytest.raises(ValueError, match="at least one point"):
        plot_generalisation([], tmp_path / "bad.png")
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        plot_generalisation([("a", 0.1, 101.0, 0.0)], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="finite and >= 0"):
        plot_generalisation([("a", -0.1, 1.0, 0.0)], tmp_path / "bad.png")
    with pytest.raises(ValueError, match="family, distance"):
        plot_generalisation([("a", 0.1, 1.0)], tmp_path / "bad.png")
    assert not (tmp_path / "bad.png").exists()
