"""The exact-samples table (issue 62 item 4, ``benchmarks/dg_budget/exact_table.py``): its criteria, and a small run of
its command end to end on one public arm."""

from __future__ import annotations

import csv

import torch

from benchmarks.dg_budget import exact_table as et
from ggik import GGIK, Robot
from ggik.ik.result import IKResult
from tests.test_result_headers import NAMES_MODEL, header

F64 = torch.float64


def test_strict_and_exact_need_the_tolerances_and_the_limits():
    """Per sample: strict below 1 mm and 0.01 rad, exact below 1 cm and 1 deg, both within the limits; distinct
    strict solutions per goal count only strict samples, the same solution once."""
    robot = Robot.from_name("panda")
    q = robot.sample_q(4, torch.Generator().manual_seed(0)).to(F64).view(1, 4, robot.dof)
    q[0, 1] = q[0, 0] + 1e-3  # the same solution as sample 0
    pos = torch.tensor([[5e-4, 5e-4, 2e-3, 5e-4]], dtype=F64)  # sample 2: exact, not strict
    rot = torch.tensor([[1e-3, 1e-3, 1e-3, 1e-3]], dtype=F64)
    within = torch.tensor([[True, True, True, False]])  # sample 3: strict errors, outside the limits
    res = IKResult(q, pos, rot, torch.ones(1, 4, dtype=torch.bool), within)
    m = et.result_metrics(robot, res, 1.0)
    assert (m["strict count"], m["exact count"]) == (2, 3)
    assert m["strict"] == 50.0 and m["exact"] == 75.0 and m["strict best"] == 100.0
    assert m["distinct"] == 1.0


def test_the_ratio_and_the_bounds_of_the_share_from_per_goal_counts():
    """S = 4: a goal with 4 exact and 4 strict (all matched), one with 2 exact and 3 strict (at least 1 of them from an
    exact sample, at most 2), one with none exact and 2 strict (none from an exact sample)."""
    row = {
        "model + DG": {"exact per goal": torch.tensor([4, 2, 0])},
        "model + DG + LM": {"strict per goal": torch.tensor([4, 3, 2])},
    }
    exact, strict, ratio, low, high = et.lm_over_dg(row, 4)
    assert (exact, strict) == (6, 9)
    assert abs(ratio - 9 / 6) < 1e-12 and abs(low - 5 / 6) < 1e-12 and abs(high - 6 / 6) < 1e-12


def test_one_sample_per_repeated_goal_draws_the_samples_of_the_goals():
    """The matched calls' layout (every goal repeated S times, one sample each) draws the samples of the timed calls
    (S samples per goal) with the same generator: the same raw errors per goal, up to order."""
    robot = Robot.from_name("ur10")
    solver = GGIK.pretrained()
    T = robot.fk(robot.sample_q(3, torch.Generator().manual_seed(1)).to(F64))
    S = 4
    cfg = et.solve_config("samples", None, S)
    per_goal = solver.solve(robot, T, cfg, generator=torch.Generator().manual_seed(et.SOLVE_SEED))
    cfg1 = et.solve_config("samples", None, 1)
    repeated = solver.solve(
        robot, T.repeat_interleave(S, 0), cfg1, generator=torch.Generator().manual_seed(et.SOLVE_SEED)
    )
    for field in ("pos_err", "rot_err"):
        a = getattr(per_goal, field).sort(-1).values
        b = getattr(repeated, field).view(3, S).sort(-1).values
        assert torch.allclose(a, b, rtol=0, atol=1e-9), (field, a, b)


def _rows(path):
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_a_small_run_writes_every_method(tmp_path, capsys):
    """``main`` on one arm: the Markdown names its model and has every method and the ratio; the CSV one row per method,
    shares in [0, 100], counts within goals x samples, the ratio's counts those of the CSV. The arm's seeds are its
    index among all the study's arms: the same numbers whatever the family filter."""
    out = tmp_path / "exact.md"
    assert et.main(["--arms", "ur5", "--goals", "2", "--samples", "4", "--out", str(out)]) == 0
    text = out.read_text()
    assert NAMES_MODEL.search(header(out)), header(out)
    for name, _, _ in et.METHODS:
        assert f"| {name} " in text, name
    assert "## Of the samples model + DG makes exact, the share model + DG + LM makes strict" in text
    rows = _rows(out.with_suffix(".csv"))
    assert [r["method"] for r in rows] == [m[0] for m in et.METHODS]
    for r in rows:
        for key in ("strict_per_sample_pct", "strict_best_of_s_pct", "exact_per_sample_pct"):
            assert 0.0 <= float(r[key]) <= 100.0, (r["method"], key, r[key])
        assert 0 <= int(r["strict_count"]) <= int(r["exact_count"]) <= 2 * 4, r
        assert 0.0 <= float(r["distinct_strict_per_goal"]) <= 4.0 and float(r["ms_per_goal"]) > 0.0
        assert abs(float(r["strict_per_sample_pct"]) - 100 * int(r["strict_count"]) / 8) < 1e-3
    by = {r["method"]: r for r in rows}
    ratio_line = f"| {by['model + DG']['exact_count']} | {by['model + DG + LM']['strict_count']} |"
    assert ratio_line in text, ratio_line
    share_row = next(line for line in text.splitlines() if line.startswith("| ur5 | public |") and "-" in line)
    matched_exact, made_strict = (int(c) for c in share_row.split("|")[3:5])
    assert 0 <= made_strict <= matched_exact <= 2 * 4, share_row
    again = tmp_path / "again.md"
    assert (
        et.main(["--families", "public", "--arms", "ur5", "--goals", "2", "--samples", "4", "--out", str(again)]) == 0
    )
    drop = ("ms_per_goal",)
    same = [{k: v for k, v in r.items() if k not in drop} for r in _rows(again.with_suffix(".csv"))]
    assert same == [{k: v for k, v in r.items() if k not in drop} for r in rows]
    capsys.readouterr()
