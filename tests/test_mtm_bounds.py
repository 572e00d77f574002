"""Pattern databases of line moves (``pdb:...`` on ``WxH:mtm``): split and projection tables
checked against plain breadth-first distances (tests/reference.py), the cache's files bound
to the metric, and weighted, anytime and fast solving with them."""

import dataclasses
import itertools
import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.errors import PuzzleError
from puzzlespace.families.mtm_search import Mirror, MtmSearchProblem, Projections
from puzzlespace.families.grid_lines import line_rays
from puzzlespace.pdb import store
from puzzlespace.pdb.heuristic import pattern_plan
from puzzlespace.pdb.space import rank_cells
from puzzlespace.pdb.split import SplitPatternSpace
from puzzlespace.solver import search_problem_for, solve

from puzzles import examples, positions_checked, whole_or_sample
from reference import mtm_distances as distances


@pytest.mark.parametrize("size, sample, heuristic", [
    *(case for heuristic in ("pdb:4-4", "pdb:2-3-3", "pdb:1,5/2,6/3,7/4,8") for case in whole_or_sample("3x3", heuristic)),
    ("4x2", None, "pdb:4-3"), ("4x2", None, "pdb:2-2-2-1"), ("3x2", None, "pdb:1-1-1-1-1")])
def test_the_tables_never_exceed_the_distance_over_the_whole_space(size, sample, heuristic):
    """The split sum alone, the projections alone and the whole bound, on every position."""
    p = ps.load_puzzle(f"{size}:mtm")
    problem = search_problem_for(p, heuristic)
    over = [(s, d) for s, d in positions_checked(distances(size), sample)
            if problem.splits.bound(s) > d or problem.heuristic(s) > d]
    assert not over, f"{len(over)} positions where the bound exceeds the distance, e.g. {over[0]}"
    assert problem.splits.bound(p.goal) == 0


def test_the_split_sum_is_admissible_without_the_projections():
    """Each group's split table alone, added: the sound sum, not only the maximum."""
    p = ps.load_puzzle("3x3:mtm")
    spaces = [SplitPatternSpace(line_rays(3, 3), p.goal, g) for g in ([1, 2, 3], [4, 5, 6], [7, 8])]
    tables = [s.distances() for s in spaces]
    unit = spaces[0].unit
    added, exceeded = 0, 0
    for s, d in distances("3x3").items():
        total = sum(int(t[rank_cells(np.array([s.index(x) for x in sp.tiles]), 0, sp.k, sp.n)])
                    for sp, t in zip(spaces, tables))
        exceeded += -(-total // unit) > d
        added += -(-total // unit) > max(int(t[rank_cells(np.array([s.index(x) for x in sp.tiles]), 0, sp.k, sp.n)])
                                        for sp, t in zip(spaces, tables)) / unit
    assert unit == 2 and exceeded == 0 and added > 0  # the sum bounds more than any one table


@examples(4)
@given(st.permutations(range(8)), st.sampled_from(["3x2", "4x2"]), st.sampled_from(["pdb:3-2", "pdb:2-2-1"]))
def test_the_tables_are_admissible_for_any_goal(goal, size, heuristic):
    p = ps.load_puzzle(f"{size}:mtm")
    goal = tuple(goal) if p.n_cells == 8 else tuple(v for v in goal if v < 6)
    problem = search_problem_for(p.with_goal(goal), heuristic)
    assert all(problem.heuristic(s) <= d for s, d in distances(size, goal).items())


def test_a_projection_table_is_the_exact_projection():
    """The table of every move costing 1 equals the projection's breadth-first distances."""
    p = ps.load_puzzle("3x3:mtm")
    tiles = [2, 4, 6, 8]
    exact = Projections.build(9, *(lambda m: (m.ptr, m.moves))(MtmSearchProblem.build(3, 3, p.goal)), list(p.goal),
                              [tiles])
    table = SplitPatternSpace(line_rays(3, 3), p.goal, tiles, every=True).distances()
    for cells in itertools.permutations(range(9), 5):
        occ = sum(1 << c for c in cells[:4])
        entry = rank_cells(np.array(cells[:4]), 0, 4, 9) * 5 + bin(~occ & ((1 << cells[4]) - 1)).count("1")
        assert table[entry] == exact.table[cells[4] + sum(c * 9 ** (j + 1) for j, c in enumerate(cells[:4]))]


def test_the_files_are_bound_to_the_metric(tmp_path):
    mtm = ps.load_puzzle("3x3:mtm")
    plan = pattern_plan(mtm, "pdb:4-4", cache_dir=tmp_path)
    assert [s.kind for s in plan.spaces] == ["split", "projection"] * 2 and len(plan.build) == 4
    search_problem_for(mtm, "pdb:4-4", cache_dir=tmp_path)
    assert not pattern_plan(mtm, "pdb:4-4", cache_dir=tmp_path).build  # built once, read after
    names = sorted(f.name for f in (tmp_path / "pdb").iterdir())
    assert len(names) == 4 and all("mtm" in n for n in names) and any(n.endswith("-split.pspdb") for n in names)
    stm = ps.load_puzzle("3x3")
    assert len(pattern_plan(stm, "pdb:4-4", cache_dir=tmp_path).build) == 2  # not the multi-tile files
    split = plan.spaces[0]
    with pytest.raises(PuzzleError, match="not 'sliding:3x3'"):
        store.read(store.pdb_path(mtm.identity, mtm.goal, split.tiles, tmp_path, split.kind),
                   dict(store._expected(mtm.identity, mtm.goal, split), puzzle=stm.identity))


@pytest.mark.parametrize("size,heuristic", [("3x3", "pdb:4-4"), ("4x2", "pdb:4-3")])
def test_optimal_weighted_anytime_and_fast_solutions(size, heuristic):
    p = ps.load_puzzle(f"{size}:mtm")
    dist = distances(size)
    far = max(dist.values())
    starts = [s for s, d in dist.items() if d == far][:2] + random.Random(size).sample(sorted(dist), 10)
    for s in starts:
        best = solve(p, s, heuristic=heuristic)
        assert best.optimal and best.length == dist[s] and p.replay(s, best.moves)[-1] == p.goal
        weighted = solve(p, s, heuristic=heuristic, weight=1.5)
        assert p.replay(s, weighted.moves)[-1] == p.goal and weighted.length <= 1.5 * dist[s]
        anytime = solve(p, s, heuristic=heuristic, anytime=True)
        assert anytime.optimal and anytime.length == dist[s]
        fast = solve(p, s, method="fast", heuristic=heuristic)
        assert p.replay(s, fast.moves)[-1] == p.goal and (fast.lower_bound or 0) <= dist[s] <= fast.length


@pytest.mark.parametrize("goal", [None, "1 2 3/4 0 5/6 7 8", "0 1 2/3 4 5/6 7 8"])
def test_a_position_and_its_reflection_are_equally_far(goal):
    """The main diagonal's reflection, tiles renamed (Mirror), keeps every distance, for
    any goal with the blank on that diagonal; other boards and goals have none."""
    p = ps.load_puzzle("3x3:mtm", goal)
    dist = distances("3x3", p.goal)
    mirror = Mirror.of(3, 3, p.goal)
    assert mirror.reflect(p.goal) == p.goal
    assert all(dist[mirror.reflect(s)] == d for s, d in dist.items())
    assert Mirror.of(4, 3, ps.load_puzzle("4x3:mtm").goal) is None
    assert Mirror.of(3, 3, (1, 0, 2, 3, 4, 5, 6, 7, 8)) is None


def test_the_reflection_is_read_and_only_narrows_the_search():
    """The tables read for the reflection too: as optimal, in fewer nodes than without it,
    and a bound of its own that is larger on some positions."""
    p = ps.load_puzzle("3x3:mtm")
    dist = distances("3x3")
    both = search_problem_for(p, "pdb:2-3-3")
    alone = dataclasses.replace(both, mirror=None)
    assert both.mirror is not None and any(both.heuristic(s) > alone.heuristic(s) for s in dist)
    nodes = {}
    for name, problem in (("both", both), ("alone", alone)):
        nodes[name] = 0
        for s in random.Random(4).sample(sorted(dist), 30):
            sol = solve(p, s, problem=problem)
            assert sol.optimal and sol.length == dist[s] and p.replay(s, sol.moves)[-1] == p.goal
            nodes[name] += sol.nodes
    assert nodes["both"] < nodes["alone"], nodes
