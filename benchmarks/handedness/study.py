"""Mirror images, per arm (issue 56): DG from random starts with and without the link volumes, and each model raw,
+ DG and + LM, on one set of pose goals per arm, with the arm's number of skew links k.

Arms: the nine training arms (our files), the four public files of ``benchmarks/adapt/urdfs`` (arms the shipped model
never saw), and three families of random robots (``random_robot`` DH arms, whose axes meet or are parallel: k = 0;
link-randomised training arms, ``randomize_links`` at 20 %; and random chiral DH arms, every twist and offset drawn,
made here). Every number is a share of the arm's goals x starts (per sample) or of its goals (best of S), success
within 1 cm and 1 deg (the GGIK paper's criterion). "Converged": the projection's own cost under :data:`CONVERGED`
[m^4] (distance residuals |x_i - x_j|^2 - d_ij^2 of about 1e-4 m^2, and with volumes the volume residuals alike).

Command (from the repository root; alone on the machine)::

    python -m benchmarks.handedness.study --models v10=ggik/weights/ggik_default.pt \
        handed=train/checkpoints/v12/export.pt --goals 100 --samples 32 --threads 2 \
        --out benchmarks/handedness/results
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import math
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ggik import Robot, RobotGraph, random_robot, randomize_links
from ggik.checkpoint import load_model
from ggik.fileio import atomic_write_text
from ggik.graph.goal_kinds import goal_errors
from ggik.ik.dg_refine import DGConfig, dg_refine
from ggik.ik.refine import lm_refine
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics.registry import available_robots

__all__ = ["arms", "study_arm", "main", "CONVERGED", "POS_TOL", "ROT_TOL"]

URDFS = Path(__file__).resolve().parents[1] / "adapt" / "urdfs"
POS_TOL, ROT_TOL = 0.01, math.radians(1.0)  #: success: within 1 cm and 1 deg
CONVERGED = 1e-8  #: [m^4] a projection whose final cost is under this converged
GOAL_SEED = 56_000  #: the goals of arm number i are drawn with GOAL_SEED + i (not the training runs' validation seeds)


@dataclass
class Arm:
    """One arm of the study: its robot and family ("training", "public", "random DH", "link-randomised",
    "chiral DH")."""

    name: str
    robot: Robot
    family: str


def chiral_dh(dof: int, seed: int) -> Robot:
    """A random DH arm whose every link may be skew: twists U(-pi, pi), offsets a U(0.05, 0.4) m, d U(-0.3, 0.3) m,
    the last link a = 0 (a wrist point on the last axis)."""
    gen = torch.Generator().manual_seed(seed)

    def u(lo: float, hi: float) -> list[float]:
        return (lo + (hi - lo) * torch.rand(dof, generator=gen, dtype=torch.float64)).tolist()

    a, d, alpha = u(0.05, 0.4), u(-0.3, 0.3), u(-math.pi, math.pi)
    a[-1], alpha[-1] = 0.0, 0.0
    return Robot.from_dh(a, d, alpha, name=f"chiral{dof}_{seed}")


def arms(families: tuple[str, ...] = ("training", "public", "random DH", "link-randomised", "chiral DH")) -> list[Arm]:
    """The study's arms, in order, of the ``families`` asked for."""
    out: list[Arm] = []
    if "training" in families:
        out += [Arm(name, Robot.from_name(name), "training") for name in available_robots()]
    if "public" in families:
        public = {
            "ur5": Robot.from_urdf(URDFS / "ur5_formatted.urdf"),
            "rizon4": Robot.from_urdf(URDFS / "flexiv_rizon4_kinematics.urdf"),
            "baxter": Robot.from_urdf(URDFS / "baxter.urdf", "base", "left_hand"),
            "fetch": Robot.from_urdf(URDFS / "fetch_formatted.urdf", "base_link", "gripper_link").lock(
                {"torso_lift_joint": 0.0}
            ),
        }
        out += [Arm(name, robot, "public") for name, robot in public.items()]
    if "random DH" in families:
        out += [Arm(f"random{d}_{s}", random_robot(d, s), "random DH") for d, s in ((6, 601), (7, 701), (7, 702))]
    if "link-randomised" in families:
        out += [
            Arm(f"{n}_links{s}", randomize_links(Robot.from_name(n), 0.2, s), "link-randomised")
            for n, s in (("panda", 11), ("kr16_2", 12), ("lbr_iiwa", 13))
        ]
    if "chiral DH" in families:
        out += [Arm(f"chiral{d}_{s}", chiral_dh(d, s), "chiral DH") for d, s in ((6, 61), (7, 71), (7, 72))]
    return out


def _shares(pos: torch.Tensor, rot: torch.Tensor) -> tuple[float, float, torch.Tensor]:
    """(per-sample success, best-of-S success, success (P, S)) within 1 cm and 1 deg."""
    ok = (pos < POS_TOL) & (rot < ROT_TOL)
    return float(ok.float().mean()), float(ok.any(-1).float().mean()), ok


def _dg_row(prefix: str, graph: RobotGraph, points: torch.Tensor, goals, cfg: DGConfig) -> dict:
    res = dg_refine(graph, points, goals, cfg)
    per, best, ok = _shares(res.pos_err, res.rot_err)
    converged = res.cost < CONVERGED
    handed = graph.handedness(res.points)
    conv = float(converged.float().mean())
    return {
        f"{prefix} per-sample": per,
        f"{prefix} best": best,
        f"{prefix} converged": conv,
        f"{prefix} per-sample / converged": per / conv if conv else float("nan"),
        f"{prefix} right-handed among converged": float(handed[converged].float().mean()) if conv else float("nan"),
        f"{prefix} success among right-handed converged": float(ok[converged & handed].float().mean())
        if bool((converged & handed).any())
        else float("nan"),
    }


def study_arm(arm: Arm, index: int, models: dict, goals_n: int, samples: int, dg_iterations: int) -> dict:
    """One row of the study for ``arm`` (the index-th arm: its goal seed). ``models``: name -> GGIKModel."""
    robot = arm.robot
    graph = RobotGraph.from_robot(robot, "canonical")
    gen = torch.Generator().manual_seed(GOAL_SEED + index)
    q_goal = robot.sample_q(goals_n, gen).to(torch.float64)
    goals = graph.goals(robot.fk(q_goal))
    row: dict = {"arm": arm.name, "family": arm.family, "dof": robot.dof, "skew links": int(graph.skew_links.sum())}
    q0 = robot.sample_q(goals_n * samples, gen).to(torch.float64).view(goals_n, samples, robot.dof)
    random_points = graph.realize(q0)
    for volumes in (False, True):
        cfg = DGConfig(iterations=dg_iterations, volumes=volumes)
        row.update(_dg_row(f"random+DG{' vol' if volumes else ''}", graph, random_points, goals, cfg))
    for name, model in models.items():
        mgraph = RobotGraph.from_robot(robot, model.cfg.graph)
        t0 = time.perf_counter()
        raw = sample_joint_angles(model, mgraph, goals.in_base, samples, torch.Generator().manual_seed(index))
        row[f"{name} sampling ms/goal"] = 1e3 * (time.perf_counter() - t0) / goals_n
        row[f"{name} raw per-sample"], row[f"{name} raw best"], _ = _shares(raw.pos_err, raw.rot_err)
        row[f"{name} raw right-handed"] = float(mgraph.handedness(raw.points).float().mean())
        dg = _dg_row(f"{name}+DG vol", mgraph, raw.points, goals, DGConfig(iterations=dg_iterations))
        row.update({k: v for k, v in dg.items() if k.endswith(("per-sample", "best", "converged"))})
        q, _ = lm_refine(robot, goals.in_base[:, None], raw.q)
        pos, rot = goal_errors(robot.fk(q), goals.in_base[:, None], "pose", graph.tool_axis)
        row[f"{name}+LM per-sample"], row[f"{name}+LM best"], _ = _shares(pos, rot)
    return row


def _sha(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "ggik"], capture_output=True, text=True).stdout.strip()
        return out.stdout.strip() + ("+changes" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


DG_COLUMNS = ("per-sample", "converged", "per-sample / converged")  #: the DG table's columns per variant
MODEL_COLUMNS = ("raw per-sample", "raw best", "raw right-handed", "+DG vol per-sample", "+DG vol best")
MODEL_COLUMNS += ("+LM per-sample", "+LM best", "sampling ms/goal")


def markdown(rows: list[dict], header: str) -> str:
    """The study's two tables as Markdown (shares in %, timings in ms): DG from random starts without and with the
    volumes, then each model raw, + DG and + LM. Every column is in ``handedness.csv``."""
    ident = ["arm", "family", "dof", "skew links"]
    dg = ident + [f"random+DG{v} {c}" for v in ("", " vol") for c in DG_COLUMNS]
    names = [k[: -len(" raw per-sample")] for k in rows[0] if k.endswith(" raw per-sample")]
    model = ident + [
        f"{n}{' ' if c[0] != '+' else ''}{c}" for n in names for c in MODEL_COLUMNS if not c.startswith("sampling")
    ]
    model += [f"{n} sampling ms/goal" for n in names]
    return header + "\n\n" + _table(rows, dg) + "\n" + (_table(rows, model) if names else "")


def _table(rows: list[dict], keys: list[str]) -> str:
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        cells = []
        for k in keys:
            v = r[k]
            if isinstance(v, float):
                cells.append("-" if math.isnan(v) else (f"{v:.1f}" if k.endswith("ms/goal") else f"{100 * v:.1f}"))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", nargs="*", default=[], help="NAME=CHECKPOINT, each measured raw, + DG and + LM")
    p.add_argument("--goals", type=int, default=100)
    p.add_argument("--samples", type=int, default=32)
    p.add_argument("--dg-iterations", type=int, default=30)
    p.add_argument("--families", nargs="*", default=None, help="default: every family")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    models, names = {}, []
    for spec in a.models:
        name, _, path = spec.partition("=")
        models[name] = load_model(path)[0].eval()
        names.append(f"{name} = `{path}` (sha256 {_sha(path)})")
    chosen = arms(tuple(a.families)) if a.families else arms()
    rows = []
    for i, arm in enumerate(chosen):
        t0 = time.perf_counter()
        rows.append(study_arm(arm, i, models, a.goals, a.samples, a.dg_iterations))
        print(f"{arm.name}: k={rows[-1]['skew links']} ({time.perf_counter() - t0:.0f} s)", flush=True)
    a.out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    atomic_write_text(a.out / "handedness.csv", buf.getvalue())
    header = (
        f"# Mirror images per arm (code {_commit()}; {a.goals} pose goals x {a.samples} starts per arm; DG "
        f"{a.dg_iterations} Gauss-Newton steps; success within 1 cm and 1 deg; models: {'; '.join(names) or 'none'})"
    )
    atomic_write_text(a.out / "handedness.md", markdown(rows, header))
    print(markdown(rows, header))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
