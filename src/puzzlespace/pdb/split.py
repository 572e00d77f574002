"""Pattern databases for moves that slide a whole line of tiles (the multi-tile metric),
added soundly by splitting each move's cost among the groups.

A move sends the blank ``k`` cells along a line and slides the ``k`` tiles in its way;
charge each group of tiles (its tiles among those ``k``) / ``k`` of it. A group's
abstract space keeps its tiles' cells and the blank's (the other tiles are alike), so
a real move is an abstract move of every group with the same ``k`` and the same group
tiles moved, and its charge is known there; a move through other tiles only costs 0.

Admissibility: the charges of disjoint groups sum to at most 1 per move, so along any
real path the groups' abstract path costs sum to at most its length, and each group's
abstract distance is at most its abstract path cost; hence the sum of the groups'
distances (and its ceiling, the distance being whole) never exceeds the real distance.
Taking each group's smallest distance over the blank's cells keeps this (each is at most
the distance with the blank where it is).

Costs are whole numbers of ``1 / unit`` with ``unit = lcm(1 .. L)`` (``L`` the longest
move; 4x4: sixths), so a group's distances come from a bucket Dijkstra over
(placement, blank cell), a level per cost value, moves of cost 0 (the blank's own region)
closed within the placement; the database keeps, per placement rank
(:func:`~puzzlespace.pdb.space.rank_cells`), the smallest over the blank's cells, in units.
"""

from __future__ import annotations

from math import lcm, perm
from typing import Callable, Sequence

import numba as nb
import numpy as np

from ..bits import popcount
from .space import check_group, rank_cells, unrank_cells

_ONE = np.uint64(1)
#: Marks a state not reached yet; distances stay below it.
UNREACHED = 255


@nb.njit(cache=True, nogil=True, inline="always")
def _slot(cells, k, n, nf, blank, occ):
    """Index of the state (placement ``cells[:k]`` on ``occ``, blank on ``blank``):
    placement rank times ``nf`` plus the blank's place among the free cells."""
    return rank_cells(cells, np.int64(0), k, n) * nf + popcount(~occ & ((_ONE << np.uint64(blank)) - _ONE))


@nb.njit(cache=True, nogil=True)
def split_level(dist, d, n, k, rays, ray_len, unit, every):
    """Settle level ``d`` of the bucket Dijkstra over ``dist`` (uint8, ``nf`` blanks per
    placement): close each placement's states at ``d`` under moves of cost 0, then relax
    every move that slides group tiles from them. With ``every``, every move costs 1 (the
    projection: no move is free). Returns the largest distance written (``UNREACHED``
    when one would reach it)."""
    nf = n - k
    cells = np.empty(k, dtype=np.int64)
    tile_at = np.full(n, -1, dtype=np.int64)
    free = np.empty(nf, dtype=np.int64)
    stack = np.empty(nf, dtype=np.int64)
    top = 0
    for p in range(dist.shape[0] // nf):
        base = p * nf
        hit = False
        for j in range(nf):
            if dist[base + j] == d:
                hit = True
                break
        if not hit:
            continue
        unrank_cells(p, k, n, cells)
        occ = np.uint64(0)
        for g in range(k):
            occ |= _ONE << np.uint64(cells[g])
            tile_at[cells[g]] = g
        j = 0
        for v in range(n):
            if tile_at[v] < 0:
                free[j] = v
                j += 1
        sp = 0
        for j in range(nf):
            if dist[base + j] == d:
                stack[sp] = free[j]
                sp += 1
        while sp > 0 and not every:  # cost 0: the blank steps onto a free cell
            sp -= 1
            b = stack[sp]
            for r in range(4):
                if ray_len[b, r] == 0:
                    continue
                c = rays[b, r, 0]
                if tile_at[c] < 0:
                    jc = popcount(~occ & ((_ONE << np.uint64(c)) - _ONE))
                    if dist[base + jc] > d:
                        dist[base + jc] = d
                        stack[sp] = c
                        sp += 1
        for j in range(nf):
            if dist[base + j] != d:
                continue
            b = free[j]
            for r in range(4):
                moved = 0
                occ2 = occ
                prev = b
                for i in range(ray_len[b, r]):
                    c = rays[b, r, i]
                    g = tile_at[c]
                    if g >= 0:  # the tile slides to where the blank's path was a step before
                        moved += 1
                        cells[g] = prev
                        occ2 ^= (_ONE << np.uint64(c)) | (_ONE << np.uint64(prev))
                    prev = c
                    if moved == 0 and not every:
                        continue
                    nd = d + (1 if every else unit * moved // (i + 1))
                    if nd >= UNREACHED:
                        top = UNREACHED
                        continue
                    s = _slot(cells, k, n, nf, c, occ2)
                    if nd < dist[s]:
                        dist[s] = nd
                        if nd > top:
                            top = nd
                for i in range(ray_len[b, r]):  # slide the group's tiles back
                    g = tile_at[rays[b, r, i]]
                    if g >= 0:
                        cells[g] = rays[b, r, i]
        for g in range(k):
            tile_at[cells[g]] = -1
    return top


@nb.njit(cache=True, nogil=True)
def smallest_over_blank(dist, nf, out):
    """``out[p]``: the smallest of placement ``p``'s ``nf`` distances."""
    for p in range(out.shape[0]):
        best = dist[p * nf]
        for j in range(1, nf):
            if dist[p * nf + j] < best:
                best = dist[p * nf + j]
        out[p] = best


class SplitPatternSpace:
    """The abstract space of one tile group under line moves with split costs, or with
    ``every`` move costing 1 (the group's projection: its distances bound the moves left
    alone, and join the bound by the maximum).

    Parameters
    ----------
    rays : per cell, its lines out in the four directions, nearest cell first
        (:func:`~puzzlespace.families.grid_lines.line_rays`).
    goal : the goal position (``goal[cell] = tile``, 0 the blank).
    tiles : the group's tiles, in the order that defines the placement rank.
    every : whether every move costs 1; its table keeps the blank's cell (entry
        ``placement rank * (n - k) + the blank's place among the free cells``), where a
        split table keeps the smallest over the blank's cells (entry: the placement rank).

    ``placements`` is the number of the table's entries, ``size`` the states searched.
    """

    def __init__(self, rays: Sequence[Sequence[Sequence[int]]], goal: Sequence[int], tiles: Sequence[int],
                 every: bool = False):
        n, k = len(rays), len(tiles)
        check_group(n, tiles)
        self.n, self.k = n, k
        longest = max(len(r) for out in rays for r in out)
        self.rays = np.zeros((n, 4, max(longest, 1)), dtype=np.int64)
        self.ray_len = np.zeros((n, 4), dtype=np.int64)
        for v, out in enumerate(rays):
            for r, ray in enumerate(out):
                self.rays[v, r, : len(ray)] = ray
                self.ray_len[v, r] = len(ray)
        self.neighbors = [sorted(ray[0] for ray in out if ray) for out in rays]
        self.every = every
        self.kind = "projection" if every else "split"
        self.unit = 1 if every else lcm(*range(1, longest + 1))
        self.goal, self.tiles = tuple(goal), tuple(tiles)
        self.size = perm(n, k) * (n - k)
        self.placements = self.size if every else perm(n, k)
        self.scheme = "mtm-projection-placement-blank/v1" if every else f"mtm-split-placement/v1 unit 1/{self.unit}"

    def start(self) -> int:
        """The state index of the goal."""
        cells = np.array([self.goal.index(t) for t in self.tiles], dtype=np.int64)
        occ = np.uint64(sum(1 << int(c) for c in cells))
        return int(_slot(cells, self.k, self.n, self.n - self.k, self.goal.index(0), occ))

    def distances(self, progress: Callable[[int, int], None] | None = None,
                  stop: Callable[[], None] | None = None) -> np.ndarray:
        """The database: uint8 per placement rank, the group's split distance in units of
        ``1 / unit``. ``progress(levels done, levels known)`` and ``stop()`` (which may
        raise to end the build) are called after each level. ValueError if a distance
        reaches :data:`UNREACHED` units."""
        dist = np.full(self.size, UNREACHED, dtype=np.uint8)
        dist[self.start()] = 0
        top, d = 0, 0
        while d <= top:
            top = max(top, int(split_level(dist, np.uint8(d), self.n, self.k, self.rays, self.ray_len, self.unit,
                                           self.every)))
            if top >= UNREACHED:
                raise ValueError(f"a split pattern distance reaches {UNREACHED} units of 1/{self.unit}")
            d += 1
            if progress:
                progress(d, top + 1)
            if stop:
                stop()
        if self.every:
            return dist
        out = np.empty(self.placements, dtype=np.uint8)
        smallest_over_blank(dist, self.n - self.k, out)
        return out


def pattern_spaces(puzzle, tiles: Sequence[int]) -> list:
    """The abstract spaces of ``tiles`` of ``puzzle``: where its moves slide lines (it
    offers ``line_rays()``) the :class:`SplitPatternSpace` and the projection, else the
    :class:`~puzzlespace.pdb.space.PatternSpace` over its graph."""
    from .space import PatternSpace

    rays = getattr(puzzle, "line_rays", None)
    if rays is not None:
        return [SplitPatternSpace(rays(), puzzle.goal, tiles), SplitPatternSpace(rays(), puzzle.goal, tiles, True)]
    return [PatternSpace(puzzle.graph.neighbors, puzzle.goal, tiles)]
