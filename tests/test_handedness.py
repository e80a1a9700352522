"""Handedness of GGIK graphs (ggik.graph.handedness): the signed volumes of the links are constants of the arm, equal
``a sin(alpha) L^2`` up to sign, flip in a mirror image that keeps every distance, are the same in every file of an
arm, and decide which links are skew with a tolerance that scales with the arm. The Gauss-Newton step with volume
residuals, and ``ggik robot show``. Float64, one code path: 1e-12 (1e-9 across files)."""

from __future__ import annotations

import math

import pytest
import torch
from conftest import REFERENCE_FILES, shared_path
from test_conventions import CASES, case_robot, reframed

from ggik import Robot, RobotGraph, random_robot
from ggik.cli import main
from ggik.graph.frames import AXIS_LENGTH
from ggik.graph.handedness import SKEW_TOL, link_nodes, signed_volumes, volume_jacobian
from ggik.nn.distance_geometry import fixed_size_steps, gauss_newton_step, volume_normal_terms

F64 = torch.float64
TOL = 1e-12
CONVENTIONS = ("frames", "canonical")
#: the canonical graphs of the training arms: their skew links (None: none), from their DH tables
SKEW = {
    "panda": ("panda_joint3 -> panda_joint4", "panda_joint4 -> panda_joint5", "panda_joint6 -> panda_joint7"),
    "irb140": ("joint_1 -> joint_2", "joint_5 -> joint_6"),
    "kr16_2": ("joint_a1 -> joint_a2", "joint_a3 -> joint_a4"),
    "ur10": (),
    "lbr_iiwa": (),
    "schunk_lwa4d": (),
    "schunk_lwa4p": (),
    "kuka_lwr": (),
    "puma560": (),
}


def skew_dh(dof: int, seed: int) -> tuple[Robot, list[float], list[float]]:
    """A random standard-DH chain whose every link but the last is skew: |a| in [0.05, 0.5] m, |alpha| in [0.3, pi -
    0.3] (random_robot's rules never make a skew link: they offset only parallel axes). Returns (robot, a, alpha)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.rand(3, dof, generator=g, dtype=F64)
    sign = torch.where(torch.rand(2, dof, generator=g, dtype=F64) < 0.5, -1.0, 1.0)
    a = (sign[0] * (0.05 + 0.45 * u[0])).tolist()
    alpha = (sign[1] * (0.3 + (math.pi - 0.6) * u[1])).tolist()
    return Robot.from_dh(a, (0.5 * u[2]).tolist(), alpha, name=f"skew{dof}"), a, alpha


def robots() -> list[Robot]:
    return [Robot.from_name(n) for n in ("panda", "kr16_2", "irb140", "ur10")] + [
        random_robot(7, 5),
        skew_dh(6, 1)[0],
        skew_dh(7, 2)[0],
    ]


def reflect(points: torch.Tensor, nodes: torch.Tensor, origin: torch.Tensor, normal: torch.Tensor) -> torch.Tensor:
    """``points`` (..., N, 3) with ``nodes`` reflected across the plane through ``origin`` (..., 3) normal to the unit
    ``normal`` (..., 3)."""
    out = points.clone()
    x = points[..., nodes, :]
    out[..., nodes, :] = (
        x - 2.0 * ((x - origin[..., None, :]) * normal[..., None, :]).sum(-1, keepdim=True) * (normal[..., None, :])
    )
    return out


def flip_link(points: torch.Tensor, link: int, num_links: int, seed: int) -> torch.Tensor:
    """A mirror image of point sets (..., N, 3) in link ``link`` (1-based) alone, every distance between nodes of one
    link kept: the nodes past the link's near axis (p_{l-1}, q_{l-1}) are reflected across a plane through that axis
    (which flips links l .. n), then those past its far axis across a plane through the far axis (which flips
    links l + 1 .. n back)."""
    idx = link_nodes(num_links)
    g = torch.Generator().manual_seed(seed)
    for near in (idx[link - 1, 0:2], idx[link - 1, 2:4]):
        p, q = points[..., near[0], :], points[..., near[1], :]
        axis = (q - p) / torch.linalg.vector_norm(q - p, dim=-1, keepdim=True)
        normal = torch.linalg.cross(axis, torch.randn(points.shape[:-2] + (3,), generator=g, dtype=F64))
        normal = normal / torch.linalg.vector_norm(normal, dim=-1, keepdim=True)
        distal = torch.arange(int(near[1]) + 1, points.shape[-2])
        points = reflect(points, distal, p, normal)
    return points


def axis_moments(robot: Robot) -> torch.Tensor:
    """(dof - 1,) [m]: ``(o_i - o_{i-1}) . (w_{i-1} x w_i)`` of each pair of consecutive joint axes of the robot at q =
    0, ``o`` the joint frame's origin (on its axis) and ``w`` the unit axis, both in the base frame: ``a_i
    sin(alpha_i)`` with a sign, from the robot's joints alone (no graph, no point set)."""
    frames, _ = robot.joint_frames(torch.zeros(robot.dof, dtype=F64))
    w = (frames[:, :3, :3] @ robot.joint_axes[..., None])[..., 0]
    o = frames[:, :3, 3]
    return ((o[1:] - o[:-1]) * torch.linalg.cross(w[:-1], w[1:])).sum(-1)


# ---------------------------------------------------------------------------------------------- constants of the arm
@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("robot", robots(), ids=lambda r: r.name)
def test_the_volumes_are_constants_of_the_arm_and_every_realization_is_the_arm(robot, convention):
    """The volumes of every realization are those of the home point set, which are those of the robot's joint axes:
    ``V_i = -L^2 (o_i - o_{i-1}) . (w_{i-1} x w_i)`` (:func:`axis_moments`; z of F_{i-1} is w_i, and
    ``det[L w, d, d + L w'] = -L^2 d . (w x w')``), ``V_n = 0`` (F_n lies on the last axis). The skew links are the
    pairs of axes a micrometre or more from meeting at any angle: these arms have none between 1e-12 and 1e-3 m, so
    any threshold between (the arm's SKEW_TOL x size among them) draws the same line."""
    graph = RobotGraph.from_robot(robot, convention)
    q = robot.sample_q(128, torch.Generator().manual_seed(3))
    V = signed_volumes(graph.realize(q), graph.n)  # (128, n)
    home = signed_volumes(graph.home, graph.n)
    assert (V - home).abs().max() <= TOL, "a link's volume moves with the joints"
    moment = axis_moments(robot)
    expected = torch.cat([-(AXIS_LENGTH**2) * moment, torch.zeros(1, dtype=F64)])
    assert (home - expected).abs().max() <= TOL, (home, expected)
    assert ((moment.abs() < 1e-12) | (moment.abs() > 1e-3)).all(), moment
    skew = torch.cat([moment.abs() > 1e-6, torch.tensor([False])])
    assert torch.equal(graph.skew_links, skew), (graph.skew_links, moment)
    assert (graph.link_volumes - torch.where(skew, expected, 0.0)).abs().max() <= TOL
    assert not graph.link_volumes[~skew].any()
    assert graph.handedness(graph.realize(q)).all()
    assert graph.skew_link_names == tuple(
        f"{([*robot.joint_names, 'ee'])[i]} -> {([*robot.joint_names, 'ee'])[i + 1]}" for i in range(graph.n) if skew[i]
    )


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("dof,seed", [(5, 0), (6, 1), (7, 2), (8, 3)])
def test_the_volumes_are_a_sin_alpha_times_the_axis_length_squared(dof, seed, convention):
    """Link i of a standard-DH chain joins the axes z_{i-1} and z_i, whose common normal is a_i long and whose angle
    is alpha_i: |V_i| = |a_i sin(alpha_i)| L^2. The last link joins the last axis to the EE anchor on it: V_n = 0."""
    robot, a, alpha = skew_dh(dof, seed)
    graph = RobotGraph.from_robot(robot, convention)
    expected = torch.tensor(
        [abs(ai * math.sin(al)) * AXIS_LENGTH**2 for ai, al in zip(a[:-1], alpha[:-1])] + [0.0], dtype=F64
    )
    assert (graph.link_volumes.abs() - expected).abs().max() <= TOL
    assert torch.equal(graph.skew_links, torch.arange(dof) < dof - 1)
    # random_robot's rules offset only parallel axes (a != 0 only with alpha in {0, pi}): a sin(alpha) = 0 everywhere
    plain = RobotGraph.from_robot(random_robot(dof, 100 * dof + seed), convention)
    assert not plain.skew_links.any() and not plain.link_volumes.any()


# ---------------------------------------------------------------------------------------------- mirror images
@pytest.mark.parametrize("robot", robots(), ids=lambda r: r.name)
def test_a_mirror_image_keeps_every_distance_flips_the_volumes_and_is_not_the_arm(robot):
    graph = RobotGraph.from_robot(robot, "canonical")
    n, skew = graph.n, graph.skew_links
    X = graph.realize(robot.sample_q(16, torch.Generator().manual_seed(4)))
    V = signed_volumes(X, n)
    # the whole point set (anchors included) reflected: every distance kept, every volume negated
    normal = torch.tensor([0.6, 0.0, 0.8], dtype=F64)
    whole = reflect(X, torch.arange(graph.num_nodes), torch.zeros(16, 3, dtype=F64), normal.expand(16, 3))
    assert (torch.cdist(whole, whole) - torch.cdist(X, X)).abs().max() <= TOL
    assert (signed_volumes(whole, n) + V).abs().max() <= TOL
    assert torch.equal(graph.handedness(whole), torch.full((16,), not skew.any()))
    # one link flipped alone: the distances within every link kept (the known edges of the structure), its volume
    # negated, the others as they were; the arm only where the link is not skew (a flat link has no handedness)
    inner = torch.zeros(graph.num_nodes, graph.num_nodes, dtype=torch.bool)
    for nodes in link_nodes(n):
        inner[nodes[:, None], nodes[None, :]] = True
    structure = [edge for edge, kind in graph.edge_kind.items() if kind == "structure"]
    assert structure and all(inner[edge] for edge in structure), "a structure edge joins the nodes of one link"
    for link in range(2, n + 1):  # link 1: its near axis holds the base anchors x, y; they are not reflected
        Y = flip_link(X, link, n, seed=link)
        assert (torch.cdist(Y, Y) - torch.cdist(X, X))[:, inner].abs().max() <= TOL
        flipped = signed_volumes(Y, n)
        sign = torch.ones(n, dtype=F64)
        sign[link - 1] = -1.0
        assert (flipped - sign * V).abs().max() <= TOL
        assert torch.equal(graph.handedness(Y), torch.full((16,), not bool(skew[link - 1]))), link


# ---------------------------------------------------------------------------------------------- the tolerance
@pytest.mark.parametrize("fraction,skew", [(0.0, False), (1e-9, False), (1e-6, False), (1e-3, True), (1e-2, True)])
def test_nearly_meeting_axes_count_as_meeting_under_the_arms_tolerance(fraction, skew):
    """Axes 3 and 4 at right angles, their common normal ``fraction`` of the arm's size: skew from SKEW_TOL (1e-4)
    of the size on, the volume exactly 0 below it. The other links meet or are parallel."""

    def arm(offset: float) -> Robot:
        return Robot.from_dh(
            [0.0, 0.4, offset, 0.0, 0.0, 0.0],
            [0.3, 0.0, 0.0, 0.45, 0.0, 0.1],
            [math.pi / 2, 0.0, math.pi / 2, -math.pi / 2, math.pi / 2, 0.0],
        )

    size = RobotGraph.from_robot(arm(0.0), "canonical").skew_tol / (SKEW_TOL * AXIS_LENGTH**2)
    assert 0.4 <= size <= 1.0
    for convention in CONVENTIONS:
        graph = RobotGraph.from_robot(arm(fraction * size), convention)
        assert graph.skew_tol == pytest.approx(SKEW_TOL * AXIS_LENGTH**2 * size, rel=1e-3)  # the offset moves it
        expected = torch.zeros(6, dtype=torch.bool)
        expected[2] = skew
        assert torch.equal(graph.skew_links, expected), (convention, graph.link_volumes)
        if skew:
            assert abs(abs(float(graph.link_volumes[2])) - fraction * size * AXIS_LENGTH**2) <= TOL
        else:
            assert not graph.link_volumes.any() and graph.handedness(graph.realize(torch.zeros(6, dtype=F64)))


# ---------------------------------------------------------------------------------------------- derivatives and steps
def test_the_volume_jacobian_is_the_gradient_of_the_volumes():
    g = torch.Generator().manual_seed(5)
    X = torch.randn(3, 18, 3, generator=g, dtype=F64, requires_grad=True)
    V = signed_volumes(X, 7)
    J = volume_jacobian(X.detach(), 7)  # (3, 7, 4, 3)
    assert J.shape == (3, 7, 4, 3)
    idx = link_nodes(7)
    for link in range(7):
        (grad,) = torch.autograd.grad(V[:, link].sum(), X, retain_graph=True)
        torch.testing.assert_close(J[:, link], grad[:, idx[link]], rtol=0, atol=TOL)
        others = torch.ones(18, dtype=torch.bool)
        others[idx[link]] = False
        assert not grad[:, others].any()
    torch.testing.assert_close(J.sum(-2), torch.zeros(3, 7, 3, dtype=F64), rtol=0, atol=TOL)


def test_the_volume_normal_terms_are_the_gradient_and_gauss_newton_matrix_of_the_volume_cost():
    g = torch.Generator().manual_seed(6)
    X = torch.randn(2, 18, 3, generator=g, dtype=F64)
    target, weight = torch.randn(2, 7, generator=g, dtype=F64), torch.rand(2, 7, generator=g, dtype=F64)
    cols = torch.arange(4, 18)
    movable = torch.ones(2, 14, dtype=F64)
    movable[1, 3] = 0.0
    grad, H = volume_normal_terms(X, target, weight, cols, movable)
    x = X.clone().requires_grad_(True)
    cost = 0.5 * (weight * (signed_volumes(x, 7) - target) ** 2).sum()
    (auto,) = torch.autograd.grad(cost, x)
    torch.testing.assert_close(grad, auto[:, cols] * movable[..., None], rtol=0, atol=TOL)
    J = volume_jacobian(X, 7)  # J^T W J by hand, node by node
    idx = link_nodes(7)
    expected = torch.zeros(2, 18, 3, 18, 3, dtype=F64)
    for link in range(7):
        for a in range(4):
            for b in range(4):
                block = weight[:, link, None, None] * J[:, link, a, :, None] * J[:, link, b, None, :]
                expected[:, idx[link, a], :, idx[link, b], :] += block
    mov = movable[:, :, None, None, None] * movable[:, None, None, :, None]
    torch.testing.assert_close(H, expected[:, cols][:, :, :, cols] * mov, rtol=0, atol=TOL)


def test_zero_volume_weights_leave_the_gauss_newton_step_exactly_as_without():
    graph = RobotGraph.from_robot(Robot.from_name("panda"), "canonical")
    q = graph.robot.sample_q(4, torch.Generator().manual_seed(7))
    problem = graph.partial(graph.robot.fk(q))
    X = graph.realize(q) + 0.05 * torch.randn(4, 18, 3, generator=torch.Generator().manual_seed(8), dtype=F64)
    movable = (~problem.anchor_mask).expand(4, -1)
    V = graph.link_volumes.expand(4, -1)
    args = (X, problem.known_distances, problem.known_mask.expand(4, -1, -1), movable, 1e-3)
    for fixed_size in (False, True):
        with fixed_size_steps(fixed_size):
            plain = gauss_newton_step(*args)
            zero = gauss_newton_step(*args, volumes=(V, torch.zeros_like(V)))
            weighted = gauss_newton_step(*args, volumes=(V, graph.skew_links.to(F64).expand(4, -1)))
        assert torch.equal(plain, zero)
        assert not torch.equal(plain, weighted), "the volumes change the step where they weigh"


# ---------------------------------------------------------------------------------------------- every file of an arm
@pytest.mark.parametrize("family,what,seed", CASES + [("skew", d, s) for d in (6, 7) for s in (0, 1)])
def test_every_file_of_an_arm_gives_the_same_volumes(family, what, seed):
    """The reframed files of the canonical graph's tests (joint frames slid along and turned about their axes, zero
    angles turned, another base mounting and tool), and of skew DH chains: the same canonical volumes, to 1e-9 of the
    arm's L^2 x size."""
    robot = skew_dh(what, seed)[0] if family == "skew" else case_robot(family, what, seed)
    other, _ = reframed(robot, seed + 7)
    mine, theirs = RobotGraph.from_robot(robot, "canonical"), RobotGraph.from_robot(other, "canonical")
    scale = mine.skew_tol / SKEW_TOL
    assert (mine.link_volumes - theirs.link_volumes).abs().max() <= 1e-9 * scale
    assert torch.equal(mine.skew_links, theirs.skew_links)
    if family == "shipped":
        assert mine.skew_link_names == SKEW[what]


@pytest.mark.parametrize("name", sorted(REFERENCE_FILES))
def test_the_public_files_of_the_training_arms_give_our_volumes(name):
    """The public file of each training arm (../shared/reference-urdfs, with its own base and EE links: the Panda's
    flange panda_link8, the iiwa's ee_link on the flange axis) against our urdfs/ robot, to 1e-9 relative."""
    public = Robot.from_urdf(shared_path("reference-urdfs", REFERENCE_FILES[name]))
    ours = RobotGraph.from_robot(Robot.from_name(name), "canonical")
    theirs = RobotGraph.from_robot(public, "canonical")
    scale = ours.skew_tol / SKEW_TOL
    assert (ours.link_volumes - theirs.link_volumes).abs().max() <= 1e-9 * scale
    assert torch.equal(ours.skew_links, theirs.skew_links)
    assert len(theirs.skew_link_names) == len(SKEW[name])


def test_the_panda_has_three_skew_links_with_the_volumes_of_its_dh_table():
    graph = RobotGraph.from_robot(Robot.from_name("panda"), "canonical")
    expected = torch.tensor([0.0, 0.0, -0.0825, -0.0825, 0.0, -0.088, 0.0], dtype=F64) * AXIS_LENGTH**2
    assert (graph.link_volumes - expected).abs().max() <= TOL
    assert graph.skew_link_names == SKEW["panda"]


def test_a_rounded_volume_of_a_file_stays_under_the_tolerance():
    """The LWA4P's file has a volume of about 1e-6 m^3 from rounding; it is not a skew link."""
    graph = RobotGraph.from_robot(Robot.from_name("schunk_lwa4p"), "canonical")
    raw = signed_volumes(graph.home, graph.n).abs()
    assert 1e-7 < raw.max() < graph.skew_tol and not graph.skew_links.any() and not graph.link_volumes.any()


# ---------------------------------------------------------------------------------------------- ggik robot show
def test_robot_show_names_the_skew_links_with_their_volumes_and_mirror_count(capsys):
    assert main(["robot", "show", "panda"]) == 0
    out = capsys.readouterr().out
    assert "handedness: 3 skew links" in out and "2^3 = 8 distance-equal realizations" in out
    for name, volume in zip(SKEW["panda"], ("-0.0825", "-0.0825", "-0.088")):
        assert f"{name} (V = {volume} m^3)" in out
    assert main(["robot", "show", "ur10"]) == 0
    assert "handedness: no skew link" in capsys.readouterr().out
    assert main(["robot", "show", "irb140"]) == 0
    assert "handedness: 2 skew links" in capsys.readouterr().out
