"""``ggik eval accuracy|seeding|limits|generalisation|goals|conventions|paper|paths``: the evaluation suite, written
as Markdown + CSV (``paths``: :mod:`ggik.cli.path`)."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ggik.cli.arguments import (
    add_out_dir_arg,
    add_threads_arg,
    figures_possible,
    non_negative_int,
    positive_float,
    positive_int,
    set_threads,
)
from ggik.cli.commands import HELP
from ggik.cli.path import add_eval_paths_parser
from ggik.cli.robots import add_chain_args, resolve_robots
from ggik.evaluation.conventions_table import VARIANTS
from ggik.evaluation.paper_protocol import DEFAULT_SIZES as DEFAULT_PAPER_SIZES
from ggik.evaluation.report import Table, model_stamp
from ggik.evaluation.tables import GOAL_PROTOCOLS
from ggik.graph.conventions import GRAPH_CONVENTIONS
from ggik.graph.goal_kinds import GOAL_KINDS, check_goal_kind
from ggik.kinematics import available_robots

__all__ = [
    "add_eval_parser",
    "cmd_eval",
    "cmd_eval_generalisation",
    "cmd_eval_goals",
    "cmd_eval_conventions",
    "cmd_eval_paper",
]

URDF_FILES = "every URDF file among --robots"  #: what --base/--ee apply to in these commands


def cmd_eval(args: argparse.Namespace) -> int:
    from ggik.evaluation.tables import EvalConfig, accuracy_table, limits_table, seeding_table
    from ggik.solver import GGIK

    solver = GGIK.load_or_pretrained(args.ckpt)
    robots = resolve_robots(args.robots or available_robots(), args.base, args.ee)
    cfg = EvalConfig(
        problems=args.n,
        samples=args.samples,
        seed=args.seed,
        slsqp_problems=args.slsqp_goals,
        mmd_problems=min(args.mmd_goals, args.n),
        random_starts=getattr(args, "random_starts", None),
        protocol=getattr(args, "protocol", "ours"),
    )
    set_threads(args.threads)
    tables: dict[str, Callable[..., Table]] = {
        "accuracy": accuracy_table,
        "seeding": seeding_table,
        "limits": limits_table,
    }
    make = tables[args.action]
    extra = {"figures_dir": args.out_dir} if args.action == "accuracy" and figures_possible(sys.stdout) else {}
    return _write(make(solver.model, robots, cfg, progress=not args.no_progress, **extra), args, args.action)


def _write(table: Table, args: argparse.Namespace, stem: str) -> int:
    """Write ``table`` as OUT_DIR/STEM.md and .csv with the command, seed and model of ``args``; print it; 0."""
    md, csv = table.write(
        Path(args.out_dir) / stem, command="ggik " + shlex.join(args.argv), seed=args.seed, model=model_stamp(args.ckpt)
    )
    print(md.read_text())
    print(f"wrote {md} and {csv}")
    return 0


def cmd_eval_generalisation(args: argparse.Namespace) -> int:
    from ggik.checkpoint import training_set
    from ggik.evaluation.generalisation import UnseenFamilies, generalisation_points, generalisation_table
    from ggik.evaluation.tables import EvalConfig
    from ggik.solver import GGIK

    solver = GGIK.load_or_pretrained(args.ckpt)
    training = training_set(solver.checkpoint)
    named = args.robots is not None or args.base or args.ee  # --base/--ee without --robots names no URDF: an error
    robots = resolve_robots(args.robots or [], args.base, args.ee) if named else None
    set_threads(args.threads)
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    families = UnseenFamilies(robots=robots, dofs=args.dofs, scales=args.scales, family_size=args.family_size)
    table = generalisation_table(solver.model, training, cfg, families, progress=not args.no_progress)
    out = Path(args.out_dir)
    md, csv = table.write(
        out / "generalisation", command="ggik " + shlex.join(args.argv), seed=args.seed, model=model_stamp(args.ckpt)
    )
    print(md.read_text())
    print(f"wrote {md} and {csv}")
    if args.figure and figures_possible(sys.stdout):
        from ggik.evaluation.plots import plot_generalisation

        points = [(family, dist, raw, refined) for family, _, dist, raw, refined in generalisation_points(table)]
        png = plot_generalisation(
            points,
            out / "generalisation.png",
            title=f"Success on robots outside the training set ({args.n} goals x {args.samples} samples)",
        )
        print(f"wrote {png}")
    return 0


def cmd_eval_goals(args: argparse.Namespace) -> int:
    from ggik.evaluation.goal_kind_report import write_goal_kind_report
    from ggik.evaluation.goal_kind_table import goal_kind_rows
    from ggik.evaluation.tables import EvalConfig
    from ggik.solver import GGIK

    for kind in args.kinds:
        check_goal_kind(kind)  # a bad name fails before the model is loaded
    solver = GGIK.load_or_pretrained(args.ckpt)
    robots = resolve_robots(args.robots or available_robots(), args.base, args.ee)
    set_threads(args.threads)
    rows = goal_kind_rows(
        solver.model,
        robots,
        kinds=args.kinds,
        iknet_samples=args.iknet_samples,
        refine=solver.config,
        progress=not args.no_progress,
        cfg=EvalConfig(problems=args.n, samples=args.samples, seed=args.seed),
    )
    md, csv = write_goal_kind_report(
        rows,
        args.out_dir,
        command="ggik " + shlex.join(args.argv),
        seed=args.seed,
        model=model_stamp(args.ckpt),
        refine=solver.config,
    )
    print(md.read_text())
    print(f"wrote {md} and {csv}")
    return 0


def cmd_eval_conventions(args: argparse.Namespace) -> int:
    from ggik.evaluation.conventions_table import conventions_table
    from ggik.evaluation.tables import EvalConfig
    from ggik.solver import GGIK

    solver = GGIK.load_or_pretrained(args.ckpt)
    robots = resolve_robots(args.robots or available_robots(), args.base, args.ee)
    set_threads(args.threads)
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    table = conventions_table(
        solver.model, robots, cfg, variants=args.variants, conventions=args.conventions, progress=not args.no_progress
    )
    return _write(table, args, "conventions")


def cmd_eval_paper(args: argparse.Namespace) -> int:
    from ggik.evaluation.paper_protocol import PAPER_ARMS, paper_protocol_table, sample_sizes
    from ggik.evaluation.tables import EvalConfig
    from ggik.solver import GGIK

    sizes = sample_sizes(args.samples)  # repeated sizes fail before the model is loaded
    solver = GGIK.load_or_pretrained(args.ckpt)
    robots = resolve_robots(args.robots or list(PAPER_ARMS), args.base, args.ee)
    set_threads(args.threads)
    cfg = EvalConfig(problems=args.n, samples=max(sizes), seed=args.seed, protocol="paper")
    table = paper_protocol_table(
        solver.model, robots, cfg, progress=not args.no_progress, sizes=sizes, dg=solver.dg_config
    )
    return _write(table, args, "paper_protocol")


def add_eval_parser(sub: Any) -> None:
    """``ggik eval ...`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    ev = sub.add_parser("eval", help=HELP["eval"])
    ev_sub = ev.add_subparsers(dest="action", required=True)
    for name, text in (
        ("accuracy", "paper Table 1: raw sample errors, success, limits, diversity"),
        ("seeding", "paper Table 2: LM and SLSQP from random starts vs GGIK samples"),
        ("limits", "fraction of raw samples within joint limits, per joint"),
    ):
        p = ev_sub.add_parser(name, help=text)
        p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
        p.add_argument(
            "--robots",
            nargs="*",
            help="shipped robot names, URDF files or YAML files of robots (the form of data.robots; default: all "
            "shipped robots)",
        )
        add_chain_args(p, of=URDF_FILES)
        p.add_argument("-n", "--goals", dest="n", type=positive_int, default=2000, help="goals per robot")
        p.add_argument("-s", "--samples", type=positive_int, default=32, help="samples (and random starts) per goal")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--slsqp-goals", type=non_negative_int, default=50, help="goals per robot given to SLSQP (slow)")
        p.add_argument(
            "--mmd-goals", type=positive_int, default=200, help="goals per robot used for the MMD diversity score"
        )
        if name == "accuracy":
            p.add_argument(
                "--protocol",
                choices=list(GOAL_PROTOCOLS),
                default="ours",
                help="how goals are drawn: 'ours', q uniform within the limits; 'paper', the GGIK paper's Table 1, q "
                "uniform in [-pi, pi] on every joint but the last (0), limits ignored (default: ours)",
            )
        if name == "seeding":
            p.add_argument(
                "--random-starts",
                type=positive_int,
                default=None,
                metavar="R",
                help="random starts per goal (default: -s, as many as model samples); e.g. -s 4 "
                "--random-starts 32 compares 4 model seeds with 32 random starts in one run",
            )
        add_threads_arg(p)
        figures = ", and per robot the figures accuracy_ROBOT_*.png" if name == "accuracy" else ""
        add_out_dir_arg(p, name, f"{name}.md and {name}.csv{figures}")
        p.add_argument("--no-progress", action="store_true", help="no progress bar")
        p.set_defaults(func=cmd_eval)
    p = ev_sub.add_parser(
        "generalisation", help="raw and refined success on robots outside the checkpoint's training set"
    )
    p.add_argument(
        "--ckpt", help="model file, full or weights-only (default: the shipped model); its training robots are seen"
    )
    p.add_argument(
        "--robots",
        nargs="*",
        help="unseen robots: shipped names, URDF files or YAML files of robots (default: every urdfs/ robot "
        "not in the training set; none if given without names)",
    )
    add_chain_args(p, of=URDF_FILES)
    p.add_argument(
        "--dofs", nargs="*", type=positive_int, default=[6, 7, 8], help="one family of random DH robots per DOF"
    )
    p.add_argument(
        "--scales",
        nargs="*",
        type=positive_float,
        default=[0.1, 0.2, 0.4],
        help="one family of randomize_links(training robot, r) per scale r",
    )
    p.add_argument("--family-size", type=positive_int, default=10, help="robots per random family")
    p.add_argument("-n", "--goals", dest="n", type=positive_int, default=500, help="goals per robot")
    p.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal (LM refines each)")
    p.add_argument("--seed", type=int, default=0, help="seed of goals, samples and the random robots")
    p.add_argument("--figure", action="store_true", help="also write OUT_DIR/generalisation.png (success vs distance)")
    add_threads_arg(p)
    add_out_dir_arg(p, "generalisation", "generalisation.md and .csv (and generalisation.png with --figure)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval_generalisation)
    p = ev_sub.add_parser(
        "goals", help="raw and refined IK per goal kind (pose, position+axis, position), IKNet protocol, diversity"
    )
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument(
        "--robots",
        nargs="*",
        help="shipped robot names, URDF files or YAML files of robots (the form of data.robots; default: all "
        "shipped robots)",
    )
    add_chain_args(p, of=URDF_FILES)
    p.add_argument(
        "--kinds",
        nargs="+",
        default=list(GOAL_KINDS),
        metavar="KIND",
        help=f"goal kinds, of {', '.join(GOAL_KINDS)} (default: all)",
    )
    p.add_argument(
        "-n",
        "--goals",
        dest="n",
        type=positive_int,
        default=200,
        help="goals per robot (the same configurations for every kind)",
    )
    p.add_argument("-s", "--samples", type=positive_int, default=32, help="samples (and random LM starts) per goal")
    p.add_argument(
        "--iknet-samples",
        type=positive_int,
        default=100,
        help="samples per target of the IKNet-protocol columns (position goals)",
    )
    p.add_argument("--seed", type=int, default=0)
    add_threads_arg(p)
    add_out_dir_arg(p, "goal_kinds", "goal_kinds.md and .csv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval_goals)
    p = ev_sub.add_parser(
        "conventions",
        help="raw success on the same arms written as other files (frames moved, zeros turned, base, tool), "
        "on graphs of each convention",
    )
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument(
        "--robots",
        nargs="*",
        help="shipped robot names, URDF files or YAML files of robots (the form of data.robots; default: all "
        "shipped robots)",
    )
    add_chain_args(p, of=URDF_FILES)
    p.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        choices=list(VARIANTS),
        metavar="VARIANT",
        help=f"file variants, of {', '.join(repr(v) for v in VARIANTS)} (default: all)",
    )
    p.add_argument(
        "--conventions",
        nargs="+",
        default=list(GRAPH_CONVENTIONS),
        choices=list(GRAPH_CONVENTIONS),
        help="graph conventions to sample on (default: both)",
    )
    p.add_argument("-n", "--goals", dest="n", type=positive_int, default=200, help="pose goals per robot")
    p.add_argument("-s", "--samples", type=positive_int, default=32, help="samples per goal")
    p.add_argument("--seed", type=int, default=0, help="seed of goals, samples and the files' transforms")
    add_threads_arg(p)
    add_out_dir_arg(p, "conventions", "conventions.md and .csv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval_conventions)
    add_eval_paper_parser(ev_sub)
    add_eval_paths_parser(ev_sub)


def add_eval_paper_parser(ev_sub: Any) -> None:
    """``ggik eval paper`` under ``ev_sub``, the ``add_subparsers()`` action of ``ggik eval``."""
    p = ev_sub.add_parser(
        "paper",
        help="success on the GGIK paper's own protocol (q in [-pi, pi], last joint 0, no limits; best of 32 and of 50 "
        "within 1 cm and 1 deg), raw and with the distance-geometric projection (no joint-space solver), the paper's "
        "Table 1 beside it",
    )
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument(
        "--robots",
        nargs="*",
        help="shipped robot names, URDF files or YAML files of robots (default: the paper's five arms, panda "
        "lbr_iiwa schunk_lwa4d schunk_lwa4p ur10)",
    )
    add_chain_args(p, of=URDF_FILES)
    p.add_argument("-n", "--goals", dest="n", type=positive_int, default=2000, help="goals per robot (paper: 2000)")
    p.add_argument(
        "-s",
        "--samples",
        nargs="+",
        type=positive_int,
        default=list(DEFAULT_PAPER_SIZES),
        metavar="S",
        help="sample sizes: success is the best of the first S of max(S) samples drawn once per goal (paper: 32 in "
        "its text, 50 in its caption; default: 32 50)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the goals and the samples")
    add_threads_arg(p)
    add_out_dir_arg(p, "paper_protocol", "paper_protocol.md and paper_protocol.csv")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval_paper)
