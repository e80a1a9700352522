"""The obstacle options of ``ggik solve`` and ``ggik path``: ``--obstacles SCENE`` and ``--margin M``."""

from __future__ import annotations

import argparse
from typing import Any

from ggik.cli.arguments import non_negative_float
from ggik.errors import GGIKError

__all__ = ["add_obstacle_args", "obstacle_options", "refuse_blocking_scene", "BLOCKING_SAMPLES"]

BLOCKING_SAMPLES = 256  #: random configurations that test whether a scene leaves the robot any room


def add_obstacle_args(parser: argparse.ArgumentParser, what: str) -> None:
    """``--obstacles`` and ``--margin`` on ``parser``; ``what`` says what must stay clear (for the help)."""
    parser.add_argument(
        "--obstacles",
        metavar="SCENE",
        help="a scene file (YAML or JSON: boxes, spheres, capsules in the base-link frame; see the README): "
        f"{what} clear of them and of the robot's own links",
    )
    parser.add_argument(
        "--margin", type=non_negative_float, metavar="M", help="with --obstacles: the clearance LM aims for [m] (0.001)"
    )


def obstacle_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments ``obstacles`` and ``collision`` of :meth:`ggik.GGIK.solve` / ``solve_path`` for the
    options (empty without ``--obstacles``; GGIKError for ``--margin`` alone, SceneError for a bad file)."""
    if args.obstacles is None:
        if args.margin is not None:
            raise GGIKError("--margin needs --obstacles")
        return {}
    from ggik.collision import CollisionConfig, Scene

    collision = CollisionConfig() if args.margin is None else CollisionConfig(margin=args.margin)
    return {"obstacles": Scene.from_file(args.obstacles), "collision": collision}


def refuse_blocking_scene(check: Any, scene_file: str, seed: int) -> None:
    """GGIKError naming the obstacle and the link when ``check``'s scene overlaps the robot in every one of
    :data:`BLOCKING_SAMPLES` random configurations (an obstacle inside the base column): said before any solving."""
    import torch

    from ggik.collision.report import obstacles_in_the_way

    blocked = obstacles_in_the_way(check, torch.Generator().manual_seed(seed), BLOCKING_SAMPLES)
    if blocked:
        raise GGIKError(
            f"--obstacles {scene_file}: the robot overlaps an obstacle in every one of {BLOCKING_SAMPLES} random "
            f"configurations ({'; '.join(blocked)}): no solution can be collision-free; move the obstacle"
        )
