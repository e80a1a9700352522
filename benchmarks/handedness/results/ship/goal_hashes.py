"""Hashes of the goals of `ggik eval accuracy`, `conventions` and `generalisation` (seed 0, the ship tables' sizes)
under the ggik on the path, to check that two codes draw the same goals (ship_decision.GOAL_CHANGES). Run it with a
checkout of each code first on the path, from the repository root (it reads v10's training set):

    OLD=$(mktemp -d) && git archive 4ead48c | tar -x -C "$OLD" && ln -s ../urdfs "$OLD/ggik/urdfs"
    PYTHONPATH="$OLD" python benchmarks/handedness/results/ship/goal_hashes.py
    python benchmarks/handedness/results/ship/goal_hashes.py
"""

import hashlib
import inspect

import torch

from ggik import rng
from ggik.checkpoint import training_set
from ggik.evaluation import conventions_table as C
from ggik.evaluation import generalisation as G
from ggik.evaluation import tables as T
from ggik.evaluation.report import code_version
from ggik.kinematics import Robot
from ggik.kinematics.robot import available_robots
from ggik.rng import step_generator


def digest(items) -> str:
    """sha256 prefix of goal poses (4, 4) [m], rounded to 1e-12."""
    h = hashlib.sha256()
    for name, pose in items:
        h.update(name.encode() + pose.to(torch.float64).numpy().round(12).tobytes())
    return h.hexdigest()[:12]


robots = [Robot.from_name(n) for n in available_robots()]
groups = T.evaluation_problems(robots, T.EvalConfig(problems=200, samples=32, seed=0))
print(code_version())
print("accuracy (200 goals, seed 0):", digest((r.name, g) for r, _, g in groups))
print(
    "conventions (200 goals, seed 0):",
    digest((f"{r.name}/{v}", C.file_variant(r, v, 0)[1].pose_new(g)) for r, _, g in groups for v in C.VARIANTS),
)
training = training_set(torch.load("ggik/weights/ggik_default.pt", weights_only=False, map_location="cpu"))
if "spec" in inspect.signature(G._generalisation_families).parameters:
    spec = G.UnseenFamilies(robots=None, dofs=[6, 7, 8], scales=[0.1, 0.2, 0.4], family_size=5)
    families, _ = G._generalisation_families(training, 0, spec, "frames")
else:  # the signature before UnseenFamilies
    families, _ = G._generalisation_families(training, 0, None, [6, 7, 8], [0.1, 0.2, 0.4], 5, "frames")
print(
    "generalisation (100 goals, families of 5, seed 0):",
    digest(
        (f"{f.name}/{r.name}", r.fk(r.sample_q(100, step_generator(0, rng.PROBLEM_GOALS, fi, k))))
        for fi, f in enumerate(families)
        for k, r in enumerate(f.robots)
    ),
)
