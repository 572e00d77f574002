"""Sorting the marks a pass packs: the radix sort packing uses against NumPy's sort.

``python bench/bench_sort.py [REPEAT]`` draws random int64 ranks (0.24, 1 and 4 million,
spread over 2^27 ranks, a 4x3 segment's, and 2.7 G, a 7x2 quarter's) and times
:func:`puzzlespace.explore.packing.sort_ranks` against ``ndarray.sort``, alternated
REPEAT times (default 3) in this process, each on a fresh copy; prints the best ns per
rank of each and their ratio, after checking that they agree.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from puzzlespace.explore.packing import sort_ranks  # noqa: E402


def main(argv: list[str]) -> int:
    repeat = int(argv[0]) if argv else 3
    rng = np.random.default_rng(1)
    print("| ranks | spread | NumPy sort ns/rank | radix sort ns/rank | ratio |")
    print("|---|---|---|---|---|")
    for spread in (1 << 27, 2_700_000_000):
        for count in (240_000, 1_000_000, 4_000_000):
            marks = rng.integers(0, spread, count)
            scratch = np.empty_like(marks)
            assert np.array_equal(sort_ranks(marks.copy(), scratch), np.sort(marks))
            best = {"numpy": float("inf"), "radix": float("inf")}
            for _ in range(repeat):
                for name in best:
                    keys = marks.copy()
                    t0 = time.perf_counter()
                    keys.sort() if name == "numpy" else sort_ranks(keys, scratch)
                    best[name] = min(best[name], time.perf_counter() - t0)
            ns = {name: t / count * 1e9 for name, t in best.items()}
            print(f"| {count:,} | {spread:,} | {ns['numpy']:.1f} | {ns['radix']:.1f} | {ns['radix'] / ns['numpy']:.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
