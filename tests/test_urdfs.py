"""The nine shipped URDFs (urdfs/) against the original files and the FK check values of robots.md.

The originals live in ../shared/reference-urdfs (project material, not shipped): the tests that read them
skip with a reason when ../shared is absent; the shipped robots themselves need nothing from it. The FK
check values of ../shared/robots.md are committed as tests/data/golden_fk.json (tests/data/make_golden_fk.py
writes it), so they run everywhere; when robots.md is present the JSON is checked against it.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
import yaml
from conftest import GOLDEN_FK_JSON, REFERENCE_FILES, REPO_ROOT, load_golden_generator, shared_path

import ggik
from ggik import Robot
from ggik.kinematics import geometry as geo

F64 = torch.float64


def reference_file(name: str):
    return shared_path("reference-urdfs", REFERENCE_FILES[name])


def test_registry_lists_the_nine_robots(robot_names):
    registry = yaml.safe_load((REPO_ROOT / "urdfs" / "robots.yaml").read_text(encoding="utf-8"))
    assert set(registry) == set(REFERENCE_FILES)
    assert robot_names == ggik.available_robots() == list(registry)
    assert set(ggik.available_robots(paper_only=True)) == {"ur10", "lbr_iiwa", "panda", "schunk_lwa4d", "schunk_lwa4p"}
    for name, entry in registry.items():
        assert (REPO_ROOT / "urdfs" / entry["file"]).is_file(), name


def test_shipped_robot_metadata(named_robot):
    """from_name reads the registry's base/EE links; all shipped chains are 6 or 7 revolute joints."""
    registry = yaml.safe_load((REPO_ROOT / "urdfs" / "robots.yaml").read_text(encoding="utf-8"))
    entry = registry[named_robot.name]  # the <robot name> of each shipped file is its registry name
    assert (named_robot.base_link, named_robot.ee_link) == (entry["base_link"], entry["ee_link"])
    assert named_robot.dof in (6, 7)
    assert set(named_robot.joint_types) == {"revolute"}
    assert bool(named_robot.limited.all())
    # from_urdf on the shipped file (path, default base/EE) gives the same chain as from_name.
    same = Robot.from_urdf(REPO_ROOT / "urdfs" / entry["file"])
    assert (same.base_link, same.ee_link, same.joint_names) == (
        named_robot.base_link,
        named_robot.ee_link,
        named_robot.joint_names,
    )


@pytest.mark.parametrize("name", list(REFERENCE_FILES))
def test_fk_matches_original_urdf_with_yourdfpy(name, rng):
    """Our kinematics-only file == the original read by yourdfpy, at 100 configurations in the limits."""
    _assert_fk_matches_yourdfpy(Robot.from_name(name), reference_file(name), rng)


def _assert_fk_matches_yourdfpy(robot: Robot, path, rng) -> None:
    """``robot``'s EE pose == the one yourdfpy computes from the file ``path``, at 100 configurations within the
    limits, to 1e-9 (joint names and base link the same too)."""
    import yourdfpy

    ref = yourdfpy.URDF.load(
        str(path), load_meshes=False, build_collision_scene_graph=False, load_collision_meshes=False
    )
    assert list(ref.actuated_joint_names) == list(robot.joint_names)
    assert ref.base_link == robot.base_link
    q = robot.sample_q(100, rng)
    ours = robot.fk(q).numpy()
    theirs = np.empty_like(ours)
    for k in range(len(q)):
        ref.update_cfg(q[k].numpy())
        theirs[k] = ref.get_transform(frame_to=robot.ee_link, frame_from=robot.base_link)
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)


SHIPPED_URDFS = sorted((REPO_ROOT / "urdfs").glob("*.urdf"))


def test_the_shipped_urdfs_are_the_nine_robots():
    """The files the yourdfpy comparison below runs on are the registry's nine (a glob that found none would pass)."""
    registry = yaml.safe_load((REPO_ROOT / "urdfs" / "robots.yaml").read_text(encoding="utf-8"))
    assert [p.name for p in SHIPPED_URDFS] == sorted(entry["file"] for entry in registry.values())
    assert len(SHIPPED_URDFS) == len(REFERENCE_FILES) == 9


@pytest.mark.parametrize("path", SHIPPED_URDFS, ids=lambda p: p.name)
def test_fk_of_the_shipped_urdfs_matches_yourdfpy(path, rng):
    """Each file of urdfs/ read by yourdfpy (an independent URDF reader) and by Robot.from_urdf gives the same EE pose
    at 100 configurations within the limits, to 1e-9 (needs no ../shared: this runs everywhere)."""
    _assert_fk_matches_yourdfpy(Robot.from_urdf(path), path, rng)


@pytest.mark.parametrize("name", list(REFERENCE_FILES))
def test_fk_check_values_of_robots_md(name, fk_check_values):
    """The two FK check poses per robot in robots.md (golden_fk.json): position 1e-6, quaternion (up to sign) 1e-6."""
    robot = Robot.from_name(name)
    checks = fk_check_values[name]
    assert len(checks) == 2
    for q, pos, quat in checks:
        assert len(q) == robot.dof
        T = robot.fk(torch.tensor(q, dtype=F64))
        np.testing.assert_allclose(T[:3, 3].numpy(), pos, rtol=0, atol=1e-6)
        ours = geo.matrix_to_quat(T[:3, :3]).numpy()
        quat = np.asarray(quat)
        err = min(np.abs(ours - quat).max(), np.abs(ours + quat).max())
        assert err < 1e-6, (q, ours, quat)


@pytest.mark.parametrize("name", list(REFERENCE_FILES))
def test_original_file_gives_the_same_chain_by_default(name, rng):
    """Robot.from_urdf(original) with default base/EE finds our chain (off-chain fixed branches ignored)."""
    ref = Robot.from_urdf(reference_file(name))
    ours = Robot.from_name(name)
    assert (ref.base_link, ref.ee_link) == (ours.base_link, ours.ee_link)
    assert ref.joint_names == ours.joint_names
    assert [j.name for j in ref.joints] == [j.name for j in ours.joints]
    assert ref.link_names == ours.link_names
    torch.testing.assert_close(ref.lower, ours.lower, rtol=0, atol=0)
    torch.testing.assert_close(ref.upper, ours.upper, rtol=0, atol=0)
    q = ours.sample_q(50, rng)
    torch.testing.assert_close(ref.fk(q), ours.fk(q), rtol=0, atol=1e-12)
    torch.testing.assert_close(ref.link_poses(q), ours.link_poses(q), rtol=0, atol=1e-12)


def test_golden_fk_json_matches_robots_md(robots_md):
    """tests/data/golden_fk.json is what make_golden_fk.py makes of ../shared/robots.md today (no drift)."""
    gen = load_golden_generator()
    expected = gen.golden_from_robots_md(robots_md)
    committed = GOLDEN_FK_JSON.read_text(encoding="utf-8")
    assert json.loads(committed) == expected, "golden_fk.json is out of date: run tests/data/make_golden_fk.py"
    assert committed == gen.dumps(expected), "golden_fk.json is not formatted by make_golden_fk.py: rerun it"
    assert set(expected["fk_checks"]) == set(REFERENCE_FILES)
    assert {f: name for name, f in REFERENCE_FILES.items()} == gen.ROBOT_OF_FILE


def test_golden_fk_json_is_self_contained():
    """The committed data names its source and the generator, and holds no absolute path."""
    text = GOLDEN_FK_JSON.read_text(encoding="utf-8")
    data = json.loads(text)
    assert "robots.md" in data["source"] and "tests/data/make_golden_fk.py" in data["source"]
    assert str(REPO_ROOT) not in text and not re.search(r'"(/|~|[A-Za-z]:)', text), "an absolute path in golden_fk.json"
    assert set(data) == {"source", "fk_checks", "dh_tables"}


def test_original_urdfs_read_as_text_and_path_alike():
    """An XML string and a path of the same file give the same robot."""
    path = reference_file("kr16_2")
    a = Robot.from_urdf(path)
    b = Robot.from_urdf(str(path))
    c = Robot.from_urdf(path.read_text(encoding="utf-8"))
    q = a.sample_q(10, torch.Generator().manual_seed(3))
    for other in (b, c):
        assert other.joint_names == a.joint_names
        torch.testing.assert_close(other.fk(q), a.fk(q), rtol=0, atol=0)
