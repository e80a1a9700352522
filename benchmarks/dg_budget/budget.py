"""How many Gauss-Newton steps the distance-geometric projection needs (issue 62, item 2): per arm of the handedness
study (``benchmarks/handedness``: its arms, its goals), the share of samples converged after 5, 10, 15, 20, 25 and 30
steps, from the shipped model's samples and from uniform random starts (the strategy "random" with ``refine="dg"``).

Each budget is a run of its own (``DGConfig(iterations=k)``, the defaults otherwise: volumes and joint limits on,
samples done at ``DGConfig.tol`` leave the batch; ``--limits-after K`` and ``--no-limits`` change the limits). Per
sample, two criteria:

* **converged**: the projection's own cost under :data:`benchmarks.handedness.study.CONVERGED` (1e-8 m^4; distance,
  volume and limit residuals alike), the handedness study's definition;
* **exact**: the recovered angles within 1 cm and 1 deg of the goal (the study's success), limits aside;
* **exact in limits**: exact and within the joint limits.

The tables give each share and its ratio to the 30-step share, and the projection's time per goal; the last lines,
per start kind, the smallest budget whose ratio is at least 0.95 (model) / 0.9 (random) on every arm, for each
criterion.

Command (from the repository root; heavy: under the lock, one thread)::

    python -m benchmarks.dg_budget.budget --threads 1 \
        --out benchmarks/dg_budget/results/budget.md
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import torch

from benchmarks.dg_budget.common import commit, study_parser, write_table
from benchmarks.handedness.study import CONVERGED, GOAL_SEED, POS_TOL, ROT_TOL, arms
from ggik import RobotGraph
from ggik.checkpoint import load_model_or_shipped
from ggik.evaluation.report import command_line, model_stamp, provenance
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.sampling import sample_joint_angles

__all__ = ["STEPS", "arm_shares", "smallest_budget", "main"]

STEPS = (5, 10, 15, 20, 25, 30)  #: the budgets measured
KINDS = ("model", "random")  #: the start kinds
CRITERIA = ("converged", "exact", "exact in limits")
TIME = "ms per goal"  #: the projection's wall time per goal (angles and FK errors included), this run


def arm_shares(
    graph: RobotGraph, points: torch.Tensor, goals, steps: tuple[int, ...], cfg: DGConfig
) -> dict[str, list[float]]:
    """Per criterion, the share of the samples ``points`` (P, S, N, 3) that meet it after each budget of ``steps``
    (``cfg`` with its ``iterations`` replaced)."""
    out: dict[str, list[float]] = {c: [] for c in (*CRITERIA, TIME)}
    for k in steps:
        t0 = time.perf_counter()
        res = dg_refine(graph, points, goals, replace(cfg, iterations=k))
        out[TIME].append(1e3 * (time.perf_counter() - t0) / points.shape[0])
        exact = (res.pos_err < POS_TOL) & (res.rot_err < ROT_TOL)
        out["converged"].append(float((res.cost < CONVERGED).double().mean()))
        out["exact"].append(float(exact.double().mean()))
        out["exact in limits"].append(float((exact & res.within_limits).double().mean()))
    return out


def smallest_budget(rows: list[dict], kind: str, criterion: str, ratio: float) -> int | None:
    """The smallest budget of :data:`STEPS` whose share is at least ``ratio`` times the 30-step share on every arm."""
    for i, k in enumerate(STEPS):
        if all(r[kind][criterion][i] >= ratio * r[kind][criterion][-1] for r in rows):
            return k
    return None


def _cell(share: float, full: float) -> str:
    ratio = share / full if full > 0 else math.nan
    return f"{100 * share:.1f} ({ratio:.2f})"


def markdown(rows: list[dict], header: str) -> str:
    """One table per start kind and criterion: per arm the share at each budget (its ratio to 30 steps)."""
    parts = [header, ""]
    for kind in KINDS:
        for criterion in CRITERIA:
            parts.append(f"## {kind} starts, {criterion} [%] (ratio to 30 steps)\n")
            parts.append("| arm | family | " + " | ".join(f"{k} steps" for k in STEPS) + " |")
            parts.append("|---|---|" + "---|" * len(STEPS))
            for r in rows:
                shares = r[kind][criterion]
                cells = " | ".join(_cell(s, shares[-1]) for s in shares)
                parts.append(f"| {r['arm']} | {r['family']} | {cells} |")
            parts.append("")
        parts.append(f"## {kind} starts, {TIME} (this run, other jobs on the machine)\n")
        parts.append("| arm | " + " | ".join(f"{k} steps" for k in STEPS) + " |")
        parts.append("|---|" + "---|" * len(STEPS))
        for r in rows:
            parts.append(f"| {r['arm']} | " + " | ".join(f"{t:.0f}" for t in r[kind][TIME]) + " |")
        parts.append("")
    for kind, ratio in (("model", 0.95), ("random", 0.9)):
        for criterion in CRITERIA:
            k = smallest_budget(rows, kind, criterion, ratio)
            line = f"at least {ratio} of the 30-step share on every arm from {k} steps"
            parts.append(f"- {kind} starts, {criterion}: {line}")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = study_parser(__doc__.split("\n\n")[0])
    p.add_argument("--limits-after", type=int, default=None, help="DGConfig.limits_after (default: its default)")
    p.add_argument("--no-limits", action="store_true", help="DGConfig.limits False")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    code = commit()  # the code imported now
    cfg = DGConfig(limits=not a.no_limits)
    if a.limits_after is not None:
        cfg = replace(cfg, limits_after=a.limits_after)
    model, _ = load_model_or_shipped(a.ckpt, "cpu")
    model.eval()
    chosen = arms(tuple(a.families)) if a.families else arms()
    rows = []
    for i, arm in enumerate(chosen):  # the study's goals and random starts: arm i draws from GOAL_SEED + i
        if a.arms and arm.name not in a.arms:
            continue
        t0 = time.perf_counter()
        robot = arm.robot
        graph = RobotGraph.from_robot(robot, model.cfg.graph)
        gen = torch.Generator().manual_seed(GOAL_SEED + i)
        goals = graph.goals(robot.fk(robot.sample_q(a.goals, gen).to(torch.float64)))
        q0 = robot.sample_q(a.goals * a.samples, gen).to(torch.float64).view(a.goals, a.samples, robot.dof)
        with torch.no_grad():
            raw = sample_joint_angles(model, graph, goals.in_base, a.samples, torch.Generator().manual_seed(i))
        starts = {"model": raw.points, "random": graph.realize(q0)}
        row = {"arm": arm.name, "family": arm.family}
        row.update({kind: arm_shares(graph, starts[kind], goals, STEPS, cfg) for kind in KINDS})
        rows.append(row)
        line = "  ".join(
            f"{kind} {c}: " + "/".join(f"{100 * s:.1f}" for s in row[kind][c]) for kind in KINDS for c in CRITERIA
        )
        print(f"{arm.name} ({time.perf_counter() - t0:.0f} s) {line}", flush=True)
    header = (
        f"# DG budget per arm (code {code}; {a.goals} pose goals x {a.samples} samples per arm, the handedness "
        f"study's goals; model {a.ckpt or 'shipped'}; {a.threads} thread(s); steps {', '.join(map(str, STEPS))}; "
        f"limits {'off' if a.no_limits else f'on after {cfg.limits_after} steps'})"
    )
    text = markdown(rows, header + "\n\n" + "\n".join(provenance(command_line(), model=model_stamp(a.ckpt))))
    write_table(text, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
