"""Random positions: uniform over the solvable ones, or uniform at an exact depth."""

from __future__ import annotations

import numpy as np

from ..errors import PuzzleError
from ..families.base import Puzzle, State
from .table import collect_layer, layer_value, nth_in_layer

#: Above this many expected draws per accepted position, sample from an enumerated layer.
MAX_EXPECTED_DRAWS = 20_000


def random_solvable(puzzle: Puzzle, rng: np.random.Generator) -> State:
    """A uniformly random position that can reach the goal (the family's own draw)."""
    return puzzle.random_position(rng)


def random_at_depth(puzzle: Puzzle, depth: int, count: int, rng: np.random.Generator, tablebase=None,
                    threads: int | None = None) -> list[State]:
    """``count`` independent uniform draws among the positions exactly ``depth`` moves from the goal.

    With a tablebase and a depth that is not rare, draws uniformly and keeps those whose
    descent has the right length; otherwise enumerates the layer (BFS up to ``depth``)
    and draws from it.
    """
    if depth < 0:
        raise PuzzleError("--depth must be at least 0")
    if tablebase is not None:
        counts = tablebase.depth_counts
        if depth >= len(counts):
            raise PuzzleError(f"no position is {depth} moves from the goal (God's number is {len(counts) - 1})")
        if tablebase.index.size / counts[depth] <= MAX_EXPECTED_DRAWS:
            out = []
            while len(out) < count:
                s = random_solvable(puzzle, rng)
                if tablebase.entry(s) == depth % 3 and tablebase.distance(s) == depth:
                    out.append(s)
            return out
    from .engine import explore

    layer = explore(puzzle, threads=threads, antipode_limit=0, stop_at_depth=depth)
    if layer.max_depth < depth:
        raise PuzzleError(f"no position is {depth} moves from the goal (God's number is {layer.max_depth})")
    total = layer.depth_counts[depth]
    picks = np.sort(rng.integers(total, size=count))
    index = puzzle.state_index()
    table, value = layer.search_table, layer_value(depth)
    found = np.empty(total if total <= 10_000_000 else 0, dtype=np.int64)
    if len(found):
        collect_layer(table, 0, index.size, value, found)
        chosen = found[picks]
    else:
        chosen = [nth_in_layer(table, index.size, value, int(k)) for k in picks]
    states = [index.unrank(int(i)) for i in chosen]
    order = rng.permutation(len(states))
    return [states[i] for i in order]

