"""Weighted IDA* on Korf's 100, beside the ``slidingpuzzle`` package's weighted A*, in one run.

``python bench/bench_suboptimal.py [--weights 1 1.5 2 3] [--threads 1]
[--slidingpuzzle PYTHON] [--sp-count 10] [--sp-timeout 30]``

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
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import puzzlespace as ps  # noqa: E402
from puzzlespace.batch import read_positions, solve_all  # noqa: E402
from puzzlespace.solver import plan_solving  # noqa: E402

KORF_GOAL = " ".join(map(str, range(16)))
ONE = """
import json, sys, time
import numpy as np
import slidingpuzzle as sp
cells, weight = json.loads(sys.argv[1]), float(sys.argv[2])
board = np.array([0 if t == 0 else 16 - t for t in reversed(cells)]).reshape(4, 4)
t0 = time.perf_counter()
found = sp.search(board, "a*", weight=weight)
print(json.dumps({"length": len(found.solution), "seconds": time.perf_counter() - t0}))
"""


def ours(plan, items, weight: str, threads: int, **options) -> tuple[list, float]:
    t0 = time.perf_counter()
    results = list(solve_all(plan.puzzle, items, plan=plan, weight=weight, threads=threads, **options))
    return results, time.perf_counter() - t0


def theirs(python: str, start: tuple, weight: str, timeout: float) -> dict | None:
    try:
        done = subprocess.run([python, "-c", ONE, json.dumps(list(start)), weight], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout) if done.returncode == 0 else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", nargs="+", default=["1", "1.5", "2", "3"])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--anytime", type=float, nargs="*", default=[0.005, 0.01], metavar="SECONDS",
                    help="also anytime search with these time limits per instance")
    ap.add_argument("--slidingpuzzle", metavar="PYTHON")
    ap.add_argument("--sp-count", type=int, default=10)
    ap.add_argument("--sp-timeout", type=float, default=30.0)
    args = ap.parse_args()
    if args.weights[0] != "1":
        args.weights.insert(0, "1")
    puzzle = ps.load_puzzle("4x4", KORF_GOAL)
    items = read_positions(puzzle, (ROOT / "examples" / "korf100.txt").read_text().splitlines())
    plan = plan_solving(puzzle, "ida").ready()
    print(f"# bench_suboptimal: {len(items)} instances, {plan.heuristic}, {args.threads} thread(s); "
          f"{harness.cpu_model()}, load {harness.loadavg()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
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


if __name__ == "__main__":
    main()
