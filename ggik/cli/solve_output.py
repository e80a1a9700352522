"""What ``ggik solve`` prints: the distinct solutions of a result (or the closest attempts), their clearances split
into obstacles and self-collision with the closest pairs named, and one summary line."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Listing", "solution_rows", "print_table", "CLOSEST_ATTEMPTS"]

CLOSEST_ATTEMPTS = 3  #: without a solution, this many distinct closest attempts are listed


@dataclass
class Listing:
    """The rows ``ggik solve`` lists (JSON-ready dicts), whether the goal is solved, and the summary line."""

    rows: list[dict[str, Any]]
    solved: bool
    summary: str


def _length(value: float) -> float | None:
    """A clearance [m] for JSON: None for +inf (no pair to measure)."""
    return value if math.isfinite(value) else None


def solution_rows(robot: Any, result: Any, check: Any, tol: Any, raw: bool, every: bool) -> Listing:
    """The :class:`Listing` of goal 0 of ``result`` (an IKResult sorted best first).

    A solution is a result within the tolerances ``tol``, within the joint limits and (with obstacles, ``check`` a
    Clearance) collision-free. Listed: the distinct solutions (:func:`ggik.ik.metrics.distinct_solutions`); with
    ``raw``, the distinct samples, ok or not; without a solution, the :data:`CLOSEST_ATTEMPTS` distinct closest
    results; with ``every``, every result. A result that reports handedness (``refine="dg"``) gives each row
    ``wrong_handedness``, and a closest attempt that is a mirror image of the arm says so in the summary."""
    import torch

    from ggik.ik.metrics import distinct_solutions

    q = result.q[0]
    ok = result.success[0] & result.within_limits[0]
    unbounded = ~robot.limited
    anything = torch.ones_like(ok)
    solutions = distinct_solutions(q, ok, unbounded)
    if every:
        listed = list(range(q.shape[0]))
    elif raw:
        listed = distinct_solutions(q, anything, unbounded)
    elif solutions:
        listed = solutions
    else:
        listed = distinct_solutions(q, anything, unbounded, CLOSEST_ATTEMPTS)
    rows: list[dict[str, Any]] = [
        {
            "q": [round(v, 6) for v in q[k].tolist()],
            "pos_err_m": float(result.pos_err[0, k]),
            "rot_err_rad": float(result.rot_err[0, k]),
            "ok": bool(ok[k]),
            "within_limits": bool(result.within_limits[0, k]),
        }
        for k in listed
    ]
    if result.wrong_handedness is not None:  # "dg": the angles of a mirror image of the arm miss the goal
        for row, k in zip(rows, listed):
            row["wrong_handedness"] = bool(result.wrong_handedness[0, k])
    if check is not None:
        from ggik.collision.report import clearance_report

        report = clearance_report(check, q[listed])
        for i, row in enumerate(rows):
            row["collision_free"] = bool(result.collision_free[0, listed[i]])
            row["obstacle_clearance_m"] = _length(float(report.obstacle[i]))
            row["obstacle_pair"] = report.obstacle_pair[i]
            row["self_clearance_m"] = _length(float(report.self[i]))
            row["self_pair"] = report.self_pair[i]
    tolerance = f"{1e3 * tol.pos_tol:g} mm / {math.degrees(tol.rot_tol):.3g} deg"
    n = len(solutions)
    what = "raw sample" if raw else "solution"
    if n:
        free = ", collision-free" if check is not None else ""
        summary = f"{n} distinct {what}{'s' if n != 1 else ''} within {tolerance}, within the joint limits{free}"
    else:
        best = rows[0] if rows else None
        summary = f"no {what} within {tolerance}"
        if best is not None:
            summary += f": closest {1e3 * best['pos_err_m']:.1f} mm / {math.degrees(best['rot_err_rad']):.2f} deg"
            why = []
            if best.get("wrong_handedness"):
                why.append("a mirror image of the arm: wrong handedness")
            if not best["within_limits"]:
                why.append("outside the joint limits")
            if check is not None and not best["collision_free"]:
                obstacle, self_ = best["obstacle_clearance_m"], best["self_clearance_m"]
                by_obstacle = self_ is None or (obstacle is not None and obstacle < self_)
                pair = best["obstacle_pair"] if by_obstacle else best["self_pair"]
                why.append(f"in collision: {pair}")
            if why:
                summary += f" ({'; '.join(why)})"
        if raw:
            summary += "; LM refines the samples into solutions (drop --raw)"
    return Listing(rows, n > 0, summary)


def _mm(value: float | None) -> str:
    return f"{'inf' if value is None else f'{1e3 * value:.1f}':>14}"


def print_table(robot: Any, config: Any, kind: str, listing: Listing, among: int | None) -> None:
    """Print ``listing`` as a table: a header line (what was solved and how), one row per listed result (numbered
    from 1, best first), the closest pairs with obstacles, and the summary line."""
    what = {
        "pose": "",
        "position+axis": ", position + axis goal: rot err = angle between the tool axes",
        "position": ", position goal: orientation free",
    }[kind]
    from ggik.ik.solve_config import DEFAULT_SAMPLES

    starts = f"{config.samples or DEFAULT_SAMPLES} model samples" if config.strategy != "random" else "random starts"
    how = {
        "samples": "raw model samples" if config.method is None else f"{starts} refined with {config.method}",
        "model-first": f"{config.method} from {starts}, random restarts if they fail",
        "random": f"{config.method} from {config.starts} random starts, no model",
    }[config.strategy]
    obstacles = "" if among is None else f", among {among} obstacles"
    print(f"{robot.name}: {how}{what}{obstacles}; {len(listing.rows)} listed, best first")
    if among is not None:
        print(
            "  obstacle / self [mm]: clearance to the nearest obstacle / between the robot's own links "
            "(negative: overlap); ok: within tolerance, within the limits, collision-free"
        )
    clear_head = "" if among is None else f" {'obstacle [mm]':>14} {'self [mm]':>14}"
    print(
        f"{'#':>3}  {'pos err [mm]':>12} {'rot err [deg]':>13} {'ok':>3} {'in limits':>9}{clear_head}  "
        f"q [rad] ({', '.join(robot.joint_names)})"
    )
    for k, r in enumerate(listing.rows, start=1):
        clear = "" if among is None else f" {_mm(r['obstacle_clearance_m'])} {_mm(r['self_clearance_m'])}"
        mirror = "  (a mirror image of the arm: wrong handedness)" if r.get("wrong_handedness") else ""
        print(
            f"{k:>3}  {1e3 * r['pos_err_m']:12.3f} {math.degrees(r['rot_err_rad']):13.3f} "
            f"{'yes' if r['ok'] else 'no':>3} {'yes' if r['within_limits'] else 'no':>9}{clear}  {r['q']}{mirror}"
        )
    if among is not None and listing.rows:
        first = listing.rows[0]
        pairs = [f"{first['obstacle_pair']} (obstacle)" if first["obstacle_pair"] else ""]
        pairs += [f"{first['self_pair']} (self)" if first["self_pair"] else ""]
        print(f"  closest pairs of #1: {', '.join(p for p in pairs if p) or 'none checked'}")
    print(listing.summary)
