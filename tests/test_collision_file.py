"""Collision files (ggik.collision.collision_file): the round trip of ggik's own models, every malformed case a
GGIKError naming the file and the field, and ``collision=`` / ``--collision FILE`` in the solvers and commands."""

from __future__ import annotations

import json
import math

import pytest
import torch
import yaml

from ggik import GGIK, Robot, SolveConfig, random_robot
from ggik.cli import main
from ggik.collision import Box, Clearance, CollisionConfig, CollisionFileError, CollisionModel, Scene
from ggik.collision.collision_file import collision_dict, read_collision_file
from ggik.errors import GGIKError

F64 = torch.float64

#: links with several shapes: a sphere before a cylinder (the file lists capsules first), a box and a sphere
URDF = """<robot name="arm">
  <link name="base"/>
  <link name="l1"><collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.06"/></geometry></collision>
  <collision><origin xyz="0 0 0.2"/><geometry><cylinder radius="0.05" length="0.4"/></geometry></collision></link>
  <link name="l2"><collision><origin xyz="0.15 0 0" rpy="0 1.5707963 0"/><geometry><box size="0.06 0.08 0.3"/>
  </geometry></collision><collision><geometry><sphere radius="0.07"/></geometry></collision></link>
  <link name="l3"/>
  <link name="l4"><collision><origin xyz="0.1 0 0" rpy="0 1.5707963 0"/><geometry><cylinder radius="0.03"
  length="0.2"/></geometry></collision><collision><origin xyz="0.2 0 0"/><geometry><sphere radius="0.04"/>
  </geometry></collision></link>
  <link name="tool"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.4"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j5" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0.25 0 0"/></joint>
</robot>"""


def canonical(model: CollisionModel) -> tuple:
    """The model's capsules in file order (per link: capsules, then spheres) and its pairs by those positions."""
    sphere = (model.a == model.b).all(-1).tolist()
    order = sorted(range(len(sphere)), key=lambda c: (int(model.link[c]), sphere[c], c))
    where = {c: k for k, c in enumerate(order)}
    pairs = sorted(tuple(sorted((where[i], where[j]))) for i, j in model.self_pairs.tolist())
    return (
        model.link[order],
        model.a[order],
        model.b[order],
        model.radius[order],
        model.moving[order],
        [model.source[c] for c in order],
        pairs,
    )


def assert_same_model(x: CollisionModel, y: CollisionModel) -> None:
    cx, cy = canonical(x), canonical(y)
    assert torch.equal(cx[0], cy[0]) and torch.equal(cx[4], cy[4])
    for k in (1, 2, 3):
        torch.testing.assert_close(cx[k], cy[k], rtol=0, atol=1e-15)
    assert cx[5] == cy[5] and cx[6] == cy[6]


@pytest.mark.parametrize("which", ["panda", "ur10", "arm", "random"])
def test_a_written_model_reads_back_the_same(tmp_path, which):
    if which == "arm":
        robot = Robot.from_urdf(URDF)
    elif which == "random":
        robot = random_robot(6, 7)
    else:
        robot = Robot.from_name(which)
    model = CollisionModel.from_robot(robot, self_samples=300, seed=3)
    assert len(model.skipped) > 0  # the pairs left out are in the file, not found again
    path = model.to_file(tmp_path / "m.yaml")
    back = CollisionModel.from_file(path, robot)
    assert_same_model(model, back)
    assert back.pairs_from == f"collision file {path}" and len(back.skipped) == len(model.skipped)
    # the file again from what was read: the same text but for the header's note on where the pairs came from
    assert collision_dict(back) == collision_dict(model)
    # without skip_pairs the file's model gets its pairs as ggik's own: the same sampled rule
    data = yaml.safe_load(path.read_text())
    del data["skip_pairs"]
    (tmp_path / "free.yaml").write_text(yaml.safe_dump(data))
    assert_same_model(model, CollisionModel.from_file(tmp_path / "free.yaml", robot, self_samples=300, seed=3))


def test_spheres_and_capsules_of_a_link_and_pairs_of_single_shapes(tmp_path):
    robot = Robot.from_urdf(URDF)
    model = CollisionModel.from_robot(robot, self_samples=0)
    data = collision_dict(model)
    assert [len(data["links"]["l1"][k]) for k in ("capsules", "spheres")] == [1, 1]
    assert data["links"]["l1"]["spheres"][0] == {"center": [0.0, 0.0, 0.3], "radius": 0.06, "source": "urdf"}
    assert data["skip_pairs"] == []
    # leave out one pair of single shapes: written as LINK#k (l1's sphere is its shape #1, after its capsule)
    l1_sphere = next(
        c for c in range(len(model.source)) if model.link[c] == 1 and bool((model.a[c] == model.b[c]).all())
    )
    l4 = [c for c in range(len(model.source)) if robot.link_names[int(model.link[c])] == "l4"]
    model.skip_pairs([(l1_sphere, l4[0])], "User", "test")
    data = collision_dict(model)
    l4_first = "l4#0" if not bool((model.a[l4[0]] == model.b[l4[0]]).all()) else "l4#1"
    assert data["skip_pairs"] == [["l1#1", l4_first]]
    back = CollisionModel.from_file(model.to_file(tmp_path / "m.yaml"), robot)
    assert_same_model(model, back)
    # a whole link pair by name: every pair of their shapes (2 x 2) left out
    data["skip_pairs"] = [["l1", "l4"]]
    (tmp_path / "w.yaml").write_text(yaml.safe_dump(data))
    shapes = read_collision_file(tmp_path / "w.yaml", robot)
    assert shapes.skip is not None and len(shapes.skip) == 4
    whole = CollisionModel.from_file(tmp_path / "w.yaml", robot)
    assert len(whole.self_pairs) == len(model.self_pairs) + 1 - 4
    assert all(robot.link_names[int(whole.link[i])] != "l1" or whole.link[j] != 4 for i, j in whole.self_pairs.tolist())


def _good() -> dict:
    return {
        "ggik_collision": 1,
        "robot": "panda",
        "frame": "link",
        "links": {
            "panda_link2": {"capsules": [{"a": [0, 0, 0], "b": [0, -0.3, 0], "radius": 0.05}]},
            "panda_link4": {"spheres": [{"center": [0, 0.2, 0], "radius": 0.06}]},
            "panda_link7": {"capsules": [{"a": [0, 0, 0], "b": [0, 0, 0.1], "radius": 0.04}]},
        },
        "skip_pairs": [["panda_link2", "panda_link7"]],
    }


def _set(path: str, value):
    def change(data: dict) -> None:
        *keys, last = path.split("/")
        node = data
        for k in keys:
            node = node[int(k)] if isinstance(node, list) else node[k]
        if value is KeyError:
            del node[last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


@pytest.mark.parametrize(
    "change, field",
    [
        (_set("links/panda_hand", {"spheres": [{"center": [0, 0, 0], "radius": 0.1}]}), "links.panda_hand"),
        (_set("links/panda_link2/capsules/0/radius", -0.05), "links.panda_link2.capsules[0].radius"),
        (_set("links/panda_link4/spheres/0/radius", math.nan), "links.panda_link4.spheres[0].radius"),
        (_set("links/panda_link4/spheres/0/radius", 0), "links.panda_link4.spheres[0].radius"),
        (_set("links/panda_link2/capsules/0/b", KeyError), "links.panda_link2.capsules[0]: missing field 'b'"),
        (_set("links/panda_link4/spheres/0/center", KeyError), "spheres[0]: missing field 'center'"),
        (_set("links/panda_link2/capsules/0/a", [0, 0]), "links.panda_link2.capsules[0].a"),
        (_set("links/panda_link2/capsules/0/a", [0, math.inf, 0]), "links.panda_link2.capsules[0].a"),
        (_set("links/panda_link2/capsules/0/color", "red"), "links.panda_link2.capsules[0]: unknown keys ['color']"),
        (_set("links/panda_link2/boxes", []), "links.panda_link2: unknown keys ['boxes']"),
        (_set("frame", "world"), "frame: 'world' is not accepted"),
        (_set("frame", KeyError), "missing field 'frame'"),
        (_set("ggik_collision", KeyError), "missing field 'ggik_collision'"),
        (_set("ggik_collision", 2), "ggik_collision: format version 2"),
        (_set("links", KeyError), "missing field 'links'"),
        (_set("links", {}), "links: no link has a capsule or sphere"),
        (_set("shapes", []), "unknown keys ['shapes']"),
        (_set("skip_pairs/0/1", "panda_link9"), "skip_pairs[0][1]: 'panda_link9'"),
        (_set("skip_pairs/0/1", "panda_link7#3"), "skip_pairs[0][1]: 'panda_link7#3'"),
        (_set("skip_pairs/0", ["panda_link2"]), "skip_pairs[0] must be a pair"),
        (_set("skip_pairs/0", ["panda_link2", "panda_link2#0"]), "skip_pairs[0]: ['panda_link2', 'panda_link2#0']"),
    ],
)
def test_a_malformed_collision_file_names_the_file_and_the_field(tmp_path, change, field):
    robot = Robot.from_name("panda")
    data = _good()
    CollisionModel.from_file(_write(tmp_path / "ok.yaml", data), robot)  # the unchanged file is fine
    change(data)
    path = _write(tmp_path / "bad.yaml", data)
    with pytest.raises(CollisionFileError) as exc:
        CollisionModel.from_file(path, robot)
    assert isinstance(exc.value, GGIKError)
    assert str(path) in str(exc.value) and field in str(exc.value), str(exc.value)


def test_unreadable_or_missing_collision_files(tmp_path):
    robot = Robot.from_name("panda")
    (tmp_path / "x.yaml").write_text("links: [unclosed\n")
    with pytest.raises(CollisionFileError, match=rf"{tmp_path / 'x.yaml'}: not valid YAML"):
        CollisionModel.from_file(tmp_path / "x.yaml", robot)
    (tmp_path / "list.yaml").write_text("- 1\n")
    with pytest.raises(CollisionFileError, match="a collision file is a mapping"):
        CollisionModel.from_file(tmp_path / "list.yaml", robot)
    with pytest.raises(FileNotFoundError, match="missing.yaml"):
        CollisionModel.from_file(tmp_path / "missing.yaml", robot)
    # a link of the URDF that is not on the chain is named as such
    ur = Robot.from_urdf(URDF, ee_link="l3")
    with pytest.raises(CollisionFileError, match=r"links.l4: no such link .* in the URDF but not on the chain"):
        CollisionModel.from_file(CollisionModel.from_robot(Robot.from_urdf(URDF)).to_file(tmp_path / "a.yaml"), ur)


def _write(path, data: dict):
    path.write_text(yaml.safe_dump(data))
    return path


def _panda_problem():
    robot = Robot.from_name("panda")
    scene = Scene(boxes=(Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06)),))
    T = robot.fk(torch.tensor([[0.1, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8], [-0.4, 0.6, 0.3, -1.5, 0.2, 1.9, 0.3]], dtype=F64))
    return robot, scene, T


def test_solving_with_a_collision_file_is_solving_with_its_model(tmp_path):
    robot, scene, T = _panda_problem()
    solver = GGIK.pretrained()
    model = CollisionModel.from_robot(robot, radius=0.06)  # fatter than the default: another model than ggik's own
    path = model.to_file(tmp_path / "fat.yaml")
    config = SolveConfig(samples=4, refine="lm", strategy="samples")
    runs = [
        solver.solve(robot, T, config, obstacles=scene, collision=path, generator=torch.Generator().manual_seed(2)),
        solver.solve(
            robot,
            T,
            config,
            obstacles=scene,
            collision=CollisionConfig(model_file=str(path)),
            generator=torch.Generator().manual_seed(2),
        ),  # fmt: skip
        solver.solve(
            robot, T, config, obstacles=Clearance(robot, model, scene), generator=torch.Generator().manual_seed(2)
        ),
    ]
    for res in runs[1:]:
        assert torch.equal(res.q, runs[0].q) and torch.equal(res.clearance, runs[0].clearance)
    assert torch.equal(solver.collision_model(robot, CollisionConfig(model_file=path)).radius, model.radius)
    own = solver.solve(robot, T, config, obstacles=scene, generator=torch.Generator().manual_seed(2))
    assert not torch.equal(own.clearance, runs[0].clearance)  # the file's model was used, not ggik's own
    with pytest.raises(ValueError, match="without obstacles"):
        solver.solve(robot, T, config, collision=path)
    with pytest.raises(ValueError, match="not both"):
        Clearance(robot, model, scene, CollisionConfig(model_file=path))
    res = solver.solve_path(robot, T, obstacles=Scene(), collision=path, generator=torch.Generator().manual_seed(0))
    assert res.q.shape == (2, 7)


PANDA_POSE = ["--pose", "0.4", "0.1", "0.5", "0", "1", "0", "0"]


def test_cli_collision_writes_the_model_and_solve_path_view_take_it(tmp_path, capsys):
    out, srdf = tmp_path / "panda.yaml", tmp_path / "panda.srdf"
    assert main(["robot", "collision", "panda", "--out", str(out), "--srdf-out", str(srdf)]) == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}" in printed and f"wrote {srdf}" in printed and "self-collision pairs checked" in printed
    robot = Robot.from_name("panda")
    assert_same_model(CollisionModel.from_file(out, robot), CollisionModel.from_robot(robot))
    assert main(["robot", "collision", "panda"]) == 0  # the file on stdout
    assert yaml.safe_load(capsys.readouterr().out) == yaml.safe_load(out.read_text())
    (tmp_path / "scene.yaml").write_text("frame: panda_link0\nboxes: [{size: [1, 1, 0.02], xyz: [0.4, 0, -0.06]}]\n")
    args = ["solve", "--robot", "panda", *PANDA_POSE, "-s", "4", "--obstacles", str(tmp_path / "scene.yaml"), "--json"]
    assert main(args) == 0
    own = json.loads(capsys.readouterr().out)
    assert main([*args, "--collision", str(out)]) == 0  # ggik's own model, from its file: the same solve
    assert json.loads(capsys.readouterr().out) == own
    fat = CollisionModel.from_robot(robot, radius=0.07).to_file(tmp_path / "fat.yaml")
    main([*args, "--collision", str(fat)])
    rows = json.loads(capsys.readouterr().out)["solutions"]
    assert rows and [r["self_clearance_m"] for r in rows] != [r["self_clearance_m"] for r in own["solutions"]]
    bad = _write(tmp_path / "bad.yaml", {**_good(), "frame": "world"})
    assert main([*args, "--collision", str(bad)]) == 2
    assert f"{bad}: frame: 'world'" in capsys.readouterr().err
    assert main([*args[:-3], "--json", "--collision", str(out)]) == 0  # no --obstacles: self-collision alone
    alone = json.loads(capsys.readouterr().out)["solutions"]
    assert alone and all(math.isfinite(r["self_clearance_m"]) and r["self_clearance_m"] >= 0 for r in alone)
    assert main([*args[:-3], "--collision", str(bad)]) == 2  # and the file is still read
    assert f"{bad}: frame: 'world'" in capsys.readouterr().err
    path_csv = tmp_path / "p.csv"
    path_csv.write_text("0.4,0.1,0.5,0,1,0,0\n")
    path_args = ["path", "--robot", "panda", "--path", str(path_csv), "-s", "0", "--time-limit", "2", "--no-progress"]
    assert main([*path_args, "--obstacles", str(tmp_path / "scene.yaml"), "--collision", str(bad)]) == 2
    assert f"{bad}: frame: 'world'" in capsys.readouterr().err
    assert main([*path_args, "--obstacles", str(tmp_path / "scene.yaml"), "--collision", str(out), "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["joint_names"] == list(robot.joint_names)
    pytest.importorskip("viser", reason="the viewer's optional dependency: pip install 'ggik[view]'")
    view = ["view", "--robot", "panda", "--obstacles", str(tmp_path / "scene.yaml"), "--port", "0"]
    assert main([*view, "--collision", str(bad)]) == 2
    assert f"{bad}: frame: 'world'" in capsys.readouterr().err
