"""benchmarks/training_speed/equal_examples.py: runs branched from one step compared over the same windows of
examples (synthetic metrics of known losses)."""

from __future__ import annotations

import json
import math

import pytest

from benchmarks.training_speed import equal_examples as eq
from ggik.errors import GGIKError


def write_run(run, batch: int, loss_at, steps: int, since: int = 10, log_every: int = 1) -> None:
    """A run branched at step ``since`` (records before it at batch 100), then ``steps`` steps at ``batch`` whose
    loss is ``loss_at(examples since the branch)``, one validation at the end."""
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(f"data:\n  batch_size: {batch}\n")
    recs = [{"kind": "train", "step": s, "examples": 100 * s, "loss": 99.0, "free_se": 9.0, "kl": 9.0, "lr": 1e-3,
             "cpu_s": 6.0 * s} for s in range(1, since + 1)]  # fmt: skip
    for k in range(1, steps + 1):
        if k % log_every == 0:
            x = batch * k
            rec = {"kind": "train", "step": since + k, "examples": 100 * since + x, "loss": loss_at(x)}
            recs.append({**rec, "free_se": 0.001 * loss_at(x), "kl": 2.0, "lr": 3e-4, "cpu_s": 6.0 * since + 0.06 * x})
    recs.append({"kind": "val", "step": since + steps, "examples": 100 * since + batch * steps,
                 "val/panda/success": 0.25, "val/protocol": "paper"})  # fmt: skip
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def test_windows_of_equal_examples_average_each_runs_records(tmp_path):
    write_run(tmp_path / "small", 100, lambda x: 10.0, steps=40)  # 4,000 examples
    write_run(tmp_path / "big", 400, lambda x: 1.0 if x <= 1000 else 3.0, steps=20)  # 8,000 examples: cut at 4,000
    table = eq.equal_examples_table({"small": tmp_path / "small", "big": tmp_path / "big"}, since_step=10, windows=4)
    rows = [dict(zip(table.columns, r)) for r in table.rows]
    assert [r["examples window"] for r in rows[:4]] == ["0-1,000", "1,000-2,000", "2,000-3,000", "3,000-4,000"]
    assert all(r["mean loss"] == 10.0 and r["batch"] == 100 for r in rows[:4])  # the records before the branch: out
    big = rows[4:]
    assert [r["mean loss"] for r in big] == [1.0, 3.0, 3.0, 3.0] and big[0]["batch"] == 400
    assert big[0]["mean free_se [m^2]"] == pytest.approx(0.001)
    assert rows[3]["val panda [%]"] == 25.0 and rows[3]["val goals"] == "paper"  # small's validation at 4,000
    assert math.isnan(big[3]["val panda [%]"]) and big[3]["last val at"] == "none"  # big's comes at 8,000


def test_cpu_axis_and_bad_input(tmp_path):
    write_run(tmp_path / "a", 100, lambda x: 5.0, steps=10)
    write_run(tmp_path / "b", 200, lambda x: 7.0, steps=10)
    table = eq.equal_examples_table({"a": tmp_path / "a", "b": tmp_path / "b"}, 10, 2, axis="cpu_min")
    assert [r[3] for r in table.rows[:2]] == ["0.0-0.5", "0.5-1.0"]  # CPU minutes since the branch: a's 1 minute
    assert [r[4] for r in table.rows] == [5.0, 5.0, 7.0, 7.0]
    with pytest.raises(GGIKError, match="no metrics.jsonl"):
        eq.read_run(tmp_path / "none", 0)
    with pytest.raises(GGIKError, match="no training records past step 99"):
        eq.read_run(tmp_path / "a", 99)
    with pytest.raises(GGIKError, match="NAME=RUN_DIR"):
        eq.main(["--runs", "nameless", "x=y", "--out", str(tmp_path / "o")])
    assert eq.main(["--runs", f"a={tmp_path / 'a'}", f"b={tmp_path / 'b'}", "--since-step", "10", "--out",
                    str(tmp_path / "o")]) == 0  # fmt: skip
    assert "| a | 100 |" in (tmp_path / "o.md").read_text()
