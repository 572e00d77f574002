"""Every optimal solution (puzzlespace.optimal, puzzlespace.search.paths): counted and listed
from a tablebase and by a search of the position's layers, against a reference that counts
every walk as long as the distance (tests/reference.py), in every family."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.errors import PuzzleError, SearchStopped, Unsolvable
from puzzlespace.optimal import count_optimal, optimal_solutions
from puzzlespace.search.paths import by_passes, by_search, by_table
from puzzlespace.solver import search_problem_for

from puzzles import examples, random_walk, saved_tablebase
from reference import optimal_path_count_reference
from test_segments import EXAMPLES

#: Small puzzles of every family and both sliding metrics.
SMALL = ["2x2", "3x2", "2x3", "3x2:mtm", "jump:5", "jump:6:1,3", "flip:2x3", f"graph:{EXAMPLES / 'theta0.toml'}"]
_TABLES: dict = {}


def table_of(name: str, tmp_path_factory):
    """The tablebase of ``name``, made once per test process."""
    if name not in _TABLES:
        _TABLES[name] = saved_tablebase(name, tmp_path_factory.mktemp("tb"))
    return _TABLES[name]


@examples(40)
@given(st.sampled_from(SMALL), st.integers(0, 2**32 - 1))
def test_both_methods_count_and_list_what_the_reference_counts(tmp_path_factory, name, seed):
    p = ps.load_puzzle(name)
    start = p.random_position(__import__("numpy").random.default_rng(seed))
    length, count = optimal_path_count_reference(p, start)
    graphs = [by_table(table_of(name, tmp_path_factory), start), by_search(p, start)]
    listed = [list(g.each()) for g in graphs]
    for graph, moves in zip(graphs, listed):
        assert (graph.length, graph.count()) == (length, count)
        assert len(moves) == count and moves == sorted(moves) and len(set(map(tuple, moves))) == count
        assert all(len(m) == length and p.replay(start, m)[-1] == p.goal for m in moves)
    assert listed[0] == listed[1]


def test_the_8_puzzle_antipodes_have_40_optimal_solutions_each(tmp_path):
    p = ps.load_puzzle("3x3")
    table = saved_tablebase("3x3", tmp_path)
    for start in (p.parse_position("8 6 7/2 5 4/3 0 1"), p.parse_position("6 4 7/8 5 0/3 2 1")):
        assert count_optimal(p, start, table=table) == ps.optimal.OptimalCount(31, 40, "table")
        assert count_optimal(p, start) == ps.optimal.OptimalCount(31, 40, "bfs")
        assert count_optimal(p, start, method="ida") == ps.optimal.OptimalCount(31, 40, "ida")
        solutions = list(optimal_solutions(p, start, table=table))
        assert len(solutions) == 40 and all(s.length == 31 and s.path[0] == start and s.path[-1] == p.goal
                                            and len(s.path) == 32 for s in solutions)


def test_the_cached_tablebase_is_used_when_there_is_one(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    p = ps.load_puzzle("3x2")
    start = p.parse_position("0 5 4/3 2 1")
    assert count_optimal(p, start).method == "bfs"
    from puzzlespace.cli import app
    from click.testing import CliRunner

    assert CliRunner().invoke(app, ["explore", "3x2", "--save", "cache"]).exit_code == 0
    counted = count_optimal(p, start)
    assert counted.method == "table" and counted.count == optimal_path_count_reference(p, start)[1]


def test_the_goal_has_one_solution_and_an_unsolvable_position_none():
    p = ps.load_puzzle("3x2")
    assert count_optimal(p, p.goal).count == 1 and [s.moves for s in optimal_solutions(p, p.goal)] == [[]]
    with pytest.raises(Unsolvable):
        count_optimal(p, (2, 1, 3, 4, 5, 0))


@pytest.mark.parametrize("name, most", [("3x3", 1000), ("4x3", 30)])  # a search of the layers, IDA*'s passes
def test_a_search_past_its_states_stops_and_says_what_to_do(name, most):
    p = ps.load_puzzle(name)
    start = p.random_position(__import__("numpy").random.default_rng(1))
    with pytest.raises(SearchStopped, match=f"passed {most:,} positions; use a tablebase"):
        count_optimal(p, start, max_states=most)


def test_solutions_are_listed_lazily():
    """The first of many is given without the others being made."""
    p = ps.load_puzzle("4x3")
    start = random.Random(3).choice([p.apply(p.goal, m) for m in p.moves(p.goal)])
    first = next(optimal_solutions(p, start))
    assert first.length == 1


# ----- the command line -----------------------------------------------------------------
def run(*args):
    from click.testing import CliRunner

    from puzzlespace.cli import app

    return CliRunner().invoke(app, list(args))


def test_solve_count_and_all_on_the_command_line():
    counted = run("solve", "jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1", "--count")
    assert counted.exit_code == 0 and counted.stdout == "jump:4:1,2: 30 optimal solutions of 12 moves (bfs)\n"
    listed = run("solve", "jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1", "--all", "3")
    lines = listed.stdout.splitlines()
    assert listed.exit_code == 0 and lines[0] == counted.stdout.strip() and len(lines) == 4
    assert lines[1].startswith("1: ") and listed.stderr == (
        "listed the first 3 of 30 optimal solutions; --all 30 lists them all\n")
    every = run("solve", "jump:4", "1 2 3 4 0", "--goal", "0 4 3 2 1", "--all")
    assert every.exit_code == 0 and len(every.stdout.splitlines()) == 31 and every.stderr == ""


def test_solve_all_json_carries_the_count_and_each_solution():
    import json

    got = run("solve", "3x2", "0 5 4/3 2 1", "--all", "--json")
    answer = json.loads(got.stdout)
    p = ps.load_puzzle("3x2")
    start = p.parse_position("0 5 4/3 2 1")
    assert answer["count"] == len(answer["solutions"]) == optimal_path_count_reference(p, start)[1]
    assert answer["length"] == 15 and answer["status"] == "solved" and answer["method"] == "bfs"
    for sol in answer["solutions"]:
        assert sol["length"] == 15 and sol["path"][0] == list(start) and sol["path"][-1] == list(p.goal)
        assert sol["moves"] == sol["notations"]["tiles"]
    assert "solutions" not in json.loads(run("solve", "3x2", "0 5 4/3 2 1", "--count", "--json").stdout)


def test_solve_count_of_an_unsolvable_position_says_so():
    import json

    got = run("solve", "3x2", "2 1 3/4 5 0", "--count", "--json")
    assert got.exit_code == 1 and json.loads(got.stdout)["status"] == "unsolvable"


@examples(25)
@given(st.sampled_from(["3x2", "2x3", "4x2", "3x2:mtm", "jump:6:1,3", "flip:2x3"]), st.integers(0, 2**32 - 1))
def test_idas_passes_find_the_same_graph(name, seed):
    """by_passes (a compiled pass from each neighbour), given one optimal solution,
    against the search of the layers: the same count and list."""
    p = ps.load_puzzle(name)
    start = p.random_position(__import__("numpy").random.default_rng(seed))
    layers = by_search(p, start)
    some = p.replay(start, next(layers.each()))
    passes = by_passes(p, search_problem_for(p), some)
    assert passes.count() == layers.count() and list(passes.each()) == list(layers.each())


def test_idas_passes_stop_at_their_time_limit():
    p = ps.load_puzzle("3x3")
    start = p.parse_position("8 6 7/2 5 4/3 0 1")
    some = p.replay(start, ps.solve(p, start).moves)
    with pytest.raises(SearchStopped, match="time limit reached while telling the optimal moves"):
        by_passes(p, search_problem_for(p), some, time_limit=0).count()


@pytest.mark.parametrize("method, heuristic, table, said", [
    ("fast", "auto", False, "counted by auto, table, bfs, ida, not by 'fast'"),
    ("bfs", "auto", True, "give a tablebase or method bfs, not both"),
    ("auto", "manhattan", True, "a heuristic guides the ida method's search only"),
    ("table", "auto", False, "no tablebase for sliding:3x2")])
def test_a_method_that_cannot_count_is_refused(tmp_path, monkeypatch, method, heuristic, table, said):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path))
    p = ps.load_puzzle("3x2")
    with pytest.raises(PuzzleError, match=said):
        count_optimal(p, p.goal, saved_tablebase("3x2", tmp_path) if table else None, method=method,
                      heuristic=heuristic)


def test_without_a_tablebase_a_larger_puzzle_is_counted_below_idas_bound():
    p = ps.load_puzzle("5x2")
    start = random_walk(p, p.goal, 24, __import__("numpy").random.default_rng(7))[-1]
    counted = count_optimal(p, start)
    assert counted.method == "ida" and counted.count == by_search(p, start).count()
