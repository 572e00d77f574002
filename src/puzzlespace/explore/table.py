"""Packed per-state tables: 2 bits per state (depth mod 3, or 3 = not reached) and a
1-bit transient frontier, plus the compiled loops that touch them.

Memory per state: 2 bits (table) + 1 bit (frontier) = 0.375 bytes.
"""

from __future__ import annotations

import numba as nb
import numpy as np

UNSEEN = 3


def new_table(size: int) -> np.ndarray:
    """A table of ``size`` 2-bit entries, all UNSEEN."""
    return np.full((size + 3) // 4, 0xFF, dtype=np.uint8)


def new_bits(size: int) -> np.ndarray:
    """A bitmap of ``size`` bits, all clear (padded to whole 64-bit words)."""
    return np.zeros(((size + 63) // 64) * 8, dtype=np.uint8)


@nb.njit(cache=True, nogil=True, inline="always")
def get2(table, i):
    return (table[i >> 2] >> ((i & 3) << 1)) & 3


@nb.njit(cache=True, nogil=True, inline="always")
def set2(table, i, v):
    s = (i & 3) << 1
    table[i >> 2] = (table[i >> 2] & ~np.uint8(3 << s)) | np.uint8(v << s)


@nb.njit(cache=True, nogil=True, inline="always")
def get_bit(bits, i):
    return (bits[i >> 3] >> (i & 7)) & 1


@nb.njit(cache=True, nogil=True, inline="always")
def set_bit(bits, i):
    bits[i >> 3] |= np.uint8(1 << (i & 7))


@nb.njit(cache=True, nogil=True)
def merge_marks(table, frontier, marks, count, value):
    """Set every UNSEEN state in ``marks[:count]`` to ``value`` and into the frontier.

    Returns the number of states newly set (duplicates in ``marks`` count once).
    """
    added = 0
    for j in range(count):
        i = marks[j]
        if get2(table, i) == 3:
            set2(table, i, value)
            set_bit(frontier, i)
            added += 1
    return added


@nb.njit(cache=True, nogil=True)
def keep_value(table, frontier, lo, hi, value):
    """Clear frontier bits in states ``[lo, hi)`` whose table entry is not ``value``.

    ``lo`` and ``hi`` are multiples of 64 (or ``hi`` the padded end). Returns the number
    of bits left set.
    """
    words = frontier.view(np.uint64)
    kept = 0
    for w in range(lo >> 6, hi >> 6):
        word = words[w]
        if word == 0:
            continue
        keep = np.uint64(0)
        while word != 0:
            b = lowest_bit(word)
            word &= word - np.uint64(1)
            if get2(table, (w << 6) + b) == value:
                keep |= np.uint64(1) << np.uint64(b)
                kept += 1
        words[w] = keep
    return kept


@nb.njit(cache=True, nogil=True)
def collect_bits(bits, lo, hi, out):
    """Write up to ``len(out)`` indices of set bits in ``[lo, hi)`` into ``out``; return (written, total)."""
    n = 0
    total = 0
    for byte in range(lo >> 3, hi >> 3):
        f = bits[byte]
        if f == 0:
            continue
        for b in range(8):
            if (f >> b) & 1:
                if n < out.shape[0]:
                    out[n] = (byte << 3) + b
                    n += 1
                total += 1
    return n, total


@nb.njit(cache=True, nogil=True)
def count_values(table, size):
    """How many of the first ``size`` entries hold 0, 1, 2 and 3."""
    counts = np.zeros(4, dtype=np.int64)
    for i in range(size):
        counts[get2(table, i)] += 1
    return counts


_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array(
    [0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30,
     24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31,
     10, 25, 14, 19, 9, 13, 8, 7, 6],
    dtype=np.int64,
)


@nb.njit(cache=True, nogil=True, inline="always")
def lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiplication)."""
    low = word & (~word + np.uint64(1))
    return _DEBRUIJN_INDEX[(low * _DEBRUIJN) >> np.uint64(58)]


@nb.njit(cache=True, nogil=True)
def next_set_bit(words, i, hi):
    """Smallest set bit index in ``[i, hi)`` of the bitmap ``words`` (uint64 view), or ``hi``.

    Skips whole zero words, so sparse frontiers cost little to walk.
    """
    if i >= hi:
        return hi
    w = i >> 6
    word = words[w] >> np.uint64(i & 63)
    if word != 0:
        j = i + lowest_bit(word)
        return j if j < hi else hi
    w += 1
    end = (hi + 63) >> 6
    while w < end and words[w] == 0:
        w += 1
    if w >= end:
        return hi
    j = (w << 6) + lowest_bit(words[w])
    return j if j < hi else hi


@nb.njit(cache=True, nogil=True, inline="always")
def next_frontier_state(words, table, i, hi, dmod):
    """Smallest state in ``[i, hi)`` to expand in the layer ``dmod``, or ``hi``: its
    frontier bit is set and its entry is ``dmod`` (skipping states the layer has just
    added). The walk every expansion kernel makes over its chunk."""
    i = next_set_bit(words, i, hi)
    while i < hi and get2(table, i) != dmod:
        i = next_set_bit(words, i + 1, hi)
    return i
