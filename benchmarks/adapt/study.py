"""The adaptation study: ``ggik adapt`` on public arms outside the shipped model's training set, per recipe, and the
curves of the arm's raw success against minutes of adaptation.

Every (arm, recipe) runs :func:`ggik.training.adapt.adapt` from the same base model for the same wall-clock budget,
one after another on this machine (nothing else should run beside it). The arm's raw success (best of 32 within 1 cm
and 1 deg) on 100 fixed selection goals is measured every ``val_every_s`` seconds and chooses the model kept; 100
other, held-out goals are measured for the base model and for the model written, and are each run's result (the best
of many measurements on the selection goals is optimistic). The training robots that are replayed are measured before
and after (30 pose goals each). Results: ``OUT/results.json`` (every curve), ``OUT/README.md`` (the tables) and
``OUT/curves.png``.
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ggik.checkpoint import shipped_model_path
from ggik.errors import GGIKError
from ggik.fileio import atomic_write
from ggik.kinematics.robot_files import RobotFile
from ggik.training.adapt import AdaptConfig, adapt

__all__ = ["ARMS", "RECIPES", "run_study", "write_report", "report"]

URDFS = Path(__file__).resolve().parent / "urdfs"

#: the study's arms: public files of arms outside the shipped model's training set (urdfs/SOURCE.md)
ARMS = {
    "ur5": RobotFile(str(URDFS / "ur5_formatted.urdf")),
    "rizon4": RobotFile(str(URDFS / "flexiv_rizon4_kinematics.urdf")),
    "baxter": RobotFile(str(URDFS / "baxter.urdf"), "base", "left_hand"),
    "fetch": RobotFile(str(URDFS / "fetch_formatted.urdf"), "base_link", "gripper_link", {"torso_lift_joint": 0.0}),
}

#: recipe name -> the AdaptConfig fields it sets ("default": AdaptConfig's own defaults). The probes spell out every
#: field they vary, so that they stay the recipes that were run whatever the defaults become
_PROBE = {"schedule": "cosine", "batch_size": 64, "warmup_steps": 20, "anchor": 0.0, "freeze": [], "goal_kinds": None}
RECIPES: dict[str, dict] = {
    "default": {},
    "lr3e-4_r0.5_anneal": {**_PROBE, "lr": 3e-4, "min_lr_ratio": 0.03, "replay": 0.5, "retain": 0.0},
    "lr1e-4_r0.5": {**_PROBE, "lr": 1e-4, "min_lr_ratio": 0.1, "replay": 0.5, "retain": 0.0},
    "lr3e-4_r0.5_anchor": {**_PROBE, "lr": 3e-4, "min_lr_ratio": 0.03, "replay": 0.5, "retain": 0.0, "anchor": 3.0},
    "lr1e-3_r0.5_anneal": {**_PROBE, "lr": 1e-3, "min_lr_ratio": 0.01, "replay": 0.5, "retain": 0.0},
    "replay_only": {**_PROBE, "lr": 3e-4, "min_lr_ratio": 0.03, "replay": 0.99, "retain": 0.95},
    "batch256_lr3e-4_r0.5": {
        **_PROBE,
        "lr": 3e-4,
        "min_lr_ratio": 0.03,
        "replay": 0.5,
        "retain": 0.95,
        "batch_size": 256,
    },
}


@dataclass
class StudyOptions:
    arms: list[str]
    recipes: list[str]
    minutes: float
    out: Path
    threads: int = 2
    val_every_s: float = 60.0
    base: str | None = None  #: None: the shipped model


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def _code_version() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def run_study(opts: StudyOptions) -> dict:
    """Run every (arm, recipe) of ``opts`` in turn; returns (and writes) the results."""
    unknown = [a for a in opts.arms if a not in ARMS] + [r for r in opts.recipes if r not in RECIPES]
    if unknown:
        raise GGIKError(f"unknown arms or recipes {unknown}; arms {list(ARMS)}, recipes {list(RECIPES)}")
    opts.out.mkdir(parents=True, exist_ok=True)
    results_path = opts.out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.is_file() else {"runs": {}}
    with shipped_model_path() as shipped:
        base = Path(opts.base) if opts.base else shipped
        results["base"] = {"path": str(opts.base or "ggik/weights/ggik_default.pt"), "sha256": _sha(base)}
        results["code"] = _code_version()
        results["machine"] = f"{platform.processor() or platform.machine()}, {opts.threads} torch threads"
        for arm in opts.arms:
            for recipe in opts.recipes:
                cfg = replace(AdaptConfig(), **RECIPES[recipe], minutes=opts.minutes, threads=opts.threads)
                cfg = replace(cfg, val_every_s=opts.val_every_s)
                key = f"{arm}/{recipe}"
                run = opts.out / "runs" / arm / recipe
                result = adapt(ARMS[arm], run / "model.pt", cfg, base, run / "run", progress=True)
                results["runs"][key] = {
                    "arm": arm,
                    "recipe": recipe,
                    "config": asdict(cfg),
                    "base_success": result.base_success,
                    "best_success": max(p["success"] for p in result.curve),
                    "base_test_success": result.base_test_success,
                    "test_success": result.test_success,
                    "elapsed_s": result.elapsed_s,
                    "steps": result.steps,
                    "examples": result.examples,
                    "replay_before": result.replay_before,
                    "replay_after": result.replay_after,
                    "final_success": result.best_success,
                    "blend": result.blend,
                    "curve": result.curve,
                    "model_sha256": _sha(run / "model.pt"),
                }
                atomic_write(results_path, lambda f: f.write(json.dumps(results, indent=1).encode()))
                print(
                    f"{key}: held-out {result.base_test_success:.0%} -> {result.test_success:.0%} (selection best "
                    f"{results['runs'][key]['best_success']:.0%})",
                    flush=True,
                )
    write_report(results, opts.out)
    return results


SLACK_S = 5.0  #: a measurement due at a minute lands a second or two after it (the measurement's own time)


def _at(curve: list[dict], minutes: float) -> str:
    """The best selection success measured within ``minutes`` of adaptation (the model ``ggik adapt`` would have
    kept), or "-" when the run was shorter."""
    if curve[-1]["elapsed_s"] < 60 * minutes - 30:
        return "-"
    return f"{max(p['success'] for p in curve if p['elapsed_s'] <= 60 * minutes + SLACK_S):.0%}"


def _mean(d: dict) -> float:
    return sum(d.values()) / len(d) if d else float("nan")


def _recipe(cfg: dict) -> str:
    """The recipe's fields that the study varies, in one cell."""
    text = f"lr {cfg['lr']:g} {cfg['schedule']}"
    text += f" to {cfg['min_lr_ratio']:g}x" if cfg["schedule"] == "cosine" else ""
    text += f", batch {cfg['batch_size']}, replay {cfg['replay']:g}"
    text += f", anchor {cfg['anchor']:g}" if cfg.get("anchor") else ""
    text += f", frozen {'+'.join(cfg['freeze'])}" if cfg.get("freeze") else ""
    text += f", kinds {cfg['goal_kinds']}" if cfg.get("goal_kinds") else ""
    return text


def report(out: Path) -> dict:
    """Write the report of ``OUT/results.json`` again (its runs' blend, final and held-out success filled from the
    runs' own ``adapt_state.json`` where a results file predates them), and return the results."""
    path = out / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    for r in results["runs"].values():
        state_path = out / "runs" / r["arm"] / r["recipe"] / "run" / "adapt_state.json"
        state = json.loads(state_path.read_text(encoding="utf-8")) if state_path.is_file() else None
        if "blend" not in r and state is not None:
            r.update(blend=state.get("blend", 1.0), final_success=state.get("final_success", state["best"]["success"]))
            r["best_success"] = max(p["success"] for p in r["curve"])
        if "test_success" not in r and state is not None and "test_success" in state:
            r.update(base_test_success=state["base_test_success"], test_success=state["test_success"])
    atomic_write(path, lambda f: f.write(json.dumps(results, indent=1).encode()))
    write_report(results, out)
    return results


def _held_out(r: dict, key: str) -> str:
    """A run's held-out success ``key`` ("-" for a run from before the held-out goals)."""
    return f"{r[key]:.0%}" if r.get(key) is not None else "-"


def write_report(results: dict, out: Path) -> None:
    """``OUT/README.md`` (per run: the arm's raw success before (selection and held-out goals), the best on the
    selection goals at 1/2/5/10/15 min and at the end, the held-out success of the model written, its best-of-32
    error, the replayed robots before and after) and ``OUT/curves.png`` (selection success against minutes, one panel
    per arm)."""
    runs = results["runs"]
    lines = [
        "# Adaptation study: raw success of `ggik adapt` against minutes",
        "",
        f"Base model {results['base']['path']} (sha256 {results['base']['sha256']}), code {results['code']}, "
        f"{results['machine']}, alone on the machine. Raw success: best of 32 samples within 1 cm and 1 deg. "
        "Selection: the arm's 100 fixed selection goals, measured every minute of the budget (a second or two after "
        "it, the measurement's own time), the best so far (the model `ggik adapt` keeps); being the best of many "
        "measurements on the same goals, it is optimistic. Held-out: 100 other goals of the arm, never used to "
        "choose, measured for the base model (before) and for the model written (final): the result. The model "
        "written is blended back toward the base model where the replayed robots solve fewer than ceil(0.95 x their "
        "goals solved before) - 1 goals (`retain`, `retain_margin`; blend 1 = not blended). Best-of-32 error: the "
        "mean over the selection goals of the best sample's position error. Replayed robots: the base model's nine "
        "training robots, mean raw success on 30 pose goals each, before and after.",
        "",
        "| arm | recipe | before: selection, held-out | selection best at 1 min | 2 min | 5 min | 10 min | 15 min | "
        "selection best | held-out final (blend) | best-of-32 error, before -> end [mm] | steps | "
        "replayed: before, after (ratio) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in runs.values():
        at = " | ".join(_at(r["curve"], m) for m in (1, 2, 5, 10, 15))
        b, a = _mean(r["replay_before"]), _mean(r["replay_after"])
        c = r["curve"]
        err = f"{1000 * c[0]['best_m']:.1f} -> {1000 * c[-1]['best_m']:.1f}" if "best_m" in c[0] else "-"
        before = f"{r['base_success']:.0%}, {_held_out(r, 'base_test_success')}"
        final = f"{_held_out(r, 'test_success')} ({r.get('blend', 1.0):g})"
        lines.append(
            f"| {r['arm']} | {_recipe(r['config'])} | {before} | {at} | {r['best_success']:.0%} | {final} | {err} | "
            f"{r['steps']:,} | {b:.1%}, {a:.1%} ({a / b if b else float('nan'):.2f}) |"
        )
    lines += ["", "Every run's whole AdaptConfig and curve: `results.json`."]
    text = "\n".join(lines) + "\n"
    atomic_write(out / "README.md", lambda f: f.write(text.encode("utf-8")))
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    arms = sorted({r["arm"] for r in runs.values()})
    fig, axes = plt.subplots(1, len(arms), figsize=(4 * len(arms), 3.2), squeeze=False)
    for ax, arm in zip(axes[0], arms):
        for r in runs.values():
            if r["arm"] == arm:
                minutes, success = [p["elapsed_s"] / 60 for p in r["curve"]], [100 * p["success"] for p in r["curve"]]
                ax.plot(minutes, success, marker=".", label=r["recipe"])
        ax.set(title=arm, xlabel="minutes of adaptation", ylabel="raw success, selection goals [%]", ylim=(0, 100))
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    atomic_write(out / "curves.png", lambda f: fig.savefig(f, dpi=110, format="png"))
    plt.close(fig)
