"""Every optimal solution: counting them, beside finding one.

``python -m bench optimal`` (each time the best of three runs)

1. The 8-puzzle's two antipodes (31 moves): their counts from the 3x3 tablebase, by a
   search of the position's layers and by IDA*'s passes (``puzzlespace.search.paths``),
   each timed; the three counts must be equal.
2. The 4x3 position ``0 3 2 1/8 7 6 5/4 11 10 9`` (53 moves): its count from the 4x3
   tablebase (explored first, outside the timing) and without one (an optimal solve,
   then IDA*'s passes), beside one optimal solve of it with the default databases (built
   first), the same run; then every 4x3 position's optimal path count (``explore
   --counts``) beside the exploration that made the tablebase.
3. Korf's first 15-puzzle instance (57 moves, goal with the blank first): its count by
   IDA*'s passes beside one optimal solve with the default databases (built first).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from . import harness  # first: it puts this tree's src on sys.path
import puzzlespace as ps
from puzzlespace.explore import explore, pathcounts, tablebase
from puzzlespace.optimal import count_optimal
from puzzlespace.solver import plan_solving


KORF_FIRST = "14 13 15 7 11 12 9 5 6 0 2 1 4 8 10 3"


def table_of(p, folder: Path):
    result = explore(p, keep_table=True)
    tablebase.save(folder / "t.pstb", p, p.state_index(), result.table, result.depth_counts)
    return tablebase.load(folder / "t.pstb", p)


def timed(run, repeat: int = 3):
    """The value of ``run()`` and its best time of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        value = run()
        best = min(best, time.perf_counter() - t0)
    return value, best


def main(argv: list[str]) -> int:
    argparse.ArgumentParser(prog="python -m bench optimal", description=__doc__.split("\n")[0]).parse_args(argv)
    harness.banner("optimal", " ".join(argv))
    with tempfile.TemporaryDirectory() as scratch:
        p = ps.load_puzzle("3x3")
        table = table_of(p, Path(scratch))
        print("## the 8-puzzle's antipodes (31 moves)")
        for text in ("8 6 7/2 5 4/3 0 1", "6 4 7/8 5 0/3 2 1"):
            start = p.parse_position(text)
            by_table, t_table = timed(lambda: count_optimal(p, start, table=table))
            by_search, t_search = timed(lambda: count_optimal(p, start, method="bfs"))
            by_passes, t_passes = timed(lambda: count_optimal(p, start, method="ida"))
            assert by_table.count == by_search.count == by_passes.count, (by_table, by_search, by_passes)
            print(f"  {text}: {by_table.count} optimal solutions of {by_table.length} moves by all three; "
                  f"figure (table) {t_table:.4f} s, (ida) {t_passes:.3f} s; baseline (search of the layers) "
                  f"{t_search:.3f} s, ratios {t_search / t_table:.0f} and {t_search / t_passes:.1f}")
        p = ps.load_puzzle("4x3")
        start = p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")
        table, t_explore = timed(lambda: table_of(p, Path(scratch)), repeat=1)
        index = table.index
        counts, t_paths = timed(lambda: pathcounts.count_paths(index, table.table, table.depth_counts,
                                                               index.rank(p.goal)), repeat=1)
        plan = plan_solving(p, "ida").ready()
        one, t_one = timed(lambda: ps.solve(p, start, plan=plan))
        counted, t_count = timed(lambda: count_optimal(p, start, table=table))
        searched, t_search = timed(lambda: count_optimal(p, start))
        assert searched.count == counted.count, (searched, counted)
        print("## 4x3, 0 3 2 1/8 7 6 5/4 11 10 9")
        print(f"  baseline: one optimal solve ({plan.heuristic}) in {t_one:.3f} s, {one.length} moves")
        for how, took in (("the tablebase", t_count), ("no tablebase (IDA*'s passes)", t_search)):
            print(f"  figure: {counted.count} optimal solutions of {counted.length} moves from {how} in "
                  f"{took:.3f} s; ratio {took / t_one:.2f}")
        assert int(counts[index.rank(start)]) == counted.count
        print(f"## every 4x3 position's optimal path count (explore --counts), {index.size:,} positions")
        print(f"  baseline: the exploration and its tablebase (2 threads) in {t_explore:.1f} s")
        print(f"  figure: counted in {t_paths:.1f} s (one thread), {counts.nbytes / index.size:.0f} bytes a "
              f"position, the most {int(counts.max()):,}; ratio {t_paths / t_explore:.2f}")
    p = ps.load_puzzle("4x4").with_goal(tuple(range(16)))
    start = p.parse_position(KORF_FIRST)
    plan = plan_solving(p, "ida").ready()
    one, t_one = timed(lambda: ps.solve(p, start, plan=plan))
    counted, t_count = timed(lambda: count_optimal(p, start, method="ida"))
    print(f"## Korf's first 15-puzzle instance, {KORF_FIRST}")
    print(f"  baseline: one optimal solve ({plan.heuristic}) in {t_one:.3f} s, {one.length} moves")
    print(f"  figure: {counted.count} optimal solution{'s' * (counted.count != 1)} of {counted.length} moves by "
          f"IDA*'s passes in "
          f"{t_count:.3f} s; ratio {t_count / t_one:.2f}")
    return 0
