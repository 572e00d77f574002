"""A newcomer's first minute: start-up, first runs on an empty numba cache, and the
whole install and demo, this tree beside a baseline commit in the same run.

    python -m bench first-minute [BASE] [--rounds N] [--no-install]

BASE (default: the commit before the first-minute work, d1a6c94) is checked out in a
temporary git worktree. Prints Markdown tables:

- start-up: whole processes, the minimum of N (default 5) runs, beside ``python -c pass``;
- first runs: each command on an empty numba cache and an empty puzzlespace cache
  (``cold``), then again on the caches it filled (``warm``): wall and CPU seconds, the
  time the command reported, and cold minus warm (the target: at most 10 s);
- install: ``pip install . && puzzlespace demo`` in a fresh virtual environment, from a
  clone of this tree's HEAD (the target: at most 60 s; pip's download cache as it is).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import harness

PYTHON = sys.executable

STARTUP = [
    ("python -c pass", None),
    ("--version", ["--version"]),
    ("check 3x3", ["check", "3x3", "1 2 3/4 5 6/8 7 0"]),
    ("solve 3x3", ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--quiet"]),
]
FIRST = [
    ("explore 3x3", ["explore", "3x3", "--antipodes", "0"]),
    ("solve 3x3 --weight 2", ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--weight", "2", "--quiet"]),
    ("solve 6x6 --method fast", ["solve", "6x6", "0 35 34 33 32 31/30 29 28 27 26 25/24 23 22 21 20 19/"
                                 "18 17 16 15 14 13/12 11 10 9 8 7/6 5 4 3 2 1", "--method", "fast", "--quiet"]),
    ("solve 4x3", ["solve", "4x3", "0 3 2 1/8 7 6 5/4 11 10 9", "--quiet"]),
    ("solve flip:5x5", ["solve", "flip:5x5", "WWBWW/WWBWW/BWBBW/WWWWW/WWWWW", "--quiet"]),
]
#: The time a command's output reports: a solve's "(... N s" or an exploration's "time: N s".
REPORTED = re.compile(r"(?:nodes, |time: |fast linear-conflict, )([0-9.]+) s")


def run(src: Path, args: list[str] | None, env: dict) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout) of one whole process."""
    command = [PYTHON, "-c", "pass"] if args is None else [PYTHON, "-m", "puzzlespace", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(command, env=dict(env, PYTHONPATH=str(src)), capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if done.returncode not in (0, 1):
        raise SystemExit(f"{command} failed ({done.returncode}): {done.stderr[-500:]}")
    return wall, cpu, done.stdout


def startup(versions: dict[str, Path], rounds: int, scratch: Path) -> None:
    print(f"\n### Start-up: whole processes, the minimum of {rounds}\n")
    print("| command | " + " | ".join(f"{v} s" for v in versions) + " |")
    print("|---|" + "---|" * len(versions))
    env = dict(os.environ, PUZZLESPACE_CACHE=str(scratch / "startup-cache"))
    for name, args in STARTUP:
        for src in versions.values():  # numba's cache filled first: these are warm runs
            run(src, args, env)
        best = {v: min(run(src, args, env)[0] for _ in range(rounds)) for v, src in versions.items()}
        print(f"| {name} | " + " | ".join(f"{best[v]:.3f}" for v in versions) + " |")


def first_runs(versions: dict[str, Path], scratch: Path) -> None:
    print("\n### First runs: an empty numba cache (cold), then the caches it filled (warm)\n")
    print("| command | version | cold wall s | cold CPU s | cold reported s | warm wall s | warm reported s "
          "| cold - warm s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, args in FIRST:
        for version, src in versions.items():
            folder = scratch / f"first-{version}-{len(name)}"
            shutil.rmtree(folder, ignore_errors=True)
            env = dict(os.environ, NUMBA_CACHE_DIR=str(folder / "numba"), PUZZLESPACE_CACHE=str(folder / "cache"))
            cold = run(src, args, env)
            warm = run(src, args, env)
            said = [REPORTED.search(out) for _, _, out in (cold, warm)]
            reported = [f"{float(m.group(1)):.3f}" if m else "-" for m in said]
            print(f"| {name} | {version} | {cold[0]:.2f} | {cold[1]:.2f} | {reported[0]} | {warm[0]:.2f} | "
                  f"{reported[1]} | {cold[0] - warm[0]:.2f} |", flush=True)


def install(scratch: Path) -> None:
    print("\n### Install and demo in a fresh virtual environment (a clone of HEAD)\n")
    clone, env = harness.fresh_clone("HEAD", scratch)
    seconds, status, _ = harness.timed_shell("pip install -q . && puzzlespace demo", clone, env)
    print(f"`pip install . && puzzlespace demo`: {seconds:.1f} s, exit {status}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench first-minute", description=__doc__.splitlines()[0])
    parser.add_argument("base", nargs="?", default="d1a6c94", help="the commit measured beside this tree (default d1a6c94)")
    parser.add_argument("--rounds", type=int, default=5, help="start-up runs, the minimum kept (default 5)")
    parser.add_argument("--no-install", action="store_true", help="leave out the install and demo")
    options = parser.parse_args(argv)
    harness.banner("first-minute", f"this tree against {options.base}")
    with tempfile.TemporaryDirectory(prefix="puzzlespace-first-") as tmp, harness.worktree(options.base) as base:
        scratch = Path(tmp)
        versions = {"this": harness.SRC, options.base: base / "src"}
        startup(versions, options.rounds, scratch)
        first_runs(versions, scratch)
        if not options.no_install:
            install(scratch)
    print(f"\nload after: {harness.loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
