"""CppFlow's benchmark with three collision models (benchmarks/cppflow/models.py): CppFlow's capsules round-trip
through a collision file, the Panda fitted from a public description, and a short run of the table."""

from __future__ import annotations

import argparse

import pytest

from benchmarks.common.scripts import BenchmarkError
from benchmarks.cppflow.capsules import cppflow_collision_model
from benchmarks.cppflow.models import (
    MODELS,
    collision_models,
    cppflow_file_model,
    fetch_ros_files,
    models_table,
    public_panda,
)
from benchmarks.cppflow.problems import load_problem
from ggik import GGIK


def _by_source(model) -> tuple[dict, set]:
    caps = {
        s: (model.link_names[int(model.link[c])], model.a[c].tolist(), model.b[c].tolist(), float(model.radius[c]))
        for c, s in enumerate(model.source)
    }
    pairs = {frozenset((model.source[i], model.source[j])) for i, j in model.self_pairs.tolist()}
    return caps, pairs


@pytest.mark.parametrize("name", ["panda__1cube", "fetch_arm__hello"])
def test_cppflow_capsules_as_a_collision_file_are_cppflow_capsules(tmp_path, name):
    robot = load_problem(name).robot
    family = name.split("__")[0].split("_")[0]
    theirs = cppflow_collision_model(robot, family)
    model, notes = cppflow_file_model(robot, family, tmp_path / "c.yaml")
    (caps_t, pairs_t), (caps_m, pairs_m) = _by_source(theirs), _by_source(model)
    assert caps_m == caps_t
    missing = pairs_t - pairs_m  # only the pair a file cannot hold, and the notes name it
    assert len(missing) == 1 and pairs_m < pairs_t and len(notes) == 1
    (pair,) = missing
    assert all(s in notes[0] for s in pair)


def _public_panda():
    try:
        return public_panda()
    except BenchmarkError as exc:
        pytest.skip(str(exc))


def test_the_fitted_panda_and_a_short_run_of_the_three_models(tmp_path):
    _public_panda()
    problem = load_problem("panda__1cube")
    models, notes = collision_models(problem.robot, "panda", tmp_path)
    assert list(models) == list(MODELS)
    assert all(s.startswith("fitted to collision meshes") for s in models["fitted"].source)
    assert models["fitted"].pairs_from.startswith("collision file")  # the SRDF's pairs, as the file's skip_pairs
    assert len(models["fitted"].skipped) >= 15
    assert models["default"].source[0].startswith("segment")  # CppFlow's URDF names meshes that are not shipped
    args = argparse.Namespace(time_limit=10.0, reruns=1, seed=0, progress=False)
    table = models_table(args, GGIK.pretrained(), ["panda__1cube"], tmp_path)
    assert [row[0] for row in table.rows] == ["panda__1cube", "all"]
    assert table.rows[-1][1] in ("0/1", "1/1") and len(table.columns) == 1 + 2 * len(MODELS)
    assert any(n.startswith("valid: CppFlow's checker") for n in table.notes)


def test_a_fetch_ros_copy_without_its_files_is_named(tmp_path):
    (tmp_path / "fetch_description" / "robots").mkdir(parents=True)
    (tmp_path / "fetch_description" / "robots" / "fetch.urdf").write_text("<robot name='fetch'/>")
    with pytest.raises(BenchmarkError, match=r"--fetch-ros .*: no fetch_moveit_config/config/fetch\.srdf"):
        fetch_ros_files(tmp_path)


def test_the_padding_option_takes_both_families():
    from benchmarks.cppflow.models import _paddings

    assert _paddings("panda=0.002, fetch=0.01") == {"panda": 0.002, "fetch": 0.01}
    for bad in ("panda=0.002", "panda=x,fetch=0.01", "panda=-1,fetch=0"):
        with pytest.raises(argparse.ArgumentTypeError):
            _paddings(bad)
