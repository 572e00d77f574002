"""Compiled code: said when it compiles, and never counted as the work's own time.

numba compiles a kernel the first time it runs with given argument types, and keeps the
machine code in its on-disk cache (``cache=True``), so a machine's first run of a kind
of work compiles and every later one loads the code at once. Work that runs compiled
code does it within :func:`watch`: the first compile in the block says one line on the
``puzzlespace.compile`` logger as it starts ("compiling the sliding:3x3 search once
(about 4 s); later runs start at once"; the command line prints it on stderr when that
is a terminal), and the
block's :attr:`Compiles.seconds` are the time spent compiling, which the work leaves
out of the time it reports; time limits are kept on :func:`clock`, which stands still
while numba compiles.

numba's compile events (``numba.core.event``) tell a compile from a load from the cache;
they cover every ``njit`` function, the ones a kernel calls too, in whatever thread it
runs. A compile belongs to the innermost block open when it starts (a build's within a
solve's is the build's). A ``cfunc`` (the neighbour kernels of
:mod:`puzzlespace.explore.engine`) compiles as it is made, with no event: :func:`cfunc`
makes one and counts its compiling once made.
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger("puzzlespace.compile")

#: Seconds a role's first compile takes on an idle 2-core machine (see :func:`watch`).
EXPECTED = {"search": 4.0, "exploration": 4.0, "build": 4.0}


class Compiles:
    """What numba compiled within a :func:`watch` block: ``seconds`` spent compiling
    (outermost compiles only: a kernel's callees compile within it), whether its one line
    was said, and the block's own time (:meth:`elapsed`)."""

    def __init__(self, what: str, expected=None):
        self.what, self.expected = what, expected  # an Estimate (puzzlespace.calibration)
        self.seconds = 0.0
        self.said = False
        self.opened, self._before = time.perf_counter(), 0.0

    def restart(self) -> None:
        """Count :meth:`elapsed` from now (the code loaded: what comes next is the work)."""
        self.opened, self._before = time.perf_counter(), self.seconds

    def elapsed(self) -> float:
        """Seconds since the block opened (or :meth:`restart`), less the compiling in them:
        the work's own time."""
        return max(0.0, time.perf_counter() - self.opened - (self.seconds - self._before))

    def started(self) -> None:
        """Say the line, unless this block or an earlier one of the same work said it."""
        if not self.said:
            self.said = True
            if self.what not in _SAID:
                _SAID.add(self.what)
                log.info("compiling %s once (%s); later runs start at once", self.what, self.expected)


#: The work whose compiling was said in this process (one line each, however many blocks).
_SAID: set[str] = set()


_ACTIVE: list[Compiles] = []
_LOCK = threading.Lock()
#: Seconds this process has spent compiling (outermost compiles), in a block or not.
_TOTAL = [0.0]


def clock() -> float:
    """Seconds on a clock that stands still while numba compiles (in any thread, once a
    :func:`watch` has opened in the process): ``time.monotonic()`` less every compile's
    time. Time limits and deadlines are kept on it, so that compiling, once a machine,
    never counts against them. Read without the lock (searches read it often): a compile
    ending meanwhile moves it by no more than that compile's time."""
    listener = _REGISTERED[0] if _REGISTERED else None
    running = time.perf_counter() - listener._since if listener is not None and listener._running else 0.0
    return time.monotonic() - _TOTAL[0] - running


def total_seconds() -> float:
    """Seconds this process has spent compiling so far (of the compiles seen since the
    first :func:`watch` block opened)."""
    return _TOTAL[0]


def _spent(target: Compiles | None, seconds: float) -> None:
    """Count ``seconds`` of compiling, in ``target``'s block if any (the caller holds _LOCK)."""
    _TOTAL[0] += seconds
    if target is not None:
        target.seconds += seconds


class _Listener:
    """Registered with numba once: times numba's compiling as wall-clock time, the union
    of the threads' outermost compiles (threads waiting on numba's compiler lock for the
    same kernel overlap one compile), and hands it to the innermost :func:`watch` block
    open when it started (none: counted in :func:`total_seconds` alone)."""

    def __init__(self):
        self._local = threading.local()
        self._running = 0  # outermost compiles under way, in every thread
        self._since = 0.0
        self._target: Compiles | None = None

    def notify(self, event) -> None:
        local = self._local
        depth = getattr(local, "depth", 0)
        local.depth = depth + 1 if event.is_start else depth - 1
        if depth != (0 if event.is_start else 1):
            return
        with _LOCK:
            if event.is_start:
                if self._running == 0:
                    self._since, self._target = time.perf_counter(), _ACTIVE[-1] if _ACTIVE else None
                if _ACTIVE:
                    _ACTIVE[-1].started()
                self._running += 1
            else:
                self._running -= 1
                if self._running == 0:
                    _spent(self._target, time.perf_counter() - self._since)

    on_start = on_end = notify


_REGISTERED: list[_Listener] = []


@contextmanager
def watch(what: str, role: str = "search") -> Iterator[Compiles]:
    """Within the block, numba's compiles are timed and the first one is said (see the
    module docstring); ``what`` names the work ("the sliding:3x3 search"), ``role`` is a
    key of :data:`EXPECTED`. Imports numba: for work that runs compiled code."""
    from .calibration import estimate

    compiles = Compiles(what, estimate(EXPECTED[role]))
    with _LOCK:
        if not _REGISTERED:
            from numba.core import event

            event.Listener.register(_Listener)  # numba's listener interface, met without subclassing
            _REGISTERED.append(_Listener())
            event.register("numba:compile", _REGISTERED[0])
        _ACTIVE.append(compiles)
    try:
        yield compiles
    finally:
        with _LOCK:
            _ACTIVE.remove(compiles)


def cfunc(signature, function, cache: bool = True):
    """``function`` made a numba ``cfunc`` of ``signature`` (loaded from numba's cache where
    it is there, with ``cache``). Its compiling, if it compiled, counts in the innermost
    open :func:`watch` block (whose line is said then, the compile done)."""
    import numba as nb

    t0, counted = time.perf_counter(), _TOTAL[0]
    kernel = nb.cfunc(signature, cache=cache, nopython=True)(function)
    if kernel.cache_hits == 0:
        with _LOCK:  # the kernels it calls compiled within it, with events: counted already
            if _ACTIVE:
                _ACTIVE[-1].started()
            _spent(_ACTIVE[-1] if _ACTIVE else None, max(0.0, time.perf_counter() - t0 - (_TOTAL[0] - counted)))
    return kernel
