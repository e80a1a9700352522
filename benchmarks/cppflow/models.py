"""CppFlow's benchmark solved five ways, one run: kept clear of CppFlow's capsules given as a collision file, of the
model ggik fits to the arm's public description (meshes and SRDF), tight, padded, and padded with sampled pairs, and
of ggik's old default; each judged by CppFlow's own checker (:func:`benchmarks.cppflow.capsules.cppflow_collision_model`
at the waypoints, with the move and accuracy rules of :mod:`benchmarks.cppflow.run_runs`).

The collision models, per robot:

* ``cppflow file``: CppFlow's capsules and skipped pairs written with :meth:`CollisionModel.to_file` and read back with
  :meth:`CollisionModel.from_file`, as a user who has such capsules passes them (``--collision FILE``). A file
  cannot hold CppFlow's pairs of links one moving joint apart (ggik never checks those; the table's notes name them);
* ``fitted``: :meth:`CollisionModel.from_meshes` of the arm's public description. The Panda's is example-robot-data's
  (a test extra: ``pip install example-robot-data``), its collision meshes and its SRDF (link names as CppFlow's
  URDF); the fitted file is written (to a temporary folder, the SRDF's pairs as its ``skip_pairs``) and read back
  for CppFlow's Panda. The Fetch's public description is the fetch_ros repository (not on PyPI): with ``--fetch-ros
  DIR`` (a copy of it) its fetch_description meshes and fetch_moveit_config SRDF are fitted alike, the head (off the
  arm's chain) attached to the torso with its joints at zero as CppFlow's model has it; without, the URDF
  of CppFlow's Fetch names meshes that are not shipped here, so its links keep their segment capsules (the model
  says so). With an SRDF, the pairs in contact as capsules at every sampled configuration are left out too;
* ``fitted + padding``: the same with a padding added to every fitted radius (``--padding``; default 5 mm for the
  Panda, 1 cm for the Fetch): the tight fit covers the meshes, and CppFlow's capsules are larger than the meshes need
  (the Fetch's radii by about 1 cm over fetch_ros's collision meshes, the Panda's by up to 1 mm);
* ``fitted + padding, sampled pairs``: the padded fit without the SRDF, its self-collision pairs by ggik's sampled
  rule on the capsules (pairs never or always in contact at 2000 random configurations left out): an SRDF's
  "Never" pairs come from the meshes, and CppFlow checks some of them (the Fetch's forearm and wrist roll links),
  which its capsules can make collide;
* ``default``: :meth:`CollisionModel.from_robot` (``GGIK.collision_model``), what a user gets who passes nothing.

Every problem runs ``--reruns`` times per model, the models interleaved run by run (seeds as ``run.py``'s), so that
the machine's state weighs on them alike. Per problem and model: valid runs by CppFlow's rules, and the median
time to valid over them; the last row, over all problems: valid runs and the median time over every valid run.

Usage: ``python -m benchmarks.cppflow.models --problems all --reruns 10 --out DIR [--fetch-ros DIR]``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import statistics
import sys
import tempfile
import warnings
from pathlib import Path

from benchmarks.common.scripts import REPO, BenchmarkError, positive_float, positive_int, run_table_script
from benchmarks.cppflow.capsules import cppflow_collision_model
from benchmarks.cppflow.options import parse_problem_study, problem_names
from benchmarks.cppflow.problems import PROBLEMS, load_problem
from benchmarks.cppflow.run_runs import CPPFLOW_PATHS, RUN_COLUMNS, solve_problem
from ggik import GGIK, PathConfig, Robot
from ggik.collision import CollisionModel, MeshFitConfig
from ggik.evaluation.report import Table
from ggik.rng import step_generator

__all__ = ["MODELS", "public_panda", "collision_models", "models_table", "main"]

#: the collision models the solver keeps clear of, in table order
MODELS = ("cppflow file", "fitted", "fitted + padding", "fitted + padding, sampled pairs", "default")
DEFAULT_PADDING = {"panda": 0.005, "fetch": 0.01}  #: [m] the padded fitted model's padding per robot family
FETCH_URDF = REPO / "benchmarks" / "adapt" / "urdfs" / "fetch_formatted.urdf"
#: the Fetch's links off the arm's chain that its fitted models attach (the head, as CppFlow's model has it)
FETCH_HEAD = ("head_pan_link", "head_tilt_link")


def public_panda() -> tuple[Path, Path]:
    """(URDF, SRDF) of the Panda in example-robot-data, the installed package's files; BenchmarkError where it is not
    installed."""
    try:
        files = importlib.metadata.files("example-robot-data") or []
    except importlib.metadata.PackageNotFoundError:
        raise BenchmarkError("example-robot-data is not installed: pip install example-robot-data") from None
    found = {str(f).replace("\\", "/").split("robots/panda_description/", 1)[-1]: f for f in files}
    if "urdf/panda.urdf" not in found or "srdf/panda.srdf" not in found:
        raise BenchmarkError("example-robot-data has no robots/panda_description/urdf/panda.urdf and srdf/panda.srdf")
    return Path(str(found["urdf/panda.urdf"].locate())), Path(str(found["srdf/panda.srdf"].locate()))


def cppflow_file_model(robot: Robot, family: str, path: Path) -> tuple[CollisionModel, list[str]]:
    """CppFlow's capsules and self-collision pairs (:func:`cppflow_collision_model`) written as a collision file
    (``path``: its pairs as ``skip_pairs``) and read back; and a note naming the pairs CppFlow
    checks that a collision file cannot (links one moving joint apart, never candidates in ggik)."""
    theirs = cppflow_collision_model(robot, family)
    caps = [
        (int(theirs.link[c]), theirs.a[c].numpy(), theirs.b[c].numpy(), float(theirs.radius[c]), theirs.source[c])
        for c in range(len(theirs.source))
    ]
    model = CollisionModel.from_capsules(robot, caps)  # the same capsules, every candidate pair
    checked = {(min(i, j), max(i, j)) for i, j in theirs.self_pairs.tolist()}
    candidates = {(i, j) for i, j in model.self_pairs.tolist()}
    model.skip_pairs(sorted(candidates - checked), "jrl ignores it", "CppFlow's robot library")
    model.to_file(path)
    missing = [f"{theirs.source[i]} - {theirs.source[j]}" for i, j in sorted(checked - candidates)]
    notes = [
        f"{family}, cppflow file: pairs CppFlow checks that ggik never does (one moving joint apart): {m}"
        for m in missing
    ]
    return CollisionModel.from_file(path, robot), notes


def fetch_ros_files(fetch_ros: Path) -> tuple[Path, Path]:
    """(URDF, SRDF) of the Fetch in a copy of the public fetch_ros repository; BenchmarkError where they are not."""
    urdf = fetch_ros / "fetch_description" / "robots" / "fetch.urdf"
    srdf = fetch_ros / "fetch_moveit_config" / "config" / "fetch.srdf"
    for path in (urdf, srdf):
        if not path.is_file():
            raise BenchmarkError(f"--fetch-ros {fetch_ros}: no {path.relative_to(fetch_ros)}")
    return urdf, srdf


def collision_models(
    robot: Robot, key: str, folder: Path, fetch_ros: Path | None = None, padding: float = 0.01
) -> tuple[dict[str, CollisionModel], list[str]]:
    """The models (:data:`MODELS`) of a problem's ``robot`` (``key``: "panda", "fetch" or "fetch_arm"), their files
    written to ``folder`` (``KEY_cppflow.yaml``, ``KEY_fitted.yaml``, ``KEY_padded.yaml``); and notes on how they were
    made (the pairs the CppFlow file cannot hold, the links the fitted model guesses). The Fetch's fitted model reads
    the meshes and SRDF of ``fetch_ros`` (a copy of that public repository) where given; ``padding`` [m]: the padded
    model's."""
    family = "panda" if key == "panda" else "fetch"
    models = {"cppflow file": cppflow_file_model(robot, family, folder / f"{key}_cppflow.yaml")}
    notes = models["cppflow file"][1]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name, pad, use_srdf in (
            ("fitted", 0.0, True),
            ("fitted + padding", padding, True),
            ("fitted + padding, sampled pairs", padding, False),
        ):
            if family == "panda" or fetch_ros is not None:
                urdf, srdf = public_panda() if family == "panda" else fetch_ros_files(Path(fetch_ros))
                arm = Robot.from_urdf(urdf, robot.base_link, robot.ee_link)
                config = MeshFitConfig(padding=pad, attach=() if family == "panda" else FETCH_HEAD)
                fit = CollisionModel.from_meshes(arm, srdf=srdf if use_srdf else None, fit=config)
                path = fit.to_file(folder / f"{key}_{name.replace(' ', '_').replace(',', '')}.yaml")
                model = CollisionModel.from_file(path, robot)  # the fit's pairs: the file's skip_pairs
                notes += [f"{key}, {name}: {n}" for n in fit.notes if "SRDF" not in n]  # not the SRDF's path
            else:
                model = CollisionModel.from_meshes(robot, urdf=FETCH_URDF, fit=MeshFitConfig(padding=pad))
            models[name] = (model, [])
    notes += list(dict.fromkeys(f"{key}, fitted: {w.message}" for w in caught))
    models["default"] = (CollisionModel.from_robot(robot), [])
    return {m: models[m][0] for m in MODELS}, notes


def models_table(args: argparse.Namespace, solver: GGIK, names: list[str], folder: Path) -> Table:
    """The table of the module docstring for problems ``names`` (``args``: time_limit [s], reruns, seed, progress);
    the fitted files go to ``folder``."""
    from tqdm import tqdm

    names = problem_names(names)
    config = PathConfig(time_limit=args.time_limit)
    columns = ["problem"]
    for m in MODELS:
        columns += [f"{m}: valid runs (CppFlow's rules)", f"{m}: median time to valid [s]"]
    table = Table(
        f"CppFlow's benchmark, {len(MODELS)} collision models ({args.reruns} runs each, {args.time_limit:g} s limit)",
        columns,
    )
    warm = load_problem(names[0])
    solver.solve_path(warm.robot, warm.poses[:5], PathConfig(samples=0, max_rounds=1))
    valid, time_to_valid = RUN_COLUMNS.index("valid (CppFlow's capsules)"), RUN_COLUMNS.index("time to valid [s]")
    every: dict[str, list[float]] = {m: [] for m in MODELS}
    n_valid = dict.fromkeys(MODELS, 0)
    cache: dict[str, tuple[dict[str, CollisionModel], list[str]]] = {}
    for name in tqdm(names, desc="problems", disable=not args.progress, dynamic_ncols=True):
        index, problem = list(PROBLEMS).index(name), load_problem(name)
        key = name.split("__")[0]
        if key not in cache:
            padding = (getattr(args, "padding", None) or DEFAULT_PADDING)["panda" if key == "panda" else "fetch"]
            cache[key] = collision_models(problem.robot, key, folder, getattr(args, "fetch_ros", None), padding)
            table.notes += cache[key][1]
        models = cache[key][0]
        runs: dict[str, list] = {m: [] for m in MODELS}
        for run in range(args.reruns):
            for m in MODELS:
                g = step_generator(args.seed, CPPFLOW_PATHS, index, run)
                runs[m].append(solve_problem(solver, problem, config, g, models[m]))
        row: list = [name]
        for m in MODELS:
            ok = [r for r in runs[m] if r[valid] == "yes"]
            times = sorted(t for t in (r[time_to_valid] for r in ok) if math.isfinite(t))
            every[m] += times
            n_valid[m] += len(ok)
            row += [f"{len(ok)}/{len(runs[m])}", statistics.median(times) if times else math.nan]
        table.add(*row)
    last: list = ["all"]
    for m in MODELS:
        last += [f"{n_valid[m]}/{len(names) * args.reruns}", statistics.median(every[m]) if every[m] else math.nan]
    table.add(*last)
    base = statistics.median(every["cppflow file"]) if every["cppflow file"] else math.nan
    for m in MODELS[1:]:
        if every[m] and math.isfinite(base):
            table.notes.append(f"median time to valid, {m} / cppflow file: {statistics.median(every[m]) / base:.2f}x")
    table.notes.append(
        "valid: CppFlow's checker (its capsules and skipped pairs at the waypoints, 0.1 mm / 0.1 deg, limits, 7 deg "
        "(2 cm) per step); time to valid: the solver's own verdict with the model it kept clear of (it also checks "
        "the motions between waypoints)"
    )
    return table


def _paddings(text: str) -> dict[str, float]:
    """``panda=M,fetch=M`` as {family: padding [m]} (argparse type; both families required)."""
    try:
        out = {k.strip(): float(v) for k, v in (item.split("=") for item in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected panda=M,fetch=M (metres)") from None
    if set(out) != set(DEFAULT_PADDING) or not all(math.isfinite(v) and v >= 0 for v in out.values()):
        raise argparse.ArgumentTypeError(f"{text!r}: expected panda=M,fetch=M, lengths >= 0 (metres)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=positive_float, default=10.0, help="[s] per problem (PathConfig.time_limit)")
    ap.add_argument("--reruns", type=positive_int, default=1, help="runs per problem and model, each its own seed")
    ap.add_argument(
        "--fetch-ros",
        metavar="DIR",
        default=None,
        help="a copy of the public fetch_ros repository (fetch_description's meshes and URDF, fetch_moveit_config's "
        "SRDF): the Fetch's fitted model reads them (without it the Fetch's links keep their segment capsules)",
    )
    ap.add_argument(
        "--padding",
        type=_paddings,
        default=DEFAULT_PADDING,
        metavar="panda=M,fetch=M",
        help="[m] the padded fitted models' padding per robot family (default panda=0.005,fetch=0.01)",
    )
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args, names, out = parse_problem_study(ap, argv, "models", "all")

    def table(command: str) -> Table:
        with tempfile.TemporaryDirectory(prefix="cppflow_models_") as folder:  # the collision files, read back
            return models_table(args, GGIK.load(args.ckpt), names, Path(folder))

    return run_table_script(__file__, argv, args.seed, table, args.ckpt, out)


if __name__ == "__main__":
    sys.exit(main())
