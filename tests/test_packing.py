"""Packed marks against the obvious reference (the sorted distinct ranks), the radix sort
that packing uses against NumPy's sort, and the framed blocks in a file: read back whole,
and a frame that does not fit is refused."""

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from puzzlespace.explore.packing import DIGIT_BITS, pack_marks, read_blocks, sort_ranks, unpack_marks, write_block

RANKS = st.lists(st.integers(0, (1 << 62) - 1) | st.integers(0, 300), max_size=300)


@settings(deadline=None)
@given(RANKS)
def test_packing_round_trips_to_the_distinct_sorted_ranks(ranks):
    marks = np.array(ranks, dtype=np.int64)
    assert np.array_equal(unpack_marks(pack_marks(marks.copy())), np.unique(marks))


@settings(deadline=None)
@given(st.lists(st.integers(0, (1 << 63) - 1), max_size=300), st.integers(0, 62),
       st.none() | st.integers(0, 3 * DIGIT_BITS + 2))
def test_the_radix_sort_orders_as_numpy_does(ranks, offset, spread):
    """Ranks of every spread (none, one pass of digits up to four and their edges, or
    any int64), from any offset, with repeats."""
    marks = np.array(ranks if spread is None else [(1 << offset) + r % (1 << spread) for r in ranks], dtype=np.int64)
    assert np.array_equal(sort_ranks(marks.copy(), np.empty_like(marks)), np.sort(marks))


def test_the_radix_sort_of_many_ranks():
    marks = np.random.default_rng(7).integers(1 << 40, (1 << 40) + (1 << 34), 200_000)
    assert np.array_equal(sort_ranks(marks.copy(), np.empty_like(marks)), np.sort(marks))


def test_close_ranks_pack_to_a_byte_each():
    dense = np.arange(0, 1 << 20, 3, dtype=np.int64)
    assert len(pack_marks(dense.copy())) == len(dense)


def _file(blocks: list[list[int]], path) -> tuple[bytes, int]:
    check = 0
    with open(path, "wb") as f:
        for ranks in blocks:
            check = write_block(f, pack_marks(np.array(ranks, dtype=np.int64)), check)
    return path.read_bytes(), check


@settings(deadline=None)
@given(st.lists(st.lists(st.integers(0, 1 << 40), min_size=1, max_size=50), max_size=6))
def test_framed_blocks_read_back_and_the_writers_crc_is_the_files(tmp_path_factory, blocks):
    path = tmp_path_factory.mktemp("blocks") / "sent.bin"
    raw, written = _file(blocks, path)
    with open(path, "rb") as f:
        got = list(read_blocks(f))
    assert [list(unpack_marks(b)) for b in got] == [sorted(set(r)) for r in blocks]
    assert written == zlib.crc32(raw)


def test_a_file_cut_inside_a_block_is_refused(tmp_path):
    raw, _ = _file([[5, 9, 1 << 33], [2], list(range(0, 4000, 7))], tmp_path / "sent.bin")
    ends, at = set(), 0
    while at < len(raw):
        at += 8 + int.from_bytes(raw[at:at + 8], "little")
        ends.add(at)
    for cut in range(len(raw)):
        (tmp_path / "cut.bin").write_bytes(raw[:cut])
        with open(tmp_path / "cut.bin", "rb") as f:
            if cut == 0 or cut in ends:
                list(read_blocks(f))
            else:
                with pytest.raises(ValueError):
                    list(read_blocks(f))


def test_a_frame_longer_than_the_file_allocates_nothing(tmp_path):
    (tmp_path / "huge.bin").write_bytes((1 << 62).to_bytes(8, "little") + b"\x01")
    with open(tmp_path / "huge.bin", "rb") as f, pytest.raises(ValueError):
        list(read_blocks(f))
