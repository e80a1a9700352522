"""The adaptation study's report (benchmarks/adapt/study.py): per run, the selection goals' best and the held-out
goals' success of the model written, from a results file (no adaptation run here: ``ggik adapt`` is
tests/test_adapt.py's)."""

from __future__ import annotations

import json

from benchmarks.adapt.study import report, write_report

CONFIG = {"lr": 3e-4, "schedule": "cosine", "min_lr_ratio": 0.03, "batch_size": 64, "replay": 0.5}


def _run(arm: str, **fields) -> dict:
    curve = [
        {"elapsed_s": 0.0, "step": 0, "success": 0.1, "best_m": 0.03},
        {"elapsed_s": 61.0, "step": 50, "success": 0.6, "best_m": 0.01},
        {"elapsed_s": 122.0, "step": 100, "success": 0.5, "best_m": 0.012},
    ]
    run = {"arm": arm, "recipe": "default", "config": CONFIG, "base_success": 0.1, "best_success": 0.6}
    run.update(steps=100, replay_before={"panda": 0.8}, replay_after={"panda": 0.78}, blend=1.0, curve=curve)
    return {**run, **fields}


def test_the_report_heads_with_the_held_out_success_of_the_model_written(tmp_path):
    results = {
        "base": {"path": "base.pt", "sha256": "abc"},
        "code": "x",
        "machine": "cpu",
        "runs": {
            "ur5/default": _run("ur5", base_test_success=0.12, test_success=0.47, blend=0.5),
            "fetch/default": _run("fetch"),  # a run from before the held-out goals
        },
    }
    write_report(results, tmp_path)
    lines = (tmp_path / "README.md").read_text().splitlines()
    head = next(line for line in lines if line.startswith("| arm |"))
    cells = [c.strip() for c in head.strip("|").split("|")]
    assert cells[2] == "before: selection, held-out" and cells[8:10] == ["selection best", "held-out final (blend)"]
    ur5 = [c.strip() for c in next(line for line in lines if line.startswith("| ur5 |")).strip("|").split("|")]
    assert ur5[2] == "10%, 12%" and ur5[3:5] == ["60%", "60%"] and ur5[8:10] == ["60%", "47% (0.5)"]
    fetch = [c.strip() for c in next(line for line in lines if line.startswith("| fetch |")).strip("|").split("|")]
    assert fetch[2] == "10%, -" and fetch[9] == "- (1)"


def test_report_fills_the_held_out_success_from_the_runs_state(tmp_path):
    results = {"base": {"path": "b", "sha256": "c"}, "code": "x", "machine": "cpu", "runs": {"ur5/d": _run("ur5")}}
    results["runs"]["ur5/d"]["recipe"] = "d"
    (tmp_path / "results.json").write_text(json.dumps(results))
    state = tmp_path / "runs" / "ur5" / "d" / "run" / "adapt_state.json"
    state.parent.mkdir(parents=True)
    state.write_text(json.dumps({"best": {"success": 0.6}, "base_test_success": 0.2, "test_success": 0.4}))
    again = report(tmp_path)
    assert (again["runs"]["ur5/d"]["base_test_success"], again["runs"]["ur5/d"]["test_success"]) == (0.2, 0.4)
    assert "| 10%, 20% |" in (tmp_path / "README.md").read_text()
