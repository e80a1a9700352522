"""What one Gauss-Newton step of the DG projection costs per sample (issue 62, item 3), beside raw sampling, per arm.

Per arm: 100 pose goals (FK of uniform angles, seed ``GOAL_SEED + i``) and the shipped model's 32 samples per goal
(``sample_joint_angles``, timed: the raw sampling time). Then the same samples projected by three paths, in passes of
16 goals as ``dg_refine`` does:

* **dense**: the projection as it was before ``ggik.ik.dg_step`` (kept here as the reference): every step the dense
  normal equations of :func:`ggik.nn.distance_geometry.gauss_newton_step` (the (B, M, 3, M, 3) outer products, LU)
  and the dense cost over all node pairs;
* **sparse**: ``project_point_sets`` now (``DGConfig.compiled`` False): the known edges' structure, Cholesky, chunks
  of 64 samples;
* **compiled**: the same with ``DGConfig.compiled`` (``torch.compile`` of the normal equations and the cost; the
  first call per arm compiles, timed apart as start-up).

Per path: the microseconds per sample and step at 10 steps with no stopping tolerance (every sample takes every
step: 100 x 32 x 10 sample-steps), and the time per goal at the defaults (30 steps at most, samples stop when done),
as a ratio to the raw sampling time; and how far each path's projected points lie from the dense path's (median and
maximum over samples of the largest coordinate difference [m], after the 10 steps and at the defaults) and the share
converged at the defaults (cost < 1e-8 m^4).

Command (from the repository root; heavy: under the lock)::

    python -m benchmarks.dg_budget.step_cost --threads 1 \
        --out benchmarks/dg_budget/results/step_cost_1thread.md
    python -m benchmarks.dg_budget.step_cost --threads 1 --profile --arms panda \
        --out benchmarks/dg_budget/results/step_profile_panda.md
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch: no spinning threads on a shared machine

import argparse  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import torch  # noqa: E402

from benchmarks.dg_budget.common import commit, write_table  # noqa: E402
from benchmarks.handedness.study import GOAL_SEED  # noqa: E402
from ggik import Robot, RobotGraph  # noqa: E402
from ggik.checkpoint import load_model_or_shipped  # noqa: E402
from ggik.evaluation.report import command_line, model_stamp, provenance
from ggik.fileio import atomic_write_text  # noqa: E402
from ggik.ik.dg_limits import goal_point, limit_rows, limit_terms  # noqa: E402
from ggik.ik.dg_refine import DGConfig, _edge_mask, distance_cost, project_point_sets, volume_terms  # noqa: E402
from ggik.ik.sampling import sample_joint_angles  # noqa: E402
from ggik.nn.distance_geometry import gauss_newton_step  # noqa: E402

__all__ = ["dense_projection", "main"]

ARMS = ("panda", "lbr_iiwa", "ur10", "kr16_2")
PASS = 16  #: goals per projection call, as dg_refine
CONVERGED = 1e-8  #: [m^4] the handedness study's convergence


def dense_projection(graph: RobotGraph, points: torch.Tensor, T: torch.Tensor, cfg: DGConfig):
    """``project_point_sets`` as it was before the sparse step (code 46bdcfc, no clearance): (points, cost)."""
    goals = graph.goals(T)
    problem = graph.partial(goals.to(torch.float64))
    kg = graph.for_goal_kind(goals.kind)
    terms = volume_terms(kg, cfg.volumes)
    limits = limit_terms(kg, goals.kind, cfg.limit_margin) if cfg.limits else None
    X = points.to(torch.float64).clone()
    anchors = problem.anchor_mask
    X[:, :, anchors] = problem.known_positions[:, None, anchors]
    P, S, N, _ = X.shape
    mask = _edge_mask(problem).to(torch.float64)
    flat_sq = (problem.known_distances**2)[:, None].expand(P, S, N, N).reshape(P * S, N, N)
    dist = problem.known_distances[:, None].expand(P, S, N, N).reshape(P * S, N, N)
    known, movable = mask.expand(P * S, N, N), (~anchors).expand(P * S, N)
    volumes = None if terms is None else (terms[0].expand(P * S, -1), terms[1].expand(P * S, -1))
    w = goal_point(problem.goal)[:, None, None].expand(P, S, 1, 3).reshape(P * S, 1, 3)
    flat = X.reshape(P * S, N, 3)

    def cost_of(rows: torch.Tensor) -> torch.Tensor:
        c = distance_cost(flat[rows], flat_sq[rows], known[rows], terms)
        if limits is not None:
            c = c + 0.5 * (limit_rows(torch.cat([flat[rows], w[rows]], 1), limits)[0] ** 2).sum(-1)
        return c

    cost = cost_of(torch.arange(P * S))
    first = min(cfg.limits_after, cfg.iterations // 3)
    for k in range(cfg.iterations):
        rows = (cost > cfg.tol).nonzero()[:, 0]
        if rows.numel() == 0:
            break
        x = flat[rows]
        extra = None
        if limits is not None and k >= first:
            r, J = limit_rows(torch.cat([x, w[rows]], 1), limits)
            extra = (r, J[:, :, :N])
        vol = None if volumes is None else (volumes[0][rows], volumes[1][rows])
        damping = cfg.damping * cfg.damping_decay**-k
        step = gauss_newton_step(
            x, dist[rows], known[rows], movable[rows], damping, float("inf"), volumes=vol, extra=extra
        )
        flat[rows] = x + step
        cost[rows] = cost_of(rows)
    return flat.reshape(P, S, N, 3), cost.reshape(P, S)


def _project(path: str, graph: RobotGraph, points: torch.Tensor, T: torch.Tensor, cfg: DGConfig):
    """The samples ``points`` (P, S, N, 3) projected by ``path`` in passes of :data:`PASS` goals: (X, cost, seconds)."""
    t0 = time.perf_counter()
    parts = []
    for s in range(0, points.shape[0], PASS):
        if path == "dense":
            parts.append(dense_projection(graph, points[s : s + PASS], T[s : s + PASS], cfg))
        else:
            parts.append(project_point_sets(graph, points[s : s + PASS], T[s : s + PASS], cfg))
    dt = time.perf_counter() - t0
    return torch.cat([p[0] for p in parts]), torch.cat([p[1] for p in parts]), dt


def _samples(model, name: str, i: int, goals: int, samples: int):
    """(graph, goals (P, 4, 4), raw samples, raw sampling ms per goal) of arm ``name``, the ``i``-th."""
    robot = Robot.from_name(name)
    graph = RobotGraph.from_robot(robot, model.cfg.graph)
    gen = torch.Generator().manual_seed(GOAL_SEED + i)
    T = robot.fk(robot.sample_q(goals, gen).to(torch.float64))
    t0 = time.perf_counter()
    with torch.no_grad():
        raw = sample_joint_angles(model, graph, T, samples, torch.Generator().manual_seed(i))
    return graph, T, raw, 1e3 * (time.perf_counter() - t0) / goals


def _profile(model, a, code: str) -> int:
    """torch.profiler's operators by self CPU time, per path, for the 10-step projection of the first arm."""
    from torch.profiler import ProfilerActivity, profile

    graph, T, raw, _ = _samples(model, a.arms[0], 0, a.goals, a.samples)
    parts = [f"# DG step profile, {a.arms[0]} (code {code}; {a.goals} x {a.samples}, 10 steps, {a.threads} thread(s))"]
    parts += ["", *provenance(command_line(), model=model_stamp(None))]
    for path in ("dense", "sparse", "compiled"):
        cfg = DGConfig(compiled=path == "compiled", tol=0.0, iterations=10)
        _project(path, graph, raw.points[:PASS], T[:PASS], cfg)  # warm-up (compiles)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            dt = _project(path, graph, raw.points, T, cfg)[2]
        us = 1e6 * dt / (a.goals * a.samples * 10)
        table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12)
        parts += ["", f"## {path}: {us:.1f} us per sample-step under the profiler", "", "```", table, "```"]
    text = "\n".join(parts) + "\n"
    print(text)
    if a.out is not None:
        atomic_write_text(a.out, text)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--goals", type=int, default=100)
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--arms", nargs="*", default=list(ARMS))
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=None, help="write the table here too (Markdown)")
    p.add_argument("--profile", action="store_true", help="instead: torch.profiler's top operators per path, 10 steps")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    code = commit()
    model, _ = load_model_or_shipped(None, "cpu")
    model.eval()
    if a.profile:
        return _profile(model, a, code)
    lines = [
        f"# DG step cost per arm (code {code}; {a.goals} pose goals x {a.samples} samples, the shipped model; "
        f"{a.threads} thread(s), OMP_WAIT_POLICY={os.environ['OMP_WAIT_POLICY']}; passes of {PASS} goals)",
        "",
        *provenance(command_line(), model=model_stamp(None)),
        "",
        "| arm | raw sampling, ms per goal | path | us per sample-step (10 steps, all samples) | start-up s | "
        "defaults: ms per goal | defaults / raw | converged % | dX from dense, 10 steps: max / median [m] | "
        "dX from dense, defaults [m] |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for i, name in enumerate(a.arms):
        graph, T, raw, raw_ms = _samples(model, name, i, a.goals, a.samples)
        ref: list[torch.Tensor] = []
        for path in ("dense", "sparse", "compiled"):
            cfg = DGConfig(compiled=path == "compiled")
            start = 0.0
            if path == "compiled":  # compiles for this arm (both step kinds, the cost); timed apart
                start = _project(path, graph, raw.points[:PASS], T[:PASS], replace(cfg, tol=0.0, iterations=10))[2]
            fixed = _project(path, graph, raw.points, T, replace(cfg, tol=0.0, iterations=10))
            us = 1e6 * fixed[2] / (a.goals * a.samples * 10)
            X, cost, dt = _project(path, graph, raw.points, T, cfg)
            ms = 1e3 * dt / a.goals
            ref = ref or [fixed[0], X]
            d10, d = ((Y - R).abs().amax((-1, -2)).flatten() for Y, R in zip((fixed[0], X), ref))
            conv = 100 * float((cost < CONVERGED).double().mean())
            lines.append(
                f"| {name} | {raw_ms:.1f} | {path} | {us:.1f} | {start:.1f} | {ms:.1f} | {ms / raw_ms:.2f} | "
                f"{conv:.2f} | {float(d10.max()):.0e} / {float(d10.median()):.0e} | "
                f"{float(d.max()):.0e} / {float(d.median()):.0e} |"
            )
            print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    write_table(text, a.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
