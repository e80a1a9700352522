"""ggik reads URDF joints straight from the XML (no parser library at run time); yourdfpy, an independent URDF
parser, is the reference: every joint field of every file we can find agrees with what yourdfpy reads."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import REPO_ROOT, SHARED_DIR

from ggik import random_robot, randomize_links
from ggik.kinematics.urdf import read_urdf

yourdfpy = pytest.importorskip("yourdfpy", reason="yourdfpy is the reference parser of this test (extra 'test')")

REPO_URDFS = sorted((REPO_ROOT / "urdfs").glob("*.urdf"))
SHIPPED_URDFS = sorted((REPO_ROOT / "ggik").rglob("*.urdf"))


def _reference_joints(text: str) -> dict:
    """{joint name: (type, parent, child, origin (4, 4), axis (3,), lower, upper, mimic)} as yourdfpy reads them."""
    import io
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    for link in root.findall("link"):  # geometry is not what this test compares (and yourdfpy refuses <capsule>)
        for el in link.findall("collision") + link.findall("visual"):
            link.remove(el)
    urdf = yourdfpy.URDF.load(
        io.BytesIO(ET.tostring(root)),
        load_meshes=False,
        build_scene_graph=False,
        load_collision_meshes=False,
        build_collision_scene_graph=False,
    )
    out = {}
    for j in urdf.robot.joints:
        origin = np.eye(4) if j.origin is None else np.asarray(j.origin, dtype=np.float64)
        axis = np.asarray(j.axis, dtype=np.float64)
        if j.type != "fixed":
            axis = axis / np.linalg.norm(axis)
        lower = upper = None
        if j.limit is not None:
            lower, upper = j.limit.lower, j.limit.upper
        mimic = None
        if j.mimic is not None:
            mimic = (j.mimic.joint, j.mimic.multiplier or 1.0, j.mimic.offset or 0.0)
        out[j.name] = (j.type, j.parent, j.child, origin, axis, lower, upper, mimic)
    return out, urdf.robot.name


def _assert_same_as_reference(text: str) -> None:
    model = read_urdf(text)
    ref, name = _reference_joints(text)
    assert model.name == name
    assert [j.name for j in model.joints] == list(ref)
    for j in model.joints:
        jtype, parent, child, origin, axis, lower, upper, mimic = ref[j.name]
        assert (j.type, j.parent, j.child) == (jtype, parent, child), j.name
        np.testing.assert_allclose(j.origin, origin, atol=1e-12, rtol=0, err_msg=j.name)
        np.testing.assert_allclose(j.axis, axis, atol=1e-12, rtol=0, err_msg=j.name)
        assert (j.lower, j.upper) == (lower, upper), j.name
        assert j.mimic == mimic, j.name


@pytest.mark.parametrize("path", REPO_URDFS + SHIPPED_URDFS, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_repository_urdfs_read_as_yourdfpy_reads_them(path: Path) -> None:
    _assert_same_as_reference(path.read_text())


def test_reference_urdfs_read_as_yourdfpy_reads_them() -> None:
    folder = SHARED_DIR / "reference-urdfs"
    if not folder.is_dir():
        pytest.skip(f"{folder} absent (../shared is project material, not in a clone)")
    files = sorted(folder.rglob("*.urdf"))
    assert files
    for path in files:
        _assert_same_as_reference(path.read_text())


@pytest.mark.parametrize("seed", range(8))
def test_random_robots_read_as_yourdfpy_reads_them(seed: int) -> None:
    """Random DH and link-randomised chains, written with arbitrary rpy origins: every angle convention exercised."""
    gen = torch.Generator().manual_seed(seed)
    robot = random_robot(5 + seed % 3, gen)
    _assert_same_as_reference(robot.to_urdf())
    _assert_same_as_reference(randomize_links(robot, 0.3, gen).to_urdf())


def test_defaults_of_absent_elements_are_urdf_defaults() -> None:
    """No <origin>, no <axis>, no <limit>, a <mimic> without multiplier: URDF's defaults, as yourdfpy gives them."""
    text = """<robot name="r"><link name="a"/><link name="b"/><link name="c"/>
      <joint name="j1" type="continuous"><parent link="a"/><child link="b"/></joint>
      <joint name="j2" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0 1"/>
        <axis xyz="0 0 2"/><limit upper="1" effort="1" velocity="1"/><mimic joint="j1"/></joint></robot>"""
    _assert_same_as_reference(text)
    j1, j2 = read_urdf(text).joints
    np.testing.assert_array_equal(j1.origin, np.eye(4))
    np.testing.assert_array_equal(j1.axis, [1.0, 0.0, 0.0])
    assert (j1.lower, j1.upper, j2.lower, j2.upper) == (None, None, None, 1.0)
    np.testing.assert_array_equal(j2.axis, [0.0, 0.0, 1.0])
    assert j2.mimic == ("j1", 1.0, 0.0)
