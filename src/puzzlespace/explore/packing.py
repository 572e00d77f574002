"""Marks packed for the wire and for files: sorted, without repeats, each the gap from the
one before in 7-bit groups (LEB128), so a mark costs one or two bytes where ranks lie
close.

A packed block decodes on its own: its first gap is counted from rank 0. Packing sorts
(a least-significant-digit radix sort over the ranks' spread, a few passes of
:data:`DIGIT_BITS` bits) and drops repeated ranks, which changes nothing for the table
they are merged into. In a file, blocks follow one another, each framed by its byte count
(a little-endian uint64).
"""

from __future__ import annotations

import os
import zlib
from typing import BinaryIO, Iterator

import numba as nb
import numpy as np


#: Bits of a rank the radix sort orders in one pass: 2,048 buckets, whose counts and
#: write positions stay in the core's caches.
DIGIT_BITS = 11


def pack_marks(marks: np.ndarray, scratch: np.ndarray | None = None) -> np.ndarray:
    """The ranks ``marks`` (int64, non-negative, any order) packed: a uint8 array (measured
    first, so that nothing larger is made). ``marks`` and ``scratch`` (as long as
    ``marks``; made here when not given) are overwritten by the sort."""
    ranks = sort_ranks(marks, np.empty_like(marks) if scratch is None else scratch)
    out = np.empty(_pack(ranks, np.empty(0, dtype=np.uint8), False), dtype=np.uint8)
    _pack(ranks, out, True)
    return out


@nb.njit(cache=True, nogil=True)
def sort_ranks(keys, scratch):
    """``keys`` (int64) in increasing order, sorted by a least-significant-digit radix
    sort of ``key - min(keys)``: as few passes of at most :data:`DIGIT_BITS` bits as that
    spread needs, each stable, alternating between ``keys`` and ``scratch`` (as long);
    returns whichever of the two holds the result (the other holds no meaning)."""
    n = keys.shape[0]
    if n < 2:
        return keys
    lo, hi = keys[0], keys[0]
    for key in keys:
        lo, hi = min(lo, key), max(hi, key)
    bits = 0
    while (hi - lo) >> bits:
        bits += 1
    passes = max(1, -(-bits // DIGIT_BITS))
    width = max(1, -(-bits // passes))
    mask = (1 << width) - 1
    starts = np.zeros((passes, 1 << width), dtype=np.int64)
    for key in keys:  # every pass's counts in one read
        d = key - lo
        for p in range(passes):
            starts[p, (d >> (p * width)) & mask] += 1
    src, dst = keys, scratch
    for p in range(passes):
        at = starts[p]
        total = 0
        for b in range(at.shape[0]):
            at[b], total = total, total + at[b]
        shift = p * width
        for i in range(n):
            key = src[i]
            b = ((key - lo) >> shift) & mask
            dst[at[b]] = key
            at[b] += 1
        src, dst = dst, src
    return src


def unpack_marks(block: np.ndarray) -> np.ndarray:
    """The sorted ranks packed in ``block`` (int64; counted first, so that nothing larger
    is made)."""
    out = np.empty(_ends(block), dtype=np.int64)
    _unpack(block, out)
    return out


#: Bytes of a block's frame in a file: its byte count.
FRAME = 8


def write_block(f: BinaryIO, block: np.ndarray, check: int) -> int:
    """Append the packed ``block`` (not empty) to the file ``f``, framed; returns the
    CRC-32 ``check`` carried over the bytes written."""
    frame = len(block).to_bytes(FRAME, "little")
    f.write(frame)
    block.tofile(f)
    return zlib.crc32(block.data, zlib.crc32(frame, check))


def read_blocks(f: BinaryIO) -> Iterator[np.ndarray]:
    """The framed blocks of the file ``f`` from where it stands to its end; ValueError at a
    frame that does not fit the file."""
    size = os.fstat(f.fileno()).st_size
    while frame := f.read(FRAME):
        count = int.from_bytes(frame, "little") if len(frame) == FRAME else 0
        if not 0 < count <= size - f.tell():
            raise ValueError("a block's frame does not fit the file")
        yield np.fromfile(f, dtype=np.uint8, count=count)


@nb.njit(cache=True, nogil=True)
def _pack(ranks, out, write):
    """Bytes of the sorted ``ranks`` packed, written to ``out`` with ``write``."""
    at = 0
    last = -1
    for r in ranks:
        if r == last:
            continue
        gap = r - max(last, 0)
        last = r
        while gap >= 128:
            if write:
                out[at] = np.uint8((gap & 127) | 128)
            gap >>= 7
            at += 1
        if write:
            out[at] = np.uint8(gap)
        at += 1
    return at


@nb.njit(cache=True, nogil=True)
def _ends(block):
    """Ranks packed in ``block``: its bytes that end a gap."""
    count = 0
    for byte in block:
        count += (byte & 128) == 0
    return count


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
