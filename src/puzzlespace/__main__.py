"""``python -m puzzlespace`` and the ``puzzlespace`` script: Ctrl-C at any moment, even
while the program is still loading, ends it with one line and exit status 130, and so
does SIGTERM (``kill``, a batch system's end of a job): the same line, and what was
saved."""

import os
import signal
import sys


def _interrupt_again(unraisable) -> None:
    """A Ctrl-C that came while Python ran a finalizer or a weakref callback (as the
    import system's, loading a module) is only reported there, never raised: it is raised
    again a moment later, by a timer's signal, wherever the main thread then is (a signal
    taken in this hook would be lost in it the same way). Any other such error is reported
    as Python would."""
    if not isinstance(unraisable.exc_value, KeyboardInterrupt):
        sys.__unraisablehook__(unraisable)
        return
    delay = 0.001
    while True:
        try:
            signal.signal(signal.SIGALRM, signal.default_int_handler)
            signal.setitimer(signal.ITIMER_REAL, delay)
            return
        except KeyboardInterrupt:  # taken here (another Ctrl-C, or an earlier try's timer): set it again
            delay *= 2


def main() -> None:
    sys.unraisablehook = _interrupt_again
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, signal.default_int_handler)
        from .cli import main as run
    except KeyboardInterrupt:
        sys.unraisablehook = lambda unraisable: None  # as cliparse.quiet_finalizers, before it is loaded
        sys.stderr.write("stopped: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    run()


if __name__ == "__main__":
    main()
