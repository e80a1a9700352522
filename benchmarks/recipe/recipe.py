"""The equal-budget recipe benchmark: train a named variant of the model recipe from scratch for a fixed CPU
budget, then measure it on fixed problems; one table row per (variant, robot).

Every variant starts from the same base recipe (:data:`BASE`: the v1 model without decoder options, pose goals, a
constant learning rate after 100 warm-up steps, beta warmed up over 300 steps, so that a short budget is not spent
inside a schedule),
the same seed and the same data stream (:class:`ggik.data.TrainingData` is a pure function of the seed and
the step), and differs only by :data:`VARIANTS` [name]. Protocols (:data:`PROTOCOLS`) fix the training robots
and the robots measured. A run lives in ``RUN_ROOT/PROTOCOL/VARIANT`` and is resumable: asking again for a
larger budget continues it (:meth:`ggik.training.trainer.Trainer.train` ``max_cpu_minutes`` counts CPU time over
all sittings), and a run at its budget is only measured.

The measurements (:func:`measure_run`), on ``problems`` seeded goals per robot (the evaluation suite's
:func:`ggik.evaluation.tables.evaluation_problems`), S samples per goal:

* raw success, best of S, at 1 cm & 1 deg, 2 cm & 2 deg and 5 cm & 5 deg; best-of-S and mean-over-samples
  position [mm] and rotation [deg] errors ("raw": the model's point sets, angles recovered, no solver);
* the decoder's ceiling: posterior reconstructions of the true solutions of the same goals, RMS error per
  free node [mm] and the EE error of the angles recovered from them [mm]; the KL [nats per graph];
* sampling time per goal (``GGIKModel.sample``, S samples, passes of 128 decoded graphs, bf16) with 1 and 2 threads;
* raw + 3 LM iterations (the equal-cost comparison for decoders with Gauss-Newton stages);
* LM from the S samples vs LM from S random starts (uniform in the limits), in this process: strict success
  (1 mm & 0.01 rad and within the limits, some start), mean iterations, ms per goal (sampling included for
  the samples).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from benchmarks.common.measure import median_time, strict_valid
from benchmarks.common.streams import SAMPLING_NOISE
from ggik import rng
from ggik.checkpoint import load_model
from ggik.evaluation.report import Table, read_csv
from ggik.evaluation.tables import EvalConfig, evaluation_problems, timed
from ggik.fileio import atomic_write_text
from ggik.graph import GraphBatch, RobotGraph
from ggik.ik.metrics import success_rate
from ggik.ik.refine import lm_refine
from ggik.ik.refine_config import RefineConfig
from ggik.ik.sampling import sample_joint_angles
from ggik.kinematics import Robot
from ggik.kinematics.geometry import pose_errors
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator
from ggik.typed_config import merge

__all__ = [
    "BASE",
    "VARIANTS",
    "PROTOCOLS",
    "COLUMNS",
    "variant_config",
    "train_variant",
    "measure_run",
    "recipe_rows",
    "write_recipe_table",
    "retime_rows",
]

NAMED = ["ur10", "lbr_iiwa", "panda", "schunk_lwa4d", "schunk_lwa4p", "kuka_lwr", "irb140", "kr16_2", "puma560"]

#: overrides of TrainConfig shared by every variant (see the module docstring): the study's base recipe, spelled out in
#: full (the v1 model without decoder options, pose goals only) so that it stays what the study measured when the
#: library's defaults move on (they are now the shipped recipe)
BASE: dict = {
    "model": {"residual_inputs": False, "gn_steps": 0},
    "data": {"goal_kinds": {"pose": 1.0}},
    "optim": {"schedule": "constant", "warmup_steps": 100},
    "loss": {"rec_gain": 1000.0, "beta_warmup_steps": 300},
    "val": {"every": 0, "problems_per_robot": 50, "goal_kinds": ["pose"]},
    "steps": 10_000_000,
    "checkpoint_every": 100,
    "log_every": 10,
    "threads": 1,
}

#: variant name -> overrides of BASE (each alone against "baseline", then combinations)
VARIANTS: dict[str, dict] = {
    "baseline": {},
    "residual": {"model": {"residual_inputs": True}},
    "gn2": {"model": {"gn_steps": 2}},
    "graph-latent": {"model": {"latent_scope": "graph"}},
    "free-bits": {"loss": {"kl_free_nats": 10.0}},
    "rec-tighten": {"loss": {"rec_gain_final": 10000.0, "rec_gain_steps": 1500}},
    # a graph latent collapsed at once in the study (KL 0.4 nats by step 110): its variants keep 10 free nats
    "node": {
        "model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "latent_scope": "graph"},
        "loss": {"kl_free_nats": 10.0},
    },
    "node-node-latent": {"model": {"decoder": "node", "dec_layers": 3, "hidden": 256}},
    # the cheap per-node decoder followed by 4 learned Gauss-Newton moves (per sample: an MLP per node and a
    # (3M x 3M) solve per move, M free nodes; no edge work of width hidden)
    "node-gn4": {"model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "gn_steps": 4}},
    # the same with block-Jacobi moves (a 3 x 3 solve per node; 8 of them sampled in 5.9 ms per goal vs node-gn4's
    # 10.5, 1 thread, re-timed alone); they start at half a step, since all nodes move at once and two ends of an
    # edge would each correct all of its residual
    "node-jacobi8": {
        "model": {
            "decoder": "node",
            "dec_layers": 3,
            "hidden": 256,
            "gn_steps": 8,
            "gn_solver": "jacobi",
            "gn_init": 0.5,
        }
    },
    "residual-gn2": {"model": {"residual_inputs": True, "gn_steps": 2}},
    # the shipped decoder reading the arm's handedness (signed link volumes, ggik/graph/handedness.py; issue 56)
    "residual-gn2-volumes": {"model": {"residual_inputs": True, "gn_steps": 2, "volume_inputs": True}},
    "graph-mixture": {"model": {"prior_mixture": "graph"}},
    # the same recipes with another training seed (initialisation and training noise; same data stream): the spread
    "baseline-seed1": {"seed": 1},
    "gn2-seed1": {"model": {"gn_steps": 2}, "seed": 1},
    "node-gn4-seed1": {"model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "gn_steps": 4}, "seed": 1},
    # node-gn4 trained on past the equal budget (a copy of its multi run, continued): does the cheap decoder keep
    # learning?
    "node-gn4-long": {"model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "gn_steps": 4}},
    # node-gn4's seed 1 collapsed its latent (KL 0.9 nats): the same seed with 10 free nats per graph
    "node-gn4-fb-seed1": {
        "model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "gn_steps": 4},
        "loss": {"kl_free_nats": 10.0},
        "seed": 1,
    },
    # node-gn4 with 10 free nats per graph at seed 0, at node-gn4-long's 30 CPU-minutes on the multi protocol: do free
    # bits (no latent collapse) let the cheap decoder's prior keep up with its decoder at a longer budget?
    "node-gn4-fb": {
        "model": {"decoder": "node", "dec_layers": 3, "hidden": 256, "gn_steps": 4},
        "loss": {"kl_free_nats": 10.0},
    },
}

#: protocol -> (data overrides, robots measured)
PROTOCOLS: dict[str, tuple[dict, list[str]]] = {
    "panda": ({"robots": {"panda": 1.0}}, ["panda"]),
    "multi": ({"robots": {name: 1.0 for name in NAMED}}, ["panda", "ur10", "lbr_iiwa", "kr16_2"]),
    "multi-random": (
        {"robots": {name: 1.0 for name in NAMED}, "random_weight": 2.0, "randomized_weight": 1.0},
        ["panda", "ur10", "lbr_iiwa", "kr16_2"],
    ),
}

COLUMNS = [
    "protocol",
    "variant",
    "robot",
    "CPU-min",
    "examples",
    "raw 1cm&1deg [%]",
    "raw 2cm&2deg [%]",
    "raw 5cm&5deg [%]",
    "best pos [mm]",
    "best rot [deg]",
    "mean pos [mm]",
    "mean rot [deg]",
    "posterior RMS/node [mm]",
    "posterior EE err [mm]",
    "KL [nats]",
    "sample ms/goal 1 thr",
    "sample ms/goal 2 thr",
    "raw+3LM 1cm&1deg [%]",
    "LM from samples strict [%]",
    "LM from samples it.",
    "samples+LM ms/goal",
    "LM random strict [%]",
    "LM random it.",
    "LM random ms/goal",
]


def variant_config(variant: str, protocol: str, overrides: dict | None = None) -> dict:
    """The full override dict of a run: BASE + protocol data + variant [+ ``overrides``, e.g. a tiny model in tests]."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    return merge(merge(merge(BASE, {"data": PROTOCOLS[protocol][0]}), VARIANTS[variant]), overrides or {})


def train_variant(
    run_dir: str | Path,
    variant: str,
    protocol: str,
    cpu_minutes: float,
    progress: bool = True,
    overrides: dict | None = None,
) -> dict:
    """Train (or continue) the run of ``variant`` in ``run_dir`` until ``cpu_minutes`` of training CPU time.
    Returns {"cpu_min", "examples", "steps"} of the run after training."""
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer
    from ggik.typed_config import from_dict

    run_dir = Path(run_dir)
    data = variant_config(variant, protocol, overrides)
    if (run_dir / "last.pt").is_file():
        trainer = Trainer.resume(run_dir, progress=progress)
        if trainer.cfg != from_dict(TrainConfig, data):
            raise ValueError(
                f"{run_dir} holds a run of another configuration than {protocol}/{variant}; use another --runs folder"
            )
    else:
        trainer = Trainer(from_dict(TrainConfig, data), run_dir, progress=progress)
    trainer.train(max_cpu_minutes=cpu_minutes)
    return {"cpu_min": trainer.cpu_s / 60.0, "examples": trainer.examples, "steps": trainer.step}


def _sampling_ms(model: GGIKModel, graph: RobotGraph, T: torch.Tensor, samples: int, threads: int) -> float:
    """Median wall ms per goal of ``model.sample`` on 16 goals, bf16, with ``threads`` torch threads, in passes of
    128 decoded graphs (goals x samples) as :func:`ggik.ik.sampling.sample_joint_angles` makes them."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        per_pass = max(1, 128 // samples)
        batches = [
            GraphBatch.from_graph(graph, T_goal=T[i : i + per_pass]).to("cpu", torch.float32)
            for i in range(0, 16, per_pass)
        ]
        g = step_generator(0, SAMPLING_NOISE)

        def run():
            with torch.autocast("cpu", dtype=torch.bfloat16):
                for batch in batches:
                    model.sample(batch, samples, generator=g)

        med, _, _ = median_time(run, repeats=5)
    finally:
        torch.set_num_threads(before)
    return 1e3 * med / sum(b.batch_size for b in batches)


@torch.no_grad()
def _posterior(model: GGIKModel, graph: RobotGraph, q: torch.Tensor, T: torch.Tensor) -> tuple[float, float, float]:
    """(RMS error per free node [mm], mean EE position error of the recovered angles [mm], KL [nats]) of the
    posterior reconstructions of the true solutions q (P, dof)."""
    batch = GraphBatch.from_graph(graph, q=q).to("cpu", torch.float32)
    torch.manual_seed(0)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(batch)
    free = (batch.node_mask & ~batch.anchor_mask).sum(-1).double()
    rms = torch.sqrt(out["free_se"].double().sum() / free.sum()).item()
    x = out["x"].to(torch.float64)[:, None]  # (P, 1, N, 3)
    q_rec = graph.joint_angles(x, graph.goals(T)[:, None])
    pos, _ = pose_errors(graph.robot.fk(q_rec), T[:, None])
    return 1e3 * rms, 1e3 * pos.mean().item(), out["kl"].double().mean().item()


def measure_run(
    model: GGIKModel, robot: Robot, cfg: EvalConfig, refine: RefineConfig | None = None, threads: int = 2
) -> dict[str, float]:
    """The measurements of the module docstring for one robot (columns of :data:`COLUMNS` from "raw 1cm&1deg")."""
    refine = refine or RefineConfig()
    ((_, q, T),) = evaluation_problems([robot], cfg)
    graph = model.graph(robot)
    P, S = T.shape[0], cfg.samples
    sample_joint_angles(model, graph, T[:1], S)  # warm-up
    raw, t_raw, _ = timed(
        lambda: sample_joint_angles(model, graph, T, S, generator=step_generator(cfg.seed, rng.SEEDING_SAMPLES))
    )
    row: dict[str, float] = {}
    for tol in (1, 2, 5):
        row[f"raw {tol}cm&{tol}deg [%]"] = 100 * success_rate(raw.pos_err, raw.rot_err, 0.01 * tol, float(tol))
    row["best pos [mm]"] = 1e3 * raw.pos_err.min(-1).values.mean().item()
    row["best rot [deg]"] = math.degrees(raw.rot_err.min(-1).values.mean().item())
    row["mean pos [mm]"] = 1e3 * raw.pos_err.mean().item()
    row["mean rot [deg]"] = math.degrees(raw.rot_err.mean().item())
    row["posterior RMS/node [mm]"], row["posterior EE err [mm]"], row["KL [nats]"] = _posterior(model, graph, q, T)
    row["sample ms/goal 1 thr"] = _sampling_ms(model, graph, T, S, 1)
    row["sample ms/goal 2 thr"] = _sampling_ms(model, graph, T, S, 2)
    torch.set_num_threads(threads)
    short = RefineConfig(**{**refine.__dict__, "max_iters": 3})
    _, info3 = lm_refine(robot, T[:, None], raw.q, short)
    row["raw+3LM 1cm&1deg [%]"] = 100 * success_rate(info3.pos_err, info3.rot_err)
    (qs, info), dt, _ = timed(lambda: lm_refine(robot, T[:, None], raw.q, refine))
    row["LM from samples strict [%]"] = 100 * strict_valid(robot, qs, T, refine).any(-1).double().mean().item()
    row["LM from samples it."] = info.iterations.double().mean().item()
    row["samples+LM ms/goal"] = 1e3 * (t_raw + dt) / P
    starts = robot.sample_q(P * S, step_generator(cfg.seed, rng.SEEDING_STARTS)).view(P, S, robot.dof)
    (qr, info_r), dt_r, _ = timed(lambda: lm_refine(robot, T[:, None], starts, refine))
    row["LM random strict [%]"] = 100 * strict_valid(robot, qr, T, refine).any(-1).double().mean().item()
    row["LM random it."] = info_r.iterations.double().mean().item()
    row["LM random ms/goal"] = 1e3 * dt_r / P
    return row


def recipe_rows(
    run_dir: str | Path,
    protocol: str,
    variant: str,
    cfg: EvalConfig,
    threads: int = 2,
    checkpoint: str | Path | None = None,
) -> list[dict]:
    """Measure the run in ``run_dir`` (or any ``checkpoint``, e.g. the shipped model, under the name ``variant``)
    on the protocol's robots; rows keyed by :data:`COLUMNS`, also written to ``run_dir/recipe_rows.json``."""
    path = Path(checkpoint) if checkpoint else Path(run_dir) / "last.pt"
    model, ckpt = load_model(path)
    model = model.float().eval()
    rows = []
    for name in PROTOCOLS[protocol][1]:
        row = {
            "protocol": protocol,
            "variant": variant,
            "robot": name,
            "CPU-min": float(ckpt.get("cpu_s", 0.0)) / 60.0,
            "examples": int(ckpt.get("examples", 0)),
        }
        row.update(measure_run(model, Robot.from_name(name), cfg, threads=threads))
        rows.append(row)
    atomic_write_text(Path(run_dir) / "recipe_rows.json", json.dumps(rows, indent=1))
    return rows


def retime_rows(stem: str | Path, runs: dict[tuple[str, str], str | Path], cfg: EvalConfig) -> list[dict]:
    """Re-measure only the sampling-time columns of existing rows (a quick pass to run alone on the machine, after
    rows were measured beside training jobs). ``runs``: (protocol, variant) -> checkpoint. Returns the updated rows
    (all robots of those variants); the caller writes them with :func:`write_recipe_table`."""
    rows = read_csv(Path(stem).with_suffix(".csv"))
    updated = []
    for (protocol, variant), ckpt in runs.items():
        model = load_model(ckpt)[0].float().eval()
        for row in rows:
            if (row["protocol"], row["variant"]) != (protocol, variant):
                continue
            robot = Robot.from_name(row["robot"])
            ((_, _, T),) = evaluation_problems([robot], cfg)  # the goals of measure_run, which times the first 16
            graph = model.graph(robot)
            new = {k: _parse(v) for k, v in row.items()}
            new["sample ms/goal 1 thr"] = _sampling_ms(model, graph, T, cfg.samples, 1)
            new["sample ms/goal 2 thr"] = _sampling_ms(model, graph, T, cfg.samples, 2)
            updated.append(new)
    return updated


def write_recipe_table(stem: str | Path, rows: list[dict], command: str, cfg: EvalConfig) -> Path:
    """Merge ``rows`` into the table ``stem``.md/.csv (replacing rows of the same protocol, variant and robot;
    rows of other variants are kept as written, with the command of their own runs in the notes)."""
    stem = Path(stem)
    kept: list[list] = []
    key = {(r["protocol"], r["variant"], r["robot"]) for r in rows}
    if stem.with_suffix(".csv").is_file():
        for old in read_csv(stem.with_suffix(".csv")):
            if (old["protocol"], old["variant"], old["robot"]) not in key:
                kept.append([_parse(old.get(c, "")) for c in COLUMNS])
    table = Table(
        f"Recipe benchmark: equal CPU budget per variant, {cfg.problems} goals x {cfg.samples} samples per robot",
        list(COLUMNS),
    )
    for r in sorted(kept + [[row[c] for c in COLUMNS] for row in rows], key=lambda r: (r[0], r[1], r[2])):
        table.add(*r)
    table.notes += [
        "raw: the model's own point sets, angles recovered, no joint-space solver; best of the samples per goal.",
        "posterior: reconstruction of the true solution from the posterior latent (the decoder's ceiling).",
        "LM strict: 1 mm & 0.01 rad within the joint limits, some start; ms/goal of samples+LM includes sampling.",
        "sample ms/goal: GGIKModel.sample on 16 goals in passes of 128 decoded graphs, bf16, median of 5; timings are "
        "only comparable "
        "between rows measured alone on the machine.",
        f"rows keep the numbers of the run that measured them; every command that wrote this table is listed in "
        f"{stem.name}_commands.txt, in order (this file was last written by: {command}).",
    ]
    log = stem.parent / f"{stem.name}_commands.txt"
    previous = log.read_text(encoding="utf-8") if log.is_file() else ""
    if previous.splitlines()[-1:] != [command]:  # one line per command, not per variant it measured
        atomic_write_text(log, previous + command + "\n")
    md, _ = table.write(stem, command=command, seed=cfg.seed)
    return md


def _parse(value: str) -> float | str:
    try:
        return float(value)
    except ValueError:
        return value
