"""The learned baselines' other protocols, beside GGIK and LM with the same number of answers:

* table 6, the distal teacher's test sets: joint-uniform poses split by manipulability (the least and the most
  singular), unreachable targets (how far off the answer is), and trajectories (consistency from pose to pose);
* table 7, IKNet's path following: each waypoint's joints drawn within r = 0.1 rad of the previous waypoint's
  (:meth:`ggik.baselines.IKNet.sample_path`) against independent draws, LM chained along the path and GGIK's
  independent samples (raw and refined).

Trajectories and paths: ``waypoints`` poses along the FK of a straight joint-space line between two uniform
configurations (every waypoint reachable, with a smooth solution through them). A *jump* is a step of more than
:data:`JUMP` rad in any joint between consecutive waypoints (a branch switch or a flip); "median largest joint step":
over the paths, the median of each path's largest step.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import torch

from benchmarks.common.scripts import BenchmarkError
from ggik import GGIK, Robot, SolveConfig
from ggik.baselines import DistalConfig, DistalTeacher, IKNet, IKNetConfig
from ggik.errors import GGIKError
from ggik.evaluation.report import Table
from ggik.ik.refine import lm_refine
from ggik.kinematics.geometry import pose_errors

__all__ = [
    "JUMP",
    "TRACIK_TIMEOUT",
    "tracik_answers",
    "cached",
    "manipulability_sets",
    "trajectories",
    "distal_protocol_table",
    "iknet_path_table",
]

JUMP = 0.5  #: [rad] a joint step between consecutive waypoints above this is a jump
TRACIK_TIMEOUT = 0.005  #: [s] TRAC-IK's time budget per pose (its common default)
LOOSE = (0.01, 0.03)  #: [m, rad] the distal teacher's paper's loose solve threshold


def cached(kind: type, path: Path | None, robot: Robot, config: object) -> object:
    """The model saved at ``path`` when there is one (``kind.load``, refused for another robot or config), else
    ``kind.fit(robot, config)``, saved there when a path is given."""
    if path is not None and path.exists():
        model = kind.load(path)  # type: ignore[attr-defined]
        model.check(robot)
        if model.config != config:
            raise BenchmarkError(f"{path} holds a model of another config: remove it or name another --models folder")
        return model
    model = kind.fit(robot, config)  # type: ignore[attr-defined]
    if path is not None:
        model.save(path)  # type: ignore[attr-defined]
    return model


def manipulability_sets(robot: Robot, count: int, seed: int, pool: int = 20) -> dict[str, torch.Tensor]:
    """Joint-uniform test configurations split by Yoshikawa's manipulability sqrt(det(J J^T)) of the position rows:
    of ``pool`` x ``count`` uniform configurations, the ``count`` least manipulable ("near-singular") and the ``count``
    most ("non-singular"); each (count, dof)."""
    q = robot.sample_q(pool * count, torch.Generator().manual_seed(seed))
    J = robot.jacobian(q)[:, :3]
    w = torch.linalg.det(J @ J.transpose(-1, -2)).clamp(min=0).sqrt()
    order = w.argsort()
    return {"near-singular": q[order[:count]], "non-singular": q[order[-count:]]}


def trajectories(robot: Robot, count: int, waypoints: int, seed: int) -> torch.Tensor:
    """(count, waypoints, dof) joint values along straight joint-space lines between uniform configurations."""
    g = torch.Generator().manual_seed(seed)
    a, b = robot.sample_q(count, g), robot.sample_q(count, g)
    s = torch.linspace(0, 1, waypoints, dtype=torch.float64)[None, :, None]
    return a[:, None] + s * (b - a)[:, None]


def _jumps(q: torch.Tensor) -> tuple[float, float]:  # the tables' "median largest joint step", "paths with a jump"
    """For joint paths q (N, T, dof): the median over paths of the largest joint step [rad], and the share of paths
    with a jump [%]."""
    step = torch.diff(q, dim=1).abs().amax(dim=(1, 2))
    return round(float(step.median()), 3), round(100 * float((step > JUMP).float().mean()), 1)


def _chained_lm(robot: Robot, goals: torch.Tensor, kind: str, seed: int) -> torch.Tensor:
    """(N, T, dof): LM along each path of goals (N, T, 4, 4) (``kind`` "pose" or "position"), each waypoint from
    the previous answer, the first from a uniform random start."""
    q = robot.sample_q(goals.shape[0], torch.Generator().manual_seed(seed))
    out = []
    for t in range(goals.shape[1]):
        target = goals[:, t] if kind == "pose" else goals[:, t, :3, 3]
        q, _ = lm_refine(robot, target, q, kind=kind)
        out.append(q)
    return torch.stack(out, 1)


def _one_answer(solver: GGIK, robot: Robot, T: torch.Tensor, refine: str | None, goal: str = "pose") -> torch.Tensor:
    """(B, dof): GGIK's one sample per goal (``refine`` None: raw; "lm": refined by LM)."""
    res = solver.solve(robot, T, SolveConfig(samples=1, refine=refine), goal=goal,
                       generator=torch.Generator().manual_seed(0))  # fmt: skip
    return res.q[:, 0]


def _lm_random(robot: Robot, T: torch.Tensor, seed: int) -> torch.Tensor:
    """(B, dof): LM from one uniform random start per pose (its last iterate, converged or not)."""
    return lm_refine(robot, T, robot.sample_q(T.shape[0], torch.Generator().manual_seed(seed)))[0]


def tracik_answers(
    robot: Robot, seed: int, timeout: float = TRACIK_TIMEOUT
) -> Callable[[torch.Tensor], torch.Tensor] | None:
    """TRAC-IK (the ``bench`` extra's pytracik, Speed mode) as a one-answer method: answers (B, dof) for goal poses
    (B, 4, 4), each from one uniform random seed; where it finds no solution in ``timeout`` [s], the seed itself (an
    unsolved answer). None when pytracik is not importable or sees another chain than ggik."""
    try:
        from benchmarks.solvers.solver_runs import TracIK

        tracik = TracIK(robot, timeout)
    except (ImportError, GGIKError):  # not installed, or TRAC-IK reads another chain from the URDF: no row
        return None

    def answer(T: torch.Tensor) -> torch.Tensor:
        seeds = robot.sample_q(T.shape[0], torch.Generator().manual_seed(seed))
        q = torch.stack([tracik.solve(T[i], seeds[i]) for i in range(T.shape[0])])
        return torch.where(q.isnan(), seeds, q)

    return answer


def _one_answer_methods(
    robot: Robot, distal: DistalTeacher, solver: GGIK, seed: int
) -> dict[str, Callable[[torch.Tensor], torch.Tensor]]:
    """Table 6's methods: name -> answers (B, dof) for goal poses (B, 4, 4), one each (TRAC-IK where importable)."""
    methods: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "distal teacher": lambda T: distal.solve(robot, T).q[:, 0],
        "GGIK raw, 1 sample": lambda T: _one_answer(solver, robot, T, None),
        "GGIK + LM, 1 sample": lambda T: _one_answer(solver, robot, T, "lm"),
        "LM, 1 random start": lambda T: _lm_random(robot, T, seed),
    }
    tracik = tracik_answers(robot, seed)
    if tracik is not None:
        methods["TRAC-IK, 1 random seed"] = tracik
    return methods


def distal_protocol_table(robots: list[str], targets: int, steps: int, solver: GGIK, seed: int,
                          models: Path | None) -> Table:  # fmt: skip
    """Table 6 (module docstring): per robot, the distal teacher (pose goals, 100,000 training poses, ``steps``
    steps) against GGIK raw, GGIK + LM and LM from one random start, one answer per pose."""
    table = Table(
        "The distal teacher's other protocols: near-singular, non-singular, unreachable, trajectories (one answer per "
        "pose)",
        ["robot", "test set", "method", "solved 1 cm & 0.03 rad [%]", "median position error [mm]",
         "unreachable: excess distance [cm]", "median largest joint step [rad]", "paths with a jump [%]"],
    )  # fmt: skip
    for name in robots:
        robot = Robot.from_name(name)
        path = None if models is None else models / f"distal_{name}_pose_{steps}.pt"
        distal = cached(DistalTeacher, path, robot, DistalConfig(steps=steps, seed=seed))
        assert isinstance(distal, DistalTeacher)
        methods = _one_answer_methods(robot, distal, solver, seed)
        for set_name, q in manipulability_sets(robot, targets, seed + 6).items():
            T = robot.fk(q)
            for method, answer in methods.items():
                pos, rot = pose_errors(robot.fk(answer(T)), T)
                solved = 100 * float(((pos < LOOSE[0]) & (rot < LOOSE[1])).float().mean())
                table.add(name, set_name, method, round(solved, 1), round(1e3 * float(pos.median()), 2), "", "", "")
        T_far, excess_floor = _unreachable(robot, targets, seed + 7)
        for method, answer in methods.items():
            if method == "GGIK + LM, 1 sample":
                continue  # the same LM as the row below, from another start
            pos, _ = pose_errors(robot.fk(answer(T_far)), T_far)
            excess = 100 * float((pos - excess_floor).mean())
            table.add(name, "unreachable", method, 0.0, round(1e3 * float(pos.median()), 1), round(excess, 2), "", "")
        paths = trajectories(robot, max(1, targets // 10), 50, seed + 8)
        goals = robot.fk(paths)
        flat = goals.reshape(-1, 4, 4)
        answers = {method: answer(flat).reshape(paths.shape) for method, answer in methods.items()
                   if method not in ("LM, 1 random start", "TRAC-IK, 1 random seed")}  # fmt: skip
        answers["LM, chained from the previous pose"] = _chained_lm(robot, goals, "pose", seed)
        for method, q in answers.items():
            pos, rot = pose_errors(robot.fk(q), goals)
            solved = 100 * float(((pos < LOOSE[0]) & (rot < LOOSE[1])).float().mean())
            table.add(name, "trajectories, 50 poses", method, round(solved, 1), round(1e3 * float(pos.median()), 2),
                      "", *_jumps(q))  # fmt: skip
    table.notes += [
        f"{targets} poses per set: of {20 * targets} joint-uniform configurations, the {targets} of lowest and of "
        "highest manipulability sqrt(det(J_v J_v^T)). Unreachable: positions 2-3 reaches from the base in uniform "
        "directions (identity rotation); excess distance: the answer's distance from the target beyond "
        "(|target| - reach), the least any configuration can have (reach: the farthest EE position of 20,000 "
        f"uniform configurations). Trajectories: {max(1, targets // 10)} per robot of 50 poses each (module "
        f"docstring); a jump is a joint step above {JUMP} rad.",
        "distal teacher: pose goals, 100,000 training poses; GGIK: the shipped model; LM: the library's LM (1 mm, "
        "0.01 rad), last iterate when it does not converge; TRAC-IK (where pytracik is installed): Speed mode, "
        f"{1e3 * TRACIK_TIMEOUT:g} ms per pose, epsilon 1e-5, its seed counted as the answer where it finds none.",
    ]
    return table


def _unreachable(robot: Robot, count: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Goal poses (count, 4, 4) at 2-3 reaches from the base in uniform directions (identity rotation), and the least
    distance [m] any configuration can have from each, |target| - reach."""
    g = torch.Generator().manual_seed(seed)
    reach = float(robot.fk(robot.sample_q(20_000, g))[:, :3, 3].norm(dim=-1).max())
    direction = torch.randn(count, 3, generator=g, dtype=torch.float64)
    radius = reach * (2 + torch.rand(count, generator=g, dtype=torch.float64))
    T = torch.eye(4, dtype=torch.float64).repeat(count, 1, 1)
    T[:, :3, 3] = direction / direction.norm(dim=-1, keepdim=True) * radius[:, None]
    return T, radius - reach


def iknet_path_table(robots: list[str], paths: int, samples: int, steps: int, solver: GGIK, seed: int,
                     models: Path | None) -> Table:  # fmt: skip
    """Table 7 (module docstring): per robot, IKNet (position goals, ``samples`` training pairs, ``steps`` steps; the
    model of table 1 when ``models`` holds it) along ``paths`` paths of 50 positions, beside LM chained along the path
    and GGIK's one sample per waypoint (raw, and refined by LM)."""
    table = Table(
        "IKNet's path following: 50 positions per path, one answer per waypoint",
        ["robot", "method", "mean distance [cm]", "within 1 cm [%]", "within 10 cm [%]",
         "median largest joint step [rad]", "paths with a jump [%]"],
    )  # fmt: skip
    for name in robots:
        robot = Robot.from_name(name)
        path = None if models is None else models / f"iknet_{name}_position_{steps}.pt"
        model = cached(IKNet, path, robot, IKNetConfig(samples=samples, steps=steps, seed=seed))
        assert isinstance(model, IKNet)
        q_line = trajectories(robot, paths, 50, seed + 9)
        goals = robot.fk(q_line)
        g = torch.Generator().manual_seed(seed)
        answers = {
            "IKNet, within 0.1 rad of the previous waypoint": torch.stack(
                [model.sample_path(robot, goals[i, :, :3, 3], generator=g) for i in range(paths)]
            ),
            "IKNet, independent draws": model.sample(goals.reshape(-1, 4, 4), 1, g).reshape(q_line.shape),
            "LM, chained from the previous waypoint": _chained_lm(robot, goals, "position", seed),
        }
        flat = goals.reshape(-1, 4, 4)[:, :3, 3]
        for method, refine in (("GGIK raw, independent samples", None), ("GGIK + LM, independent samples", "lm")):
            answers[method] = _one_answer(solver, robot, flat, refine, "position").reshape(q_line.shape)
        for method, q in answers.items():
            d = 100 * (robot.fk(q)[..., :3, 3] - goals[..., :3, 3]).norm(dim=-1)
            table.add(name, method, round(float(d.mean()), 2), round(100 * float((d < 1).float().mean()), 1),
                      round(100 * float((d < 10).float().mean()), 1), *_jumps(q))  # fmt: skip
    table.notes += [
        f"{paths} paths per robot (module docstring); the first waypoint is drawn without restriction. A jump is a "
        f"joint step above {JUMP} rad. IKNet: IKNetConfig defaults with {samples:,} pairs and {steps} steps.",
    ]
    return table
