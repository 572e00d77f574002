"""Search methods cross-checked: IDA* (compiled, incremental bound) against BFS, on random positions."""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.families import GraphPuzzle
from puzzlespace.search.bfs import bfs, bidirectional_bfs, depth_counts
from puzzlespace.solver import search_problem_for
from puzzles import examples, random_connected_graph, random_solvable

SETTINGS = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_ida_optimal(p, start):
    ida = ps.solve(p, start, method="ida")
    ref = ps.solve(p, start, method="bibfs")
    assert ida.length == ref.length
    assert ida.path[-1] == p.goal


@pytest.mark.parametrize("name", ["3x3", "4x2", "jump:7"])
@SETTINGS
@given(st.integers(0, 2**32).map(random.Random))
def test_ida_matches_bfs(name, rng):
    p = ps.load_puzzle(name)
    assert_ida_optimal(p, random_solvable(p, rng))


@SETTINGS
@given(st.integers(0, 2**32).map(random.Random))
def test_ida_matches_bfs_random_graphs(rng):
    graph = random_connected_graph(rng, 7, rng.randint(1, 8))
    p = GraphPuzzle(graph)
    goal = list(range(7))
    rng.shuffle(goal)
    p = p.with_goal(tuple(goal))
    assert_ida_optimal(p, random_solvable(p, rng))


@examples(50)
@given(st.integers(0, 2**32).map(random.Random))
def test_bidirectional_matches_plain_bfs(rng):
    p = ps.load_puzzle(rng.choice(["3x2", "jump:5:1,3", "flip:3x3"]))
    start = p.goal
    for _ in range(rng.randint(0, 40)):
        start = p.apply(start, rng.choice(list(p.moves(start))))
    assert bfs(p, start, p.goal).moves.__len__() == len(bidirectional_bfs(p, start, p.goal).moves)


def test_bound_is_admissible_and_consistent_on_every_3x3_state():
    """h <= true distance on all 181,440 states, and |h(a) - h(b)| <= 1 across every move."""
    p = ps.load_puzzle("3x3")
    prob = p.search_problem()
    layer, seen, depth = [p.goal], {p.goal}, 0
    rng = random.Random(7)
    while layer:
        for s in rng.sample(layer, min(len(layer), 400)):
            h = prob.heuristic(s)
            assert h <= depth
            assert prob.walking_distance(s) <= depth
            assert prob.distance_sum(s) + prob.conflict_sum(s) <= depth
            for _, t in p.successors(s):
                assert abs(prob.heuristic(t) - h) <= 1
        nxt = []
        for s in layer:
            for _, t in p.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        layer, depth = nxt, depth + 1
    assert len(seen) == 181440


def test_walking_distance_counts_moves_across_rows_and_columns():
    p = ps.load_puzzle("3x3")
    prob = p.search_problem()
    assert len(prob.walk_tables) == 2 and prob.walking_distance(p.goal) == 0
    # the seed's 31-move antipode: WD is 25 there, above Manhattan plus conflicts (23)
    start = p.parse_position("8 6 7/2 5 4/3 0 1")
    assert prob.walking_distance(start) == 25 and prob.heuristic(start) == 25
    assert ps.load_puzzle("5x5").search_problem().walk_tables == []


def test_linear_conflict_adds_to_manhattan():
    p = ps.load_puzzle("3x3")
    prob = p.search_problem()
    start = p.parse_position("2 1 3/4 5 6/7 8 0")  # 1 and 2 swapped in their goal row
    assert prob.distance_sum(start) == 2 and prob.heuristic(start) == 4


def test_depth_counts_reference_3x3(seeds):
    counts, last = depth_counts(ps.load_puzzle("3x3"), ps.load_puzzle("3x3").goal)
    facts = seeds["sliding"]["gods_numbers"]["3x3"]
    assert len(counts) - 1 == facts["max_depth"] and len(last) == facts["antipodes"]
    assert sum(counts) == facts["states"]


def test_solution_json_fields():
    p = ps.load_puzzle("3x3")
    sol = ps.solve(p, p.parse_position("1 2 3/4 5 6/0 7 8"))
    data = sol.to_json()
    assert {"puzzle", "start", "goal", "length", "optimal", "moves", "path", "method", "nodes", "seconds"} <= set(data)
    assert data["length"] == 2 and data["moves"] == [7, 8] and data["notations"]["directions"] == ["R", "R"]
    assert data["path"][0] == [1, 2, 3, 4, 5, 6, 0, 7, 8] and data["path"][-1] == list(p.goal)


@pytest.mark.parametrize("heuristic", ["linear-conflict", "pdb:3-3"])
def test_time_limit_stops_cleanly(heuristic):
    """The search stops at the time limit (its tables built first: a build counts against
    the limit too, see test_pdb_builds)."""
    p = ps.load_puzzle("5x5")
    rng = random.Random(3)
    start = random_solvable(p, rng)
    problem = search_problem_for(p, heuristic)
    try:
        ps.solve(p, start, time_limit=0.3, problem=problem)
    except ps.SearchStopped as exc:
        assert exc.seconds < 3 and exc.nodes > 0
    else:  # pragma: no cover - a random 24-puzzle is never solved this fast by IDA*
        raise AssertionError("expected the time limit to stop the search")


def test_korf_goal_convention():
    p = ps.load_puzzle("4x4", goal="0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15")
    start = p.parse_position("4 1 2 3/8 5 6 7/0 9 10 11/12 13 14 15")
    assert ps.solve(p, start).length == 2
    assert p.check(start).solvable


def test_bigger_boards_parse_check_draw_replay():
    p = ps.load_puzzle("10x10")
    rng = np.random.default_rng(1)
    state = p.goal
    moves = []
    for _ in range(60):
        m = int(rng.choice(list(p.moves(state))))
        moves.append(m)
        state = p.apply(state, m)
    assert p.parse_position(p.format_position(state)) == state
    assert p.check(state).solvable
    assert len(p.draw(state).splitlines()) == 10
    assert p.replay(p.goal, moves)[-1] == state


def test_bfs_time_limit_and_size_guard():
    p = ps.load_puzzle("flip:6x6")
    start = p.parse_position("WWBBWW/WBWWBW/BBBWBB/BWBWWB/BBWWBB/BBBBBB")  # 10 moves, ~130,000 BFS nodes
    for search in (bfs, bidirectional_bfs):
        with pytest.raises(ps.SearchStopped, match="time limit") as info:
            search(p, start, p.goal, time_limit=0.05)
        assert info.value.seconds >= 0.05 and info.value.nodes > 0
    deep = ps.load_puzzle("flip:7x7")  # compiled over the ranks: a 17-move position takes seconds
    for method in ("bfs", "bibfs"):
        with pytest.raises(ps.SearchStopped, match="time limit") as info:
            ps.solve(deep, deep.random_position(np.random.default_rng(5)), method=method, time_limit=0.05)
        assert info.value.nodes > 0
    with pytest.raises(ps.SearchStopped, match="1,000 states"):
        bfs(p, start, p.goal, max_states=1000)


@pytest.mark.parametrize("search", [bfs, bidirectional_bfs])
def test_a_set_cancel_event_stops_a_breadth_first_search(search):
    import threading

    from puzzlespace.errors import SearchStopped

    p = ps.load_puzzle("4x3")
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(SearchStopped, match="cancelled"):
        search(p, p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9"), p.goal, cancel=cancel)


def test_a_cancel_event_stops_ida_star_from_another_thread():
    import threading
    import time

    from puzzlespace.errors import SearchStopped
    from puzzlespace.search.ida import ida_star
    from puzzlespace.solver import search_problem_for

    p = ps.load_puzzle("5x5")
    problem = search_problem_for(p, "manhattan")
    start = p.random_position(np.random.default_rng(4))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    t0 = time.perf_counter()
    with pytest.raises(SearchStopped, match="cancelled"):
        ida_star(problem, start, cancel=cancel)
    assert time.perf_counter() - t0 < 1.5
