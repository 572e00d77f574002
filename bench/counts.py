"""Counting a 2-bit table's values (each checkpoint and tablebase read back, each resumed
segment), a word at a time against a byte at a time.

``python -m bench counts [--gib GIB] [--repeat N]`` fills a table of GIB gibibytes (default
1) with random bytes and times :func:`puzzlespace.bits.value_counts` against the
byte-at-a-time count it replaced (a histogram of the bytes times a 256x4 table of their
entries), alternated N times (default 3) in this process; prints GB/s of each and
their ratio, after checking that they agree.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from . import harness  # first: it puts this tree's src on sys.path
from puzzlespace.bits import value_counts


def byte_at_a_time(table: np.ndarray, size: int) -> list[int]:
    """The baseline: a histogram of the bytes, in 16 MiB steps, times each byte's entries."""
    per_byte = np.array([[sum(((b >> (2 * k)) & 3) == v for k in range(4)) for v in range(4)] for b in range(256)],
                        dtype=np.int64)
    counts = np.zeros(4, dtype=np.int64)
    for lo in range(0, len(table), 1 << 24):
        counts += np.bincount(table[lo:lo + (1 << 24)], minlength=256) @ per_byte
    counts[3] -= 4 * len(table) - size
    return [int(c) for c in counts]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench counts", description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", type=float, default=1.0, help="the table's size in GiB (default 1)")
    ap.add_argument("--repeat", type=int, default=3, help="alternated runs, the best kept (default 3)")
    args = ap.parse_args(argv)
    gib, repeat = args.gib, args.repeat
    harness.banner("counts", f"{gib:g} GiB, best of {repeat}")
    table = np.random.default_rng(1).integers(0, 256, int(gib * (1 << 30)), dtype=np.uint8)
    size = 4 * len(table)
    assert value_counts(table[:4096], 4 * 4096) == byte_at_a_time(table[:4096], 4 * 4096)  # compiled, and agreeing
    best = {"words": float("inf"), "bytes": float("inf")}
    for _ in range(repeat):
        for name, count in (("words", value_counts), ("bytes", byte_at_a_time)):
            t0 = time.perf_counter()
            got = count(table, size)
            best[name] = min(best[name], time.perf_counter() - t0)
            assert sum(got) == size
    rate = {name: len(table) / seconds / 1e9 for name, seconds in best.items()}
    print(f"{gib:g} GiB, best of {repeat}: a word at a time {best['words']:.3f} s ({rate['words']:.2f} GB/s), "
          f"a byte at a time {best['bytes']:.3f} s ({rate['bytes']:.2f} GB/s): {best['bytes'] / best['words']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
