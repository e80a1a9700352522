"""Signed distances of ggik.collision.distance against independent computations, and scene files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from scipy.optimize import minimize_scalar

from ggik import Robot
from ggik.collision import Box, Capsule, Scene, SceneError, Sphere, point_box, segment_box, segment_segment
from ggik.kinematics.geometry import rpy_to_matrix

F64 = torch.float64


def _point_segment_np(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    d = b - a
    L = d @ d
    t = 0.0 if L == 0 else min(1.0, max(0.0, (p - a) @ d / L))
    return float(np.linalg.norm(p - (a + t * d)))


def _point_box_np(p: np.ndarray, c: np.ndarray, R: np.ndarray, h: np.ndarray) -> float:
    """Distance from p to the box (0 inside): the distance to the closest point, clamped in box coordinates."""
    local = R.T @ (p - c)
    return float(np.linalg.norm(local - np.clip(local, -h, h)))


def _min_over(f, n_grid: int = 401) -> float:
    """The minimum of a convex function on [0, 1]: a grid, then bounded Brent around the best grid point."""
    ts = np.linspace(0.0, 1.0, n_grid)
    vals = [f(t) for t in ts]
    k = int(np.argmin(vals))
    lo, hi = ts[max(k - 1, 0)], ts[min(k + 1, n_grid - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12})
    return min(float(res.fun), float(np.min(vals)))


def _random_segments(gen: torch.Generator, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.randn(n, 3, generator=gen, dtype=F64) * 0.5
    b = a + torch.randn(n, 3, generator=gen, dtype=F64) * 0.4
    b[: n // 10] = a[: n // 10]  # some points
    return a, b


def test_segment_segment_matches_an_independent_minimisation():
    gen = torch.Generator().manual_seed(0)
    a1, b1 = _random_segments(gen, 60)
    a2, b2 = _random_segments(gen, 60)
    a2[-5:] = a1[-5:] + 0.1  # parallel segments
    b2[-5:] = b1[-5:] + 0.1
    dist, s, t, n = segment_segment(a1, b1, a2, b2)
    for i in range(60):
        A1, B1, A2, B2 = (x[i].numpy() for x in (a1, b1, a2, b2))
        ref = _min_over(lambda u, A1=A1, B1=B1, A2=A2, B2=B2: _point_segment_np(A1 + u * (B1 - A1), A2, B2))
        assert abs(float(dist[i]) - ref) < 1e-6
    x1 = a1 + s[:, None] * (b1 - a1)
    x2 = a2 + t[:, None] * (b2 - a2)
    torch.testing.assert_close(torch.linalg.vector_norm(x1 - x2, dim=-1), dist, atol=1e-12, rtol=0)
    torch.testing.assert_close(torch.linalg.vector_norm(n, dim=-1), torch.ones(60, dtype=F64))
    apart = dist > 1e-9
    torch.testing.assert_close(n[apart], ((x1 - x2) / dist[:, None])[apart])


def test_segment_segment_is_symmetric_and_crossing_segments_touch():
    gen = torch.Generator().manual_seed(1)
    a1, b1 = _random_segments(gen, 40)
    a2, b2 = _random_segments(gen, 40)
    d12 = segment_segment(a1, b1, a2, b2)[0]
    d21 = segment_segment(a2, b2, a1, b1)[0]
    torch.testing.assert_close(d12, d21, atol=1e-12, rtol=0)
    cross = segment_segment(
        torch.tensor([-1.0, 0, 0], dtype=F64), torch.tensor([1.0, 0, 0], dtype=F64),
        torch.tensor([0, -1.0, 0], dtype=F64), torch.tensor([0, 1.0, 0], dtype=F64),
    )  # fmt: skip
    assert float(cross[0]) == 0.0 and abs(float(torch.linalg.vector_norm(cross[3])) - 1) < 1e-12


def _random_boxes(gen: torch.Generator, n: int):
    centre = torch.randn(n, 3, generator=gen, dtype=F64) * 0.3
    R = rpy_to_matrix(torch.randn(n, 3, generator=gen, dtype=F64))
    half = torch.rand(n, 3, generator=gen, dtype=F64) * 0.3
    half[:3, 2] = 0.0  # flat boxes (walls of no thickness)
    return centre, R, half


def test_point_box_signed_distance():
    gen = torch.Generator().manual_seed(2)
    c, R, h = _random_boxes(gen, 200)
    p = torch.randn(200, 3, generator=gen, dtype=F64) * 0.5
    d, n = point_box(p, c, R, h)
    for i in range(200):
        ref = _point_box_np(p[i].numpy(), c[i].numpy(), R[i].numpy(), h[i].numpy())
        if ref > 0:
            assert abs(float(d[i]) - ref) < 1e-12
        else:  # inside: minus the distance to the nearest face
            local = R[i].T @ (p[i] - c[i])
            assert abs(float(d[i]) + float((h[i] - local.abs()).min())) < 1e-12
    # the gradient: a small step along n changes the distance by that step (outside, away from edges)
    step = 1e-7
    d2 = point_box(p + step * n, c, R, h)[0]
    outside = d > 1e-3
    torch.testing.assert_close((d2 - d)[outside] / step, torch.ones(int(outside.sum()), dtype=F64), atol=1e-6, rtol=0)


def test_segment_box_distance_matches_an_independent_minimisation():
    gen = torch.Generator().manual_seed(3)
    a, b = _random_segments(gen, 150)
    c, R, h = _random_boxes(gen, 150)
    d, t, n = segment_box(a, b, c, R, h)
    separated = 0
    for i in range(150):
        A, B, C, Ri, H = (x[i].numpy() for x in (a, b, c, R, h))
        ref = _min_over(lambda u, A=A, B=B, C=C, Ri=Ri, H=H: _point_box_np(A + u * (B - A), C, Ri, H))
        if ref > 1e-9:
            separated += 1
            assert abs(float(d[i]) - ref) < 1e-6, i
        else:
            assert float(d[i]) <= 1e-9, i
    assert separated > 50
    x = a + t[:, None] * (b - a)
    apart = d > 0
    torch.testing.assert_close(point_box(x, c, R, h)[0][apart], d[apart], atol=1e-12, rtol=0)


def test_segment_box_penetration_is_the_shortest_separating_translation():
    gen = torch.Generator().manual_seed(4)
    c = torch.zeros(300, 3, dtype=F64)
    R = rpy_to_matrix(torch.randn(300, 3, generator=gen, dtype=F64))
    h = 0.05 + torch.rand(300, 3, generator=gen, dtype=F64) * 0.2
    a = torch.randn(300, 3, generator=gen, dtype=F64) * 0.1
    b = a + torch.randn(300, 3, generator=gen, dtype=F64) * 0.3
    d, t, n = segment_box(a, b, c, R, h)
    inside = d < 0
    assert inside.sum() > 100
    depth = -d[inside]
    # moving the segment by the depth along n separates it (up to rounding) ...
    shift = (depth + 1e-9)[:, None] * n[inside]
    moved = segment_box(a[inside] + shift, b[inside] + shift, c[inside], R[inside], h[inside])[0]
    assert (moved > 0).all() and (moved < 1e-6).all()
    # ... and no direction separates it with a shorter move (the overlap of projections along 20,000 directions)
    u = torch.randn(20000, 3, generator=gen, dtype=F64)
    u = u / torch.linalg.vector_norm(u, dim=-1, keepdim=True)
    ai, bi, Ri, hi = a[inside], b[inside], R[inside], h[inside]
    rb = (hi[:, None, :] * (u[None] @ Ri).abs()).sum(-1)  # (m, U)
    pa, pb = ai @ u.T, bi @ u.T
    need = torch.minimum(rb - torch.minimum(pa, pb), torch.maximum(pa, pb) + rb)  # shortest move along +-u
    assert (depth <= need.min(-1).values + 1e-12).all()
    assert (depth >= need.min(-1).values - 0.02).all()  # the sampled directions come within ~1 deg of the best


def test_segment_box_is_continuous_through_contact():
    c, R, h = torch.zeros(3, dtype=F64), torch.eye(3, dtype=F64), torch.tensor([0.1, 0.1, 0.1], dtype=F64)
    z = torch.linspace(0.09, 0.11, 41, dtype=F64)
    a = torch.stack([torch.full_like(z, -0.5), torch.zeros_like(z), z], -1)
    b = torch.stack([torch.full_like(z, 0.5), torch.zeros_like(z), z], -1)
    d = segment_box(a, b, c, R, h)[0]
    torch.testing.assert_close(d, z - 0.1, atol=1e-12, rtol=0)


SCENE = {
    "frame": "world",
    "boxes": [{"size": [0.15, 0.15, 0.15], "xyz": [0.2, 0.3, 0.4], "rpy": [0, 0, 0.5]}, {"size": [1, 1, 0]}],
    "spheres": [{"radius": 0.05, "xyz": [0.5, 0.0, 0.3]}],
    "capsules": [{"a": [0, 0, 0], "b": [0, 0, 0.5], "radius": 0.04}],
}


def test_scene_files_round_trip(tmp_path):
    import yaml

    scene = Scene.from_dict(SCENE)
    assert len(scene) == 4 and scene.boxes[1].xyz == (0.0, 0.0, 0.0)
    (tmp_path / "s.json").write_text(json.dumps(SCENE))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(scene.to_dict()))
    assert Scene.from_file(tmp_path / "s.json") == scene == Scene.from_file(tmp_path / "s.yaml")
    (tmp_path / "empty.yaml").write_text("")
    assert len(Scene.from_file(tmp_path / "empty.yaml")) == 0


@pytest.mark.parametrize(
    "data, message",
    [
        ({"box": []}, "unknown keys"),
        ({"boxes": [{"size": [1, 1, 1], "colour": "red"}]}, "unknown keys"),
        ({"boxes": [{"size": [1, -1, 1]}]}, "non-negative"),
        ({"boxes": [{"size": [1, 1]}]}, "3 numbers"),
        ({"boxes": [{"size": [1, 1, 1], "rpy": [0, 0]}]}, "rpy"),
        ({"boxes": [{"size": [1, 1, 1], "rpy": [0, float("nan"), 0]}]}, "finite"),
        ({"boxes": [{"xyz": [1, 1, 1]}]}, "missing"),
        ({"spheres": [{"radius": 0.0}]}, "positive"),
        ({"spheres": [{"radius": "big"}]}, "finite number"),
        ({"capsules": [{"a": [0, 0, 0], "b": [0, 0, 1], "radius": -1}]}, "positive"),
        ({"spheres": {"radius": 1}}, "must be a list"),
        ({"frame": 3}, "link name"),
        ([1, 2], "mapping"),
    ],
)
def test_bad_scenes_are_refused_with_a_reason(data, message):
    with pytest.raises(SceneError, match=message):
        Scene.from_dict(data)


def test_unreadable_scene_files(tmp_path):
    (tmp_path / "bad.yaml").write_text("boxes: [ {size: [1, 1, 1]")
    with pytest.raises(SceneError, match="not valid YAML"):
        Scene.from_file(tmp_path / "bad.yaml")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(SceneError, match="not valid JSON"):
        Scene.from_file(tmp_path / "bad.json")
    with pytest.raises(FileNotFoundError):
        Scene.from_file(tmp_path / "missing.yaml")


def test_scene_frames():
    panda = Robot.from_name("panda")  # base link "world", panda_link0 fixed to it
    assert panda.base_link == "world"
    torch.testing.assert_close(Scene(frame="world").to_base(panda), torch.eye(4, dtype=F64))
    fixed = torch.as_tensor(panda.joints[0].origin, dtype=F64)
    torch.testing.assert_close(Scene(frame=panda.joints[0].child).to_base(panda), fixed)
    for frame in ("panda_link3", "no_such_link"):
        with pytest.raises(SceneError, match="base-link frame"):
            Scene(frame=frame).to_base(panda)


def test_scene_arrays_follow_the_frame():
    T = torch.eye(4, dtype=F64)
    T[:3, :3] = rpy_to_matrix(torch.tensor([0.1, 0.2, 0.3], dtype=F64))
    T[:3, 3] = torch.tensor([0.1, -0.2, 0.3], dtype=F64)
    scene = Scene(boxes=(Box((0.1, 0.2, 0.3), (0.5, 0, 0), (0, 0, math.pi / 2)),), spheres=(Sphere(0.1, (1, 2, 3)),),
                  capsules=(Capsule((0, 0, 0), (0, 0, 1), 0.2),))  # fmt: skip
    c, R, h = scene.box_arrays(T)
    torch.testing.assert_close(c[0], T[:3, :3] @ torch.tensor([0.5, 0, 0], dtype=F64) + T[:3, 3])
    torch.testing.assert_close(R[0], T[:3, :3] @ rpy_to_matrix(torch.tensor([0, 0, math.pi / 2], dtype=F64)))
    a, b, r = scene.capsule_arrays(T)
    torch.testing.assert_close(a[0], b[0])
    torch.testing.assert_close(r, torch.tensor([0.1, 0.2], dtype=F64))
    torch.testing.assert_close(b[1] - a[1], T[:3, 2])
    with pytest.raises(SceneError, match="Box objects"):
        Scene(boxes=(Sphere(0.1),))  # type: ignore[arg-type]
