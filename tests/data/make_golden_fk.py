"""Write tests/data/golden_fk.json from ../shared/robots.md (project reference material).

robots.md is not shipped (a fresh clone has no ../shared), so the golden values the tests check are
committed as data: this script extracts exactly those numbers, as written in robots.md, and the suite
reads the JSON. Run it from anywhere after robots.md changes::

    .venv/bin/python tests/data/make_golden_fk.py          # (re)write tests/data/golden_fk.json
    .venv/bin/python tests/data/make_golden_fk.py --check  # exit 1 if the committed JSON is out of date

``GGIK_SHARED_DIR`` overrides the location of ../shared (default: the ``shared`` folder next to the repo
root), as in tests/conftest.py. tests/test_urdfs.py::test_golden_fk_json_matches_robots_md regenerates the
data in memory with :func:`golden_from_robots_md` whenever robots.md is present, so the JSON cannot drift.

What is extracted (nothing else; the reference URDFs are never read):

* ``fk_checks``: our robot name -> the FK check poses of robots.md, each ``{"q", "position",
  "quaternion_wxyz"}`` (EE in the URDF base link; 6-decimal values, compare to ~1e-6, quaternions up to sign);
* ``dh_tables``: the standard-DH tables (``a``, ``d``, ``alpha``; theta offsets 0) of the GGIK accuracy
  experiment, by the robot names robots.md uses. ``π`` fractions are stored as float64 (``math.pi / 2``).

Pure standard library: it imports neither ggik nor torch.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUT = Path(__file__).resolve().with_name("golden_fk.json")
SOURCE = "robots.md of ../shared (project reference material), extracted by tests/data/make_golden_fk.py"

#: File names of the robots.md sections (the original URDFs) -> our robot names.
ROBOT_OF_FILE = {
    "ur10_mod.urdf": "ur10",
    "kuka_iiwr.urdf": "lbr_iiwa",
    "panda_arm.urdf": "panda",
    "lwa4d.urdf": "schunk_lwa4d",
    "lwa4p.urdf": "schunk_lwa4p",
    "kuka_lwr.urdf": "kuka_lwr",
    "irb140.urdf": "irb140",
    "kr16_2.urdf": "kr16_2",
    "puma560_robot.urdf": "puma560",
}


def shared_dir() -> Path:
    """../shared relative to the repo root, or ``$GGIK_SHARED_DIR``."""
    return Path(os.environ.get("GGIK_SHARED_DIR") or REPO_ROOT.parent / "shared")


def _number(text: str) -> float:
    """A number of robots.md: '0.5723', '−0.612', 'π', 'π/2', '−π/2' (unicode minus and pi)."""
    text = text.strip().replace("\u2212", "-")
    if "\u03c0" not in text:
        return float(text)
    sign = -1.0 if text.startswith("-") else 1.0
    head, _, den = text.lstrip("-").partition("/")
    mult = head.replace("\u03c0", "") or "1"
    return sign * float(mult) * math.pi / (float(den) if den else 1.0)


def _numbers(text: str) -> list[float]:
    return [_number(v) for v in text.strip().strip("[]").split(",")]


def fk_checks(robots_md: str) -> dict[str, list[dict[str, list[float]]]]:
    """Our robot name -> [{"q", "position", "quaternion_wxyz"}] of the FK-check tables of robots.md."""
    checks: dict[str, list] = {}
    current = None
    for line in robots_md.splitlines():
        head = re.match(r"^## \d+\. .*?`([\w.]+\.urdf)`", line)
        if head:
            current = ROBOT_OF_FILE[head.group(1)]
            continue
        row = re.match(r"^\| `(\[[^\]]*\])` \| ([^|]+) \| ([^|]+) \|\s*$", line)
        if row and current is not None:
            q, pos, quat = (_numbers(g) for g in row.groups())
            if not (len(pos) == 3 and len(quat) == 4):
                raise ValueError(f"robots.md: bad FK check row for {current}: {line!r}")
            checks.setdefault(current, []).append({"q": q, "position": pos, "quaternion_wxyz": quat})
    if set(checks) != set(ROBOT_OF_FILE.values()):
        raise ValueError(
            f"robots.md: FK check tables found for {sorted(checks)}, expected {sorted(ROBOT_OF_FILE.values())}"
        )
    return checks


def dh_tables(robots_md: str) -> dict[str, dict[str, list[float]]]:
    """Robot -> {"a", "d", "alpha"} of the standard-DH tables of the GGIK accuracy experiment in robots.md."""
    if "## Standard-DH robots" not in robots_md:
        raise ValueError("robots.md: no '## Standard-DH robots' section")
    section = robots_md.split("## Standard-DH robots", 1)[1]
    tables = {}
    for line in section.splitlines():
        row = re.match(r"^\| ([^|]+?) \| (\d+) \| (\[[^\]]*\]) \| (\[[^\]]*\]) \| (\[[^\]]*\]) \|\s*$", line)
        if row:
            name, n, *cols = row.groups()
            a, d, alpha = (_numbers(c) for c in cols)
            if not len(a) == len(d) == len(alpha) == int(n):
                raise ValueError(f"robots.md: DH table of {name} does not have {n} rows: {line!r}")
            tables[name] = {"a": a, "d": d, "alpha": alpha}
    if not tables:
        raise ValueError("robots.md: no standard-DH table rows found")
    return tables


def golden_from_robots_md(robots_md: str) -> dict:
    """The content of golden_fk.json, from the text of robots.md."""
    return {"source": SOURCE, "fk_checks": fk_checks(robots_md), "dh_tables": dh_tables(robots_md)}


def dumps(data) -> str:
    """Stable JSON text: sorted keys, two-space indent, every list of numbers on one line, final newline."""

    def fmt(value, indent: str) -> str:
        if isinstance(value, dict):
            inner = indent + "  "
            items = [f"{inner}{json.dumps(k)}: {fmt(value[k], inner)}" for k in sorted(value)]
            return "{\n" + ",\n".join(items) + "\n" + indent + "}" if items else "{}"
        if isinstance(value, list) and not all(isinstance(v, (int, float)) for v in value):
            inner = indent + "  "
            return "[\n" + ",\n".join(inner + fmt(v, inner) for v in value) + "\n" + indent + "]"
        return json.dumps(value, ensure_ascii=False)

    return fmt(data, "") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 if golden_fk.json is out of date")
    args = parser.parse_args(argv)
    robots_md = shared_dir() / "robots.md"
    if not robots_md.is_file():
        print(
            f"make_golden_fk: {robots_md} not found. It is project reference material (../shared next to the "
            "repo root, or set GGIK_SHARED_DIR), not part of a clone; the committed tests/data/golden_fk.json "
            "stays as it is.",
            file=sys.stderr,
        )
        return 2
    text = dumps(golden_from_robots_md(robots_md.read_text(encoding="utf-8")))
    rel = OUTPUT.relative_to(REPO_ROOT)
    if args.check:
        same = OUTPUT.is_file() and OUTPUT.read_text(encoding="utf-8") == text
        print(f"make_golden_fk: {rel} is {'up to date' if same else 'OUT OF DATE: rerun without --check'}")
        return 0 if same else 1
    OUTPUT.write_text(text, encoding="utf-8")
    print(f"make_golden_fk: wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
