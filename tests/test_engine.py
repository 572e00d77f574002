"""The explore engine: every family's layers against dictionary BFS and the published numbers."""

import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.explore import explore
from puzzlespace.families import GraphPuzzle
from puzzlespace.search.bfs import depth_counts
from puzzles import graphs_under_test

runner = CliRunner()


@pytest.mark.parametrize("name", ["3x3", "4x2", "jump:7", "jump:6:1,3", "flip:4x3", "3x2", "2x2"])
def test_engine_matches_dictionary_bfs(name):
    p = ps.load_puzzle(name)
    counts, last = depth_counts(p, p.goal)
    result = explore(p, threads=2, antipode_limit=10**6)
    assert result.depth_counts == counts
    assert result.antipode_count == len(last) and set(result.antipodes) == set(last)

def test_engine_on_graphs_and_other_goals():
    from puzzlespace.graphs import Graph

    for graph in [Graph(2, ((0, 1),)), *graphs_under_test()[:12]]:  # two nodes: both positions, one move apart
        p = GraphPuzzle(graph)
        counts, _ = depth_counts(p, p.goal)
        assert explore(p, threads=1).depth_counts == counts
    p = ps.load_puzzle("3x3", goal="1 2 3/4 0 5/6 7 8")
    assert explore(p).depth_counts == depth_counts(p, p.goal)[0]

@pytest.mark.parametrize("size", ["2x2", "3x2", "4x2", "3x3", "5x2"])
def test_gods_numbers(seeds, size):
    facts = seeds["sliding"]["gods_numbers"][size]
    r = explore(ps.load_puzzle(size), antipode_limit=5)
    assert r.max_depth == facts["max_depth"] and r.antipode_count == facts["antipodes"]
    if "states" in facts:
        assert r.states == facts["states"]

def test_8_puzzle_antipodes(seeds):
    r = explore(ps.load_puzzle("3x3"))
    expected = next(q for q in seeds["sliding"]["problems"] if "antipodes_of_goal" in q)["antipodes_of_goal"]
    assert sorted(map(list, r.antipodes)) == sorted(expected)

@pytest.mark.parametrize("n", ["4", "5", "6", "7", "8"])
def test_jump_1_2(seeds, n):
    facts = seeds["jump"]["distances_1_2"]["longest_from_goal"][n]
    r = explore(ps.load_puzzle(f"jump:{n}"))
    assert (r.max_depth, r.states) == (facts["max_depth"], facts["states"])
    assert sorted(map(list, r.antipodes)) == sorted(facts["antipodes"])

def test_jump_1_3(seeds):
    facts = seeds["jump"]["distances_1_3"]["longest_from_goal"]["4"]
    r = explore(ps.load_puzzle("jump:4:1,3"))
    assert (r.max_depth, r.states, r.antipode_count) == (facts["max_depth"], facts["states"], facts["antipode_count"])
    assert sorted(map(list, r.antipodes)) == sorted(facts["antipodes"])

@pytest.mark.parametrize("size", ["3x3", "4x3", "4x4", "5x4", "5x5"])
def test_flip(seeds, size):
    facts = seeds["flip"]["longest_from_goal"][size]
    r = explore(ps.load_puzzle(f"flip:{size}"), antipode_limit=3)
    assert (r.max_depth, r.antipode_count, r.states) == (facts["max_depth"], facts["antipode_count"], facts["states"])

def test_memory_refusal():
    with pytest.raises(ps.PuzzleError, match="needs about"):
        explore(ps.load_puzzle("4x3"), max_memory=10 << 20)
    r = runner.invoke(app, ["explore", "5x4", "--json"])
    assert r.exit_code == 2 and "memory" in r.stderr

def test_progress_reports_layers():
    seen = []
    explore(ps.load_puzzle("3x2"), progress=lambda d, done, total, states: seen.append((d, states)))
    assert seen[0][0] == 1 and seen[-1][0] == 22 and seen[-1][1] == 360
