"""Package discovery (the rest of the metadata is in pyproject.toml).

pyproject.toml's ``packages.find`` cannot also map the top-level ``urdfs/`` folder in as ``ggik.urdfs``;
this file does both: every package under ``ggik/`` is found, so a new subpackage is never left out. ``ggik.weights``
(the shipped model, a data folder without ``__init__.py``) is named as a package too, so setuptools ships it without
its "Package would be ignored" warning.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["ggik", "ggik.*"]) + ["ggik.urdfs", "ggik.weights"],
    package_dir={"ggik.urdfs": "urdfs"},
)
