"""How many more examples the paper run needs, by its own curve: per arm of the GGIK paper's Table 1, a power law of
the failure rate against the examples the run has trained, fitted to its validation records on the paper's goals and
extrapolated to the paper's success (issue 61, "if no GPU is available").

The run (``train/checkpoints/paper``) validates on the paper's protocol since ``val.protocol=paper``
(``ggik.training.validation``: the goals of ``ggik eval paper --seed <val.seed>``); its records before that were
drawn within the limits and are left out (their ``val/protocol`` is absent or "ours"). Per arm, with ``n`` goals per
record (``val.problems_per_robot``) and success ``s`` at ``x`` examples of this run::

    log(1 - s) = log(a) + b log(x)          least squares over the records (1 - s floored at 0.5 / n)

The examples at which the law reaches the paper's failure rate ``1 - p`` are ``((1 - p) / a) ** (1 / b)`` for a
falling law (``b < 0``); for a flat or rising one there is no such point and the table says so. This is an
extrapolation far past the measured range, from 40-200 goals per point: read it as an order of magnitude. The time
it would take is given at the run's own CPU rate (the median examples/s of its CPU records) and at GPU rates given
on the command line (``--gpu-rates``: measured elsewhere, e.g. the 7.3 k examples/s an H200 logged for v11 at batch
512, train/gpu/README.md).

Command (from the repository root)::

    python -m benchmarks.paper_tables.gap --run train/checkpoints/paper --gpu-rates 7300 100000 \\
        --out benchmarks/paper_tables/results/paper_run_gap
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass
from pathlib import Path

from ggik.errors import GGIKError
from ggik.evaluation.paper_protocol import PAPER_ARMS, PAPER_TABLE1, wilson_interval
from ggik.evaluation.report import Table, model_stamp

__all__ = ["ArmCurve", "read_paper_curves", "failure_power_law", "examples_to_reach", "gap_table", "main"]

#: the length of a GPU sitting the project is lent [s] (15 minutes of device time, a few of them for start-up)
SITTING_S = 12 * 60


@dataclass
class ArmCurve:
    """One arm's validation curve on the paper's goals: examples of this run (P,), success shares (P,), goals per
    record."""

    arm: str
    examples: list[int]
    success: list[float]
    goals: int


def read_paper_curves(run: Path) -> tuple[dict[str, ArmCurve], float]:
    """Per arm of the paper's table, the run's validation records on the paper's protocol, and the median
    examples/s of its CPU training records (nan without any). GGIKError without metrics or paper records."""
    path = run / "metrics.jsonl"
    if not path.is_file():
        raise GGIKError(f"{run}: no metrics.jsonl (not a training run folder)")
    config = run / "config.yaml"
    goals = 0
    if config.is_file():
        import yaml

        goals = int(
            (yaml.safe_load(config.read_text(encoding="utf-8")) or {}).get("val", {}).get("problems_per_robot", 0)
        )
    curves: dict[str, ArmCurve] = {}
    rates: list[float] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("kind") == "train" and rec.get("device") == "cpu" and "examples_per_s" in rec:
            rates.append(float(rec["examples_per_s"]))
        if rec.get("kind") != "val" or rec.get("val/protocol") != "paper":
            continue
        for arm in PAPER_ARMS:
            key = f"val/{arm}/success"
            if key in rec:
                curve = curves.setdefault(arm, ArmCurve(arm, [], [], goals))
                curve.examples.append(int(rec["examples"]))
                curve.success.append(float(rec[key]))
    if not curves:
        raise GGIKError(f"{run}: no validation records on the paper's protocol (val.protocol=paper) of its arms")
    rates.sort()
    return curves, (rates[len(rates) // 2] if rates else math.nan)


def failure_power_law(curve: ArmCurve) -> tuple[float, float, float]:
    """(a, b, standard error of b) of the least-squares fit log(1 - s) = log(a) + b log(x) over the curve's records,
    the failure floored at half a goal (0.5 / goals; 1e-3 when the number of goals is unknown). ValueError with fewer
    than 3 records or a single example count."""
    if len(curve.examples) < 3 or len(set(curve.examples)) < 2:
        raise ValueError(f"{curve.arm}: a fit needs at least 3 records at 2 or more example counts")
    floor = 0.5 / curve.goals if curve.goals > 0 else 1e-3
    pts = [(math.log(x), math.log(max(1.0 - s, floor))) for x, s in zip(curve.examples, curve.success)]
    n = len(pts)
    mx, my = sum(x for x, _ in pts) / n, sum(y for _, y in pts) / n
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    residual = sum((y - my - b * (x - mx)) ** 2 for x, y in pts)
    return math.exp(my - b * mx), b, math.sqrt(residual / (n - 2) / sxx) if n > 2 else math.inf


def examples_to_reach(a: float, b: float, success: float) -> float:
    """The examples at which the law a x^b of the failure rate reaches ``1 - success`` (inf for a law that does not
    fall, 0 when it is already there at x = 1)."""
    if b >= 0:
        return math.inf
    return ((1.0 - success) / a) ** (1.0 / b)


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "never"
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def gap_table(curves: dict[str, ArmCurve], cpu_rate: float, gpu_rates: list[float], last: int = 3) -> Table:
    """Per arm: the latest success (mean of the ``last`` records, with the Wilson interval of their goals pooled),
    the paper's, the fitted law, the examples where it reaches the paper's success, those still needed beyond the
    run's, and the time they take at the CPU rate, in CPU hours, and at each GPU rate, in 12-minute sittings."""
    columns = ["arm", "records", "examples now", f"success, last {last} [%]", "95% interval [%]", "paper [%]",
               "failure law", "examples to the paper's", "examples still needed", "CPU time (1 core)"]  # fmt: skip
    columns += [f"sittings at {r:,.0f} ex/s" for r in gpu_rates]
    table = Table("The paper run's gap to the paper's Table 1, by its validation curve on the paper's goals", columns)
    for arm in PAPER_ARMS:
        if arm not in curves:
            continue
        c = curves[arm]
        tail = c.success[-last:]
        now = sum(tail) / len(tail)
        goals = c.goals * len(tail)
        lo, hi = wilson_interval(round(now * goals), goals) if goals else (math.nan, math.nan)
        paper = PAPER_TABLE1[arm][0]
        try:
            a, b, se = failure_power_law(c)
        except ValueError:
            a, b, se = math.nan, math.nan, math.nan
        falling = math.isfinite(b) and b + 2 * se < 0  # a trend beyond twice its standard error
        need = examples_to_reach(a, b, paper / 100) if falling else (math.inf if math.isfinite(b) else math.nan)
        if now * 100 >= paper:
            need = float(c.examples[-1])
        more = max(0.0, need - c.examples[-1]) if need == need else math.nan
        row = [arm, len(c.examples), c.examples[-1], 100 * now, f"{100 * lo:.1f}-{100 * hi:.1f}", paper,
               f"{a:.3g} x^({b:.3f} +- {se:.3f})" if math.isfinite(b) else "n/a", need, more,
               _duration(more / cpu_rate) if cpu_rate == cpu_rate and more == more else "n/a"]  # fmt: skip
        row += [f"{more / r / SITTING_S:.3g}" if more == more and math.isfinite(more) else "never" for r in gpu_rates]
        table.add(*row)
    table.notes += [
        "Records: the run's validation on the paper's goals (val.protocol=paper; the goals of `ggik eval paper --seed "
        "<val.seed>`, q in [-pi, pi], last joint 0, no limits; best of val.samples within 1 cm and 1 deg), "
        "examples counted from the start of this run (its data: the paper's).",
        "failure law: least squares of log(1 - success) on log(examples), failures floored at half a goal; examples "
        "to the paper's: where it reaches 1 - paper; an extrapolation far past the measured range, an order of "
        "magnitude at best; 'inf' where the failure rate does not fall by more than twice the slope's standard error "
        "(no trend the records can tell from noise).",
        f"CPU time at the run's median CPU rate ({cpu_rate:,.0f} examples/s, one core); sittings: "
        f"{SITTING_S // 60}-minute GPU sittings at the rates given (--gpu-rates, measured elsewhere).",
    ]
    return table


def plot_curves(curves: dict[str, ArmCurve], path: Path) -> Path:
    """Success against examples (log scale) per arm, the fitted law as a line and the paper's value dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for k, (arm, c) in enumerate(curves.items()):
        colour = f"C{k}"
        ax.plot(c.examples, [100 * s for s in c.success], "o", ms=3, color=colour, label=arm)
        try:
            a, b, _ = failure_power_law(c)
            xs = [c.examples[0] * (c.examples[-1] / c.examples[0]) ** (i / 40) for i in range(41)]
            ax.plot(xs, [100 * (1 - min(1.0, a * x**b)) for x in xs], "-", color=colour, lw=1)
        except ValueError:
            pass
        ax.axhline(PAPER_TABLE1[arm][0], color=colour, ls="--", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("examples trained in this run")
    ax.set_ylabel("raw success, paper's goals [%]")
    ax.set_title("Paper run: validation on the paper's goals (dashed: the paper's Table 1)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", default="train/checkpoints/paper", help="the run folder (metrics.jsonl, config.yaml)")
    ap.add_argument("--gpu-rates", type=float, nargs="*", default=[7300.0, 100000.0], help="examples/s on a GPU")
    ap.add_argument("--last", type=int, default=3, help="records averaged for the success now")
    ap.add_argument("--out", required=True, help="output stem folder: gap.md, gap.csv, gap.png")
    args = ap.parse_args(argv)
    if args.last < 1 or any(not r > 0 for r in args.gpu_rates):
        raise GGIKError("--last must be >= 1 and --gpu-rates > 0")
    run = Path(args.run)
    curves, cpu_rate = read_paper_curves(run)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = gap_table(curves, cpu_rate, list(args.gpu_rates), args.last)
    export = run / "export.pt"
    table.write(out / "gap", model=model_stamp(export) if export.is_file() else None)
    plot_curves(curves, out / "gap.png")
    print(table.body())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
