"""Exceptions raised by ggik. All derive from :class:`GGIKError` and from ``ValueError``."""

from __future__ import annotations

__all__ = ["GGIKError", "URDFError", "ChainError", "AmbiguousLinkError", "GraphError", "PathFileError", "GoalError"]


class GGIKError(ValueError):
    """Base class of every error ggik raises on bad input."""


class URDFError(GGIKError):
    """A URDF document that cannot be read: malformed XML, unexpanded xacro, bad numbers."""


class ChainError(GGIKError):
    """A kinematic chain that cannot be built: unknown links, no path, unsupported joints."""


class AmbiguousLinkError(ChainError):
    """A URDF whose base (``role`` "base": several root links) or end-effector link (``role`` "ee": several leaf
    links below the base) must be named; ``candidates`` lists the links to choose from."""

    def __init__(self, message: str, role: str, candidates: list[str]) -> None:
        super().__init__(message)
        self.role, self.candidates = role, candidates


class GraphError(GGIKError):
    """A chain the GGIK point-set graph cannot represent (e.g. an unlocked prismatic joint)."""


class PathFileError(GGIKError):
    """A path (waypoint) or trajectory file that cannot be read: wrong column count, a non-number, NaN, a non-unit
    quaternion, no rows."""


class GoalError(GGIKError):
    """An IK goal that cannot be used: an unknown goal kind, a wrong shape, NaN/inf, an axis of zero length."""
