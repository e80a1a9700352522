"""``benchmarks.handedness.ship_decision``: verdicts by the base's Wilson 95 % interval, the shipping rule, and the
refusal to compare tables of other goals, on synthetic result tables written in the form ``ggik eval`` writes."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from benchmarks.handedness import ship_decision as sd
from ggik.errors import GGIKError

ARMS = ["ur10", "panda", "irb140", "kr16_2"]


def write_accuracy(
    folder: Path,
    success: dict[str, float],
    command: str = "ggik eval accuracy -n 200 -s 32 --no-progress",
    code: str = "4ead48c5a5",
    sha: str = "e8e9b6db7a14",
    goals: int = 200,
) -> Path:
    """An accuracy table (its .md header and .csv) of ``goals`` goals per robot with the given success [%]."""
    folder.mkdir(parents=True)
    (folder / "accuracy.md").write_text(
        f"# Accuracy of raw GGIK samples ({goals} goals per robot, 32 samples each)\n\nCommand: `{command}`\n"
        f"Model: m.pt (sha256 {sha}, step 4,000)\nCode: ggik 0.2.0, git {code}\nSeed: 0\n",
        encoding="utf-8",
    )
    rows = "".join(f"{arm},7,31.4,{rate},100.0\n" for arm, rate in success.items())
    (folder / "accuracy.csv").write_text(
        "robot,dof,pos mean [mm],success 1cm&1deg [%],samples within limits [%]\n" + rows, encoding="utf-8"
    )
    return folder


def write_paper(folder: Path, success: dict[str, float], code: str, goals: int = 300) -> Path:
    folder.mkdir(parents=True)
    (folder / "paper_protocol.md").write_text(
        f"# Raw GGIK samples on the GGIK paper's protocol ({goals} goals per robot)\n\n"
        f"Command: `python -m ggik.cli eval paper --ckpt m.pt -n {goals} -s 32 --threads 2 --out-dir {folder}`\n"
        f"Model: m.pt (sha256 abc123)\nCode: ggik 0.2.0, git {code}\n",
        encoding="utf-8",
    )
    rows = "".join(f"{arm},7,{goals},{rate},x,97.5,{rate - 97.5},12.0\n" for arm, rate in success.items())
    (folder / "paper_protocol.csv").write_text(
        "robot,dof,goals,success [%],95% interval [%],paper success [%],ours - paper [points],"
        '"success, goals within limits [%]"\n' + rows,
        encoding="utf-8",
    )
    return folder


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval written out from its textbook form (z = 1.96), in %."""
    z, p = 1.96, k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return 100 * (centre - half) / (1 + z * z / n), 100 * (centre + half) / (1 + z * z / n)


def test_verdicts_lie_outside_the_base_interval_or_are_level(tmp_path):
    base = sd.read_table(write_accuracy(tmp_path / "b", {"ur10": 50.0, "panda": 50.0, "irb140": 50.0}))
    cand = sd.read_table(write_accuracy(tmp_path / "c", {"ur10": 57.5, "panda": 56.5, "irb140": 42.5}))
    rows, missing = sd.compare("ours", base, cand)
    lo, hi = wilson(100, 200)  # 43.1-56.9 %
    assert missing == []
    assert [(v.key, v.verdict) for v in rows] == [(("ur10",), "better"), (("panda",), "level"), (("irb140",), "worse")]
    for v in rows:
        assert v.goals == 200 and v.base_interval == pytest.approx((lo, hi), abs=1e-9)
        assert v.candidate_interval == pytest.approx(wilson(round(2 * v.candidate), 200), abs=1e-9)


def test_all_or_nothing_on_both_sides_is_level(tmp_path):
    """100 % of 100 goals has the upper end 1 - 1e-16 in floating point: 100 % against it is level, not better."""
    base = sd.read_table(write_accuracy(tmp_path / "b", {"ur10": 100.0, "panda": 0.0}, goals=100))
    cand = sd.read_table(write_accuracy(tmp_path / "c", {"ur10": 100.0, "panda": 0.0}, goals=100))
    assert [v.verdict for v in sd.compare("ours", base, cand)[0]] == ["level", "level"]


def test_rows_of_one_side_only_are_named_not_compared(tmp_path):
    base = sd.read_table(write_accuracy(tmp_path / "b", {"ur10": 97.0, "panda": 50.0}))
    cand = sd.read_table(write_accuracy(tmp_path / "c", {"panda": 61.5, "kr16_2": 94.0}))
    rows, missing = sd.compare("ours", base, cand)
    assert [v.key for v in rows] == [("panda",)]
    assert missing == ["ours: ur10 only in the base", "ours: kr16_2 only in the candidate"]


def test_the_rule_ships_only_with_nothing_worse_and_every_chiral_arm_better(tmp_path):
    base = sd.read_table(write_accuracy(tmp_path / "b", {"ur10": 97.0, "panda": 50.5, "irb140": 88.5}))
    good = sd.read_table(write_accuracy(tmp_path / "g", {"ur10": 96.0, "panda": 61.5, "irb140": 96.0}))
    level = sd.read_table(write_accuracy(tmp_path / "l", {"ur10": 97.0, "panda": 61.5, "irb140": 91.0}))
    worse = sd.read_table(write_accuracy(tmp_path / "w", {"ur10": 90.0, "panda": 61.5, "irb140": 96.0}))
    chiral = ["panda", "irb140"]
    assert sd.decide(sd.compare("ours", base, good)[0], chiral, ["ours"]).ship
    decision = sd.decide(sd.compare("ours", base, level)[0], chiral, ["ours"])
    assert not decision.ship
    # IRB 140: 88.5 % of 200 has the interval 83.3-92.2 %: better needs 185/200 = 92.5 %
    assert decision.reasons == [
        "chiral arm not better: ours: irb140 success 1cm&1deg [%]: 91.0 % against 88.5 % (83.3-92.2 %, 200 goals), "
        "level; better needs 92.5 % (185/200)"
    ]
    decision = sd.decide(sd.compare("ours", base, worse)[0], chiral, ["ours"])
    assert [r.split(":")[0] for r in decision.reasons] == ["worse"] and "ur10" in decision.reasons[0]
    assert not sd.decide(sd.compare("ours", base, good)[0], chiral, ["ours"], ["adapt: no runs"]).ship
    assert not sd.decide(sd.compare("ours", base, good)[0], ["kr16_2"], ["ours"]).ship  # not compared: no ship


@pytest.mark.parametrize(
    ("command", "differs"),
    [
        ("ggik eval accuracy -n 100 -s 32", "--goals: 200 against 100"),
        ("ggik eval accuracy -n 200 -s 16", "--samples: 32 against 16"),
        ("ggik eval accuracy -n 200 -s 32 --seed 3", "--seed: 0 against 3"),
        ("ggik eval accuracy -n 200 -s 32 --robots panda", "--robots: (none) against panda"),
    ],
)
def test_tables_of_other_goals_are_refused_naming_what_differs(tmp_path, command, differs):
    base = sd.read_table(write_accuracy(tmp_path / "b", {"panda": 50.0}))
    cand = sd.read_table(write_accuracy(tmp_path / "c", {"panda": 60.0}, command=command))
    with pytest.raises(GGIKError, match=re.escape(differs)):
        sd.same_goals(base, cand)


def test_options_that_keep_the_goals_are_ignored(tmp_path):
    base = sd.read_table(write_accuracy(tmp_path / "b", {"panda": 50.0}, code="6b9a71df6c-dirty"))
    cand = sd.read_table(
        write_accuracy(
            tmp_path / "c",
            {"panda": 60.0},
            command="python -m ggik.cli eval accuracy --ckpt x.pt --goals 200 --samples 32 --seed 0 --threads 1 "
            "--mmd-goals 1 --slsqp-goals 1 --out-dir /tmp/x --no-progress",
            code="e1cb01d870",
        )
    )
    notes = sd.same_goals(base, cand, is_ancestor=lambda commit, code: pytest.fail("no goal change is known"))
    assert notes[0] == f"{tmp_path / 'b'}: code 6b9a71df6c-dirty ran with uncommitted changes"
    assert "codes 6b9a71df6c and e1cb01d870 differ" in notes[1]


def test_codes_across_a_goal_change_are_refused(tmp_path):
    old = sd.read_table(write_paper(tmp_path / "old", {"panda": 38.0}, code="13276b4aaa"))
    new = sd.read_table(write_paper(tmp_path / "new", {"panda": 44.0}, code="17a32bf5b0"))
    newer = sd.read_table(write_paper(tmp_path / "newer", {"panda": 44.0}, code="1dbbd190a5"))

    def is_ancestor(commit: str, code: str) -> bool:
        assert commit == "d4a0018"
        return code != "13276b4aaa"

    with pytest.raises(GGIKError, match="code 17a32bf5b0 has d4a0018 .*, code 13276b4aaa does not"):
        sd.same_goals(old, new, is_ancestor)
    assert "known goal changes (d4a0018) on the same side" in sd.same_goals(new, newer, is_ancestor)[0]
    with pytest.raises(GGIKError, match="cannot tell whether"):
        sd.same_goals(new, newer, lambda commit, code: None)
    with pytest.raises(GGIKError, match="different kinds, paper and accuracy"):
        sd.same_goals(new, sd.read_table(write_accuracy(tmp_path / "a", {"panda": 50.0})))


def test_a_row_per_method_is_its_own_row_and_no_match_for_the_older_layout(tmp_path):
    folder = write_paper(tmp_path / "p", {"panda": 44.0}, code="24c3c8fe41")
    (folder / "paper_protocol.csv").write_text(
        'robot,dof,goals,method,"success, best of 32 [%]","success, best of 50 [%]",paper success [%]\n'
        "panda,7,300,raw samples,44.0,50.0,97.5\npanda,7,300,model + DG projection,99.0,99.0,97.5\n",
        encoding="utf-8",
    )
    table = sd.read_table(folder)
    assert table.rows == {
        ("panda", "raw samples"): {"success, best of 32 [%]": (44.0, 300), "success, best of 50 [%]": (50.0, 300)},
        ("panda", "model + DG projection"): {
            "success, best of 32 [%]": (99.0, 300),
            "success, best of 50 [%]": (99.0, 300),
        },
    }
    older = sd.read_table(write_paper(tmp_path / "old", {"panda": 38.0}, code="24c3c8fe41"))
    with pytest.raises(GGIKError, match=re.escape("other layouts, rows named by ['robot'] and ['robot', 'method']")):
        sd.same_goals(older, table)


def test_goals_per_row_from_the_table_and_its_checks(tmp_path):
    paper = sd.read_table(write_paper(tmp_path / "p", {"panda": 44.666666666666664, "ur10": 98.0}, code="17a32bf5b0"))
    assert paper.rows[("panda",)] == {"success [%]": (44.666666666666664, 300)}  # the split columns left out
    with pytest.raises(GGIKError, match=r"accuracy.csv: \('panda',\).* 50.25 % is no whole number .* 200 goals"):
        sd.read_table(write_accuracy(tmp_path / "odd", {"panda": 50.25}))
    broken = write_accuracy(tmp_path / "broken", {"panda": 50.0})
    (broken / "accuracy.md").write_text("# no header\n", encoding="utf-8")
    with pytest.raises(GGIKError, match="accuracy.md: expected the header lines"):
        sd.read_table(broken)
    with pytest.raises(GGIKError, match="expected the files of one result table"):
        sd.read_table(tmp_path)


def test_family_means_and_adaptation_runs_count_their_goals(tmp_path):
    gen = tmp_path / "gen"
    gen.mkdir()
    (gen / "generalisation.md").write_text(
        "# Generalisation (100 goals per robot, 32 samples each)\n\n"
        "Command: `ggik eval generalisation runs/x.pt -n 100`\nModel: x (sha256 aa)\n"
        "Code: ggik 0.1.0, git 4ead48c5a5\n",
        encoding="utf-8",
    )
    (gen / "generalisation.csv").write_text(
        "family,robot,raw success 1cm&1deg [%],refined success 1mm&0.01rad [%]\n"
        "random 6-DOF,random6_0,0.0,98.0\nrandom 6-DOF,random6_1,3.0,100.0\nrandom 6-DOF,(family mean),1.5,99.0\n",
        encoding="utf-8",
    )
    table = sd.read_table(gen)
    assert table.command == {"--seed": ("0",), "eval": ("generalisation",), "--goals": ("100",)}  # positional model
    assert table.rows[("random 6-DOF", "(family mean)")]["raw success 1cm&1deg [%]"] == (1.5, 200)
    adapt = tmp_path / "adapt"
    adapt.mkdir()
    config = {"minutes": 15.0, "test_problems": 100, "seed": 0, "threads": 2}
    runs = {
        f"{arm}/default": {"arm": arm, "config": config, "base_test_success": 0.03, "test_success": 0.58}
        for arm in ("baxter", "rizon4")
    }
    (adapt / "results.json").write_text(
        json.dumps({"runs": runs, "base": {"sha256": "e8e9b6db7a14"}, "code": "c315c58"}), encoding="utf-8"
    )
    table = sd.read_table(adapt)
    assert table.rows[("baxter",)] == {"held-out before [%]": (3.0, 100), "held-out final [%]": (58.0, 100)}
    runs["rizon4/default"]["config"] = {**config, "minutes": 5.0}
    (adapt / "results.json").write_text(
        json.dumps({"runs": runs, "base": {"sha256": "e8e9b6db7a14"}, "code": "c315c58"}), encoding="utf-8"
    )
    with pytest.raises(GGIKError, match="results.json: its runs have different configs"):
        sd.read_table(adapt)


def test_the_command_writes_the_tables_and_the_decision(tmp_path):
    base = write_accuracy(tmp_path / "b", {"ur10": 97.0, "panda": 50.5, "irb140": 88.5, "kr16_2": 93.0})
    cand = write_accuracy(tmp_path / "c", {"ur10": 97.0, "panda": 61.5, "irb140": 91.0, "kr16_2": 96.5})
    out = tmp_path / "out"
    sd.main(["--base", f"ours={base}", "--candidate", f"ours={cand}", "--out", str(out), "--not-compared", "adapt"])
    md = (out / "ship_decision.md").read_text(encoding="utf-8")
    assert "Models: base sha256 e8e9b6db7a14; candidate sha256 e8e9b6db7a14\nCode: ggik " in md
    assert "## ours (accuracy): 2 better, 2 level, 0 worse" in md
    assert "| panda | success 1cm&1deg [%] | 200 | 50.5 (43.6-57.4) | 61.5 (54.6-68.0) | better |" in md
    assert "## Decision: not shipped" in md and "- not compared: adapt" in md
    assert "chiral arm not better: ours: irb140" in md and "chiral arm not better: ours: kr16_2" not in md
    assert (out / "ship_decision.csv").read_text(encoding="utf-8").count("\n") == 5
    with pytest.raises(GGIKError, match="names"):
        sd.main(["--base", f"ours={base}", "--candidate", f"theirs={cand}", "--out", str(out)])
