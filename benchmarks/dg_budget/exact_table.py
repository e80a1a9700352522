"""Exact samples per arm (issue 62, item 4): raw model samples, model + DG, model + DG + LM, random + DG and random +
LM, all through the product API (:meth:`ggik.GGIK.solve`, one model), on every arm of the handedness study
(``benchmarks.handedness.study.arms``: training arms, the public files of ``benchmarks/adapt``, random DH,
link-randomised and chiral DH arms).

The methods (:class:`ggik.SolveConfig`; S = ``--samples`` model samples or random starts per goal):

* **raw**: strategy "samples", ``refine=None``; **model + DG**: "samples", "dg"; **model + DG + LM**: "samples",
  "dg+lm"; **random + DG**: "random", "dg"; **random + LM**: "random", "lm" (S random starts).

Goals: per arm, pose goals by FK of ``robot.sample_q`` (within the limits) drawn with :data:`REPORT_SEED` + the arm's
index among all the study's arms (the same whatever ``--families`` and ``--arms`` select); not the goals the DG budget
was chosen on (``GOAL_SEED`` + index). Every solve call of an arm gets a new generator seeded :data:`SOLVE_SEED` +
index: raw, model + DG and model + DG + LM start from the same model samples (the same generator state draws the same
samples), random + DG and random + LM from the same random starts.

Per (arm, method), per sample of the result (B goals x S):

* **strict**: position error < 1 mm, rotation error < 0.01 rad and within the joint limits (``IKResult.within_limits``);
  per sample [%], best of S (any sample of the goal) [%], and distinct strict solutions per goal (mean over goals,
  :func:`ggik.ik.metrics.count_distinct`, :data:`ggik.ik.metrics.DISTINCT_TOL` rad apart, continuous joints wrapped);
* **exact**: within 1 cm and 1 deg and the limits (the handedness study's success, the projection's own level) [%];
* **ms per goal**: the wall time of the timed solve call / B, after one warm-up call (2 goals, another seed) of the
  same arm and method, so that first-use costs (numba's LM kernel, caches) are not counted.

The item's share, per arm: of the samples that model + DG makes exact, the share that model + DG + LM makes strict.
:meth:`ggik.GGIK.solve` sorts each goal's solutions best first, so the samples of the two timed calls cannot be
matched one to one. Two more calls (untimed; :func:`matched_counts`) match them: every goal repeated S times with one
sample each (``samples=1``), so that nothing is reordered; the sampling noise of a call is drawn for all its goals x
samples at once (:func:`ggik.ik.sampling.call_noise`), so these are the timed calls' samples (the same exact count
when the projection does not depend on the batch). The table also gives the timed calls' count ratio, strict samples
of model + DG + LM / exact samples of model + DG (it can exceed 1: LM also makes samples strict that DG left
inexact), and the bounds that each goal's counts alone put on the share (e_g exact of model + DG, s_g strict of
model + DG + LM, S samples): at least sum_g max(0, s_g - (S - e_g)) / sum_g e_g (at most S - e_g strict samples came
from inexact ones), at most sum_g min(s_g, e_g) / sum_g e_g.

Command (from the repository root; heavy: one thread)::

    python -m benchmarks.dg_budget.exact_table --threads 1 --out benchmarks/dg_budget/results/exact_table.md

writes the Markdown tables and, beside them, a CSV (``.csv``) with one row per (arm, method).
"""

from __future__ import annotations

import csv
import io
import math
import time

import torch

from benchmarks.dg_budget.common import commit, study_parser
from benchmarks.handedness.study import POS_TOL, ROT_TOL, arms
from ggik import GGIK, Robot, SolveConfig
from ggik.evaluation.report import command_line, model_stamp, provenance
from ggik.fileio import atomic_write_text
from ggik.ik.metrics import DISTINCT_TOL, count_distinct
from ggik.ik.result import IKResult

__all__ = ["METHODS", "REPORT_SEED", "SOLVE_SEED", "solve_config", "measure", "result_metrics", "markdown", "main"]

REPORT_SEED = 57_000  #: the goals of arm number i are drawn with REPORT_SEED + i (the budget's were GOAL_SEED + i)
SOLVE_SEED = 58_000  #: every timed solve call of arm number i: a generator seeded SOLVE_SEED + i
WARM_SEED = 59_000  #: the warm-up calls: goals and generator seeded WARM_SEED + i
WARM_GOALS = 2  #: goals of a warm-up call
STRICT_POS, STRICT_ROT = 1e-3, 0.01  #: strict: within 1 mm and 0.01 rad (and the limits)
#: (name, strategy, refine) of each method, the table's columns
METHODS = (
    ("raw", "samples", None),
    ("model + DG", "samples", "dg"),
    ("model + DG + LM", "samples", "dg+lm"),
    ("random + DG", "random", "dg"),
    ("random + LM", "random", "lm"),
)
#: (key, title, format) of each table
METRICS = (
    ("strict", "strict per sample [%] (1 mm, 0.01 rad, within limits)", ".1f"),
    ("strict best", "strict best of S [%] (a strict sample per goal)", ".1f"),
    ("distinct", f"distinct strict solutions per goal (>= {DISTINCT_TOL} rad apart)", ".2f"),
    ("exact", "exact per sample [%] (1 cm, 1 deg, within limits: the projection's level)", ".1f"),
    ("ms", "ms per goal (the solve call, after a warm-up call; this run, other jobs on the machine)", ".2f"),
)
CSV_FIELDS = (
    "arm",
    "family",
    "dof",
    "method",
    "strategy",
    "refine",
    "goals",
    "samples",
    "strict_per_sample_pct",
    "strict_best_of_s_pct",
    "distinct_strict_per_goal",
    "exact_per_sample_pct",
    "ms_per_goal",
    "strict_count",
    "exact_count",
)


def solve_config(strategy: str, refine: str | None, samples: int) -> SolveConfig:
    """The :class:`SolveConfig` of a method: ``samples`` model samples ("samples") or random starts ("random") per
    goal, the strict tolerances (1 mm, 0.01 rad) as the call's success tolerances (LM refines until they are met)."""
    if strategy == "samples":
        return SolveConfig(samples=samples, refine=refine, pos_tol=STRICT_POS, rot_tol=STRICT_ROT)
    return SolveConfig(strategy=strategy, refine=refine, random_starts=samples, pos_tol=STRICT_POS, rot_tol=STRICT_ROT)


def result_metrics(robot: Robot, res: IKResult, ms: float) -> dict[str, float]:
    """The metrics of a solve's ``res`` (B goals x S samples) and its wall time ``ms`` per goal: shares in %, distinct
    strict solutions per goal (mean over goals), the strict and exact sample counts."""
    within = res.within_limits
    strict = (res.pos_err < STRICT_POS) & (res.rot_err < STRICT_ROT) & within
    exact = (res.pos_err < POS_TOL) & (res.rot_err < ROT_TOL) & within
    distinct = count_distinct(res.q, strict, ~robot.limited, DISTINCT_TOL)
    return {
        "strict": 100 * float(strict.double().mean()),
        "strict best": 100 * float(strict.any(-1).double().mean()),
        "distinct": float(distinct.mean()),
        "exact": 100 * float(exact.double().mean()),
        "ms": ms,
        "strict count": int(strict.sum()),
        "exact count": int(exact.sum()),
        "strict per goal": strict.sum(-1),
        "exact per goal": exact.sum(-1),
    }


def measure(solver: GGIK, robot: Robot, T: torch.Tensor, cfg: SolveConfig, seed: int) -> dict[str, float]:
    """One timed solve of goals ``T`` (B, 4, 4) [m, base frame] with ``cfg`` and a generator seeded ``seed``:
    :func:`result_metrics`, the time per goal [ms] of the call alone."""
    gen = torch.Generator().manual_seed(seed)
    t0 = time.perf_counter()
    res = solver.solve(robot, T, cfg, generator=gen)
    ms = 1e3 * (time.perf_counter() - t0) / T.shape[0]
    return result_metrics(robot, res, ms)


def matched_counts(solver: GGIK, robot: Robot, T: torch.Tensor, samples: int, seed: int) -> tuple[int, int]:
    """(samples that model + DG makes exact, those of them that model + DG + LM makes strict): goals ``T`` (B, 4, 4)
    each repeated ``samples`` times with one sample each, both calls with a generator seeded ``seed`` (module
    docstring: the samples of :func:`measure`'s calls with ``samples`` per goal and the same seed)."""
    repeated = T.repeat_interleave(samples, 0)
    res = {}
    for refine in ("dg", "dg+lm"):
        gen = torch.Generator().manual_seed(seed)
        res[refine] = solver.solve(robot, repeated, solve_config("samples", refine, 1), generator=gen)
    dg, lm = res["dg"], res["dg+lm"]
    exact = (dg.pos_err < POS_TOL) & (dg.rot_err < ROT_TOL) & dg.within_limits
    strict = (lm.pos_err < STRICT_POS) & (lm.rot_err < STRICT_ROT) & lm.within_limits
    return int(exact.sum()), int((exact & strict).sum())


def arm_row(solver: GGIK, robot: Robot, index: int, goals: int, samples: int) -> dict:
    """``{"methods": {method: metrics}, "matched": matched_counts}`` on ``goals`` pose goals of ``robot``, the
    ``index``-th arm of the study (its seeds)."""
    gen = torch.Generator().manual_seed(REPORT_SEED + index)
    T = robot.fk(robot.sample_q(goals, gen).to(torch.float64))
    warm_gen = torch.Generator().manual_seed(WARM_SEED + index)
    T_warm = robot.fk(robot.sample_q(WARM_GOALS, warm_gen).to(torch.float64))
    out = {}
    for name, strategy, refine in METHODS:
        cfg = solve_config(strategy, refine, samples)
        with torch.no_grad():
            solver.solve(robot, T_warm, cfg, generator=torch.Generator().manual_seed(WARM_SEED + index))
            out[name] = measure(solver, robot, T, cfg, SOLVE_SEED + index)
    with torch.no_grad():
        matched = matched_counts(solver, robot, T, samples, SOLVE_SEED + index)
    return {"methods": out, "matched": matched}


def lm_over_dg(row: dict, samples: int) -> tuple[int, int, float, float, float]:
    """(exact samples of model + DG, strict samples of model + DG + LM, their ratio, and the lower and upper bounds of
    the share of the exact samples made strict, from each goal's counts (module docstring); nan without exact
    samples). ``samples``: S per goal."""
    e, s = row["model + DG"]["exact per goal"], row["model + DG + LM"]["strict per goal"]
    exact, strict = int(e.sum()), int(s.sum())
    if not exact:
        return exact, strict, math.nan, math.nan, math.nan
    low = int((s - (samples - e)).clamp(min=0).sum()) / exact
    return exact, strict, strict / exact, low, int(torch.minimum(s, e).sum()) / exact


def markdown(rows: list[dict], header: str, samples: int) -> str:
    """One table per metric (arms as rows, the methods as columns), then the item's ratio per arm (``samples`` S per
    goal: :func:`lm_over_dg`)."""
    names = [m[0] for m in METHODS]
    parts = [header, ""]
    for key, title, fmt in METRICS:
        parts.append(f"## {title}\n")
        parts.append("| arm | family | " + " | ".join(names) + " |")
        parts.append("|---|---|" + "---|" * len(names))
        for r in rows:
            cells = " | ".join(format(r["methods"][n][key], fmt) for n in names)
            parts.append(f"| {r['arm']} | {r['family']} | {cells} |")
        parts.append("")
    parts.append("## Of the samples model + DG makes exact, the share model + DG + LM makes strict\n")
    parts.append("matched: the same samples, one per goal row (module docstring); timed calls: their counts alone.\n")
    head = "| arm | family | matched: DG exact | of them LM strict | share | timed: DG exact | DG + LM strict | ratio |"
    parts.append(head + " share bounds |")
    parts.append("|---|---|---|---|---|---|---|---|---|")
    shares = []
    for r in rows:
        m_exact, m_strict = r["matched"]
        share = m_strict / m_exact if m_exact else math.nan
        exact, strict, ratio, low, high = lm_over_dg(r["methods"], samples)
        shares.append((share, r["arm"]))
        cells = f"{m_exact} | {m_strict} | {share:.3f} | {exact} | {strict} | {ratio:.3f} | {low:.3f}-{high:.3f}"
        parts.append(f"| {r['arm']} | {r['family']} | {cells} |")
    parts.append("")
    known = [x for x in shares if not math.isnan(x[0])]
    if known:
        worst = min(known)
        met = sum(x >= 0.95 for x, _ in known)
        parts.append(f"- share at least 0.95 on {met} of {len(known)} arms; lowest {worst[0]:.3f} ({worst[1]})")
    return "\n".join(parts) + "\n"


def csv_text(rows: list[dict], goals: int, samples: int) -> str:
    """One CSV row per (arm, method): :data:`CSV_FIELDS`."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in rows:
        for name, strategy, refine in METHODS:
            m = r["methods"][name]
            w.writerow(
                [r["arm"], r["family"], r["dof"], name, strategy, refine or "none", goals, samples]
                + [f"{m[k]:.4f}" for k in ("strict", "strict best", "distinct", "exact", "ms")]
                + [m["strict count"], m["exact count"]]
            )
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    p = study_parser(
        __doc__.split("\n\n")[0], "model samples, and random starts, per goal", "(Markdown; the CSV beside it)"
    )
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    code = commit()  # the code imported now
    solver = GGIK.load_or_pretrained(a.ckpt, "cpu")
    rows = []
    for i, arm in enumerate(arms()):  # arm i: its index among all the study's arms gives its seeds (any filter)
        if (a.families and arm.family not in a.families) or (a.arms and arm.name not in a.arms):
            continue
        t0 = time.perf_counter()
        row = arm_row(solver, arm.robot, i, a.goals, a.samples)
        methods = row["methods"]
        rows.append({"arm": arm.name, "family": arm.family, "dof": arm.robot.dof, **row})
        line = "  ".join(
            f"{n}: {m['strict']:.1f}/{m['strict best']:.1f}/{m['distinct']:.2f}/{m['ms']:.1f} ms"
            for n, m in methods.items()
        )
        share = f"matched DG exact {row['matched'][0]}, of them LM strict {row['matched'][1]}"
        took = f"{time.perf_counter() - t0:.0f} s; strict %/best %/distinct/ms per goal"
        print(f"{arm.name} ({took}) {line}; {share}", flush=True)
    header = (
        f"# Exact samples per arm (code {code}; {a.goals} pose goals x {a.samples} samples or random starts per arm, "
        f"goals seeded {REPORT_SEED} + arm index; model {a.ckpt or 'shipped'}; {a.threads} thread(s); "
        f"{time.strftime('%Y-%m-%d', time.gmtime())}; times after one warm-up call per arm and method)"
    )
    notes = [
        "",
        "Through `ggik.GGIK.solve`. Strict: < 1 mm, < 0.01 rad, within the joint limits; exact: < 1 cm, < 1 deg,",
        "within the limits. The share (issue 62 item 4): of the samples that model + DG makes exact, those that",
        "model + DG + LM makes strict, matched one to one by two more (untimed) calls of the same samples, one per",
        "goal row (the solver sorts each goal's solutions); the timed calls' count ratio and the bounds their",
        "per-goal counts put on the share beside it (the script's docstring).",
    ]
    lines = provenance(command_line(), model=model_stamp(a.ckpt)) + notes
    text = markdown(rows, header + "\n\n" + "\n".join(lines), a.samples)
    print(text)
    if a.out is not None:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(a.out, text)
        atomic_write_text(a.out.with_suffix(".csv"), csv_text(rows, a.goals, a.samples))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
