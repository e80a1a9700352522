"""What ``ggik path`` prints: the trajectory's summary in named, explained fields, waypoints numbered from 1 (the
CSV's data rows, in order), and with obstacles the pair that collides; plus the progress of a long search."""

from __future__ import annotations

import math
import sys
from typing import Any

from ggik.path.result import ranges

__all__ = ["path_summary", "print_path_summary", "ProgressBar"]


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def path_summary(robot: Any, poses: Any, result: Any, check: Any) -> dict[str, Any]:
    """The JSON-ready summary of a PathResult: waypoint numbers from 1; NaN (no valid trajectory) as None; with
    obstacles (``check``, a Clearance), the closest pair over the trajectory, by name."""
    summary: dict[str, Any] = {
        "robot": robot.name,
        "waypoints": int(poses.shape[0]),
        "valid": result.valid,
        "max_pos_err_mm": 1e3 * float(result.pos_err.max()),
        "max_rot_err_deg": math.degrees(float(result.rot_err.max())),
        "mjac_deg": result.mjac,
        "within_limits": result.within_limits,
        "length_rad": result.length,
        "time_to_valid_s": _finite(result.time_to_valid),
        "total_time_s": result.total_time,
        "candidates": result.candidates,
        "rounds": result.rounds,
        "unreached": [i + 1 for i in result.unreached],
        "large_moves": [i + 1 for i in result.large_moves],
        "no_candidate": [i + 1 for i in result.no_candidate],
    }
    if check is not None:
        from ggik.collision.report import clearance_report

        report = clearance_report(check, result.q)  # the waypoints' clearances (the motions between: collisions)
        at_obstacle, at_self = int(report.obstacle.argmin()), int(report.self.argmin())
        summary.update(
            collision_free=result.collision_free,
            min_clearance_mm=_finite(1e3 * float(result.min_clearance or 0.0)),
            obstacle_clearance_mm=_finite(1e3 * float(report.obstacle[at_obstacle])),
            obstacle_pair=(
                f"{report.obstacle_pair[at_obstacle]} at waypoint {at_obstacle + 1}"
                if report.obstacle_pair[at_obstacle]
                else ""
            ),
            self_clearance_mm=_finite(1e3 * float(report.self[at_self])),
            self_pair=f"{report.self_pair[at_self]} at waypoint {at_self + 1}" if report.self_pair[at_self] else "",
            collisions=[i + 1 for i in result.collisions],
        )
    return summary


#: field -> (label, unit or explanation) of the table form
_LABELS = {
    "valid": "valid (every waypoint reached, within the limits, moves allowed)",
    "max_pos_err_mm": "max position error [mm]",
    "max_rot_err_deg": "max rotation error [deg]",
    "mjac_deg": "largest joint move between waypoints [deg] (mjac)",
    "within_limits": "within the joint limits",
    "length_rad": "joint-space length [rad]",
    "time_to_valid_s": "time to the first valid trajectory [s]",
    "total_time_s": "total time [s]",
    "candidates": "candidate configurations refined",
    "rounds": "rounds of candidates",
    "collision_free": "collision-free (waypoints and the motions between them)",
    "min_clearance_mm": "min clearance, motions included [mm] (negative: overlap)",
    "obstacle_clearance_mm": "clearance to the nearest obstacle [mm]",
    "obstacle_pair": "  the pair",
    "self_clearance_mm": "clearance between the robot's own links [mm]",
    "self_pair": "  the pair",
}


def print_path_summary(summary: dict[str, Any], source: str, samples: int, out: str | None, joints: list[str]) -> None:
    """Print ``summary`` (:func:`path_summary`) as labelled lines, then the failing waypoints (numbered from 1)."""
    seeds = f"model samples: {samples}" if samples else "random starts only"
    print(f"{summary['robot']}: {summary['waypoints']} waypoints from {source} (numbered from 1), {seeds}")
    for key, label in _LABELS.items():
        if key not in summary:
            continue
        value = summary[key]
        if key == "time_to_valid_s" and value is None:
            text = "never (no valid trajectory)"
        elif value is None:
            text = "none checked"
        elif isinstance(value, bool):
            text = "yes" if value else "no"
        elif isinstance(value, float):
            text = f"{value:.4g}"
        else:
            text = str(value)
        print(f"  {label + ':':<58} {text}")
    failing = [
        (summary["unreached"], "waypoints not reached (tolerance or limits)"),
        (summary["large_moves"], "waypoints arrived at by a move above the allowed one"),
        (summary.get("collisions", []), "waypoints in collision, or whose arriving motion collides"),
        (summary["no_candidate"], "waypoints where no valid configuration was found at all (likely impossible there)"),
    ]
    for idx, what in failing:
        if idx:
            print(f"  {what}: {ranges(idx)}")
    print("valid trajectory" if summary["valid"] else "no valid trajectory: the best one found is reported")
    if out:
        print(f"wrote {out} ({summary['waypoints']} rows: {', '.join(joints)})")


class ProgressBar:
    """A progress bar of a path search on stderr, over its time limit [s]; shown only once the search reports
    ``delay`` [s] elapsed (short searches print nothing). The elapsed time is the one the search reports, read from
    its ``PathConfig.clock``: the bar runs on the search's clock. Call it as a :data:`ggik.path.PathProgress`;
    :meth:`close` at the end."""

    def __init__(self, time_limit: float, delay: float = 1.0) -> None:
        self.total = round(time_limit, 1)
        self.delay = delay
        self.bar: Any = None  #: the tqdm bar, once shown

    def __call__(self, rounds: int, elapsed: float, failing: int, valid: bool) -> None:
        state = f"round {rounds}, {'valid' if valid else f'{failing} waypoints failing'}"
        done = max(0.0, min(round(elapsed, 1), self.total))
        if self.bar is None:
            if elapsed < self.delay:
                return
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.total,
                initial=done,
                unit="s",
                file=sys.stderr,
                desc="path search",
                leave=False,
                postfix=state,
            )
            return
        self.bar.set_postfix_str(state, False)
        self.bar.update(done - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
