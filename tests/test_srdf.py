"""SRDF files (ggik.collision.srdf): their disabled pairs replace the sampled ones, links off the chain are ignored with
a note, links the URDF lacks and malformed files are errors naming the file, and ``ggik robot collision --srdf-out``
writes the pairs ggik found as an SRDF that reads back to them."""

from __future__ import annotations

import json

import pytest
import torch

from ggik import GGIK, Robot, SolveConfig
from ggik.cli import main
from ggik.collision import Box, CollisionConfig, CollisionFileError, CollisionModel, Scene
from ggik.collision.srdf import read_srdf, srdf_text
from ggik.errors import GGIKError

F64 = torch.float64

#: a 4-joint arm whose chain ends at "tool"; "finger" hangs off l4, off the chain
URDF = """<robot name="arm">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/><link name="l4"/><link name="tool"/>
  <link name="finger"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1"/></joint>
  <joint name="j4" type="revolute"><parent link="l3"/><child link="l4"/><origin xyz="0.25 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.6" upper="2.6"/></joint>
  <joint name="j5" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0.15 0 0"/></joint>
  <joint name="j6" type="fixed"><parent link="l4"/><child link="finger"/><origin xyz="0.1 0.05 0"/></joint>
</robot>"""


def srdf(path, *pairs: tuple[str, str], extra: str = "") -> str:
    lines = [f'  <disable_collisions link1="{a}" link2="{b}" reason="User"/>' for a, b in pairs]
    path.write_text('<?xml version="1.0"?>\n<robot name="arm">\n' + "\n".join(lines) + extra + "\n</robot>\n")
    return str(path)


def link_pairs(model: CollisionModel) -> set[frozenset[str]]:
    return {frozenset(model.link_names[int(model.link[k])] for k in p) for p in model.self_pairs.tolist()}


def test_the_srdf_pairs_replace_the_sampled_ones(tmp_path):
    robot = Robot.from_urdf(URDF, ee_link="tool")
    every = link_pairs(CollisionModel.from_robot(robot, self_samples=0))  # the candidates: >= 2 moving joints apart
    sampled = link_pairs(CollisionModel.from_robot(robot))
    assert sampled < every  # the sampled rule drops some
    file = srdf(tmp_path / "a.srdf", ("l1", "l3"), ("l1", "l2"))  # l1-l2: one joint apart, never checked anyway
    model = CollisionModel.from_robot(robot, srdf=file)
    assert link_pairs(model) == every - {frozenset(("l1", "l3"))}  # every other candidate checked, sampled or not
    assert model.pairs_from == f"SRDF {file}" and [s[2] for s in model.skipped] == ["User"]
    assert f"left out by the SRDF {file}" in model.describe()
    # the SRDF replaces a collision file's skip_pairs too
    path = CollisionModel.from_robot(robot).to_file(tmp_path / "m.yaml")
    assert link_pairs(CollisionModel.from_file(path, robot)) == sampled
    assert link_pairs(CollisionModel.from_file(path, robot, srdf=file)) == link_pairs(model)
    # an empty SRDF: every candidate checked
    assert link_pairs(CollisionModel.from_robot(robot, srdf=srdf(tmp_path / "e.srdf"))) == every


def test_links_off_the_chain_are_ignored_with_a_note_and_links_the_urdf_lacks_are_errors(tmp_path):
    robot = Robot.from_urdf(URDF, ee_link="tool")
    file = srdf(tmp_path / "g.srdf", ("l1", "l3"), ("finger", "l2"), ("finger", "l1"))
    model = CollisionModel.from_robot(robot, srdf=file)
    assert link_pairs(model) == link_pairs(
        CollisionModel.from_robot(robot, srdf=srdf(tmp_path / "h.srdf", ("l1", "l3")))
    )
    assert len(model.notes) == 1 and "2 disabled pairs name links off the chain" in model.notes[0]
    assert "finger" in model.describe()
    bad = srdf(tmp_path / "bad.srdf", ("l1", "l3"), ("l2", "gripper"))
    with pytest.raises(CollisionFileError) as exc:
        CollisionModel.from_robot(robot, srdf=bad)
    assert isinstance(exc.value, GGIKError)
    assert f"{bad}: disable_collisions[1]: link2='gripper' is not a link of arm's URDF" in str(exc.value)
    # a robot without a URDF knows its chain's links alone
    shorter = Robot.from_urdf(URDF, ee_link="l3")
    with pytest.raises(CollisionFileError, match="link1='finger'"):
        read_srdf(srdf(tmp_path / "x.srdf", ("finger", "l1")), Robot(shorter.joints, name="bare"))


@pytest.mark.parametrize(
    "text, message",
    [
        (
            '<robot name="arm"><disable_collisions link1="l1"/></robot>',
            "disable_collisions[0]: missing attribute 'link2'",
        ),
        ('<robot name="arm"><disable_collisions link2="l1" link1=""/></robot>', "missing attribute 'link1'"),
        ('<robot name="arm"><disable_collisions link1="l1" link2="l3">', "not valid XML"),
        ('<srdf><disable_collisions link1="l1" link2="l3"/></srdf>', "the root element is <srdf>, not <robot>"),
    ],
)
def test_a_malformed_srdf_names_the_file_and_the_element(tmp_path, text, message):
    (tmp_path / "m.srdf").write_text(text)
    with pytest.raises(CollisionFileError) as exc:
        read_srdf(tmp_path / "m.srdf", Robot.from_urdf(URDF, ee_link="tool"))
    assert str(tmp_path / "m.srdf") in str(exc.value) and message in str(exc.value)
    with pytest.raises(FileNotFoundError):
        read_srdf(tmp_path / "missing.srdf", Robot.from_urdf(URDF, ee_link="tool"))


@pytest.mark.parametrize("name", ["panda", "lbr_iiwa", "ur10"])
def test_the_written_srdf_reads_back_to_the_sampled_pairs(tmp_path, name):
    robot = Robot.from_name(name)
    model = CollisionModel.from_robot(robot)
    text, notes = srdf_text(model, robot)
    assert notes == [] and 'reason="Adjacent"' in text and ('reason="Never"' in text or 'reason="Always"' in text)
    (tmp_path / "r.srdf").write_text(text)
    back = CollisionModel.from_robot(robot, srdf=tmp_path / "r.srdf")
    assert torch.equal(back.self_pairs, model.self_pairs)
    assert sorted(s[:2] for s in back.skipped) == sorted(s[:2] for s in model.skipped)


def test_a_link_pair_left_out_in_part_is_named_in_the_notes():
    robot = Robot.from_urdf(
        URDF.replace(
            '<link name="l3"/>',
            '<link name="l3"><collision><geometry><sphere radius="0.03"/></geometry>'
            '</collision><collision><origin xyz="0.2 0 0"/><geometry><sphere radius="0.03"/></geometry>'
            "</collision></link>",
        ),  # fmt: skip
        ee_link="tool",
    )
    model = CollisionModel.from_robot(robot, self_samples=0)
    l3 = [c for c in range(len(model.source)) if model.link_names[int(model.link[c])] == "l3"]
    base = [c for c in range(len(model.source)) if model.link_names[int(model.link[c])] == "l1"]
    assert len(l3) == 2 and len(base) == 1
    model.skip_pairs([(base[0], l3[0])], "Never", "test")
    text, notes = srdf_text(model, robot)
    assert 'link1="l1" link2="l3"' not in text
    assert len(notes) == 1 and "l1 - l3 (1 of 2 capsule pairs)" in notes[0]


def test_solve_and_the_cli_take_an_srdf(tmp_path, capsys):
    robot = Robot.from_name("panda")
    own = CollisionModel.from_robot(robot)
    file = tmp_path / "panda.srdf"
    assert main(["robot", "collision", "panda", "--srdf-out", str(file)]) == 0
    assert f"wrote {file}" in capsys.readouterr().out
    solver = GGIK.pretrained()
    scene = Scene(boxes=(Box((1.0, 1.0, 0.02), (0.4, 0.0, -0.06)),))
    T = robot.fk(torch.tensor([0.1, 0.3, 0.0, -1.8, 0.0, 2.1, 0.8], dtype=F64))
    config = SolveConfig(samples=4, refine="lm", strategy="samples")
    a = solver.solve(robot, T, config, obstacles=scene, generator=torch.Generator().manual_seed(0))
    b = solver.solve(
        robot,
        T,
        config,
        obstacles=scene,
        collision=CollisionConfig(srdf=file),
        generator=torch.Generator().manual_seed(0),
    )
    assert torch.equal(a.q, b.q) and torch.equal(a.clearance, b.clearance)  # ggik's own pairs, from the SRDF
    assert torch.equal(solver.collision_model(robot, CollisionConfig(srdf=file)).self_pairs, own.self_pairs)
    (tmp_path / "scene.yaml").write_text("frame: panda_link0\nboxes: [{size: [1, 1, 0.02], xyz: [0.4, 0, -0.06]}]\n")
    args = ["solve", "--robot", "panda", "--pose", "0.4", "0.1", "0.5", "0", "1", "0", "0", "-s", "4"]
    args += ["--obstacles", str(tmp_path / "scene.yaml"), "--json"]
    assert main([*args, "--srdf", str(file)]) == 0
    assert json.loads(capsys.readouterr().out)["solutions"]
    bad = tmp_path / "bad.srdf"
    bad.write_text('<robot name="panda"><disable_collisions link1="panda_link1" link2="panda_hand"/></robot>')
    assert main([*args, "--srdf", str(bad)]) == 2
    assert f"{bad}: disable_collisions[0]: link2='panda_hand'" in capsys.readouterr().err
    assert main(["robot", "collision", "panda", "--srdf", str(file), "--out", str(tmp_path / "m.yaml")]) == 0
    assert f"left out by the SRDF {file}" in capsys.readouterr().out
    assert main(["robot", "collision", "panda", "--srdf", str(bad)]) == 2
