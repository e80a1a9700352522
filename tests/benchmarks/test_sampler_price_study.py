"""The sampler-price studies (benchmarks/sampler_price) as functions on the tiny checkpoint, with tiny sizes."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pytest
import torch

from benchmarks.common.scripts import BenchmarkError
from benchmarks.sampler_price.candidates_runs import candidates_table
from benchmarks.sampler_price.parts_runs import PARTS, parts_table
from benchmarks.sampler_price.seeds_runs import seeds_table, tight_limits
from ggik.kinematics import Robot

pytestmark = pytest.mark.slow


def test_parts_add_up_to_the_call_and_count_the_decoders_flops(tiny_ckpt):
    args = argparse.Namespace(
        ckpt=tiny_ckpt, robots=["panda"], goals=3, samples=4, graphs_per_pass=8, compile=False, seed=0, repeats=2
    )
    table = parts_table(args)
    rows = {r[1]: r for r in table.rows}
    assert set(PARTS) <= set(rows)
    whole = rows["whole call"][2]
    parts = sum(rows[p][2] for p in (*PARTS, "rest of the call"))
    assert parts == pytest.approx(whole, rel=1e-6)
    assert rows["decoder EGNN layers"][4] > rows["encode"][4] > 0  # per goal: S decodings against one encoding
    assert all(rows[p][2] >= 0 for p in PARTS if p != "decoder other")
    compute, traffic = [r for r in table.rows if r[1].startswith("floor")]
    assert 0 < compute[2] < whole and compute[4] == pytest.approx(rows["whole call"][4])
    assert 0 < traffic[2] < whole and "GB/s" in traffic[1]


def test_candidates_measure_each_model_eager_and_compiled(tiny_ckpt, monkeypatch, tmp_path):
    monkeypatch.setattr(torch, "compile", lambda fn, **kw: fn)  # the real compile is what the study times
    other = tmp_path / "other.pt"
    other.write_bytes(Path(tiny_ckpt).read_bytes())
    args = argparse.Namespace(
        ckpt=tiny_ckpt,
        more_ckpts=[str(other)],
        robots=["panda"],
        kinds=["pose", "position"],
        goals=3,
        samples=4,
        seed=0,
        jacobi=True,
        repeats=1,
    )
    table = candidates_table(args)
    assert len(table.rows) == 2 * 2 * 3  # kinds x models x (eager, compiled, compiled with Jacobi moves)
    eager, compiled = table.rows[0], table.rows[1]
    assert compiled[2] == eager[2] + ", compiled" and compiled[3] == eager[3]  # the same decoder: the same samples,
    assert math.isclose(compiled[4], eager[4], rel_tol=1e-2)  # to the rounding of a padded pass (16 rows, not 12)
    assert all(0 <= r[3] <= 100 and math.isfinite(r[4]) and r[5] > 0 for r in table.rows)


def test_seeds_compare_model_and_random_starts_of_each_family(tiny_ckpt):
    args = argparse.Namespace(
        ckpt=tiny_ckpt, more_ckpts=[], families=["pose", "tight", "axis"], starts=[2], goals=3, tight=0.3,
        repeats=1, adapted=None, compile=False, seed=0,
    )  # fmt: skip
    table = seeds_table(args)
    assert {r[0] for r in table.rows} == {"pose", "tight", "axis"}
    assert [r[4] for r in table.rows[:2]] == ["random", table.rows[1][4]] and table.rows[1][4] != "random"
    for r in table.rows:
        assert 0 <= r[5] <= 100 and r[6] > 0
        assert r[7] == pytest.approx(r[6] / (r[5] / 100)) if r[5] > 0 else math.isinf(r[7])
    with pytest.raises(BenchmarkError, match="at most 1"):
        seeds_table(argparse.Namespace(**{**vars(args), "tight": 2.0}))


def test_tight_limits_cut_every_range_about_its_middle():
    panda = Robot.from_name("panda")
    tight = tight_limits(panda, 0.25)
    torch.testing.assert_close(tight.upper - tight.lower, 0.25 * (panda.upper - panda.lower))
    torch.testing.assert_close(tight.upper + tight.lower, panda.upper + panda.lower)
    q = tight.sample_q(50, torch.Generator().manual_seed(0))
    torch.testing.assert_close(tight.fk(q), panda.fk(q))  # the same arm
