"""What ``solve --html`` and ``--svg`` add to a solve, and the page's size.

``python -m bench pages [--repeat 20]``

For each case, in one run: the solve (warm: tables built, compiled code cached) and the
page and picture made from its solution (best of ``--repeat``), with the page's bytes.
Target: the page adds at most 50 ms, and a 100-move page is under 200 kB.
"""

from __future__ import annotations

import argparse
import sys
import time

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.pages import solution_html, solution_svg

KORF_GOAL = " ".join(map(str, range(16)))
CASES = [("4x3", None, "0 3 2 1/8 7 6 5/4 11 10 9", "auto"),
         ("4x4", KORF_GOAL, "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3", "auto"),  # Korf's first
         ("10x10", None, None, "fast"), ("20x20", None, None, "fast")]


def best(repeat: int, run) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench pages", description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)
    harness.banner("pages", f"best of {args.repeat}")
    print("| puzzle | moves | solve s | page s | picture s | page / solve | page bytes |")
    print("|---|---|---|---|---|---|---|")
    import numpy as np

    for name, goal, position, method in CASES:
        p = ps.load_puzzle(name, goal)
        start = p.parse_position(position) if position else p.random_position(np.random.default_rng(1))
        ps.solve(p, start, method=method)  # warm-up: tables and compiled code
        solve_s, sol = best(3, lambda: ps.solve(p, start, method=method))
        page_s, page = best(args.repeat, lambda: solution_html(sol))
        svg_s, _ = best(max(1, args.repeat // 4), lambda: solution_svg(sol))
        print(f"| {name} | {sol.length} | {solve_s:.4f} | {page_s:.4f} | {svg_s:.4f} | {page_s / solve_s:.2f} | "
              f"{len(page.encode()):,} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
