"""Bad input fails early with a specific message (every ggik error is a GGIKError and a ValueError)."""

from __future__ import annotations

import math
import re

import pytest
import torch
from conftest import HAND_URDFS

import ggik
from ggik import ChainError, GraphError, Robot, RobotGraph, URDFError, random_robot, randomize_links
from ggik.errors import GGIKError

F64 = torch.float64
BASE = HAND_URDFS["fixed_middle"]  # l0 -j1- l1 -f1- l2 -j2- l3 -f2- l4 -f3- l5 -j3- l6 -j4- l7 -flange- l8


def edit(old: str, new: str, text: str = BASE, count: int = 1) -> str:
    assert old in text, old
    return text.replace(old, new, count)


def test_error_hierarchy():
    for cls in (URDFError, ChainError, GraphError):
        assert issubclass(cls, GGIKError) and issubclass(cls, ValueError)


# ---------------------------------------------------------------------------------------------- reading URDF
@pytest.mark.parametrize(
    "text, match",
    [
        (BASE.replace("</robot>", ""), r"<URDF string> is not well-formed XML: no element found: line \d+, column 0"),
        (
            edit(
                '<robot name="fixed_middle">',
                '<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="fixed_middle">\n'
                '  <xacro:macro name="arm" params="prefix"><link name="${prefix}l9"/></xacro:macro>',
            ),
            r"contains unexpanded xacro \(element <xacro:macro>\); "
            r"expand it first, e\.g\. `xacro robot\.urdf\.xacro > robot\.urdf`",
        ),
        (
            edit('xyz="0 0 0.2"', 'xyz="0 0 ${base_height}"'),
            r"unexpanded xacro expression '0 0 \$\{base_height\}' \(attribute 'xyz' of <origin>\)",
        ),
        (
            edit('<robot name="fixed_middle">', '<robot name="fixed_middle"><xacro:property name="h" value="1"/>'),
            r"contains unexpanded xacro \(xacro: elements\)",
        ),
        (edit('xyz="0 0 0.2"', 'xyz="0 nan 0.2"'), r"joint 'j1' <origin xyz> = '0 nan 0\.2' contains NaN or inf"),
        (
            edit('rpy="0.4 -0.3 0.2"', 'rpy="0.4 -inf 0.2"'),
            r"joint 'f1' <origin rpy> = '0\.4 -inf 0\.2' contains NaN or inf",
        ),
        (edit('upper="2.5"', 'upper="inf"'), r"joint 'j1' <limit upper> = 'inf' contains NaN or inf"),
        (edit('axis xyz="0 1 0"', 'axis xyz="0 0 0"'), r"joint 'j2' has a zero axis '0 0 0'"),
        (edit('xyz="0 0 0.2"', 'xyz="0 0.2"'), r"joint 'j1' <origin xyz> = '0 0\.2' must have 3 numbers, found 2"),
        (edit('rpy="0.4 -0.3 0.2"', 'rpy="a b c"'), r"joint 'f1' <origin rpy> = 'a b c' is not a list of numbers"),
        (edit("<robot ", "<robo ").replace("</robot>", "</robo>"), r"the root element must be <robot>, found <robo>"),
        (edit('<link name="l1"/>', '<link name="l1"/><link name="l1"/>'), r"duplicate link names \['l1'\]"),
        (edit('<link name="l8"/>', ""), r"joint 'flange' names child link 'l8', which is not declared"),
        (edit('<joint name="j2" type="revolute">', '<joint type="revolute">'), r"a <joint> has no name attribute"),
        (edit('<joint name="j2" type="revolute">', '<joint name="j2">'), r"joint 'j2' has no type attribute"),
        (edit('<parent link="l2"/>', ""), r"joint 'j2' has no <parent link=\.\.\.>"),
    ],
    ids=[
        "malformed-xml",
        "xacro-macro",
        "xacro-expression",
        "xacro-no-namespace",
        "nan-origin",
        "inf-rpy",
        "inf-limit",
        "zero-axis",
        "origin-2-numbers",
        "origin-words",
        "root-not-robot",
        "duplicate-link",
        "undeclared-link",
        "joint-without-name",
        "joint-without-type",
        "joint-without-parent",
    ],
)
def test_bad_urdf_documents(text, match):
    with pytest.raises(URDFError, match=match):
        Robot.from_urdf(text)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"URDF file not found: .*no_such_robot\.urdf"):
        Robot.from_urdf(tmp_path / "no_such_robot.urdf")
    with pytest.raises(FileNotFoundError, match="URDF file not found"):
        Robot.from_urdf(str(tmp_path))  # a directory is not a URDF file


def test_binary_file(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_bytes(b"\xff\xfe\x00<robot>")
    with pytest.raises(URDFError, match=r"robot\.urdf is not a UTF-8 text file"):
        Robot.from_urdf(path)


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "arm.urdf"
    path.write_text(edit('axis xyz="0 1 0"', 'axis xyz="0 0 0"'), encoding="utf-8")
    with pytest.raises(URDFError, match=rf"^{re.escape(str(path))}: joint 'j2' has a zero axis"):
        Robot.from_urdf(path)


# ---------------------------------------------------------------------------------------------- chains
def test_unknown_base_link():
    with pytest.raises(ChainError, match=r"unknown base link 'world'; links in the file: l0, l1, l2"):
        Robot.from_urdf(BASE, base_link="world")


def test_unknown_end_effector_link():
    with pytest.raises(ChainError, match=r"unknown end-effector link 'tool0'; links in the file: l0, l1"):
        Robot.from_urdf(BASE, ee_link="tool0")


def test_base_not_an_ancestor_of_the_end_effector():
    match = (
        r"base link 'l5' is not an ancestor of end-effector link 'l2' \(the path up from 'l2' ends at the root 'l0'\)"
    )
    with pytest.raises(ChainError, match=match):
        Robot.from_urdf(BASE, base_link="l5", ee_link="l2")


def test_base_equal_to_end_effector():
    with pytest.raises(ChainError, match=r"base link and end-effector link are the same link 'l3'"):
        Robot.from_urdf(BASE, base_link="l3", ee_link="l3")


def test_no_movable_joint():
    with pytest.raises(ChainError, match=r"no movable joint between 'l3' and 'l5' \(all joints are fixed\)"):
        Robot.from_urdf(BASE, base_link="l3", ee_link="l5")
    fixed_only = (
        '<robot name="r"><link name="a"/><link name="b"/>'
        '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
    )
    with pytest.raises(ChainError, match=r"no movable joint below base link 'a'"):
        Robot.from_urdf(fixed_only)


def test_revolute_joint_without_limit():
    text = edit('<limit lower="-2.5" upper="2.5" effort="10" velocity="1"/>', "")
    match = r"revolute joint 'j1' has no <limit lower=\.\.\. upper=\.\.\.>; URDF requires limits .*type='continuous'"
    with pytest.raises(ChainError, match=match):
        Robot.from_urdf(text)


def test_prismatic_joint_without_limit():
    text = edit('<limit lower="0.0" upper="0.4" effort="10" velocity="1"/>', "", HAND_URDFS["prismatic"])
    with pytest.raises(ChainError, match=r"prismatic joint 'slide' has no <limit"):
        Robot.from_urdf(text)


def test_lower_limit_above_upper():
    with pytest.raises(ChainError, match=r"joint 'j1' has lower limit 2\.5 > upper limit -2\.5"):
        Robot.from_urdf(edit('lower="-2.5" upper="2.5"', 'lower="2.5" upper="-2.5"'))


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_unsupported_joint_type(jtype):
    with pytest.raises(
        ChainError, match=rf"joint 'j2' has type '{jtype}'; ggik supports revolute, continuous, prismatic, fixed"
    ):
        Robot.from_urdf(edit('name="j2" type="revolute"', f'name="j2" type="{jtype}"'))


def test_mimic_of_a_joint_off_the_chain():
    text = edit('joint="j2"', 'joint="elsewhere"', HAND_URDFS["mimic"])
    match = r"mimic joint 'j3' follows 'elsewhere', which is not a movable joint on the chain from 'l0' to 'l6'"
    with pytest.raises(ChainError, match=match):
        Robot.from_urdf(text)


def test_link_with_two_parents():
    text = edit("</robot>", '<joint name="extra" type="fixed"><parent link="l0"/><child link="l3"/></joint>\n</robot>')
    with pytest.raises(ChainError, match=r"link 'l3' is the child of two joints; a URDF must be a tree"):
        Robot.from_urdf(text)


CYCLE = """<robot name="cyc"><link name="a"/><link name="b"/><link name="c"/>
<joint name="j1" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="b"/><child link="c"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
<joint name="j3" type="revolute"><parent link="c"/><child link="a"/><axis xyz="0 0 1"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("links", [{}, {"base_link": "a"}, {"base_link": "a", "ee_link": "c"}, {"ee_link": "b"}])
def test_joints_forming_a_cycle_are_named(links):
    with pytest.raises(
        ChainError, match=r"joints \['j\d', 'j\d', 'j\d'\] form a cycle .* is its own ancestor; a URDF must be a tree"
    ) as err:
        Robot.from_urdf(CYCLE, **links)
    assert all(f"'{j}'" in str(err.value) for j in ("j1", "j2", "j3"))


def test_a_cycle_beside_a_valid_chain_is_refused_too():
    extra = (
        '<link name="x"/><link name="y"/><joint name="jx" type="fixed"><parent link="x"/><child link="y"/></joint>'
        '<joint name="jy" type="fixed"><parent link="y"/><child link="x"/></joint>\n</robot>'
    )
    with pytest.raises(ChainError, match=r"joints \['j[xy]', 'j[xy]'\] form a cycle"):
        Robot.from_urdf(edit("</robot>", extra))


def test_unknown_robot_name():
    with pytest.raises(
        ChainError, match=r"unknown robot 'ur5'; shipped robots: irb140, kr16_2, kuka_lwr, lbr_iiwa, panda"
    ):
        Robot.from_name("ur5")


# ---------------------------------------------------------------------------------------------- joint values
@pytest.fixture(scope="module")
def ur10() -> Robot:
    return Robot.from_name("ur10")


@pytest.mark.parametrize("method", ["fk", "jacobian", "link_poses"])
@pytest.mark.parametrize(
    "q, shape",
    [
        (torch.zeros(5, dtype=F64), r"\(5,\)"),
        (torch.zeros(3, 7, dtype=F64), r"\(3, 7\)"),
        (torch.tensor(0.0, dtype=F64), r"\(\)"),
    ],
    ids=["5-of-6", "batch-of-7", "scalar"],
)
def test_q_of_the_wrong_shape(ur10, method, q, shape):
    with pytest.raises(ValueError, match=rf"ur10: q must have shape \(\.\.\., 6\) \(dof=6\), got {shape}"):
        getattr(ur10, method)(q)


@pytest.mark.parametrize("method", ["fk", "jacobian", "link_poses"])
@pytest.mark.parametrize("bad", [float("nan"), float("inf")], ids=["nan", "inf"])
def test_q_not_finite(ur10, method, bad):
    q = torch.zeros(4, 6, dtype=F64)
    q[2, 3] = bad
    with pytest.raises(ValueError, match=r"ur10: q contains NaN or inf"):
        getattr(ur10, method)(q)


# ---------------------------------------------------------------------------------------------- lock
def test_lock_unknown_joint(ur10):
    with pytest.raises(
        ChainError, match=r"ur10: cannot lock \['gripper'\]: not independent joints; joints: \['shoulder_pan_joint'"
    ):
        ur10.lock({"gripper": 0.0})


def test_lock_mimic_joint_itself():
    robot = Robot.from_urdf(HAND_URDFS["mimic"])
    with pytest.raises(ChainError, match=r"cannot lock \['j3'\]: not independent joints"):
        robot.lock({"j3": 0.0})


def test_lock_outside_limits_or_not_finite(ur10):
    match = r"lock value 3\.5 for 'elbow_joint' is outside its limits \[-3\.14159265359, 3\.14159265359\]"
    with pytest.raises(ChainError, match=match):
        ur10.lock({"elbow_joint": 3.5})
    with pytest.raises(ChainError, match=r"lock value for 'elbow_joint' must be finite, got nan"):
        ur10.lock({"elbow_joint": float("nan")})


def test_lock_every_joint(ur10):
    with pytest.raises(ChainError, match=r"locking all 6 joints leaves nothing to move"):
        ur10.lock({name: 0.0 for name in ur10.joint_names})


# ---------------------------------------------------------------------------------------------- graph
@pytest.mark.parametrize("name, joint", [("prismatic", "slide"), ("mimic", "j3")])
def test_graph_refuses_prismatic_and_mimic_joints(name, joint):
    robot = Robot.from_urdf(HAND_URDFS[name])
    kind = "prismatic" if name == "prismatic" else "mimic"
    match = rf"{name}: {kind} joint '{joint}' cannot be represented by the GGIK graph.*lock.*robot\.lock\(\{{"
    with pytest.raises(GraphError, match=match):
        RobotGraph.from_robot(robot)


@pytest.fixture(scope="module")
def ur10_graph(ur10) -> RobotGraph:
    return RobotGraph.from_robot(ur10)


def _goals(robot: Robot) -> torch.Tensor:
    return robot.fk(robot.sample_q(3, torch.Generator().manual_seed(0)))


def _scaled_rotation(T: torch.Tensor) -> torch.Tensor:
    out = T.clone()
    out[..., :3, :3] *= 1.1
    return out


@pytest.mark.parametrize(
    "corrupt, match",
    [
        (lambda T: T.index_fill(-1, torch.tensor([3]), float("nan")), r"T_goal contains NaN or inf"),
        (lambda T: T * 1.5, r"T_goal is not homogeneous"),
        (lambda T: _scaled_rotation(T), r"T_goal is not a rigid transform at index \(0,\)"),
        (lambda T: T[..., :3, :], r"T_goal must have shape \(\.\.\., 4, 4\), got \(3, 3, 4\)"),
    ],
    ids=["nan", "bottom-row", "non-rigid", "3x4"],
)
def test_bad_goal_poses(ur10, ur10_graph, corrupt, match):
    T = corrupt(_goals(ur10))
    P = ur10_graph.realize(torch.zeros(3, 6, dtype=F64))
    with pytest.raises(ValueError, match=match):
        ur10_graph.partial(T)
    with pytest.raises(ValueError, match=match):
        ur10_graph.joint_angles(P, T)


def test_points_of_the_wrong_shape(ur10, ur10_graph):
    T = _goals(ur10)
    P = ur10_graph.realize(torch.zeros(3, 6, dtype=F64))
    with pytest.raises(ValueError, match=r"points must have shape \(\.\.\., 16, 3\), got \(3, 18, 3\)"):
        ur10_graph.joint_angles(torch.zeros(3, 18, 3, dtype=F64), T)
    with pytest.raises(ValueError, match=r"points must have shape \(\.\.\., 16, 3\), got \(3, 16, 2\)"):
        ur10_graph.joint_angles(P[..., :2], T)
    P[1, 5, 0] = float("nan")
    with pytest.raises(ValueError, match=r"points contain NaN or inf"):
        ur10_graph.joint_angles(P, T)


def test_to_pyg_arguments(ur10, ur10_graph):
    with pytest.raises(ValueError, match=r"to_pyg needs q \(a solved example\) or T_goal \(a problem\)"):
        ur10_graph.to_pyg()
    with pytest.raises(ValueError, match=r"to_pyg takes one configuration q of shape \(6,\), got \(2, 6\)"):
        ur10_graph.to_pyg(q=torch.zeros(2, 6, dtype=F64))
    with pytest.raises(ValueError, match=r"to_pyg takes one goal pose of shape \(4, 4\), got \(3, 4, 4\)"):
        ur10_graph.to_pyg(T_goal=_goals(ur10))


# ---------------------------------------------------------------------------------------------- builders
def test_from_dh_bad_tables():
    with pytest.raises(ChainError, match=r"from_dh: a, d and alpha must be non-empty and of equal length, got 2, 3, 2"):
        Robot.from_dh([0, 1], [0, 0, 0], [0, 0])
    with pytest.raises(ChainError, match=r"from_dh: a, d and alpha must be non-empty"):
        Robot.from_dh([], [], [])
    with pytest.raises(ChainError, match=r"from_dh: theta_offset must have 2 entries, got 1"):
        Robot.from_dh([0, 1], [0, 0], [0, 0], theta_offset=[0])
    with pytest.raises(ChainError, match=r"from_dh: DH parameters and limits must be finite numbers"):
        Robot.from_dh([0, math.inf], [0, 0], [0, 0])


def test_random_robot_and_randomize_links_arguments():
    with pytest.raises(ValueError, match=r"random_robot: dof must be an integer >= 2, got 1"):
        random_robot(1, 0)
    with pytest.raises(ValueError, match=r"random_robot: dof must be an integer >= 2, got 2\.5"):
        random_robot(2.5, 0)
    robot = Robot.from_name("panda")
    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match=r"randomize_links: fraction must lie in \[0, 1\)"):
            randomize_links(robot, bad, 0)


def test_available_robots_is_the_registry():
    assert "panda" in ggik.available_robots() and len(ggik.available_robots()) == 9
