"""The summary of the generalisation study (benchmarks/generalisation_study: generalisation_study.py, run by
generalisation_summary.py) on the real outputs of `ggik train` / `ggik eval` for a tiny model."""

from __future__ import annotations

import csv
import importlib.util
import shutil

import pytest

from benchmarks.generalisation_study.generalisation_study import (
    BASE_MODEL,
    MODELS,
    StudyFilesError,
    fmt,
    summarise_study,
)
from ggik.checkpoint import load_checkpoint
from ggik.cli import main
from ggik.evaluation.generalisation import FAMILY_MEAN

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="the summary draws figures (matplotlib)"),
]

COMMAND = (
    "python -m benchmarks.generalisation_study.generalisation_summary --runs RUNS --results RESULTS --left-out ur10"
)


def _rows(path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def study(tiny_ckpt, tmp_path_factory):
    """A miniature study laid out as table4.sh lays it out: runs/{loo,finetune_16}, results/{loo,finetune_0,16}."""
    root = tmp_path_factory.mktemp("study")
    runs, results = root / "runs", root / "results"
    (runs / "loo").mkdir(parents=True)
    shutil.copy(tiny_ckpt, runs / "loo" / "last.pt")  # trained on panda (+ random 5/6-DOF): ur10 is unseen
    common = ["-n", "2", "-s", "2", "--no-progress"]
    assert (
        main(
            [
                "eval",
                "generalisation",
                str(runs / "loo/last.pt"),
                "--robots",
                "ur10",
                "lbr_iiwa",
                "--dofs",
                "6",
                "--scales",
                "0.2",
                "--family-size",
                "1",
                "--out-dir",
                str(results / "loo"),
                *common,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train",
                "--init",
                str(runs / "loo/last.pt"),
                "--set",
                "data.robots.ur10=1.0",
                "--set",
                "data.batch_size=8",
                "--set",
                "steps=2",
                "--set",
                "val.every=0",
                "--set",
                "bf16=false",
                "--no-progress",
                "--out",
                str(runs / "finetune_16"),
            ]
        )
        == 0
    )
    for n, ckpt in ((0, runs / "loo/last.pt"), (16, runs / "finetune_16/last.pt")):
        assert (
            main(
                [
                    "eval",
                    "accuracy",
                    "--ckpt",
                    str(ckpt),
                    "--robots",
                    "ur10",
                    "--mmd-goals",
                    "2",
                    "--out-dir",
                    str(results / f"finetune_{n}"),
                    *common,
                ]
            )
            == 0
        )
    return runs, results


def test_summary_tables_carry_the_measured_and_the_papers_numbers(study):
    runs, results = study
    text = summarise_study(runs, results, "ur10", list(MODELS), COMMAND)
    assert text == (results / "README.md").read_text()
    assert f"Made by `{COMMAND}` from the files of `bash benchmarks/generalisation_study/table4.sh`" in text
    assert "Not run (no results): loo_named, loo_wide, random." in text
    recipe = ", ".join(
        f"{k}={v}"
        for k, v in load_checkpoint(runs / "loo/last.pt")["config"]["model"].items()
        if getattr(BASE_MODEL, k) != v
    )
    assert recipe and f"| {recipe} | 3 | " in text, (
        "the model config column names what the tiny model changes from the study's base"
    )
    gen = {r["robot"]: r for r in _rows(results / "loo/generalisation.csv") if r["family"] == "unseen named"}
    iiwa = gen["lbr_iiwa"]
    assert (
        f"| loo | lbr_iiwa | {fmt(float(iiwa['raw success 1cm&1deg [%]']))} (77.2) | >= 90 | "
        f"{fmt(float(iiwa['pos mean [mm]']))} | "
        f"{fmt(float(iiwa['pos best [mm]']))} |"
    ) in text
    assert "| loo | ur10 | " in text and f"| loo | {FAMILY_MEAN} |" not in text
    assert "| loo | random 6-DOF |" in text and "| loo | randomized r=0.2 | 0.20 |" in text
    ft = _rows(results / "finetune_16/accuracy.csv")[0]
    assert (
        "| 16 | 2 | " in text
        and f"| {fmt(float(ft['success 1cm&1deg [%]']))} | {fmt(float(ft['pos mean [mm]']))} |" in text
    )
    assert text.count("\n| 0 | 0 | 0.0 | 0.0 |") == 1, "the loo model itself is the 0-example row"
    for png in ("distance.png", "finetune.png"):
        assert (results / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_summary_without_results_is_a_clear_error(tmp_path):
    with pytest.raises(StudyFilesError, match="run benchmarks/generalisation_study/table4.sh first"):
        summarise_study(tmp_path, tmp_path, "lbr_iiwa", list(MODELS), COMMAND)


def test_summary_without_the_left_out_robot_is_a_clear_error(study, tmp_path):
    runs, results = study
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    with pytest.raises(StudyFilesError, match="finetune_0/accuracy.csv has no row for panda"):
        summarise_study(runs, copy, "panda", ["loo"], COMMAND)
