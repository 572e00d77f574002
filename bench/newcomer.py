"""A newcomer's wait: the README's two set-up commands in a fresh clone, this commit beside a base.

``python -m bench newcomer [--base REV] [--install-only]`` clones this repository at HEAD
(committed work only) and at ``--base`` into empty folders, each with a new virtual
environment and an empty puzzlespace cache, and times the README's set-up commands (the
first two lines of its first code block that start with ``pip install``), read from each
clone's own README: wall seconds, exit status and the last line printed. pip's download
cache is left as it is: say whether it was warm when quoting the figures.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from . import harness


def setup_commands(readme: Path) -> list[str]:
    """The README's first two ``pip install ...`` lines of a fenced code block."""
    commands, inside = [], False
    for line in readme.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            inside = not inside
        elif inside and line.startswith("pip install"):
            commands.append(line.strip())
    return commands[:2]


def measure(rev: str, install_only: bool) -> list[tuple[str, float, int, str]]:
    """(command, wall seconds, exit status, last line) of each set-up command at ``rev``."""
    with tempfile.TemporaryDirectory(prefix="puzzlespace-newcomer-") as folder:
        clone, env = harness.fresh_clone(rev, Path(folder))
        commands = setup_commands(clone / "README.md")[: 1 if install_only else 2]
        return [(command, *harness.timed_shell(command, clone, env)) for command in commands]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench newcomer", description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="also measure this commit, as the baseline")
    ap.add_argument("--install-only", action="store_true",
                    help="only the first command (install and demo, about a minute); the second runs the test "
                         "suite (about a quarter of an hour on 2 cores)")
    args = ap.parse_args(argv)
    harness.banner("newcomer", f"HEAD beside {args.base}" if args.base else "HEAD")
    print("| version | command | wall s | exit | last line |")
    print("|---|---|---|---|---|")
    for version in ["HEAD", *([args.base] if args.base else [])]:
        for command, seconds, status, last in measure(version, args.install_only):
            print(f"| {version} | `{command}` | {seconds:.1f} | {status} | {last} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
