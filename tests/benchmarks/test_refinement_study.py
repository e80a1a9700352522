"""The refinement study (benchmarks/refinement): the DG-vs-LM table runs end to end on a tiny model and reports
consistent rows."""

from __future__ import annotations

import pytest

from benchmarks.refinement.refinement_table import refinement_table
from ggik import GGIKModel, ModelConfig, Robot
from ggik.evaluation.tables import EvalConfig

pytestmark = pytest.mark.slow


def test_refinement_table_rows_and_consistency():
    model = GGIKModel(ModelConfig(dim=8, hidden=16, enc_layers=1, dec_layers=2, latent=2, prior_components=2))
    table = refinement_table(
        model,
        [Robot.from_name("ur10")],
        EvalConfig(problems=3, samples=4, seed=1),
        dg_iterations=(2, 4),
        progress=False,
    )
    methods = [row[1] for row in table.rows]
    assert methods == [
        "raw samples",
        "samples + DG 2 it.",
        "samples + DG 4 it.",
        "samples + DG 4 it. + LM",
        "samples + LM",
        "random starts + LM (no model)",
    ]
    for row in table.rows:
        success, strict, single, best, ms = row[2:]
        assert 0 <= single <= strict <= 100 and 0 <= success <= 100 and best >= 0 and ms > 0
    with pytest.raises(ValueError, match="dg_iterations"):
        refinement_table(model, [Robot.from_name("ur10")], EvalConfig(problems=1, samples=1), dg_iterations=(0,))
