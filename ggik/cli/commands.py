"""The ``ggik`` command line: ``ggik robot show``, ``ggik graph build|show``, ``ggik train``, ``ggik solve``, ``ggik export``, ``ggik demo``, ..."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import torch

from ggik.errors import GGIKError
from ggik.fileio import atomic_write_text
from ggik.graph import RobotGraph
from ggik.kinematics import Robot, available_robots

__all__ = ["main", "load_robot"]


def load_robot(spec: str, base: str | None = None, ee: str | None = None) -> Robot:
    """A robot from a URDF path or the name of a shipped robot."""
    path = Path(spec)
    if path.is_file() or spec.endswith(".urdf"):
        return Robot.from_urdf(path, base_link=base, ee_link=ee)
    if spec in available_robots():
        if base or ee:
            raise GGIKError(f"--base/--ee apply to URDF files; {spec!r} is a shipped robot with a fixed chain")
        return Robot.from_name(spec)
    raise GGIKError(f"{spec!r} is neither a URDF file nor a shipped robot ({', '.join(available_robots())})")


def _graph_status(robot: Robot) -> tuple[RobotGraph | None, str]:
    try:
        graph = RobotGraph.from_robot(robot)
    except GGIKError as exc:
        return None, f"GGIK graph: this chain cannot be represented: {exc}"
    return graph, f"GGIK graph: {graph!r}"


def _cmd_robot_show(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot, args.base, args.ee)
    print(robot.describe())
    print(_graph_status(robot)[1])
    return 0


def _cmd_graph_build(args: argparse.Namespace) -> int:
    specs = available_robots() if args.all else args.robots
    if not specs:
        raise GGIKError("name at least one URDF or robot, or pass --all")
    out = Path(args.output) if args.output else None
    to_dir = out is not None and (len(specs) > 1 or args.all or out.is_dir())
    for spec in specs:
        robot = load_robot(spec, args.base, args.ee)
        text = RobotGraph.from_robot(robot).to_json()
        if out is None:
            sys.stdout.write(text)
        else:
            target = out / f"{robot.name}.json" if to_dir else out
            atomic_write_text(target, text)
            print(f"wrote {target}")
    return 0


def _cmd_graph_show(args: argparse.Namespace) -> int:
    robot = load_robot(args.robot, args.base, args.ee)
    graph = RobotGraph.from_robot(robot)
    info = graph.to_dict()
    print(repr(graph))
    print(f"graph frame F0 in {robot.base_link}: translation {[round(v, 6) for v in graph.T_base_graph[:3, 3].tolist()]}")
    print(f"{'node':>5} {'type':>5} {'anchor':>6}  home position in F0 [m]")
    for node in info["nodes"]:
        print(f"{node['name']:>5} {node['type']:>5} {str(node['anchor']):>6}  {node['home']}")
    print("known edges:")
    for kind in ("base", "structure", "bounded", "anchor_goal"):
        edges = [e for e in info["known_edges"] if e["kind"] == kind]
        listed = ", ".join(f"{e['u']}-{e['v']}" + ("" if e["length"] is None else f"={e['length']:.4f}") for e in edges)
        print(f"  {kind} ({len(edges)}): {listed}")
    return 0


DEMO_ROBOTS = ("panda", "ur10")  #: training robots of the demo; a random 7-DOF robot is added as the unseen one


def _cmd_demo(args: argparse.Namespace) -> int:
    import importlib.util
    import math
    import time

    from ggik.checkpoint import PRETRAINED_CHECKPOINT, trained_named_robots
    from ggik.ik import GGIK
    from ggik.ik.metrics import distinct_solutions as _distinct
    from ggik.ik.metrics import success_rate
    from ggik.kinematics import random_robot

    if args.goals < 1 or args.samples < 1 or args.show < 1:
        raise GGIKError(f"--goals, --samples and --show must be at least 1, got {args.goals}, {args.samples}, {args.show}")
    if not args.out.lower().endswith(".png"):
        raise GGIKError(f"--out: the figure is written as PNG, the path must end in .png, got {args.out!r}")
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    t_start = time.perf_counter()
    solver = GGIK.pretrained()
    ck, tol = solver.checkpoint, solver.config
    trained = ck.get("training_robots", {})
    named, rand = trained_named_robots(trained), trained.get("random") or {}  # named: weight > 0 (0 = left out)
    print(f"ggik demo: the shipped model (ggik/weights/{PRETRAINED_CHECKPOINT}, {solver.model.num_parameters():,} parameters, "
          f"trained {ck.get('step', '?')} steps on {ck.get('examples', 0):,} examples)")
    print(f"{args.goals} reachable goals per robot (FK of random joint values within the limits, seed {args.seed}), "
          f"{args.samples} samples per goal, raw and refined with LM from every sample; {torch.get_num_threads()} CPU thread(s)")
    print(f"raw success: a sample within 1 cm and 1 deg (the GGIK paper's criterion); strict success (LM, 'ok'): within "
          f"{1e3 * tol.pos_tol:g} mm and {math.degrees(tol.rot_tol):.2f} deg; solutions listed best first, "
          "each at least 0.1 rad (joint-space norm) from those above it\n")

    unseen = random_robot(7, torch.Generator().manual_seed(args.seed + 7007), name=f"random7_seed{args.seed + 7007}")
    if unseen.name in named:  # cannot happen for a fresh name; keeps the claim below checked
        raise GGIKError(f"{unseen.name} is a training robot of this model")
    cases = []
    for name in DEMO_ROBOTS:
        seen = "a training robot" if name in named else "NOT among this model's training robots"
        cases.append((Robot.from_name(name), seen))
    family = (f"; the model was trained on other random {'/'.join(map(str, rand.get('dofs', [])))}-DOF robots"
              if rand.get("weight") and rand.get("dofs") else "")
    cases.append((unseen, f"a random robot the model never saw{family}"))

    g = torch.Generator().manual_seed(args.seed)
    panels_raw, panels_lm = [], []
    for robot, seen in cases:
        T = robot.fk(robot.sample_q(args.goals, g))
        solver.solve(robot, T[:1], 1)  # warm-up: builds the robot's graph, so the timings below are solves only
        t0 = time.perf_counter()
        raw = solver.solve(robot, T, args.samples, generator=torch.Generator().manual_seed(args.seed))
        t_raw = time.perf_counter() - t0
        t0 = time.perf_counter()
        lm = solver.solve(robot, T, args.samples, refine="lm", generator=torch.Generator().manual_seed(args.seed))
        t_lm = time.perf_counter() - t0
        unbounded = ~robot.limited
        everything = torch.ones(args.samples, dtype=torch.bool)
        n_distinct = [len(_distinct(lm.q[b], lm.success[b], unbounded, args.samples)) for b in range(args.goals)]
        print(f"{robot.name} ({robot.dof} DOF, {seen})")
        raw_ok = success_rate(raw.pos_err, raw.rot_err)  # the paper's raw criterion: 1 cm and 1 degree
        print(f"  raw samples: {1e3 * t_raw:.0f} ms for {args.goals} goals; a sample within 1 cm and 1 deg on "
              f"{round(raw_ok * args.goals)}/{args.goals} goals, within the strict tolerances on {int(raw.success[:, 0].sum())}/{args.goals}")
        print(f"  LM-refined:  {1e3 * t_lm:.0f} ms (sampling included); {int(lm.success[:, 0].sum())}/{args.goals} goals solved, "
              f"{int(lm.success.sum())}/{lm.success.numel()} samples, distinct solutions per goal: {n_distinct}")
        print(f"  {'goal':>4} {'#':>2} | {'raw: pos [mm]':>13} {'rot [deg]':>9} | {'LM: pos [mm]':>12} {'rot [deg]':>9} {'ok':>3} | "
              f"LM solution q [rad]")
        for b in range(args.goals):
            ir = _distinct(raw.q[b], everything, unbounded, args.show)
            il = _distinct(lm.q[b], everything, unbounded, args.show)
            for r in range(max(len(ir), len(il))):
                left = (f"{1e3 * raw.pos_err[b, ir[r]].item():13.1f} {math.degrees(raw.rot_err[b, ir[r]].item()):9.2f}"
                        if r < len(ir) else f"{'':13} {'':9}")
                if r < len(il):
                    k = il[r]
                    right = (f"{1e3 * lm.pos_err[b, k].item():12.3f} {math.degrees(lm.rot_err[b, k].item()):9.3f} "
                             f"{'yes' if lm.success[b, k] else 'no':>3} | [{', '.join(f'{v:5.2f}' for v in lm.q[b, k].tolist())}]")
                else:
                    right = f"{'':12} {'':9} {'':3} |"
                print(f"  {b if r == 0 else '':>4} {r + 1:>2} | {left} | {right}")
        print()
        label = robot.name if robot is not unseen else f"{robot.name} (unseen)"
        best_raw = _distinct(raw.q[0], everything, unbounded, 8)
        panels_raw.append((robot, raw.q[0, best_raw], T[0], f"{label}: {len(best_raw)} best raw samples, goal 0"))
        ok = _distinct(lm.q[0], lm.success[0], unbounded, 8)
        what = f"{len(ok)} of {n_distinct[0]} distinct solutions (LM)" if ok else "no LM solution, best LM result"
        panels_lm.append((robot, lm.q[0, ok or [0]], T[0], f"{label}: {what}, goal 0"))

    if importlib.util.find_spec("matplotlib") is None:
        print("no figure: matplotlib is not installed (pip install 'ggik[plot]', which `make demo` does)")
    else:
        from ggik.evaluation.plots import plot_solution_grid

        out = plot_solution_grid(panels_raw + panels_lm, args.out, ncols=len(cases),
                                 title=f"ggik demo (seed {args.seed}): best distinct raw samples (top) and LM-refined solutions (bottom)")
        print(f"figure: {out}")
    print(f"total time {time.perf_counter() - t_start:.1f} s")
    return 0


def _cmd_train(args: argparse.Namespace) -> int:
    import time

    from ggik.typed_config import apply_overrides, from_dict, load_yaml
    from ggik.checkpoint import config_for_init
    from ggik.training.config import TrainConfig
    from ggik.training.trainer import Trainer

    if args.resume and args.init:
        raise GGIKError("--init starts a new run from a checkpoint's weights, --resume continues a run: give one of them")
    overrides = apply_overrides({}, args.set or [])
    common = dict(device=args.device, wandb=args.wandb, progress=not args.no_progress)
    if args.resume:
        if args.config:
            raise GGIKError("--resume continues a run with its own config; use --set to change e.g. steps")
        trainer = Trainer.resume(args.resume, overrides, **common)
    else:
        from ggik.typed_config import merge

        data = merge(load_yaml(args.config), overrides) if args.config else overrides
        if args.init:
            data = config_for_init(args.init, data)  # the model section comes from the checkpoint
        cfg = from_dict(TrainConfig, data)
        stem = Path(args.config).stem if args.config else ("init" if args.init else "run")
        out = Path(args.out) if args.out else Path("runs") / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}"
        if (out / "last.pt").exists():
            raise GGIKError(f"{out} already holds a run (last.pt); use --resume {out} or another --out")
        trainer = Trainer(cfg, out, **common)
        if args.init:
            src = trainer.init_from(args.init)
            if trainer.rank == 0:
                print(f"initialised from {src['path']} (step {src['step']}, {src['examples']:,} examples); "
                      "new run: step 0, fresh optimiser and schedule")
    if trainer.rank == 0:
        print(f"run dir: {trainer.run_dir}  (model: {trainer.model.num_parameters():,} parameters, step {trainer.step}/{trainer.cfg.steps})")
    last = trainer.train(max_minutes=args.max_minutes)
    trainer.close()  # only after a clean finish: a barrier with a failed rank would hang (its error ends the job)
    if trainer.rank == 0:
        print(f"stopped at step {trainer.step}: {json.dumps(last)}")
        print(f"checkpoint: {trainer.run_dir / 'last.pt'}")
    return 0


def _cmd_data_make(args: argparse.Namespace) -> int:
    from ggik.data import ProblemSet
    from ggik.kinematics.random_robots import random_robot

    robots = [load_robot(spec) for spec in (args.robots or [])]
    g = torch.Generator().manual_seed(args.seed)
    robots += [random_robot(dof, g, name=f"random{dof}_{i}") for i, dof in enumerate(args.random or [])]
    if not robots:
        raise GGIKError("name robots (--robots) and/or random robot DOFs (--random)")
    problems = ProblemSet.generate(robots, args.n, args.seed)
    problems.save(args.output)
    print(f"wrote {args.output}: {len(problems)} problems, robots {[r.name for r in robots]}, seed {args.seed}")
    return 0


def _cmd_data_show(args: argparse.Namespace) -> int:
    from ggik.data import ProblemSet

    problems = ProblemSet.load(args.file)
    print(f"{args.file}: {len(problems)} problems, seed {problems.seed}")
    for i, entry in enumerate(problems.robots):
        kind = "shipped" if not entry["urdf"] else "URDF inside the file"
        print(f"  {entry['name']:<20} {int((problems.robot_index == i).sum()):>6} problems ({kind})")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from ggik.checkpoint import load_model, training_budget

    model, ckpt = load_model(args.checkpoint)
    print(f"checkpoint {args.checkpoint}")
    print(f"  ggik {ckpt['ggik_version']} (torch {ckpt.get('torch_version', '?')}), format {ckpt['format']}")
    print(f"  step {ckpt['step']}, examples {ckpt['examples']:,}, processes {ckpt.get('world_size', 1)}")
    print(f"  training budget: {training_budget(ckpt)}")
    print(f"  parameters {model.num_parameters():,}")
    print(f"  training robots: {json.dumps(ckpt['training_robots'])}")
    if ckpt.get("init_from"):
        print(f"  initialised from: {json.dumps(ckpt['init_from'])}")
    print(f"  model config: {json.dumps(ckpt['config']['model'])}")
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from ggik.checkpoint import export_checkpoint

    payload = export_checkpoint(args.checkpoint, args.output)
    size = Path(args.output).stat().st_size
    print(f"wrote {args.output}: {size / 2**20:.2f} MB, weights only ({payload['format']}), step {payload['step']}, "
          f"{payload['examples']:,} examples, from {args.checkpoint} ({Path(args.checkpoint).stat().st_size / 2**20:.2f} MB)")
    return 0


def _cmd_solve(args: argparse.Namespace) -> int:
    from ggik.kinematics.geometry import make_transform, quat_to_matrix
    from ggik.ik.solver import GGIK

    if (args.robot is None) == (args.urdf is None):
        raise GGIKError("give exactly one of --robot NAME or --urdf FILE")
    if args.n < 1:
        raise GGIKError(f"-n (number of samples) must be at least 1, got {args.n}")
    robot = Robot.from_name(args.robot) if args.robot else Robot.from_urdf(args.urdf, args.base, args.ee)
    x, y, z, qw, qx, qy, qz = args.pose
    quat = torch.tensor([qw, qx, qy, qz], dtype=torch.float64)
    if not torch.isfinite(quat).all() or abs(float(quat.norm()) - 1.0) > 1e-3:
        raise GGIKError(f"the quaternion (w x y z) must be a unit quaternion, got norm {float(quat.norm()):.6g}")
    T = make_transform(quat_to_matrix(quat), torch.tensor([x, y, z], dtype=torch.float64))
    solver = GGIK.load(args.ckpt) if args.ckpt else GGIK.pretrained()
    gen = torch.Generator().manual_seed(args.seed)
    result = solver.solve(robot, T, num_samples=args.n, refine=args.refine, generator=gen)
    rows = [
        {
            "q": [round(v, 6) for v in result.q[0, k].tolist()],
            "pos_err_m": result.pos_err[0, k].item(),
            "rot_err_rad": result.rot_err[0, k].item(),
            "success": bool(result.success[0, k]),
            "within_limits": bool(result.within_limits[0, k]),
        }
        for k in range(result.q.shape[1])
    ]
    if args.json:
        print(json.dumps({"robot": robot.name, "joint_names": list(robot.joint_names), "refine": args.refine, "solutions": rows}, indent=1))
        return 0
    print(f"{robot.name}: {len(rows)} solutions ({'raw model samples' if args.refine is None else 'refined with ' + args.refine}), best first")
    print(f"{'#':>3}  {'pos err [mm]':>12} {'rot err [deg]':>13} {'ok':>3} {'in limits':>9}  q [rad] ({', '.join(robot.joint_names)})")
    for k, r in enumerate(rows):
        print(f"{k:>3}  {1e3 * r['pos_err_m']:12.3f} {torch.rad2deg(torch.tensor(r['rot_err_rad'])).item():13.3f} "
              f"{'yes' if r['success'] else 'no':>3} {'yes' if r['within_limits'] else 'no':>9}  {r['q']}")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from ggik.evaluation.tables import EvalConfig, accuracy_table, limits_table, seeding_table
    from ggik.ik.solver import GGIK

    solver = GGIK.load(args.ckpt) if args.ckpt else GGIK.pretrained()
    names = args.robots or available_robots()
    robots = [load_robot(n) for n in names]
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed, slsqp_problems=args.slsqp_goals,
                     mmd_problems=min(args.mmd_goals, args.n))
    if args.threads:
        torch.set_num_threads(args.threads)
    make = {"accuracy": accuracy_table, "seeding": seeding_table, "limits": limits_table}[args.action]
    extra = {"figures_dir": args.out_dir} if args.action == "accuracy" else {}
    table = make(solver.model, robots, cfg, progress=not args.no_progress, **extra)
    md, csv = table.write(Path(args.out_dir) / args.action, command="ggik " + shlex.join(args.argv), seed=args.seed)
    print(md.read_text())
    print(f"wrote {md} and {csv}")
    return 0


def _cmd_eval_generalisation(args: argparse.Namespace) -> int:
    from ggik.checkpoint import training_set
    from ggik.evaluation.generalisation import generalisation_points, generalisation_table
    from ggik.evaluation.tables import EvalConfig
    from ggik.ik.solver import GGIK

    solver = GGIK.load(args.ckpt) if args.ckpt else GGIK.pretrained()
    training = training_set(solver.checkpoint)
    robots = None if args.robots is None else [load_robot(n) for n in args.robots]
    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = EvalConfig(problems=args.n, samples=args.samples, seed=args.seed)
    table = generalisation_table(solver.model, training, cfg, robots=robots, dofs=args.dofs, scales=args.scales,
                                 family_size=args.family_size, progress=not args.no_progress)
    out = Path(args.out_dir)
    md, csv = table.write(out / "generalisation", command="ggik " + shlex.join(args.argv), seed=args.seed)
    print(md.read_text())
    print(f"wrote {md} and {csv}")
    if args.figure:
        from ggik.evaluation.plots import plot_generalisation

        points = [(family, dist, raw, refined) for family, _, dist, raw, refined in generalisation_points(table)]
        png = plot_generalisation(points, out / "generalisation.png",
                                  title=f"Success on robots outside the training set ({args.n} goals x {args.samples} samples)")
        print(f"wrote {png}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ggik", description="Generative graphical inverse kinematics.")
    sub = parser.add_subparsers(dest="command", required=True)

    def chain_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--base", help="base link (default: the URDF root)")
        p.add_argument("--ee", help="end-effector link (default: the end of the chain, if unambiguous)")

    robot = sub.add_parser("robot", help="inspect robots").add_subparsers(dest="action", required=True)
    p = robot.add_parser("show", help="print the kinematic chain of a URDF or shipped robot")
    p.add_argument("robot", help="URDF file or shipped robot name")
    chain_args(p)
    p.set_defaults(func=_cmd_robot_show)

    graph = sub.add_parser("graph", help="GGIK graphs").add_subparsers(dest="action", required=True)
    p = graph.add_parser("build", help="write the graph of robots as JSON")
    p.add_argument("robots", nargs="*", help="URDF files or shipped robot names")
    p.add_argument("--all", action="store_true", help="every shipped robot")
    p.add_argument("-o", "--output", help="output file, or folder (one <robot>.json each); default stdout")
    chain_args(p)
    p.set_defaults(func=_cmd_graph_build)
    p = graph.add_parser("show", help="print nodes and known edges of a robot's graph")
    p.add_argument("robot", help="URDF file or shipped robot name")
    chain_args(p)
    p.set_defaults(func=_cmd_graph_show)

    p = sub.add_parser("train", help="train a GGIK model (resumable; runs under torchrun for DDP)")
    p.add_argument("--config", help="YAML file of overrides, e.g. train/configs/default.yaml")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value (repeatable)")
    p.add_argument("--out", help="run folder (default runs/<config>-<time>)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue RUN_DIR/last.pt exactly")
    p.add_argument("--init", metavar="CKPT", help="start a new run (step 0, fresh optimiser) from the weights of CKPT "
                   "(full or weights-only; its model config is taken), e.g. to fine-tune to a robot")
    p.add_argument("--device", default="cpu", help="cpu, cuda, cuda:1, ...")
    p.add_argument("--wandb", default="disabled", choices=["disabled", "offline", "online"])
    p.add_argument("--max-minutes", type=float, help="stop (and checkpoint) after this much wall time")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_train)

    data = sub.add_parser("data", help="fixed problem sets").add_subparsers(dest="action", required=True)
    p = data.add_parser("make", help="write a seeded problem set (goal poses with known solutions)")
    p.add_argument("--robots", nargs="*", help="URDF files or shipped robot names")
    p.add_argument("--random", nargs="*", type=int, help="DOFs of random robots to add")
    p.add_argument("-n", type=int, default=200, help="problems per robot")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-o", "--output", required=True)
    p.set_defaults(func=_cmd_data_make)
    p = data.add_parser("show", help="summarise a problem set file")
    p.add_argument("file")
    p.set_defaults(func=_cmd_data_show)

    p = sub.add_parser("solve", help="solve IK for one goal pose with a trained model")
    p.add_argument("--robot", help="shipped robot name")
    p.add_argument("--urdf", help="URDF file")
    chain_args(p)
    p.add_argument("--pose", nargs=7, type=float, required=True, metavar=("X", "Y", "Z", "QW", "QX", "QY", "QZ"),
                   help="EE goal in the base-link frame: position [m] and unit quaternion (w x y z)")
    p.add_argument("-n", type=int, default=32, help="number of samples")
    p.add_argument("--refine", choices=["lm", "slsqp"], help="refine every sample with a local solver")
    p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=_cmd_solve)

    ev = sub.add_parser("eval", help="evaluation suite (writes Markdown + CSV under eval/results/)")
    ev_sub = ev.add_subparsers(dest="action", required=True)
    for name, text in (("accuracy", "paper Table 1: raw sample errors, success, limits, diversity"),
                       ("seeding", "paper Table 2: LM and SLSQP from random starts vs GGIK samples"),
                       ("limits", "fraction of raw samples within joint limits, per joint")):
        p = ev_sub.add_parser(name, help=text)
        p.add_argument("--ckpt", help="checkpoint (default: the shipped model)")
        p.add_argument("--robots", nargs="*", help="shipped robot names or URDF files (default: all shipped robots)")
        p.add_argument("-n", type=int, default=2000, help="goals per robot")
        p.add_argument("-s", "--samples", type=int, default=32, help="samples (and random starts) per goal")
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--slsqp-goals", type=int, default=50, help="goals per robot given to SLSQP (slow)")
        p.add_argument("--mmd-goals", type=int, default=200, help="goals per robot used for the MMD diversity score")
        p.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
        p.add_argument("--out-dir", default="eval/results")
        p.add_argument("--no-progress", action="store_true")
        p.set_defaults(func=_cmd_eval)
    p = ev_sub.add_parser("generalisation", help="raw and refined success on robots outside the checkpoint's training set")
    p.add_argument("ckpt", nargs="?", help="checkpoint, full or weights-only (default: the shipped model); its "
                   "training_robots decide what is unseen")
    p.add_argument("--robots", nargs="*", help="unseen robots: shipped names or URDF files (default: every urdfs/ robot "
                   "not in the training set; none if given without names)")
    p.add_argument("--dofs", nargs="*", type=int, default=[6, 7, 8], help="one family of random DH robots per DOF")
    p.add_argument("--scales", nargs="*", type=float, default=[0.1, 0.2, 0.4],
                   help="one family of randomize_links(training robot, r) per scale r")
    p.add_argument("--family-size", type=int, default=10, help="robots per random family")
    p.add_argument("-n", type=int, default=500, help="goals per robot")
    p.add_argument("-s", "--samples", type=int, default=32, help="samples per goal (LM refines each)")
    p.add_argument("--seed", type=int, default=0, help="seed of goals, samples and the random robots")
    p.add_argument("--figure", action="store_true", help="also write OUT_DIR/generalisation.png (success vs distance)")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = default)")
    p.add_argument("--out-dir", default="eval/results")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cmd_eval_generalisation)

    p = sub.add_parser("info", help="what a checkpoint holds")
    p.add_argument("checkpoint")
    p.set_defaults(func=_cmd_info)

    p = sub.add_parser("export", help="write the weights-only form of a checkpoint (what ggik ships; cannot be resumed)")
    p.add_argument("checkpoint", help="a checkpoint written by ggik train, e.g. RUN_DIR/last.pt")
    p.add_argument("output", help="output file, e.g. ggik/weights/ggik_default.pt")
    p.set_defaults(func=_cmd_export)

    p = sub.add_parser("demo", help="solve a few goals with the shipped model: two training robots and an unseen random one")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--goals", type=int, default=3, help="goals per robot")
    p.add_argument("--samples", type=int, default=32, help="samples per goal")
    p.add_argument("--show", type=int, default=3, help="distinct solutions listed per goal")
    p.add_argument("--out", default="runs/demo/solutions.png", help="figure (PNG; needs matplotlib)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch CPU threads (0 = torch's default); batches this small run fastest on one, above all on a busy machine")
    p.set_defaults(func=_cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # recorded in result files
    try:
        return args.func(args)
    except (GGIKError, FileNotFoundError) as exc:
        print(f"ggik: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
