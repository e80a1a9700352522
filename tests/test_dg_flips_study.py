"""The axis-reversal study (``benchmarks/dg_budget/flips.py``): a small run and its choice of the number of passes."""

from __future__ import annotations

from benchmarks.dg_budget import flips as study


def _row(shares: list[float]) -> dict:
    return {kind: {"exact in limits": shares} for kind in study.KINDS}


def test_the_fewest_passes_reach_095_of_the_last_on_every_arm():
    rows = [_row([0.5, 0.8, 0.9, 0.95, 1.0]), _row([0.9, 0.9, 0.9, 0.96, 0.96])]
    assert study.fewest_passes(rows, "model") == 3  # 0.95 of 1.0 from 3 passes on the first arm
    assert study.fewest_passes([_row([0.96, 0.9, 0.9, 0.9, 1.0])], "model") == 0
    assert study.fewest_passes([_row([0.0, 0.0, 0.0, 0.0, 0.0])], "model") == 0


def test_a_small_run_writes_every_pass_count(tmp_path, capsys):
    out = tmp_path / "flips.md"
    assert study.main(["--arms", "kr16_2", "--goals", "2", "--samples", "3", "--out", str(out)]) == 0
    text = out.read_text()
    assert "Model:" in text and "| kr16_2 | training |" in text
    assert all(f"{f} passes" in text for f in study.FLIPS)
    assert "on every arm from" in text
    assert "kr16_2" in capsys.readouterr().out
