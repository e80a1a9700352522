"""The argument forms of :meth:`ggik.GGIK.solve` and :meth:`ggik.GGIK.solve_path` before :class:`SolveConfig`, turned
into it with a DeprecationWarning (kept for one release).

Before: ``solve(robot, T_goal, num_samples=32, refine=None, generator=None, pos_tol=None, rot_tol=None, goal="pose")``
and ``solve_path(robot, poses, num_samples=None, q_start=None, time_limit=None, pos_tol=None, rot_tol=None,
config=PathConfig(...), generator=None)``, every argument also positional. Now: ``solve(robot, T_goal,
SolveConfig(samples=..., refine=..., pos_tol=..., rot_tol=...), generator=..., goal=...)`` and ``solve_path(robot,
poses, SolveConfig(samples=..., time_limit=..., pos_tol=..., rot_tol=...), path=PathConfig(...), q_start=...,
generator=...)``. The old forms give the same numbers for the same seed.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

from ggik.ik.path import PathConfig
from ggik.ik.solve_config import SolveConfig

__all__ = ["solve_arguments", "path_arguments"]

#: the positional order of the old signatures, after (robot, goals)
SOLVE_ORDER = ("num_samples", "refine", "generator", "pos_tol", "rot_tol", "goal")
PATH_ORDER = ("num_samples", "q_start", "time_limit", "pos_tol", "rot_tol", "config", "generator")


def _gather(
    method: str,
    order: tuple[str, ...],
    config: Any,
    legacy: tuple,
    deprecated: dict[str, Any],
    keywords: dict[str, Any],
) -> dict[str, Any]:
    """The old arguments by name: ``config`` when it is not a SolveConfig (the old first positional), then the
    further positionals ``legacy`` in ``order``, then the keywords ``deprecated``. TypeError as Python gives it for an
    unknown keyword, too many positionals or one argument given twice (``keywords``: the new keyword arguments
    that were passed, e.g. ``generator``, which the old positions also reach)."""
    old: dict[str, Any] = {}
    if config is not None and not isinstance(config, (SolveConfig, numbers.Real)):  # the old first option: a count
        raise TypeError(f"config must be a ggik.SolveConfig, got {type(config).__name__}")
    positional = ([] if config is None or isinstance(config, SolveConfig) else [config]) + list(legacy)
    if legacy and (config is None or isinstance(config, SolveConfig)):
        raise TypeError(
            f"GGIK.{method}() takes its options as config=SolveConfig(...); got {len(legacy)} more positional arguments"
        )
    if len(positional) > len(order):
        raise TypeError(f"GGIK.{method}() takes at most {len(order) + 3} positional arguments")
    old.update(zip(order, positional))
    for name, value in deprecated.items():
        if name not in order:
            raise TypeError(f"GGIK.{method}() got an unexpected keyword argument {name!r}")
        if name in old:
            raise TypeError(f"GGIK.{method}() got multiple values for argument {name!r}")
        old[name] = value
    for name in set(old) & set(keywords):
        raise TypeError(f"GGIK.{method}() got multiple values for argument {name!r}")
    return old


def _warn(method: str, old: dict[str, Any], new: str) -> None:
    """One DeprecationWarning per call, naming the old arguments given, attributed to the caller of ``GGIK.method``."""
    warnings.warn(
        f"GGIK.{method}: the arguments {', '.join(old)} (loose or positional options) are deprecated and will be "
        f"removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=4,
    )


def solve_arguments(
    config: Any, legacy: tuple, deprecated: dict[str, Any], generator: Any, goal: str
) -> tuple[SolveConfig, Any, str]:
    """(config, generator, goal) of a :meth:`ggik.GGIK.solve` call, old forms converted (module docstring)."""
    keywords = {"generator": generator} if generator is not None else {}
    if goal != "pose":
        keywords["goal"] = goal
    old = _gather("solve", SOLVE_ORDER, config, legacy, deprecated, keywords)
    if not old:
        return config or SolveConfig(), generator, goal
    if isinstance(config, SolveConfig):
        raise TypeError(
            f"GGIK.solve(): give config=SolveConfig(...) or the deprecated keyword arguments {', '.join(old)}, not both"
        )
    _warn(
        "solve",
        old,
        "GGIK.solve(robot, goals, SolveConfig(samples=..., refine=..., pos_tol=..., rot_tol=...), "
        "generator=..., goal=...)",
    )
    generator, goal = old.pop("generator", generator), old.pop("goal", goal)
    samples = old.pop("num_samples", 32)
    try:
        bad = int(samples) != samples or samples < 1
    except (TypeError, ValueError):
        bad = True
    if bad:
        raise ValueError(f"num_samples must be a positive integer, got {samples!r}")
    return SolveConfig(samples=int(samples), **old), generator, goal


def path_arguments(
    config: Any, legacy: tuple, deprecated: dict[str, Any], path: PathConfig | None, q_start: Any, generator: Any
) -> tuple[SolveConfig, PathConfig | None, Any, Any]:
    """(config, path, q_start, generator) of a :meth:`ggik.GGIK.solve_path` call, old forms converted: a PathConfig
    given as ``config`` is the new ``path``."""
    if isinstance(config, PathConfig):
        deprecated = {**deprecated, "config": config}
        config = None
    keywords = {n: v for n, v in (("path", path), ("q_start", q_start), ("generator", generator)) if v is not None}
    old = _gather(
        "solve_path", PATH_ORDER, config, legacy, deprecated, {**keywords, "config": path} if path else keywords
    )
    if not old:
        return config or SolveConfig(), path, q_start, generator
    if isinstance(config, SolveConfig):
        raise TypeError(
            "GGIK.solve_path(): give config=SolveConfig(...) or the deprecated keyword arguments "
            f"{', '.join(old)}, not both"
        )
    _warn(
        "solve_path",
        old,
        "GGIK.solve_path(robot, poses, SolveConfig(samples=..., time_limit=..., pos_tol=..., "
        "rot_tol=...), path=PathConfig(...), q_start=..., generator=...)",
    )
    path, q_start, generator = old.pop("config", path), old.pop("q_start", q_start), old.pop("generator", generator)
    samples = old.pop("num_samples", None)
    if samples is not None:
        try:
            bad = int(samples) != samples or samples < 0
        except (TypeError, ValueError):
            bad = True
        if bad:
            raise ValueError(f"num_samples must be a non-negative integer, got {samples!r}")
        samples = int(samples)
    return SolveConfig(samples=samples, **{k: v for k, v in old.items() if v is not None}), path, q_start, generator
