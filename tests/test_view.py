"""The interactive viewer (``ggik view``, :func:`ggik.view`, :mod:`ggik.viewer`): a server on a free local port,
driven from Python as a browser drives it (goal moved, samples changed), its scene checked; the solve worker's
latest-goal-wins queue; robot and obstacle meshes; trajectory files; the command's errors. No browser here (see
tests/test_view_browser.py)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

from ggik import GGIK, Robot, Scene
from ggik.cli import main
from ggik.errors import GGIKError
from ggik.viewer.config import ViewerConfig, require_viser
from ggik.viewer.meshes import link_meshes, obstacle_meshes
from ggik.viewer.playback import read_trajectory
from ggik.viewer.worker import SolveWorker

viser = pytest.importorskip("viser", reason="the viewer's optional dependency: pip install 'ggik[view]'")

from ggik.viewer.app import Viewer  # noqa: E402  (after the skip: it needs viser)

TIMEOUT = 60.0  #: [s] the most a solve may take here (the first one compiles LM)


@pytest.fixture(scope="module")
def solver():
    return GGIK.pretrained()


@pytest.fixture(scope="module")
def panda():
    return Robot.from_name("panda")


@pytest.fixture
def viewer(panda, solver):
    with Viewer(panda, solver, config=ViewerConfig(port=0, samples=16)) as v:
        assert v.wait_idle(TIMEOUT)
        yield v


def reachable_goal(robot, seed):
    return robot.fk(robot.sample_q(1, torch.Generator().manual_seed(seed))[0])


@pytest.mark.timing
def test_the_viewer_serves_the_robot_and_the_solutions_of_its_first_goal(viewer, panda):
    import urllib.request

    with urllib.request.urlopen(viewer.url, timeout=10) as page:  # the client page, served from viser's wheel
        assert page.status == 200 and b"<html" in page.read().lower()
    s = viewer.summary()
    assert {"/grid", "/goal"} <= set(s["nodes"])
    assert s["links"] and all(name.startswith("/arms/") for name in s["links"])
    assert s["samples"] == 16 and s["error"] == ""
    assert s["arms"] == 2 * 16  # the raw samples and every refined one, the distinct ones among them highlighted
    assert 1 <= s["distinct"] <= 16


@pytest.mark.timing
def test_a_moved_goal_is_solved_and_its_solutions_drawn_at_it(viewer, panda):
    from ggik.viewer.panel import outcome_markdown

    T = reachable_goal(panda, 3)
    viewer.set_goal(T)
    assert viewer.wait_idle(TIMEOUT)
    assert not viewer.outcome.first and "the first solve" not in outcome_markdown(viewer.outcome, 8)
    first = dataclasses.replace(viewer.outcome, first=True)  # the first goal's outcome (solved once, not twice)
    assert "the first solve: its times include loading" in outcome_markdown(first, 8)
    s = viewer.summary()
    assert torch.equal(s["goal"], T) and torch.equal(viewer.outcome.request.goal, T)
    assert np.allclose(viewer.gizmo.position, T[:3, 3].numpy())
    assert s["distinct"] >= 1
    # the distinct arms (drawn last) reach the goal: their EE link nodes sit at the goal's position
    ee = viewer.arms.handles[f"/arms/{panda.ee_link}"]
    tips = np.asarray(ee.batched_positions)[-s["distinct"] :]
    assert np.abs(tips - T[:3, 3].numpy()).max() < 2e-3


@pytest.mark.timing
def test_changing_samples_and_settings_resolves(viewer):
    viewer.panel.samples.value = 4  # as the slider in the browser sets it
    assert viewer.wait_idle(TIMEOUT)
    assert viewer.summary()["samples"] == 4 and viewer.summary()["arms"] == 8
    solved = viewer.worker.finished
    viewer.panel.raw.value = False  # drawing only: redrawn without the raw samples, no new solve
    assert viewer.wait_idle(TIMEOUT)
    assert viewer.worker.finished == solved and viewer.summary()["arms"] == 4
    viewer.panel.refine.value = False  # raw samples alone: the distinct samples highlighted
    assert viewer.wait_idle(TIMEOUT)
    assert viewer.outcome.refined is None and viewer.outcome.raw is not None
    viewer.panel.kind.value = "position"
    viewer.panel.refine.value = True
    assert viewer.wait_idle(TIMEOUT)
    assert viewer.outcome.request.kind == "position" and viewer.outcome.error == ""
    viewer.panel.layout.value = "side by side"
    assert viewer.wait_idle(TIMEOUT)
    offsets = viewer.arms.shown.offsets
    assert len(offsets) == viewer.summary()["distinct"] and len(np.unique(offsets, axis=0)) == len(offsets)


def _browser_sends(viewer, message) -> None:
    """Hand ``message`` (a viser client message) to the server's scene as a browser's websocket does: on viser's
    event loop, through its handler (which updates the gizmo and awaits the viewer's async callback)."""
    import asyncio

    from viser import _messages

    scene = viewer.server.scene
    handler = {
        _messages.TransformControlsUpdateMessage: scene._handle_transform_controls_updates,
        _messages.TransformControlsDragStartMessage: scene._handle_transform_controls_drag_start,
        _messages.TransformControlsDragEndMessage: scene._handle_transform_controls_drag_end,
    }[type(message)]
    asyncio.run_coroutine_threadsafe(handler(0, message), viewer.server.get_event_loop()).result(TIMEOUT)


@pytest.mark.timing
def test_a_drag_that_leaves_the_goal_where_it_is_solves_nothing_and_the_typed_fields_follow(viewer, panda):
    from viser import _messages

    submitted = viewer.worker.submitted
    _browser_sends(viewer, _messages.TransformControlsDragStartMessage(name="/goal"))  # a grab: no new pose
    assert viewer.worker.submitted == submitted
    wxyz, position = tuple(map(float, viewer.gizmo.wxyz)), tuple(map(float, viewer.gizmo.position))
    _browser_sends(viewer, _messages.TransformControlsUpdateMessage(name="/goal", wxyz=wxyz, position=position))
    assert viewer.worker.submitted == submitted  # the pose of the last update again
    T = reachable_goal(panda, 7)
    position = tuple(float(v) for v in T[:3, 3])
    _browser_sends(viewer, _messages.TransformControlsUpdateMessage(name="/goal", wxyz=wxyz, position=position))
    assert viewer.worker.submitted == submitted + 1
    assert np.allclose(viewer.panel.position.value, T[:3, 3].numpy(), atol=1e-4)
    _browser_sends(viewer, _messages.TransformControlsDragEndMessage(name="/goal"))  # the release: nothing new
    assert viewer.worker.submitted == submitted + 1
    assert viewer.wait_idle(TIMEOUT)


@pytest.mark.parametrize(
    "options, message",
    [
        (dict(samples=300), "samples must be in 1-256"),
        (dict(strategy="cascade"), "strategy must be one of"),
        (dict(playback_fps=0.0), "playback_fps must be positive"),
    ],
)
def test_viewer_config_names_a_bad_value(options, message):
    with pytest.raises(GGIKError, match=message):
        ViewerConfig(**options)


@pytest.mark.timing
def test_a_viewer_that_fails_to_start_leaves_nothing_listening(panda, solver, monkeypatch):
    import socket

    import ggik.viewer.app as app

    ur10 = Robot.from_name("ur10")
    bad = solver.solve(ur10, reachable_goal(ur10, 1))  # another robot's result: refused before a server starts
    with pytest.raises(ValueError, match=r"result.q must have shape \(B, S, 7\) for panda"):
        Viewer(panda, solver, result=bad, config=ViewerConfig(port=0))
    with pytest.raises(ValueError, match="a goal is a finite"):
        Viewer(panda, solver, goal=torch.full((4, 4), float("nan")), config=ViewerConfig(port=0))

    def broken_panel(*args, **kwargs):
        raise RuntimeError("the panel failed")

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(app, "Panel", broken_panel)  # a failure after the server started listening
    with pytest.raises(RuntimeError, match="the panel failed"):
        Viewer(panda, solver, config=ViewerConfig(port=port))
    deadline = time.monotonic() + 10.0
    while True:  # the server was stopped: its port can be bound again
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port))
            break
        except OSError:
            assert time.monotonic() < deadline, f"port {port} still in use after the failed start"
            time.sleep(0.05)


@pytest.mark.timing
def test_a_typed_goal_is_checked_and_solved(viewer):
    viewer.panel.position.value = (0.4, 0.1, 0.5)
    viewer.panel.quaternion.value = "0 1 0"
    viewer.panel.type_goal()
    assert "QW QX QY QZ" in viewer.panel.goal_error.content
    viewer.panel.quaternion.value = "0 1 0 0"
    viewer.panel.type_goal()
    assert viewer.wait_idle(TIMEOUT)
    assert np.allclose(viewer.outcome.request.goal[:3, 3].numpy(), (0.4, 0.1, 0.5))


@pytest.mark.timing
def test_a_newer_goal_supersedes_a_pending_one_and_submit_never_waits():
    """Three goals submitted while the first is being solved: the submitting thread returns while that solve is still
    held (it could not, were submit to wait for the solve), and of the pending ones only the latest is solved."""
    started, release, submitted, solved = threading.Event(), threading.Event(), threading.Event(), []

    def solve(request):
        started.set()
        release.wait()  # held until the test lets it go: no submit can outlast it by waiting
        return request

    def submit_three():
        for goal in ("second", "third", "latest"):
            worker.submit(goal)
        submitted.set()

    worker = SolveWorker(solve, solved.append)
    try:
        worker.submit("first")
        assert started.wait(TIMEOUT)
        threading.Thread(target=submit_three, daemon=True).start()
        assert submitted.wait(TIMEOUT), "submit waited for the running solve"
        assert worker.busy and solved == [] and worker.submitted == 4  # "first" still held, three submitted
        release.set()
        assert worker.wait_idle(TIMEOUT)
        assert solved == ["first", "latest"] and worker.finished == 4
    finally:
        release.set()
        worker.stop()


@pytest.mark.timing
def test_obstacles_are_drawn_and_passed_to_the_solver(panda, solver):
    scene = Scene.from_file("examples/scene.yaml")
    goal = torch.tensor([[1.0, 0, 0, 0.5], [0, -1, 0, 0.1], [0, 0, -1, 0.4], [0, 0, 0, 1]], dtype=torch.float64)
    with Viewer(panda, solver, scene, goal=goal, config=ViewerConfig(port=0, samples=8)) as v:
        assert v.wait_idle(TIMEOUT)
        s = v.summary()
        assert s["obstacles"] == ["/obstacles/boxes[0]", "/obstacles/spheres[0]", "/obstacles/capsules[0]"]
        assert v.outcome.refined.collision_free is not None


@pytest.mark.timing
def test_view_shows_an_ik_result_and_plays_a_trajectory(panda, solver):
    import ggik

    result = solver.solve(panda, reachable_goal(panda, 5), ggik.SolveConfig(samples=8, refine="lm"))
    v = ggik.view(panda, result, block=False, port=0)
    try:
        s = v.summary()
        assert not v.live and s["samples"] == 8 and s["arms"] == 8 and s["distinct"] >= 1
    finally:
        v.close()
    q = panda.sample_q(1, torch.Generator().manual_seed(0)) + torch.linspace(0, 0.2, 10)[:, None]
    q = torch.minimum(q, panda.upper)
    v = ggik.view(panda, q, block=False, port=0)
    try:
        assert v.summary()["path"] and v.summary()["arms"] == 1
        v.playback.slider.value = 10  # the waypoint slider: the arm at the last waypoint
        tip = np.asarray(v.arms.handles[f"/arms/{panda.ee_link}"].batched_positions)[0]
        assert np.allclose(tip, panda.fk(q[-1])[:3, 3].numpy(), atol=1e-5)
    finally:
        v.close()


def test_capsules_without_visuals_and_visual_meshes_where_found(tmp_path, panda):
    import trimesh

    capsules = link_meshes(panda, 0.04)
    assert capsules and {m.source for m in capsules} == {"capsule"}
    (tmp_path / "pkg" / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 0.3)).export(tmp_path / "pkg" / "meshes" / "link1.stl")
    urdf = tmp_path / "pkg" / "arm.urdf"
    visual = '<visual><geometry><mesh filename="{}"/></geometry></visual>'
    urdf.write_text(
        '<robot name="arm"><link name="base"><visual><geometry><box size="0.2 0.2 0.1"/></geometry></visual></link>'
        f'<link name="l1">{visual.format("package://pkg/meshes/link1.stl")}</link>'
        f'<link name="l2">{visual.format("meshes/missing.stl")}</link><link name="l3"/>'
        '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>'
        '<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        '<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3"/>'
        '<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        '<joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0 0 0.3"/>'
        '<axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint></robot>'
    )
    meshes = {m.link: m for m in link_meshes(Robot.from_urdf(urdf), 0.04)}
    assert meshes["base"].source == "visual" and meshes["l1"].source == "visual"
    assert np.ptp(meshes["l1"].vertices[:, 2]) == pytest.approx(0.3, abs=1e-6)  # the STL, read
    assert meshes["l2"].source == "capsule"  # its file is missing
    assert "l3" not in meshes  # the URDF draws it as nothing
    boxes = obstacle_meshes(Scene.from_file("examples/scene.yaml"), panda)
    assert [name for name, _, _ in boxes] == ["boxes[0]", "spheres[0]", "capsules[0]"]
    assert np.ptp(boxes[0][1][:, 0]) == pytest.approx(0.6, abs=1e-6)


def write(path, text):
    path.write_text(text)
    return path


def test_trajectory_files_that_do_not_fit_the_robot_are_clear_errors(tmp_path, panda):
    names = ",".join(panda.joint_names)
    good = write(tmp_path / "good.csv", names + "\n0.1,0.1,0.1,-0.5,0.1,0.1,0.1\n")
    assert read_trajectory(panda, good).shape == (1, 7)
    with pytest.raises(GGIKError, match="6 columns.*7 joints"):
        read_trajectory(panda, write(tmp_path / "a.csv", "a,b,c,d,e,f\n" + ",".join(["0"] * 6) + "\n"))
    with pytest.raises(GGIKError, match="expected 7 finite numbers"):
        read_trajectory(panda, write(tmp_path / "b.csv", ",".join(["0"] * 6) + "\n"))
    with pytest.raises(GGIKError, match="waypoint 1: panda_joint4 = 0.5 is outside its limits"):
        read_trajectory(panda, write(tmp_path / "c.csv", names + "\n" + ",".join(["0.5"] * 7) + "\n"))
    with pytest.raises(GGIKError, match="not panda's joints"):
        read_trajectory(panda, write(tmp_path / "d.csv", names.replace("joint1", "j1") + "\n"))
    with pytest.raises(FileNotFoundError):
        read_trajectory(panda, tmp_path / "missing.csv")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--robot", "nope"], "unknown robot 'nope'"),
        (["--robot", "panda", "--obstacles", "missing.yaml"], "missing.yaml"),
        (["--robot", "panda", "--path", "missing.csv"], "trajectory file not found"),
        (["--robot", "panda", "--goal", "0.4", "0", "0.5", "0", "2", "0", "0"], "--goal: goal quaternion"),
        (["--robot", "ur10", "--obstacles", "examples/scene.yaml"], "panda_link0"),
    ],
)
def test_view_bad_input_is_an_error_before_serving(argv, message, capsys):
    assert main(["view", *argv, "--port", "0"]) == 2
    assert message in capsys.readouterr().err


def test_a_port_out_of_range_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["view", "--robot", "panda", "--port", "70000"])
    assert exc.value.code == 2 and "--port: must be a port number in 0-65535" in capsys.readouterr().err


def test_without_viser_the_viewer_names_the_extra(monkeypatch, panda):
    import ggik

    monkeypatch.setitem(sys.modules, "viser", None)
    with pytest.raises(GGIKError, match=r"pip install 'ggik\[view\]'"):
        require_viser()
    with pytest.raises(GGIKError, match=r"pip install 'ggik\[view\]'"):
        ggik.view(panda, block=False, port=0)


@pytest.mark.timing
def test_importing_ggik_and_its_view_imports_no_viser():
    code = "import sys, ggik; ggik.view; import ggik.cli.view; assert 'viser' not in sys.modules, 'viser imported'"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
