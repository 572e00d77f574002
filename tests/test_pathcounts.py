"""Every position's optimal path count (puzzlespace.explore.pathcounts, explore --counts,
distance): against a breadth-first search with path counts over the whole space
(tests/reference.py) in every family, and against the optimal graph a tablebase gives
(puzzlespace.search.paths.by_table); the file bound to its tablebase; an overflow said."""

import json

import numpy as np
import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.errors import DamagedFile, PuzzleError
from puzzlespace.explore import pathcounts, tablebase
from puzzlespace.search.paths import by_table

from puzzles import saved_tablebase
from reference import path_counts_reference
from test_optimal import SMALL


@pytest.mark.parametrize("name", SMALL + ["3x3", "jump:7"])
def test_every_count_is_the_breadth_first_searchs(tmp_path, name):
    p = ps.load_puzzle(name)
    table = saved_tablebase(name, tmp_path)
    counts = pathcounts.count_paths(table.index, table.table, table.depth_counts, table.index.rank(p.goal))
    expected = path_counts_reference(p)
    ranks = np.array([table.index.rank(s) for s in expected], dtype=np.int64)
    assert np.array_equal(counts[ranks], np.array(list(expected.values()), dtype=np.uint64))
    assert np.count_nonzero(counts) == len(expected)
    for state in list(expected)[:: max(1, len(expected) // 20)]:
        assert int(counts[table.index.rank(state)]) == by_table(table, state).count()


def test_a_count_past_64_bits_is_said_never_wrapped(tmp_path):
    """The layer step returns -2 when a count would pass 2**64 - 1: here the goal starts
    at that count, and the first position of two parents overflows."""
    p = ps.load_puzzle("jump:7")
    table = saved_tablebase("jump:7", tmp_path)
    index = table.index
    counts = np.zeros(index.size, dtype=np.uint64)
    counts[index.rank(p.goal)] = np.uint64(pathcounts.MAX_COUNT)
    function, data, degree = pathcounts.kernel_of(index)
    up, down = index.rank_steps or (np.zeros(1, dtype=np.uint64),) * 2
    layer, out = np.array([index.rank(p.goal)], dtype=np.int64), np.empty(degree + 2, dtype=np.int64)
    expected = path_counts_reference(p)
    for depth in range(1, len(table.depth_counts)):
        following = np.empty(table.depth_counts[depth], dtype=np.int64)
        found = pathcounts._next_layer(pathcounts.NO_TABLE, table.table, counts, layer, following, depth % 3, up,
                                       down, out, function, degree, *data)
        if found == -2:
            break
        layer = following[:found].copy()
    assert found == -2 and any(v > 1 for v in expected.values())


def test_explore_counts_and_distance_prints_them(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    run = CliRunner().invoke
    made = run(app, ["explore", "3x3", "--save", "cache", "--counts", "--antipodes", "0"])
    assert made.exit_code == 0 and "optimal path counts written to" in made.stderr
    said = run(app, ["distance", "3x3", "8 6 7/2 5 4/3 0 1"])
    assert said.exit_code == 0 and said.stdout == "31 (40 optimal solutions)\n"
    answer = json.loads(run(app, ["distance", "3x3", "1 2 3/4 5 6/7 0 8", "--json"]).stdout)
    assert (answer["distance"], answer["count"]) == (1, 1)
    refused = run(app, ["explore", "3x2", "--counts"])
    assert refused.exit_code == 2 and "give --save FILE (or cache) with --counts" in refused.stderr


def test_counts_are_bound_to_their_tablebase(tmp_path):
    p = ps.load_puzzle("3x2")
    table = saved_tablebase("3x2", tmp_path)
    written = pathcounts.record(p, tmp_path / "t.pstb")
    assert written == tmp_path / "t.pstb.counts"
    start = p.parse_position("0 5 4/3 2 1")
    assert pathcounts.beside(table, tmp_path / "t.pstb").count(start) == by_table(table, start).count()
    counts = pathcounts.count_paths(table.index, table.table, table.depth_counts, table.index.rank(p.goal))
    pathcounts.save(written, p, table.index, counts, "0" * 64)  # counts of another tablebase: passed over
    assert pathcounts.beside(table, tmp_path / "t.pstb") is None
    pathcounts.save(written, p, table.index, counts, table.sha256)
    data = bytearray(written.read_bytes())
    data[-3] ^= 1
    written.write_bytes(bytes(data))
    with pytest.raises(DamagedFile, match="corrupt.*count them again with"):
        pathcounts.beside(table, tmp_path / "t.pstb")
    written.unlink()
    assert pathcounts.beside(tablebase.load(tmp_path / "t.pstb", p), tmp_path / "t.pstb") is None


def test_a_full_disk_or_a_second_writer_is_one_line(tmp_path, monkeypatch):
    """The counts are written atomically (nothing left on a failure), with the tablebase's
    write lock held: a second run saving the same file is refused."""
    from puzzlespace import datafile

    saved_tablebase("3x2", tmp_path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pathcounts.datafile, "write", full)
    with pytest.raises(PuzzleError, match=r"^cannot write the path counts '.*t.pstb.counts': No space left on device$"):
        pathcounts.record(ps.load_puzzle("3x2"), tmp_path / "t.pstb")
    assert not (tmp_path / "t.pstb.counts").exists()
    monkeypatch.undo()
    with datafile.locked(tmp_path / "t.pstb", "the tablebase"):
        refused = CliRunner().invoke(app, ["explore", "3x2", "--save", str(tmp_path / "t.pstb"), "--counts"])
    assert refused.exit_code == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("error: another puzzlespace process is writing the tablebase ")


def test_counting_more_than_the_memory_allowed_is_refused_first(tmp_path):
    p = ps.load_puzzle("3x3")
    saved_tablebase("3x3", tmp_path)
    with pytest.raises(PuzzleError, match=r"needs about .* of memory \(8 bytes a position"):
        pathcounts.record(p, tmp_path / "t.pstb", max_memory=1000)
    assert not (tmp_path / "t.pstb.counts").exists()
