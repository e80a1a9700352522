"""Summary of the generalisation study (``bash benchmarks/generalisation_study/table4.sh``): tables and figures from
its result files.

Reads, for each model M of the study, ``RESULTS/M/generalisation.csv`` (``ggik eval generalisation``) and the
training budget of ``RUNS/M/last.pt``; for each fine-tuning size N, ``RESULTS/finetune_N/accuracy.csv``
(``ggik eval accuracy`` on the left-out robot) and ``RUNS/finetune_N/last.pt`` (N = 0: the leave-one-out model
itself). :func:`summarise_study` writes ``RESULTS/README.md``, ``RESULTS/distance.png`` (raw best-of-S position
error, raw success and LM iterations against the distance from the training set, every model) and
``RESULTS/finetune.png`` (raw success and errors on the left-out robot against fine-tuning examples). Every
number comes from those files, except the GGIK paper's Table 4, quoted from Limoyo, Maric et al.,
"Generative Graphical Inverse Kinematics" (CoRL version).
"""

from __future__ import annotations

import math
from pathlib import Path

from ggik.checkpoint import cpu_time, load_checkpoint
from ggik.errors import GGIKError
from ggik.evaluation.generalisation import FAMILY_MEAN as MEAN
from ggik.evaluation.report import read_csv
from ggik.fileio import atomic_write
from ggik.nn.cvae import ModelConfig

__all__ = [
    "StudyFilesError",
    "PAPER_TABLE4",
    "TARGET_RAW",
    "MODELS",
    "BASE_MODEL",
    "num",
    "fmt",
    "run_budget",
    "models_table",
    "finetune_rows",
    "finetune_table",
    "summarise_study",
]

#: paper Table 4: raw success [%] on real robots of a model trained on random robots similar to them (+-40 %)
PAPER_TABLE4 = {"lbr_iiwa": 77.2, "schunk_lwa4d": 1.8, "schunk_lwa4p": 3.8}
#: the project's raw-success target on a left-out real robot [%]
TARGET_RAW = 90.0
#: the study's models, in table order, with what each was trained on
MODELS = {
    "loo": "all urdfs/ robots but the left-out one + random DH (6, 7 DOF) + randomize_links r = 0.2 (configs/loo.yaml)",
    "loo_wide": "as loo, with randomize_links r = 0.4 and more random DH robots (weight 3, 5-8 DOF)",
    "loo_named": "as loo, without random robots: the 8 named robots only",
    "random": "random DH robots of 6 and 7 DOF only (configs/random.yaml): every urdfs/ robot is unseen",
}
REFINED = "refined success 1mm&0.01rad [%]"
# : the study's base model (configs/loo.yaml: the v1 architecture); the summary names what a model's config changes
# from it
BASE_MODEL = ModelConfig(residual_inputs=False, gn_steps=0)


class StudyFilesError(GGIKError):
    """The study's result files are missing or do not hold what the summary needs."""


def num(value: str) -> float:
    """A CSV cell as a float; empty, ``nan`` and ``n/a`` cells are NaN."""
    return float(value) if value not in ("", "nan", "n/a") else math.nan


def fmt(value: float, digits: int = 1) -> str:
    """``value`` with ``digits`` decimals, ``n/a`` for NaN."""
    return "n/a" if math.isnan(value) else f"{value:.{digits}f}"


def run_budget(run: Path) -> dict:
    """``steps``, ``examples``, ``wall_min`` and ``cpu_min`` (minutes) of ``run/last.pt``, and ``recipe``: its model
    config's values that differ from the study's base model :data:`BASE_MODEL` (``"base"`` if none)."""
    ckpt = load_checkpoint(run / "last.pt")
    cpu_s, _ = cpu_time(ckpt)
    recipe = [
        f"{k}={v}" for k, v in (ckpt.get("config") or {}).get("model", {}).items() if getattr(BASE_MODEL, k, v) != v
    ]
    return {
        "steps": ckpt["step"],
        "examples": ckpt["examples"],
        "wall_min": ckpt["wall_s"] / 60,
        "cpu_min": cpu_s / 60,
        "recipe": ", ".join(recipe) or "base",
    }


def models_table(results: Path, runs: Path, names: list[str]) -> tuple[str, dict[str, list[dict]]]:
    """(Markdown of the models' budgets, their unseen real robots and their families; model -> its
    generalisation.csv rows)."""
    rows_by_model = {m: read_csv(results / m / "generalisation.csv") for m in names}
    out = [
        "| model | trained on | model config (beyond the base) | steps | examples | CPU-min |",
        "|---|---|---|---|---|---|",
    ]
    for m in names:
        b = run_budget(runs / m)
        out.append(
            f"| {m} | {MODELS.get(m, '?')} | {b['recipe']} | {b['steps']:,} | {b['examples']:,} | {b['cpu_min']:.0f} |"
        )
    out += [
        "",
        "Unseen real robots (raw: best of 32 within 1 cm and 1 degree; refined: LM from the 32 samples, 1 mm and "
        "0.01 rad within limits):",
        "",
        "| model | robot | raw success [%] (paper Table 4) | target [%] | pos mean [mm] | best-of-32 pos [mm] | "
        "best-of-32 rot [deg] | refined success [%] | LM iterations |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in names:
        for r in rows_by_model[m]:
            if r["family"] != "unseen named" or r["robot"] == MEAN:
                continue
            paper = PAPER_TABLE4.get(r["robot"])
            out.append(
                f"| {m} | {r['robot']} | {fmt(num(r['raw success 1cm&1deg [%]']))}"
                f"{f' ({paper})' if paper is not None else ''} | >= {TARGET_RAW:g} | {fmt(num(r['pos mean [mm]']))} | "
                f"{fmt(num(r['pos best [mm]']))} | {fmt(num(r['rot best [deg]']))} | {fmt(num(r[REFINED]))} | "
                f"{fmt(num(r['LM iterations']))} |"
            )
    out += [
        "",
        "Families (mean over the family's robots):",
        "",
        "| model | family | distance | raw success [%] | best-of-32 pos [mm] | refined success [%] | LM iterations |",
        "|---|---|---|---|---|---|---|",
    ]
    for m in names:
        for r in rows_by_model[m]:
            if r["robot"] != MEAN:
                continue
            out.append(
                f"| {m} | {r['family']} | {fmt(num(r['distance to training set']), 2)} | "
                f"{fmt(num(r['raw success 1cm&1deg [%]']))} | {fmt(num(r['pos best [mm]']))} | "
                f"{fmt(num(r[REFINED]))} | {fmt(num(r['LM iterations']))} |"
            )
    return "\n".join(out), rows_by_model


def finetune_rows(results: Path, runs: Path, left_out: str) -> list[dict]:
    """One dict per ``results/finetune_N`` folder, by N: the budget of ``runs/finetune_N`` (zeros for N = 0, the
    leave-one-out model itself) and the left-out robot's raw accuracy (success [%], errors [mm], [deg])."""
    rows = []
    for folder in sorted(results.glob("finetune_*"), key=lambda p: int(p.name.split("_")[1])):
        n = int(folder.name.split("_")[1])
        acc = [r for r in read_csv(folder / "accuracy.csv") if r["robot"] == left_out]
        if not acc:
            raise StudyFilesError(f"{folder / 'accuracy.csv'} has no row for {left_out}")
        b = (
            {"steps": 0, "cpu_min": 0.0, "wall_min": 0.0} if n == 0 else run_budget(runs / folder.name)
        )  # 0: the loo model
        rows.append(
            {
                "examples": n,
                "steps": b["steps"],
                "cpu_min": b["cpu_min"],
                "wall_min": b["wall_min"],
                "success": num(acc[0]["success 1cm&1deg [%]"]),
                "pos_mean": num(acc[0]["pos mean [mm]"]),
                "pos_best": num(acc[0]["pos min [mm]"]),
                "rot_best": num(acc[0]["rot min [deg]"]),
                "within": num(acc[0]["samples within limits [%]"]),
            }
        )
    return rows


def finetune_table(rows: list[dict], left_out: str) -> str:
    """Markdown of :func:`finetune_rows`."""
    out = [
        f"| fine-tuning examples on {left_out} | steps | CPU-min | wall-min | raw success [%] | pos mean [mm] | "
        "best-of-32 pos [mm] | best-of-32 rot [deg] | samples within limits [%] |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(
            f"| {r['examples']:,} | {r['steps']} | {r['cpu_min']:.1f} | {r['wall_min']:.1f} | {fmt(r['success'])} | "
            f"{fmt(r['pos_mean'])} | {fmt(r['pos_best'])} | {fmt(r['rot_best'], 2)} | {fmt(r['within'])} |"
        )
    return "\n".join(out)


def summarise_study(runs: Path, results: Path, left_out: str, models: list[str], command: str) -> str:
    """Write ``results``/README.md (returned), distance.png and (with fine-tuning results) finetune.png for the
    ``models`` that have results; ``command`` is the one named as the README's maker.

    Raises :class:`StudyFilesError` when no model has a generalisation.csv or a fine-tuning folder lacks the
    left-out robot; FileNotFoundError for a missing checkpoint."""
    from benchmarks.generalisation_study.study_plots import plot_finetuning, plot_study_distances

    runs, results = Path(runs), Path(results)
    names = [m for m in models if (results / m / "generalisation.csv").is_file()]
    missing = sorted(set(models) - set(names))
    if not names:
        raise StudyFilesError(
            f"no generalisation.csv under {results}/<model>/ for {models}: run "
            "benchmarks/generalisation_study/table4.sh first"
        )
    text = [
        "# Generalisation study: the GGIK paper's Table 4 protocol and fine-tuning",
        "",
        f"Made by `{command}` from the files of `bash benchmarks/generalisation_study/table4.sh`; each model's own "
        "table (command, seed, machine) is "
        "in its folder.",
        "",
    ]
    if missing:
        text += [f"Not run (no results): {', '.join(missing)}.", ""]
    table, rows_by_model = models_table(results, runs, names)
    text += [table, ""]
    plot_study_distances(
        {
            m: [
                (
                    r["family"],
                    num(r["distance to training set"]),
                    num(r["pos best [mm]"]),
                    num(r["raw success 1cm&1deg [%]"]),
                    num(r["LM iterations"]),
                )
                for r in rows
                if r["robot"] != MEAN
            ]
            for m, rows in rows_by_model.items()
        },
        results / "distance.png",
    )
    text += ["![distance](distance.png)", ""]
    ft = finetune_rows(results, runs, left_out)
    if ft:
        text += [
            f"Fine-tuning (`ggik train --init loo/last.pt`, {left_out} only, lr 3e-4), then `ggik eval accuracy "
            f"--robots {left_out}` (raw samples, success = best of 32 within 1 cm and 1 degree):",
            "",
            finetune_table(ft, left_out),
            "",
            "![finetune](finetune.png)",
            "",
        ]
        plot_finetuning(
            [(r["examples"], r["cpu_min"], r["pos_best"], r["pos_mean"], r["success"]) for r in ft],
            results / "finetune.png",
            title=f"Fine-tuning the leave-one-out model to {left_out}",
        )
    out = "\n".join(text)
    atomic_write(results / "README.md", lambda f: f.write(out.encode("utf-8")))
    return out
