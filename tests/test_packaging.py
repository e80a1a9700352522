"""What the wheel ships: the packages setup.py hands to setuptools hold the library and none of the lab.

setup.py is run with ``setuptools.setup`` replaced by a recorder, so the package list checked is the one a build
uses (the wheel itself is built by tests/test_export.py). The studies live in ``benchmarks/`` of the repository;
none of their modules may reappear under ``ggik/``.
"""

from __future__ import annotations

import os
import runpy
from pathlib import Path

import pytest
import setuptools

REPO = Path(__file__).resolve().parents[1]
#: the studies moved out of ggik/evaluation into benchmarks/ (module names a wheel must not hold again)
STUDY_MODULES = {
    "recipe",
    "recipe_curves",
    "recipe_runner",
    "generalisation_study",
    "paper_tables",
    "layer_variants",
    "training_speed",
    "cascade_benchmark",
    "sampling_benchmark",
    "solver_benchmark",
    "solver_runs",
    "raw_success",
    "refinement_table",
    "bench_setup",
}


@pytest.fixture(scope="module")
def setup_kwargs() -> dict:
    """The keyword arguments setup.py passes to ``setuptools.setup``, run from the repository root."""
    recorded: dict = {}
    real = setuptools.setup
    cwd = Path.cwd()
    try:
        setuptools.setup = lambda **kwargs: recorded.update(kwargs)
        os.chdir(REPO)
        runpy.run_path(str(REPO / "setup.py"), run_name="__main__")
    finally:
        setuptools.setup = real
        os.chdir(cwd)
    return recorded


def package_files(kwargs: dict) -> list[Path]:
    """The .py files of every package the build ships, through its package_dir mapping."""
    files = []
    for package in kwargs["packages"]:
        folder = kwargs.get("package_dir", {}).get(package) or package.replace(".", "/")
        files += sorted((REPO / folder).glob("*.py"))
    return files


def test_the_wheel_ships_ggik_only(setup_kwargs):
    packages = setup_kwargs["packages"]
    assert "ggik" in packages and "ggik.evaluation" in packages
    assert all(p == "ggik" or p.startswith("ggik.") for p in packages), packages
    assert not [p for p in packages if "benchmarks" in p.split(".")], "the lab (benchmarks/) must not ship"


def test_no_study_module_ships(setup_kwargs):
    shipped = {f.stem for f in package_files(setup_kwargs)}
    assert shipped, "no module found: the package list or its folders changed"
    assert not shipped & STUDY_MODULES, (
        f"study modules in the wheel: {sorted(shipped & STUDY_MODULES)} (they belong in benchmarks/)"
    )


def test_the_lab_is_beside_the_package():
    """benchmarks/ is a package of the repository (python -m benchmarks.STUDY.SCRIPT), not of ggik."""
    assert (REPO / "benchmarks" / "__init__.py").is_file() and (REPO / "benchmarks" / "README.md").is_file()
    assert not (REPO / "ggik" / "benchmarks").exists()


def test_no_stale_build_folder_would_ship_removed_modules():
    """setuptools copies build/lib into every wheel built from this checkout without cleaning it: a module moved out of
    ggik/ (e.g. a study) would ship again from a stale copy there."""
    stale_root = REPO / "build" / "lib" / "ggik"
    if not stale_root.is_dir():
        return
    stale = sorted(
        str(p.relative_to(stale_root.parent))
        for p in stale_root.rglob("*.py")
        if not (REPO / p.relative_to(stale_root.parent)).is_file() and "urdfs" not in p.parts
    )
    assert not stale, f"build/lib holds modules the source tree no longer has: {stale} (rm -rf build, or make clean)"
