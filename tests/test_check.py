"""`check` (invariants, no search) against exhaustive BFS reachability on EVERY state."""

import itertools
import random

import pytest

import puzzlespace as ps
from puzzlespace.families import GraphPuzzle
from puzzlespace.search.bfs import reachable_states
from puzzles import graphs_under_test, theta


def assert_check_matches_bfs(p):
    reachable = reachable_states(p, p.goal, max_states=10**6)
    assert p.reachable_count() in (None, len(reachable))
    for perm in itertools.permutations(range(p.n_cells)):
        assert p.check(perm).solvable == (perm in reachable), (p.spec, perm)


@pytest.mark.parametrize("size", ["2x2", "3x2", "2x3", "4x2", pytest.param("3x3", marks=pytest.mark.slow)])
def test_sliding(size):
    assert_check_matches_bfs(ps.load_puzzle(size))


def test_sliding_with_another_goal():
    p = ps.load_puzzle("3x2", goal="0 1 2 3 4 5")
    assert_check_matches_bfs(p)


@pytest.mark.parametrize("distances", ["1,2", "1,3", "2,3"])
@pytest.mark.parametrize("n", range(1, 8))
def test_jump(n, distances):
    try:
        p = ps.load_puzzle(f"jump:{n}:{distances}")
    except ps.PuzzleError:
        assert n + 1 <= max(map(int, distances.split(",")))  # a distance longer than the line
        return
    assert_check_matches_bfs(p)


@pytest.mark.parametrize("graph", graphs_under_test(), ids=lambda g: f"n{g.n}-e{len(g.edges)}")
def test_graphs(graph):
    assert_check_matches_bfs(GraphPuzzle(graph))


def test_theta0_is_detected_and_decided_exhaustively():
    p = GraphPuzzle(theta(1, 2, 2))
    assert p.graph.is_theta0
    verdict = p.check(p.goal)
    assert verdict.solvable and verdict.method == "exhaustive"
    assert len(reachable_states(p, p.goal)) == 7 * 120  # PGL(2,5) on the tokens, blank anywhere


@pytest.mark.parametrize("size", ["2x2", "3x2", "2x3", "3x3", "4x3", "3x4", "4x4", "5x2", "1x5"])
def test_flip_every_state(size):
    p = ps.load_puzzle(f"flip:{size}")
    reachable = reachable_states(p, p.goal, max_states=10**6)
    assert p.reachable_count() == len(reachable)
    for cells in itertools.product((0, 1), repeat=p.n_cells):
        assert p.check(cells).solvable == (cells in reachable), (size, cells)


@pytest.mark.parametrize("size", ["2x2", "3x2", "3x3", "4x3", "4x4"])
def test_flip_other_goals(size):
    rng = random.Random(size)
    base = ps.load_puzzle(f"flip:{size}")
    for _ in range(4):
        goal = tuple(rng.randint(0, 1) for _ in range(base.n_cells))
        p = base.with_goal(goal)
        reachable = reachable_states(p, goal, max_states=10**6)
        assert p.reachable_count() == len(reachable)
        for _ in range(300):
            cells = tuple(rng.randint(0, 1) for _ in range(p.n_cells))
            assert p.check(cells).solvable == (cells in reachable)


def test_flip_counts_match_seed(seeds):
    for size, facts in seeds["flip"]["longest_from_goal"].items():
        assert ps.load_puzzle(f"flip:{size}").reachable_count() == facts["states"]


def test_reasons_are_words():
    p = ps.load_puzzle("3x3")
    v = p.check(p.parse_position("1 2 3 4 5 6 8 7 0"))
    assert not v.solvable and "odd" in v.reason and "Wilson" in v.reason
    v = ps.load_puzzle("2x2").check((3, 2, 1, 0))
    assert "cycle" in v.reason
