"""Weighted IDA*: a solution at most W times the optimum, and a lower bound never above it.

The optimum comes from a tablebase (a breadth-first search of the whole space), not from
IDA*, so the two are independent."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pytest
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.search.ida import weight_coefficients
from puzzlespace.solver import plan_solving

from puzzles import saved_tablebase

WEIGHTS = ("1", "1.5", "2", "3")


@pytest.fixture(scope="module")
def tablebases(tmp_path_factory):
    made = {}

    def load(name: str):
        if name not in made:
            made[name] = saved_tablebase(name, tmp_path_factory.mktemp("tb"))
        return made[name]

    return load


def check_weights(name: str, table, weights=WEIGHTS, count: int = 200, exact_count: int = 200) -> None:
    """``count`` random positions of ``name``: length <= W x optimum, lower bound <= optimum;
    W = 1 (on the first ``exact_count``) exactly optimal."""
    p = ps.load_puzzle(name)
    plan = plan_solving(p, "ida").ready()
    rng = np.random.default_rng(16)
    starts = [p.random_position(rng) for _ in range(count)]
    for text in weights:
        weight = Fraction(text)
        for start in starts[:exact_count] if weight == 1 else starts:
            optimum = table.distance(start)
            sol = ps.solve(p, start, plan=plan, weight=text)
            assert sol.path[-1] == p.goal and sol.length <= weight * optimum, (text, start)
            assert sol.proven_lower_bound <= optimum <= sol.length, (text, start)
            assert sol.optimal == (sol.proven_lower_bound == sol.length)
            if weight == 1:
                assert sol.length == optimum and sol.optimal


@pytest.mark.parametrize("name, count", [("3x3", 30), ("jump:8", 8)])
def test_weighted_solutions_are_within_their_weight(name, count, tablebases):
    """``count`` random positions each (a few of jump:8's take seconds at W = 1.5; the slow
    test below does 200 of each, and of 4x3's, the same search on pattern databases)."""
    check_weights(name, tablebases(name), count=count, exact_count=count)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["3x3", "4x3", "jump:8"])
def test_every_weight_on_200_positions(name, tablebases):
    check_weights(name, tablebases(name))


def test_weights_do_find_longer_solutions_faster():
    """A weight is not ignored: on 4x3's hardest seed position W = 3 generates far fewer
    nodes than W = 1 and answers longer."""
    p = ps.load_puzzle("4x3")
    start = p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")
    exact, loose = ps.solve(p, start, method="ida"), ps.solve(p, start, method="ida", weight=3)
    assert exact.length == 53 and exact.optimal
    assert loose.nodes * 10 < exact.nodes and 53 < loose.length <= 159 and not loose.optimal
    assert loose.proven_lower_bound <= 53


@pytest.mark.parametrize("text,expected", [("1", (1, 1)), ("1.5", (2, 3)), ("2", (1, 2)), ("1.1", (10, 11)),
                                           ("1.2345678", (500, 617)), (Fraction(7, 4), (4, 7)), (2.5, (2, 5))])
def test_weight_coefficients(text, expected):
    q, p = weight_coefficients(text)
    assert (q, p) == expected and Fraction(p, q) <= Fraction(str(text))


@pytest.mark.parametrize("text", ["0.5", "0", "-2", "nan", "inf", "abc", "", "1001", "1/0"])
def test_weights_out_of_range_are_refused(text):
    with pytest.raises(ps.PuzzleError, match="a weight is a number from 1 to 1000"):
        weight_coefficients(text)


def test_methods_without_weights_are_optimal():
    """Breadth-first methods give the optimum whatever the weight, and say so."""
    p = ps.load_puzzle("flip:3x3")
    start = p.random_position(np.random.default_rng(3))
    sol = ps.solve(p, start, weight=2, method="bibfs")
    assert sol.method == "bibfs" and sol.optimal and sol.proven_lower_bound == sol.length


# ---- the command line -----------------------------------------------------------------

def run_cli(args):
    return CliRunner().invoke(app, args)


def test_cli_weight_says_how_good():
    result = run_cli(["solve", "4x3", "0 3 2 1/8 7 6 5/4 11 10 9", "--weight", "1.5", "-q"])
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert "within 1.5 of optimal (lower bound" in first and "weight 1.5" in first
    length = int(re.search(r"length (\d+) \(\d+ in the multi-tile metric\), within", first)[1])
    assert 53 <= length <= 79


def test_cli_weight_json_and_plain_optimal():
    got = json.loads(run_cli(["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--weight", "2", "--json"]).stdout)
    assert got["weight"] == 2.0 and got["length"] <= 62 and got["lower_bound"] <= 31 <= got["length"]
    assert got["optimal"] == (got["lower_bound"] == got["length"])
    plain = json.loads(run_cli(["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--json"]).stdout)
    assert plain["length"] == plain["lower_bound"] == 31 and plain["optimal"] and plain["weight"] == 1.0


def test_cli_refuses_a_bad_weight():
    result = run_cli(["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--weight", "0.9"])
    assert result.exit_code == 2 and "--weight" in result.output and "from 1 to 1000" in result.output
    assert "Traceback" not in result.output


def test_cli_batch_weight_and_lower_bounds(tmp_path):
    positions = tmp_path / "p.txt"
    positions.write_text("8 6 7/2 5 4/3 0 1\n6 4 7/8 5 0/3 2 1\n1 2 3/4 5 6/7 0 8\n")
    result = run_cli(["batch", "3x3", str(positions), "--weight", "3", "--format", "jsonl", "--threads", "2"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["status"] for r in rows] == ["solved"] * 3
    assert all(r["lower_bound"] <= d <= r["length"] <= 3 * d for r, d in zip(rows, (31, 31, 1)))
    exact = run_cli(["batch", "3x3", str(positions)])
    assert exact.stdout.splitlines()[0].endswith(",error,lower_bound")


# ---- anytime --------------------------------------------------------------------------

@pytest.mark.parametrize("name,limits,count", [("3x3", (None, 0.0005), 60),
                                               pytest.param("3x3", (None, 0.0005), 200, marks=pytest.mark.slow),
                                               pytest.param("4x3", (None, 0.0005), 200, marks=pytest.mark.slow),
                                               ("jump:8", (0.003, 0.0005), 60),
                                               pytest.param("jump:8", (0.003, 0.0005), 200, marks=pytest.mark.slow)])
def test_anytime_bounds_the_optimum_from_both_sides(name, limits, count, tablebases):
    """Whatever the time limit: lower bound <= optimum <= length; no limit gives the
    optimum, proven; a limit that leaves no solution stops with a lower bound <= optimum
    (``count`` positions: more in the slow run)."""
    p = ps.load_puzzle(name)
    table = tablebases(name)
    plan = plan_solving(p, "ida").ready()
    rng = np.random.default_rng(23)
    stopped = 0
    for start in [p.random_position(rng) for _ in range(count)]:
        optimum = table.distance(start)
        for limit in limits:
            try:
                sol = ps.solve(p, start, plan=plan, anytime=True, time_limit=limit)
            except ps.SearchStopped as exc:
                stopped += 1
                assert 0 <= exc.lower_bound <= optimum
                continue
            assert sol.proven_lower_bound <= optimum <= sol.length and sol.anytime
            assert sol.optimal == (sol.length == sol.proven_lower_bound)
            if limit is None:
                assert sol.optimal and sol.length == optimum
    assert stopped < 2 * count


def test_anytime_is_not_given_with_a_weight():
    p = ps.load_puzzle("3x3")
    with pytest.raises(ps.PuzzleError, match="--anytime"):
        ps.solve(p, p.parse_position("8 6 7/2 5 4/3 0 1"), anytime=True, weight=2)
    result = run_cli(["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--anytime", "--weight", "2"])
    assert result.exit_code == 2 and "--anytime" in result.output


def test_cli_batch_anytime(tmp_path):
    """Each row's lower bound <= its length, both proven; with a weight, the whole file
    is refused before any is solved."""
    positions = tmp_path / "p.txt"
    positions.write_text("0 24 23 22 21/20 19 18 17 16/15 14 13 12 11/10 9 8 7 6/5 4 3 2 1\n"
                         "1 2 3 4 5/6 7 8 9 10/11 12 13 14 15/16 17 18 19 20/21 22 23 0 24\n")
    result = run_cli(["batch", "5x5", str(positions), "--heuristic", "linear-conflict", "--anytime",
                      "--time-limit", "0.5", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    far, near = (json.loads(line) for line in result.stdout.splitlines())
    assert far["status"] == "solved" and 0 < far["lower_bound"] < far["length"]
    assert near["status"] == "solved" and near["lower_bound"] == near["length"] == 1
    refused = run_cli(["batch", "5x5", str(positions), "--anytime", "--weight", "2"])
    assert refused.exit_code == 2 and "--anytime" in refused.output and refused.stdout == ""


def test_cli_anytime_reports_the_gap():
    start = "0 24 23 22 21/20 19 18 17 16/15 14 13 12 11/10 9 8 7 6/5 4 3 2 1"
    result = run_cli(["solve", "5x5", start, "--heuristic", "linear-conflict", "--anytime", "--time-limit", "1",
                      "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.stdout)
    assert got["status"] == "solved" and not got["optimal"] and got["gap"] == got["length"] - got["lower_bound"] > 0
    plain = run_cli(["solve", "5x5", start, "--heuristic", "linear-conflict", "--anytime", "--time-limit", "1", "-q"])
    line = re.match(r"sliding:5x5: solution, length (\d+) \(\d+ in the multi-tile metric\), optimum >= (\d+) \(gap "
                    r"(\d+)\) \(ida linear-conflict anytime,",
                    plain.stdout)
    assert plain.exit_code == 0 and line, plain.stdout
    assert int(line[1]) - int(line[2]) == int(line[3]) > 0
    exact = run_cli(["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--anytime", "-q"])
    assert exact.stdout.startswith("sliding:3x3: optimal solution, 31 moves (")
    assert "in the multi-tile metric) (ida walking anytime" in exact.stdout


@pytest.mark.parametrize("count", [4, pytest.param(100, marks=pytest.mark.slow)])
def test_korf_100_at_every_weight(examples, count):
    """Korf's 100 (the first ``count``) with the default pattern databases: weight 1 gives
    the optima (the sum of all 100, 5,305, is the paper's); at 1.5, 2 and 3 every length is
    within its weight of them and every lower bound at most them; anytime search with 20
    ms each stays between them."""
    from puzzlespace.batch import read_positions, solve_all

    p = ps.load_puzzle("4x4", " ".join(map(str, range(16))))
    items = read_positions(p, (examples / "korf100.txt").read_text().splitlines())[:count]
    plan = plan_solving(p, "ida").ready()
    optimum = {r.id: r.length for r in solve_all(p, items, plan=plan, threads=2)}
    assert len(optimum) == count and (count < 100 or sum(optimum.values()) == 5305)
    for weight in ("1.5", "2", "3"):
        for r in solve_all(p, items, plan=plan, weight=weight, threads=2):
            assert r.lower_bound <= optimum[r.id] <= r.length <= Fraction(weight) * optimum[r.id]
    for r in solve_all(p, items, plan=plan, anytime=True, time_limit=0.02, threads=2):
        assert r.status == "solved" and r.lower_bound <= optimum[r.id] <= r.length


def test_an_optimal_suffix_is_optimal_within_its_budget(tablebases):
    """With room enough the whole solution is re-solved (the optimum, from the tablebase);
    with none it stays as it was; with some, it is a solution no longer than before."""
    from puzzlespace.search.ida import ida_star, optimal_suffix

    p, table = ps.load_puzzle("3x3"), tablebases("3x3")
    problem = plan_solving(p, "ida").ready().problem
    rng = np.random.default_rng(3)
    for _ in range(30):
        start = p.random_position(rng)
        found = ida_star(problem, start, weight=3)
        path = p.replay(start, found.moves)
        whole, _, solved = optimal_suffix(problem, path, found.moves, 10**9)
        assert solved and len(whole) == table.distance(start) and p.replay(start, whole)[-1] == p.goal
        assert optimal_suffix(problem, path, found.moves, 0) == (found.moves, 0, False)
        some, spent, solved = optimal_suffix(problem, path, found.moves, 300)
        assert not solved or len(some) == len(whole)
        assert spent <= 300 and len(whole) <= len(some) <= len(found.moves)
        assert p.replay(start, some)[-1] == p.goal


def test_a_node_limit_is_decided_by_the_count_alone():
    from puzzlespace.errors import SearchStopped
    from puzzlespace.search.ida import ida_star

    p = ps.load_puzzle("4x3")
    problem = plan_solving(p, "ida").ready().problem
    start = p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")
    free = ida_star(problem, start)
    assert ida_star(problem, start, max_nodes=free.nodes).moves == free.moves
    with pytest.raises(SearchStopped, match="more than"):
        ida_star(problem, start, max_nodes=free.nodes - 1)


def test_a_known_lower_bound_skips_the_passes_below_it():
    from puzzlespace.search.ida import ida_star

    p = ps.load_puzzle("4x3")
    problem = plan_solving(p, "ida").ready().problem
    start = p.parse_position("0 3 2 1/8 7 6 5/4 11 10 9")
    free = ida_star(problem, start)
    told = ida_star(problem, start, at_least=len(free.moves) - 1)  # parity rounds it up to the optimum
    assert len(told.moves) == len(free.moves) == 53 and told.nodes < free.nodes and told.lower_bound == 53
