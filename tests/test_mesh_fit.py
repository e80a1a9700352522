"""Capsules fitted to a link's meshes (CollisionModel.from_meshes, ggik robot collision --fit-meshes): coverage, volume,
the collision-else-visual rule, the links that keep a guessed segment capsule, and a public arm's description."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from ggik import Robot
from ggik.cli import main
from ggik.collision import CollisionModel, MeshFitConfig
from ggik.collision.mesh_fit import MeshSet, capsule_volume, fit_capsules, fit_link, segment_distances
from ggik.errors import GGIKError

trimesh = pytest.importorskip("trimesh", reason="trimesh comes with yourdfpy, the URDF parser")

URDF = """<robot name="arm">
  <link name="base"/>
  <link name="l1">
    <visual><geometry><mesh filename="package://arm/meshes/l1_visual.stl"/></geometry></visual>
    <collision><origin xyz="0 0 0.2"/><geometry><mesh filename="package://arm/meshes/l1.stl"/></geometry></collision>
  </link>
  <link name="l2"><visual><origin xyz="0.15 0 0" rpy="0 1.5707963 0"/>
    <geometry><mesh filename="package://arm/meshes/l2.stl" scale="1 1 2"/></geometry></visual></link>
  <link name="l3"/>
  <link name="l4"><collision><geometry><mesh filename="package://arm/meshes/missing.stl"/></geometry></collision></link>
  <link name="tool"/>
  <link name="cam"><collision><geometry><mesh filename="package://arm/meshes/cam.stl"/></geometry></collision></link>
  <joint name="jc" type="revolute"><parent link="l2"/><child link="cam"/><origin xyz="0.1 0 0.2"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/><origin xyz="0.25 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j5" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0.1 0 0"/></joint>
</robot>"""


def _arm(tmp_path) -> Robot:
    """The arm of URDF with its meshes: l1 a cylinder (r 5 cm, 40 cm; its visual mesh a far bigger sphere), l2 a box
    (visual only, scaled), l3 no geometry, l4 a mesh file that is missing; cam, off the chain, a bar hanging from
    l2."""
    meshes = tmp_path / "arm" / "meshes"
    meshes.mkdir(parents=True)
    trimesh.creation.cylinder(radius=0.05, height=0.4, sections=48).export(meshes / "l1.stl")
    trimesh.creation.icosphere(radius=0.5).export(meshes / "l1_visual.stl")
    trimesh.creation.box(extents=(0.06, 0.08, 0.15)).export(meshes / "l2.stl")
    trimesh.creation.box(extents=(0.2, 0.04, 0.04)).export(meshes / "cam.stl")
    (tmp_path / "arm" / "urdf").mkdir()
    path = tmp_path / "arm" / "urdf" / "arm.urdf"
    path.write_text(URDF)
    return Robot.from_urdf(path, "base", "tool")


def _covered(points: np.ndarray, capsules) -> np.ndarray:
    """(N,) whether each point lies in some capsule (a, b, r)."""
    inside = np.zeros(len(points), dtype=bool)
    for a, b, r in capsules:
        inside |= segment_distances(points, a, b) <= r + 1e-12
    return inside


def test_one_capsule_is_tight_on_a_cylinder_and_covers_every_vertex():
    mesh = trimesh.creation.cylinder(radius=0.05, height=0.4, sections=64)
    mesh.apply_transform(trimesh.transformations.rotation_matrix(0.7, (1, 1, 0)))
    v = np.asarray(mesh.vertices)
    caps = fit_capsules(v, np.asarray(mesh.edges_unique), seed=0)
    assert len(caps) == 1
    a, b, r = caps[0]
    assert _covered(v, caps).all()
    assert r == pytest.approx(0.05, abs=1e-3)  # the cylinder's radius; its flat ends stick into the caps
    assert capsule_volume(a, b, r) / mesh.volume < 1.5  # a covering capsule needs at least the caps' extra 1/3 r^3
    again = fit_capsules(v, np.asarray(mesh.edges_unique), seed=0)
    np.testing.assert_array_equal(again[0][0], a)  # deterministic


def test_an_l_shaped_link_gets_two_capsules_that_cover_its_solid():
    arm = trimesh.creation.box(extents=(0.5, 0.06, 0.06))
    arm.apply_translation((0.25, 0, 0))
    leg = trimesh.creation.box(extents=(0.06, 0.06, 0.5))
    leg.apply_translation((0.47, 0, 0.25))
    mesh = trimesh.util.concatenate([arm, leg])
    v = np.asarray(mesh.vertices)
    one = fit_capsules(v, np.asarray(mesh.edges_unique), max_capsules=1)
    two = fit_capsules(v, np.asarray(mesh.edges_unique), max_capsules=2)
    assert len(one) == 1 and len(two) == 2
    assert sum(capsule_volume(*c) for c in two) < 0.5 * capsule_volume(*one[0])
    surface, _ = trimesh.sample.sample_surface(mesh, 20000, seed=0)  # not the vertices alone: the faces too
    assert _covered(np.asarray(surface), two).all()


def test_the_fit_reports_coverage_and_the_volume_added():
    mesh = trimesh.creation.box(extents=(0.3, 0.05, 0.08))
    v = np.asarray(mesh.vertices)
    fit = fit_link("l", "collision", MeshSet(v, np.asarray(mesh.edges_unique), float(mesh.volume), "mesh"))
    assert fit.covered == 1.0 and fit.vertices == 8
    assert fit.capsule_volume > fit.mesh_volume == pytest.approx(0.3 * 0.05 * 0.08)
    assert fit.added_volume == pytest.approx(fit.capsule_volume - fit.mesh_volume)
    assert "cover 100.00 % of 8 vertices" in fit.source() and "mesh 1200 cm3" in fit.source()


def test_from_meshes_uses_collision_meshes_else_visual_ones_and_says_where_it_guesses(tmp_path):
    robot = _arm(tmp_path)
    with pytest.warns(UserWarning) as caught:
        model = CollisionModel.from_meshes(robot, radius=0.03, self_samples=0)
    warned = " ".join(str(w.message) for w in caught)
    assert "l3: no collision or visual geometry; segment capsule r=0.03 m (a guess)" in warned
    assert "l4: mesh 'package://arm/meshes/missing.stl' not found; segment capsule r=0.03 m (a guess)" in warned
    assert len(caught) == 2 and "base" not in warned  # the base and the tool frame: no geometry, no segment
    assert [n.split(":")[0] for n in model.notes] == ["base", "l3", "l4", "tool"]
    by_link = {
        name: [c for c in range(len(model.source)) if model.link_names[model.link[c]] == name]
        for name in robot.link_names
    }
    (c1,) = by_link["l1"]  # the collision cylinder, not the 0.5 m visual sphere
    assert model.source[c1].startswith("fitted to collision meshes") and "cover 100.00 %" in model.source[c1]
    assert float(model.radius[c1]) == pytest.approx(0.05, abs=2e-3)
    assert 0.0 < float(model.a[c1][2]) < float(model.b[c1][2]) < 0.4 or 0.0 < float(model.b[c1][2]) < 0.4
    (c2,) = by_link["l2"]  # the visual box, scaled 2x along its z, turned onto the link's x axis
    assert model.source[c2].startswith("fitted to visual meshes")
    assert abs(float(model.b[c2][0] - model.a[c2][0])) > 0.1
    for name in ("l3", "l4"):
        (c,) = by_link[name]
        assert model.source[c].startswith("segment") and float(model.radius[c]) == 0.03


def test_the_cli_writes_the_fitted_file_with_its_report(tmp_path, capsys):
    robot = _arm(tmp_path)
    out, pad = tmp_path / "fitted.yaml", tmp_path / "padded.yaml"
    cli = ["robot", "collision", robot.source, "--base", "base", "--ee", "tool"]
    with pytest.warns(UserWarning):
        assert main([*cli, "--fit-meshes", "--max-capsules", "1", "--out", str(out)]) == 0
        assert main([*cli, "--fit-meshes", "--padding", "0.002", "--attach", "cam", "--out", str(pad)]) == 0
    printed = capsys.readouterr().out
    assert "fitted to collision meshes: 1 capsule(s) cover 100.00 %" in printed and "note: l3:" in printed
    text = out.read_text()
    assert "fitted to visual meshes" in text and "cam" not in text
    assert "padded by 2 mm" in pad.read_text() and "cam (attached, its joints at zero)" in pad.read_text()
    back = CollisionModel.from_file(out, robot, self_samples=0)
    assert back.source[0].startswith("fitted to collision meshes")
    assert main([*cli, "--fit-meshes", "--collision", str(out)]) != 0
    assert "takes no --collision FILE" in capsys.readouterr().err


def test_malformed_or_missing_urdfs_name_the_file(tmp_path):
    robot = _arm(tmp_path)
    bad = tmp_path / "bad.urdf"
    bad.write_text(URDF.replace('scale="1 1 2"', 'scale="1 x 2"'))
    with pytest.raises(GGIKError, match=r"bad\.urdf.*'l2' <visual> 0 <mesh scale>"):
        CollisionModel.from_meshes(robot, urdf=bad)
    with pytest.raises(GGIKError, match="no URDF file"):
        CollisionModel.from_meshes(
            Robot.from_urdf(URDF, "base", "tool")
        )  # from XML text: no file to find meshes beside
    with pytest.raises(ValueError, match="radius"):
        CollisionModel.from_meshes(robot, radius=-1.0)
    with pytest.raises(ValueError, match="padding"):
        MeshFitConfig(padding=float("nan"))
    with pytest.raises(ValueError, match="max_capsules"):
        MeshFitConfig(max_capsules=3)
    with pytest.raises(GGIKError, match=r"arm\.urdf: attach names 'nope'"):
        CollisionModel.from_meshes(robot, fit=MeshFitConfig(attach=("nope",)))


def test_padding_grows_the_fitted_capsules_not_the_guessed_ones(tmp_path):
    robot = _arm(tmp_path)
    with pytest.warns(UserWarning):
        tight = CollisionModel.from_meshes(robot, radius=0.03, self_samples=0)
        padded = CollisionModel.from_meshes(robot, radius=0.03, self_samples=0, fit=MeshFitConfig(padding=0.01))
    fitted = torch.tensor([s.startswith("fitted") for s in tight.source])
    torch.testing.assert_close(padded.radius[fitted], tight.radius[fitted] + 0.01)
    torch.testing.assert_close(padded.radius[~fitted], tight.radius[~fitted])
    assert all(s.endswith("radius padded by 10 mm") for s, f in zip(padded.source, fitted) if f)


def test_the_panda_of_a_public_description_package(tmp_path):
    """example-robot-data (a test extra): its Panda's collision meshes, fitted, cover every vertex, and the capsules
    come within 3 mm of the radii CppFlow's robot library fitted to the same arm; its SRDF's pairs apply."""
    from benchmarks.common.scripts import BenchmarkError
    from benchmarks.cppflow.capsules import cppflow_collision_model
    from benchmarks.cppflow.models import public_panda

    try:
        urdf, srdf = public_panda()
    except BenchmarkError as exc:  # example-robot-data ships data, no module to importorskip
        pytest.skip(str(exc))
    robot = Robot.from_urdf(urdf, "panda_link0", "panda_hand")
    model = CollisionModel.from_meshes(robot, srdf=srdf)
    assert "panda_link8: no collision or visual geometry; no capsule (segment < 1 mm)" in model.notes
    assert len(model.source) == 9 and all("cover 100.00 %" in s for s in model.source)
    assert model.pairs_from.startswith("SRDF") and len(model.skipped) > 0
    theirs = cppflow_collision_model(robot, "panda")
    ours = {robot.link_names[int(k)]: float(r) for k, r in zip(model.link, model.radius)}
    for k, r in zip(theirs.link, theirs.radius):
        assert ours[robot.link_names[int(k)]] == pytest.approx(float(r), abs=3e-3)
    assert torch.all(model.radius > 0.04)


def test_with_an_srdf_pairs_always_in_contact_as_capsules_are_left_out(tmp_path):
    robot = _arm(tmp_path)
    srdf = tmp_path / "arm.srdf"
    srdf.write_text('<robot name="arm"><disable_collisions link1="l1" link2="l4" reason="Never"/></robot>')
    with pytest.warns(UserWarning):
        model = CollisionModel.from_meshes(robot, radius=0.5, srdf=srdf, self_samples=200)  # fat guessed capsules
    names = [model.link_names[int(k)] for k in model.link]
    skipped = {(names[i], names[j]): why for i, j, why in model.skipped}
    assert skipped[("l1", "l4")] == "Never" and skipped[("l1", "l3")] == "Always"  # the SRDF's, then the capsules'
    assert any("left out (Always): l1 - l3" in n for n in model.notes)
    d = model.self_distances(robot, robot.sample_q(200, torch.Generator().manual_seed(1)))
    assert not (d < 0).all(0).any()  # no pair left that every configuration violates


def test_an_attached_link_is_fitted_in_the_frame_of_the_chain_link_it_hangs_from(tmp_path):
    robot = _arm(tmp_path)
    srdf = tmp_path / "arm.srdf"
    srdf.write_text('<robot name="arm"><disable_collisions link1="cam" link2="l4" reason="Never"/></robot>')
    with pytest.warns(UserWarning):
        model = CollisionModel.from_meshes(robot, srdf=srdf, fit=MeshFitConfig(attach=("cam",)), self_samples=50)
    (c,) = [k for k, s in enumerate(model.source) if s.startswith("cam (attached, its joints at zero): fitted")]
    assert model.link_names[int(model.link[c])] == "l2" and model.covers[c] == "cam"
    mid = (model.a[c] + model.b[c]) / 2  # the bar's centre: the joint's origin in l2's frame
    torch.testing.assert_close(mid, torch.tensor([0.1, 0.0, 0.2], dtype=torch.float64), atol=2e-3, rtol=0)
    assert abs(float(model.b[c][0] - model.a[c][0])) > 0.1  # along l2's x, as the bar lies
    l4 = [k for k in range(len(model.source)) if model.covers[k] == "l4"]
    skipped = {(i, j): why for i, j, why in model.skipped}
    assert all(skipped.get((min(c, k), max(c, k))) == "Never" for k in l4)  # the SRDF names it by its own name
