"""The README's model tables, built from the evaluation suite's CSVs, with the GGIK paper's numbers beside ours.

The text of :func:`readme_tables`: the training budget of the checkpoint, raw accuracy (paper Table 1) and seeding
LM / SLSQP (paper Table 2) per robot, from ``accuracy.csv`` and ``seeding.csv`` written by ``ggik eval accuracy``
and ``ggik eval seeding``. Every number comes from those files or from the checkpoint, except the paper's, which
are quoted from Limoyo, Maric et al., "Generative Graphical Inverse Kinematics" (CoRL version), Tables 1 and 2 (Table 1:
:data:`ggik.evaluation.paper_protocol.PAPER_TABLE1`, which ``ggik eval paper`` sets beside the paper's own protocol).
"""

from __future__ import annotations

from pathlib import Path

from ggik.checkpoint import load_checkpoint, training_budget
from ggik.evaluation.paper_protocol import PAPER_TABLE1  # the paper's Table 1, quoted once, for ggik eval paper too
from ggik.evaluation.report import read_csv

__all__ = [
    "PAPER_TABLE1",
    "OTHER_ROBOTS_TARGET",
    "PAPER_TABLE2",
    "fmt",
    "budget_line",
    "accuracy_markdown",
    "seeding_markdown",
    "readme_tables",
]

#: the project's raw-success target for robots outside the paper's table [%]
OTHER_ROBOTS_TARGET = 95.0
#: paper Table 2 (SLSQP, 32 initialisations, all five robots together): success [%] and mean iterations
PAPER_TABLE2 = {"SLSQP random": (95.0, 11.3), "SLSQP GGIK": (100.0, 4.4)}


def fmt(value: str | float, digits: int = 1) -> str:
    """A CSV cell or number with ``digits`` decimals."""
    return f"{float(value):.{digits}f}"


def budget_line(ckpt_path: str | Path) -> str:
    """``Checkpoint `PATH`: <training budget>.`` (:func:`ggik.checkpoint.training_budget`)."""
    return f"Checkpoint `{ckpt_path}`: {training_budget(load_checkpoint(ckpt_path))}."


def accuracy_markdown(rows: list[dict]) -> str:
    """Raw accuracy per robot (rows of ``accuracy.csv``), the paper's Table 1 in brackets and the target."""
    out = [
        "| robot | success [%] (paper) | target [%] | pos mean [mm] (paper) | rot mean [deg] (paper) | best-of-32 pos "
        "mean [mm] | MMD^2 (paper) | sampling [ms/goal] |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        paper = PAPER_TABLE1.get(r["robot"])
        p = (lambda i, paper=paper: f" ({paper[i]})") if paper else (lambda i: "")
        target = f">= {paper[0]}" if paper else f">= {OTHER_ROBOTS_TARGET}"
        best = fmt(r["pos min [mm]"])  # the accuracy table's "min" is the best of S, averaged over goals
        out.append(
            f"| {r['robot']} | {fmt(r['success 1cm&1deg [%]'])}{p(0)} | {target} | {fmt(r['pos mean [mm]'])}{p(1)} | "
            f"{fmt(r['rot mean [deg]'])}{p(2)} | {best} | {fmt(r['MMD^2'], 2)}{p(3)} | "
            f"{fmt(r['sampling time per goal [ms]'])} |"
        )
    return "\n".join(out)


def seeding_markdown(rows: list[dict]) -> str:
    """LM and SLSQP from GGIK samples against random starts per robot (rows of ``seeding.csv``; robots without both
    LM rows are left out), then the paper's Table 2."""
    by = {}
    for r in rows:
        by.setdefault(r["robot"], {})[(r["solver"], r["starts"])] = r
    out = [
        "| robot | goals | LM success [%], GGIK / random starts | LM iterations, GGIK / random | LM time per goal "
        "[ms], GGIK (of which sampling) / random | SLSQP success [%], GGIK / random "
        "| SLSQP iterations, GGIK / random |",
        "|---|---|---|---|---|---|---|",
    ]
    for robot, d in by.items():
        lg, lr = d.get(("LM", "GGIK")), d.get(("LM", "random"))
        sg, sr = d.get(("SLSQP", "GGIK")), d.get(("SLSQP", "random"))
        if not (lg and lr):
            continue
        slsqp = (
            f"{fmt(sg['success [%]'])} / {fmt(sr['success [%]'])} | {fmt(sg['mean iterations'])} / "
            f"{fmt(sr['mean iterations'])}"
            if sg and sr
            else "- | -"
        )
        out.append(
            f"| {robot} | {lg['goals']} | {fmt(lg['success [%]'])} / {fmt(lr['success [%]'])} | "
            f"{fmt(lg['mean iterations'])} / {fmt(lr['mean iterations'])} | "
            f"{fmt(lg['time per goal [ms]'])} ({fmt(lg['of which sampling [ms]'])}) / {fmt(lr['time per goal [ms]'])} "
            f"| {slsqp} |"
        )
    p_r, p_g = PAPER_TABLE2["SLSQP random"], PAPER_TABLE2["SLSQP GGIK"]
    out.append(f"| paper, Table 2 (5 robots, SLSQP) | 2000 | - | - | - | {p_g[0]} / {p_r[0]} | {p_g[1]} / {p_r[1]} |")
    return "\n".join(out)


def readme_tables(results: str | Path, ckpt_path: str | Path) -> str:
    """The README's Markdown (no trailing newline): the checkpoint's budget, then the accuracy and seeding tables
    of ``results``/accuracy.csv and seeding.csv, each introduced by a line naming its source."""
    accuracy, seeding = suite_table(results, "accuracy"), suite_table(results, "seeding")
    return "\n".join(
        [
            budget_line(Path(ckpt_path)),
            "",
            "Raw samples (paper Table 1 in brackets; success = best of 32 within 1 cm and 1 degree), from "
            f"`{accuracy.with_suffix('.md')}`:\n",
            accuracy_markdown(read_csv(accuracy)),
            "",
            f"Seeding local solvers from the 32 samples vs 32 random starts (strict success: 1 mm and 0.01 rad within "
            f"limits), from `{seeding.with_suffix('.md')}`:\n",
            seeding_markdown(read_csv(seeding)),
        ]
    )


def suite_table(results: str | Path, name: str) -> Path:
    """The CSV of suite table ``name`` under ``results``: ``results/NAME/NAME.csv`` (one folder per table, the layout
    of ``eval/results``) or ``results/NAME.csv`` (one folder for the whole suite run)."""
    res = Path(results)
    for path in (res / name / f"{name}.csv", res / f"{name}.csv"):
        if path.is_file():
            return path
    raise FileNotFoundError(f"no {name}.csv in {res} or {res / name} (write it with `ggik eval {name} --out-dir ...`)")
