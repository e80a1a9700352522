"""The solve worker: one thread that runs the solves of the viewer, so that the interface never waits for one.

A goal dragged in the browser arrives many times a second; :meth:`SolveWorker.submit` only stores it and returns.
The thread takes the latest request when it is free, so a newer goal supersedes a pending one (only the latest is
solved) and a solve already running finishes, its outcome shown, before the newest starts.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["SolveWorker"]

Request = TypeVar("Request")
Outcome = TypeVar("Outcome")


class SolveWorker(Generic[Request, Outcome]):
    """A daemon thread that calls ``solve(request)`` for the latest submitted request, then ``done(outcome)``.

    Args:
        solve: request -> outcome (runs on the worker thread).
        done: called with each outcome on the worker thread (e.g. to update the scene); an exception in ``solve``
            or ``done`` is printed and the worker goes on.
        name: the thread's name.
    """

    def __init__(self, solve: Callable[[Request], Outcome], done: Callable[[Outcome], None], name: str = "ggik-view"):
        self.solve, self.done = solve, done
        self.pending: Request | None = None
        self.busy = False
        self.submitted = 0  #: requests submitted
        self.finished = 0  #: requests solved (superseded ones are never solved)
        self.condition = threading.Condition()
        self.stopping = False
        self.thread = threading.Thread(target=self.run, name=name, daemon=True)
        self.thread.start()

    def submit(self, request: Request) -> int:
        """Queue ``request`` in place of any pending one; returns its number (1, 2, ...). Never blocks on a solve."""
        with self.condition:
            self.pending = request
            self.submitted += 1
            self.condition.notify_all()
            return self.submitted

    def run(self) -> None:
        while True:
            with self.condition:
                while self.pending is None and not self.stopping:
                    self.condition.wait()
                if self.stopping:
                    return
                request, self.pending, self.busy = self.pending, None, True
                number = self.submitted
            try:
                assert request is not None
                self.done(self.solve(request))
            except Exception:  # a failed solve must not end the viewer's worker
                traceback.print_exc()
            with self.condition:
                self.busy = False
                self.finished = number
                self.condition.notify_all()

    def wait_idle(self, timeout: float = 30.0) -> bool:
        """Wait until every submitted request is solved or superseded and nothing runs; False on ``timeout`` [s]."""
        deadline = time.monotonic() + timeout
        with self.condition:
            while self.pending is not None or self.busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self.condition.wait(left)
        return True

    def stop(self, timeout: float = 5.0) -> None:
        """End the thread (after a running solve finishes, at most ``timeout`` [s] waited)."""
        with self.condition:
            self.stopping = True
            self.condition.notify_all()
        if self.thread is not threading.current_thread():
            self.thread.join(timeout)
