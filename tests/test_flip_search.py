"""Flip puzzles' IDA* and its orbit bound: admissible on whole spaces (against the exact
distances of a layered BFS), and optimal against the plain bidirectional BFS in Python."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.explore.engine import layered_bfs
from puzzlespace.families.flip_search import FlipSearchProblem, orbit_grid, orbit_groups
from puzzlespace.pdb.space import record_layer
from puzzlespace.search.bfs import bfs_layers, bidirectional_bfs
from puzzlespace.search.ida import MIN_F, NOT_FOUND, ida_star


def exact_distances(p) -> np.ndarray:
    """Distance to the goal of every rank of ``p``'s index, by the explore engine."""
    index = p.state_index()
    dist = np.full(index.size, 255, dtype=np.uint8)
    layered_bfs(index, [index.rank(p.goal)], on_layer=lambda d, table, value: record_layer(table, value, d, 1, dist))
    return dist


def bounds_of_every_rank(p, problem: FlipSearchProblem) -> np.ndarray:
    """The orbit bound of every rank: its digits by the index's mixed radix, and on odd
    boards its parity from the white cells of its orbits' patterns."""
    ix = p.state_index()
    ranks = np.arange(ix.size, dtype=np.int64)
    digits = np.stack([(ranks // ix.mult[o]) % ix.radix[o] for o in range(len(ix.radix))], axis=1)
    h = problem.bounds(digits)
    if problem.bipartite:
        whites = sum((ix.dig2pat[o][digits[:, o]] >> k) & 1 for o in range(len(ix.radix)) for k in range(4))
        h += (h - whites + sum(p.goal)) % 2
    return h


@pytest.mark.parametrize("name, goal_seed", [("flip:3x3", None), ("flip:4x4", None), ("flip:5x4", None),
                                             ("flip:5x5", None), ("flip:6x3", None), ("flip:5x5", 3), ("flip:4x4", 8)])
def test_the_bound_never_exceeds_the_distance_on_the_whole_space(name, goal_seed):
    """Every position: h <= d, h == 0 at the goal alone, and on odd boards h keeps d's
    parity; for the default goal and random ones (orbits of 1, 4 and 6 patterns)."""
    p = ps.load_puzzle(name)
    if goal_seed is not None:
        p = p.with_goal(tuple(int(v) for v in np.random.default_rng(goal_seed).integers(0, 2, p.n_cells)))
    problem = p.search_problem()
    dist = exact_distances(p).astype(np.int64)
    h = bounds_of_every_rank(p, problem)
    assert dist.max() < 255 and np.all(h <= dist) and np.all((h == 0) == (dist == 0))
    if problem.bipartite:
        assert np.all((dist - h) % 2 == 0)
    ix = p.state_index()
    for r in np.random.default_rng(1).integers(0, ix.size, 200):  # the vectorised bound is the problem's
        assert problem.heuristic(ix.unrank(int(r))) == h[r]


def test_the_bound_against_plain_bfs_layers_on_4x4():
    p = ps.load_puzzle("flip:4x4")
    problem = p.search_problem()
    for depth, layer in enumerate(bfs_layers(p, p.goal)):
        assert all(problem.heuristic(s) <= depth for s in layer)


def test_the_bound_is_consistent_across_moves():
    p = ps.load_puzzle("flip:7x7")
    problem = p.search_problem()
    rng = np.random.default_rng(2)
    for _ in range(100):
        s = p.random_position(rng)
        h = problem.heuristic(s)
        assert all(abs(problem.heuristic(t) - h) <= 1 for _, t in p.successors(s))


def random_goal_and_start(name: str, seed: int):
    """A flip board with a random goal (so orbits allow 1, 4 or 6 patterns) and a start."""
    rng = np.random.default_rng(seed)
    p = ps.load_puzzle(name)
    if rng.integers(0, 2):
        p = p.with_goal(tuple(int(v) for v in rng.integers(0, 2, p.n_cells)))
    return p, p.random_position(rng)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["flip:2x2", "flip:3x3", "flip:3x4", "flip:4x4", "flip:5x3", "flip:5x5"]),
       st.integers(0, 2**32 - 1))
def test_ida_matches_bidirectional_bfs(name, seed):
    p, start = random_goal_and_start(name, seed)
    sol = ps.solve(p, start, method="ida")
    assert sol.heuristic == "orbits" and sol.optimal
    assert sol.length == len(bidirectional_bfs(p, start, p.goal).moves) and sol.path[-1] == p.goal


def test_weighted_ida_stays_within_its_weight():
    p = ps.load_puzzle("flip:6x6")
    rng = np.random.default_rng(4)
    for _ in range(5):
        start = p.random_position(rng)
        optimum = ps.solve(p, start).length
        assert optimum <= ps.solve(p, start, weight=2).length <= 2 * optimum


def test_groups_cover_every_orbit_and_alike_spaces_share_a_table():
    for name in ("flip:2x2", "flip:3x1", "flip:7x7", "flip:9x8", "flip:20x20"):
        p = ps.load_puzzle(name)
        groups = orbit_groups(p)
        assert sorted({o for g in groups for o in g.orbits}) == list(range(len(p.orbits)))
        radix = [6 if len(cells) == 4 else 2 ** len(cells) for cells in p.orbits]
        assert all(np.prod([radix[o] for o in g.orbits]) <= 1 << 21 for g in groups)
        assert len(set(groups)) == len(groups)
    grid = orbit_grid(ps.load_puzzle("flip:5x5"))
    assert [len(row) for row in grid] == [3, 3, 3]
    p = ps.load_puzzle("flip:6x6")
    problem = p.search_problem()  # any two lines of its orbit grid project alike
    groups = orbit_groups(p)
    assert len(groups) == 6 and len(set(problem.table_off.tolist())) == 2
    assert problem.tables.nbytes == 2 * 6 ** 6


def test_a_pass_with_bound_zero_loads_the_code_and_cuts_at_once():
    p = ps.load_puzzle("flip:5x5")
    problem = p.search_problem()
    start = p.parse_position("WWBWW/WWBWW/BWBBW/WWWWW/WWWWW")
    ctl = np.array([0, 1 << 40, 0, 0], dtype=np.int64)
    path = np.full(1, -1, dtype=np.int32)
    assert problem.pass_function(start, 0, ctl, path)() == NOT_FOUND and ctl[MIN_F] > 0


def test_the_demo_position_and_a_time_limit():
    p = ps.load_puzzle("flip:5x5")
    start = p.parse_position("WWBWW/WWBWW/BWBBW/WWWWW/WWWWW")
    sol = ps.solve(p, start)
    assert (sol.method, sol.heuristic, sol.length, sol.optimal) == ("ida", "orbits", 13, True)
    deep = ps.load_puzzle("flip:9x9")
    problem = deep.search_problem()
    start = deep.random_position(np.random.default_rng(5))  # 19 moves: seconds of search
    with pytest.raises(ps.SearchStopped) as info:
        ida_star(problem, start, time_limit=0.05)
    assert info.value.lower_bound >= problem.heuristic(start) > 0


def test_only_the_orbit_bound_is_offered():
    p = ps.load_puzzle("flip:4x4")
    assert p.default_heuristic() == "orbits"
    with pytest.raises(ps.PuzzleError, match="orbits"):
        p.search_problem("walking")
    with pytest.raises(ps.PuzzleError, match="no tiles"):
        ps.solve(p, p.goal, heuristic="pdb:4")
