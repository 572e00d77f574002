"""``python -m puzzlespace`` and the ``puzzlespace`` script: Ctrl-C at any moment, even
while the program is still loading, ends it with one line and exit status 130, and so
does SIGTERM (``kill``, a batch system's end of a job): the same line, and what was
saved. The first of them stops the command; any later one, while it stops (writing a
checkpoint, closing a cluster), is absorbed, so that the stop is never cut short."""

import os
import signal
import sys

#: Seconds before an interrupt that could not be raised where it came is raised again.
SOON = 0.001

_stopping = False


def _interrupt(signum, frame) -> None:
    """SIGINT's and SIGTERM's handler: the first raises KeyboardInterrupt (see
    :func:`_raise`); those that come after it are absorbed."""
    global _stopping
    if _stopping:
        return
    _stopping = True
    _raise(signum, frame)


def _raise(signum, frame) -> None:
    """Raise KeyboardInterrupt, or, in Python code that compiled code called back (numba's
    unpickling of its constants, which turns any exception into a SystemError), a moment
    later (:func:`_raise_soon`)."""
    if _called_back(frame):
        _raise_soon()
        return
    raise KeyboardInterrupt


def _called_back(frame) -> bool:
    """Whether ``frame`` (None: unknown) runs within a call from numba's compiled code."""
    serialize = sys.modules.get("numba.core.serialize")
    while frame is not None and serialize is not None:
        if frame.f_code.co_filename == serialize.__file__:
            return True
        frame = frame.f_back
    return False


def _raise_soon() -> None:
    """Raise KeyboardInterrupt :data:`SOON` seconds from now, by a timer's signal,
    wherever the main thread then is (a signal taken meanwhile would be lost the same
    way, so the timer is set again until it is set)."""
    delay = SOON
    while True:
        try:
            signal.signal(signal.SIGALRM, _raise)
            signal.setitimer(signal.ITIMER_REAL, delay)
            return
        except KeyboardInterrupt:  # an earlier try's timer, taken here: set it again
            delay *= 2


def _interrupt_again(unraisable) -> None:
    """A Ctrl-C that came while Python ran a finalizer or a weakref callback (as the
    import system's, loading a module) is only reported there, never raised: it is raised
    again a moment later (:func:`_raise_soon`). Any other such error is reported as
    Python would."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)
        return
    _raise_soon()


def main() -> None:
    sys.unraisablehook = _interrupt_again
    try:
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not where it was left ignored
            signal.signal(signal.SIGINT, _interrupt)
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _interrupt)
        from .cli import main as run
    except KeyboardInterrupt:
        sys.unraisablehook = lambda unraisable: None  # as cliparse.quiet_finalizers, before it is loaded
        sys.stderr.write("stopped: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    run()


if __name__ == "__main__":
    main()
