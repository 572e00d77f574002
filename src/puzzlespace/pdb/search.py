"""IDA* with additive pattern databases, compiled with numba.

The bound of a position is

    h = max(D, max over views v of  sum over groups g of  PDB_g[placement of g in view v])

where D is the per-token distance sum (Manhattan distance on grids) and the PDBs are
disjoint (no tile in two groups), so their sum is admissible (Korf & Felner 2002). A
*view* is the position itself or its image under a symmetry of the puzzle that fixes the
goal (for square boards the reflection about the main diagonal): the same tables looked
up on the reflected position give a second admissible sum, and the larger one is used.

Incremental: a move changes one tile's node, so in each view only that tile's group is
ranked again (:func:`~puzzlespace.pdb.space.rank_cells`, O(group size)) and looked up.
The depth-first pass is compiled and GIL-free like the one of :mod:`puzzlespace.families.token_search`
and shares its driver (:func:`~puzzlespace.search.ida.ida_star`), but iterates over an
explicit stack instead of recursing: one call per pass, rather than one per node with all
these arrays as arguments. No Python object per node; memory: the tables
(one byte per entry) plus O(bound) per pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import perm
from typing import Sequence

import numba as nb
import numpy as np

from ..graphs import pack_graph
from ..search.counting import counted
from ..search.ida import FOUND, MIN_F, NODES, NOT_FOUND, STOPPED
from .space import rank_cells


@dataclass
class PatternSearchProblem:
    """The arrays that define a token puzzle and its pattern databases for IDA*.

    Attributes
    ----------
    graph : int64 array
        Packed CSR graph (see :func:`~puzzlespace.graphs.pack_graph`).
    dist : int16 array (n, n)
        ``dist[t, v]``: moves token ``t`` needs from node ``v`` to its goal (0 for the blank).
    group_len, pdb_off : int64 arrays (G,)
        Tiles per group; offset of each group's table in ``pdb``.
    pdb : uint8 array
        The groups' tables, concatenated; entry ``pdb_off[g] + placement rank``.
    tile_group, tile_slot : int64 arrays (n,)
        Group of each tile and its place in the group's order (-1: in no group).
    view_tile, view_cell : int64 arrays (V, n)
        Per view, the image of each tile and of each node (view 0 is the identity).
    width : int
        Slots per group in the position array (the largest group).
    bipartite : bool
        Whether the bound grows in steps of 2.
    """

    graph: np.ndarray
    dist: np.ndarray
    group_len: np.ndarray
    pdb_off: np.ndarray
    pdb: np.ndarray
    tile_group: np.ndarray
    tile_slot: np.ndarray
    view_tile: np.ndarray
    view_cell: np.ndarray
    width: int
    bipartite: bool

    @classmethod
    def build(
        cls,
        neighbors: Sequence[Sequence[int]],
        dist: np.ndarray,
        groups: Sequence[Sequence[int]],
        pdb: np.ndarray,
        views: Sequence[tuple[Sequence[int], Sequence[int]]],
        bipartite: bool,
    ) -> "PatternSearchProblem":
        """``groups[g]`` lists the tiles whose placement ranks index table ``g``; ``pdb``
        holds the tables one after the other (``n!/(n-k)!`` entries for a group of ``k``);
        ``views`` are (node map, tile map) pairs besides the identity."""
        n = len(neighbors)
        tile_group = np.full(n, -1, dtype=np.int64)
        tile_slot = np.full(n, -1, dtype=np.int64)
        for g, tiles in enumerate(groups):
            for i, t in enumerate(tiles):
                tile_group[t], tile_slot[t] = g, i
        identity = list(range(n))
        view_cell = np.array([identity] + [list(c) for c, _ in views], dtype=np.int64)
        view_tile = np.array([identity] + [list(t) for _, t in views], dtype=np.int64)
        sizes = [perm(n, len(t)) for t in groups]
        if sum(sizes) != len(pdb):
            raise ValueError(f"the tables hold {len(pdb):,} entries, the groups need {sum(sizes):,}")
        pdb_off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return cls(pack_graph(neighbors), dist.astype(np.int16), np.array([len(t) for t in groups], dtype=np.int64),
                   pdb_off, pdb, tile_group, tile_slot, view_tile, view_cell,
                   max(len(t) for t in groups), bipartite)

    @property
    def n(self) -> int:
        return len(self.dist)

    def positions(self, state: Sequence[int]) -> np.ndarray:
        """Per view and group, the nodes of the group's tiles (flat, ``width`` slots per group)."""
        n_groups = len(self.group_len)
        pos = np.zeros(len(self.view_tile) * n_groups * self.width, dtype=np.int64)
        for v in range(len(self.view_tile)):
            for node, t in enumerate(state):
                u = self.view_tile[v, t]
                if t and self.tile_group[u] >= 0:
                    pos[(v * n_groups + self.tile_group[u]) * self.width + self.tile_slot[u]] = self.view_cell[v, node]
        return pos

    def values(self, pos: np.ndarray) -> np.ndarray:
        """PDB value of each (view, group), flat."""
        n_groups = len(self.group_len)
        vals = np.zeros(len(self.view_tile) * n_groups, dtype=np.int64)
        for vg in range(len(vals)):
            g = vg % n_groups
            r = rank_cells(pos, vg * self.width, self.group_len[g], self.n)
            vals[vg] = self.pdb[self.pdb_off[g] + r]
        return vals

    def pattern_sums(self, state: Sequence[int]) -> list[int]:
        """The PDB sum of ``state`` in each view."""
        vals = self.values(self.positions(state)).reshape(len(self.view_tile), -1)
        return [int(s) for s in vals.sum(axis=1)]

    def distance_sum(self, state: Sequence[int]) -> int:
        return sum(int(self.dist[t, v]) for v, t in enumerate(state))

    def heuristic(self, state: Sequence[int]) -> int:
        """The bound h of ``state`` (see the module docstring)."""
        md = self.distance_sum(state)
        h = max([md] + self.pattern_sums(state))
        return h + (h - md) % 2 if self.bipartite else h

    def pass_function(self, start: Sequence[int], bound: int, ctl: np.ndarray, path: np.ndarray,
                      weight: tuple[int, int] = (1, 1)):
        """One depth-first pass from ``start`` below ``bound``, as a function of no arguments
        (``f = weight[0] * g + weight[1] * h``)."""
        tiles = np.asarray(start, dtype=np.int64).copy()
        blank = int(np.flatnonzero(tiles == 0)[0])
        pos = self.positions(start)
        vals = self.values(pos)
        sums = vals.reshape(len(self.view_tile), -1).sum(axis=1).astype(np.int64)
        undo = np.zeros((bound // weight[0] + 2, len(self.view_tile)), dtype=np.int64)
        md = self.distance_sum(start)
        return lambda: _dfs(tiles, np.int64(blank), np.int64(md), np.int64(bound), np.int64(weight[0]),
                            np.int64(weight[1]), np.int64(self.bipartite),
                            self.graph, self.dist, pos,
                            vals, sums, undo, self.pdb, self.pdb_off, self.group_len,
                            self.tile_group, self.tile_slot, self.view_tile, self.view_cell,
                            np.int64(self.width), ctl, path)


@nb.njit(cache=True, nogil=True, inline="always")
def _place(t, node, pos, vals, sums, undo, g, pdb, pdb_off, group_len, tile_group, tile_slot, view_tile,
           view_cell, width, n):
    """Put tile ``t`` on ``node`` in every view; update the changed groups' values and sums.

    Records each view's old value in ``undo[g]``. Returns the largest sum over the views.
    """
    n_groups = group_len.shape[0]
    best = 0
    for v in range(view_tile.shape[0]):
        u = view_tile[v, t]
        grp = tile_group[u]
        if grp >= 0:
            vg = v * n_groups + grp
            pos[vg * width + tile_slot[u]] = view_cell[v, node]
            new = np.int64(pdb[pdb_off[grp] + rank_cells(pos, vg * width, group_len[grp], n)])
            undo[g, v] = vals[vg]
            sums[v] += new - vals[vg]
            vals[vg] = new
        if sums[v] > best:
            best = sums[v]
    return best


@nb.njit(cache=True, nogil=True)
def _dfs(tiles, blank, md, bound, wg, wh, parity, graph, dist, pos, vals, sums, undo, pdb, pdb_off, group_len,
         tile_group, tile_slot, view_tile, view_cell, width, ctl, path):
    """One depth-first pass below ``bound`` of ``f = wg * depth + wh * h``; returns FOUND,
    NOT_FOUND or STOPPED.

    Iterative (an explicit stack of the blank's node, the edge to try next and the
    distance sum per depth), so a pass is one call whatever its depth. ``pos``,
    ``vals`` and ``sums`` hold the position's group placements, PDB values and per-view
    sums (see :class:`PatternSearchProblem`); ``undo[d]`` keeps the values the move at
    depth ``d`` replaced. ``parity`` is 1 on bipartite graphs: there every move changes
    the distance sum by one, so the true distance has its parity and ``h`` is raised to
    it. On FOUND, ``path`` holds the nodes the blank moves to. The stop flag is read
    every 4,096 nodes.
    """
    n = tiles.shape[0]
    depth_cap = undo.shape[0]
    at = np.empty(depth_cap + 1, dtype=np.int64)  # the blank's node at each depth
    edge = np.empty(depth_cap + 1, dtype=np.int64)  # next edge to try at each depth
    mds = np.empty(depth_cap + 1, dtype=np.int64)
    at[0], edge[0], mds[0] = blank, graph[blank], md
    d = 0
    generated = 0
    while d >= 0:
        b = at[d]
        i = edge[d]
        if i == graph[b + 1]:  # every move tried: step back
            if d > 0:
                pb = at[d - 1]
                t = tiles[pb]
                tiles[b] = t
                tiles[pb] = 0
                _unplace(t, b, pos, vals, sums, undo, d - 1, group_len, tile_group, tile_slot, view_tile,
                         view_cell, width)
            d -= 1
            continue
        edge[d] = i + 1
        nxt = graph[i]
        if d > 0 and nxt == at[d - 1]:
            continue
        t = tiles[nxt]
        generated, stop = counted(generated, ctl)
        if stop:
            return STOPPED
        md2 = mds[d] + dist[t, b] - dist[t, nxt]
        h = _place(t, b, pos, vals, sums, undo, d, pdb, pdb_off, group_len, tile_group, tile_slot,
                   view_tile, view_cell, width, n)
        if md2 > h:
            h = md2
        h += (h - md2) & parity
        f = (d + 1) * wg + h * wh
        if f > bound:
            if f < ctl[MIN_F]:
                ctl[MIN_F] = f
            _unplace(t, nxt, pos, vals, sums, undo, d, group_len, tile_group, tile_slot, view_tile, view_cell,
                     width)
        elif md2 == 0:
            for j in range(d):
                path[j] = at[j + 1]
            path[d] = nxt
            ctl[NODES] += generated
            return FOUND
        else:
            tiles[b] = t
            tiles[nxt] = 0
            d += 1
            at[d], edge[d], mds[d] = nxt, graph[nxt], md2
    ctl[NODES] += generated
    return NOT_FOUND


@nb.njit(cache=True, nogil=True, inline="always")
def _unplace(t, node, pos, vals, sums, undo, g, group_len, tile_group, tile_slot, view_tile, view_cell, width):
    """Undo :func:`_place`: tile ``t`` back on ``node`` with the values saved in ``undo[g]``."""
    n_groups = group_len.shape[0]
    for v in range(view_tile.shape[0]):
        u = view_tile[v, t]
        grp = tile_group[u]
        if grp >= 0:
            vg = v * n_groups + grp
            pos[vg * width + tile_slot[u]] = view_cell[v, node]
            sums[v] += undo[g, v] - vals[vg]
            vals[vg] = undo[g, v]
