"""ggik.data: training batches as a pure function of (seed, step, rank), mixed-DOF padding, joint sampling,
fixed problem sets (bit-identical file round trip, clear errors) and ``ggik data make|show``."""

from __future__ import annotations

import math
from dataclasses import fields

import pytest
import torch

from ggik import GGIKError, Robot, RobotGraph, random_robot
from ggik.cli import main
from ggik.data import PROBLEM_SET_FORMAT, DataConfig, ProblemSet, TrainingData, robot_entry, robot_from_entry

MIXED = dict(
    robots={"panda": 1.0, "ur10": 0.5},
    random_weight=1.0,
    random_dofs=[4, 5],
    random_robots_per_batch=2,
    randomized_weight=0.5,
    randomize_fraction=0.2,
    batch_size=24,
    seed=3,
    goal_kinds={"pose": 1.0},
)


def mixed_data(**changes) -> TrainingData:
    return TrainingData(DataConfig(**{**MIXED, **changes}))


def batch_tensors(batch) -> dict[str, torch.Tensor]:
    return {f.name: getattr(batch, f.name) for f in fields(batch)}


def groups(graphs, sizes):
    """(graph, rows) of each robot in a batch (examples of one robot are contiguous, in graph order)."""
    start = 0
    for g, k in zip(graphs, sizes):
        yield g, slice(start, start + k)
        start += k


# ---------------------------------------------------------------------------------------------- determinism
def test_batch_is_a_pure_function_of_seed_step_rank():
    a, graphs_a, sizes_a = mixed_data().batch(5, rank=1)
    torch.manual_seed(12345)  # the global RNG must not matter
    torch.rand(100)
    mixed_data().batch(4, rank=0)  # nor what was drawn before
    b, graphs_b, sizes_b = mixed_data().batch(5, rank=1)
    assert sizes_a == sizes_b and [g.robot.name for g in graphs_a] == [g.robot.name for g in graphs_b]
    for name, t in batch_tensors(a).items():
        assert torch.equal(t, getattr(b, name)), f"field {name} differs between identical calls"


@pytest.mark.parametrize(
    "other", [dict(step=6, rank=1), dict(step=5, rank=0), dict(step=5, rank=1, seed=4)], ids=["step", "rank", "seed"]
)
def test_batch_differs_with_step_rank_and_seed(other):
    a, _, _ = mixed_data().batch(5, rank=1)
    data = mixed_data(seed=other.get("seed", MIXED["seed"]))
    b, _, _ = data.batch(other["step"], rank=other["rank"])
    assert a.q.shape != b.q.shape or not torch.equal(a.q, b.q)
    assert a.T_goal.shape != b.T_goal.shape or not torch.equal(a.T_goal, b.T_goal)


# ---------------------------------------------------------------------------------------------- content
def test_batch_mixes_dofs_with_correct_padding():
    batch, graphs, sizes = mixed_data().batch(0)
    assert sum(sizes) == batch.batch_size == MIXED["batch_size"]
    assert len({g.n for g in graphs}) >= 3, f"expected several DOFs, got {[g.n for g in graphs]}"
    names = {g.robot.name for g in graphs}
    assert {"panda", "ur10"} <= names and any("~" in n for n in names) and any(n.startswith("random") for n in names)
    N = batch.num_nodes
    assert 2 * max(g.n for g in graphs) + 4 == N
    assert torch.equal(batch.node_mask.sum(1), 2 * batch.num_joints + 4)
    for g, rows in groups(graphs, sizes):
        n_real = g.num_nodes
        assert (batch.num_joints[rows] == g.n).all()
        assert batch.node_mask[rows, :n_real].all() and not batch.node_mask[rows, n_real:].any()
        assert not batch.anchor_mask[rows, n_real:].any() and int(batch.anchor_mask[rows][0].sum()) == 6
        assert (batch.pos[rows, n_real:] == 0).all() and (batch.known_positions[rows, n_real:] == 0).all()
        assert not batch.known_mask[rows, n_real:].any() and not batch.known_mask[rows, :, n_real:].any()
        assert (batch.q[rows, g.n :] == 0).all()
    assert batch.pos.dtype == torch.float64


def test_joints_sampled_within_limits_and_last_joint_varies():
    batch, graphs, sizes = mixed_data(batch_size=96).batch(1)
    for g, rows in groups(graphs, sizes):
        q = batch.q[rows, : g.n]
        lo, hi = g.robot.lower, g.robot.upper
        assert ((q >= lo) & (q <= hi)).all(), f"{g.robot.name}: q outside its limits"
        if q.shape[0] >= 5:
            spread = q.max(0).values - q.min(0).values
            # every joint (the last one too: the reference kept it at 0) covers a good part of its range
            assert (spread > 0.2 * (hi - lo)).all(), f"{g.robot.name}: spread {spread.tolist()}"
    panda_rows = next(rows for g, rows in groups(graphs, sizes) if g.robot.name == "panda")
    assert batch.q[panda_rows, 6].std() > 0.5


def test_goal_is_fk_of_q_and_points_are_the_realization():
    batch, graphs, sizes = mixed_data().batch(2)
    for g, rows in groups(graphs, sizes):
        q = batch.q[rows, : g.n]
        torch.testing.assert_close(batch.T_goal[rows], g.robot.fk(q), rtol=0, atol=1e-12)
        torch.testing.assert_close(batch.pos[rows, : g.num_nodes], g.realize(q), rtol=0, atol=1e-12)
        # the problem's goal anchors are the solution's p_n, q_n
        goal_nodes = slice(g.num_nodes - 2, g.num_nodes)
        torch.testing.assert_close(
            batch.known_positions[rows, goal_nodes], batch.pos[rows, goal_nodes], rtol=0, atol=1e-12
        )


@pytest.mark.parametrize(
    "cfg, message",
    [
        (dict(robots={"panda": 1.0, "no_such_bot": 1.0}), "data.robots.no_such_bot: unknown shipped robot"),
        (dict(robots={"panda": -1.0}), "data.robots.panda: weight must be a finite number >= 0"),
        (dict(robots={}, random_weight=0.0), "positive sum"),
        (dict(robots={}, random_weight=1.0, randomized_weight=1.0), "needs named robots"),
        (dict(robots={}, random_weight=1.0, random_dofs=[]), "random_dofs"),
        (dict(goal_kinds={"pose": 1.0, "orientation": 1.0}), "goal_kinds must map kinds of"),
        (dict(goal_kinds={"pose": 1.0, "position": -0.5}), "goal_kinds must map.*weights >= 0"),
        (dict(goal_kinds={"position": 0.0}), "goal_kinds.*positive sum"),
        (dict(unlimited_fraction=-0.1), r"data.unlimited_fraction must be a share in \[0, 1\], got -0.1"),
        (dict(unlimited_fraction=1.5), r"data.unlimited_fraction must be a share in \[0, 1\], got 1.5"),
        (dict(unlimited_fraction=math.nan), r"data.unlimited_fraction must be a share in \[0, 1\], got nan"),
    ],
    ids=[
        "unknown-robot",
        "negative-weight",
        "zero-weights",
        "randomized-without-named",
        "no-random-dofs",
        "unknown-goal-kind",
        "negative-goal-kind",
        "zero-goal-kinds",
        "negative-unlimited-fraction",
        "unlimited-fraction-above-1",
        "nan-unlimited-fraction",
    ],
)
def test_bad_data_config_is_a_clear_error(cfg, message):
    with pytest.raises(GGIKError, match=message):
        TrainingData(DataConfig(**cfg))


# ---------------------------------------------------------------------------------------------- unlimited_fraction
#: batch_summary of batch(3) of MIXED with goal kinds {pose: 0.5, position: 0.5}, as ggik drew it before
#: unlimited_fraction existed (66132ec~1), printed by: OLD=$(mktemp -d) && git archive 66132ec~1 ggik | tar -x -C $OLD
#: && cp tests/test_data.py $OLD && cd $OLD && python -c 'import test_data as t;
#: print(t.batch_summary(*t.mixed_data(goal_kinds={"pose": 0.5, "position": 0.5}).batch(3)))'
BEFORE_UNLIMITED = {
    "names": ["panda", "ur10", "random4", "random5", "panda~0.2"],
    "sizes": [9, 3, 6, 5, 1],
    "anchors": [6, 6, 6, 6, 6, 6, 5, 5, 5, 6, 5, 5, 6, 6, 6, 6, 5, 5, 6, 6, 6, 6, 6, 5],
    "q_sum": 13.821225478585045,
    "q_weighted_sum": 272.16529401432746,
    "q_first": [-0.18287703598227578, 1.0443802591121072, 1.9538381274353207, -1.3054854391252027,
                -1.8807608339526505, 0.46247536790815236, 1.5864070475892134],
    "q_last": [-0.5907239131251822, -1.0110286687283496, -2.2166236461973865, -0.15133315938080472,
               -1.088131468609727, -0.010353203390281451, 1.2655144516521957],
    "goal_position_sum": 9.222615752484653,
}  # fmt: skip


def batch_summary(batch, graphs, sizes) -> dict:
    """What BEFORE_UNLIMITED records of a batch."""
    q = batch.q.flatten().tolist()
    return {
        "names": [g.robot.name for g in graphs],
        "sizes": sizes,
        "anchors": batch.anchor_mask.sum(1).tolist(),
        "q_sum": math.fsum(q),  # fsum: exactly rounded, whatever the order of the terms
        "q_weighted_sum": math.fsum(k * x for k, x in enumerate(q, 1)),
        "q_first": batch.q[0].tolist(),
        "q_last": batch.q[-1].tolist(),
        "goal_position_sum": math.fsum(batch.T_goal[:, :3, 3].flatten().tolist()),
    }


@pytest.mark.parametrize("fraction", [None, 0.0], ids=["unset", "0"])
def test_unlimited_fraction_0_draws_the_examples_of_runs_made_before_it(fraction):
    """Per-robot sampler (the stacked one: tests/test_stacked.py): unset or 0, the batch is the one the code before
    unlimited_fraction drew (BEFORE_UNLIMITED: robots, sizes, goal kinds and the configurations), so no extra number is
    drawn; 0.5 draws another batch. Floats to 1e-12: q = lower + (upper - lower) u is two rounded float64 operations
    per joint (the same bits on every CPU), its sums are exactly rounded (fsum), and the 72 goal coordinates of FK are
    each good to about 1e-15 m."""
    kinds = {"pose": 0.5, "position": 0.5}
    extra = {} if fraction is None else {"unlimited_fraction": fraction}
    got = batch_summary(*mixed_data(goal_kinds=kinds, **extra).batch(3))
    for key in ("names", "sizes", "anchors"):
        assert got[key] == BEFORE_UNLIMITED[key], key
    for key in ("q_sum", "q_weighted_sum", "q_first", "q_last", "goal_position_sum"):
        assert got[key] == pytest.approx(BEFORE_UNLIMITED[key], rel=0, abs=1e-12), key
    changed = batch_summary(*mixed_data(goal_kinds=kinds, unlimited_fraction=0.5).batch(3))
    assert changed["q_weighted_sum"] != pytest.approx(BEFORE_UNLIMITED["q_weighted_sum"], rel=0, abs=1e-3)


@pytest.mark.parametrize("sampler", ["stacked", "per-robot"])
@pytest.mark.parametrize("fraction", [0.3, 1.0])
def test_unlimited_fraction_draws_that_share_of_examples_uniform_in_minus_pi_pi(sampler, fraction):
    """A share f of the examples is uniform in [-pi, pi] on every joint: a joint's values fall outside its limits
    with probability f (1 - overlap / 2 pi) (overlap: of its limits with [-pi, pi]), an example's with f (1 - the
    product); Panda's limits are all narrower than 2 pi, UR10's (+-2 pi) hold [-pi, pi]. 1500 examples per robot."""
    cfg = dict(robots={"panda": 1.0, "ur10": 1.0}, batch_size=3000, seed=5, sampler=sampler)
    batch = TrainingData(DataConfig(**cfg, unlimited_fraction=fraction)).examples(2)
    for robot in (Robot.from_name("panda"), Robot.from_name("ur10")):
        q = batch.q[batch.num_joints == robot.dof, : robot.dof]
        outside = (q < robot.lower) | (q > robot.upper)
        overlap = (robot.upper.clamp(max=math.pi) - robot.lower.clamp(min=-math.pi)) / (2 * math.pi)
        per_joint = outside.double().mean(0)
        assert (per_joint - fraction * (1 - overlap)).abs().max() < 0.05, (robot.name, per_joint.tolist())
        share = outside.any(1).double().mean()
        assert abs(float(share) - fraction * (1 - float(overlap.prod()))) < 0.04, (robot.name, float(share))
        assert robot.name == "panda" or not outside.any()
        if fraction == 1.0:  # every joint spans [-pi, pi], no further
            assert q.abs().max() <= math.pi and (q.min(0).values < -3.0).all() and (q.max(0).values > 3.0).all()


def test_examples_outside_the_limits_are_solved_examples():
    cfg = dict(goal_kinds={"pose": 0.5, "position": 0.5}, batch_size=60, unlimited_fraction=1.0)
    batch, graphs, sizes = mixed_data(**cfg).batch(2)
    for g, rows in groups(graphs, sizes):
        q = batch.q[rows, : g.n]
        assert q.abs().max() <= math.pi
        torch.testing.assert_close(batch.pos[rows, : g.num_nodes], g.realize(q), rtol=0, atol=1e-12)
        pose = batch.anchor_mask[rows].sum(1) == 6  # pose goals: T_goal is the EE pose of q
        torch.testing.assert_close(batch.T_goal[rows][pose], g.robot.fk(q[pose]), rtol=0, atol=1e-12)
        goal_nodes = slice(g.num_nodes - 2, g.num_nodes)
        anchored = batch.anchor_mask[rows][:, goal_nodes, None]
        gap = (batch.known_positions[rows, goal_nodes] - batch.pos[rows, goal_nodes]) * anchored
        assert gap.abs().max() < 1e-12


# ---------------------------------------------------------------------------------------------- goal kinds
def test_one_goal_kind_draws_no_extra_random_numbers():
    """A zero weight is no kind at all: the data stream of runs made before goal kinds is unchanged."""
    a, _, _ = mixed_data().batch(3)
    b, _, _ = mixed_data(goal_kinds={"pose": 1.0, "position": 0.0}).batch(3)
    for name, t in batch_tensors(a).items():
        assert torch.equal(t, getattr(b, name)), f"field {name} differs"


def test_position_and_axis_gives_the_model_the_same_inputs_as_a_pose():
    """Both anchor p_n and q_n with the same known distances; only the goal frame's roll is canonical."""
    a, _, _ = mixed_data().batch(4)
    b, _, _ = mixed_data(goal_kinds={"position+axis": 1.0}).batch(4)
    for name in ("q", "pos", "anchor_mask", "known_mask", "known_positions", "known_distances"):
        torch.testing.assert_close(getattr(a, name), getattr(b, name), rtol=0, atol=1e-12, msg=name)
    torch.testing.assert_close(a.T_goal[:, :3, 2:], b.T_goal[:, :3, 2:], rtol=0, atol=1e-12)  # axis and position


def test_mixed_goal_kinds_split_each_robot_by_weight():
    weights = {"pose": 0.5, "position+axis": 0.2, "position": 0.3}
    batch, graphs, sizes = mixed_data(goal_kinds=weights, batch_size=600).batch(7)
    position = batch.anchor_mask.sum(1) == 5  # p0, x, y, q0, p_n: q_n is free
    assert set(batch.anchor_mask.sum(1).tolist()) == {5, 6}
    share = position.double().mean().item()
    assert abs(share - 0.3) < 0.07, share
    for g, rows in groups(graphs, sizes):
        N = g.num_nodes
        pos_rows = position[rows]
        assert pos_rows.any() and (~pos_rows).any(), f"{g.robot.name}: all examples of one kind"
        sel = batch.select(torch.arange(batch.batch_size)[rows][pos_rows])
        assert (sel.known_positions[:, N - 1] == 0).all() and not sel.known_mask[:, :4, N - 1].any()
        torch.testing.assert_close(sel.known_positions[:, N - 2], sel.pos[:, N - 2], rtol=0, atol=1e-12)
        torch.testing.assert_close(sel.pos[:, :N], g.realize(sel.q[:, : g.n]), rtol=0, atol=1e-12)  # still solutions
    again, _, _ = mixed_data(goal_kinds=weights, batch_size=600).batch(7)
    assert torch.equal(again.anchor_mask, batch.anchor_mask) and torch.equal(again.q, batch.q)


def test_robot_with_ee_off_its_last_axis_gets_pose_goals_only(monkeypatch):
    monkeypatch.setattr(RobotGraph, "supports_partial_goals", property(lambda self: self.robot.name != "ur10"))
    batch, graphs, sizes = mixed_data(goal_kinds={"position": 1.0}, random_weight=0.0, randomized_weight=0.0).batch(1)
    for g, rows in groups(graphs, sizes):
        assert (batch.anchor_mask[rows].sum(1) == (6 if g.robot.name == "ur10" else 5)).all(), g.robot.name


# ---------------------------------------------------------------------------------------------- problem sets
@pytest.fixture(scope="module")
def set_robots() -> list[Robot]:
    gen = torch.Generator().manual_seed(77)
    return [Robot.from_name("panda"), random_robot(5, gen, name="rand5"), random_robot(7, gen, name="rand7")]


def test_problem_set_round_trip_is_bit_identical(set_robots, tmp_path):
    ps = ProblemSet.generate(set_robots, per_robot=6, seed=21)
    assert len(ps) == 18 and ps.q.shape == (18, 7) and ps.q.dtype == torch.float64
    path = ps.save(tmp_path / "sub" / "problems.pt")
    assert path.is_file() and not list(path.parent.glob(".*.tmp"))
    back = ProblemSet.load(path)
    assert back.robots == ps.robots and back.seed == 21
    for name in ("robot_index", "q", "T_goal"):
        assert torch.equal(getattr(back, name), getattr(ps, name)), name
    assert back.robots[0] == {"name": "panda", "urdf": ""}, "shipped robots are stored by name"
    assert all('<robot name="rand' in e["urdf"] for e in back.robots[1:]), "random robots are stored as URDF"


def test_problem_set_groups_reload_robots_exactly(set_robots, tmp_path):
    ps = ProblemSet.generate(set_robots, per_robot=5, seed=22)
    ps.save(tmp_path / "p.pt")
    loaded = ProblemSet.load(tmp_path / "p.pt").groups()
    assert [r.name for r, _, _ in loaded] == [r.name for r in set_robots]
    for original, (robot, q, T) in zip(set_robots, loaded):
        assert robot.dof == original.dof and q.shape == (5, original.dof)
        assert ((q >= original.lower) & (q <= original.upper)).all()
        torch.testing.assert_close(robot.fk(q), original.fk(q), rtol=0, atol=1e-12)
        torch.testing.assert_close(T, original.fk(q), rtol=0, atol=1e-12)
        # the reloaded robot has the same GGIK graph (same point sets)
        points, expected = RobotGraph.from_robot(robot).realize(q), RobotGraph.from_robot(original).realize(q)
        torch.testing.assert_close(points, expected, rtol=0, atol=1e-12)


def test_problem_set_generation_is_seeded(set_robots):
    a = ProblemSet.generate(set_robots, 3, seed=5)
    b = ProblemSet.generate(set_robots, 3, seed=5)
    c = ProblemSet.generate(set_robots, 3, seed=6)
    assert torch.equal(a.q, b.q) and torch.equal(a.T_goal, b.T_goal)
    assert not torch.equal(a.q, c.q)


def test_robot_entry_round_trip(set_robots):
    for robot in set_robots:
        back = robot_from_entry(robot_entry(robot))
        q = robot.sample_q(4, torch.Generator().manual_seed(1))
        torch.testing.assert_close(back.fk(q), robot.fk(q), rtol=0, atol=1e-12)


def test_problem_set_rejects_empty_input(set_robots):
    with pytest.raises(GGIKError, match="at least one robot"):
        ProblemSet.generate([], 3, seed=0)
    with pytest.raises(GGIKError, match="at least one robot and one problem"):
        ProblemSet.generate(set_robots, 0, seed=0)


def _truncated(tmp_path, set_robots):
    path = ProblemSet.generate(set_robots, 2, seed=1).save(tmp_path / "ok.pt")
    data = path.read_bytes()
    bad = tmp_path / "truncated.pt"
    bad.write_bytes(data[: len(data) // 2])
    return bad


@pytest.mark.parametrize(
    "kind, message",
    [
        ("truncated", "is not a readable ggik problem set"),
        ("text", "is not a readable ggik problem set"),
        (
            "wrong-format",
            f"incompatible problem set format 'ggik-checkpoint/1'; this ggik .* reads '{PROBLEM_SET_FORMAT}'",
        ),
        ("no-format", "incompatible problem set format None; this ggik .* reads 'ggik-problems/1'"),
        ("not-a-dict", "incompatible problem set format 'Tensor'"),
    ],
    ids=["truncated", "text", "wrong-format", "no-format", "not-a-dict"],
)
def test_loading_a_bad_problem_file_is_a_clear_error(kind, message, tmp_path, set_robots):
    if kind == "truncated":
        path = _truncated(tmp_path, set_robots)
    else:
        path = tmp_path / f"{kind}.pt"
        if kind == "text":
            path.write_text("this is not a torch file\n")
        else:
            payload = {
                "wrong-format": {"format": "ggik-checkpoint/1"},
                "no-format": {"q": torch.zeros(2)},
                "not-a-dict": torch.zeros(3),
            }[kind]
            torch.save(payload, path)
    with pytest.raises(GGIKError, match=message) as info:
        ProblemSet.load(path)
    assert str(path) in str(info.value)


def test_loading_a_missing_problem_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="problem set not found"):
        ProblemSet.load(tmp_path / "missing.pt")


# ---------------------------------------------------------------------------------------------- CLI
def test_cli_data_make_and_show(tmp_path, capsys):
    out = tmp_path / "val.pt"
    assert (
        main(["data", "make", "--robots", "panda", "--random", "4", "6", "-n", "3", "--seed", "2", "-o", str(out)]) == 0
    )
    made = capsys.readouterr().out
    assert "9 problems" in made and "random4_0" in made and "random6_1" in made
    ps = ProblemSet.load(out)
    assert len(ps) == 9 and ps.seed == 2 and [e["name"] for e in ps.robots] == ["panda", "random4_0", "random6_1"]

    again = tmp_path / "again.pt"
    assert (
        main(["data", "make", "--robots", "panda", "--random", "4", "6", "-n", "3", "--seed", "2", "-o", str(again)])
        == 0
    )
    capsys.readouterr()
    assert torch.equal(ProblemSet.load(again).T_goal, ps.T_goal), "ggik data make is seeded"

    assert main(["data", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "9 problems, seed 2" in shown
    lines = {line.split()[0]: line for line in shown.splitlines()[1:]}
    assert "3 problems (shipped)" in lines["panda"]
    assert "3 problems (URDF inside the file)" in lines["random4_0"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["data", "make", "-o", "{tmp}/x.pt"], "name robots"),
        (["data", "make", "--robots", "no_such_bot", "-o", "{tmp}/x.pt"], "neither a URDF file nor a shipped robot"),
        (["data", "show", "{tmp}/missing.pt"], "problem set not found"),
    ],
    ids=["make-nothing", "make-unknown-robot", "show-missing"],
)
def test_cli_data_errors_are_clean(argv, message, tmp_path, capsys):
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ggik: error:") and message in err
