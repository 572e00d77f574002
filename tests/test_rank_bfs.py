"""The compiled breadth-first search over a state index's ranks against the plain one over
whole positions (Python), on flip boards (no rank steps) and token puzzles (rank steps)."""

import random
import threading
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.families import GraphPuzzle
from puzzlespace.graphs import Graph
from puzzlespace.search import rank_bfs as rank_search
from puzzlespace.search.bfs import bfs, bidirectional_bfs
from puzzlespace.search.rank_bfs import load, rank_bfs

from puzzles import examples

#: Flip boards, odd and even, and token puzzles whose indexes have rank steps.
PUZZLES = ["flip:3x3", "flip:3x4", "flip:4x4", "flip:5x5", "3x3", "2x4", "jump:7", "jump:6:1,3"]


@settings(examples(20), suppress_health_check=[HealthCheck.too_slow])  # the reference searches in Python
@given(st.sampled_from(PUZZLES), st.integers(0, 2**32 - 1), st.booleans(), st.sampled_from([0, 1 / 8]))
def test_rank_bfs_finds_shortest_paths(name, seed, bidirectional, share):
    """With bit tables of the states reached and without (share 0: the layers alone)."""
    p = ps.load_puzzle(name)
    start = p.random_position(np.random.default_rng(seed))
    with patch.object(rank_search, "BIT_TABLES_SHARE", share):
        found = rank_bfs(p, start, p.goal, bidirectional=bidirectional)
    plain = bidirectional_bfs(p, start, p.goal)
    assert len(found.moves) == len(plain.moves) and p.replay(start, found.moves)[-1] == p.goal
    assert found.nodes > 0 or start == p.goal


def test_token_indexes_have_rank_steps_and_flip_none():
    assert all(ps.load_puzzle(n).state_index().rank_steps is not None for n in PUZZLES if not n.startswith("flip"))
    assert ps.load_puzzle("flip:5x5").state_index().rank_steps is None


@pytest.mark.parametrize("name", ["flip:4x4", "jump:6:1,3"])
def test_between_any_two_positions(name):
    """Start and goal both anywhere (the goal's side walks back too), from one end or both."""
    p = ps.load_puzzle(name)
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = p.random_position(rng), p.random_position(rng)
        length = len(bfs(p, a, b).moves)
        for bidirectional, share in ((True, 0), (True, 1 / 8), (False, 0), (False, 1 / 8)):
            with patch.object(rank_search, "BIT_TABLES_SHARE", share):
                found = rank_bfs(p, a, b, bidirectional=bidirectional)
            assert len(found.moves) == length and p.replay(a, found.moves)[-1] == b


def test_the_start_is_the_goal_and_positions_out_of_the_index():
    p = ps.load_puzzle("flip:5x5")
    assert rank_bfs(p, p.goal, p.goal).moves == []
    apart = p.parse_position("BWWWW/WWWWW/WWWWW/WWWWW/WWWWW")  # one cell of a 4-cell orbit: not reachable
    with pytest.raises(ps.PuzzleError, match="none of the state index"):
        rank_bfs(p, apart, p.goal)


def test_an_unreachable_goal_exhausts_the_start_s_component():
    """A 5-cycle's index holds every arrangement; those of another rotation class are never met."""
    p = GraphPuzzle(Graph(5, tuple((i, (i + 1) % 5) for i in range(5))))
    start = (0, 2, 1, 3, 4)
    assert not p.check(start).solvable
    for share in (0, 1 / 8):
        with patch.object(rank_search, "BIT_TABLES_SHARE", share):
            assert rank_bfs(p, start, p.goal) is None and rank_bfs(p, start, p.goal, bidirectional=False) is None


def test_size_guard_time_limit_and_cancel():
    p = ps.load_puzzle("flip:6x6")
    start = p.parse_position("WWBBWW/WBWWBW/BBBWBB/BWBWWB/BBWWBB/BBBBBB")  # 10 moves
    with pytest.raises(ps.SearchStopped, match="1,000 states"):
        rank_bfs(p, start, p.goal, max_states=1000)
    deep = ps.load_puzzle("flip:7x7")
    start = deep.random_position(np.random.default_rng(5))  # 17 moves: seconds of BFS
    with pytest.raises(ps.SearchStopped, match="time limit") as info:
        rank_bfs(deep, start, deep.goal, time_limit=0.05)
    assert info.value.nodes > 0 and info.value.lower_bound >= 1
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(ps.SearchStopped, match="cancelled"):
        rank_bfs(deep, start, deep.goal, cancel=cancel)


def test_load_runs_the_code_on_rank_zero():
    for name in ("flip:5x5", "3x3"):
        load(ps.load_puzzle(name).state_index())


def test_solve_routes_breadth_first_methods_by_the_size_of_the_space(monkeypatch):
    """Past SMALL_SPACE positions (and with an index), bfs and bibfs run over the ranks;
    below it in Python, which needs no compiled code."""
    calls = []
    real = rank_search.rank_bfs
    monkeypatch.setattr(rank_search, "rank_bfs", lambda *a, **k: calls.append(k["bidirectional"]) or real(*a, **k))
    small, large = ps.load_puzzle("flip:3x3"), ps.load_puzzle("flip:5x5")
    rng = random.Random(2)
    for p in (small, large):
        start = p.random_position(np.random.default_rng(rng.randrange(1000)))
        lengths = {ps.solve(p, start, method=m).length for m in ("bfs", "bibfs")}
        assert lengths == {len(bidirectional_bfs(p, start, p.goal).moves)}
    assert calls == [False, True]
