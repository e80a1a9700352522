"""Layer 8, path following: joint trajectories that reach every waypoint of an end-effector path (the problem of
CppFlow, Morgan et al. 2024), built on the IK layer (:mod:`ggik.ik`: LM, model sampling, tolerances).

:func:`solve_path` (:mod:`ggik.path.solve`) with its one configuration :class:`PathConfig` (:mod:`ggik.path.config`),
its result :class:`PathResult` (:mod:`ggik.path.result`); the parts: candidates along the path
(:mod:`ggik.path.candidates`), the search over them (:mod:`ggik.path.search`), LM on the whole trajectory
(:mod:`ggik.path.trajectory`), collisions on the motions between waypoints (:mod:`ggik.path.motion`) and path and
trajectory files (:mod:`ggik.path.files`). :meth:`ggik.GGIK.solve_path` is the user-facing call.
"""

from ggik.path.config import PathConfig
from ggik.path.result import PathResult
from ggik.path.solve import PathProgress, solve_path

__all__ = ["PathConfig", "PathResult", "PathProgress", "solve_path"]
