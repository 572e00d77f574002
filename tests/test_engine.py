"""The explore engine: every family's layers against dictionary BFS and the published numbers."""

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.cli import app
from puzzlespace.errors import PuzzleError
from puzzlespace.explore import explore
from puzzlespace.families import GraphPuzzle
from puzzlespace.search.bfs import depth_counts
from puzzles import examples, graphs_under_test

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


def _echo(table, base, ranks, count, out, written, data):
    """A kernel whose only neighbour of a state is the state itself (``data[0]`` copies)."""
    for t in range(count):
        for _ in range(data[0]):
            out[written] = ranks[t]
            written += 1
    return written


class _EchoSpace:
    """A space of ``size`` ranks that lists each frontier state ``copies`` times: the walk laid bare."""

    def __init__(self, size: int, copies: int):
        from puzzlespace.explore.engine import neighbours_kernel

        self.size, self.group, self.max_degree, self.rank_steps = size, 1, copies, None
        self.kernel_data = (copies,)
        self.kernel = neighbours_kernel(_echo, self.kernel_data)


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 2), st.integers(35, 3000), st.integers(1, 3), st.booleans(),
       st.floats(0, 20))
def test_the_walk_lists_every_frontier_state_once_in_order(seed, value, batch, copies, sparse, batches):
    """The one frontier walk, call after call from an unaligned start, with a mark buffer of
    anywhere from one word's worth to twenty batches, against a scan of every entry; blocks
    whose flag is clear hold no state of the layer and are skipped; nothing is written
    outside the rank buffer."""
    from puzzlespace import bits
    from puzzlespace.explore.engine import expand_span

    rng = np.random.default_rng(seed)
    block = 1 << bits.BLOCK_BITS
    size = int(rng.integers(1, 5 * block))
    table = rng.integers(0, 256, len(bits.new_table(size)), dtype=np.uint8)
    if sparse:  # a few states of the layer, far apart
        table[:] = 0
        for i in rng.integers(0, size, 40):
            bits.set2(table, int(i), value)
    flags = bits.new_blocks(size)
    for k in range(len(flags) - 1):
        flags[k] = rng.integers(0, 3) > 0
        if not flags[k]:
            table[k * block // 4:(k + 1) * block // 4] = 0  # all CLOSED
    for i in range(size, len(table) * 4):  # padding past the last state is UNSEEN, as in new_table
        bits.set2(table, i, 3)
    lo, hi = sorted(int(x) for x in rng.integers(0, size + 1, 2))
    want = [i for i in range(lo, hi) if bits.get2(table, i) == value]
    space = _EchoSpace(size, copies)
    guarded = np.full(batch + 16, -7, dtype=np.int64)
    ranks = guarded[8:-8]
    out = np.empty(max(32 * copies, int(batches * batch * copies)) + 1, dtype=np.int64)
    got, at, calls = [], lo, 0
    while True:
        count, nxt = expand_span(space, table, at, hi, value, flags, out, ranks)
        calls += 1
        assert count % copies == 0 and count <= len(out) - 1
        got += out[:count:copies].tolist()
        assert all((out[:count].reshape(-1, copies) == out[:count:copies, None]).flat)
        assert nxt == hi or nxt in want[len(got):len(got) + 1]  # resumes at the first state not yet expanded
        if nxt == hi:
            break
        at = nxt
    assert got == want
    assert (guarded[:8] == -7).all() and (guarded[-8:] == -7).all()
    assert calls <= len(want) + 1  # each call but the last expands a state at least


@examples(10)
@given(st.integers(0, 2**32 - 1), st.integers(35, 400), st.integers(1, 3), st.integers(1, 9))
def test_expanding_in_this_thread_takes_the_marks_a_pool_takes(seed, batch, copies, parts):
    """Without a pool, the chunks are expanded and their marks taken in this thread, in
    order: the same marks, every chunk done once, as with a pool of threads."""
    from concurrent.futures import ThreadPoolExecutor

    from puzzlespace import bits
    from puzzlespace.explore.engine import chunk_spans, expand_chunks, kernel_of

    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 3 << bits.BLOCK_BITS))
    table = rng.integers(0, 256, len(bits.new_table(size)), dtype=np.uint8)
    for i in range(size, len(table) * 4):
        bits.set2(table, i, 3)
    want = [i for i in range(size) if bits.get2(table, i) == 1]
    kernel, chunks = kernel_of(_EchoSpace(size, copies)), chunk_spans(size, 32, parts)

    def run(pool, buffers):
        taken, done = [], []
        expand_chunks(pool, kernel, table, chunks, 1, np.ones_like(bits.new_blocks(size)), buffers,
                      lambda marks: taken.append(marks.copy()), lambda: done.append(1))
        got = np.concatenate(taken) if taken else np.empty(0, dtype=np.int64)
        return got, len(done)

    def buffers(n):
        return [(np.empty(32 * copies + 1, dtype=np.int64), np.empty(batch, dtype=np.int64)) for _ in range(n)]

    here, here_done = run(None, buffers(1))
    with ThreadPoolExecutor(2) as pool:
        pooled, pooled_done = run(pool, buffers(4))
    assert here.tolist() == sorted(here.tolist()) == sorted(pooled.tolist()) == sorted(want * copies)
    assert here_done == pooled_done == len(chunks)


def _failing(table, base, ranks, count, out, written, data):
    """A kernel that raises on its second batch (a division by zero)."""
    for t in range(count):
        out[written] = ranks[t] // (data[0] - ranks[0] // 1000)
        written += 1
    return written


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # numba's printed exception
def test_a_kernel_that_fails_stops_the_walk():
    """A kernel runs as a C callback, where numba only prints an exception: the walk sees
    it in what the kernel returns and raises, rather than lose the marks."""
    from puzzlespace import bits
    from puzzlespace.explore.engine import expand_span, neighbours_kernel

    class Failing(_EchoSpace):
        def __init__(self):
            super().__init__(4000, 1)
            self.kernel_data = (1,)  # zero once the batch starts at rank 1000
            self.kernel = neighbours_kernel(_failing, self.kernel_data)

    table = bits.new_table(4000)
    table[:] = 0x55  # every state holds 1
    out, ranks = np.empty(10_000, dtype=np.int64), np.empty(1003, dtype=np.int64)
    with pytest.raises(RuntimeError, match="kernel failed"):
        expand_span(Failing(), table, 0, 4000, 1, np.ones(2, dtype=np.uint8), out, ranks)


@pytest.mark.parametrize("name", ["3x3", "flip:4x4", "jump:6:1,3"])
def test_a_complete_exploration_must_reach_what_the_family_counts(name):
    from puzzlespace.explore.engine import check_all_reached

    p = ps.load_puzzle(name)
    counts = explore(p, antipode_limit=0).depth_counts
    assert sum(counts) == p.reachable_count()
    check_all_reached(p, counts)
    with pytest.raises(RuntimeError, match="a defect in puzzlespace"):
        check_all_reached(p, counts[:-1])
    with pytest.raises(PuzzleError, match="the checkpoint it resumed does not hold what its manifest says"):
        check_all_reached(p, counts[:-1], resumed=True)
