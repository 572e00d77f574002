"""When a search must stop: its time limit, or a cancel event set from another thread."""

from __future__ import annotations

import threading

from ..compiled import clock


class Clock:
    """The seconds since a search started, the seconds left of its ``time_limit`` (None:
    no limit) and why it must stop now, if it must; numba's compiling is left out of all
    of them (:func:`puzzlespace.compiled.clock`)."""

    def __init__(self, time_limit: float | None, cancel: threading.Event | None = None):
        self.t0 = clock()
        self.limit = time_limit
        self.cancel = cancel

    def elapsed(self) -> float:
        return clock() - self.t0

    def left(self) -> float | None:
        return None if self.limit is None else self.limit - self.elapsed()

    def stop_reason(self) -> str | None:
        """"cancelled" once ``cancel`` is set, "time limit reached" once the limit has
        passed, else None."""
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        if self.limit is not None and self.elapsed() > self.limit:
            return "time limit reached"
        return None
