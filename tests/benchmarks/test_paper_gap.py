"""benchmarks/paper_tables/gap.py: the paper run's examples still needed, from a power law of its failure rate fitted
to validation records on the paper's goals (synthetic records of a known law)."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.paper_tables import gap
from ggik.errors import GGIKError


def write_run(run, law: dict[str, tuple[float, float]], goals: int = 200, points: int = 6) -> None:
    """A run folder whose paper-protocol validation follows failure = a x^b per arm, after two records of our
    protocol (which the study must skip) and beside CPU training records at 300 examples/s."""
    run.mkdir()
    (run / "config.yaml").write_text(f"val:\n  problems_per_robot: {goals}\n  protocol: paper\n")
    lines = []
    for i in range(points + 2):
        x = 51_200 * 2**i
        lines.append({"kind": "train", "step": i, "examples": x, "examples_per_s": 300.0 + i, "device": "cpu"})
        rec = {"kind": "val", "step": i, "examples": x}
        if i >= 2:
            rec["val/protocol"] = "paper"
        for arm, (a, b) in law.items():
            rec[f"val/{arm}/success"] = 0.0 if i < 2 else 1.0 - a * x**b
        lines.append(rec)
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def test_the_law_and_the_examples_it_needs_are_recovered(tmp_path):
    law = {"panda": (30.0, -0.3), "ur10": (0.5, -0.05)}
    write_run(tmp_path / "run", law)
    curves, cpu_rate = gap.read_paper_curves(tmp_path / "run")
    assert set(curves) == {"panda", "ur10"} and len(curves["panda"].examples) == 6  # our protocol's records skipped
    assert curves["panda"].examples[0] == 51_200 * 4 and cpu_rate == pytest.approx(304.0)
    a, b, se = gap.failure_power_law(curves["panda"])
    assert a == pytest.approx(30.0, rel=1e-9) and b == pytest.approx(-0.3, rel=1e-9) and se < 1e-9
    want = (0.025 / 30.0) ** (1 / -0.3)  # the Panda's paper success 97.5 %
    assert gap.examples_to_reach(a, b, 0.975) == pytest.approx(want, rel=1e-9)
    assert gap.examples_to_reach(1.0, 0.0, 0.9) == math.inf
    table = gap.gap_table(curves, cpu_rate, [7300.0, 1e5])
    row = dict(zip(table.columns, table.rows[0]))
    assert row["arm"] == "panda" and row["examples to the paper's"] == pytest.approx(want, rel=1e-9)
    assert row["examples still needed"] == pytest.approx(want - curves["panda"].examples[-1], rel=1e-9)
    assert float(row["sittings at 7,300 ex/s"]) == pytest.approx(row["examples still needed"] / 7300 / 720, rel=1e-2)


def test_a_run_already_past_the_paper_needs_nothing_and_bad_runs_are_named(tmp_path):
    write_run(tmp_path / "run", {"ur10": (0.05, -0.01)})  # 94-95 % > the paper's 90 %
    curves, rate = gap.read_paper_curves(tmp_path / "run")
    row = dict(zip(gap.gap_table(curves, rate, [7300.0]).columns, gap.gap_table(curves, rate, [7300.0]).rows[0]))
    assert row["examples still needed"] == 0.0
    with pytest.raises(GGIKError, match="no metrics.jsonl"):
        gap.read_paper_curves(tmp_path / "nothing")
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "metrics.jsonl").write_text(json.dumps({"kind": "val", "step": 1, "examples": 5, "val/panda/success": 0.5}))
    with pytest.raises(GGIKError, match="no validation records on the paper's protocol"):
        gap.read_paper_curves(ours)


def test_the_command_writes_its_table_and_figure(tmp_path):
    write_run(tmp_path / "run", {"panda": (30.0, -0.3), "lbr_iiwa": (2.0, -0.2)})
    assert gap.main(["--run", str(tmp_path / "run"), "--out", str(tmp_path / "out")]) == 0
    text = (tmp_path / "out" / "gap.md").read_text()
    assert "| panda |" in text and "| lbr_iiwa |" in text and (tmp_path / "out" / "gap.png").stat().st_size > 0


def test_a_flat_noisy_curve_has_no_trend_and_needs_inf(tmp_path):
    """Failures that wander about 0.85 with no trend: the slope is within twice its standard error of 0, so the
    table gives no extrapolation (inf), not the astronomically large number a tiny fitted slope would."""
    success = [0.11, 0.15, 0.12, 0.16, 0.1, 0.14, 0.13, 0.16]  # a slightly falling failure, within its noise
    curve = gap.ArmCurve("panda", [10**6 + 51_200 * i for i in range(8)], success, 100)
    a, b, se = gap.failure_power_law(curve)
    assert -2 * se < b < 0
    row = dict(zip(*[(t := gap.gap_table({"panda": curve}, 300.0, [7300.0])).columns, t.rows[0]]))
    assert row["examples to the paper's"] == math.inf and row["sittings at 7,300 ex/s"] == "never"
