"""``ggik solve`` makes the call :meth:`ggik.GGIK.solve` makes for the same robot, goal, seed and options: the same
solver settings (RefineConfig's defaults, LM backends included), so the same LM backends run and the same result
comes back. The command runs in this process (``ggik.cli.main``); with ``--json --all`` it lists every result of the
call, best first, which is compared with the library's result: the same flags, the same joint values to the 6
decimals the command prints, the same errors (one code path computes both: to 1e-9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from ggik import GGIK, Robot, SolveConfig
from ggik.cli import main
from ggik.collision import Scene
from ggik.ik.lm import select
from ggik.kinematics.geometry import make_transform, quat_to_matrix

SCENE = Path(__file__).resolve().parents[1] / "examples" / "scene.yaml"
POSE = [0.4, 0.1, 0.5, 0.0, 1.0, 0.0, 0.0]  # the README's first goal: reachable for the Panda (x y z qw qx qy qz)

#: (robot, goal option, goal values, extra options, the SolveConfig of those options)
CASES = {
    "model-first": ("panda", "--pose", POSE, [], SolveConfig(refine="lm", strategy="model-first")),
    "random-first-solution": (
        "ur10",
        "--pose",
        [0.5, 0.3, 0.4, 0.0, 1.0, 0.0, 0.0],
        ["--strategy", "random", "--random-starts", "12", "--first-solution"],
        SolveConfig(refine="lm", strategy="random", random_starts=12, first_solution=True),
    ),
    "samples-position": (
        "panda",
        "--position",
        [0.3, -0.2, 0.6],
        ["--strategy", "samples", "-s", "16"],
        SolveConfig(refine="lm", strategy="samples", samples=16),
    ),
    "obstacles": (  # a goal beside the scene's ball: plain LM reaches it in collision from some starts (phase two)
        "panda",
        "--pose",
        [0.35, -0.35, 0.4, 0.0, 1.0, 0.0, 0.0],
        ["--strategy", "random", "--random-starts", "8", "--obstacles", str(SCENE)],
        SolveConfig(refine="lm", strategy="random", random_starts=8),
    ),
}


def spied_backends(monkeypatch) -> list[str]:
    """The names of the LM backends that run from now on, in order (every solve function wrapped)."""
    ran: list[str] = []
    for table in (select.SOLVERS, select.SOLVERS_WITH_CLEARANCE):
        for name, solve in list(table.items()):
            monkeypatch.setitem(table, name, lambda *a, name=name, solve=solve: ran.append(name) or solve(*a))
    return ran


def goal_of(option: str, values: list[float]) -> tuple[object, str]:
    """The goal and its kind that ``ggik solve``'s goal option stands for."""
    f64 = torch.float64
    if option == "--pose":
        x, y, z, *quat = values
        return make_transform(quat_to_matrix(torch.tensor(quat, dtype=f64)), torch.tensor([x, y, z], dtype=f64)), "pose"
    return torch.tensor(values, dtype=f64), "position"


@pytest.fixture(scope="module")
def solver() -> GGIK:
    return GGIK.pretrained()


@pytest.mark.parametrize("case", list(CASES))
def test_ggik_solve_gives_what_GGIK_solve_gives(case, solver, monkeypatch, capsys):
    robot_name, option, values, extra, config = CASES[case]
    seed = 1
    ran_cli = spied_backends(monkeypatch)
    words = ["solve", "--robot", robot_name, option, *map(str, values), *extra, "--seed", str(seed), "--json", "--all"]
    status = main(words)
    out = json.loads(capsys.readouterr().out)
    cli_backends = list(ran_cli)
    ran_cli.clear()

    robot = Robot.from_name(robot_name)
    goal, kind = goal_of(option, values)
    kw = {"obstacles": Scene.from_file(str(SCENE))} if "--obstacles" in extra else {}
    result = solver.solve(robot, goal, config, generator=torch.Generator().manual_seed(seed), goal=kind, **kw)

    assert cli_backends, "the command ran LM"
    assert cli_backends == ran_cli, "the command and GGIK.solve run the same LM backends"
    if kw:
        assert set(select.KEEPS_CLEAR) & set(cli_backends), "the obstacle phase ran"
    rows = out["solutions"]
    assert len(rows) == result.q.shape[1]  # --all: every result of the call, in its order (best first)
    ok = result.success[0] & result.within_limits[0]
    assert [r["ok"] for r in rows] == ok.tolist()
    assert [r["within_limits"] for r in rows] == result.within_limits[0].tolist()
    assert status == (0 if bool(ok.any()) else 1) and out["solved"] == bool(ok.any())
    q_cli = torch.tensor([r["q"] for r in rows], dtype=torch.float64)
    torch.testing.assert_close(q_cli, result.q[0], rtol=0, atol=5e-7 + 1e-9)  # printed to 6 decimals
    for key, name in (("pos_err_m", "pos_err"), ("rot_err_rad", "rot_err")):
        got = torch.tensor([r[key] for r in rows], dtype=torch.float64)
        torch.testing.assert_close(got, getattr(result, name)[0], rtol=0, atol=1e-9)
    if kw:
        assert [r["collision_free"] for r in rows] == result.collision_free[0].tolist()
    assert bool(ok.any()), "the test needs a solved goal"
