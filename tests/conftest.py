"""Shared fixtures of the ggik test suite.

Robot families (all float64, all deterministic):

* ``named``: the nine robots shipped in ``urdfs/`` (:func:`ggik.available_robots`);
* ``random``: >= 50 random chains of 3..10 DOF: :func:`ggik.random_robot`, :func:`ggik.randomize_links`
  of those and of the named robots (r = 0.2 and 0.4), and random modified-DH chains;
* ``hand``: hand-written URDF strings that exercise what the shipped robots do not (fixed joints in the
  middle, oblique and negative axes, continuous joints, URDF defaults, a rotated/offset tool frame,
  mimic and prismatic joints).

Tests ask for one robot at a time through the indirectly parametrised fixtures ``named_robot``,
``random_case``, ``hand_robot``, ``kin_robot`` (every robot, for kinematics) and ``graph_case`` (every
robot the GGIK graph accepts, with its :class:`ggik.RobotGraph`); each case has a readable test id.
Robots and graphs are built once per session.

Project reference material: ``../shared`` (next to the repo root; ``$GGIK_SHARED_DIR`` overrides it, e.g.
``GGIK_SHARED_DIR=/nonexistent`` runs the suite as a fresh clone sees it) holds robots.md and the original
URDFs in reference-urdfs/. It is never shipped: :func:`shared_path` skips a test with a reason when it is
absent. The golden values of robots.md that tests check (FK check poses, the standard-DH tables of the GGIK
accuracy experiment) are committed as ``tests/data/golden_fk.json`` (written by
``tests/data/make_golden_fk.py``), so the fixtures ``fk_check_values`` and ``dh_tables`` need no ../shared.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch

import ggik
from ggik import Robot, RobotGraph, random_robot, randomize_links

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # the lab (benchmarks/, not installed) for its smoke tests in tests/benchmarks/
    sys.path.insert(0, str(REPO_ROOT))
#: ../shared (project reference material, not in a clone); GGIK_SHARED_DIR overrides it.
SHARED_DIR = Path(os.environ.get("GGIK_SHARED_DIR") or REPO_ROOT.parent / "shared")
GOLDEN_DIR = REPO_ROOT / "tests" / "data"
GOLDEN_FK_JSON = GOLDEN_DIR / "golden_fk.json"

# Names of our robots -> original files in ../shared/reference-urdfs.
REFERENCE_FILES = {
    "ur10": "ur10_mod.urdf",
    "lbr_iiwa": "kuka_iiwr.urdf",
    "panda": "panda_arm.urdf",
    "schunk_lwa4d": "lwa4d.urdf",
    "schunk_lwa4p": "lwa4p.urdf",
    "kuka_lwr": "kuka_lwr.urdf",
    "irb140": "irb140.urdf",
    "kr16_2": "kr16_2.urdf",
    "puma560": "puma560_robot.urdf",
}


# ---------------------------------------------------------------------------------------------- seeding
def pytest_configure(config):
    # The suite runs thousands of tiny batched ops: one intra-op thread is faster, and on a busy 2-core
    # machine the OpenMP barriers between two threads made it several times slower.
    torch.set_num_threads(1)


# ---------------------------------------------------------------------------------------------- timing
#: Tests of other files that depend on real time (they spawn processes or threads, or run a search whose time limit can
#: end it), marked ``timing`` here at collection; the files this list leaves out mark theirs with
#: ``@pytest.mark.timing``. CI runs the ``timing`` tests again under a CPU load of its own (.ci/under_load.sh).
TIMING_ELSEWHERE: dict[str, tuple[str, ...]] = {
    "test_cli.py": ("test_python_m_ggik_cli_help",),
    "test_collision_solve.py": ("test_paths_among_obstacles_are_collision_free_or_say_where_not",),
    "test_eval_scripts.py": ("test_plot_training_answers_help",),
    "test_export.py": ("test_the_wheel_holds_every_subpackage_the_urdfs_and_the_weights",),
    "test_lm_compiled.py": (
        "test_two_threads_may_make_the_first_compiled_call_at_once",
        "test_a_numba_that_refuses_to_import_leaves_numpy_to_run",
    ),
    "test_plots.py": ("test_importing_ggik_plots_does_not_import_matplotlib",),
    "test_readme_commands.py": ("test_readme_bash_block_runs",),
    "test_training.py": ("test_ddp_two_processes",),
    "benchmarks/test_bench_scripts.py": ("test_every_script_answers_help_and_refuses_bad_numbers",),
    "benchmarks/test_obstacle_benchmark.py": ("test_bench_obstacles_tiny_run",),
    "benchmarks/test_path_suite.py": ("test_make_paths_refuses_zero_threads",),
}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` selects by marker
def pytest_collection_modifyitems(config, items):
    """Mark the tests of :data:`TIMING_ELSEWHERE` ``timing``; a name there that its file does not define is an error
    (a renamed test would lose its mark silently)."""
    tests = REPO_ROOT / "tests"
    for item in items:
        if not isinstance(item, pytest.Function) or tests not in item.path.parents:
            continue
        names = TIMING_ELSEWHERE.get(item.path.relative_to(tests).as_posix(), ())
        missing = [name for name in names if not hasattr(item.module, name)]
        if missing:
            raise pytest.UsageError(f"TIMING_ELSEWHERE in tests/conftest.py names tests {item.path} lacks: {missing}")
        if item.originalname in names:
            item.add_marker(pytest.mark.timing)


@pytest.fixture(autouse=True)
def _seed_everything():
    """Every test starts from the same global RNG state (tests should still prefer ``rng``)."""
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)


@pytest.fixture
def rng(request) -> torch.Generator:
    """A torch.Generator seeded from the test id: reproducible, but different for every test case."""
    return torch.Generator().manual_seed(zlib.crc32(request.node.nodeid.encode()))


# ---------------------------------------------------------------------------------------------- ../shared
def shared_path(*parts: str) -> Path:
    """A path inside ../shared (project material, never shipped to users); skip the test when absent."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: ../shared (project reference material) is not available here")
    return path


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared relative to the repo root; the test is skipped when it is absent."""
    return shared_path()


# ---------------------------------------------------------------------------------------------- golden values
def load_golden_generator():
    """The module tests/data/make_golden_fk.py (stdlib only), imported by path."""
    spec = importlib.util.spec_from_file_location("make_golden_fk", GOLDEN_DIR / "make_golden_fk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def golden_fk() -> dict:
    """tests/data/golden_fk.json: the golden values of robots.md, committed (no ../shared needed)."""
    return json.loads(GOLDEN_FK_JSON.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def robots_md() -> str:
    """The text of ../shared/robots.md (skip when absent); only to check golden_fk.json against it."""
    return shared_path("robots.md").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def fk_check_values(golden_fk) -> dict[str, list[tuple[list[float], list[float], list[float]]]]:
    """Our robot name -> [(q, position xyz, quaternion wxyz)] of the FK-check tables of robots.md."""
    checks = {
        name: [(c["q"], c["position"], c["quaternion_wxyz"]) for c in rows]
        for name, rows in golden_fk["fk_checks"].items()
    }
    assert set(checks) == set(REFERENCE_FILES), f"golden FK checks found for {sorted(checks)}"
    return checks


@pytest.fixture(scope="session")
def dh_tables(golden_fk) -> dict[str, tuple[list[float], list[float], list[float]]]:
    """Robot -> (a, d, alpha) of the standard-DH tables of the GGIK accuracy experiment in robots.md."""
    tables = {name: (t["a"], t["d"], t["alpha"]) for name, t in golden_fk["dh_tables"].items()}
    for name, (a, d, alpha) in tables.items():
        assert len(a) == len(d) == len(alpha), name
    return tables


# ---------------------------------------------------------------------------------------------- hand-written URDFs
def _urdf(name: str, links: list[str], joints: str) -> str:
    body = "\n".join(f'  <link name="{link}"/>' for link in links)
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n{joints}\n</robot>\n'


def _joint(name, jtype, parent, child, xyz=None, rpy=None, axis=None, limit=(-2.5, 2.5), extra=""):
    """One <joint>; xyz/rpy/axis None leave the element (or attribute) out, limit None too."""
    parts = [f'  <joint name="{name}" type="{jtype}">']
    if xyz is not None or rpy is not None:
        attrs = "".join(f' {k}="{v}"' for k, v in (("xyz", xyz), ("rpy", rpy)) if v is not None)
        parts.append(f"    <origin{attrs}/>")
    parts.append(f'    <parent link="{parent}"/>')
    parts.append(f'    <child link="{child}"/>')
    if axis is not None:
        parts.append(f'    <axis xyz="{axis}"/>')
    if limit is not None and jtype in ("revolute", "prismatic"):
        parts.append(f'    <limit lower="{limit[0]}" upper="{limit[1]}" effort="10" velocity="1"/>')
    if extra:
        parts.append(f"    {extra}")
    parts.append("  </joint>")
    return "\n".join(parts)


def _chain(name: str, specs: list[tuple]) -> str:
    """A serial chain l0 -> l1 -> ... from (joint name, type, kwargs) specs."""
    links = [f"l{i}" for i in range(len(specs) + 1)]
    joints = "\n".join(_joint(j, t, links[i], links[i + 1], **kw) for i, (j, t, kw) in enumerate(specs))
    return _urdf(name, links, joints)


MIMIC_TAG = '<mimic joint="j2" multiplier="-0.5" offset="0.1"/>'  #: j3 = -0.5 j2 + 0.1 in the "mimic" chain

HAND_URDFS: dict[str, str] = {
    # Fixed joints between actuated joints, one of them rotated; EE on a plain fixed flange.
    "fixed_middle": _chain(
        "fixed_middle",
        [
            ("j1", "revolute", dict(xyz="0 0 0.2", rpy="0 0 0", axis="0 0 1")),
            ("f1", "fixed", dict(xyz="0.05 0.02 0.1", rpy="0.4 -0.3 0.2")),
            ("j2", "revolute", dict(xyz="0 0.1 0.05", rpy="0 0 0", axis="0 1 0")),
            ("f2", "fixed", dict(xyz="0.3 0 0", rpy="0 0 0")),
            ("f3", "fixed", dict(xyz="0 0 0.1", rpy="0 0 1.0")),
            ("j3", "revolute", dict(xyz="0.1 0 0.2", rpy="0 0 0", axis="1 0 0")),
            ("j4", "revolute", dict(xyz="0.25 0 0", rpy="0 0.3 0", axis="0 0 1")),
            ("flange", "fixed", dict(xyz="0 0 0.1", rpy="0 0 0")),
        ],
    ),
    # Oblique axes (one with a negative z component), negative axes, unnormalised axis text.
    "oblique_axes": _chain(
        "oblique_axes",
        [
            ("j1", "revolute", dict(xyz="0 0 0.15", rpy="0 0 0", axis="0.3 -0.5 -0.8")),
            ("j2", "revolute", dict(xyz="0.1 0.2 0.05", rpy="0.1 0.2 0.3", axis="0 0 -1")),
            ("j3", "revolute", dict(xyz="0.3 0 0.1", rpy="-0.5 0 0.2", axis="-1 0 0")),
            ("j4", "revolute", dict(xyz="0 0.25 0", rpy="0 0.5 0", axis="0 -2 0")),
            ("j5", "revolute", dict(xyz="0.2 0 0.05", rpy="0 0 0", axis="0.6 0.8 0")),
            ("tool", "fixed", dict(xyz="0 0 0.1", rpy="0 0 0")),
        ],
    ),
    # Continuous joints (unbounded, sampled in [-pi, pi]) mixed with revolute ones.
    "continuous": _chain(
        "continuous",
        [
            ("j1", "continuous", dict(xyz="0 0 0.3", rpy="0 0 0", axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0 0.1", rpy="1.5707963267948966 0 0", axis="0 0 1", limit=(-1.9, 1.9))),
            ("j3", "continuous", dict(xyz="0.4 0 0", rpy="0 0 0", axis="0 0 1")),
            ("j4", "revolute", dict(xyz="0.3 0 0", rpy="0 1.5707963267948966 0", axis="0 0 1", limit=(-3.0, 0.5))),
            ("j5", "continuous", dict(xyz="0 0 0.1", rpy="0 -1.5707963267948966 0", axis="0 0 1")),
        ],
    ),
    # URDF defaults: a joint without <origin>, joints without <axis> (x), origins with only xyz or only rpy.
    "urdf_defaults": _chain(
        "urdf_defaults",
        [
            ("j1", "revolute", dict(axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0 0.3")),
            ("j3", "revolute", dict(rpy="0 1.2 0", axis="0 1 0")),
            ("f1", "fixed", dict()),
            ("j4", "revolute", dict(xyz="0.2 0 0.1", axis="0 0 1")),
            ("j5", "revolute", dict(xyz="0 0 0.15", rpy="0.3 0 0")),
            ("f2", "fixed", dict(xyz="0.05 0 0")),
        ],
    ),
    # The EE frame is rotated and offset from the last joint axis.
    "tool_frame": _chain(
        "tool_frame",
        [
            ("j1", "revolute", dict(xyz="0 0 0.25", rpy="0 0 0", axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0 0.1", rpy="0 0 0", axis="0 1 0")),
            ("j3", "revolute", dict(xyz="0 0 0.4", rpy="0 0 0", axis="0 1 0")),
            ("j4", "revolute", dict(xyz="0.35 0 0", rpy="0 0 0", axis="1 0 0")),
            ("j5", "revolute", dict(xyz="0.05 0 0", rpy="0 0 0", axis="0 1 0")),
            ("j6", "revolute", dict(xyz="0.08 0 0", rpy="0 0 0", axis="1 0 0")),
            ("tool", "fixed", dict(xyz="0.1 -0.05 0.2", rpy="0.3 -0.7 1.1")),
        ],
    ),
    # The chain ends at the child of an actuated joint with an oblique axis (no fixed flange).
    "no_flange": _chain(
        "no_flange",
        [
            ("j1", "revolute", dict(xyz="0 0 0.2", rpy="0 0 0", axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0.1 0", rpy="0 0 0", axis="0 1 0")),
            ("j3", "revolute", dict(xyz="0.3 0 0.1", rpy="0 0 0.4", axis="0 1 0")),
            ("j4", "revolute", dict(xyz="0.2 0 0", rpy="0 0 0", axis="0.5 0.5 0.7071067811865476")),
        ],
    ),
    # A mimic joint (follows j2 with multiplier -0.5 and offset 0.1): fine for FK, refused by the graph.
    "mimic": _chain(
        "mimic",
        [
            ("j1", "revolute", dict(xyz="0 0 0.2", rpy="0 0 0", axis="0 0 1")),
            ("j2", "revolute", dict(xyz="0 0.1 0", rpy="0 0 0", axis="0 1 0")),
            ("j3", "revolute", dict(xyz="0.3 0 0", rpy="0 0 0", axis="0 1 0", extra=MIMIC_TAG)),
            ("j4", "revolute", dict(xyz="0.25 0 0.05", rpy="0 0 0", axis="1 0 0")),
            ("j5", "revolute", dict(xyz="0.1 0 0", rpy="0 0 0", axis="0 0 1")),
            ("tool", "fixed", dict(xyz="0 0 0.08", rpy="0 0 0")),
        ],
    ),
    # A prismatic joint (a telescoping link along an oblique axis): lock it before building a graph.
    "prismatic": _chain(
        "prismatic",
        [
            ("j1", "revolute", dict(xyz="0 0 0.2", rpy="0 0 0", axis="0 0 1")),
            ("slide", "prismatic", dict(xyz="0 0 0.1", rpy="0 0 0", axis="0.6 0 0.8", limit=(0.0, 0.4))),
            ("j2", "revolute", dict(xyz="0 0 0.1", rpy="0 0 0", axis="0 1 0")),
            ("j3", "revolute", dict(xyz="0.3 0 0", rpy="0 0 0", axis="1 0 0")),
            ("j4", "revolute", dict(xyz="0.1 0 0.05", rpy="0 0 0", axis="0 0 1")),
        ],
    ),
}

#: Hand chains whose unlocked form the GGIK graph refuses.
HAND_NOT_GRAPHABLE = ("mimic", "prismatic")
#: Locked variants of those (hand chain, values) that the graph accepts.
HAND_LOCKED = {"mimic-locked": ("mimic", {"j2": 0.4}), "prismatic-locked": ("prismatic", {"slide": 0.25})}


# ---------------------------------------------------------------------------------------------- random robots
def _random_specs() -> list[tuple[str, tuple]]:
    """(id, recipe) of the random robots; recipes are built lazily by :func:`build_robot`."""
    specs = []
    for dof in range(3, 11):
        for k in range(4):
            specs.append((f"rand{dof}-s{k}", ("random", dof, 100 * dof + k)))
    for dof, k in [(3, 0), (4, 1), (5, 2), (6, 3), (7, 0), (8, 1), (9, 2), (10, 3)]:
        specs.append((f"rand{dof}-s{k}~0.3", ("relink", f"rand{dof}-s{k}", 0.3, 7000 + dof)))
    for name in ggik.available_robots():
        for r in (0.2, 0.4):
            specs.append((f"{name}~{r}", ("relink", name, r, zlib.crc32(f"{name}{r}".encode()))))
    for dof in (3, 5, 6, 7, 9, 10):
        specs.append((f"mdh{dof}", ("mdh", dof, 500 + dof)))
    return specs


RANDOM_SPECS = dict(_random_specs())
NAMED_IDS = tuple(ggik.available_robots())
HAND_IDS = tuple(HAND_URDFS)
GRAPH_HAND_IDS = tuple(h for h in HAND_IDS if h not in HAND_NOT_GRAPHABLE) + tuple(HAND_LOCKED)
KIN_IDS = NAMED_IDS + tuple(RANDOM_SPECS) + HAND_IDS + tuple(HAND_LOCKED)
GRAPH_IDS = NAMED_IDS + tuple(RANDOM_SPECS) + GRAPH_HAND_IDS

_ROBOTS: dict[str, Robot] = {}
_GRAPHS: dict[str, RobotGraph] = {}


def _random_mdh(dof: int, seed: int) -> Robot:
    """A random modified-DH chain: lengths in [-0.4, 0.4] m, twists from {0, +-pi/2, pi} or uniform."""
    g = torch.Generator().manual_seed(seed)
    u = lambda *s: torch.rand(*s, generator=g, dtype=torch.float64)  # noqa: E731
    choices = torch.tensor([0.0, math.pi / 2, -math.pi / 2, math.pi, 0.7, -1.1], dtype=torch.float64)
    alpha = choices[torch.randint(0, len(choices), (dof,), generator=g)]
    alpha[1:][alpha[1:] == 0.0] = math.pi / 2  # no two consecutive parallel axes without an offset
    a = 0.8 * u(dof) - 0.4
    a[0] = 0.0
    d = 0.8 * u(dof) - 0.4
    theta = 2 * math.pi * u(dof) - math.pi
    return Robot.from_dh(a.tolist(), d.tolist(), alpha.tolist(), theta.tolist(), modified=True, name=f"mdh{dof}")


def build_robot(case_id: str) -> Robot:
    """The robot of a case id (cached for the session)."""
    if case_id in _ROBOTS:
        return _ROBOTS[case_id]
    if case_id in NAMED_IDS:
        robot = Robot.from_name(case_id)
    elif case_id in HAND_URDFS:
        robot = Robot.from_urdf(HAND_URDFS[case_id])
    elif case_id in HAND_LOCKED:
        base, values = HAND_LOCKED[case_id]
        robot = build_robot(base).lock(values)
    elif case_id in RANDOM_SPECS:
        kind, *args = RANDOM_SPECS[case_id]
        if kind == "random":
            dof, seed = args
            robot = random_robot(dof, torch.Generator().manual_seed(seed), name=case_id)
        elif kind == "relink":
            source, r, seed = args
            robot = randomize_links(build_robot(source), r, torch.Generator().manual_seed(seed))
        else:
            robot = _random_mdh(*args)
    else:
        raise KeyError(case_id)
    _ROBOTS[case_id] = robot
    return robot


def build_graph(case_id: str) -> RobotGraph:
    if case_id not in _GRAPHS:
        _GRAPHS[case_id] = RobotGraph.from_robot(build_robot(case_id))
    return _GRAPHS[case_id]


# ---------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def robot_names() -> list[str]:
    """Names of the shipped robots."""
    return list(NAMED_IDS)


@pytest.fixture(scope="session")
def random_robots() -> dict[str, Robot]:
    """>= 50 deterministic random robots of 3..10 DOF, by id."""
    robots = {case_id: build_robot(case_id) for case_id in RANDOM_SPECS}
    assert len(robots) >= 50 and {r.dof for r in robots.values()} >= set(range(3, 11))
    return robots


_PARAMETRISED = {
    "named_robot": NAMED_IDS,
    "random_case": tuple(RANDOM_SPECS),
    "hand_robot": HAND_IDS,
    "kin_robot": KIN_IDS,
    "graph_case": GRAPH_IDS,
}


def pytest_generate_tests(metafunc):
    for fixture, ids in _PARAMETRISED.items():
        if fixture in metafunc.fixturenames:
            metafunc.parametrize(fixture, ids, ids=list(ids), indirect=True)


@pytest.fixture
def named_robot(request) -> Robot:
    return build_robot(request.param)


@pytest.fixture
def random_case(request) -> Robot:
    return build_robot(request.param)


@pytest.fixture
def hand_robot(request) -> Robot:
    return build_robot(request.param)


@pytest.fixture
def kin_robot(request) -> Robot:
    """Every robot of the suite: named, random, hand-written (mimic, prismatic, locked variants)."""
    return build_robot(request.param)


@pytest.fixture
def graph_case(request) -> tuple[Robot, RobotGraph]:
    """Every robot the GGIK graph accepts, with its graph."""
    return build_robot(request.param), build_graph(request.param)


def orthogonal(gen: torch.Generator, det: float) -> torch.Tensor:
    """A random 3x3 orthogonal matrix with determinant ``det`` (+1 rotation, -1 reflection)."""
    Q, R = torch.linalg.qr(torch.randn(3, 3, generator=gen, dtype=torch.float64))
    Q = Q * torch.sign(torch.diagonal(R))[None, :]
    if torch.linalg.det(Q) * det < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


# ---------------------------------------------------------------------------------------------- models
@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> str:
    """``last.pt`` of 3 steps of ``train/configs/tiny.yaml`` (trained on panda + random 5/6-DOF robots); read-only."""
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer
    from ggik.typed_config import from_dict, load_yaml

    run = tmp_path_factory.mktemp("tiny_run")
    cfg = from_dict(TrainConfig, {**load_yaml(str(REPO_ROOT / "train/configs/tiny.yaml")), "steps": 3})
    Trainer(cfg, run, progress=False).train()
    return str(run / "last.pt")
