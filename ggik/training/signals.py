"""Stop requests for long training loops: SIGTERM (cluster preemption, ``kill``) and SIGINT (Ctrl-C) set a flag
that the loop checks between steps, so that it finishes the current step, checkpoints and stops."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

__all__ = ["install_stop_handlers", "restore_handlers"]


def install_stop_handlers(request_stop: Callable[[], None]) -> dict:
    """Call ``request_stop()`` on SIGTERM and SIGINT; returns the previous handlers (nothing off the main thread,
    where Python cannot install signal handlers)."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    previous = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, lambda signum, frame: request_stop())
    return previous


def restore_handlers(previous: dict) -> None:
    """Put back the handlers :func:`install_stop_handlers` returned."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)
