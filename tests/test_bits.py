"""The 2-bit table primitives against plain Python."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzles import examples


@examples(40)
@given(st.integers(1, 700), st.integers(0, 2**32 - 1), st.integers(1, 2))
def test_table_primitives_match_plain_python(size, seed, value):
    """The word-at-a-time table loops against entry-by-entry Python."""
    from puzzlespace import bits as tb2

    rng = np.random.default_rng(seed)
    table = tb2.new_table(size)
    entries = rng.integers(0, 4, size)
    for i, e in enumerate(entries):
        tb2.set2(table, i, int(e))
    assert [tb2.get2(table, i) for i in range(size)] == list(entries)
    want = [i for i in range(size) if entries[i] == value]
    out = np.empty(len(want) + 1, dtype=np.int64)
    written, total = tb2.collect_layer(table, 0, size, value, out)
    assert (written, total, list(out[:written])) == (len(want), len(want), want)
    lo, hi = sorted(int(x) for x in rng.integers(0, size + 1, 2))
    inside = [i for i in want if lo <= i < hi]
    few = np.empty(int(rng.integers(0, len(inside) + 1)), dtype=np.int64)
    assert tb2.collect_layer(table, lo, hi, value, few) == (len(few), len(inside))
    assert list(few) == inside[:len(few)]
    assert [tb2.nth_in_layer(table, size, value, k) for k in range(len(want) + 1)] == want + [-1]
    first = np.empty(int(rng.integers(0, len(inside) + 2)), dtype=np.int64)
    every = np.ones_like(tb2.new_blocks(size))
    got = tb2.first_in_layer(table, lo, hi, value, every, first)
    assert list(first[:got]) == inside[:len(first)]

    marks = rng.integers(0, size, 300)  # more than MERGE_PREFETCH: the prefetching loop runs
    merged = table.copy()
    touched = tb2.new_blocks(size)
    added = tb2.merge_marks(merged, marks, len(marks), 3 - value, touched)
    fresh = {int(i) for i in marks if entries[i] == tb2.UNSEEN}
    assert added == len(fresh)
    assert list(touched) == [1 if any(i >> tb2.BLOCK_BITS == k for i in fresh) else 0 for k in range(len(touched))]
    assert [tb2.get2(merged, i) for i in range(size)] == [3 - value if i in fresh else e for i, e in enumerate(entries)]

    tablebase = tb2.new_table(size)
    tb2.copy_layer(table, 0, size, value, tablebase, 0)
    assert [tb2.get2(tablebase, i) for i in range(size)] == [0 if e == value else 3 for e in entries]
    tb2.close_layer(table, 0, size, value, every)
    assert [tb2.get2(table, i) for i in range(size)] == [tb2.CLOSED if e == value else e for e in entries]


def test_first_in_layer_skips_blocks_without_the_layer():
    from puzzlespace import bits as tb2

    size = 3 << tb2.BLOCK_BITS
    table = tb2.new_table(size)
    states = [5, (1 << tb2.BLOCK_BITS) + 7, (2 << tb2.BLOCK_BITS) + 9]
    for i in states:
        tb2.set2(table, i, 1)
    blocks = np.ones_like(tb2.new_blocks(size))
    out = np.empty(3, dtype=np.int64)
    assert list(out[:tb2.first_in_layer(table, 0, size, 1, blocks, out)]) == states
    blocks[1] = 0  # the flags say block 1 holds none: it is not read
    assert list(out[:tb2.first_in_layer(table, 0, size, 1, blocks, out)]) == [states[0], states[2]]


@settings(deadline=None)
@given(st.integers(0, 300), st.integers(0, 9), st.integers(0, 2**32 - 1))
def test_value_counts_match_entry_by_entry(nbytes, offset, seed):
    """A word at a time (with any start and a partial last word) against each entry."""
    from puzzlespace.bits import value_counts
    from reference import value_counts_reference

    rng = np.random.default_rng(seed)
    table = rng.integers(0, 256, nbytes + offset, dtype=np.uint8)[offset:]
    table[-1:] |= 0xC0  # the last entry past the size: 3, as value_counts asks
    size = 4 * nbytes - 1 if nbytes else 0
    assert value_counts(table, size) == value_counts_reference(table, size)
