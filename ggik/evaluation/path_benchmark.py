"""The path-following benchmark (``ggik eval paths``): every path of the suite (:mod:`ggik.evaluation.path_suite`)
solved by every method in the same process, each valid trajectory checked by FK.

Methods:

* **GGIK path**: :func:`ggik.path.solve_path` with the model: S samples per start waypoint (plus random starts),
  continuation, search and trajectory LM (what ``GGIK.solve_path`` does);
* **random starts + continuation**: the same without the model (random-start LM candidates, the same search and
  refinement);
* **random candidates, no continuation**: 32 random-start tracks per round refined at every waypoint in one
  batched LM call (no continuation), the same search and refinement: what the search alone makes of
  incoherent candidates;
* **sequential LM**: LM warm-started from the previous waypoint, ``chains`` parallel chains from random starts
  (:func:`ggik.evaluation.path_baselines.sequential_lm`).

Per path and method: valid (0.1 mm, 0.1 deg, within limits, no joint move above 7 deg), the time to the first
valid trajectory and the total time (wall, this process), the largest pose errors, mjac, the trajectory length
(sum of joint-space step norms), candidates refined and rounds. Each method runs once untimed on the first
waypoints of a robot's first path before it is timed (one-off costs). A summary table aggregates per DOF and
method. Figures (``figures``): per path the GGIK trajectory (joint values and the EE path), and every failed
trajectory of another method.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import torch

from ggik import rng
from ggik.evaluation.path_baselines import sequential_lm
from ggik.evaluation.path_suite import PathSuiteError, load_path, read_suite
from ggik.evaluation.report import Table, model_stamp
from ggik.kinematics.robot import Robot
from ggik.nn.cvae import GGIKModel
from ggik.path import PathConfig, PathResult, solve_path
from ggik.rng import step_generator

__all__ = ["METHODS", "PathBenchmark", "run_method", "run_path_benchmark", "COLUMNS"]

METHODS = ("GGIK path", "random starts + continuation", "random candidates, no continuation", "sequential LM")
COLUMNS = [
    "path",
    "robot",
    "dof",
    "waypoints",
    "method",
    "valid",
    "first valid [s]",
    "total [s]",
    "max pos err [mm]",
    "max rot err [deg]",
    "mjac [deg]",
    "within limits",
    "length [rad]",
    "candidates",
    "rounds",
]


@dataclass
class PathBenchmark:
    """Options of ``ggik eval paths``."""

    suite: str = "eval/paths"  #: folder of suite.json and the path CSVs
    robots: list[str] | None = None  #: only these robots (None: all in the suite)
    paths: list[str] | None = None  #: only these path names (None: all)
    methods: list[str] = field(default_factory=lambda: list(METHODS))  #: subset of METHODS
    samples: int = 8  #: model samples per start waypoint (GGIK path)
    chains: int = 32  #: chains of the sequential-LM baseline (and random tracks of the no-continuation method)
    time_limit: float = 10.0  #: [s] per path and method
    seed: int = 0  #: seeds every random draw (stream rng.PATH_BENCH)
    figures: bool = True  #: write OUT_DIR/paths/NAME.png
    progress: bool = True  #: tqdm progress bar
    ckpt: str | None = None  #: checkpoint (None: the shipped model)

    def check(self) -> None:
        """:class:`~ggik.evaluation.path_suite.PathSuiteError` (a GGIKError) naming the first bad option."""
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise PathSuiteError(f"unknown methods {unknown}; choose from {list(METHODS)}")
        if self.samples < 1 or self.chains < 1 or not self.time_limit > 0:
            raise PathSuiteError(
                f"--samples and --chains must be >= 1 and --time-limit positive, got {self.samples}, "
                f"{self.chains}, {self.time_limit}"
            )


def run_method(
    method: str,
    robot: Robot,
    poses: torch.Tensor,
    q_start: torch.Tensor | None,
    opts: PathBenchmark,
    gen: torch.Generator,
    model: GGIKModel | None = None,
) -> PathResult:
    """One method of :data:`METHODS` on one path (poses (T, 4, 4), base-link frame)."""
    if method == "sequential LM":
        return sequential_lm(robot, poses, opts.chains, PathConfig(), gen, q_start)
    if method == "GGIK path":
        cfg = PathConfig(samples=opts.samples, time_limit=opts.time_limit)
        return solve_path(robot, poses, cfg, model, q_start, gen)
    if method == "random starts + continuation":
        return solve_path(
            robot, poses, PathConfig(samples=0, time_limit=opts.time_limit), q_start=q_start, generator=gen
        )
    if method == "random candidates, no continuation":
        cfg = PathConfig(samples=0, continuation=False, random_tracks=opts.chains, time_limit=opts.time_limit)
        return solve_path(robot, poses, cfg, q_start=q_start, generator=gen)
    raise ValueError(f"unknown method {method!r}; methods: {list(METHODS)}")


def _slug(method: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in method.lower()).strip("_")


def run_path_benchmark(opts: PathBenchmark, out_dir: str | Path, command: str) -> Table:
    """Run the benchmark; write ``out_dir``/paths.md + .csv (one row per path and method), paths_summary.md + .csv
    and, with figures, ``out_dir``/paths/*.png. Returns the per-path table."""
    from tqdm import tqdm

    from ggik.checkpoint import load_model_or_shipped

    opts.check()
    out = Path(out_dir)
    entries = [
        e
        for e in read_suite(opts.suite)
        if (opts.robots is None or e.robot in opts.robots) and (opts.paths is None or e.name in opts.paths)
    ]
    if not entries:
        raise PathSuiteError(f"no path of {opts.suite}/suite.json matches robots={opts.robots} paths={opts.paths}")
    model = load_model_or_shipped(opts.ckpt)[0] if "GGIK path" in opts.methods else None
    table = Table(
        f"Path following on {len(entries)} paths: valid = 0.1 mm, 0.1 deg, within limits, joint moves <= 7 deg",
        list(COLUMNS),
    )
    warm: set[tuple[str, str]] = set()  # (robot, method) pairs already run once
    bar = tqdm(total=len(entries) * len(opts.methods), desc="paths", disable=not opts.progress, dynamic_ncols=True)
    for p_index, entry in enumerate(entries):
        robot, poses, q_start = load_path(opts.suite, entry)
        for m_index, method in enumerate(opts.methods):
            bar.set_postfix_str(f"{entry.name}: {method}")
            if (entry.robot, method) not in warm:  # one-off costs (first calls, caches) stay out of the timings
                run_method(method, robot, poses[:5], None, opts, torch.Generator().manual_seed(0), model)
                warm.add((entry.robot, method))
            gen = step_generator(opts.seed, rng.PATH_BENCH, p_index, m_index)
            res = run_method(method, robot, poses, q_start, opts, gen, model)
            table.add(
                entry.name,
                robot.name,
                robot.dof,
                int(poses.shape[0]),
                method,
                res.valid,
                res.time_to_valid,
                res.total_time,
                1e3 * float(res.pos_err.max()),
                math.degrees(float(res.rot_err.max())),
                res.mjac,
                res.within_limits,
                res.length,
                res.candidates,
                res.rounds,
            )
            if opts.figures and (m_index == 0 or not res.valid):
                from ggik.evaluation.path_plots import plot_path

                name = entry.name if m_index == 0 else f"{entry.name}_{_slug(method)}"
                plot_path(
                    robot, poses, res.q, out / "paths" / f"{name}.png", title=f"{entry.name}: {method}", valid=res.valid
                )
            bar.update(1)
    bar.close()
    table.notes += [
        f"Suite: {opts.suite}/suite.json (python -m benchmarks.path_suite.make_paths); every trajectory checked by FK.",
        "first valid: wall time until the first valid trajectory (n/a: none within the limits); sequential LM knows "
        "only at "
        "its end. total: wall time of the whole call. Each method ran once untimed per robot first.",
        f"GGIK path: model {opts.ckpt or 'ggik/weights/ggik_default.pt'}, {opts.samples} samples of "
        f"{PathConfig().starts} "
        f"start seeds per start waypoint (the rest random); time limit {opts.time_limit:g} s per path. random "
        "candidates, "
        f"no continuation: {opts.chains} tracks per round. sequential LM: {opts.chains} chains from random starts "
        "(from "
        "q_start when the path has one).",
        "length: sum over moves of the joint-space norm [rad]; mjac: the largest revolute joint move [deg].",
    ]
    stamp = model_stamp(opts.ckpt) if model is not None else None
    table.write(out / "paths", command=command, seed=opts.seed, model=stamp)
    summary_table(table).write(out / "paths_summary", command=command, seed=opts.seed, model=stamp)
    return table


def summary_table(table: Table) -> Table:
    """Per DOF and method: paths valid, median and largest time to the first valid trajectory, paths valid within
    2 s, median mjac; from the rows of the per-path table."""
    col = {c: i for i, c in enumerate(table.columns)}
    groups: dict[tuple[int, str], list[list]] = {}
    for row in table.rows:
        groups.setdefault((row[col["dof"]], row[col["method"]]), []).append(row)
    out = Table(
        "Path following, per DOF and method",
        [
            "dof",
            "method",
            "paths",
            "valid",
            "valid within 2 s",
            "median first valid [s]",
            "max first valid [s]",
            "median mjac [deg]",
        ],
    )
    for (dof, method), rows in sorted(groups.items()):
        first = [r[col["first valid [s]"]] for r in rows if r[col["valid"]]]
        out.add(
            dof,
            method,
            len(rows),
            len(first),
            sum(t <= 2.0 for t in first),
            statistics.median(first) if first else math.nan,
            max(first) if first else math.nan,
            statistics.median(r[col["mjac [deg]"]] for r in rows),
        )
    out.notes.append("first valid over the valid paths only; see paths.md for every path.")
    return out
