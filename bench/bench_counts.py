"""Counting a 2-bit table's values (each checkpoint and tablebase read back, each resumed
segment), a word at a time against a byte at a time.

``python bench/bench_counts.py [GIB] [REPEAT]`` fills a table of GIB gibibytes (default
1) with random bytes and times :func:`puzzlespace.bits.value_counts` against the
byte-at-a-time count it replaced (a histogram of the bytes times a 256x4 table of their
entries), alternated REPEAT times (default 3) in this process; prints GB/s of each and
their ratio, after checking that they agree.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

import numpy as np  # noqa: E402

from puzzlespace.bits import value_counts  # noqa: E402


def byte_at_a_time(table: np.ndarray, size: int) -> list[int]:
    """The baseline: a histogram of the bytes, in 16 MiB steps, times each byte's entries."""
    per_byte = np.array([[sum(((b >> (2 * k)) & 3) == v for k in range(4)) for v in range(4)] for b in range(256)],
                        dtype=np.int64)
    counts = np.zeros(4, dtype=np.int64)
    for lo in range(0, len(table), 1 << 24):
        counts += np.bincount(table[lo:lo + (1 << 24)], minlength=256) @ per_byte
    counts[3] -= 4 * len(table) - size
    return [int(c) for c in counts]


def main(argv: list[str]) -> int:
    gib = float(argv[0]) if argv else 1.0
    repeat = int(argv[1]) if len(argv) > 1 else 3
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
