"""The sampling-cost comparison of two models (benchmarks/handedness/sampling_cost.py): rounds alternate the models
A, B / B, A after untimed warm-ups, and the ratios pair each round's two times (not the ratio of two medians)."""

from __future__ import annotations

import pytest

import benchmarks.handedness.sampling_cost as sampling_cost
from benchmarks.common.scripts import BenchmarkError
from benchmarks.handedness.sampling_cost import arm_times, load_models, ratio_summary
from ggik import Robot
from ggik.checkpoint import load_model


def test_rounds_alternate_the_models_after_the_warmups(tiny_ckpt, monkeypatch):
    a, b = (load_model(tiny_ckpt)[0].eval() for _ in range(2))
    calls = []
    real = sampling_cost.sample_joint_angles

    def recording(model, *args):
        calls.append("A" if model is a else "B")
        return real(model, *args)

    monkeypatch.setattr(sampling_cost, "sample_joint_angles", recording)
    times = arm_times([a, b], Robot.from_name("ur10"), 0, goals=2, samples=3, warmups=1, repeats=4)
    assert "".join(calls) == "AB" + "BA" + "AB" + "BA" + "AB"  # round 0 untimed, then 4 timed rounds
    assert [len(t) for t in times] == [4, 4] and all(x > 0 for t in times for x in t)


def test_ratios_pair_each_rounds_times():
    # arm "x": paired ratios 3, 1, 2 (median 2), while the ratio of the medians is 3 / 2
    per_arm = {"x": [[1.0, 2.0, 3.0], [3.0, 2.0, 6.0]], "y": [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]}
    rows, summed = ratio_summary(per_arm, boot=200, seed=0)
    x, y = rows
    assert x[0] == "x" and x[1:4] == [pytest.approx(2e3), pytest.approx(3e3), pytest.approx(2.0)]
    assert 1.0 <= x[4] <= 2.0 <= x[5] <= 3.0 and (x[6], x[7]) == (1.0, 3.0)
    assert y[3:8] == [0.5] * 5  # every round the same ratio: a zero-width interval
    # all arms: summed medians (2 + 1 ms for A, 3 + 0.5 for B), single rounds from 0.5 to 3
    assert summed[1:4] == [pytest.approx(3e3), pytest.approx(3.5e3), pytest.approx(3.5 / 3)]
    assert summed[4] <= 3.5 / 3 <= summed[5] and (summed[6], summed[7]) == (0.5, 3.0)


def test_only_the_models_named_compile_their_decoder(tiny_ckpt):
    names, paths, models = load_models([f"eager={tiny_ckpt}", f"compiled={tiny_ckpt}"], ["compiled"])
    assert names == ["eager", "compiled"] and paths == [tiny_ckpt] * 2
    assert [m.decoder_compiled for m in models] == [False, True]
    for specs, compiled in (([tiny_ckpt, f"b={tiny_ckpt}"], []), ([f"a={tiny_ckpt}", f"b={tiny_ckpt}"], ["c"])):
        with pytest.raises(BenchmarkError, match="--models"):
            load_models(specs, compiled)
