"""Marks packed for the wire: sorted, without repeats, each the gap from the one before
in 7-bit groups (LEB128), so a mark costs one or two bytes where ranks lie close.

A packed block decodes on its own: its first gap is counted from rank 0. Packing sorts
and drops repeated ranks, which changes nothing for the table they are merged into.
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: The most bytes one rank (a non-negative int64) packs to.
MOST_BYTES = 10


def pack_marks(marks: np.ndarray) -> np.ndarray:
    """The ranks ``marks`` (int64, non-negative, any order; sorted in place) packed: a
    uint8 array."""
    marks.sort()
    out = np.empty(len(marks) * MOST_BYTES, dtype=np.uint8)
    return out[:_pack(marks, out)].copy()


def unpack_marks(block: np.ndarray) -> np.ndarray:
    """The sorted ranks packed in ``block`` (int64)."""
    out = np.empty(len(block), dtype=np.int64)
    return out[:_unpack(block, out)]


@nb.njit(cache=True, nogil=True)
def _pack(ranks, out):
    at = 0
    last = -1
    for r in ranks:
        if r == last:
            continue
        gap = r - max(last, 0)
        last = r
        while gap >= 128:
            out[at] = np.uint8((gap & 127) | 128)
            gap >>= 7
            at += 1
        out[at] = np.uint8(gap)
        at += 1
    return at


@nb.njit(cache=True, nogil=True)
def _unpack(block, out):
    count = 0
    last = 0
    gap = 0
    shift = 0
    for byte in block:
        gap |= np.int64(byte & 127) << shift
        if byte & 128:
            shift += 7
            continue
        last += gap
        out[count] = last
        count += 1
        gap = 0
        shift = 0
    return count
