"""The report of ``ggik eval goals``: rows of :func:`ggik.evaluation.goal_kind_table.goal_kind_rows` as one Markdown
file (a short header explaining the columns, then one section per group of columns: raw, IKNet protocol, refined,
diversity) and one CSV (every column, one row per robot and goal kind), with the command, seed and machine.

The IKNet section also shows the number the IKNet paper reports for the Panda (Table 2: 100 samples per target),
quoted, never measured here: it is a Markdown row only, not in the CSV.
"""

from __future__ import annotations

from pathlib import Path

from ggik.evaluation.goal_kind_table import COLUMNS, IKNET_RADII_CM, RAW_TOLERANCES
from ggik.evaluation.report import Table, command_line, provenance
from ggik.fileio import atomic_write_text
from ggik.ik.metrics import DISTINCT_TOL
from ggik.ik.refine_config import RefineConfig

__all__ = ["IKNET_REFERENCE", "goal_kind_sections", "goal_kind_markdown", "write_goal_kind_report"]

NAN = float("nan")
KEY = ["robot", "kind"]
IKNET_SOURCE = "quoted from the IKNet paper (Table 2), not measured here"
#: the IKNet paper's Panda result (Table 2, 100 samples per target), shown beside ours; within 2 cm / 1 cm: not reported
IKNET_REFERENCE = {
    "robot": "panda",
    "kind": "position",
    "iknet samples": 100,
    "iknet mean dist [cm]": 3.1,
    "iknet within 10cm [%]": 98.0,
    "iknet within 2cm [%]": NAN,
    "iknet within 1cm [%]": NAN,
}

#: section title -> its columns (besides robot and kind)
SECTIONS: dict[str, list[str]] = {
    "Raw samples (the model alone, no joint-space solver)": ["dof", "status", "goals", "samples"]
    + [f"raw success {k}cm&{k}deg [%]" for k in RAW_TOLERANCES]
    + ["raw best pos [mm]", "raw mean pos [mm]", "raw best rot [deg]", "raw mean rot [deg]", "sampling [ms/goal]"],
    "IKNet protocol (position goals)": ["iknet samples", "iknet mean dist [cm]"]
    + [f"iknet within {r}cm [%]" for r in IKNET_RADII_CM],
    "Refined: LM from the model's samples vs from uniform random starts": [
        f"LM from {s} {what}" for s in ("samples", "random") for what in ("success [%]", "[ms/goal]", "iterations")
    ],
    "Diversity of the solutions that reach the goal": [
        c
        for s in ("raw 1cm&1deg", "LM from samples", "LM from random")
        for c in (f"distinct {s}", f"joint std {s} [rad]")
    ],
}


def goal_kind_sections(rows: list[dict], refine: RefineConfig | None = None) -> list[Table]:
    """The Markdown sections of the report (see :data:`SECTIONS`), each a :class:`Table` keyed by robot and kind;
    ``refine``: the LM settings the rows were measured with (for the notes; default :class:`RefineConfig`)."""
    refine = refine or RefineConfig()
    tables = []
    for title, full in SECTIONS.items():
        iknet = title.startswith("IKNet")
        if iknet:
            table = Table(title, KEY + full + ["source"])
            for row in rows:
                if row["kind"] == "position":
                    table.add(*(row[c] for c in KEY + full), "measured" if row["status"] == "ok" else "skipped")
            table.add(*(IKNET_REFERENCE[c] for c in KEY + full), IKNET_SOURCE)
        else:
            table = Table(title, KEY + full)
            for row in rows:
                table.add(*(row[c] for c in KEY + full))
        tables.append(table)
    raw, ik, refined, diversity = tables
    raw.notes += [
        "success k cm & k deg: the best of the S samples within k cm of the goal position and, where the kind fixes an "
        "angle, within k degrees (pose: the rotation angle; position+axis: the angle between the tool axes; position: "
        "no angle criterion).",
        "best: the best of the S samples per goal, averaged over goals; mean: over all samples and goals. Rotation "
        "columns are n/a for position goals.",
        "sampling: wall time of the model's sampling and the angle recovery, per goal (batched, after a warm-up call).",
    ]
    ik.notes += [
        "Each measured row samples anew (its own stream) with the given samples per target: mean distance of the "
        "samples' EE positions to the target [cm], share of samples within 10, 2 and 1 cm (no rotation criterion).",
        "The IKNet row is quoted from that paper (Panda, 100 samples per target), not measured here; it reports no "
        "shares within 2 cm or 1 cm.",
    ]
    refined.notes += [
        f"success: strict: some start converged within {1e3 * refine.pos_tol:g} mm (and {refine.rot_tol:g} rad where "
        "the "
        "kind fixes an angle) inside the joint limits; LM: batched Levenberg-Marquardt with the kind's residual (3, 5 "
        f"or 6 rows), at most {refine.max_iters} iterations.",
        "ms/goal: wall time of the LM call per goal, plus (LM from samples) the model's sampling time; iterations: "
        "mean over all S starts.",
    ]
    diversity.notes += [
        "distinct: solutions per goal after greedy clustering in sample order (ggik.ik.metrics.count_distinct, as in "
        "every "
        f"table): two solutions are the same when their joint-space distance is below {DISTINCT_TOL:g} rad (continuous "
        "joints compared modulo 2 pi); "
        "mean over all goals (0 for a goal with none).",
        "joint std: per goal, the standard deviation of each joint over its solutions, averaged over joints, then over "
        "the goals with at least 2 solutions [rad].",
        "Solutions: raw samples within 1 cm & 1 deg (the raw success criterion of the kind); after LM the strict ones. "
        "For position+axis and position goals the last joint (the free roll about the tool axis) is left out.",
    ]
    return tables


def goal_kind_markdown(
    rows: list[dict],
    command: str,
    seed: int | None = None,
    preamble: list[str] | None = None,
    refine: RefineConfig | None = None,
    model: str | None = None,
) -> str:
    """The whole Markdown report: title, provenance, the column guide, then :func:`goal_kind_sections`."""
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    goals = rows[0]["goals"] if rows else 0
    samples = rows[0]["samples"] if rows else 0
    lines = [
        f"# Goal kinds: raw and refined IK per goal kind ({goals} goals per robot, {samples} samples each)",
        "",
        *provenance(command, seed, model),
        *(preamble or []),
    ]
    lines += [
        "",
        f"Kinds: {', '.join(kinds)}. Goals: q uniform within the limits, goal = FK(q), the same configurations for "
        "every kind, expressed as a pose, as a position and tool axis (the last joint's axis; roll free), or as a "
        "position.",
        "",
        "- **raw**: the model's own output: S point sets per goal, joint angles recovered from them (as `ggik solve` "
        "does with `--refine` left out); no joint-space solver.",
        "- **refined**: Levenberg-Marquardt in joint space, started from those S samples, against LM from S uniform "
        "random starts (no model) on the same goals, in the same run.",
        "- **IKNet protocol**: position goals only, the mean distance of sampled solutions to the target and the "
        "share within 10/2/1 cm, beside the IKNet paper's Panda number (quoted, not measured).",
        "- **diversity**: how many different solutions reach each goal, and how far they spread per joint.",
        "- n/a: not applicable to the kind (or the row was skipped: see its status).",
    ]
    for table in goal_kind_sections(rows, refine):
        lines += ["", f"## {table.title}", "", table.body().rstrip("\n")]
    return "\n".join(lines) + "\n"


def write_goal_kind_report(
    rows: list[dict],
    out_dir: str | Path,
    command: str | None = None,
    seed: int | None = None,
    preamble: list[str] | None = None,
    stem: str = "goal_kinds",
    refine: RefineConfig | None = None,
    model: str | None = None,
) -> tuple[Path, Path]:
    """Write ``OUT_DIR/STEM.md`` (:func:`goal_kind_markdown`) and ``OUT_DIR/STEM.csv`` (every column of every row)
    atomically; returns both paths."""
    out = Path(out_dir)
    csv_table = Table("goal kinds", list(COLUMNS))
    for row in rows:
        csv_table.add(*(row[c] for c in COLUMNS))
    md = atomic_write_text(
        out / f"{stem}.md", goal_kind_markdown(rows, command or command_line(), seed, preamble, refine, model)
    )
    return md, atomic_write_text(out / f"{stem}.csv", csv_table.csv())
