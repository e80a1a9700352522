"""Where path following breaks on a problem, and whether a branch through exists among dense candidates.

Per problem, with the obstacles kept clear by the collision model named (:mod:`benchmarks.cppflow.capsules` or
ggik's): (1) LM from ``starts`` uniform random configurations at every waypoint, collision-aware, as path following
refines its candidates (:func:`ggik.path.candidates.refine_tracks`): how many are valid (within 0.1 mm, 0.1 deg, the
limits, collision-free) at the worst waypoint; (2) the best path through these independent candidates
(:func:`ggik.path.search.search_path`): its largest move, in allowed moves (1 = 7 deg); (3) continuation tracks from
the distinct valid candidates of every ``every``-th waypoint in both directions (:func:`ggik.path.candidates.sweep`,
then the same LM), and the best path through them and the dense candidates together: its largest move and the
waypoint where it happens. A largest move above 1 means no candidate set found a branch through; no valid candidate
at some waypoint means no configuration is valid there (to this sampling).
"""

from __future__ import annotations

from argparse import Namespace

import numpy as np
import torch

from benchmarks.cppflow.capsules import cppflow_collision_model
from benchmarks.cppflow.problems import load_problem
from ggik import GGIK, PathConfig
from ggik.collision import Clearance
from ggik.evaluation.report import Table
from ggik.path.candidates import distinct, refine_tracks, sweep
from ggik.path.search import joint_scale, jumps, search_path
from ggik.rng import step_generator

__all__ = ["PROBE_COLUMNS", "probe_table"]

PROBE_COLUMNS = [
    "problem",
    "waypoints",
    "fewest valid candidates (of starts)",
    "at waypoint",
    "largest move, dense candidates [allowed moves]",
    "tracks",
    "largest move, tracks + dense [allowed moves]",
    "at waypoint (move onto it)",
]
CPPFLOW_PROBE = 4343  #: the seed stream of the probe


def probe_table(args: Namespace, solver: GGIK, names: list[str]) -> Table:
    """The table of the module docstring: ``args.starts`` per waypoint, tracks from every ``args.every``-th waypoint,
    obstacles kept clear by ``args.collision_model``."""
    table = Table(
        f"Candidates and continuation on CppFlow's problems ({args.starts} random starts per waypoint, tracks from "
        f"every {args.every}th waypoint, kept clear by {args.collision_model}'s collision model)",
        PROBE_COLUMNS,
    )
    cfg = PathConfig()
    for index, name in enumerate(names):
        p = load_problem(name)
        robot, T = p.robot, p.poses.shape[0]
        model = cppflow_collision_model(robot, "panda" if name.startswith("panda") else "fetch")
        if args.collision_model == "ggik":
            model = solver.collision_model(robot)
        check = Clearance(robot, model, p.scene)
        scale = joint_scale(robot, cfg.max_jump, cfg.max_jump_m)
        g = step_generator(args.seed, CPPFLOW_PROBE, index)
        seeds = robot.sample_q(T * args.starts, g).view(T, args.starts, robot.dof)
        q, ok = refine_tracks(robot, p.poses, seeds, cfg.lm_config(), clearance=check)
        counts = ok.sum(1)
        dense = search_path(q, ok, scale).bottleneck if bool(ok.any(1).all()) else float("inf")
        starts, where = [], []
        for t in range(0, T, args.every):
            keep = distinct(q[t], ok[t], cfg.sweep_tracks, scale)
            starts.append(q[t, keep])
            where += [t] * len(keep)
        q0, at = torch.cat(starts), torch.tensor(where, dtype=torch.long)
        ones = torch.ones(len(at), dtype=torch.long)
        tracks, visited = sweep(robot, p.poses, torch.cat([q0, q0]), torch.cat([at, at]), torch.cat([ones, -ones]))
        qt, okt = refine_tracks(robot, p.poses, tracks, cfg.lm_config(), visited, check)
        both_q, both_ok = torch.cat([qt, q], 1), torch.cat([okt, ok], 1)
        worst, at_worst = float("inf"), -1
        if bool(both_ok.any(1).all()):
            found = search_path(both_q, both_ok, scale)
            moves = jumps(found.q[:-1], found.q[1:], scale)
            worst, at_worst = found.bottleneck, int(np.argmax(moves)) + 1
        table.add(name, T, int(counts.min()), int(counts.argmin()), dense, 2 * len(at), worst, at_worst)
    return table
