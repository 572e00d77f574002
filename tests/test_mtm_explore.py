"""The multi-tile metric's explore kernel against a plain reference: the neighbours it
lists for random ranks, with and without a table to leave reached ones out, and the
published radius of 6x2 (slow)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.bits import CLOSED, new_table, set2
from puzzlespace.explore import explore
from puzzlespace.explore.engine import _list_neighbours, expand_ranks, kernel_of

from puzzles import examples
from reference import mtm_moves_reference

BOARDS = ["2x2", "3x2", "2x3", "4x2", "3x3", "2x4", "5x2", "4x3", "3x4", "6x2", "4x4", "5x3", "3x5", "7x2", "2x7"]
_INDEX: dict = {}


def index(size: str):
    """The MTM puzzle of ``size``, its state index and the index's kernel, made once."""
    if size not in _INDEX:
        p = ps.load_puzzle(f"{size}:mtm")
        ix = p.state_index()
        _INDEX[size] = p, ix, kernel_of(ix)
    return _INDEX[size]


def reference_neighbours(p, ix, rank: int) -> list[int]:
    """Every neighbour's rank, by playing each move on the position (``p.apply`` over
    ``p.moves``), checked against the plain reference's positions."""
    s = ix.unrank(rank)
    after = [p.apply(s, m) for m in p.moves(s)]
    assert sorted(after) == sorted(mtm_moves_reference(p.width, p.height, s))
    return [ix.rank(t) for t in after]


def stepped(ix, rank: int) -> list[int]:
    """The rank steps of ``rank`` (moves to the rank just after or before it), which the
    engine applies itself."""
    up, down = ix.rank_steps
    word, entry = divmod(rank, 32)
    p = (word * 32) % ix.n
    return [rank + d for d, masks in ((1, up), (-1, down)) if int(masks[p]) >> (2 * entry) & 1]


@settings(deadline=None)
@given(st.sampled_from(BOARDS), st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=40))
def test_the_kernel_lists_every_move_of_random_ranks(size, where):
    """With no table the kernel lists every neighbour but the rank steps, once each: with
    the rank steps, exactly the neighbours the moves played on the positions give."""
    p, ix, kernel = index(size)
    ranks = np.unique(np.array([int(f * ix.size) for f in where], dtype=np.int64))
    out = np.empty(len(ranks) * ix.max_degree + 1, dtype=np.int64)
    listed = list(out[:expand_ranks(kernel, ranks, out)])
    expected = []
    for r in ranks:
        mine = reference_neighbours(p, ix, int(r))
        steps = stepped(ix, int(r))
        assert set(steps) <= set(mine)
        expected += [t for t in mine if t not in steps]
    assert sorted(listed) == sorted(expected)


@examples(30)
@given(st.sampled_from(["3x3", "4x2", "4x3", "6x2"]), st.integers(0, 2**62), st.data())
def test_reached_row_targets_are_left_out(size, seed, data):
    """Given a table, the kernel leaves out a move along a row to a reached state and
    keeps every unreached neighbour."""
    p, ix, kernel = index(size)
    rank = int(np.random.default_rng(seed).integers(ix.size))
    neighbours = reference_neighbours(p, ix, rank)
    reached = data.draw(st.lists(st.sampled_from(neighbours), unique=True))
    table = new_table(ix.size)
    for r in reached:
        set2(table, r, CLOSED)
    out = np.empty(ix.max_degree + 2, dtype=np.int64)
    function, tables, degree = kernel
    count = _list_neighbours(table, np.array([rank], dtype=np.int64), 1, out, function, degree, *tables)
    listed = set(out[1:count + 1].tolist())
    others = set(neighbours) - set(stepped(ix, rank))
    assert others - set(reached) <= listed <= others
    row = {t for t in others if t // ix.n == rank // ix.n}  # the moves that keep the sequence
    assert not row & set(reached) & listed


@pytest.mark.slow
def test_the_published_radius_of_6x2():
    result = explore(ps.load_puzzle("6x2:mtm"))
    assert result.max_depth == 41 and result.states == 239_500_800
