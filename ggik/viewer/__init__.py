"""Layer 13, the interactive viewer (the optional extra ``ggik[view]``): a robot, its obstacles and the IK solutions
of a goal you drag, in the browser (viser), re-solved on a worker thread as the goal moves; or an
:class:`ggik.IKResult` or a :class:`ggik.PathResult` shown in the same viewer.

``ggik view`` (:mod:`ggik.cli.view`) and :func:`view` start it; :class:`ggik.viewer.app.Viewer` is the object behind
both. Importing this package imports no viser; starting a viewer without it raises a GGIKError naming
``pip install 'ggik[view]'``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ggik.viewer.config import INSTALL_HINT, ViewerConfig, require_viser

if TYPE_CHECKING:
    from ggik.viewer.app import Viewer

__all__ = ["view", "ViewerConfig", "INSTALL_HINT"]


def view(robot: Any, result: Any = None, *, block: bool = True, **options: Any) -> Viewer:
    """Show ``robot`` and ``result`` in the browser viewer and print the URL to open.

    Args:
        robot: a :class:`ggik.Robot`.
        result: an :class:`ggik.IKResult` (its first goal's solutions, the distinct ones highlighted), a
            :class:`ggik.PathResult` (its trajectory played back, the tool path drawn), a (T, dof) tensor of joint
            values [rad] (a trajectory), or None: a live goal to drag, solved with the shipped model.
        block: serve until Ctrl-C (a script); False returns the running :class:`~ggik.viewer.app.Viewer` (a notebook,
            a test), which :meth:`~ggik.viewer.app.Viewer.close` stops.
        options: keyword arguments of :class:`~ggik.viewer.app.Viewer` (``solver``: a solver or a model file,
            ``obstacles``, ``goal``) and fields of :class:`ViewerConfig` (``port``, ``samples``, ...).

    Raises GGIKError without viser (naming ``pip install 'ggik[view]'``) or for a port that cannot be used; ValueError
    for a result of another robot.
    """
    require_viser()
    import dataclasses

    import torch

    from ggik.ik import IKResult
    from ggik.path import PathResult
    from ggik.viewer.app import Viewer

    fields = {f.name for f in dataclasses.fields(ViewerConfig)}
    config = options.pop("config", None) or ViewerConfig()
    config = dataclasses.replace(config, **{k: options.pop(k) for k in list(options) if k in fields})
    kwargs: dict[str, Any] = {}
    if isinstance(result, IKResult):
        kwargs["result"] = result
    elif isinstance(result, PathResult):
        kwargs["trajectory"] = result.q
    elif isinstance(result, torch.Tensor):
        kwargs["trajectory"] = result
    elif result is not None:
        raise TypeError(f"result must be an IKResult, a PathResult or a (T, dof) tensor, got {type(result).__name__}")
    viewer = Viewer(robot, config=config, **kwargs, **options)
    print(f"ggik view: open {viewer.url}", flush=True)
    if block:
        viewer.serve_forever()
    return viewer
