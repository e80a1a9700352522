"""``ggik view``: the interactive viewer in the browser (the optional extra ``ggik[view]``, :mod:`ggik.viewer`).

It prints the URL to open and serves until Ctrl-C; ``--screenshot FILE`` instead writes what a browser shows (a
headless Chromium) and exits. Bad input (an unknown robot, a missing scene file, a trajectory of another robot, a
port out of range) is reported before the server starts, as in every command: ``ggik: error: ...``, exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any

from ggik.cli.arguments import add_threads_arg, positive_int
from ggik.cli.commands import HELP
from ggik.cli.obstacles import add_obstacle_args, obstacle_options
from ggik.cli.robots import add_chain_args, add_lock_arg, check_model_chain, robot_from_options
from ggik.errors import GGIKError
from ggik.ik.solve_config import STRATEGIES
from ggik.viewer.config import GOAL_KINDS, LAYOUTS, ViewerConfig, require_viser

__all__ = ["add_view_parser", "cmd_view"]

DEFAULTS = ViewerConfig()  #: the defaults the options show


def port_number(text: str) -> int:
    """argparse type: a TCP port, 0-65535 (0: any free port)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number in 0-65535 (0: any free port), got {value}")
    return value


def _size(text: str) -> tuple[int, int]:
    width, sep, height = text.partition("x")
    if not sep or not width.isdigit() or not height.isdigit() or int(width) < 64 or int(height) < 64:
        raise argparse.ArgumentTypeError(f"expected WIDTHxHEIGHT in pixels (each >= 64), e.g. 1280x800, got {text!r}")
    return int(width), int(height)


def cmd_view(args: argparse.Namespace) -> int:
    require_viser()  # before anything is loaded: the message names pip install 'ggik[view]'
    from ggik.viewer.app import Viewer
    from ggik.viewer.panel import parse_goal
    from ggik.viewer.playback import read_trajectory

    config = ViewerConfig(
        host=args.host,
        port=args.port,
        strategy=args.strategy,
        samples=args.samples,
        refine=not args.raw,
        goal_kind=args.goal_kind,
        layout=args.layout,
        seed=args.seed,
        hide_notifications=args.screenshot is not None,
        show_collision=args.show_collision,
    )
    robot = robot_from_options(args.robot, args.urdf, args.base, args.ee, args.lock)
    trajectory = read_trajectory(robot, args.path) if args.path else None
    if trajectory is None and args.strategy != "random":
        check_model_chain(robot, f"--robot {args.robot}" if args.robot else f"--urdf {args.urdf}")
    kw = obstacle_options(args)  # SceneError for a bad or missing file; GGIKError for --margin alone
    if kw:
        kw["obstacles"].to_base(robot)  # SceneError for a frame the robot lacks, before the server starts
        if not kw["collision"].default_model:
            kw["collision"].collision_model(robot)  # CollisionFileError for a bad --collision / --srdf, the same
    goal = None
    if args.goal is not None:
        try:
            goal = parse_goal(tuple(args.goal[:3]), " ".join(map(str, args.goal[3:])))
        except ValueError as exc:
            raise GGIKError(f"--goal: {exc}") from None
    solver = None
    if trajectory is None:
        from ggik.solver import GGIK

        solver = GGIK.load_or_pretrained(args.ckpt)
    quiet = io.StringIO()  # viser's own banner: ggik prints the one URL below
    with contextlib.redirect_stdout(quiet):
        viewer = Viewer(robot, solver or args.ckpt, trajectory=trajectory, goal=goal, config=config, **kw)
    try:
        if args.port and viewer.server.get_port() != args.port:
            print(f"port {args.port} is in use: serving on port {viewer.server.get_port()}")
        if args.screenshot is not None:
            from ggik.viewer.screenshot import screenshot

            viewer.wait_idle(120.0)
            width, height = args.window
            out = screenshot(viewer.url, args.screenshot, width, height)
            print(f"wrote {out}")
            return 0
        print(f"ggik view: open {viewer.url} in a browser (Ctrl-C stops)", flush=True)
        viewer.serve_forever()
        return 0
    finally:
        with contextlib.redirect_stdout(quiet):
            viewer.close()


def add_view_parser(sub: Any) -> None:
    """``ggik view`` under ``sub``, the ``add_subparsers()`` action of the ``ggik`` parser."""
    p = sub.add_parser(
        "view",
        help=HELP["view"],
        description="An interactive 3D viewer in the browser (needs pip install 'ggik[view]'): the robot, its "
        "obstacles and a goal you drag or type; on every move the model's samples and the refined solutions are "
        "drawn, the distinct ones highlighted, with a panel of settings, timings and errors. --path plays a "
        "trajectory of ggik path back. Prints the URL to open; serves until Ctrl-C.",
    )
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file (its visual meshes are drawn where found, else capsules)")
    add_chain_args(p)
    add_lock_arg(p)
    add_obstacle_args(p, "the solutions keep the links")
    p.add_argument(
        "--path",
        metavar="TRAJ.csv",
        help="a trajectory to play back: the CSV of ggik path --out (a header of joint names, one configuration per "
        "line [rad]), drawn with its tool path",
    )
    p.add_argument(
        "--goal",
        nargs=7,
        type=float,
        metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
        help="the first goal: position [m] and unit quaternion (w x y z) in the base-link frame (default: the EE at "
        "the middle of the joint ranges)",
    )
    p.add_argument("--goal-kind", choices=GOAL_KINDS, default=DEFAULTS.goal_kind, help="(default: pose)")
    p.add_argument(
        "-s",
        "--samples",
        type=positive_int,
        default=DEFAULTS.samples,
        metavar="S",
        help=f"model samples per goal (random starts for --strategy random) (default {DEFAULTS.samples})",
    )
    p.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=DEFAULTS.strategy,
        help=f"how to solve (as ggik solve; default {DEFAULTS.strategy}: LM from every sample, so each raw sample's "
        "refinement is drawn)",
    )
    p.add_argument(
        "--show-collision",
        action="store_true",
        help="draw the robot's collision model, translucent: its capsules and spheres (those of --collision FILE, "
        "else the ones ggik makes from the URDF) on the first distinct solution or the played waypoint, red where one "
        "overlaps an obstacle or another link",
    )
    p.add_argument("--raw", action="store_true", help="start with refinement off: the model's raw samples only")
    p.add_argument("--layout", choices=LAYOUTS, default=DEFAULTS.layout, help="(default: overlay)")
    p.add_argument("--ckpt", help="model file (default: the shipped model)")
    p.add_argument("--seed", type=int, default=DEFAULTS.seed, help="seed of every solve (default 0)")
    p.add_argument(
        "--host", default=DEFAULTS.host, help=f"address to listen on (default {DEFAULTS.host}: this machine)"
    )
    p.add_argument(
        "--port",
        type=port_number,
        default=DEFAULTS.port,
        help=f"TCP port (default {DEFAULTS.port}; a busy one: the next free one; 0: any free port)",
    )
    p.add_argument(
        "--screenshot",
        metavar="FILE.png",
        help="write a screenshot of the page (headless Chromium from PATH) and exit instead of serving",
    )
    p.add_argument(
        "--window", type=_size, default=(1280, 800), metavar="WxH", help="screenshot size (default 1280x800)"
    )
    add_threads_arg(p)
    p.set_defaults(func=cmd_view)
