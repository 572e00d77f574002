"""The fast sliding solver (--method fast): every solution replays to the goal on boards
from 2 x 2 to 12 x 12 with any goal, its lower bound never exceeds the optimum, and each
compiled search in it agrees with a plain breadth-first search."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.families import sliding_fast as sf
from puzzlespace.search.bfs import bidirectional_bfs

from puzzles import random_walk
from reference import tracked_walk_length_reference

boards = st.tuples(st.integers(2, 12), st.integers(2, 12))


@settings(deadline=None)
@given(size=boards, seed=st.integers(0, 2**32 - 1), any_goal=st.booleans(), walk=st.sampled_from([0, 30, 1000]))
def test_fast_solutions_replay_to_the_goal(size, seed, any_goal, walk):
    """Random positions (walk 0) or positions a long random walk away, from any goal."""
    rng = np.random.default_rng(seed)
    p = ps.load_puzzle(f"{size[0]}x{size[1]}")
    if any_goal:
        p = p.with_goal(tuple(int(t) for t in rng.permutation(p.n_cells)))
    start = random_walk(p, p.goal, walk, rng)[-1] if walk else p.random_position(rng)
    sol = ps.solve(p, start, method="fast")
    assert sol.path[-1] == p.goal and p.replay(start, sol.moves) == sol.path
    assert sol.method == "fast" and sol.weight is None
    assert sol.proven_lower_bound <= sol.length and (not walk or sol.proven_lower_bound <= walk)


@pytest.mark.parametrize("boards", [
    pytest.param((("3x3", 40), ("2x5", 10)), id="small"),
    pytest.param((("3x3", 40), ("4x3", 12), ("2x5", 40)), id="larger", marks=pytest.mark.slow)])
def test_fast_lower_bounds_never_pass_the_optimum(boards):
    """On the 8-puzzle, 2x5 and 4x3 against optima from bidirectional search (in plain
    Python: seconds a 4x3 position, which the slow run takes)."""
    rng = np.random.default_rng(8)
    for name, positions in boards:
        p = ps.load_puzzle(name)
        for _ in range(positions):
            start = p.random_position(rng)
            sol = ps.solve(p, start, method="fast")
            optimum = len(bidirectional_bfs(p, start, p.goal).moves)
            assert sol.proven_lower_bound <= optimum <= sol.length


def test_the_goal_is_solved_by_no_moves():
    p = ps.load_puzzle("7x5")
    assert ps.solve(p, p.goal, method="fast").moves == []


@settings(deadline=None)
@given(size=st.tuples(st.integers(2, 4), st.integers(2, 4)), seed=st.integers(0, 2**32 - 1),
       tracked=st.integers(0, 2))
def test_the_compiled_searches_match_a_plain_search(size, seed, tracked):
    """_shortest_walk (no tile or one) and _two_home (two) against a dictionary BFS, on
    random boards with random cells held still."""
    w, h = size
    n = w * h
    rng = np.random.default_rng(seed)
    board = rng.permutation(n).astype(np.int32)
    free = rng.random(n) < 0.8
    tiles = [v for v in range(n) if board[v] and free[v]][:tracked]
    blank = int(np.flatnonzero(board == 0)[0])
    free[blank] = True
    if len(tiles) < tracked:
        return
    homes = [int(v) for v in rng.choice(np.flatnonzero(free), size=max(tracked, 1), replace=False)]
    out = np.empty((n + 1) * n, np.int32)
    if tracked < 2:
        target = np.zeros(n, np.bool_)
        target[homes] = True
        got = sf._shortest_walk(free, w, h, tiles[0] if tiles else -1, blank, target, out)
        want = tracked_walk_length_reference(w, h, free, tiles, blank,
                                             lambda cells, b: target[cells[0] if cells else b])
    else:
        got = sf._two_home(free, w, h, tiles[0], tiles[1], blank, homes[0], homes[1], out)
        want = tracked_walk_length_reference(w, h, free, tiles, blank, lambda cells, b: list(cells) == homes)
    assert got == want
    if got > 0:  # the walk is one: each step to a free neighbour
        cells = [blank, *out[:got]]
        assert all(free[v] for v in cells[1:])
        assert all(abs(a - b) in (1, w) and (abs(a - b) == w or a // w == b // w) for a, b in zip(cells, cells[1:]))


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 16))
def test_a_window_is_solved_optimally(seed, moves):
    """_optimal_between finds the optimum between two 3x3 positions (bidirectional BFS's)."""
    rng = np.random.default_rng(seed)
    p = ps.load_puzzle("3x3")
    a = p.random_position(rng)
    b = random_walk(p, a, moves, rng)[-1]
    home = np.empty(9, np.int32)
    home[list(b)] = np.arange(9)
    board = np.array(a, np.int32)
    out = np.empty(32, np.int32)
    optimum = len(bidirectional_bfs(p, a, b).moves)
    got = sf._optimal_between(board, home, 3, 3, 20, 10**6, out)
    assert got == optimum and tuple(board) == a
    assert p.replay(a, [int(v) for v in out[:got]])[-1] == b


def test_shortening_keeps_the_ends_and_never_lengthens():
    rng = np.random.default_rng(4)
    for w, h in ((3, 3), (5, 4), (9, 7)):
        p = ps.load_puzzle(f"{w}x{h}")
        start = p.random_position(rng)
        walk = sf.constructive_walk(w, h, start, p.goal)
        short = sf.shortened_walk(w, h, start, walk)
        assert len(short) <= len(walk) and short[0] == walk[0]
        assert p.replay(start, [int(v) for v in short[1:]])[-1] == p.goal


def run_cli(args):
    return CliRunner().invoke(app, args)


def test_cli_fast():
    start = "8 6 7/2 5 4/3 0 1"
    plain = run_cli(["solve", "3x3", start, "--method", "fast", "-q"])
    assert plain.exit_code == 0, plain.output
    assert plain.stdout.startswith("sliding:3x3: solution, length ") and "(fast linear-conflict, " in plain.stdout
    got = json.loads(run_cli(["solve", "3x3", start, "--method", "fast", "--json"]).stdout)
    assert got["method"] == "fast" and got["weight"] is None and got["gap"] == got["length"] - got["lower_bound"]
    better = json.loads(run_cli(["solve", "3x3", start, "--method", "fast", "--heuristic", "walking", "--json"]).stdout)
    assert better["lower_bound"] >= got["lower_bound"] and better["heuristic"] == "walking"


@pytest.mark.parametrize("args,message", [
    (["solve", "jump:8", "1 2 3 4 5 6 0 7 8", "--method", "fast"], "has no fast method"),
    (["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--method", "fast", "--weight", "2"], "--method fast takes neither"),
    (["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--method", "fast", "--anytime"], "--method fast takes neither"),
])
def test_cli_fast_refusals(args, message):
    result = run_cli(args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_cli_batch_fast(tmp_path):
    rng = np.random.default_rng(12)
    p = ps.load_puzzle("12x12")
    positions = tmp_path / "p.txt"
    positions.write_text("".join(p.format_position(p.random_position(rng)) + "\n" for _ in range(3)))
    result = run_cli(["batch", "12x12", str(positions), "--method", "fast", "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    for row in rows:
        assert row["status"] == "solved" and 0 < row["lower_bound"] < row["length"]
        assert len(str(row["moves"]).split()) == row["length"]
    refused = run_cli(["batch", "12x12", str(positions), "--method", "fast", "--weight", "2"])
    assert refused.exit_code == 2 and refused.stdout == ""


def test_weighted_solutions_are_shortened_and_stay_within_bounds():
    """A weighted solution not proven optimal goes through the optimal suffix and the
    family's shorten: on 4x3 no longer than weighted IDA*'s own, still reaching the goal; a
    family without a shortening keeps its moves."""
    from puzzlespace.search.ida import ida_star
    from puzzlespace.solver import plan_solving

    rng = np.random.default_rng(43)
    p = ps.load_puzzle("4x3")
    plan = plan_solving(p, "ida", "manhattan").ready()
    gained = 0
    for _ in range(30):
        start = p.random_position(rng)
        raw = ida_star(plan.problem, start, weight=3)
        sol = ps.solve(p, start, plan=plan, weight=3)
        assert sol.length <= len(raw.moves) and sol.path[-1] == p.goal
        assert raw.lower_bound <= sol.proven_lower_bound <= sol.length  # more when the whole was made optimal
        gained += sol.length < len(raw.moves)
    assert gained > 0
    jump = ps.load_puzzle("jump:8")
    assert jump.shorten(jump.goal, [1, 0]) == [1, 0]
