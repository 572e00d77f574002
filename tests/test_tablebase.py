"""Tablebases and random positions: distances without search, uniform draws."""

import numpy as np
import pytest

import puzzlespace as ps
from puzzlespace.explore import explore
from puzzlespace.explore import tablebase as tb
from puzzlespace.families import GraphPuzzle
from puzzlespace.search.bfs import reachable_states


def test_tablebase_distances_and_solutions(tmp_path):
    p = ps.load_puzzle("3x3")
    r = explore(p, keep_table=True)
    path = tmp_path / "t.pstb"
    tb.save(path, p, p.state_index(), r.table, r.depth_counts)
    base = tb.load(path, p)
    rng = np.random.default_rng(4)
    for _ in range(30):
        s = p.state_index().unrank(int(rng.integers(p.state_index().size)))
        sol = ps.solve(p, s, table=base)
        assert sol.method == "table" and sol.length == ps.solve(p, s, method="ida").length
    assert base.distance(p.parse_position("8 6 7/2 5 4/3 0 1")) == 31

def test_tablebase_errors(tmp_path):
    p = ps.load_puzzle("3x2")
    r = explore(p, keep_table=True)
    path = tmp_path / "t.pstb"
    tb.save(path, p, p.state_index(), r.table, r.depth_counts)
    with pytest.raises(ps.PuzzleError, match="goal"):
        tb.load(path, p.with_goal((0, 1, 2, 3, 4, 5)))
    with pytest.raises(ps.PuzzleError, match="puzzle"):
        tb.load(path, ps.load_puzzle("2x3"))
    raw = path.read_bytes()
    (tmp_path / "short.pstb").write_bytes(raw[:-5])
    with pytest.raises(ps.PuzzleError, match="truncated"):
        tb.load(tmp_path / "short.pstb", p)
    bad = bytearray(raw)
    bad[-3] ^= 0xFF
    (tmp_path / "bad.pstb").write_bytes(bytes(bad))
    with pytest.raises(ps.PuzzleError, match="corrupt"):
        tb.load(tmp_path / "bad.pstb", p)
    (tmp_path / "junk.pstb").write_bytes(b"hello")
    with pytest.raises(ps.PuzzleError, match="not a puzzlespace tablebase"):
        tb.load(tmp_path / "junk.pstb", p)

def test_generate_is_uniform_enough():
    p = ps.load_puzzle("2x2")
    rng = np.random.default_rng(0)
    from puzzlespace.explore.generate import random_solvable

    seen = {}
    for _ in range(1200):
        s = random_solvable(p, rng)
        seen[s] = seen.get(s, 0) + 1
    assert len(seen) == 12 and min(seen.values()) > 60

@pytest.mark.parametrize("name", ["2x2", "3x2", "jump:3:1,3", "flip:3x2", "flip:2x2"])
def test_random_positions_are_uniform_over_the_reachable_set(name):
    from collections import Counter

    p = ps.load_puzzle(name)
    reachable = reachable_states(p, p.goal)
    rng = np.random.default_rng(5)
    draws = Counter(p.random_position(rng) for _ in range(100 * len(reachable)))
    assert set(draws) == reachable
    assert min(draws.values()) > 60 and max(draws.values()) < 140

def test_random_positions_of_large_puzzles():
    rng = np.random.default_rng(1)
    for name in ["5x5", "10x10", "flip:10x10", "jump:30:1,3"]:
        p = ps.load_puzzle(name)
        assert p.check(p.random_position(rng)).solvable
    theta0 = GraphPuzzle(__import__("test_check").theta(1, 2, 2))
    reach = reachable_states(theta0, theta0.goal)
    assert all(theta0.random_position(rng) in reach for _ in range(50))
