"""Weighted IDA* on Korf's 100, beside the ``slidingpuzzle`` package's weighted A*, in one run.

``python -m bench suboptimal [--weights 1 1.5 2 3] [--threads 1]
[--slidingpuzzle PYTHON] [--sp-count 10] [--sp-timeout 30] [--p24 50] [--fast 10x10 20x20]``

1. Our side: Korf's 100 random 15-puzzle instances (``examples/korf100.txt``, goal
   ``0 1 ... 15``) solved by ``puzzlespace.batch.solve_all`` with the default pattern
   databases (read from the cache, or built there first, outside the timing) at each
   weight: total wall seconds, mean length, mean proven lower bound, and the mean length
   against the optimum (the weight-1 run, which is first); then anytime search with each
   ``--anytime`` time limit per instance.
2. With ``--slidingpuzzle PYTHON`` (a Python that has the ``slidingpuzzle`` package: it is
   kept out of our environment), its ``search(board, "a*", weight=W)`` (linear-conflict
   bound) on the first ``--sp-count`` instances at each weight above 1, one process per
   instance, stopped after ``--sp-timeout`` seconds: mean length and seconds beside ours
   on the same instances. Its goal has the blank last, so each instance is turned half a
   turn and its tiles renamed ``t -> 16 - t``, which keeps every distance.
3. With ``--p24 N``: N random 24-puzzle positions (seeded) at ``--weight 2`` with the
   default pattern databases (built first if not cached, outside the timing) and, as the
   baseline, with ``linear-conflict``: seconds per position (mean, max), mean length, mean
   proven lower bound, each stopped after ``--p24-limit`` seconds.
4. With ``--fast SIZE...``: ``--fast-count`` random positions per size solved by
   ``--method fast`` (seconds per position, the lower bound's tables built once outside
   it): mean length against the mean Manhattan bound, and with ``--slidingpuzzle`` its
   ``greedy`` search (its fastest, not optimal) on the same positions, on the
   ``--sp-fast`` sizes, where it finishes within ``--sp-timeout`` (its goal is ours: the
   blank last).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.batch import read_positions, solve_all
from puzzlespace.solver import plan_solving

ROOT = harness.ROOT

KORF_GOAL = " ".join(map(str, range(16)))
ONE = """
import json, sys, time
import numpy as np
import slidingpuzzle as sp
cells, weight = json.loads(sys.argv[1]), float(sys.argv[2])
w, h, alg = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
if alg == "a*":  # Korf's goal, the blank first: half a turn, tiles renamed
    board = np.array([0 if t == 0 else 16 - t for t in reversed(cells)]).reshape(4, 4)
else:
    board = np.array(cells).reshape(h, w)
t0 = time.perf_counter()
found = sp.search(board, alg, weight=weight) if alg == "a*" else sp.search(board, alg)
print(json.dumps({"length": len(found.solution), "seconds": time.perf_counter() - t0}))
"""


def ours(plan, items, weight: str, threads: int, **options) -> tuple[list, float]:
    t0 = time.perf_counter()
    results = list(solve_all(plan.puzzle, items, plan=plan, weight=weight, threads=threads, **options))
    return results, time.perf_counter() - t0


def theirs(python: str, start: tuple, weight: str, timeout: float, size=(4, 4), alg: str = "a*") -> dict | None:
    try:
        done = subprocess.run([python, "-c", ONE, json.dumps(list(start)), weight, str(size[0]), str(size[1]), alg],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout) if done.returncode == 0 else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench suboptimal", description=__doc__.splitlines()[0])
    ap.add_argument("--weights", nargs="+", default=["1", "1.5", "2", "3"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--anytime", type=float, nargs="*", default=[0.005, 0.01], metavar="SECONDS",
                    help="also anytime search with these time limits per instance")
    ap.add_argument("--slidingpuzzle", metavar="PYTHON",
                    help="a Python with the slidingpuzzle package (the outside baseline), kept out of this "
                         "environment: python3 -m venv /tmp/spenv && /tmp/spenv/bin/pip install slidingpuzzle, "
                         "then --slidingpuzzle /tmp/spenv/bin/python")
    ap.add_argument("--sp-count", type=int, default=10)
    ap.add_argument("--sp-timeout", type=float, default=30.0)
    ap.add_argument("--p24", type=int, default=0, metavar="N", help="also N random 24-puzzle positions at weight 2")
    ap.add_argument("--p24-limit", type=float, default=60.0)
    ap.add_argument("--fast", nargs="*", default=[], metavar="WxH", help="also --method fast on these sizes")
    ap.add_argument("--fast-count", type=int, default=10)
    ap.add_argument("--sp-fast", nargs="*", default=["5x5", "6x6"], metavar="WxH",
                    help="the sizes where slidingpuzzle's greedy search is run beside fast (it finishes 6x6 in "
                         "about 30 s and no 10x10 in 60 s)")
    ap.add_argument("--skip-korf", action="store_true", help="leave out sections 1 and 2")
    args = ap.parse_args(argv)
    harness.banner("suboptimal")
    if not args.skip_korf:
        korf(args)
    if args.p24:
        puzzle24(args.p24, args.p24_limit)
    for size in args.fast:
        fast(size, args.fast_count, args.slidingpuzzle if size in args.sp_fast else None, args.sp_timeout)
    return 0


def korf(args) -> None:
    """Sections 1 and 2."""
    if args.weights[0] != "1":
        args.weights.insert(0, "1")
    puzzle = ps.load_puzzle("4x4", KORF_GOAL)
    items = read_positions(puzzle, (ROOT / "examples" / "korf100.txt").read_text().splitlines())
    plan = plan_solving(puzzle, "ida").ready()
    print(f"\n## Korf's 100: {plan.heuristic}, {args.threads} thread(s)")
    ours(plan, items[:3], "1", 1)  # warm-up: numba's cache and the tables' pages
    optimum: dict[str, int] = {}
    mine: dict[str, list] = {}
    print("| weight | total s | mean length | mean lower bound | length / optimum | max length / optimum |")
    print("|---|---|---|---|---|---|")
    for weight in args.weights:
        results, seconds = ours(plan, items, weight, args.threads)
        if weight == "1":
            optimum = {r.id: r.length for r in results}
        mine[weight] = results
        ratios = [r.length / optimum[r.id] for r in results]
        print(f"| {weight} | {seconds:.3f} | {statistics.mean(r.length for r in results):.2f} | "
              f"{statistics.mean(r.lower_bound for r in results):.2f} | {statistics.mean(ratios):.4f} | "
              f"{max(ratios):.3f} |", flush=True)
    for limit in args.anytime:
        results, seconds = ours(plan, items, "1", args.threads, anytime=True, time_limit=limit)
        solved = [r for r in results if r.status == "solved"]
        ratios = [r.length / optimum[r.id] for r in solved]
        print(f"| anytime {limit:g} s | {seconds:.3f} | {statistics.mean(r.length for r in solved):.2f} "
              f"({len(solved)} solved) | {statistics.mean(r.lower_bound for r in results):.2f} | "
              f"{statistics.mean(ratios):.4f} | {max(ratios):.3f} |", flush=True)
    if not args.slidingpuzzle:
        return
    count = args.sp_count
    print(f"\nslidingpuzzle a* (linear conflict) on the first {count} instances, {args.sp_timeout:g} s each at most")
    print("| weight | theirs: solved, mean length, mean s | ours: mean length, mean s | optimum mean |")
    print("|---|---|---|---|")
    for weight in args.weights[1:]:
        got = [theirs(args.slidingpuzzle, start, weight, args.sp_timeout) for _, start in items[:count]]
        done = [g for g in got if g]
        pairs = [(r, g) for r, g in zip(mine[weight][:count], got) if g]
        them = (f"{len(done)}/{count}, {statistics.mean(g['length'] for g in done):.2f}, "
                f"{statistics.mean(g['seconds'] for g in done):.3f}" if done else f"0/{count}")
        us = (f"{statistics.mean(r.length for r, _ in pairs):.2f}, {statistics.mean(r.seconds for r, _ in pairs):.4f}"
              if pairs else "-")
        best = statistics.mean(optimum[r.id] for r, _ in pairs) if pairs else float("nan")
        print(f"| {weight} | {them} | {us} | {best:.2f} |", flush=True)



def puzzle24(count: int, limit: float) -> None:
    """Section 3."""
    puzzle = ps.load_puzzle("5x5")
    rng = np.random.default_rng(24)
    items = [(str(i), puzzle.random_position(rng)) for i in range(count)]
    print(f"\n## 24-puzzle, {count} random positions (seed 24), weight 2, {limit:g} s each at most")
    print("| bound | solved | mean s | max s | mean length | mean lower bound | length / lower bound |")
    print("|---|---|---|---|---|---|---|")
    for heuristic in ("auto", "linear-conflict"):
        plan = plan_solving(puzzle, "ida", heuristic).ready()
        results, _ = ours(plan, items, "2", 1, time_limit=limit)
        solved = [r for r in results if r.status == "solved"]
        length = statistics.mean(r.length for r in solved) if solved else float("nan")
        lower = statistics.mean(r.lower_bound for r in solved) if solved else float("nan")
        print(f"| {plan.heuristic} | {len(solved)}/{count} | {statistics.mean(r.seconds for r in results):.3f} | "
              f"{max(r.seconds for r in results):.3f} | {length:.2f} | {lower:.2f} | {length / lower:.3f} |",
              flush=True)


def fast(size: str, count: int, python: str | None, timeout: float) -> None:
    """Section 4."""
    puzzle = ps.load_puzzle(size)
    rng = np.random.default_rng(7)
    items = [(str(i), puzzle.random_position(rng)) for i in range(count)]
    t0 = time.perf_counter()
    plan = plan_solving(puzzle, "fast").ready()
    build = time.perf_counter() - t0
    manhattan = ps.load_puzzle(size).search_problem("manhattan")
    ours(plan, items[:1], "1", 1)  # warm-up: numba's cache
    results, _ = ours(plan, items, "1", 1)
    bound = statistics.mean(manhattan.heuristic(start) for _, start in items)
    length = statistics.mean(r.length for r in results)
    print(f"\n## --method fast, {size}, {count} random positions (seed 7); lower bound's tables {build:.3f} s once")
    print("| solver | solved | mean s | max s | mean length | mean Manhattan bound | length / bound |")
    print("|---|---|---|---|---|---|---|")
    print(f"| puzzlespace fast | {count}/{count} | {statistics.mean(r.seconds for r in results):.4f} | "
          f"{max(r.seconds for r in results):.4f} | {length:.1f} | {bound:.1f} | {length / bound:.3f} |", flush=True)
    if not python:
        return
    w, h = puzzle.width, puzzle.height
    got = [theirs(python, start, "1", timeout, (w, h), "greedy") for _, start in items]
    pairs = [(g, start) for g, (_, start) in zip(got, items) if g]
    if not pairs:
        print(f"| slidingpuzzle greedy | 0/{count} within {timeout:g} s | | | | | |")
        return
    theirs_length = statistics.mean(g["length"] for g, _ in pairs)
    their_bound = statistics.mean(manhattan.heuristic(start) for _, start in pairs)
    mine = statistics.mean(r.length for r, g in zip(results, got) if g)
    print(f"| slidingpuzzle greedy | {len(pairs)}/{count} within {timeout:g} s | "
          f"{statistics.mean(g['seconds'] for g, _ in pairs):.3f} | {max(g['seconds'] for g, _ in pairs):.3f} | "
          f"{theirs_length:.1f} (ours on these {mine:.1f}) | {their_bound:.1f} | {theirs_length / their_bound:.3f} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
