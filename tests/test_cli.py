"""The ggik command line, and the committed graphs/ JSON files against a rebuild."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ggik import available_robots
from ggik.cli.commands import main

REPO = Path(__file__).resolve().parents[1]


def _close(a, b, tol: float = 1e-9) -> bool:
    """Structural equality of JSON values with a tolerance on numbers."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and isinstance(a, (int, float)) and abs(a - b) <= tol
    return a == b


@pytest.mark.parametrize("name", available_robots())
def test_committed_graph_json_matches_rebuild(name, tmp_path):
    assert main(["graph", "build", name, "-o", str(tmp_path / "g.json")]) == 0
    rebuilt = json.loads((tmp_path / "g.json").read_text())
    committed = json.loads((REPO / "graphs" / f"{name}.json").read_text())
    assert _close(rebuilt, committed), f"graphs/{name}.json is stale: run `ggik graph build --all -o graphs/`"


def test_graph_build_all_writes_one_file_per_robot(tmp_path):
    assert main(["graph", "build", "--all", "-o", str(tmp_path)]) == 0
    assert sorted(p.stem for p in tmp_path.glob("*.json")) == sorted(available_robots())
    assert not list(tmp_path.glob(".*.tmp")), "atomic writes must not leave temporary files"


def test_robot_show_prints_chain_and_graph(capsys):
    assert main(["robot", "show", "panda"]) == 0
    out = capsys.readouterr().out
    assert "panda_joint7" in out and "7 DOF" in out and "18 nodes" in out


def test_robot_show_urdf_file_with_links(capsys):
    urdf = REPO / "urdfs" / "irb140.urdf"
    assert main(["robot", "show", str(urdf), "--base", "link_1", "--ee", "link_6"]) == 0
    out = capsys.readouterr().out
    assert "link_1 -> link_6, 5 DOF" in out


def test_robot_show_refused_graph_is_reported(tmp_path, capsys):
    urdf = tmp_path / "slider.urdf"
    urdf.write_text(
        '<robot name="slider"><link name="a"/><link name="b"/><link name="c"/>'
        '<joint name="lift" type="prismatic"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        '<limit lower="0" upper="0.5" effort="1" velocity="1"/></joint>'
        '<joint name="turn" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>'
    )
    assert main(["robot", "show", str(urdf)]) == 0
    out = capsys.readouterr().out
    assert "cannot be represented" in out and "'lift'" in out and "lock" in out


def test_unknown_robot_is_a_clean_error(capsys):
    assert main(["robot", "show", "no_such_robot"]) == 2
    err = capsys.readouterr().err
    assert "neither a URDF file nor a shipped robot" in err


def test_missing_urdf_file_is_a_clean_error(capsys, tmp_path):
    assert main(["graph", "show", str(tmp_path / "missing.urdf")]) == 2
    assert "not found" in capsys.readouterr().err


DEMO_SMALL = ["demo", "--seed", "3", "--goals", "2", "--samples", "4", "--show", "2"]


def test_demo_solves_with_the_shipped_model(tmp_path, capsys):
    out_png = tmp_path / "demo" / "solutions.png"
    assert main(DEMO_SMALL + ["--out", str(out_png)]) == 0
    out = capsys.readouterr().out
    assert "ggik demo: the shipped model" in out
    assert "panda (7 DOF, a training robot)" in out and "ur10 (6 DOF, a training robot)" in out
    assert "random7_seed7010 (7 DOF, a random robot the model never saw" in out
    assert out.count("raw samples:") == 3 and out.count("LM-refined:") == 3
    rows = [line for line in out.splitlines() if line.count("|") == 3 and line.endswith("]") and "goal" not in line]
    assert 3 * 2 <= len(rows) <= 3 * 2 * 2  # 3 robots x 2 goals x 1..2 distinct solutions listed
    pytest.importorskip("matplotlib")
    assert f"figure: {out_png}" in out
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_without_matplotlib_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import and find_spec then fail as if not installed
    assert main(["demo", "--goals", "1", "--samples", "2", "--show", "1", "--out", str(tmp_path / "s.png")]) == 0
    assert "no figure: matplotlib is not installed" in capsys.readouterr().out
    assert not (tmp_path / "s.png").exists()


def test_demo_counts_a_zero_weight_robot_as_unseen(tmp_path, capsys, monkeypatch):
    """A named robot kept with weight 0 (leave-one-out training) was not trained on, as in ggik eval generalisation."""
    import ggik.ik.solver

    original = ggik.ik.solver.GGIK.pretrained.__func__

    def pretrained(cls, device="cpu"):
        solver = original(cls, device)
        trained = solver.checkpoint["training_robots"]
        solver.checkpoint = {**solver.checkpoint, "training_robots": {**trained, "named": {**trained["named"], "panda": 0.0}}}
        return solver

    monkeypatch.setattr(ggik.ik.solver.GGIK, "pretrained", classmethod(pretrained))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # no figure: faster
    assert main(["demo", "--goals", "1", "--samples", "2", "--show", "1", "--out", str(tmp_path / "s.png")]) == 0
    out = capsys.readouterr().out
    assert "panda (7 DOF, NOT among this model's training robots)" in out and "ur10 (6 DOF, a training robot)" in out


@pytest.mark.parametrize("extra, message", [(["--goals", "0"], "must be at least 1"), (["--out", "x.jpg"], "must end in .png")])
def test_demo_bad_options(extra, message, capsys):
    assert main(["demo"] + extra) == 2
    assert message in capsys.readouterr().err
