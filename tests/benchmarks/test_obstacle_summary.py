"""The summary of the obstacle study (:mod:`benchmarks.obstacles.summary`): its spans and counts; the README's tables
are the committed results'."""

from __future__ import annotations


def test_the_readmes_summary_tables_are_the_committed_results():
    from benchmarks.obstacles.summary import RESULTS, _read, ik_summary, path_summary

    readme = (RESULTS.parent / "README.md").read_text(encoding="utf-8")
    ik = ik_summary(_read(RESULTS / "obstacles.csv"))
    paths = path_summary(_read(RESULTS / "obstacles_paths.csv"))
    assert ik.split("\n\n")[0] in readme and paths in readme
    assert "| panda | GGIK + LM, clearance | 100 |" in ik and "200 of 200 goals" in ik


def test_the_summary_spans_counts_and_names_the_slowest_path():
    from benchmarks.obstacles.summary import path_summary

    rows = [
        {
            "robot": "a",
            "scene": "s",
            "method": "m",
            "paths": "10",
            "valid [%]": "90.0",
            "mean s per path": "0.5",
            "max s": "2",
        },
        {
            "robot": "b",
            "scene": "t",
            "method": "m",
            "paths": "10",
            "valid [%]": "100.0",
            "mean s per path": "0.25",
            "max s": "3",
        },
    ]
    assert path_summary(rows).splitlines()[-1] == "| m | 19 / 20 (90-100 % per row) | 0.25-0.5 | 3.00 (b, t) |"
