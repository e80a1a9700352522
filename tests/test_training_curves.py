"""Training curves of ``ggik train`` runs (:mod:`ggik.evaluation.training_curves`, drawn by
``python eval/plot_training.py``): the records of a run folder, the power-law fit of the validation errors, the
figure."""

from __future__ import annotations

import shutil

import pytest


def test_power_law_fit_of_validation_errors_recovers_the_law():
    from ggik.evaluation.training_curves import power_law_fit

    val = [
        {"examples": e, "val/panda/pos_err_best_m": 2.0 * e**-0.3, "val/ur10/pos_err_best_m": 4.0 * e**-0.3}
        for e in (1e3, 1e4, 1e5, 1e6)
    ]
    val.insert(0, {"examples": 10, "val/panda/pos_err_best_m": 9.0, "val/ur10/pos_err_best_m": 9.0})  # skipped
    a, b = power_law_fit(val, skip_examples=100)
    assert a == pytest.approx(3.0, rel=1e-9) and b == pytest.approx(-0.3, rel=1e-9)
    with pytest.raises(ValueError, match="at least 3"):
        power_law_fit(val, skip_examples=10**5)


def test_throughput_per_device_of_a_run(tmp_path):
    import json

    from ggik.evaluation.training_curves import throughput_lines

    records = [{"kind": "init", "step": 0}]
    records += [{"kind": "train", "examples": i, "examples_per_s": float(r)} for i, r in enumerate([5, 1, 3, 2, 4])]
    records += [{"kind": "train", "examples": 9, "examples_per_s": 100.0, "device": "cuda"}, {"kind": "val"}]
    (tmp_path / "metrics.jsonl").write_text("\n".join(json.dumps(r) for r in records))
    unnamed, cuda = throughput_lines(tmp_path)
    assert unnamed.endswith("unnamed: 5 records, examples/s median 3 (quartiles 2-4, range 1-5)")
    assert cuda.endswith("cuda: 1 records, examples/s median 100 (quartiles 100-100, range 100-100)")


def test_training_curves_of_a_run(tiny_ckpt, tmp_path):
    """A run folder as `ggik train` leaves it: its records, the figure with the run's budget, the fit report."""
    import json

    from ggik.evaluation.training_curves import plot_training_curves, power_law_lines, read_metrics, run_budget_line

    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(tiny_ckpt, run / "last.pt")
    recs = [{"kind": "init"}]
    for e in (100, 10_000, 1_000_000):
        recs.append({"kind": "train", "examples": e, "free_se": 1.0 / e, "kl": 3.0})
        recs.append(
            {
                "kind": "val",
                "examples": e,
                "val/panda/success": 0.5,
                "val/panda/pos_err_best_m": 2.0 * e**-0.5,
                # other goal kinds (val.goal_kinds) are neither robots nor part of the pose fit
                "val/panda/position/success": 0.1,
                "val/panda/position/pos_err_best_m": 9.0,
                "val/success_mean": 0.5,
                "val/position/success_mean": 0.1,
            }
        )
    # a resumed run that validates on more robots from then on: its families' robots are drawn as family means
    recs[-1].update({"val/val_random0/success": 0.0, "val/val_random0/pos_err_best_m": 0.3})
    recs[-1].update({"val/family/random/success_mean": 0.0, "val/family/random/pos_err_best_mean_m": 0.3})
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    train, val = read_metrics(run)
    assert [r["kind"] for r in train] == ["train"] * 3 and [r["kind"] for r in val] == ["val"] * 3
    assert run_budget_line(run / "last.pt").startswith("run: 3 steps")
    out = plot_training_curves([run], tmp_path / "sub" / "curves.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = power_law_lines(run, 0)
    assert lines[0].startswith(
        f"{run}: mean best-of-S error ~ 2 m * examples^-0.500 over 3 validation points (100..1,000,000"
    )
    assert lines[1].startswith("  extrapolated to 10 mm at 4e+04 examples")


def test_family_means_and_the_fitted_error_of_runs_with_and_without_training_robots():
    from ggik.evaluation.training_curves import family_means, mean_best_error

    rec = {
        "val/panda/success": 0.5,
        "val/panda/pos_err_best_m": 0.01,
        "val/ur10/success": 1.0,
        "val/ur10/pos_err_best_m": 0.03,
        "val/panda/position/pos_err_best_m": 5.0,  # another goal kind: no robot of its own
        "val/val_random0/success": 0.0,
        "val/val_random0/pos_err_best_m": 0.3,
        "val/val_randomized_0_panda/success": 0.25,
        "val/val_randomized_0_panda/pos_err_best_m": 0.05,
    }
    means = family_means(rec)
    assert means.keys() == {"named", "random", "randomized"}
    assert means["named"] == pytest.approx((0.75, 0.02)) and means["randomized"] == pytest.approx((0.25, 0.05))
    assert mean_best_error(rec) == pytest.approx(0.02)  # the training robots only
    random_only = {k: v for k, v in rec.items() if "val_random0" in k or "randomized" in k}
    assert mean_best_error(random_only) == pytest.approx(0.175)  # a run on random robots alone: all of them
