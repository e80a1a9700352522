"""``ggik robot show``, ``ggik robot collision``, ``ggik graph build`` and ``ggik graph show``: a robot's chain, its
collision model and its GGIK graph."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ggik.cli.commands import HELP
from ggik.cli.robots import add_chain_args, resolve_robot
from ggik.errors import GGIKError
from ggik.fileio import atomic_write_text
from ggik.graph import RobotGraph
from ggik.graph.conventions import GRAPH_CONVENTIONS
from ggik.kinematics import Robot, available_robots

__all__ = [
    "add_robot_parser",
    "add_graph_parser",
    "cmd_robot_show",
    "cmd_robot_collision",
    "cmd_graph_build",
    "cmd_graph_show",
]


def graph_status(robot: Robot) -> str:
    """One line: the robot's GGIK graph, or why the graph cannot represent the chain."""
    try:
        graph = RobotGraph.from_robot(robot)
    except GGIKError as exc:
        return f"GGIK graph: this chain cannot be represented: {exc}"
    return f"GGIK graph: {graph!r}"


def handedness_status(robot: Robot) -> str | None:
    """One line: the skew links of the robot's canonical graph (the same in every file of the arm) with their signed
    volumes, and k, the number of skew links, with the 2^k distance-equal realizations of every configuration
    (:mod:`ggik.graph.handedness`); None when the chain has no graph."""
    try:
        graph = RobotGraph.from_robot(robot, "canonical")
    except GGIKError:
        return None
    k = len(graph.skew_link_names)
    if not k:
        return "handedness: no skew link (consecutive axes meet or are parallel): the distances fix every configuration"
    volumes = graph.link_volumes[graph.skew_links].tolist()
    links = ", ".join(f"{name} (V = {v:+.4g} m^3)" for name, v in zip(graph.skew_link_names, volumes))
    return (
        f"handedness: {k} skew link{'s' if k > 1 else ''} (axes that neither meet nor are parallel), 2^{k} = {2**k} "
        f"distance-equal realizations of every configuration, one of them the arm: {links}"
    )


def cmd_robot_show(args: argparse.Namespace) -> int:
    from ggik.collision import CollisionModel

    robot = resolve_robot(args.robot, args.base, args.ee)
    print(robot.describe())
    print(graph_status(robot))
    handedness = handedness_status(robot)
    if handedness is not None:
        print(handedness)
    try:
        print(CollisionModel.from_robot(robot).describe())
    except GGIKError as exc:  # a chain with no geometry to check: the rest of the report still stands
        print(f"collision model: none ({exc})")
    return 0


def cmd_robot_collision(args: argparse.Namespace) -> int:
    """The collision model ggik uses for the robot (or the one ``--collision`` / ``--srdf`` make), as a collision file
    (``--out``, else on stdout) and its left-out pairs as an SRDF (``--srdf-out``)."""
    from ggik.collision import CollisionConfig
    from ggik.collision.collision_file import collision_text
    from ggik.collision.srdf import write_srdf

    robot = resolve_robot(args.robot, args.base, args.ee)
    if args.fit_meshes:
        from ggik.collision import CollisionModel, MeshFitConfig

        if args.collision is not None:
            raise GGIKError("--fit-meshes builds the model from the URDF's meshes: it takes no --collision FILE")
        fit = MeshFitConfig(max_capsules=args.max_capsules, padding=args.padding, attach=tuple(args.attach))
        model = CollisionModel.from_meshes(robot, srdf=args.srdf, fit=fit)
    else:
        model = CollisionConfig(model_file=args.collision, srdf=args.srdf).collision_model(robot)
    if args.out is None and args.srdf_out is None:
        if args.fit_meshes:  # the per-link report beside the file, which goes to stdout
            print(model.describe(), file=sys.stderr)
        sys.stdout.write(collision_text(model))
        return 0
    print(model.describe())
    if args.out is not None:
        print(f"wrote {model.to_file(args.out)}")
    if args.srdf_out is not None:
        path, notes = write_srdf(model, robot, args.srdf_out)
        for note in notes:
            print(f"note: {note}")
        print(f"wrote {path}")
    return 0


def cmd_graph_build(args: argparse.Namespace) -> int:
    specs = available_robots() if args.all else args.robots
    if not specs:
        raise GGIKError("name at least one URDF or robot, or pass --all")
    out = Path(args.output) if args.output else None
    to_dir = out is not None and (len(specs) > 1 or args.all or out.is_dir())
    for spec in specs:
        robot = resolve_robot(spec, args.base, args.ee)
        text = RobotGraph.from_robot(robot, args.convention).to_json()
        if out is None:
            sys.stdout.write(text)
        else:
            target = out / f"{robot.name}.json" if to_dir else out
            atomic_write_text(target, text)
            print(f"wrote {target}")
    return 0


def cmd_graph_show(args: argparse.Namespace) -> int:
    robot = resolve_robot(args.robot, args.base, args.ee)
    graph = RobotGraph.from_robot(robot, args.convention)
    info = graph.to_dict()
    print(repr(graph))
    print(
        f"graph frame F0 in {robot.base_link}: translation {[round(v, 6) for v in graph.T_base_graph[:3, 3].tolist()]}"
    )
    print(f"{'node':>5} {'type':>5} {'anchor':>6}  home position in F0 [m]")
    for node in info["nodes"]:
        print(f"{node['name']:>5} {node['type']:>5} {str(node['anchor']):>6}  {node['home']}")
    print("known edges:")
    for kind in ("base", "structure", "bounded", "anchor_goal"):
        edges = [e for e in info["known_edges"] if e["kind"] == kind]
        listed = ", ".join(f"{e['u']}-{e['v']}" + ("" if e["length"] is None else f"={e['length']:.4f}") for e in edges)
        print(f"  {kind} ({len(edges)}): {listed}")
    return 0


def add_robot_parser(sub: Any) -> None:
    """``ggik robot show`` and ``ggik robot collision`` under ``sub``, the ``add_subparsers()`` action of ``ggik``."""
    robot = sub.add_parser("robot", help=HELP["robot"]).add_subparsers(dest="action", required=True)
    p = robot.add_parser("show", help="print the kinematic chain of a URDF or shipped robot")
    p.add_argument("robot", help="URDF file or shipped robot name")
    add_chain_args(p)
    p.set_defaults(func=cmd_robot_show)
    p = robot.add_parser(
        "collision",
        help="write the collision model ggik uses (capsules and spheres per link, self-collision pairs) to edit",
        description="Write the robot's collision model as ggik builds it (from the URDF's collision primitives and "
        "meshes, else a capsule per link segment; self-collision pairs found at random configurations) as a "
        "collision file to edit and pass back with --collision FILE, and its left-out pairs as an SRDF. Without "
        "--out or --srdf-out the file goes to stdout.",
    )
    p.add_argument("robot", help="URDF file or shipped robot name")
    add_chain_args(p)
    p.add_argument("--out", metavar="FILE", help="write the collision file (YAML) here")
    p.add_argument(
        "--srdf-out",
        metavar="FILE",
        help="write the self-collision pairs left out as an SRDF (<disable_collisions>; links fewer than two moving "
        "joints apart as Adjacent)",
    )
    p.add_argument("--collision", metavar="FILE", help="start from this collision file instead (checked, rewritten)")
    p.add_argument("--srdf", metavar="FILE", help="take the self-collision pairs to leave out from this SRDF")
    p.add_argument(
        "--fit-meshes",
        action="store_true",
        help="fit capsules to each link's meshes (its collision meshes, else its visual ones; the URDF's mesh files "
        "must be found): the report per link (vertices covered, volume added) is printed and kept in the file's "
        "source fields; a link without usable meshes keeps its segment capsule, with a note",
    )
    p.add_argument(
        "--max-capsules", type=int, choices=(1, 2), default=2, help="with --fit-meshes: capsules per link at most"
    )
    p.add_argument(
        "--padding",
        type=float,
        default=0.0,
        metavar="M",
        help="with --fit-meshes: [m] added to every fitted radius (default 0: the capsules just cover the meshes)",
    )
    p.add_argument(
        "--attach",
        nargs="+",
        default=[],
        metavar="LINK",
        help="with --fit-meshes: links off the chain to fit too, fixed to the chain link they hang from with the "
        "joints between at zero (e.g. a mobile manipulator's head)",
    )
    p.set_defaults(func=cmd_robot_collision)


def add_convention_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--convention",
        choices=GRAPH_CONVENTIONS,
        default="frames",
        help="graph convention: 'frames' (the file's joint frames, the models v1-v9) or 'canonical' (the joint axes "
        "alone: every file of an arm gives the same graph); default frames",
    )


def add_graph_parser(sub: Any) -> None:
    """``ggik graph build`` and ``ggik graph show``."""
    graph = sub.add_parser("graph", help=HELP["graph"]).add_subparsers(dest="action", required=True)
    p = graph.add_parser("build", help="write the graph of robots as JSON")
    p.add_argument("robots", nargs="*", help="URDF files or shipped robot names")
    p.add_argument("--all", action="store_true", help="every shipped robot")
    p.add_argument("-o", "--output", help="output file, or folder (one <robot>.json each); default stdout")
    add_convention_arg(p)
    add_chain_args(p)
    p.set_defaults(func=cmd_graph_build)
    p = graph.add_parser("show", help="print nodes and known edges of a robot's graph")
    p.add_argument("robot", help="URDF file or shipped robot name")
    add_convention_arg(p)
    add_chain_args(p)
    p.set_defaults(func=cmd_graph_show)
