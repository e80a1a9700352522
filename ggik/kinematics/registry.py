"""The robots shipped in ``urdfs/`` (the ``ggik.urdfs`` package data): their registry ``robots.yaml``."""

from __future__ import annotations

from importlib import resources

__all__ = ["shipped_robots", "available_robots"]


def shipped_robots() -> dict[str, dict]:
    """{name: entry} of ``robots.yaml``: each entry's ``file``, ``base_link``, ``ee_link`` and ``paper`` flag."""
    import yaml

    text = resources.files("ggik.urdfs").joinpath("robots.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def available_robots(paper_only: bool = False) -> list[str]:
    """Names of the robots shipped in ``urdfs/`` (optionally only the five GGIK paper robots)."""
    return [k for k, v in shipped_robots().items() if v.get("paper", False) or not paper_only]
