"""Breadth-first search over a state index's ranks, with its compiled kernel: the shortest
path between two positions of any puzzle that has a
:class:`~puzzlespace.contracts.StateIndex`, from one end or from both.

A side of the search keeps its layers as increasing arrays of ranks; the next layer is
the frontier's neighbours (listed by the index's kernel and rank steps,
:func:`~puzzlespace.explore.head.next_layer`) less the states reached. Where a bit per
rank for each side fits in an eighth of the memory available, the side marks the states
it reached in such a table; elsewhere (a rank space of billions) it needs none: moves are
reversible, so the neighbours of layer ``d`` lie in layers ``d - 1``, ``d`` and
``d + 1``, and the new ones are those in neither of the first two. The smaller frontier is
expanded a whole layer at a time. When a new layer first holds a state of the other
side, that state is in the other side's frontier (had it been in an earlier layer, its
neighbour in this side's frontier would have been reached by the other side first), so
every such state lies on a shortest path. The path's ranks are found walking back layer
by layer from it, and turned into moves by the puzzle's rules, in Python, on the path
alone.

Memory: 8 bytes per state reached (its rank, kept for the walk back), a bit per rank per
side where the tables fit, and while a layer is expanded 8 bytes per neighbour of a batch
of :data:`~puzzlespace.explore.engine.RANK_BATCH` states, twice while they are sorted.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from ..contracts import PuzzleRules as Puzzle, State, StateIndex
from ..errors import PuzzleError
from ..explore.engine import kernel_of
from ..explore.head import among, claim, neighbours, next_layer
from ..resources import available_memory
from .bfs import BFSClock, PathResult

#: Bytes of available memory per state reached the search may use: its rank's 8, and room
#: for the layer being made and the neighbours being sorted.
MEMORY_PER_STATE = 32
#: The share of the memory available the two sides' bit tables may take.
BIT_TABLES_SHARE = 1 / 8


@dataclass
class _Side:
    """One end of the search: its layers from its root (rank), the last one the frontier,
    and the states it reached as bits (``seen``; see
    :func:`~puzzlespace.explore.head.next_layer`), or None."""

    layers: list[np.ndarray]
    seen: np.ndarray | None

    @classmethod
    def rooted(cls, rank: int, size: int) -> _Side:
        """The side of root ``rank`` in a space of ``size`` ranks, with a bit table where
        two fit in :data:`BIT_TABLES_SHARE` of the memory available."""
        seen = None
        if 2 * (size // 8 + 1) <= available_memory() * BIT_TABLES_SHARE:
            seen = np.zeros(size // 8 + 1, dtype=np.uint8)
            seen[rank >> 3] = 1 << (rank & 7)
        return cls([np.array([rank], dtype=np.int64)], seen)

    @property
    def frontier(self) -> np.ndarray:
        return self.layers[-1]

    @property
    def before(self) -> np.ndarray:
        return self.layers[-2] if len(self.layers) > 1 else self.layers[-1][:0]


def rank_bfs(
    puzzle: Puzzle, start: State, goal: State, *, bidirectional: bool = True, max_states: int | None = None,
    time_limit: float | None = None, cancel: threading.Event | None = None,
) -> PathResult | None:
    """Shortest path from ``start`` to ``goal`` over ``puzzle.state_index()``; None when
    ``goal`` is unreachable, PuzzleError when either is none of the index's positions.

    From both ends (``bidirectional``) or from ``start`` alone. ``nodes`` counts the
    neighbours listed. SearchStopped once more than ``max_states`` states are reached
    (default: what fits in the memory available, :data:`MEMORY_PER_STATE` bytes each),
    past ``time_limit`` or once ``cancel`` is set (checked after every batch of states).
    """
    if start == goal:
        return PathResult([], 0)
    index = puzzle.state_index()
    kernel = kernel_of(index)
    what = "bidirectional BFS" if bidirectional else "BFS"
    clock = BFSClock(time_limit, cancel)
    limit = available_memory() // MEMORY_PER_STATE if max_states is None else max_states
    ends = (_Side.rooted(_rank_of(index, start), index.size), _Side.rooted(_rank_of(index, goal), index.size))
    reached, nodes = 2, 0
    while len(ends[0].frontier) and len(ends[1].frontier):
        forward = not bidirectional or len(ends[0].frontier) <= len(ends[1].frontier)
        side, other = ends if forward else ends[::-1]
        depth = len(ends[0].layers) + len(ends[1].layers) - 1  # the shortest path is at least this long
        nodes += _grow(index, kernel, side, clock, what, nodes, depth)
        meets = side.frontier[among(side.frontier, other.frontier)]
        if len(meets):
            ranks = _walk_back(index, kernel, side.layers, int(meets[0]))
            ranks += _walk_back(index, kernel, other.layers, int(meets[0]))[-2::-1]
            return PathResult(_moves(puzzle, index, ranks if forward else ranks[::-1]), nodes)
        reached += len(side.frontier)
        if reached > limit:
            raise clock.too_big(nodes, what, limit, "use --method ida", depth + 1)
    return None


def _grow(index: StateIndex, kernel: tuple, side: _Side, clock: BFSClock, what: str, nodes: int, depth: int) -> int:
    """Add its next layer to ``side``; return the neighbours listed. The clock is asked
    after every batch, with the nodes listed before (``nodes``) and ``depth``, the length
    the path is known to reach at least, for its SearchStopped."""
    following, listed, _ = next_layer(index, kernel, side.frontier, side.before, seen=side.seen,
                                      after_batch=lambda more: clock.check(nodes + more, what, depth))
    side.layers.append(following)
    return listed


def state_index_of(puzzle: Puzzle) -> StateIndex | None:
    """``puzzle``'s state index, or None where its family has none for it."""
    try:
        return puzzle.state_index()
    except PuzzleError:
        return None


def load(index: StateIndex) -> None:
    """Load the compiled code :func:`rank_bfs` runs over ``index`` (compile it, or read it
    from numba's cache) by listing the neighbours of rank 0 and claiming it in a table of
    one byte."""
    kernel = kernel_of(index)
    neighbours(index, kernel, np.zeros(1, dtype=np.int64), np.empty(kernel[2] + 1, dtype=np.int64))
    claim(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.uint8))


def _rank_of(index: StateIndex, state: State) -> int:
    """The rank of ``state``; PuzzleError where the index has no such position."""
    rank = index.rank(state)
    if not 0 <= rank < index.size or index.unrank(rank) != tuple(state):
        raise PuzzleError("the position is none of the state index's (not reachable from its goal)")
    return rank


def _walk_back(index: StateIndex, kernel: tuple, layers: list[np.ndarray], rank: int) -> list[int]:
    """Ranks of a shortest path from the root of ``layers`` to ``rank`` (in the last one)."""
    out = np.empty(kernel[2] + 1, dtype=np.int64)
    path = [rank]
    for layer in reversed(layers[:-1]):
        near = neighbours(index, kernel, np.array(path[-1:], dtype=np.int64), out)
        path.append(int(near[among(near, layer)][0]))
    return path[::-1]


def _moves(puzzle: Puzzle, index: StateIndex, ranks: list[int]) -> list[int]:
    """The moves between consecutive positions of ``ranks``, by the puzzle's rules."""
    states = [index.unrank(r) for r in ranks]
    return [next(m for m, t in puzzle.successors(a) if t == b) for a, b in pairwise(states)]
