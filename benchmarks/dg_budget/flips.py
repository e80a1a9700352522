"""How many axis-reversal passes the distance-geometric projection takes (``DGConfig.flips``, issue 62 item 1): per arm
of the handedness study (its arms, its 100 pose goals per arm, its random starts: the goals the DG budget is chosen
on, ``benchmarks/dg_budget/budget.py``), the share of samples exact within the limits after 0 (one pass with the
hinges) to 4 passes, from the shipped model's 32 samples per goal and from 32 uniform random starts, and the
projection's time beside the model's raw sampling of the same goals, in one run.

Per sample: *exact in limits*, within 1 cm and 1 deg by FK of the recovered angles and within the joint limits (the
study's success and the limits); *converged*, the projection's cost (hinges included) under 1e-8 m^4. Time: the
projection's wall time per goal (angles and FK errors included) and its ratio to the raw sampling's (the model's
forward pass and angle recovery, :func:`ggik.ik.sampling.sample_joint_angles`, timed on the same goals in this run).
The last lines give, per start kind, the fewest passes whose share is at least 0.95 of the 4-pass share on every
arm.

Command (from the repository root; heavy: one thread)::

    python -m benchmarks.dg_budget.flips --threads 1 --out benchmarks/dg_budget/results/flips.md
"""

from __future__ import annotations

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

__all__ = ["FLIPS", "flip_shares", "fewest_passes", "markdown", "main"]

FLIPS = (0, 1, 2, 3, 4)  #: the passes measured
KINDS = ("model", "random")


def flip_shares(graph: RobotGraph, points: torch.Tensor, goals, cfg: DGConfig) -> dict[str, list[float]]:
    """Per number of passes of :data:`FLIPS`: the shares of the samples ``points`` (P, S, N, 3) exact in limits and
    converged, and the projection's ms per goal (``cfg`` with its ``flips`` replaced)."""
    out: dict[str, list[float]] = {"exact in limits": [], "converged": [], "ms": []}
    for f in FLIPS:
        t0 = time.perf_counter()
        res = dg_refine(graph, points, goals, replace(cfg, flips=f))
        out["ms"].append(1e3 * (time.perf_counter() - t0) / points.shape[0])
        exact = (res.pos_err < POS_TOL) & (res.rot_err < ROT_TOL) & res.within_limits
        out["exact in limits"].append(float(exact.double().mean()))
        out["converged"].append(float((res.cost < CONVERGED).double().mean()))
    return out


def fewest_passes(rows: list[dict], kind: str, ratio: float = 0.95) -> int | None:
    """The fewest passes of :data:`FLIPS` whose exact-in-limits share is at least ``ratio`` of the last's on every
    arm."""
    for i, f in enumerate(FLIPS):
        if all(r[kind]["exact in limits"][i] >= ratio * r[kind]["exact in limits"][-1] for r in rows):
            return f
    return None


def markdown(rows: list[dict], header: str) -> str:
    """Per start kind: exact in limits [%] and the time ratio to raw sampling per number of passes, per arm."""
    parts = [header, ""]
    for kind in KINDS:
        parts.append(f"## {kind} starts: exact in limits [%] (DG time / raw sampling time), per number of passes\n")
        parts.append("| arm | family | raw ms per goal | " + " | ".join(f"{f} passes" for f in FLIPS) + " |")
        parts.append("|---|---|---|" + "---|" * len(FLIPS))
        for r in rows:
            m = r[kind]
            cells = " | ".join(f"{100 * s:.1f} ({t / r['raw ms']:.2f})" for s, t in zip(m["exact in limits"], m["ms"]))
            parts.append(f"| {r['arm']} | {r['family']} | {r['raw ms']:.1f} | {cells} |")
        parts.append("")
        parts.append(f"## {kind} starts: converged [%] (cost under {CONVERGED:g} m^4, hinges included)\n")
        parts.append("| arm | " + " | ".join(f"{f} passes" for f in FLIPS) + " |")
        parts.append("|---|" + "---|" * len(FLIPS))
        for r in rows:
            parts.append(f"| {r['arm']} | " + " | ".join(f"{100 * s:.1f}" for s in r[kind]["converged"]) + " |")
        parts.append("")
    for kind in KINDS:
        f = fewest_passes(rows, kind)
        parts.append(f"- {kind} starts: at least 0.95 of the {FLIPS[-1]}-pass share on every arm from {f} passes")
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = study_parser(__doc__.split("\n\n")[0])
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    code = commit()
    model, _ = load_model_or_shipped(a.ckpt, "cpu")
    model.eval()
    every = arms()  # the arm's index among all the study's arms seeds its goals, whatever is selected
    rows = []
    for i, arm in enumerate(every):
        if (a.families and arm.family not in a.families) or (a.arms and arm.name not in a.arms):
            continue
        robot = arm.robot
        graph = RobotGraph.from_robot(robot, model.cfg.graph)
        gen = torch.Generator().manual_seed(GOAL_SEED + i)
        goals = graph.goals(robot.fk(robot.sample_q(a.goals, gen).to(torch.float64)))
        q0 = robot.sample_q(a.goals * a.samples, gen).to(torch.float64).view(a.goals, a.samples, robot.dof)
        t0 = time.perf_counter()
        with torch.no_grad():
            raw = sample_joint_angles(model, graph, goals.in_base, a.samples, torch.Generator().manual_seed(i))
        raw_ms = 1e3 * (time.perf_counter() - t0) / a.goals
        starts = {"model": raw.points, "random": graph.realize(q0)}
        row = {"arm": arm.name, "family": arm.family, "raw ms": raw_ms}
        row.update({kind: flip_shares(graph, starts[kind], goals, DGConfig()) for kind in KINDS})
        rows.append(row)
        line = "  ".join(f"{k}: " + "/".join(f"{100 * s:.1f}" for s in row[k]["exact in limits"]) for k in KINDS)
        print(f"{arm.name} (raw {raw_ms:.1f} ms per goal) exact in limits per pass count {line}", flush=True)
    header = (
        f"# DG axis-reversal passes per arm (code {code}; {a.goals} pose goals x {a.samples} samples per arm, the "
        f"handedness study's goals; model {a.ckpt or 'shipped'}; {a.threads} thread(s); passes "
        f"{', '.join(map(str, FLIPS))}; DGConfig otherwise at its defaults)"
    )
    text = markdown(rows, header + "\n\n" + "\n".join(provenance(command_line(), model=model_stamp(a.ckpt))))
    write_table(text, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
