"""The first layers of a search while they hold few states, explored in one process as
sorted arrays of ranks, with no table: a run by segments starts from them
(:func:`~puzzlespace.explore.segments.seed_tables`) rather than make a pass over every
segment for each layer of a handful of states (on a cluster, each pass costs a hand-over
between workers whatever its size).

Memory: 8 bytes a state reached (at most :func:`head_budget` states: 1 MiB), and while a
layer is expanded 8 bytes a neighbour listed, repeats included (at most the layer's
states times the kernel's ``max_degree``), twice while they are sorted.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

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
    (layer 0, the root alone, always); the segments start at rank 0 and at ``starts``
    (increasing). Moves are reversible, so the neighbours of layer ``d`` are in layers
    ``d - 1``, ``d`` and ``d + 1``."""
    layers, crossing, seconds = [np.array([root], dtype=np.int64)], [], []
    before, reached = np.empty(0, dtype=np.int64), 1
    kernel = kernel_of(space)
    while len(layers[-1]):
        t0, frontier = time.perf_counter(), layers[-1]
        marks, crossed = _neighbours(space, kernel, frontier, starts)
        marks.sort()
        found = marks[np.concatenate(([True], marks[1:] != marks[:-1]))] if len(marks) else marks
        following = found[~(_among(found, frontier) | _among(found, before))]
        if reached + len(following) > budget:
            break
        layers.append(following)
        crossing.append(crossed)
        seconds.append(time.perf_counter() - t0)
        before, reached = frontier, reached + len(following)
    return Head(layers, crossing, seconds)


def _among(ranks: np.ndarray, sorted_ranks: np.ndarray) -> np.ndarray:
    """Whether each of ``ranks`` is in ``sorted_ranks`` (increasing)."""
    if not len(sorted_ranks):
        return np.zeros(len(ranks), dtype=bool)
    return sorted_ranks[np.minimum(np.searchsorted(sorted_ranks, ranks), len(sorted_ranks) - 1)] == ranks


def _neighbours(space: FrontierSpace, kernel: tuple, ranks: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, int]:
    """Every neighbour of the states ``ranks`` (increasing), with repeats, and how many of
    those the kernel lists land outside their state's segment (the rank steps never do:
    segments start at multiples of the steps' chunks)."""
    out = np.empty(min(len(ranks), RANK_BATCH) * kernel[2] + 1, dtype=np.int64)
    parts, crossed = [], 0
    edges = np.concatenate(([0], starts, [np.iinfo(np.int64).max]))  # segment k: [edges[k], edges[k + 1])
    bounds = np.searchsorted(ranks, edges)
    for k in range(len(edges) - 1):  # a batch at a time, each within one segment
        for at in range(bounds[k], bounds[k + 1], RANK_BATCH):
            marks = out[:expand_ranks(kernel, ranks[at:min(at + RANK_BATCH, bounds[k + 1])], out)]
            crossed += int(np.count_nonzero((marks < edges[k]) | (marks >= edges[k + 1])))
            parts.append(marks.copy())
    if space.rank_steps is not None:
        parts += _stepped(space.rank_steps, ranks)
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64), crossed


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
