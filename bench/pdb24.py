"""Optimal 24-puzzle solutions with 6-6-6-6 pattern databases.

Instances: random walks from the goal ``0 1 ... 24`` (``--walk`` moves, never undoing the
last one, seeded), kept when the pattern-database bound is between ``--min-h`` and ``--max-h``
(so that the optimal length is 60 or more, and the search stays within minutes); ``--count`` of them are solved (``--time-limit`` each),
plus any positions given with ``--position``. Reports length, nodes, seconds and nodes
per second per instance, and writes ``bench/results/puzzle24.csv``.

Baseline in the same run: the same instances' bound under ``linear-conflict`` (Manhattan
+ linear conflict), to show how much of the distance each heuristic sees; and with
``--compare HEURISTIC`` every instance is solved a second time with that heuristic.

    python -m bench pdb24 --count 3 --walk 150 --min-h 58 --max-h 62 --compare pdb:6-6-6-6
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
import time
from pathlib import Path

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.errors import SearchStopped
from puzzlespace.solver import resolve_heuristic, search_problem_for

HERE = Path(__file__).resolve().parent


def random_walk(p, length: int, rng: random.Random):
    state, prev = p.goal, None
    for _ in range(length):
        blank = state.index(0)
        move = rng.choice([m for m in p.moves(state) if m != prev])
        state, prev = p.apply(state, move), blank
    return state


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench pdb24", description=__doc__.splitlines()[0])
    ap.add_argument("--heuristic", default="auto", help="auto: the 5x5 default blocks; or pdb:6-6-6-6 (row-major)")
    ap.add_argument("--count", type=int, default=3)
    ap.add_argument("--walk", type=int, default=200)
    ap.add_argument("--min-h", type=int, default=58)
    ap.add_argument("--max-h", type=int, default=62)
    ap.add_argument("--seed", type=int, default=24)
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--position", action="append", default=[], help="also solve this position")
    ap.add_argument("--compare", help="solve each instance again with this heuristic")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "puzzle24.csv")
    args = ap.parse_args(argv)
    harness.banner("pdb24", args.heuristic)
    p = ps.load_puzzle("5x5", " ".join(map(str, range(25))))
    t0 = time.perf_counter()
    problem = search_problem_for(p, args.heuristic, notify=lambda s: print("  " + s, flush=True))
    print(f"{resolve_heuristic(p, args.heuristic)}: tables ready in {time.perf_counter() - t0:.1f} s", flush=True)
    classic = search_problem_for(p, "linear-conflict")
    rng = random.Random(args.seed)
    starts = [p.parse_position(text) for text in args.position]
    while len(starts) < len(args.position) + args.count:
        s = random_walk(p, args.walk, rng)
        if args.min_h <= problem.heuristic(s) <= args.max_h:
            starts.append(s)
    names = [args.heuristic] + ([args.compare] if args.compare else [])
    problems = {h: problem if h == args.heuristic else search_problem_for(p, h) for h in names}
    rows = []
    for s in starts:
        for h in names:
            rows.append(solve_one(p, s, h, problems[h], classic, args.time_limit))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["position", "heuristic", "h", "h_linear_conflict", "length", "nodes", "seconds", "nodes_per_s"])
        w.writerows(rows)
    print(f"written {args.out}")
    return 0


def solve_one(p, s, heuristic, problem, classic, time_limit):
    """One instance: its row (position, heuristic, bounds, length or 'stopped', nodes, seconds, rate)."""
    h, h_lc = problem.heuristic(s), classic.heuristic(s)
    name = resolve_heuristic(p, heuristic)
    try:
        sol = ps.solve(p, s, heuristic=name, problem=problem, time_limit=time_limit)
        length, nodes, seconds = sol.length, sol.nodes, sol.seconds
    except SearchStopped as exc:
        length, nodes, seconds = "stopped", exc.nodes, exc.seconds
    rate = nodes / max(seconds, 1e-9)
    print(f"{p.format_position(s)} [{name}]: h {h} (linear conflict {h_lc}), length {length}, {nodes:,} nodes, "
          f"{seconds:.2f} s, {rate:,.0f} nodes/s", flush=True)
    return [p.format_position(s), name, h, h_lc, length, nodes, f"{seconds:.2f}", f"{rate:.0f}"]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
