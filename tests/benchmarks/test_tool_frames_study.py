"""The tool-frame study (benchmarks/tool_frames): a row per robot and tool, the graph check, a table file."""

from __future__ import annotations

import pytest

from benchmarks.tool_frames.tool_frames import main

pytestmark = pytest.mark.slow


def test_tool_frame_study_rows(tiny_ckpt, tmp_path, capsys):
    assert main(["--ckpt", str(tiny_ckpt), "--robots", "ur10", "-n", "2", "-s", "2", "--out", str(tmp_path / "t")]) == 0
    text = (tmp_path / "t.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ur10 |")]
    assert len(rows) == 7
    same = {r.split(" | ")[1]: r.split(" | ")[2] for r in rows}
    assert same["own EE"] == same["turned 90 deg about the tool axis"] == same["2 cm off the tool axis"] == "yes"
    assert same["10 cm along the tool axis"] == "no"
