"""Estimates against what the work then takes: pattern-database builds and an exploration,
each predicted by the calibrated estimator and by the constant it replaced, then run.

    python -m bench estimates [--skip-24]

In a fresh cache each time (so that the probe runs, as on a newcomer's machine): the
4x3 (pdb:6-5), 15-puzzle (pdb:6-6-3) and 24-puzzle (pdb:6-6-6-6, about 10 minutes to
build here; --skip-24 leaves it out) databases, and exploring 4x3 in memory. The
baseline is the old estimate, 1.4e-6 core-seconds per entry over the threads for a
build, and none for an exploration. Prints a Markdown table: the estimate (the range
while the machine was busy), the probe's own seconds, the actual seconds, actual over
estimate; the machine and its load before and after.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace import cache
from puzzlespace.explore.estimate import exploration_estimate
from puzzlespace.explore.engine import explore
from puzzlespace.pdb.heuristic import pattern_plan, pattern_problem

#: The estimate the calibration replaced: core-seconds per entry of a build.
OLD_RATE = 1.4e-6
BUILDS = [("4x3", "pdb:6-5"), ("4x4", "pdb:6-6-3"), ("5x5", "pdb:6-6-6-6")]


def build_row(name: str, heuristic: str, threads: int) -> str:
    p = ps.load_puzzle(name)
    with tempfile.TemporaryDirectory(prefix="puzzlespace-estimates-") as folder, cache.use(folder):
        t0 = time.perf_counter()
        plan = pattern_plan(p, heuristic, threads=threads)
        probe = time.perf_counter() - t0
        t0 = time.perf_counter()
        pattern_problem(p, heuristic, threads=threads, plan=plan)
        actual = time.perf_counter() - t0
    old = plan.entries * OLD_RATE / threads
    return _row(f"build {name} {heuristic}", plan.estimate, probe, actual, old)


def explore_row(name: str, threads: int) -> str:
    p = ps.load_puzzle(name)
    with tempfile.TemporaryDirectory(prefix="puzzlespace-estimates-") as folder, cache.use(folder):
        t0 = time.perf_counter()
        estimate = exploration_estimate(p, threads)
        probe = time.perf_counter() - t0
        result = explore(p, threads=threads, antipode_limit=0)
    return _row(f"explore {name}", estimate, probe, result.seconds, None)


def _row(work: str, estimate, probe: float, actual: float, old: float | None) -> str:
    shown = f"{estimate.seconds:.1f}" + (f"-{estimate.high:.1f}" if estimate.busy else "")
    ratio = actual / estimate.seconds if estimate.seconds else float("inf")
    old_ratio = f"{actual / old:.2f}" if old else "-"
    return (f"| {work} | {shown} | {probe:.2f} | {actual:.1f} | {ratio:.2f} | "
            f"{'-' if old is None else format(old, '.1f')} | {old_ratio} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench estimates", description=__doc__.splitlines()[0])
    parser.add_argument("--skip-24", action="store_true")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    options = parser.parse_args(argv)
    harness.banner("estimates", f"{options.threads} threads")
    # numba's compiled code loaded first: neither an estimate nor a run counts compiling
    with tempfile.TemporaryDirectory() as folder, cache.use(folder):
        pattern_problem(ps.load_puzzle("3x3"), "pdb:4-4", threads=options.threads)
        exploration_estimate(ps.load_puzzle("3x3"), options.threads)
    print("| work | estimate s | probe s | actual s | actual / estimate | old estimate s | actual / old |")
    print("|---|---|---|---|---|---|---|")
    for name, heuristic in BUILDS:
        if name == "5x5" and options.skip_24:
            continue
        print(build_row(name, heuristic, options.threads), flush=True)
    print(explore_row("4x3", options.threads), flush=True)
    print(f"\nload after: {harness.loadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
