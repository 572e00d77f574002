"""State indexes: rank/unrank of every family, and the compiled expansion kernels against their references."""

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.explore import explore
from puzzlespace.explore.engine import expand_span
from puzzlespace.bits import new_table, set2
from puzzlespace.families import token_index as ti
from puzzlespace.search.bfs import reachable_states

from puzzles import examples
from reference import expand_flip_reference, expand_groups_reference


#: 3x3 runs slow: the code of 4x2 on nine times the positions.
SMALL = ["2x2", "3x2", "2x3", "4x2", pytest.param("3x3", marks=pytest.mark.slow), "jump:4", "jump:5:1,3", "jump:6:2,3", "jump:7", "flip:3x3", "flip:4x3",
         "flip:2x2", "flip:3x2", "flip:5x2"]

@pytest.mark.parametrize("name", SMALL)
def test_unrank_covers_exactly_the_reachable_set(name):
    p = ps.load_puzzle(name)
    index = p.state_index()
    reachable = reachable_states(p, p.goal, max_states=10**6)
    states = [index.unrank(i) for i in range(index.size)]
    assert all(index.rank(s) == i for i, s in enumerate(states))
    if index.minimal:
        assert set(states) == reachable and len(states) == index.size
    else:
        assert reachable <= set(states)

@settings(deadline=None)
@given(st.sampled_from(["4x3", "3x4", "4x4", "jump:9", "jump:9:1,3", "6x2", "flip:6x6", "flip:5x4"]), st.data())
def test_rank_unrank_roundtrip_large(name, data):
    p = ps.load_puzzle(name)
    index = p.state_index()
    i = data.draw(st.integers(0, index.size - 1))
    s = index.unrank(i)
    assert index.rank(s) == i and p.check(s).solvable

@functools.lru_cache(maxsize=None)
def _random_table(name: str) -> np.ndarray:
    """A table of random entries the size of ``name``'s rank space (made once per puzzle)."""
    size = ps.load_puzzle(name).state_index().size
    return np.random.default_rng(len(name)).integers(0, 256, len(new_table(size)), dtype=np.uint8)

@settings(deadline=None)
@given(st.sampled_from(["3x3", "4x2", "2x4", "3x2", "jump:6", "jump:6:1,3", "jump:6:2,3", "jump:7:1,2", "4x3", "6x2"]),
       st.integers(0, 2**32 - 1), st.integers(1, 2), st.integers(1, 8), st.sampled_from([1, 100, 1 << 19]))
def test_fast_expansion_matches_reference(name, seed, value, suffix_length, table_limit):
    """The kernel against the decode-everything reference, on random tables, whatever the
    split between prefix and suffix digits and whichever windows have tables; the moves to
    node b +- 1 (rank steps) are left to the engine."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = ti.TokenIndex(p, suffix_length, table_limit)
    neighbors = p.graph.neighbors
    rng = np.random.default_rng(seed)
    table = _random_table(name)
    block = 1 << BLOCK_BITS
    if ix.size > 2 * block and rng.integers(0, 2):  # a span across a block edge, from mid-word
        lo = block * int(rng.integers(1, ix.size // block)) - int(rng.integers(0, 80))
    else:
        lo = int(rng.integers(0, ix.size))
    hi = min(ix.size, lo + int(rng.integers(1, 200 * ix.n)))
    flags = np.ones_like(new_blocks(ix.size))
    if rng.integers(0, 2):  # random flags; no state of the layer where a flag is clear
        flags = rng.integers(0, 2, len(flags)).astype(np.uint8)
        table = table.copy()
        for i in range(lo, hi):
            if not flags[i >> BLOCK_BITS] and (table[i >> 2] >> ((i & 3) << 1)) & 3 == value:
                set2(table, i, 0)
    ranks = np.empty(int(rng.integers(35, 300)), dtype=np.int64)
    fast = np.empty((hi - lo + len(ranks)) * max(ix.max_degree, 1), dtype=np.int64)  # room for every batch
    ref = np.empty((hi - lo) * ix.n, dtype=np.int64)
    c1, nxt = expand_span(ix, table, lo, hi, value, flags, fast, ranks)
    c2 = expand_groups_reference(table, lo, hi, value, ix.n, ix.ptr, ix.adj, ix.bipartite, ix.need, ix.fact,
                                    ref, False)
    listed = sorted(ref[:c2].tolist())  # every neighbour, once per (state, move)
    steps = sorted(i - i % ix.n + u for i in range(lo, hi) if (table[i >> 2] >> ((i & 3) << 1)) & 3 == value
                   for u in neighbors[i % ix.n] if abs(u - i % ix.n) == 1)
    assert nxt == hi
    assert sorted(fast[:c1].tolist() + steps) == listed

def test_expansion_from_mid_word_of_a_skipped_block():
    """A span that starts inside the first word of a block whose flag is clear: the
    entries before its start are masked in that word, not in the next block's first."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    ix = ps.load_puzzle("3x3").state_index()
    block = 1 << BLOCK_BITS
    table = new_table(ix.size)
    set2(table, 2 * block + 2, 1)  # the only frontier state: entry 2 of block 2's first word
    flags = np.zeros_like(new_blocks(ix.size))
    flags[2] = 1
    out, ranks = np.empty(1000, dtype=np.int64), np.empty(100, dtype=np.int64)
    count, nxt = expand_span(ix, table, block + 5, ix.size, 1, flags, out, ranks)
    flags[:] = 1
    assert nxt == ix.size and count > 0
    assert sorted(out[:count]) == sorted(out[:expand_span(ix, table, block + 5, ix.size, 1, flags, out, ranks)[0]])


@settings(deadline=None)
@given(st.integers(3, 14), st.data())
def test_window_change_matches_ranking(m, data):
    """The rank change of a token shift, from the Lehmer digits alone, against decoding,
    shifting and ranking afresh."""
    fact = np.array([math.factorial(i) for i in range(m + 1)], dtype=np.int64)
    r = data.draw(st.integers(0, math.factorial(m) - 1))
    src, dst = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, m - 1))
    seq = np.empty(m, dtype=np.int64)
    ti._unrank_perm(r, m, fact, seq)
    digits = np.array([sum(1 for z in seq[x + 1:] if z < seq[x]) for x in range(m)], dtype=np.int64)
    moved = list(seq)
    moved.insert(dst, moved.pop(src))
    assert ti._window_change(digits, src, dst, m, fact) == ti._rank_perm(np.array(moved), m, fact) - r

@pytest.mark.parametrize("length,step", [(1, 1), (3, 2), (5, 1), (8, 2)])
def test_suffix_table_digits_and_parity(length, step):
    fact = np.array([math.factorial(i) for i in range(length + 1)], dtype=np.int64)
    table = ti.suffix_table(length, step)
    assert len(table) == math.factorial(length) // step
    seq = np.empty(length, dtype=np.int64)
    for off in range(0, len(table), max(1, len(table) // 200)):
        ti._unrank_perm(off * step, length, fact, seq)
        digits = [sum(1 for z in seq[x + 1:] if z < seq[x]) for x in range(length)]
        assert [(int(table[off]) >> (3 * j)) & 7 for j in range(length)] == digits
        assert int(table[off]) >> 31 == sum(digits) & 1

@settings(deadline=None)
@given(st.sampled_from(["3x3", "4x3", "6x2", "jump:7:1,2", "jump:6:1,3", "3x2"]), st.integers(0, 2**32 - 1),
       st.integers(1, 2), st.booleans())
def test_rank_steps_match_plain_python(name, seed, value, close):
    """close_and_step (vector loops, carries between words and across blocks, blocks
    whose flag is clear) against a loop over states."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = p.state_index()
    n, neighbors = ix.n, p.graph.neighbors
    rng = np.random.default_rng(seed)
    table = _random_table(name).copy()
    for j in range(ix.size, 4 * len(table)):  # the padding is UNSEEN, as in new_table
        set2(table, j, 3)
    span = 32 * n  # a multiple of 32 and of the group
    block = 1 << BLOCK_BITS
    if ix.size > 2 * block and rng.integers(0, 2):  # just before the start of a block
        edge = block * int(rng.integers(1, ix.size // block))
        lo = span * max(0, edge // span - int(rng.integers(0, 4)))
    else:
        lo = span * int(rng.integers(0, min(ix.size, 40 * span) // span))
    hi = min(ix.size, lo + span * int(rng.integers(1, 6)))
    entry = lambda t, j: (t[j >> 2] >> ((j & 3) << 1)) & 3  # noqa: E731
    flags = rng.integers(0, 2, len(new_blocks(ix.size))).astype(np.uint8)
    for i in range(lo, hi):  # a clear flag: no state of value in the block
        if not flags[i >> BLOCK_BITS] and entry(table, i) == value:
            set2(table, i, 0)
    _assert_close_and_step(ix, neighbors, table, lo, hi, value, flags, close)

def _assert_close_and_step(ix, neighbors, table, lo, hi, value, flags, close):
    """close_and_step on ``table`` against a plain loop over the states of [lo, hi)."""
    from puzzlespace.bits import BLOCK_BITS, close_and_step

    n = ix.n
    entry = lambda t, j: (t[j >> 2] >> ((j & 3) << 1)) & 3  # noqa: E731
    new = 3 - value
    want = table.copy()
    fresh = set()
    for i in range(lo, hi):
        if entry(table, i) == value:
            for u in neighbors[i % n]:
                j = i - i % n + u
                if abs(u - i % n) == 1 and entry(want, j) == 3:
                    set2(want, j, new)
                    fresh.add(j)
    if close:
        for i in range(lo, hi):
            if entry(table, i) == value:
                set2(want, i, 0)
    following = np.zeros_like(flags)
    up, down = ix.rank_steps
    added = close_and_step(table, lo, hi, value, flags, new, following, up, down, close)
    assert added == len(fresh)
    assert np.array_equal(table, want)
    assert {k for k in range(len(following)) if following[k]} == {j >> BLOCK_BITS for j in fresh}

@pytest.mark.parametrize("name", ["6x2", "3x3"])
@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize("other_flag", [0, 1])
def test_rank_steps_across_a_block_edge(name, direction, other_flag):
    """A step from the last state of a block up to the first of the next, or from that
    one down, whether or not the other block's flag is set."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = p.state_index()
    edge = next(k << BLOCK_BITS for k in range(1, ix.size >> BLOCK_BITS)
                if (k << BLOCK_BITS) % ix.n - 1 in p.graph.neighbors[(k << BLOCK_BITS) % ix.n])
    source = edge - 1 if direction == "up" else edge
    span = 32 * ix.n
    lo, hi = span * (edge // span - 1), span * (edge // span + 2)
    for close in (False, True):
        table = new_table(ix.size)
        flags = np.zeros_like(new_blocks(ix.size))
        flags[(edge - 1) >> BLOCK_BITS] = flags[edge >> BLOCK_BITS] = other_flag
        flags[source >> BLOCK_BITS] = 1
        set2(table, source, 1)
        _assert_close_and_step(ix, p.graph.neighbors, table, lo, hi, 1, flags, close)

def test_expansion_resumes_when_its_buffer_is_full():
    p = ps.load_puzzle("3x3")
    full = explore(p)
    from puzzlespace.explore import engine

    old = engine.MARK_BUFFER
    engine.MARK_BUFFER = 64
    try:
        small = explore(p, threads=2)
    finally:
        engine.MARK_BUFFER = old
    assert small.depth_counts == full.depth_counts

@examples(30)
@given(st.sampled_from(["flip:3x3", "flip:4x3", "flip:5x4", "flip:2x2", "flip:5x5"]), st.integers(0, 2**32 - 1),
       st.integers(1, 2))
def test_fast_flip_expansion_matches_reference(name, seed, value):
    ix = ps.load_puzzle(name).state_index()
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 256, len(new_table(ix.size)), dtype=np.uint8)
    lo = int(rng.integers(0, ix.size))
    hi = min(ix.size, lo + int(rng.integers(1, 3000)))
    ranks = np.empty(int(rng.integers(35, 500)), dtype=np.int64)
    fast = np.empty((hi - lo + len(ranks)) * ix.max_degree, dtype=np.int64)  # room for every batch
    ref = np.empty_like(fast)
    c1, nxt = expand_span(ix, table, lo, hi, value, np.ones(ix.size // 65536 + 2, dtype=np.uint8), fast, ranks)
    c2 = expand_flip_reference(table, lo, hi, value, ix.orbit_cells, ix.orbit_len, ix.pat2dig,
                                  ix.dig2pat, ix.radix, ix.mult, ix.src, ix.flip, ref)
    assert nxt == hi and sorted(fast[:c1]) == sorted(ref[:c2])

@pytest.mark.parametrize("name", ["3x3", "jump:9:1,3", "flip:5x5", "6x2"])
def test_expansion_skips_only_blocks_without_frontier_states(name):
    """Clear the frontier from some blocks and their flags: the same marks as with every flag set."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    ix = ps.load_puzzle(name).state_index()
    rng = np.random.default_rng(7)
    size = min(ix.size, 6 << BLOCK_BITS)
    table = rng.integers(0, 256, len(new_table(ix.size)), dtype=np.uint8)
    blocks = np.ones_like(new_blocks(ix.size))
    block_bytes = (1 << BLOCK_BITS) // 4
    for k in range(0, (size >> BLOCK_BITS) + 1, 2):
        table[k * block_bytes:(k + 1) * block_bytes] = 0  # all CLOSED: no frontier state
        blocks[k] = 0
    out = [np.empty(size * max(ix.max_degree, 1) + 1000, dtype=np.int64) for _ in range(2)]
    ranks = np.empty(4096, dtype=np.int64)
    c1, n1 = expand_span(ix, table, 0, size, 1, blocks, out[0], ranks)
    c2, n2 = expand_span(ix, table, 0, size, 1, np.ones_like(blocks), out[1], ranks)
    assert (c1, n1) == (c2, n2) and c1 > 0 and np.array_equal(out[0][:c1], out[1][:c2])


@examples(30)
@given(st.sampled_from(["flip:5x4", "4x3", "jump:8:1,3"]), st.integers(0, 2**32 - 1))
def test_expansion_of_a_part_of_the_table(name, seed):
    """A table holding ranks ``base ..`` only (a segment): the same states expanded; a
    neighbour outside the part counts as unreached, so it is listed even if reached."""
    from puzzlespace.bits import UNSEEN, get2, new_blocks

    ix = ps.load_puzzle(name).state_index()
    rng = np.random.default_rng(seed)
    table = _random_table(name)
    base = 32 * int(rng.integers(0, ix.size // 32))
    span = min(ix.size - base, 32 * int(rng.integers(1, 2000)))
    part = table[base // 4:(base + span + 3) // 4].copy()
    lo = base + int(rng.integers(0, span))
    hi = min(base + span, lo + int(rng.integers(1, 3000)))
    ranks = np.empty(300, dtype=np.int64)
    room = (hi - lo + 300) * max(ix.max_degree, 1)
    full, here = np.empty(room, dtype=np.int64), np.empty(room, dtype=np.int64)
    c1, n1 = expand_span(ix, table, lo, hi, 1, np.ones_like(new_blocks(ix.size)), full, ranks)
    c2, n2 = expand_span(ix, part, lo, hi, 1, np.ones_like(new_blocks(span)), here, ranks, base=base)
    assert n1 == hi and n2 == hi
    inside = lambda j: base <= j < base + span  # noqa: E731
    assert sorted(j for j in here[:c2] if inside(j)) == sorted(j for j in full[:c1] if inside(j))
    outside_full = sorted(j for j in full[:c1] if not inside(j))
    outside_here = sorted(j for j in here[:c2] if not inside(j))
    assert set(outside_full) <= set(outside_here)
    assert all(get2(table, j) != UNSEEN for j in set(outside_here) - set(outside_full))
