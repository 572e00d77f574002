"""The first layers of a search while they hold few states, explored in one process as
sorted arrays of ranks, with no table: a run by segments starts from them
(:func:`~puzzlespace.explore.segments.seed_tables`) rather than make a pass over every
segment for each layer of a handful of states (on a cluster, each pass costs a hand-over
between workers whatever its size).

Memory: 8 bytes a state reached (at most :func:`head_budget` states: 1 MiB), and while a
layer is expanded 8 bytes a new state and, per batch of :data:`~puzzlespace.explore.engine.RANK_BATCH`
states, 8 bytes a neighbour listed (repeats included), twice while they are sorted.
:func:`next_layer` is the step of any such search (the compiled bidirectional BFS's too,
:mod:`puzzlespace.search.rank_bfs`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numba as nb
import numpy as np

from ..contracts import FrontierSpace
from .engine import RANK_BATCH, expand_ranks, kernel_of

#: The most states the head explores, whatever the puzzle.
HEAD_STATES = 1 << 17
#: Nor more than this share of the ranks (a puzzle's passes are few and small anyway).
HEAD_SHARE = 1 << 10


def head_budget(size: int) -> int:
    """The most states a head explores for a space of ``size`` ranks: :data:`HEAD_STATES`,
    and at most a :data:`HEAD_SHARE`-th of them."""
    return min(HEAD_STATES, size // HEAD_SHARE)


@dataclass
class Head:
    """Layers ``0..D`` of a search from one root: ``layers[d]`` the ranks of layer ``d``,
    increasing; the last complete (empty where the search ends before it), the ones
    before it expanded. ``crossing[d]`` (``d < D``): of the neighbours the kernel listed
    for layer ``d``, how many lie outside the segment of the state they came from (the
    marks a pass over layer ``d`` would have sent to other segments), and ``seconds[d]``
    the time its expansion took."""

    layers: list[np.ndarray]
    crossing: list[int]
    seconds: list[float]

    @property
    def depth(self) -> int:
        """``D``: the first layer a pass has to expand."""
        return len(self.layers) - 1

    @property
    def counts(self) -> list[int]:
        """The states of layers ``0..D-1`` (those complete before the first pass)."""
        return [len(layer) for layer in self.layers[:-1]]

    def within(self, lo: int, hi: int) -> list[np.ndarray]:
        """Each layer's ranks in ``[lo, hi)`` (a segment's part of the head)."""
        return [layer[np.searchsorted(layer, lo):np.searchsorted(layer, hi)] for layer in self.layers]


def first_layers(space: FrontierSpace, root: int, budget: int, starts: np.ndarray) -> Head:
    """The layers from rank ``root`` while they hold at most ``budget`` states in all
    (layer 0, the root alone, always), each made by :func:`next_layer`; the segments
    start at rank 0 and at ``starts`` (increasing)."""
    layers, crossing, seconds = [np.array([root], dtype=np.int64)], [], []
    before, reached = np.empty(0, dtype=np.int64), 1
    kernel = kernel_of(space)
    while len(layers[-1]):
        t0, frontier = time.perf_counter(), layers[-1]
        following, _, crossed = next_layer(space, kernel, frontier, before, starts)
        if reached + len(following) > budget:
            break
        layers.append(following)
        crossing.append(crossed)
        seconds.append(time.perf_counter() - t0)
        before, reached = frontier, reached + len(following)
    return Head(layers, crossing, seconds)


#: Segment starts past rank 0 of a search in one segment.
NO_STARTS = np.empty(0, dtype=np.int64)


def next_layer(space: FrontierSpace, kernel: tuple, frontier: np.ndarray, before: np.ndarray,
               starts: np.ndarray = NO_STARTS, after_batch: Callable[[int], None] | None = None,
               seen: np.ndarray | None = None) -> tuple[np.ndarray, int, int]:
    """Layer ``d + 1`` of a breadth-first search, increasing: the neighbours of ``frontier``
    (layer ``d``, increasing; ``kernel`` is :func:`~puzzlespace.explore.engine.kernel_of`
    ``space``) in neither it nor ``before`` (layer ``d - 1``). Moves are reversible, so
    every other neighbour lies in those two layers. With ``seen``, a bit per rank
    (uint8, rank ``r`` at bit ``r % 8`` of byte ``r // 8``) set for every state reached,
    new states are told by their clear bits instead, and their bits set.

    Also returns the neighbours listed (repeats included) and how many of them lie outside
    their state's segment (segments start at rank 0 and at ``starts``, increasing). The
    frontier goes to the kernel :data:`~puzzlespace.explore.engine.RANK_BATCH` states at a
    time, each batch within one segment; only each batch's new states are kept.
    ``after_batch(neighbours listed so far)`` follows each batch (to stop by raising).
    """
    out = np.empty(min(len(frontier), RANK_BATCH) * kernel[2] + 1, dtype=np.int64)
    parts, listed, crossed = [], 0, 0
    edges = np.concatenate(([0], starts, [np.iinfo(np.int64).max]))  # segment k: [edges[k], edges[k + 1])
    bounds = np.searchsorted(frontier, edges)
    for k in range(len(edges) - 1):
        for at in range(bounds[k], bounds[k + 1], RANK_BATCH):
            marks = neighbours(space, kernel, frontier[at:min(at + RANK_BATCH, bounds[k + 1])], out)
            listed += len(marks)
            crossed += int(np.count_nonzero((marks < edges[k]) | (marks >= edges[k + 1])))
            if seen is None:
                found = np.unique(marks)
                parts.append(found[~(among(found, frontier) | among(found, before))])
            else:
                parts.append(marks[:claim(marks, seen)].copy())
            if after_batch:
                after_batch(listed)
    if not parts:
        return np.empty(0, dtype=np.int64), listed, crossed
    if seen is not None:  # each state claimed once
        return np.sort(np.concatenate(parts)), listed, crossed
    return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)), listed, crossed


@nb.njit(cache=True, nogil=True)
def claim(marks, seen):
    """Set the bits of ``marks`` in ``seen`` (see :func:`next_layer`), moving each whose bit
    was clear to the front of ``marks``, once; return how many there are."""
    count = 0
    for i in range(marks.shape[0]):
        r = marks[i]
        bit = np.uint8(1 << (r & 7))
        if seen[r >> 3] & bit == 0:
            seen[r >> 3] |= bit
            marks[count] = r
            count += 1
    return count


def among(ranks: np.ndarray, sorted_ranks: np.ndarray) -> np.ndarray:
    """Whether each of ``ranks`` is in ``sorted_ranks`` (increasing)."""
    if not len(sorted_ranks):
        return np.zeros(len(ranks), dtype=bool)
    return sorted_ranks[np.minimum(np.searchsorted(sorted_ranks, ranks), len(sorted_ranks) - 1)] == ranks


def neighbours(space: FrontierSpace, kernel: tuple, ranks: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Every neighbour of the states ``ranks`` (increasing), with repeats: those the kernel
    lists into ``out`` (room for ``len(ranks) * max_degree + 1``), then the rank steps'
    (which never cross a segment's start: segments start at multiples of the steps' chunks)."""
    marks = out[:expand_ranks(kernel, ranks, out)]
    if space.rank_steps is None:
        return marks
    return np.concatenate([marks, *_stepped(space.rank_steps, ranks)])


def _stepped(steps: tuple[np.ndarray, np.ndarray], ranks: np.ndarray) -> list[np.ndarray]:
    """The neighbours of ``ranks`` by the index's rank steps (see
    :attr:`~puzzlespace.contracts.FrontierSpace.rank_steps`): ``rank + 1`` where the mask of
    its word's first rank (modulo the masks' period) has its entry's bit set, ``rank - 1``
    likewise by the second mask."""
    up, down = steps
    first = ((ranks >> 5) << 5) % len(up)
    bit = ((ranks & 31) << 1).astype(np.uint64)
    return [ranks[((up[first] >> bit) & np.uint64(1)) != 0] + 1,
            ranks[((down[first] >> bit) & np.uint64(1)) != 0] - 1]
