"""Pattern databases: minimal placement ranks, the compiled abstract BFS against a plain
0-1 BFS, the files (4/8 bits, header, checksum, rebuild), and IDA* with them against BFS."""

import random
from math import perm

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.pdb import store
from puzzlespace.pdb.heuristic import default_pdb, parse_groups, pattern_problem, views
from puzzlespace.pdb.space import (PatternSpace, pattern_distances, rank_cells,
                                   unrank_cells)
from puzzlespace.solver import search_problem_for
from reference import pattern_distances_reference
from puzzles import random_solvable

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(deadline=None)
@given(st.integers(1, 64).flatmap(lambda n: st.tuples(st.just(n), st.permutations(range(n)), st.integers(1, n))))
def test_rank_unrank_roundtrip(case):
    n, nodes, k = case
    k = min(k, 9)
    cells = np.array(nodes[:k], dtype=np.int64)
    r = int(rank_cells(cells, 0, k, n))
    assert 0 <= r < perm(n, k)
    back = np.empty(k, dtype=np.int64)
    unrank_cells(np.int64(r), k, n, back)
    assert list(back) == list(cells)


@pytest.mark.parametrize("n,k", [(5, 2), (6, 3), (7, 7), (9, 4)])
def test_placement_ranks_are_minimal(n, k):
    cells = np.empty(k, dtype=np.int64)
    seen = set()
    for r in range(perm(n, k)):
        unrank_cells(np.int64(r), k, n, cells)
        assert len(set(cells)) == k and int(rank_cells(cells, 0, k, n)) == r
        seen.add(tuple(cells))
    assert len(seen) == perm(n, k)


CASES = [
    ("3x3", (1, 2, 3, 4)), ("3x3", (5, 6, 7, 8)), ("3x3", (8, 1, 5)), ("3x3", tuple(range(1, 9))),
    ("4x2", (1, 3, 5)), ("4x2", (7,)), ("jump:7", (1, 2, 3)), ("jump:6:1,3", (2, 4, 5)),
]


@pytest.mark.parametrize("name,tiles", CASES)
def test_compiled_build_matches_reference(name, tiles):
    p = ps.load_puzzle(name)
    space = PatternSpace(p.graph.neighbors, p.goal, tiles)
    table = pattern_distances(space, threads=2)
    ref = pattern_distances_reference(p.graph.neighbors, p.goal, tiles)
    got = {space.unrank(r): int(v) for r, v in enumerate(table) if v != 255}
    assert got == ref


def test_build_on_a_graph_and_other_goal(examples):
    p = ps.load_puzzle(f"graph:{examples / 'petersen.toml'}")
    p = p.with_goal(tuple(reversed(p.goal)))
    tiles = (1, 2, 3)
    space = PatternSpace(p.graph.neighbors, p.goal, tiles)
    got = {space.unrank(r): int(v) for r, v in enumerate(pattern_distances(space, threads=1)) if v != 255}
    assert got == pattern_distances_reference(p.graph.neighbors, p.goal, tiles)


def test_parse_groups_and_defaults():
    goal = tuple(range(16))
    assert parse_groups("7-8", goal) == [list(range(1, 8)), list(range(8, 16))]
    assert parse_groups("1,2,3/4, 5", goal) == [[1, 2, 3], [4, 5]]
    p = ps.load_puzzle("4x3")
    assert parse_groups("6-5", p.goal, p.pattern_order()) == [[1, 5, 9, 2, 6, 10], [3, 7, 11, 4, 8]]
    assert default_pdb(16) == "pdb:6-6-3" and default_pdb(25) == "pdb:6-6-6-6" and default_pdb(49) is None
    for bad, word in [("9-9", "sum"), ("1,2/2,3", "disjoint"), ("1,16", "does not exist"), ("a-b", "sizes")]:
        with pytest.raises(PuzzleError, match=word):
            parse_groups(bad, goal)


def test_reflection_view_maps_the_goal_onto_itself():
    p = ps.load_puzzle("4x4", " ".join(map(str, range(16))))
    (cells, tiles), = views(p.goal, p.symmetries())
    assert cells[1] == 4 and tiles[1] == 4 and tiles[0] == 0
    assert all(p.goal[cells[v]] == tiles[p.goal[v]] for v in range(16))
    assert views((1, 0, 2, 3), [[0, 2, 1, 3]]) == []  # the blank would move: not usable


@pytest.mark.parametrize("name,heuristic", [("3x3", "pdb:4-4"), ("3x3", "pdb:1,5,6/2,3/4,7,8"), ("4x2", "pdb:4-3"),
                                            ("3x2", "pdb:3"), ("jump:7", "pdb:3-3")])
@SETTINGS
@given(st.integers(0, 2**32).map(random.Random))
def test_ida_with_patterns_matches_bfs(name, heuristic, rng):
    p = ps.load_puzzle(name)
    start = random_solvable(p, rng)
    problem = search_problem_for(p, heuristic)
    sol = ps.solve(p, start, heuristic=heuristic, problem=problem)
    ref = ps.solve(p, start, method="bibfs")
    assert sol.length == ref.length and sol.path[-1] == p.goal
    assert problem.heuristic(start) <= ref.length  # admissible, both views


def test_pattern_bound_dominates_manhattan_on_the_8_puzzle():
    p = ps.load_puzzle("3x3")
    pdb = search_problem_for(p, "pdb:4-4")
    md = search_problem_for(p, "manhattan")
    rng = random.Random(5)
    for _ in range(200):
        s = random_solvable(p, rng)
        assert pdb.heuristic(s) >= md.heuristic(s)
        assert len(pdb.pattern_sums(s)) == 2  # the position and its reflection


@pytest.mark.slow  # builds databases of its own; the default ones solve the same instance below
def test_15_puzzle_korf_instance_with_6_6_3():
    p = ps.load_puzzle("4x4", " ".join(map(str, range(16))))
    start = p.parse_position("3 14 9 11 5 4 8 2 13 12 6 7 10 1 15 0")  # Korf's instance 9, 46 moves
    sol = ps.solve(p, start, heuristic="pdb:6-6-3")
    assert sol.length == 46 and sol.heuristic == "pdb:6-6-3"
    assert ps.solve(p, start, heuristic="walking").length == 46


def test_files_roundtrip_4_and_8_bits(tmp_path):
    for top in (15, 40):
        table = np.arange(1001, dtype=np.uint8) % (top + 1)
        path = tmp_path / f"t{top}.pspdb"
        store.save(path, {"entries": len(table), "tiles": [1]}, table)
        db = store.read(path, {"tiles": [1]})
        assert db.header["bits"] == (4 if top <= 15 else 8) and np.array_equal(db.table, table)
        assert path.stat().st_size < (600 if top <= 15 else 1100) + 400


def test_corrupt_truncated_or_mismatched_files_are_rebuilt(tmp_path):
    p = ps.load_puzzle("3x3")
    space = PatternSpace(p.graph.neighbors, p.goal, (1, 2, 3, 4))
    said = []
    first = store.obtain(p.spec, p.goal, space, root=tmp_path, notify=said.append)
    assert len(said) == 1 and "not in the cache" in said[0]
    path = first.path
    assert store.obtain(p.spec, p.goal, space, root=tmp_path, notify=said.append).path == path and len(said) == 1
    raw = bytearray(path.read_bytes())
    raw[-5] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(PuzzleError, match="checksum"):
        store.read(path)
    again = store.obtain(p.spec, p.goal, space, root=tmp_path, notify=said.append)
    assert "corrupt" in said[-1] and np.array_equal(again.table, first.table)
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(PuzzleError, match="truncated"):
        store.read(path)
    store.obtain(p.spec, p.goal, space, root=tmp_path, notify=said.append)
    with pytest.raises(PuzzleError, match="tiles"):
        store.read(path, {"tiles": [5, 6]})
    (tmp_path / "pdb" / "junk.pspdb").write_bytes(b"hello")
    with pytest.raises(PuzzleError, match="not a puzzlespace pattern database"):
        store.read(tmp_path / "pdb" / "junk.pspdb")


def test_pattern_problem_refuses_huge_boards():
    with pytest.raises(PuzzleError, match="limited to 64"):
        pattern_problem(ps.load_puzzle("9x9"), "pdb:6")


def test_build_refuses_when_memory_is_short():
    p = ps.load_puzzle("4x4")
    space = PatternSpace(p.graph.neighbors, p.goal, tuple(range(1, 9)))
    with pytest.raises(PuzzleError, match="--max-memory"):
        pattern_distances(space, max_memory=500 << 20)


def test_build_refuses_when_disk_is_short(tmp_path, monkeypatch):
    from puzzlespace import resources

    p = ps.load_puzzle("3x3")
    space = PatternSpace(p.graph.neighbors, p.goal, (1, 2, 3))
    monkeypatch.setattr(resources, "free_disk", lambda path: 100)
    with pytest.raises(PuzzleError, match="of disk"):
        store.obtain(p.spec, p.goal, space, root=tmp_path)


def test_4x4_default_blocks_follow_the_blank_corner():
    korf = ps.load_puzzle("4x4", " ".join(map(str, range(16))))
    assert korf.default_heuristic() == "pdb:1,4,5,8,9,12/2,3,6,7,10,11/13,14,15"
    plain = ps.load_puzzle("4x4")
    groups = parse_groups(plain.default_heuristic()[4:], plain.goal)
    assert groups == [[15, 12, 11, 8, 7, 4], [14, 13, 10, 9, 6, 5], [3, 2, 1]]
    assert ps.load_puzzle("4x4", "1 2 3 4 5 0 6 7 8 9 10 11 12 13 14 15").default_heuristic() == "pdb:6-6-3"
    five = ps.load_puzzle("5x5", " ".join(map(str, range(25)))).default_heuristic()
    assert five == "pdb:1,2,5,6,7,12/3,4,8,9,13,14/10,11,15,16,20,21/17,18,19,22,23,24"
    corner = ps.load_puzzle("5x5", " ".join(map(str, range(1, 21))) + " 0 21 22 23 24").default_heuristic()
    assert corner.startswith("pdb:21,22,16,17,18,13/")  # mirrored top to bottom: the blank on cell 20
    start = korf.parse_position("3 14 9 11 5 4 8 2 13 12 6 7 10 1 15 0")  # Korf's instance 9, 46 moves
    assert ps.solve(korf, start).length == 46
