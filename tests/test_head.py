"""A run's head (its first layers, explored as arrays of ranks) against a plain BFS over
whole positions, and runs by segments seeded with it against the in-memory engine."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import puzzlespace as ps
from puzzlespace.explore.engine import chunk_spans
from puzzlespace.explore.head import HEAD_SHARE, HEAD_STATES, first_layers, head_budget
from puzzlespace.explore.segments import explore_segmented

from reference import layers_and_crossing
from test_segments import EXAMPLES, assert_same, reference

#: Families with and without rank steps, parity and symmetry classes, and a graph.
PUZZLES = ["3x3", "4x2", "jump:7", "jump:7:1,3", "flip:3x4", "flip:4x4", f"graph:{EXAMPLES / 'petersen.toml'}"]
_BFS: dict = {}
#: The largest budget tried (the plain BFS goes a layer past it).
BUDGETS = 400


def plain_bfs(name: str, segments: int):
    if (name, segments) not in _BFS:
        p = ps.load_puzzle(name)
        index = p.state_index()
        starts = [lo for lo, _ in chunk_spans(index.size, index.group * 64, segments)][1:]
        _BFS[name, segments] = (p, np.array(starts, dtype=np.int64), *layers_and_crossing(p, starts, BUDGETS))
    return _BFS[name, segments]


@settings(deadline=None)
@given(st.sampled_from(PUZZLES), st.sampled_from([1, 2, 3, 7]), st.integers(0, BUDGETS))
def test_the_head_is_the_first_layers_up_to_its_budget(name, segments, budget):
    p, starts, layers, crossing = plain_bfs(name, segments)
    index = p.state_index()
    head = first_layers(index, index.rank(p.goal), budget, starts)
    depth = head.depth
    assert [set(layer.tolist()) for layer in head.layers[:-1]] == layers[:depth]
    assert all(np.all(np.diff(layer) > 0) for layer in head.layers)
    last = set(head.layers[-1].tolist())
    assert last == (layers[depth] if depth < len(layers) else set())
    assert head.crossing == crossing[:depth] and len(head.seconds) == depth
    reached = sum(len(layer) for layer in head.layers)
    assert reached <= max(budget, 1)  # layer 0 always
    assert not last or depth + 1 < len(layers) and reached + len(layers[depth + 1]) > budget  # no layer more fits


def test_the_head_budget_is_a_share_of_the_ranks_up_to_a_bound():
    assert head_budget(181440) == 181440 // HEAD_SHARE
    assert head_budget(10 ** 12) == HEAD_STATES
    assert head_budget(100) == 0


# jump:9 and 5x2, boards of more layers on the same code, slow
@pytest.mark.parametrize("name", ["3x3", "flip:5x5", *(pytest.param(name, marks=pytest.mark.slow)
                                                      for name in ("jump:9", "5x2"))])
@pytest.mark.parametrize("head", [0, 50, 5000, 10 ** 9])
@pytest.mark.parametrize("in_files", [False, True], ids=["in memory", "in files"])
def test_a_run_seeded_by_a_head_of_any_size_is_the_engines(tmp_path, name, head, in_files):
    """From the goal alone to the whole space (the run's passes then find the last layer
    empty): the same counts, antipodes and tablebase."""
    assert_same(explore_segmented(ps.load_puzzle(name), segments=3, threads=2, keep_table=True, antipode_limit=20,
                                  head=head, out_dir=tmp_path if in_files else None), reference(name))


class _Stop(Exception):
    pass


def test_a_run_stopped_in_its_first_pass_resumes_from_the_seeded_checkpoint(tmp_path):
    p = ps.load_puzzle("3x3")
    passes = []

    def stop(depth, done, total, states):
        passes.append((depth, done))
        if depth == 8 and done == 2:
            raise _Stop

    with pytest.raises(_Stop):  # layers 0-8 hold 268 states: the first pass is pass 8
        explore_segmented(p, segments=3, threads=2, out_dir=tmp_path, keep_table=True, head=300, progress=stop)
    assert passes == [(d, 3) for d in range(8)] + [(8, 1), (8, 2)]  # the head's layers reported whole
    assert json.loads((tmp_path / "manifest.json").read_text())["depth"] == 7
    resumed = explore_segmented(p, segments=3, threads=2, out_dir=tmp_path, keep_table=True, resume=True,
                                antipode_limit=20)
    assert_same(resumed, reference("3x3"))
