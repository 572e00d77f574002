"""``python -m puzzlespace`` and the ``puzzlespace`` script: Ctrl-C at any moment, even
while the program is still loading, ends it with one line and exit status 130."""

import os
import sys


def main() -> None:
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("stopped: interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    run()


if __name__ == "__main__":
    main()
