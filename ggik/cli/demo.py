"""``ggik demo``: the shipped model on two training robots and an unseen random one, printed as tables and
drawn as a figure (the experiment itself is :mod:`ggik.evaluation.demo`)."""

from __future__ import annotations

import argparse
import importlib.util
import math
import time
from typing import Any

import torch

from ggik.checkpoint import PRETRAINED_CHECKPOINT
from ggik.cli.arguments import add_threads_arg, positive_int, set_threads
from ggik.cli.commands import HELP
from ggik.errors import GGIKError
from ggik.evaluation.demo import DemoCase, figure_panels, run_demo
from ggik.solver import GGIK

__all__ = ["add_demo_parser", "cmd_demo", "print_case"]


def print_case(case: DemoCase) -> None:
    """Print one robot of the demo: counts, timings and the listed solutions of every goal."""
    robot, raw, lm, B = case.subject.robot, case.raw, case.lm, case.goals
    print(f"{robot.name} ({robot.dof} DOF, {case.subject.seen})")
    print(
        f"  raw samples: {1e3 * case.raw_seconds:.0f} ms for {B} goals; a sample within 1 cm and 1 deg on "
        f"{case.raw_goals_paper}/{B} goals, within the strict tolerances on {case.raw_goals_strict}/{B}"
    )
    print(
        f"  LM-refined:  {1e3 * case.lm_seconds:.0f} ms (sampling included); "
        f"{case.lm_goals_solved}/{B} goals solved, {case.lm_samples_solved}/{lm.success.numel()} samples, "
        f"distinct solutions per goal: {case.distinct_per_goal}"
    )
    print(
        f"  {'goal':>4} {'#':>2} | {'raw: pos [mm]':>13} {'rot [deg]':>9} | "
        f"{'LM: pos [mm]':>12} {'rot [deg]':>9} {'ok':>3} | LM solution q [rad]"
    )
    for b in range(B):
        ir, il = case.listed_raw[b], case.listed_lm[b]
        for r in range(max(len(ir), len(il))):
            left = (
                f"{1e3 * raw.pos_err[b, ir[r]].item():13.1f} {math.degrees(raw.rot_err[b, ir[r]].item()):9.2f}"
                if r < len(ir)
                else f"{'':13} {'':9}"
            )
            if r < len(il):
                k = il[r]
                q = ", ".join(f"{v:5.2f}" for v in lm.q[b, k].tolist())
                right = (
                    f"{1e3 * lm.pos_err[b, k].item():12.3f} {math.degrees(lm.rot_err[b, k].item()):9.3f} "
                    f"{'yes' if lm.success[b, k] else 'no':>3} | [{q}]"
                )
            else:
                right = f"{'':12} {'':9} {'':3} |"
            print(f"  {b if r == 0 else '':>4} {r + 1:>2} | {left} | {right}")
    print()


def cmd_demo(args: argparse.Namespace) -> int:
    if args.out is not None and not args.out.lower().endswith(".png"):
        raise GGIKError(f"--out: the figure is written as PNG, the path must end in .png, got {args.out!r}")
    set_threads(args.threads)
    t_start = time.perf_counter()
    solver = GGIK.pretrained()
    ck, tol = solver.checkpoint, solver.config
    print(
        f"ggik demo: the shipped model (ggik/weights/{PRETRAINED_CHECKPOINT}, "
        f"{solver.model.num_parameters():,} parameters, trained {ck.get('step', '?')} steps "
        f"on {ck.get('examples', 0):,} examples)"
    )
    print(
        f"{args.goals} reachable goals per robot (FK of random joint values within the limits, seed {args.seed}), "
        f"{args.samples} samples per goal, raw and refined with LM from every sample; "
        f"{torch.get_num_threads()} CPU thread(s)"
    )
    print(
        f"raw success: a sample within 1 cm and 1 deg (the GGIK paper's criterion); strict success (LM, 'ok'): within "
        f"{1e3 * tol.pos_tol:g} mm and {math.degrees(tol.rot_tol):.2f} deg; solutions listed best first, "
        "each at least 0.1 rad (joint-space norm) from those above it\n"
    )
    cases = []
    for case in run_demo(solver, args.goals, args.samples, args.show, args.seed):
        print_case(case)
        cases.append(case)
    if args.out is None:
        print("no figure (--out FILE.png draws the solutions)")
    elif importlib.util.find_spec("matplotlib") is None:
        print("no figure: matplotlib is not installed (pip install 'ggik[plot]', which `make demo` does)")
    else:
        from ggik.evaluation.plots import plot_solution_grid

        out = plot_solution_grid(
            figure_panels(cases),
            args.out,
            ncols=len(cases),
            title=f"ggik demo (seed {args.seed}): best distinct raw samples (top) and LM-refined solutions (bottom)",
        )
        print(f"figure: {out}")
    print(f"total time {time.perf_counter() - t_start:.1f} s")
    return 0


def add_demo_parser(sub: Any) -> None:
    """``ggik demo`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser("demo", help=HELP["demo"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-n", "--goals", type=positive_int, default=3, help="goals per robot")
    p.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal")
    p.add_argument("--show", type=positive_int, default=3, help="distinct solutions listed per goal")
    p.add_argument(
        "--out", metavar="FILE.png", help="draw the solutions into this PNG file (needs matplotlib; default: no figure)"
    )
    add_threads_arg(p, default=1, note="; batches this small run fastest on one, above all on a busy machine")
    p.set_defaults(func=cmd_demo)
