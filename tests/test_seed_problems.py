"""Every solving problem of the seed pages, with exactly the stated lengths."""

import pytest

import puzzlespace as ps


def _size(board: str) -> str:
    return f"sliding:{board}"


def test_sliding_problems(seeds):
    for prob in seeds["sliding"]["problems"]:
        if "start" not in prob:
            continue
        p = ps.load_puzzle(_size(prob["board"])).with_goal(tuple(prob["goal"]))
        start = tuple(prob["start"])
        assert p.search_problem().distance_sum(start) == prob["manhattan_lower_bound"]
        sol = ps.solve(p, start)
        assert sol.length == prob["optimal_moves"]
        assert sol.path[0] == start and sol.path[-1] == p.goal


def test_seed_8_puzzle_solution_is_the_seed_one(seeds):
    prob = next(q for q in seeds["sliding"]["problems"] if q.get("board") == "3x3" and "start" in q)
    p = ps.load_puzzle("3x3")
    sol = ps.solve(p, tuple(prob["start"]))
    # any optimal solution is right; replaying the seed's own shows it is legal and optimal too
    seed_moves = []
    state = tuple(prob["start"])
    for tile in prob["one_optimal_solution_tiles_moved"]:
        node = state.index(tile)
        seed_moves.append(node)
        state = p.apply(state, node)
    assert state == p.goal and len(seed_moves) == sol.length


def test_antipodes_of_the_8_puzzle(seeds):
    prob = next(q for q in seeds["sliding"]["problems"] if "antipodes_of_goal" in q)
    p = ps.load_puzzle("3x3")
    for pos in prob["antipodes_of_goal"]:
        assert ps.solve(p, tuple(pos)).length == seeds["sliding"]["gods_numbers"]["3x3"]["max_depth"]


def test_unsolvable_example(seeds):
    prob = next(q for q in seeds["sliding"]["problems"] if "unsolvable_example" in q)
    p = ps.load_puzzle("3x3")
    pos = tuple(prob["unsolvable_example"])
    assert not p.check(pos).solvable
    with pytest.raises(ps.Unsolvable):
        ps.solve(p, pos)


@pytest.mark.parametrize("key, distances", [("distances_1_2", "1,2"), ("distances_1_3", "1,3")])
def test_jump_problems(seeds, key, distances):
    for prob in seeds["jump"][key]["problems"]:
        n = len(prob["start"]) - 1
        p = ps.load_puzzle(f"jump:{n}:{distances}").with_goal(tuple(prob["goal"]))
        start = tuple(prob["start"])
        if prob.get("solvable") is False:
            assert not p.check(start).solvable
            with pytest.raises(ps.Unsolvable):
                ps.solve(p, start)
            continue
        for method in ("ida", "bibfs"):
            assert ps.solve(p, start, method=method).length == prob["optimal_moves"]
        if "one_optimal_path" in prob:
            assert len(prob["one_optimal_path"]) - 1 == prob["optimal_moves"]


def test_flip_problems(seeds):
    for prob in seeds["flip"]["problems"]:
        w, h = prob["board"].split("x")
        p = ps.load_puzzle(f"flip:{prob['board']}")
        start = tuple(prob["start"])
        assert p.check(start).solvable
        for method in ("auto", "ida", "bibfs"):
            assert ps.solve(p, start, method=method).length == prob["optimal_moves"]


def test_flip_bfs_agrees_on_3x3(seeds):
    prob = seeds["flip"]["problems"][0]
    p = ps.load_puzzle("flip:3x3")
    assert ps.solve(p, tuple(prob["start"]), method="bfs").length == prob["optimal_moves"]
