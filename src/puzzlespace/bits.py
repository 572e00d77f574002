"""The packed per-state table of a breadth-first search, 2 bits per state, and the
compiled loops that touch it.

Entry values while a search runs (see :func:`layer_value`):

* ``UNSEEN`` (3): not reached yet;
* the *frontier* value ``layer_value(d)``: exactly the states of layer ``d``, the one being
  expanded;
* the *next* value ``layer_value(d + 1)``: states found so far at depth ``d + 1``;
* ``CLOSED`` (0): reached at a depth below ``d``.

The frontier and next values alternate between 1 and 2 from layer to layer; when a layer
is complete, :func:`close_layer` turns the old frontier into ``CLOSED``. So the table
alone tells the frontier apart, with no extra bit. Memory per state: 2 bits (0.25 bytes).

Entries are read in 64-bit words of 32 entries: :func:`match_word` gives, at bit ``2k``,
whether entry ``k`` holds a value; tables are padded to whole words (padding is UNSEEN).

:func:`close_and_step` closes a layer and at once applies an index's *rank steps* (moves
to the next or previous rank, which stay inside a chunk) from it, block by block in
vector instructions.

*Block flags* (one byte per ``2**BLOCK_BITS`` states, :func:`new_blocks`) say which blocks
may hold states of a layer: a flag may be set for a block without such states, never the
other way round. Walks skip the blocks whose flag is clear, so a layer of few states does
not cost a pass over the whole table.
"""

from __future__ import annotations

from llvmlite import ir
import numba as nb
from numba.core import cgutils, types
from numba.extending import intrinsic
import numpy as np

UNSEEN = 3
CLOSED = 0
#: How many marks ahead :func:`merge_marks` prefetches the table.
MERGE_PREFETCH = 128
#: States per block flag: 2**16 (16 KiB of table, 2,048 words).
BLOCK_BITS = 16
BLOCK_WORD_BITS = BLOCK_BITS - 5
BLOCK_WORDS = 1 << BLOCK_WORD_BITS
_LOW = np.uint64(0x5555555555555555)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


def layer_value(depth: int) -> int:
    """The entry value of the states of layer ``depth`` while it is the frontier or the next layer."""
    return 1 + (depth & 1)


def table_bytes(size: int) -> int:
    """Bytes of a table of ``size`` 2-bit entries, padded to whole 64-bit words."""
    return ((size + 31) // 32) * 8


def new_table(size: int) -> np.ndarray:
    """A table of ``size`` 2-bit entries, all UNSEEN, padded to whole 64-bit words."""
    return np.full(table_bytes(size), 0xFF, dtype=np.uint8)


def value_counts(table: np.ndarray, size: int) -> list[int]:
    """How many of the first ``size`` entries of ``table`` hold 0, 1, 2 and 3 (entries past
    ``size`` must hold 3, as in :func:`new_table`). A word of 32 entries at a time, a
    byte at a time past the last whole word."""
    whole = len(table) // 8 * 8
    ones, twos, threes = _word_value_counts(table[:whole].view(np.uint64))
    counts = [4 * whole - ones - twos - threes, ones, twos, threes]
    for byte in table[whole:].tolist():
        for k in range(4):
            counts[(byte >> (2 * k)) & 3] += 1
    counts[3] -= 4 * len(table) - size
    return [int(c) for c in counts]


def new_blocks(size: int) -> np.ndarray:
    """Block flags for a table of ``size`` states, all clear."""
    return np.zeros(((size - 1) >> BLOCK_BITS) + 2, dtype=np.uint8)


@intrinsic
def _ctpop(typingctx, x):
    """The CPU's population count of a uint64 (LLVM ``ctpop``)."""
    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def _cttz(typingctx, x):
    """The CPU's count of trailing zeros of a non-zero uint64 (LLVM ``cttz``)."""
    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.uint64(types.uint64), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to fetch ``array[index]`` into the cache for writing (LLVM ``prefetch``);
    no effect on the program's results, never faults."""
    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte = ir.IntType(8).as_pointer()
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte] + [ir.IntType(32)] * 3), "llvm.prefetch.p0i8")
        flags = [ir.Constant(ir.IntType(32), v) for v in (1, 3, 1)]  # write, keep in all levels, data
        builder.call(fn, [builder.bitcast(builder.gep(data, [args[1]]), byte)] + flags)
        return context.get_dummy_value()

    return types.void(array, index), codegen


@nb.njit(cache=True, nogil=True, inline="always")
def popcount(x):
    """Number of set bits of a uint64."""
    return np.int64(_ctpop(x))


@nb.njit(cache=True, nogil=True)
def _word_value_counts(words):
    """How many of the 2-bit entries of ``words`` (32 a uint64) hold 1, 2 and 3."""
    low = np.uint64(0x5555555555555555)
    ones = twos = threes = 0
    for word in words:
        lo = word & low
        hi = (word >> np.uint64(1)) & low
        both = lo & hi
        threes += popcount(both)
        ones += popcount(lo ^ both)
        twos += popcount(hi ^ both)
    return ones, twos, threes


@nb.njit(cache=True, nogil=True, inline="always")
def lowest_bit(word):
    """Index of the lowest set bit of a non-zero uint64."""
    return np.int64(_cttz(word))


@nb.njit(cache=True, nogil=True, inline="always")
def get2(table, i):
    return (table[i >> 2] >> ((i & 3) << 1)) & 3


@nb.njit(cache=True, nogil=True, inline="always")
def unreached(table, base, i):
    """Whether rank ``i`` is not reached yet, as far as ``table`` knows: it holds the entries
    of ranks ``base .. base + 4 * len(table) - 1``, and a rank outside them counts as
    unreached."""
    k = i - base
    return k < 0 or k >= table.shape[0] * 4 or get2(table, k) == UNSEEN


@nb.njit(cache=True, nogil=True, inline="always")
def set2(table, i, v):
    s = (i & 3) << 1
    table[i >> 2] = (table[i >> 2] & ~np.uint8(3 << s)) | np.uint8(v << s)


@nb.njit(cache=True, nogil=True, inline="always")
def pattern(value):
    """``value`` in all 32 entries of a word."""
    return np.uint64(value) * _LOW


@nb.njit(cache=True, nogil=True, inline="always")
def match_word(word, pat):
    """Bit ``2k`` set where entry ``k`` of ``word`` equals the value repeated in ``pat``."""
    x = word ^ pat
    return ~(x | (x >> _ONE)) & _LOW


@nb.njit(cache=True, nogil=True, inline="always")
def next_word(words, w, end, pat, blocks):
    """The next word after ``w`` (before ``end``) that may hold entries of the value of
    ``pat``, skipping blocks whose flag is clear; ``(word, match)``, ``(end, 0)`` if none."""
    w += 1
    while w < end:
        if w & ((1 << BLOCK_WORD_BITS) - 1) == 0:
            while w < end and blocks[w >> BLOCK_WORD_BITS] == 0:
                w += 1 << BLOCK_WORD_BITS
            if w >= end:
                break
        m = match_word(words[w], pat)
        if m != 0:
            return w, m
        w += 1
    return end, _ZERO


@nb.njit(cache=True, nogil=True)
def merge_marks(table, marks, count, value, blocks):
    """Set every UNSEEN state in ``marks[:count]`` to ``value``, and the flags of their
    blocks in ``blocks``.

    Returns the number of states newly set (duplicates in ``marks`` count once). No branch
    on the entry: about half the marks are already reached, so a branch on it would be
    mispredicted half the time. The entry of the mark ``MERGE_PREFETCH`` places ahead is
    prefetched: where marks land far apart in a table much larger than the cache, more of
    them are then fetched at once.
    """
    added = 0
    for j in range(count):
        if j + MERGE_PREFETCH < count:
            prefetch(table, marks[j + MERGE_PREFETCH] >> 2)
        added += mark_state(table, marks[j], value, blocks)
    return added


@nb.njit(cache=True, nogil=True, inline="always")
def mark_state(table, i, value, blocks):
    """Set state ``i`` to ``value`` if it is UNSEEN, and then the flag of its block in
    ``blocks``; return 1 if it was, else 0. No branch on the entry (see :func:`merge_marks`)."""
    k = i >> 2
    byte = np.int64(table[k])
    s = (i & 3) << 1
    unseen = np.int64(((byte >> s) & 3) == UNSEEN)
    table[k] = np.uint8(byte ^ (unseen * ((UNSEEN ^ value) << s)))
    blocks[i >> BLOCK_BITS] |= np.uint8(unseen)
    return unseen


@nb.njit(cache=True, nogil=True)
def close_layer(table, lo, hi, value, blocks):
    """Set the entries equal to ``value`` in states ``[lo, hi)`` to CLOSED, in the blocks
    whose flag is set (``blocks`` covers the layer).

    ``lo`` is a multiple of 32; entries of the last word past ``hi`` are padding or
    belong to the next span, which is closed with the same value anyway.
    """
    words = table.view(np.uint64)
    pat = pattern(value)
    end = (hi + 31) >> 5
    w = (lo >> 5) - 1
    while True:
        w, m = next_word(words, w, end, pat, blocks)
        if m == 0:
            return
        words[w] &= ~(m | (m << _ONE))


@nb.njit(cache=True, nogil=True)
def close_and_step(table, lo, hi, value, blocks, new, following, up, down, close):
    """Apply the *rank steps* of the states of ``[lo, hi)`` whose entry is ``value`` (their
    moves to the states ranked just after and just before them), then, if ``close``, set
    those entries to CLOSED. Returns the number of states newly set to ``new``.

    ``up[p]`` (``down[p]``) has bit ``2k`` set where entry ``k`` of a word whose first
    state's rank is ``p`` modulo ``len(up)`` has a move to the next (previous) rank. UNSEEN
    targets become ``new``, and the flags of their blocks are set in ``following``. The
    steps must not cross ``lo`` or ``hi``, which are multiples of 32 (``hi``: or the
    table's size), so that threads may work on disjoint spans at once; ``blocks`` cover
    the states of ``value``.

    Block by block, in two loops over plain slices that the compiler turns into vector
    instructions (no branch per word): the matching entries and their steps up and down,
    then every word's targets (its own, and those carried in from the words either side).
    """
    words = table.view(np.uint64)
    pat = pattern(value)
    first = lo >> 5
    end = (hi + 31) >> 5
    n = up.shape[0]
    period = n // np.gcd(n, 32)  # words after which the pattern of moves repeats
    up_at = np.empty(BLOCK_WORDS + period, dtype=np.uint64)  # masks of word j of a period
    down_at = np.empty(BLOCK_WORDS + period, dtype=np.uint64)
    for j in range(up_at.shape[0]):
        up_at[j] = up[(j * 32) % n]
        down_at[j] = down[(j * 32) % n]
    found = np.empty(BLOCK_WORDS, dtype=np.uint64)
    ups = np.zeros(BLOCK_WORDS + 1, dtype=np.uint64)  # ups[j + 1]: word j's; ups[0]: the word before's
    downs = np.zeros(BLOCK_WORDS + 2, dtype=np.uint64)  # downs[j + 1]: word j's; then the word after's
    keep = np.uint64(2 - new)  # UNSEEN (0b11) becomes new by clearing the other bit
    closing = _ZERO - np.uint64(1 if close else 0)
    added = 0
    carry = _ZERO  # steps up of the last word before (its original entries)
    start = first & ~(BLOCK_WORDS - 1)
    for block in range(start >> BLOCK_WORD_BITS, ((end - 1) >> BLOCK_WORD_BITS) + 1):
        a = max(block << BLOCK_WORD_BITS, first)
        b = min((block + 1) << BLOCK_WORD_BITS, end)
        after = _ZERO  # steps down of the word after the block, into its last word
        if b < end and blocks[block + 1] != 0:
            after = match_word(words[b], pat) & down_at[b % period] & _ONE
        if blocks[block] == 0:  # no state of value here, but steps may come in at either end
            for w, hit in ((a, carry >> np.uint64(62)), (b - 1, after << np.uint64(62))):
                x = words[w]
                hit &= x & (x >> _ONE)
                if hit != 0:
                    words[w] = x & ~(hit << keep)
                    following[block] = 1
                    added += popcount(hit)
            carry = _ZERO
            continue
        count = b - a
        ws, fs = words[a:b], found[:count]
        us, ds = ups[1:count + 1], downs[1:count + 1]
        phase = a % period
        up_w, down_w = up_at[phase:phase + count], down_at[phase:phase + count]
        for j in range(count):
            m = match_word(ws[j], pat)
            fs[j] = m
            us[j] = m & up_w[j]
            ds[j] = m & down_w[j]
        ups[0] = carry
        downs[count + 1] = after
        before, next_down = ups[:count], downs[2:count + 2]
        fresh = _ZERO
        total = 0
        for j in range(count):
            x = ws[j]
            hit = ((us[j] << np.uint64(2)) | (ds[j] >> np.uint64(2)) | (before[j] >> np.uint64(62))
                   | ((next_down[j] & _ONE) << np.uint64(62))) & x & (x >> _ONE) & _LOW
            m = fs[j]
            ws[j] = x & ~(hit << keep) & ~((m | (m << _ONE)) & closing)
            total += popcount(hit)
            fresh |= hit
        added += total
        if fresh != 0:
            following[block] = 1
        carry = ups[count]
    return added


@nb.njit(cache=True, nogil=True)
def copy_layer(table, lo, hi, value, target, target_value):
    """Write ``target_value`` into the 2-bit table ``target`` wherever ``table`` holds
    ``value``, in states ``[lo, hi)`` (``lo`` a multiple of 32)."""
    words = table.view(np.uint64)
    into = target.view(np.uint64)
    pat, put = pattern(value), pattern(target_value)
    for w in range(lo >> 5, (hi + 31) >> 5):
        m = match_word(words[w], pat)
        if m != 0:
            both = m | (m << _ONE)
            into[w] = (into[w] & ~both) | (put & both)


@nb.njit(cache=True, nogil=True)
def collect_layer(table, lo, hi, value, out):
    """Write up to ``len(out)`` states of ``[lo, hi)`` whose entry is ``value`` into ``out``,
    in increasing order; return ``(written, total)``."""
    words = table.view(np.uint64)
    pat = pattern(value)
    written = 0
    total = 0
    for w in range(lo >> 5, (hi + 31) >> 5):
        m = match_word(words[w], pat)
        while m != 0:
            i = (w << 5) + (lowest_bit(m) >> 1)
            m &= m - _ONE
            if lo <= i < hi:
                if written < out.shape[0]:
                    out[written] = i
                    written += 1
                total += 1
    return written, total


@nb.njit(cache=True, nogil=True)
def first_in_layer(table, lo, hi, value, blocks, out):
    """Write the first ``len(out)`` (at most) states of ``[lo, hi)`` whose entry is
    ``value`` into ``out``, in increasing order, and stop; return how many. ``blocks``
    cover those states."""
    words = table.view(np.uint64)
    pat = pattern(value)
    written = 0
    end = (hi + 31) >> 5
    w = (lo >> 5) - 1
    while written < out.shape[0]:
        w, m = next_word(words, w, end, pat, blocks)
        if m == 0:
            break
        while m != 0 and written < out.shape[0]:
            i = (w << 5) + (lowest_bit(m) >> 1)
            m &= m - _ONE
            if lo <= i < hi:
                out[written] = i
                written += 1
    return written


@nb.njit(cache=True, nogil=True)
def nth_in_layer(table, size, value, k):
    """The ``k``-th (0-based, by rank) state whose entry is ``value``, or -1."""
    words = table.view(np.uint64)
    pat = pattern(value)
    for w in range((size + 31) >> 5):
        m = match_word(words[w], pat)
        c = popcount(m)
        if k < c:
            for _ in range(k):
                m &= m - _ONE
            return (w << 5) + (lowest_bit(m) >> 1)
        k -= c
    return -1
