"""The abstract space of a pattern: where a group of tiles stands, and the blank's region.

A pattern database for a group of ``k`` tiles of a token puzzle on ``n`` nodes holds, for
every placement of those tiles, the fewest moves *of those tiles* that bring them to their
goal nodes when every other tile is indistinguishable and moves for free. This module
defines that abstract space and its compiled breadth-first expansion; the search itself
is the explore engine's (:func:`puzzlespace.explore.engine.layered_bfs`).

Placement rank
    The group's nodes ``c_0 .. c_{k-1}`` (in group order) give digits
    ``d_i = c_i - #{j < i : c_j < c_i}`` in radix ``n - i``; the rank is the mixed-radix
    number ``((d_0 (n-1) + d_1) (n-2) + d_2) ...``. It is minimal: exactly
    ``n! / (n-k)!`` ranks, one per placement.

Abstract state
    A placement and the *region* of the blank: the connected set of free nodes (nodes
    not holding a group tile) that contains it. Moves inside the region cost nothing, so
    the region, not the blank's node, is the state, and every move between states costs
    one (a group tile next to the region steps into it). Slot of a state:
    ``placement_rank * (n - k) + j`` where ``j`` numbers the region's lowest node among
    the free nodes in increasing order. Slots whose node is not the lowest of its region
    are never reached. Memory of a build: 2 bits per slot (explore's table), i.e.
    ``0.25 * (n - k)`` bytes per placement, plus the 1-byte result.

Masks are 64-bit, so graphs of at most 64 nodes.
"""

from __future__ import annotations

from math import perm
from typing import Sequence

import numba as nb
import numpy as np

from ..bits import lowest_bit, match_word, pattern, popcount, unreached
from ..explore.engine import layered_bfs, neighbours_kernel

MAX_NODES = 64
_ONE = np.uint64(1)


@nb.njit(cache=True, nogil=True)
def rank_cells(cells, start, k, n):
    """Placement rank of the ``k`` distinct nodes ``cells[start : start + k]`` of ``n``."""
    used = np.uint64(0)
    r = np.int64(0)
    for i in range(k):
        c = np.uint64(cells[start + i])
        bit = _ONE << c
        r = r * (n - i) + np.int64(c) - popcount(used & (bit - _ONE))
        used |= bit
    return r


@nb.njit(cache=True, nogil=True)
def unrank_cells(r, k, n, cells):
    """Write the placement of rank ``r`` into ``cells[:k]`` (inverse of :func:`rank_cells`)."""
    for i in range(k - 1, -1, -1):
        cells[i] = r % (n - i)
        r //= n - i
    used = np.uint64(0)
    for i in range(k):
        left = cells[i]
        c = 0
        while True:
            if (used >> np.uint64(c)) & _ONE == 0:
                if left == 0:
                    break
                left -= 1
            c += 1
        cells[i] = c
        used |= _ONE << np.uint64(c)


@nb.njit(cache=True, nogil=True, inline="always")
def _region(start, free, nbr):
    """Nodes of ``free`` connected to ``start`` through ``free`` (``start`` included)."""
    region = _ONE << np.uint64(start)
    todo = region
    while todo != 0:
        v = lowest_bit(todo)
        todo &= todo - _ONE
        new = nbr[v] & free & ~region
        region |= new
        todo |= new
    return region


@nb.njit(cache=True, nogil=True)
def slot_of(cells, k, n, blank, nbr):
    """Slot of the placement ``cells[:k]`` with the blank on node ``blank``."""
    occ = np.uint64(0)
    for i in range(k):
        occ |= _ONE << np.uint64(cells[i])
    free = ~occ & ((_ONE << np.uint64(n)) - _ONE) if n < 64 else ~occ
    low = np.uint64(lowest_bit(_region(blank, free, nbr)))
    return rank_cells(cells, np.int64(0), k, n) * (n - k) + popcount(free & ((_ONE << low) - _ONE))


def expand_pattern(table, base, ranks, count, out, written, data):
    """A pattern space's kernel (:attr:`FrontierSpace.kernel
    <puzzlespace.contracts.FrontierSpace.kernel>`): the unreached neighbours of the slots
    ``ranks[:count]``, written into ``out`` from ``written`` on; returns the index after
    the last. ``data``: the graph's node count ``n``, the group's size ``k`` and the
    neighbour masks.

    For each state: its region by flood fill, then every group tile next to the region
    steps into it (the blank takes the tile's node; the new region is filled from there).
    """
    n, k, nbr = data
    nf = n - k
    full = ((_ONE << np.uint64(n)) - _ONE) if n < 64 else ~np.uint64(0)
    cells = np.empty(k, dtype=np.int64)
    tile_at = np.full(n, -1, dtype=np.int64)
    for t in range(count):
        i = ranks[t]
        unrank_cells(i // nf, k, n, cells)
        occ = np.uint64(0)
        for g in range(k):
            occ |= _ONE << np.uint64(cells[g])
            tile_at[cells[g]] = g
        free = full & ~occ
        blank = free
        for _ in range(i % nf):
            blank &= blank - _ONE
        rest = _region(lowest_bit(blank), free, nbr)
        while rest != 0:
            v = lowest_bit(rest)
            rest &= rest - _ONE
            adj = nbr[v] & occ
            while adj != 0:
                x = lowest_bit(adj)
                adj &= adj - _ONE
                g = tile_at[x]
                cells[g] = v
                free2 = free ^ (_ONE << np.uint64(x)) ^ (_ONE << np.uint64(v))
                low = np.uint64(lowest_bit(_region(x, free2, nbr)))
                j = rank_cells(cells, np.int64(0), k, n) * nf + popcount(free2 & ((_ONE << low) - _ONE))
                cells[g] = x
                if unreached(table, base, j):
                    out[written] = j
                    written += 1
        for g in range(k):
            tile_at[cells[g]] = -1
    return written


@nb.njit(cache=True, nogil=True)
def record_layer(table, value, depth, nf, pdb):
    """Give every placement with a slot whose entry is ``value`` (a complete layer) the
    value ``depth`` if it has none (255); return how many it gave one.

    Called on layers in increasing depth, so each placement keeps its smallest depth.
    """
    words = table.view(np.uint64)
    pat = pattern(value)
    given = 0
    for w in range(words.shape[0]):
        m = match_word(words[w], pat)
        while m != 0:
            b = lowest_bit(m)
            m &= m - _ONE
            p = ((w << 5) + (b >> 1)) // nf
            if pdb[p] == 255:
                pdb[p] = depth
                given += 1
    return given


def neighbour_masks(neighbors: Sequence[Sequence[int]]) -> np.ndarray:
    """One uint64 mask of neighbours per node."""
    masks = np.zeros(len(neighbors), dtype=np.uint64)
    for v, adj in enumerate(neighbors):
        for u in adj:
            masks[v] |= _ONE << np.uint64(u)
    return masks


def check_group(n: int, tiles: Sequence[int]) -> None:
    """ValueError unless ``tiles`` is a group a pattern database of ``n`` nodes can hold:
    1 to n - 1 distinct tiles of 1..n - 1, with n at most :data:`MAX_NODES`."""
    if n > MAX_NODES:
        raise ValueError(f"pattern databases are limited to {MAX_NODES} nodes, got {n}")
    if not 1 <= len(tiles) < n or len(set(tiles)) != len(tiles) or not all(1 <= t < n for t in tiles):
        raise ValueError(f"a group needs 1 to {n - 1} distinct tiles of 1..{n - 1}, got {list(tiles)}")


class PatternSpace:
    """The abstract space of one tile group, a :class:`~puzzlespace.contracts.FrontierSpace`
    for the explore engine's layered BFS.

    Parameters
    ----------
    neighbors : adjacency lists of the puzzle's graph (``n <= 64`` nodes).
    goal : the goal position (``goal[node] = tile``, 0 the blank).
    tiles : the group's tiles, in the order that defines the placement rank.
    """

    def __init__(self, neighbors: Sequence[Sequence[int]], goal: Sequence[int], tiles: Sequence[int]):
        n, k = len(neighbors), len(tiles)
        check_group(n, tiles)
        self.n, self.k = n, k
        self.neighbors = [sorted(int(u) for u in a) for a in neighbors]
        self.nbr = neighbour_masks(neighbors)
        self.goal, self.tiles = tuple(goal), tuple(tiles)
        self.placements = perm(n, k)
        self.size = self.placements * (n - k)
        self.group = 1
        self.rank_steps = None
        self.max_degree = sum(len(a) for a in neighbors)
        self.scheme = "pattern-placement-region/v1"
        self.kind = ""

    def slot(self, state: Sequence[int]) -> int:
        """Slot of the abstract state of the full position ``state``."""
        where = {t: v for v, t in enumerate(state)}
        cells = np.array([where[t] for t in self.tiles], dtype=np.int64)
        return int(slot_of(cells, self.k, self.n, where[0], self.nbr))

    def unrank(self, r: int) -> tuple[int, ...]:
        """The group's nodes for placement rank ``r``."""
        cells = np.empty(self.k, dtype=np.int64)
        unrank_cells(np.int64(r), self.k, self.n, cells)
        return tuple(int(c) for c in cells)

    def roots(self) -> list[int]:
        return [self.slot(self.goal)]

    @property
    def kernel_data(self) -> tuple:
        return self.n, self.k, self.nbr

    @property
    def kernel(self):
        """:func:`expand_pattern`, compiled."""
        return neighbours_kernel(expand_pattern, self.kernel_data)

def pattern_distances(space: PatternSpace, *, threads: int | None = None, max_memory: int | None = None,
                      progress=None, resume=None, after_layer=None) -> np.ndarray:
    """The database of ``space``: uint8 per placement rank, the fewest group-tile moves.

    ``resume``: (:class:`~puzzlespace.explore.engine.LayerState`, database so far) of an
    interrupted build, to continue it. ``after_layer(state, database so far, entries
    given)`` is called after every complete layer (to checkpoint the build, follow it, or
    stop it by raising); the entries given a distance so far end at ``space.placements``
    when every placement is reachable. ``progress`` is the explore engine's. Raises
    ValueError if a distance exceeds 254 (never for boards up to 64 nodes in practice).
    """
    if resume is None:
        state, pdb = None, np.full(space.placements, 255, dtype=np.uint8)
    else:
        state, pdb = resume
    nf = space.n - space.k
    given = [int(np.count_nonzero(pdb != 255))]

    def on_layer(depth: int, table: np.ndarray, value: int) -> None:
        if depth > 254:
            raise ValueError("a pattern distance exceeds 254 moves")
        given[0] += int(record_layer(table, value, depth, nf, pdb))

    layered_bfs(space, space.roots(), threads=threads, max_memory=max_memory, on_layer=on_layer,
                progress=progress, extra_memory=pdb.nbytes, resume=state,
                after_layer=after_layer and (lambda st: after_layer(st, pdb, given[0])))
    return pdb
