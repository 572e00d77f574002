"""Sliding boards in the multi-tile metric (``WxH:mtm``): names, moves, exploration, bounds
and optimal solving, each against a plain reference (tests/reference.py)."""

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import explore, tablebase
from puzzlespace.explore.segments import explore_segmented
from puzzlespace.families.grid_lines import merge_walk, walk_cells
from puzzlespace.registry import syntax
from puzzlespace.solver import Heuristic, solve

from puzzles import examples, positions_checked, random_solvable, whole_or_sample
from reference import mtm_distances as distances, mtm_moves_reference, replay_directions

#: Published radii in the multi-tile metric (complete searches).
RADII = {"3x3": 24, "4x2": 25, "5x2": 36, "4x3": 33}
# ----- names and moves ----------------------------------------------------------------------
def test_the_metric_is_part_of_the_name():
    assert ps.load_puzzle("sliding:4x4:stm").spec == ps.load_puzzle("sliding:4x4").spec == "sliding:4x4"
    assert ps.load_puzzle("4x4:stm").spec == "sliding:4x4"
    for name in ("4x4:mtm", "sliding:4x4:mtm", "4x4:MTM", "sliding:4x4:mtm "):
        p = ps.load_puzzle(name)
        assert p.spec == "sliding:4x4:mtm" and p.metric == "mtm" and ps.load_puzzle(p.spec).spec == p.spec
    assert ps.load_puzzle("3x3:mtm", goal="0 1 2/3 4 5/6 7 8").with_goal((1, 2, 3, 4, 5, 6, 7, 8, 0)).spec.endswith(
        ":mtm")
    with pytest.raises(PuzzleError, match="unknown metric 'htm'.*mtm"):
        ps.load_puzzle("sliding:3x3:htm")
    with pytest.raises(PuzzleError, match="unknown puzzle '3x3:htm'"):
        ps.load_puzzle("3x3:htm")
    assert "sliding:WxH[:mtm]" in syntax()


def test_the_same_positions_are_solvable():
    stm, mtm = ps.load_puzzle("4x4"), ps.load_puzzle("4x4:mtm")
    rng = np.random.default_rng(5)
    for _ in range(50):
        s = tuple(int(v) for v in rng.permutation(16))
        assert stm.check(s).solvable == mtm.check(s).solvable
    assert mtm.reachable_count() == stm.reachable_count()
    assert "k swaps" in mtm.check(mtm.goal).reason


@pytest.mark.parametrize("size", ["2x2", "3x2", "3x3", "4x4", "5x3"])
def test_moves_are_every_slide_along_the_blanks_row_and_column(size):
    p = ps.load_puzzle(f"{size}:mtm")
    rng = random.Random(size)
    for _ in range(30):
        s = random_solvable(p, rng)
        after = [p.apply(s, m) for m in p.moves(s)]
        assert sorted(after) == sorted(mtm_moves_reference(p.width, p.height, s))
        assert all(s in [p.apply(t, m) for m in p.moves(t)] for t in after)  # reversible


def test_moves_are_named_so_that_a_person_can_replay_them():
    p = ps.load_puzzle("4x4:mtm")
    s = p.goal  # blank in the bottom-right corner
    moves = [12, 0, 3]  # blank left 3, up 3, right 3
    path = p.replay(s, moves)
    notes = p.move_notations(path, moves)
    assert list(notes) == ["directions", "tiles"]
    assert notes["directions"] == ["L3", "U3", "R3"]
    assert notes["tiles"] == ["15,14,13", "9,5,1", "2,3,4"]
    assert replay_directions(p, s, notes["directions"]) == path[-1]
    assert p.say_move(s, 12) == "slide 15 14 13 right" and p.move_way(s, 12) == "right"
    assert p.say_move(s, 14) == "slide 15 right" and p.move_way(path[1], 0) == "down"


@settings(deadline=None)
@given(st.lists(st.sampled_from([-1, 1, -4, 4]), max_size=60), st.integers(0, 15))
def test_a_walk_merged_into_line_moves_reaches_the_same_position(steps, blank):
    p = ps.load_puzzle("4x4:mtm")
    cells, at = [], blank
    for d in steps:  # a single-tile walk, skipping steps off the board
        nxt = at + d
        if 0 <= nxt < 16 and (abs(d) == 4 or nxt // 4 == at // 4):
            cells.append(nxt)
            at = nxt
    start = tuple(range(1, blank + 1)) + (0,) + tuple(range(blank + 1, 16))
    stm = ps.load_puzzle("4x4").replay(start, cells)[-1]
    merged = merge_walk(4, blank, cells)
    path = p.replay(start, merged)
    assert path[-1] == stm and len(merged) <= len(cells)
    axes = [a.index(0) // 4 == b.index(0) // 4 for a, b in zip(path, path[1:])]
    assert all(x != y for x, y in zip(axes, axes[1:]))  # no two moves along one line in a row
    assert ps.load_puzzle("4x4").replay(start, walk_cells(4, blank, merged))[-1] == stm


# ----- exploration ----------------------------------------------------------------------------
def _counts(dist: dict) -> list[int]:
    return np.bincount(list(dist.values())).tolist()


@pytest.mark.parametrize("size", ["2x2", "3x2", "4x2", "3x3"])
def test_exploring_counts_the_reference_bfs_layers(size):
    result = explore(ps.load_puzzle(f"{size}:mtm"), threads=2)
    assert result.depth_counts == _counts(distances(size))
    assert result.puzzle == f"sliding:{size}:mtm"


@pytest.mark.parametrize("size", ["3x3", "4x2", "5x2"])
def test_the_published_radius(size):
    result = explore(ps.load_puzzle(f"{size}:mtm"), threads=2)
    assert result.max_depth == RADII[size] and result.states == ps.load_puzzle(size).reachable_count()


@pytest.mark.slow
def test_the_published_radius_of_4x3():
    result = explore(ps.load_puzzle("4x3:mtm"))
    assert result.max_depth == 33 and result.states == 239_500_800


def test_a_goal_elsewhere_explores_like_the_reference():
    goal = (0, 1, 2, 3, 4, 5, 6, 7)
    p = ps.load_puzzle("4x2:mtm", goal="0 1 2 3/4 5 6 7")
    assert explore(p, threads=2).depth_counts == _counts(distances("4x2", goal))


@pytest.mark.parametrize("segments", [2, 5])
def test_segments_match_the_engine(tmp_path, segments):
    p = ps.load_puzzle("3x3:mtm")
    whole = explore(p, threads=2, keep_table=True)
    parts = explore_segmented(p, segments=segments, threads=2, out_dir=tmp_path, keep_table=True)
    assert parts.depth_counts == whole.depth_counts
    assert np.array_equal(np.concatenate(list(parts.table())), whole.table)


def test_a_checkpoint_resumes_and_is_refused_for_the_other_metric(tmp_path):
    mtm, stm = ps.load_puzzle("3x3:mtm"), ps.load_puzzle("3x3")
    whole = explore(mtm, threads=2)
    assert explore(mtm, threads=2, out_dir=tmp_path, stop_at_depth=12).max_depth == 12
    with pytest.raises(PuzzleError, match="sliding:3x3:mtm"):
        explore(stm, threads=2, out_dir=tmp_path, resume=True)
    resumed = explore(mtm, threads=2, out_dir=tmp_path, resume=True)
    assert resumed.depth_counts == whole.depth_counts
    other = tmp_path / "stm"
    explore(stm, threads=2, out_dir=other, stop_at_depth=3)
    with pytest.raises(PuzzleError, match="'sliding:3x3', not 'sliding:3x3:mtm'"):
        explore(mtm, threads=2, out_dir=other, resume=True)


def test_a_tablebase_answers_for_its_metric_only(tmp_path):
    mtm, stm = ps.load_puzzle("3x3:mtm"), ps.load_puzzle("3x3")
    result = explore(mtm, threads=2, keep_table=True)
    tablebase.save(tmp_path / "mtm.tb", mtm, mtm.state_index(), result.table, result.depth_counts)
    table = tablebase.load(tmp_path / "mtm.tb", mtm)
    dist = distances("3x3")
    for s in random.Random(1).sample(sorted(dist), 30):
        sol = solve(mtm, s, table=table)
        assert sol.method == "table" and sol.length == dist[s]
    with pytest.raises(PuzzleError, match="not 'sliding:3x3'"):
        tablebase.load(tmp_path / "mtm.tb", stm)


# ----- bounds and optimal solving ---------------------------------------------------------
@pytest.mark.parametrize("size, sample", [("3x2", None), ("4x2", None), *whole_or_sample("3x3")])
@pytest.mark.parametrize("heuristic", ["manhattan", "walking", "patterns"])
def test_every_bound_is_admissible_over_the_whole_space(size, sample, heuristic):
    p = ps.load_puzzle(f"{size}:mtm")
    problem = p.search_problem(heuristic)
    over = [(s, d) for s, d in positions_checked(distances(size), sample) if problem.heuristic(s) > d]
    assert not over, f"{len(over)} positions where the bound exceeds the distance, e.g. {over[0]}"


@examples(5)
@given(st.permutations(range(8)), st.sampled_from(["3x2", "4x2"]))
def test_the_strongest_bound_is_admissible_for_any_goal(goal, size):
    p = ps.load_puzzle(f"{size}:mtm")
    goal = tuple(goal[: p.n_cells]) if p.n_cells == 8 else tuple(v for v in goal if v < 6)
    q = p.with_goal(goal)
    problem = q.search_problem("patterns")
    assert all(problem.heuristic(s) <= d for s, d in distances(size, goal).items())


FIFTEEN = ps.load_puzzle("4x4:mtm")  # one puzzle: its bounds' tables are made once


@examples(40)
@given(st.integers(0, 2**32 - 1), st.integers(0, 12))
def test_the_4x4_bound_never_exceeds_a_walk_back(seed, length):
    """On 4x4 no whole space to compare with: a position ``length`` moves from the goal is
    at most that far, so the bound must not exceed it."""
    p = FIFTEEN
    rng = np.random.default_rng(seed)
    s = p.goal
    for _ in range(length):
        moves = p.moves(s)
        s = p.apply(s, moves[int(rng.integers(len(moves)))])
    assert p.search_problem("walking").heuristic(s) <= length
    assert p.search_problem("manhattan").heuristic(s) <= p.search_problem("walking").heuristic(s)


def test_the_default_bound_is_the_best_one_and_single_tile_bounds_are_refused():
    assert ps.load_puzzle("4x3:mtm").default_heuristic() == "patterns"
    assert ps.load_puzzle("4x4:mtm").default_heuristic() == "walking"
    assert ps.load_puzzle("5x5:mtm").default_heuristic() == "manhattan"
    with pytest.raises(PuzzleError, match="patterns is offered up to 12 cells"):
        ps.load_puzzle("4x4:mtm").search_problem("patterns")
    p = ps.load_puzzle("4x3:mtm")
    assert Heuristic.parse(p, "pdb:6-5").patterns  # line-move tables (tests/test_mtm_bounds.py)
    with pytest.raises(PuzzleError, match="unknown heuristic 'linear-conflict'"):
        p.search_problem("linear-conflict")
    assert p.search_problem("walking").bipartite is False


@pytest.mark.parametrize("size", ["3x2", "4x2", "3x3"])
@pytest.mark.parametrize("method", ["ida", "bibfs"])
def test_solutions_are_optimal_and_valid(size, method):
    p = ps.load_puzzle(f"{size}:mtm")
    dist = distances(size)
    far = max(dist.values())
    rng = random.Random(size + method)
    starts = [s for s, d in dist.items() if d == far][:2] + rng.sample(sorted(dist), 10)
    for s in starts:
        sol = solve(p, s, method=method)
        assert sol.heuristic == ("patterns" if method == "ida" else "")
        assert sol.optimal and sol.length == dist[s]
        assert p.replay(s, sol.moves)[-1] == p.goal
        assert replay_directions(p, s, sol.notations["directions"]) == p.goal


@pytest.mark.parametrize("size", ["4x3", "4x4"])
def test_a_weighted_or_fast_solution_is_a_valid_mtm_one(size):
    p = ps.load_puzzle(f"{size}:mtm")
    s = random_solvable(p, random.Random(3))
    for sol in (solve(p, s, weight=2 if size == "4x3" else 3), solve(p, s, method="fast")):
        assert p.replay(s, sol.moves)[-1] == p.goal and sol.lower_bound <= sol.length


@pytest.mark.slow
def test_every_4x3_antipode_solves_optimally_within_a_second():
    p = ps.load_puzzle("4x3:mtm")
    result = explore(p, antipode_limit=1000)
    assert result.max_depth == 33
    p.search_problem(p.default_heuristic())  # built once, before the clock
    for s in result.antipodes:
        sol = solve(p, s)
        assert sol.method == "ida" and sol.length == 33 and sol.seconds <= 1.0, (s, sol.seconds, sol.nodes)
