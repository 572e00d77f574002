"""``python -m puzzlespace`` and the ``puzzlespace`` script: Ctrl-C at any moment, even
while the program is still loading, ends it with one line and exit status 130, and so
does SIGTERM (``kill``, a batch system's end of a job): the same line, and what was
saved."""

import os
import signal
import sys


def main() -> None:
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
