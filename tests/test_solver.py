"""One plan for solving, shared by solve, batch and the command line."""

import pytest

import puzzlespace as ps
from puzzlespace.batch import solve_all
from puzzlespace.explore import explore
from puzzlespace.explore import tablebase as tb
from puzzlespace.solver import Heuristic, plan_solving


def test_the_plan_picks_the_method_and_parses_the_heuristic_once():
    p = ps.load_puzzle("4x3")
    plan = plan_solving(p)
    assert plan.method == "ida" and plan.heuristic == Heuristic("pdb:6-5") and plan.builds_patterns
    assert plan_solving(p, heuristic="walking").heuristic.name == "walking"
    assert not plan_solving(p, heuristic="walking").builds_patterns
    assert plan_solving(ps.load_puzzle("flip:3x3")).method == "bibfs"
    assert plan_solving(p, "bfs").method == "bfs" and plan_solving(p, "bfs").heuristic is None
    with pytest.raises(ps.PuzzleError, match="IDA\\* only"):
        plan_solving(p, "bfs", "walking")
    with pytest.raises(ps.PuzzleError, match="sum to at most"):
        plan_solving(p, heuristic="pdb:9-9")
    with pytest.raises(ps.PuzzleError, match="no tiles"):
        plan_solving(ps.load_puzzle("flip:3x3"), heuristic="pdb:4")
    with pytest.raises(ps.PuzzleError, match="unknown method"):
        plan_solving(p, "dfs")
    with pytest.raises(ps.PuzzleError, match="no tablebase"):
        plan_solving(p, "table")


def test_a_tablebase_is_planned_for_solve_and_batch_alike(tmp_path):
    p = ps.load_puzzle("3x2")
    r = explore(p, keep_table=True)
    tb.save(tmp_path / "t.pstb", p, p.state_index(), r.table, r.depth_counts)
    table = tb.load(tmp_path / "t.pstb", p)
    with pytest.raises(ps.PuzzleError, match="a tablebase or a heuristic, not both"):
        plan_solving(p, heuristic="walking", table=table)
    plan = plan_solving(p, table=table)
    assert plan.method == "table" and not plan.builds_patterns
    start = p.parse_position("0 5 4/3 2 1")
    assert ps.solve(p, start, plan=plan).method == "table"
    results = list(solve_all(p, [("1", start)], plan=plan))
    assert results[0].status == "solved" and results[0].length == ps.solve(p, start, method="bibfs").length
    assert plan_solving(p, "ida", table=table).method == "ida"  # a named method wins


def test_a_ready_plan_shares_its_problem():
    p = ps.load_puzzle("3x3")
    plan = plan_solving(p, heuristic="manhattan").ready()
    assert plan.problem is not None and plan.ready() is plan
    start = p.parse_position("8 6 7/2 5 4/3 0 1")
    assert ps.solve(p, start, plan=plan).length == 31 == ps.solve(p, start, heuristic="walking").length
