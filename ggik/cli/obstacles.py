"""The obstacle options of ``ggik solve``, ``ggik path`` and ``ggik view``: ``--obstacles SCENE``, ``--margin M``, and
the robot's collision model: ``--collision FILE`` (a collision file, :mod:`ggik.collision.collision_file`) and
``--srdf FILE`` (its disabled pairs are not checked for self-collision, :mod:`ggik.collision.srdf`)."""

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
    parser.add_argument(
        "--collision",
        metavar="FILE",
        help="the robot's collision model from this file (YAML: capsules and spheres per link; ggik robot collision "
        "ARM --out FILE writes the one ggik uses, to edit) instead of the URDF's; without --obstacles: self-collision "
        "alone",
    )
    parser.add_argument(
        "--srdf",
        metavar="FILE",
        help="an SRDF whose <disable_collisions> link pairs are not checked for self-collision (instead of the pairs "
        "ggik finds at random configurations); without --obstacles: self-collision alone",
    )


def obstacle_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments ``obstacles`` and ``collision`` of :meth:`ggik.GGIK.solve` / ``solve_path`` for the
    options: empty without any of them; ``--margin``, ``--collision`` or ``--srdf`` without ``--obstacles`` check
    self-collision alone (a scene with no obstacles). SceneError for a bad scene file; the collision file and SRDF are
    read where the model is made."""
    if args.obstacles is None and all(getattr(args, flag) is None for flag in ("margin", "collision", "srdf")):
        return {}
    from ggik.collision import CollisionConfig, Scene

    margin = {} if args.margin is None else {"margin": args.margin}
    collision = CollisionConfig(**margin, model_file=args.collision, srdf=args.srdf)
    scene = Scene() if args.obstacles is None else Scene.from_file(args.obstacles)
    return {"obstacles": scene, "collision": collision}


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
