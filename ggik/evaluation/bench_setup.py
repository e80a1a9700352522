"""What the benchmarks share: robots named on the command line, the checkpoint under test, the command that
reproduces a run, and the other processes loading the machine while it ran (for the tables' notes).

Every problem a benchmark cannot run as asked (unknown robot, missing checkpoint, bad option value) raises
:class:`BenchmarkError`, whose message is what the benchmark scripts of ``eval/`` print when they exit.
"""
from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Callable

from ggik import rng
from ggik.checkpoint import load_model
from ggik.errors import ChainError, GGIKError
from ggik.evaluation.report import Table, command_line
from ggik.kinematics import Robot, available_robots, random_robot
from ggik.nn.cvae import GGIKModel
from ggik.rng import step_generator

__all__ = ["BenchmarkError", "script_command", "run_table_script", "default_robots", "robot_from_arg", "load_bench_model", "busy_processes"]

_RANDOM = re.compile(r"^random(\d+)$")


class BenchmarkError(GGIKError):
    """A benchmark that cannot run as asked; the message names the option or input at fault."""


def script_command(script: str, argv: list[str] | None) -> str:
    """The command that reproduces this run: ``python eval/NAME.py ARGS`` (also when ``main(argv)`` is called).

    ``script`` is the script's path (``__file__``; shown relative to the working directory), ``argv`` its
    arguments (None: ``sys.argv``, whose first entry is the script)."""
    return command_line(None if argv is None else [script] + list(argv))


def run_table_script(script: str, argv: list[str] | None, seed: int, run: Callable[[str], Table]) -> int:
    """The common end of the table-writing eval scripts: ``run(command)`` with the command that reproduces the run
    (:func:`script_command`), then its table printed as Markdown; a :class:`BenchmarkError` exits with its message
    (status 1, no traceback). Returns 0."""
    command = script_command(script, argv)
    try:
        table = run(command)
    except BenchmarkError as exc:
        raise SystemExit(str(exc)) from None
    print(table.markdown(command, seed))
    return 0


def default_robots() -> list[str]:
    """The five GGIK paper robots first, then the rest of urdfs/."""
    paper = available_robots(paper_only=True)
    return paper + [r for r in available_robots() if r not in paper]


def robot_from_arg(name: str, seed: int) -> Robot:
    """A shipped robot by name, or ``randomN``: a random N-DOF robot (:func:`ggik.random_robot`, drawn from the
    stream ``step_generator(seed, rng.BENCH_RANDOM_ROBOT, N)``).

    Raises :class:`BenchmarkError` (listing the shipped robots for an unknown name).
    """
    m = _RANDOM.match(name)
    if m:
        dof = int(m.group(1))
        if dof < 2:
            raise BenchmarkError(f"{name}: a random robot needs at least 2 DOF")
        return random_robot(dof, step_generator(seed, rng.BENCH_RANDOM_ROBOT, dof), name=name)
    try:
        return Robot.from_name(name)
    except ChainError as exc:  # lists the shipped robots
        raise BenchmarkError(f"{exc} (or randomN for a random N-DOF robot)") from None


def load_bench_model(path: str | Path) -> tuple[GGIKModel, dict]:
    """(model in eval mode, checkpoint dict) of a ``ggik train`` checkpoint; :class:`BenchmarkError` (``--ckpt: ...``)
    for a missing or unusable file."""
    try:
        return load_model(path)
    except (FileNotFoundError, GGIKError) as exc:
        raise BenchmarkError(f"--ckpt: {exc}") from None


def _cpu_ticks() -> dict[int, tuple[int, str]]:
    """pid -> (utime + stime in clock ticks, command line) of every process readable in /proc."""
    out = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
            cmd = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
            out[int(entry.name)] = (ticks, cmd or stat[stat.index("(") + 1 : stat.rindex(")")])
        except (OSError, ValueError, IndexError):
            continue
    return out


def busy_processes(window_s: float = 1.0, min_cpu: float = 0.1) -> str:
    """Other processes that used more than ``min_cpu`` CPUs (0.1 = 10 % of one core) during ``window_s`` seconds.

    Returns a one-line description, e.g. ``"pid 14017 (168 % CPU): python ggik train ..."``; Linux only
    (reads /proc), elsewhere says it could not tell.
    """
    if not window_s > 0:
        raise ValueError(f"busy_processes: window_s must be positive, got {window_s}")
    if not Path("/proc/self/stat").exists():
        return "unknown (no /proc on this system)"
    hz = os.sysconf("SC_CLK_TCK")
    a = _cpu_ticks()
    time.sleep(window_s)
    b = _cpu_ticks()
    me = os.getpid()
    busy = []
    for pid, (ticks, cmd) in b.items():
        if pid == me or pid not in a:
            continue
        cpu = (ticks - a[pid][0]) / hz / window_s
        if cpu >= min_cpu:
            busy.append((cpu, pid, cmd))
    if not busy:
        return f"nothing else above {100 * min_cpu:.0f} % of a core"
    busy.sort(reverse=True)
    return "; ".join(f"pid {pid} ({100 * cpu:.0f} % CPU): {cmd[:90]}" for cpu, pid, cmd in busy[:5])
