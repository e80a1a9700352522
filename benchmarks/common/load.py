"""The CPU-load probe of the timing studies: which other processes were busy while a study ran (for its notes)."""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["busy_processes"]


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
