"""explore: the rank/unrank hashes, the BFS engine, checkpoints and tablebases."""

import functools
import json
import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from click.testing import CliRunner

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.explore import explore
from puzzlespace.explore import tablebase as tb
from puzzlespace.bits import new_table, set2
from puzzlespace.families import GraphPuzzle
from puzzlespace.families import token_index as ti
from puzzlespace.search.bfs import depth_counts, reachable_states
from reference import expand_flip_reference, expand_groups_reference
from test_check import graphs_under_test

runner = CliRunner()

SMALL = ["2x2", "3x2", "2x3", "4x2", "3x3", "jump:4", "jump:5:1,3", "jump:6:2,3", "jump:7", "flip:3x3", "flip:4x3",
         "flip:2x2", "flip:3x2", "flip:5x2"]


@pytest.mark.parametrize("name", SMALL)
def test_unrank_covers_exactly_the_reachable_set(name):
    p = ps.load_puzzle(name)
    index = p.state_index()
    reachable = reachable_states(p, p.goal, max_states=10**6)
    states = [index.unrank(i) for i in range(index.size)]
    assert all(index.rank(s) == i for i, s in enumerate(states))
    if index.minimal:
        assert set(states) == reachable and len(states) == index.size
    else:
        assert reachable <= set(states)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["4x3", "3x4", "4x4", "jump:9", "jump:9:1,3", "6x2", "flip:6x6", "flip:5x4"]), st.data())
def test_rank_unrank_roundtrip_large(name, data):
    p = ps.load_puzzle(name)
    index = p.state_index()
    i = data.draw(st.integers(0, index.size - 1))
    s = index.unrank(i)
    assert index.rank(s) == i and p.check(s).solvable


@functools.lru_cache(maxsize=None)
def _random_table(name: str) -> np.ndarray:
    """A table of random entries the size of ``name``'s rank space (made once per puzzle)."""
    size = ps.load_puzzle(name).state_index().size
    return np.random.default_rng(len(name)).integers(0, 256, len(new_table(size)), dtype=np.uint8)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["3x3", "4x2", "2x4", "3x2", "jump:6", "jump:6:1,3", "jump:6:2,3", "jump:7:1,2", "4x3", "6x2"]),
       st.integers(0, 2**32 - 1), st.integers(1, 2), st.integers(1, 8), st.sampled_from([1, 100, 1 << 19]))
def test_fast_expansion_matches_reference(name, seed, value, suffix_length, table_limit):
    """The kernel against the decode-everything reference, on random tables, whatever the
    split between prefix and suffix digits and whichever windows have tables; the moves to
    node b +- 1 (rank steps) are left to the engine."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = ti.TokenIndex(p, suffix_length, table_limit)
    neighbors = p.graph.neighbors
    rng = np.random.default_rng(seed)
    table = _random_table(name)
    block = 1 << BLOCK_BITS
    if ix.size > 2 * block and rng.integers(0, 2):  # a span across a block edge, from mid-word
        lo = block * int(rng.integers(1, ix.size // block)) - int(rng.integers(0, 80))
    else:
        lo = int(rng.integers(0, ix.size))
    hi = min(ix.size, lo + int(rng.integers(1, 200 * ix.n)))
    flags = np.ones_like(new_blocks(ix.size))
    if rng.integers(0, 2):  # random flags; no state of the layer where a flag is clear
        flags = rng.integers(0, 2, len(flags)).astype(np.uint8)
        table = table.copy()
        for i in range(lo, hi):
            if not flags[i >> BLOCK_BITS] and (table[i >> 2] >> ((i & 3) << 1)) & 3 == value:
                set2(table, i, 0)
    fast = np.empty((hi - lo + 2 * ix.n) * ix.max_degree + len(ix.sadj), dtype=np.int64)
    ref = np.empty_like(fast)
    c1, nxt = ix.expand(table, lo, hi, value, flags, fast)
    c2 = expand_groups_reference(table, lo, hi, value, ix.n, ix.ptr, ix.adj, ix.bipartite, ix.need, ix.fact,
                                    ref, False)
    listed = sorted(ref[:c2].tolist())  # every neighbour, once per (state, move)
    steps = sorted(i - i % ix.n + u for i in range(lo, hi) if (table[i >> 2] >> ((i & 3) << 1)) & 3 == value
                   for u in neighbors[i % ix.n] if abs(u - i % ix.n) == 1)
    assert nxt == hi
    assert sorted(fast[:c1].tolist() + steps) == listed


def test_expansion_from_mid_word_of_a_skipped_block():
    """A span that starts inside the first word of a block whose flag is clear: the
    entries before its start are masked in that word, not in the next block's first."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    ix = ps.load_puzzle("3x3").state_index()
    block = 1 << BLOCK_BITS
    table = new_table(ix.size)
    set2(table, 2 * block + 2, 1)  # the only frontier state: entry 2 of block 2's first word
    flags = np.zeros_like(new_blocks(ix.size))
    flags[2] = 1
    out = np.empty(1000, dtype=np.int64)
    count, nxt = ix.expand(table, block + 5, ix.size, 1, flags, out)
    flags[:] = 1
    assert nxt == ix.size and count > 0
    assert sorted(out[:count]) == sorted(out[:ix.expand(table, block + 5, ix.size, 1, flags, out)[0]])


@settings(max_examples=200, deadline=None)
@given(st.integers(3, 14), st.data())
def test_window_change_matches_ranking(m, data):
    """The rank change of a token shift, from the Lehmer digits alone, against decoding,
    shifting and ranking afresh."""
    fact = np.array([math.factorial(i) for i in range(m + 1)], dtype=np.int64)
    r = data.draw(st.integers(0, math.factorial(m) - 1))
    src, dst = data.draw(st.integers(0, m - 1)), data.draw(st.integers(0, m - 1))
    seq = np.empty(m, dtype=np.int64)
    ti._unrank_perm(r, m, fact, seq)
    digits = np.array([sum(1 for z in seq[x + 1:] if z < seq[x]) for x in range(m)], dtype=np.int64)
    moved = list(seq)
    moved.insert(dst, moved.pop(src))
    assert ti._window_change(digits, src, dst, m, fact) == ti._rank_perm(np.array(moved), m, fact) - r


@pytest.mark.parametrize("length,step", [(1, 1), (3, 2), (5, 1), (8, 2)])
def test_suffix_table_digits_and_parity(length, step):
    fact = np.array([math.factorial(i) for i in range(length + 1)], dtype=np.int64)
    table = ti.suffix_table(length, step)
    assert len(table) == math.factorial(length) // step
    seq = np.empty(length, dtype=np.int64)
    for off in range(0, len(table), max(1, len(table) // 200)):
        ti._unrank_perm(off * step, length, fact, seq)
        digits = [sum(1 for z in seq[x + 1:] if z < seq[x]) for x in range(length)]
        assert [(int(table[off]) >> (3 * j)) & 7 for j in range(length)] == digits
        assert int(table[off]) >> 31 == sum(digits) & 1


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(["3x3", "4x3", "6x2", "jump:7:1,2", "jump:6:1,3", "3x2"]), st.integers(0, 2**32 - 1),
       st.integers(1, 2), st.booleans())
def test_rank_steps_match_plain_python(name, seed, value, close):
    """close_and_step (vector loops, carries between words and across blocks, blocks
    whose flag is clear) against a loop over states."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = p.state_index()
    n, neighbors = ix.n, p.graph.neighbors
    rng = np.random.default_rng(seed)
    table = _random_table(name).copy()
    for j in range(ix.size, 4 * len(table)):  # the padding is UNSEEN, as in new_table
        set2(table, j, 3)
    span = 32 * n  # a multiple of 32 and of the group
    block = 1 << BLOCK_BITS
    if ix.size > 2 * block and rng.integers(0, 2):  # just before the start of a block
        edge = block * int(rng.integers(1, ix.size // block))
        lo = span * max(0, edge // span - int(rng.integers(0, 4)))
    else:
        lo = span * int(rng.integers(0, min(ix.size, 40 * span) // span))
    hi = min(ix.size, lo + span * int(rng.integers(1, 6)))
    entry = lambda t, j: (t[j >> 2] >> ((j & 3) << 1)) & 3  # noqa: E731
    flags = rng.integers(0, 2, len(new_blocks(ix.size))).astype(np.uint8)
    for i in range(lo, hi):  # a clear flag: no state of value in the block
        if not flags[i >> BLOCK_BITS] and entry(table, i) == value:
            set2(table, i, 0)
    _assert_close_and_step(ix, neighbors, table, lo, hi, value, flags, close)


def _assert_close_and_step(ix, neighbors, table, lo, hi, value, flags, close):
    """close_and_step on ``table`` against a plain loop over the states of [lo, hi)."""
    from puzzlespace.bits import BLOCK_BITS, close_and_step

    n = ix.n
    entry = lambda t, j: (t[j >> 2] >> ((j & 3) << 1)) & 3  # noqa: E731
    new = 3 - value
    want = table.copy()
    fresh = set()
    for i in range(lo, hi):
        if entry(table, i) == value:
            for u in neighbors[i % n]:
                j = i - i % n + u
                if abs(u - i % n) == 1 and entry(want, j) == 3:
                    set2(want, j, new)
                    fresh.add(j)
    if close:
        for i in range(lo, hi):
            if entry(table, i) == value:
                set2(want, i, 0)
    following = np.zeros_like(flags)
    up, down = ix.rank_steps
    added = close_and_step(table, lo, hi, value, flags, new, following, up, down, close)
    assert added == len(fresh)
    assert np.array_equal(table, want)
    assert {k for k in range(len(following)) if following[k]} == {j >> BLOCK_BITS for j in fresh}


@pytest.mark.parametrize("name", ["6x2", "3x3"])
@pytest.mark.parametrize("direction", ["up", "down"])
@pytest.mark.parametrize("other_flag", [0, 1])
def test_rank_steps_across_a_block_edge(name, direction, other_flag):
    """A step from the last state of a block up to the first of the next, or from that
    one down, whether or not the other block's flag is set."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    p = ps.load_puzzle(name)
    ix = p.state_index()
    edge = next(k << BLOCK_BITS for k in range(1, ix.size >> BLOCK_BITS)
                if (k << BLOCK_BITS) % ix.n - 1 in p.graph.neighbors[(k << BLOCK_BITS) % ix.n])
    source = edge - 1 if direction == "up" else edge
    span = 32 * ix.n
    lo, hi = span * (edge // span - 1), span * (edge // span + 2)
    for close in (False, True):
        table = new_table(ix.size)
        flags = np.zeros_like(new_blocks(ix.size))
        flags[(edge - 1) >> BLOCK_BITS] = flags[edge >> BLOCK_BITS] = other_flag
        flags[source >> BLOCK_BITS] = 1
        set2(table, source, 1)
        _assert_close_and_step(ix, p.graph.neighbors, table, lo, hi, 1, flags, close)


def test_expansion_resumes_when_its_buffer_is_full():
    p = ps.load_puzzle("3x3")
    full = explore(p)
    from puzzlespace.explore import engine

    old = engine.MARK_BUFFER
    engine.MARK_BUFFER = 64
    try:
        small = explore(p, threads=2)
    finally:
        engine.MARK_BUFFER = old
    assert small.depth_counts == full.depth_counts


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


def test_checkpoint_and_resume(tmp_path):
    p = ps.load_puzzle("4x2")
    whole = explore(p)
    partial = explore(p, out_dir=tmp_path, stop_at_depth=20)
    assert partial.max_depth == 20
    resumed = explore(p, out_dir=tmp_path, resume=True)
    assert resumed.depth_counts == whole.depth_counts and set(resumed.antipodes) == set(whole.antipodes)
    assert [f.name for f in sorted(tmp_path.iterdir())] == ["manifest.json", "table-36.bin"]
    with pytest.raises(ps.PuzzleError, match="not"):
        explore(ps.load_puzzle("4x2", goal="0 1 2 3/4 5 6 7"), out_dir=tmp_path, resume=True)
    with pytest.raises(ps.PuzzleError, match="without --save"):
        explore(p, out_dir=tmp_path, resume=True, keep_table=True)


def test_resume_keeps_recording_the_tablebase(tmp_path):
    p = ps.load_puzzle("4x2")
    whole = explore(p, keep_table=True)
    explore(p, out_dir=tmp_path, stop_at_depth=17, keep_table=True)
    assert sorted(f.name for f in tmp_path.iterdir()) == ["manifest.json", "table-17.bin", "tablebase-17.bin"]
    resumed = explore(p, out_dir=tmp_path, resume=True, keep_table=True)
    assert resumed.depth_counts == whole.depth_counts
    assert np.array_equal(resumed.table, whole.table)


def test_sigkill_mid_layer_then_resume(tmp_path):
    """Kill the process (SIGKILL) in the middle of a layer; the resumed run gives the same result."""
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "puzzlespace.cli", "explore", "5x2", "--out", str(out), "--json", "--threads", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline:
        manifest = out / "manifest.json"
        if manifest.exists() and json.loads(manifest.read_text())["depth"] >= 25:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    depth = json.loads((out / "manifest.json").read_text())["depth"]
    assert 25 <= depth < 55
    resumed = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, check=True)
    data = json.loads(resumed.stdout)
    fresh = explore(ps.load_puzzle("5x2"))
    assert data["depth_counts"] == fresh.depth_counts and data["antipode_count"] == fresh.antipode_count


def test_tablebase_distances_and_solutions(tmp_path):
    p = ps.load_puzzle("3x3")
    r = explore(p, keep_table=True)
    path = tmp_path / "t.pstb"
    tb.save(path, p, p.state_index(), r.table, r.depth_counts)
    base = tb.load(path, p)
    rng = np.random.default_rng(4)
    for _ in range(30):
        s = p.state_index().unrank(int(rng.integers(p.state_index().size)))
        sol = ps.solve(p, s, table=base)
        assert sol.method == "table" and sol.length == ps.solve(p, s, method="ida").length
    assert base.distance(p.parse_position("8 6 7/2 5 4/3 0 1")) == 31


def test_tablebase_errors(tmp_path):
    p = ps.load_puzzle("3x2")
    r = explore(p, keep_table=True)
    path = tmp_path / "t.pstb"
    tb.save(path, p, p.state_index(), r.table, r.depth_counts)
    with pytest.raises(ps.PuzzleError, match="goal"):
        tb.load(path, p.with_goal((0, 1, 2, 3, 4, 5)))
    with pytest.raises(ps.PuzzleError, match="puzzle"):
        tb.load(path, ps.load_puzzle("2x3"))
    raw = path.read_bytes()
    (tmp_path / "short.pstb").write_bytes(raw[:-5])
    with pytest.raises(ps.PuzzleError, match="truncated"):
        tb.load(tmp_path / "short.pstb", p)
    bad = bytearray(raw)
    bad[-3] ^= 0xFF
    (tmp_path / "bad.pstb").write_bytes(bytes(bad))
    with pytest.raises(ps.PuzzleError, match="corrupt"):
        tb.load(tmp_path / "bad.pstb", p)
    (tmp_path / "junk.pstb").write_bytes(b"hello")
    with pytest.raises(ps.PuzzleError, match="not a puzzlespace tablebase"):
        tb.load(tmp_path / "junk.pstb", p)


def test_cli_explore_save_distance_generate(tmp_path, monkeypatch):
    monkeypatch.setenv("PUZZLESPACE_CACHE", str(tmp_path / "cache"))
    r = runner.invoke(app, ["explore", "3x3", "--json", "--save", "cache"])
    data = json.loads(r.stdout)
    assert r.exit_code == 0 and data["max_depth"] == 31 and data["states"] == 181440 and data["peak_memory_bytes"] > 0
    assert len(data["depth_counts"]) == 32 and data["antipode_count"] == 2
    r = runner.invoke(app, ["solve", "3x3", "8 6 7/2 5 4/3 0 1", "--json"])
    assert json.loads(r.stdout)["method"] == "table" and json.loads(r.stdout)["length"] == 31
    table = next((tmp_path / "cache" / "tables").glob("*.pstb"))
    r = runner.invoke(app, ["distance", "3x3", "1 2 3/4 5 6/0 7 8", "--table", str(table)])
    assert r.stdout.strip() == "2"
    r = runner.invoke(app, ["generate", "3x3", "--count", "5", "--depth", "20", "--table", str(table), "--seed", "3",
                            "--json"])
    p = ps.load_puzzle("3x3")
    assert all(ps.solve(p, tuple(s)).length == 20 for s in json.loads(r.stdout))
    r = runner.invoke(app, ["generate", "3x3", "--count", "2", "--depth", "31", "--seed", "3", "--json"])
    assert sorted(json.loads(r.stdout)) in ([[6, 4, 7, 8, 5, 0, 3, 2, 1]] * 2, [[8, 6, 7, 2, 5, 4, 3, 0, 1]] * 2,
                                            sorted([[6, 4, 7, 8, 5, 0, 3, 2, 1], [8, 6, 7, 2, 5, 4, 3, 0, 1]]))
    r = runner.invoke(app, ["generate", "3x3", "--count", "3", "--seed", "9"])
    assert r.exit_code == 0 and all(p.check(p.parse_position(line)).solvable for line in r.stdout.splitlines())
    assert runner.invoke(app, ["generate", "3x3", "--count", "3", "--seed", "9"]).stdout == r.stdout
    r = runner.invoke(app, ["distance", "3x3", "1 2 3/4 5 6/0 7 8", "--table", str(tmp_path / "none.pstb")])
    assert r.exit_code == 2 and "cannot be read" in r.stderr


def test_generate_is_uniform_enough():
    p = ps.load_puzzle("2x2")
    rng = np.random.default_rng(0)
    from puzzlespace.explore.generate import random_solvable

    seen = {}
    for _ in range(1200):
        s = random_solvable(p, rng)
        seen[s] = seen.get(s, 0) + 1
    assert len(seen) == 12 and min(seen.values()) > 60


def test_plot(tmp_path):
    path = tmp_path / "depths.png"
    r = runner.invoke(app, ["explore", "3x2", "--json", "--plot", str(path)])
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert r.exit_code == 2 and "matplotlib" in r.stderr and not path.exists()
    else:
        assert r.exit_code == 0 and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = runner.invoke(app, ["explore", "3x2", "--plot", str(tmp_path / "depths.gif")])
    assert r.exit_code == 2


def test_progress_reports_layers():
    seen = []
    explore(ps.load_puzzle("3x2"), progress=lambda d, done, total, states: seen.append((d, states)))
    assert seen[0][0] == 1 and seen[-1][0] == 22 and seen[-1][1] == 360


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["flip:3x3", "flip:4x3", "flip:5x4", "flip:2x2", "flip:5x5"]), st.integers(0, 2**32 - 1),
       st.integers(1, 2))
def test_fast_flip_expansion_matches_reference(name, seed, value):
    ix = ps.load_puzzle(name).state_index()
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 256, len(new_table(ix.size)), dtype=np.uint8)
    lo = int(rng.integers(0, ix.size))
    hi = min(ix.size, lo + int(rng.integers(1, 3000)))
    fast = np.empty((hi - lo) * ix.max_degree + ix.max_degree + 1, dtype=np.int64)
    ref = np.empty_like(fast)
    c1, nxt = ix.expand(table, lo, hi, value, np.ones(ix.size // 65536 + 2, dtype=np.uint8), fast)
    c2 = expand_flip_reference(table, lo, hi, value, ix.orbit_cells, ix.orbit_len, ix.pat2dig,
                                  ix.dig2pat, ix.radix, ix.mult, ix.src, ix.flip, ref)
    assert nxt == hi and sorted(fast[:c1]) == sorted(ref[:c2])


@pytest.mark.parametrize("name", ["2x2", "3x2", "jump:3:1,3", "flip:3x2", "flip:2x2"])
def test_random_positions_are_uniform_over_the_reachable_set(name):
    from collections import Counter

    p = ps.load_puzzle(name)
    reachable = reachable_states(p, p.goal)
    rng = np.random.default_rng(5)
    draws = Counter(p.random_position(rng) for _ in range(100 * len(reachable)))
    assert set(draws) == reachable
    assert min(draws.values()) > 60 and max(draws.values()) < 140


def test_random_positions_of_large_puzzles():
    rng = np.random.default_rng(1)
    for name in ["5x5", "10x10", "flip:10x10", "jump:30:1,3"]:
        p = ps.load_puzzle(name)
        assert p.check(p.random_position(rng)).solvable
    theta0 = GraphPuzzle(__import__("test_check").theta(1, 2, 2))
    reach = reachable_states(theta0, theta0.goal)
    assert all(theta0.random_position(rng) in reach for _ in range(50))


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 700), st.integers(0, 2**32 - 1), st.integers(1, 2))
def test_table_primitives_match_plain_python(size, seed, value):
    """The word-at-a-time table loops against entry-by-entry Python."""
    from puzzlespace import bits as tb2

    rng = np.random.default_rng(seed)
    table = tb2.new_table(size)
    entries = rng.integers(0, 4, size)
    for i, e in enumerate(entries):
        tb2.set2(table, i, int(e))
    assert [tb2.get2(table, i) for i in range(size)] == list(entries)
    want = [i for i in range(size) if entries[i] == value]
    out = np.empty(len(want) + 1, dtype=np.int64)
    written, total = tb2.collect_layer(table, 0, size, value, out)
    assert (written, total, list(out[:written])) == (len(want), len(want), want)
    assert [tb2.nth_in_layer(table, size, value, k) for k in range(len(want) + 1)] == want + [-1]
    lo = int(rng.integers(0, size + 1))
    every = np.ones_like(tb2.new_blocks(size))
    assert tb2.next_in_layer(table.view(np.uint64), lo, size, np.uint64(tb2.pattern(value)), every) == next(
        (i for i in want if i >= lo), size)

    marks = rng.integers(0, size, 50)
    merged = table.copy()
    touched = tb2.new_blocks(size)
    added = tb2.merge_marks(merged, marks, len(marks), 3 - value, touched)
    fresh = {int(i) for i in marks if entries[i] == tb2.UNSEEN}
    assert added == len(fresh)
    assert list(touched) == [1 if any(i >> tb2.BLOCK_BITS == k for i in fresh) else 0 for k in range(len(touched))]
    assert [tb2.get2(merged, i) for i in range(size)] == [3 - value if i in fresh else e for i, e in enumerate(entries)]

    tablebase = tb2.new_table(size)
    tb2.copy_layer(table, 0, size, value, tablebase, 0)
    assert [tb2.get2(tablebase, i) for i in range(size)] == [0 if e == value else 3 for e in entries]
    tb2.close_layer(table, 0, size, value, every)
    assert [tb2.get2(table, i) for i in range(size)] == [tb2.CLOSED if e == value else e for e in entries]


@pytest.mark.parametrize("name", ["3x3", "jump:9:1,3", "flip:5x5", "6x2"])
def test_expansion_skips_only_blocks_without_frontier_states(name):
    """Clear the frontier from some blocks and their flags: the same marks as with every flag set."""
    from puzzlespace.bits import BLOCK_BITS, new_blocks

    ix = ps.load_puzzle(name).state_index()
    rng = np.random.default_rng(7)
    size = min(ix.size, 6 << BLOCK_BITS)
    table = rng.integers(0, 256, len(new_table(ix.size)), dtype=np.uint8)
    blocks = np.ones_like(new_blocks(ix.size))
    block_bytes = (1 << BLOCK_BITS) // 4
    for k in range(0, (size >> BLOCK_BITS) + 1, 2):
        table[k * block_bytes:(k + 1) * block_bytes] = 0  # all CLOSED: no frontier state
        blocks[k] = 0
    out = [np.empty(size * ix.max_degree + 1000, dtype=np.int64) for _ in range(2)]
    c1, n1 = ix.expand(table, 0, size, 1, blocks, out[0])
    c2, n2 = ix.expand(table, 0, size, 1, np.ones_like(blocks), out[1])
    assert (c1, n1) == (c2, n2) and c1 > 0 and np.array_equal(out[0][:c1], out[1][:c2])
