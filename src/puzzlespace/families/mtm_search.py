"""IDA*'s problem for sliding boards in the multi-tile metric, compiled with numba.

A move (the blank going ``k`` cells along its row or column) moves ``k`` tiles one cell
each, all along one axis. So per axis ``a`` (vertical, horizontal), with ``MD_a`` the
tiles' Manhattan distance along it and ``L_a`` the longest move along it (the board's
height or width less one), at least ``ceil(MD_a / L_a)`` moves go along ``a``; and where
walking-distance tables exist (:mod:`puzzlespace.families.walking`, the rows for
vertical moves, the columns for horizontal ones), at least the abstract distance
``WD_a`` counted in runs (:func:`~puzzlespace.families.walking.run_distances`). Moves
along different axes are different moves, so

    h = max(WD_v, ceil(MD_v / L_v)) + max(WD_h, ceil(MD_h / L_h))

never exceeds the moves left. The single-tile Manhattan distance does not bound them (one
move may shorten it by ``L``), nor do linear conflicts (one move may undo one), nor do
additive pattern databases (one move may move tiles of several groups).

``pdb:...`` (:mod:`puzzlespace.pdb.split`) adds split pattern databases: each group's
table charges a move (the group's tiles among the ``k`` it slides) / ``k``, so the
groups' distances add up, and ``ceil(sum)`` joins the maximum. On a square board whose
goal puts the blank on the main diagonal, the tables are read for the position's
reflection in that diagonal too (:class:`Mirror`: it is exactly as far from the goal),
and the larger of the two bounds is taken.

``patterns`` adds, on boards of at most :data:`PATTERN_MAX_CELLS` cells, projections: for
a group of tiles, the multi-tile distance of the group's and the blank's cells to their
goal cells, every move counted (each real move is a move of the projection, so this
never exceeds the moves left); h is the largest of those and the bound above.

The depth-first pass follows each part incrementally: a move changes ``MD_a`` by the
moved tiles' steps and takes the axis' abstract state through one walking step per tile;
only the split groups with a tile moved are ranked again.
Two moves along one axis in a row are never needed (together they are one move, or
none), so a move along the axis of the move before is not tried.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numba as nb
import numpy as np

from ..bits import popcount
from ..pdb.space import rank_cells
from ..search.ida import FOUND, MIN_F, NODES, NOT_FOUND, STOP, STOPPED
from .sliding import grid_graph
from .grid_lines import line_moves, line_step
from .walking import WalkingTable, build_walking_table, run_distances


#: Largest board offered projections (``patterns``): a group's table has ``n ** (tiles + 1)``
#: one-byte entries, 36 MB for 6 tiles on 12 cells.
PATTERN_MAX_CELLS = 12
#: Most tiles in one projection's group.
PATTERN_MAX_TILES = 6


def pattern_groups(order: Sequence[int], goal: Sequence[int]) -> list[list[int]]:
    """The tiles cut into near-equal groups of at most :data:`PATTERN_MAX_TILES`, by goal
    cell in ``order`` (neighbouring goals together)."""
    tiles = [goal[v] for v in order if goal[v]]
    parts = -(-len(tiles) // PATTERN_MAX_TILES)
    cut = [len(tiles) * i // parts for i in range(parts + 1)]
    return [tiles[a:b] for a, b in zip(cut, cut[1:])]


@nb.njit(cache=True, nogil=True)
def _projection_bfs(n, ptr, moves, start, k, dist):
    """Breadth-first distances (``dist``, -1 filled, ``n ** (k + 1)`` entries) from the
    code ``start`` of a group of ``k`` tiles: code = blank + n * (cell of tile 0 + n * ...)."""
    power = np.ones(k + 1, dtype=np.int64)
    for j in range(1, k + 1):
        power[j] = power[j - 1] * n
    reached = 1
    for j in range(k + 1):
        reached *= n - j
    queue = np.empty(reached, dtype=np.int64)
    owner = np.full(n, -1, dtype=np.int64)
    cells = np.empty(k, dtype=np.int64)
    dist[start] = 0
    queue[0] = start
    head, tail = 0, 1
    while head < tail:
        code = queue[head]
        head += 1
        b = code % n
        r = code // n
        for j in range(k):
            cells[j] = r % n
            r //= n
            owner[cells[j]] = j
        for e in range(ptr[b], ptr[b + 1]):
            u, step = moves[e, 0], moves[e, 3]
            new = code - b + u
            c = b
            while c != u:
                c += step
                if owner[c] >= 0:
                    new -= step * power[owner[c] + 1]
            if dist[new] < 0:
                dist[new] = dist[code] + 1
                queue[tail] = new
                tail += 1
        for j in range(k):
            owner[cells[j]] = -1


@dataclass
class Projections:
    """The projections' tables for the compiled pass: ``table[off[g] + code]`` is group
    ``g``'s distance; tile ``t`` is in group ``group[t]`` (-1: none), its cell weighing
    ``weight[t]`` in the code; the blank weighs 1 in every code."""

    table: np.ndarray
    off: np.ndarray
    group: np.ndarray
    weight: np.ndarray
    n: int

    @classmethod
    def build(cls, n: int, ptr: np.ndarray, moves: np.ndarray, goal: Sequence[int],
              groups: Sequence[Sequence[int]]) -> "Projections":
        group = np.full(n, -1, dtype=np.int64)
        weight = np.zeros(n, dtype=np.int64)
        parts = []
        for g, tiles in enumerate(groups):
            for j, t in enumerate(tiles):
                group[t], weight[t] = g, n ** (j + 1)
            dist = np.full(n ** (len(tiles) + 1), -1, dtype=np.int8)
            start = goal.index(0) + sum(goal.index(t) * n ** (j + 1) for j, t in enumerate(tiles))
            _projection_bfs(n, ptr, moves, start, len(tiles), dist)
            parts.append(dist)
        off = np.zeros(max(len(parts), 1), dtype=np.int64)
        off[1:len(parts)] = np.cumsum([len(p) for p in parts])[:-1]
        table = np.concatenate(parts) if parts else np.zeros(1, dtype=np.int8)
        return cls(table, off, group, weight, n)

    def codes(self, cells: Sequence[int]) -> np.ndarray:
        """Each group's code of the position ``cells``."""
        codes = np.full(len(self.off), cells.index(0), dtype=np.int64)
        for v, t in enumerate(cells):
            if t and self.group[t] >= 0:
                codes[self.group[t]] += v * self.weight[t]
        return codes if self.group.max() >= 0 else codes[:0]

    def bound(self, cells: Sequence[int]) -> int:
        return max((int(self.table[o + c]) for o, c in zip(self.off, self.codes(cells))), default=0)


@dataclass
class Splits:
    """Pattern databases of line moves (:mod:`puzzlespace.pdb.split`) for the compiled
    pass, per group ``g`` of ``size[g]`` tiles: ``table[split[g] + placement rank]``, its
    split distance in units of ``1 / unit``, and ``table[project[g] + rank * (n - size[g])
    + the blank's place among the free cells]``, its projection's in moves (-1: no such
    table). Tile ``t`` is the ``slot[t]``-th of group ``group[t]`` (-1: none), whose cells
    the pass keeps at ``g * width + slot``. The bound: ``ceil(sum of the split
    distances)`` and the largest projection's."""

    table: np.ndarray
    split: np.ndarray
    project: np.ndarray
    size: np.ndarray
    group: np.ndarray
    slot: np.ndarray
    unit: int
    width: int

    @classmethod
    def build(cls, n: int, spaces: Sequence = (), table: np.ndarray | None = None) -> "Splits":
        """``spaces``: :class:`~puzzlespace.pdb.split.SplitPatternSpace` (split or
        projection, of disjoint groups); ``table``: their databases one after the other.
        No spaces, no bound."""
        sizes = [space.placements for space in spaces]
        if not spaces:
            table = np.zeros(1, dtype=np.uint8)
        elif table is None or len(table) != sum(sizes):
            raise ValueError(f"the tables hold {0 if table is None else len(table):,} entries, "
                             f"the groups need {sum(sizes):,}")
        groups = list(dict.fromkeys(space.tiles for space in spaces))
        split = np.full(len(groups), -1, dtype=np.int64)
        project = np.full(len(groups), -1, dtype=np.int64)
        for space, off in zip(spaces, np.cumsum([0, *sizes[:-1]])):
            (project if space.every else split)[groups.index(space.tiles)] = off
        group = np.full(n, -1, dtype=np.int64)
        slot = np.full(n, -1, dtype=np.int64)
        for g, tiles in enumerate(groups):
            for j, t in enumerate(tiles):
                group[t], slot[t] = g, j
        return cls(table, split, project, np.array([len(t) for t in groups], dtype=np.int64), group, slot,
                   max((space.unit for space in spaces), default=1), max(map(len, groups), default=1))

    def cells(self, state: Sequence[int]) -> np.ndarray:
        """The groups' tiles' cells in ``state``, ``width`` slots a group."""
        pos = np.zeros(len(self.size) * self.width, dtype=np.int64)
        for v, t in enumerate(state):
            if t and self.group[t] >= 0:
                pos[self.group[t] * self.width + self.slot[t]] = v
        return pos

    def ranks(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each group's placement rank and mask of cells."""
        n, k = len(self.group), self.size
        ranks = np.array([rank_cells(pos, g * self.width, k[g], n) for g in range(len(k))], dtype=np.int64)
        occ = np.array([sum(1 << int(c) for c in pos[g * self.width: g * self.width + k[g]]) for g in range(len(k))],
                       dtype=np.uint64)
        return ranks, occ

    def bound(self, state: Sequence[int]) -> int:
        """The bound of ``state`` from the tables, in moves."""
        ranks, occ = self.ranks(self.cells(state))
        return int(_tables_bound(ranks, occ, np.int64(list(state).index(0)), self.table, self.split, self.project,
                                 self.size, np.int64(self.unit), np.int64(len(self.group))))


@nb.njit(cache=True, nogil=True, inline="always")
def _tables_bound(ranks, occ, blank, table, split, project, size, unit, n):
    """:meth:`Splits.bound` from the groups' ranks and cell masks, the blank on ``blank``."""
    total = 0
    best = 0
    below = (np.uint64(1) << np.uint64(blank)) - np.uint64(1)
    for g in range(size.shape[0]):
        if split[g] >= 0:
            total += np.int64(table[split[g] + ranks[g]])
        if project[g] >= 0:
            best = max(best, np.int64(table[project[g] + ranks[g] * (n - size[g]) + popcount(~occ[g] & below)]))
    return max(best, (total + unit - 1) // unit)


@dataclass
class Mirror:
    """The reflection of a square board in its main diagonal: cell ``v`` goes to
    ``cell[v]``, and tile ``t`` is renamed ``tile[t]``, the tile whose goal cell is the
    reflection of ``t``'s. It maps the goal to itself and a move along a row to one along
    a column, so a position and its reflection (:meth:`reflect`) are equally far from the
    goal, and a bound of the one bounds the other."""

    cell: np.ndarray
    tile: np.ndarray

    @classmethod
    def of(cls, width: int, height: int, goal: Sequence[int]) -> "Mirror | None":
        """The board's mirror, or None: not square, or the goal's blank off the diagonal."""
        if width != height:
            return None
        cell = np.array([(v % width) * width + v // width for v in range(width * height)], dtype=np.int64)
        blank = list(goal).index(0)
        if cell[blank] != blank:
            return None
        tile = np.zeros(len(goal), dtype=np.int64)
        for v, t in enumerate(goal):
            tile[t] = goal[cell[v]]
        return cls(cell, tile)

    def reflect(self, state: Sequence[int]) -> tuple[int, ...]:
        """The position reflected: the tile on ``v``, renamed, on ``cell[v]``."""
        out = [0] * len(state)
        for v, t in enumerate(state):
            out[self.cell[v]] = int(self.tile[t])
        return tuple(out)


@dataclass
class AxisWalk:
    """One axis' walking distance in runs, for the compiled pass.

    ``trans`` and ``dist``: the abstract space's single steps and run distances
    (a space of one state, distance 0, where the axis has none); ``column[c, way]``: the
    first transition column of a step of the blank from block ``c`` (by -1, +1);
    ``token_class[t]``: token ``t``'s goal block; ``table``: the space, or None.
    """

    trans: np.ndarray
    dist: np.ndarray
    column: np.ndarray
    token_class: np.ndarray
    table: WalkingTable | None

    @classmethod
    def of(cls, table: WalkingTable | None, n: int, blocks: int) -> "AxisWalk":
        if table is None:
            return cls(np.zeros((1, 1), np.int32), np.zeros(1, np.int8), np.zeros((blocks, 2), np.int64),
                       np.zeros(n, np.int64), None)
        column = np.zeros((blocks, 2), dtype=np.int64)
        for b, near in enumerate(table.neighbour_blocks):
            for way, to in enumerate((b - 1, b + 1)):
                column[b, way] = near.index(to) * table.classes if to in near else 0
        return cls(np.maximum(table.trans, 0), run_distances(table), column,
                   np.array(table.goal_block, dtype=np.int64), table)

    def state(self, cells: Sequence[int]) -> int:
        return 0 if self.table is None else self.table.index[self.table.abstract(cells)]


@dataclass
class MtmSearchProblem:
    """The arrays that define a sliding board in the multi-tile metric for IDA*.

    ``moves``: per blank cell ``b`` (CSR ``ptr``), rows ``(cell, axis, k, step)``: the blank
    goes ``k`` cells of ``step`` to ``cell``, along axis 0 (a column) or 1 (a row).
    ``dist[a, t, v]``: token ``t``'s distance along axis ``a`` from ``v`` to its goal;
    ``longest[a]``: the longest move along ``a``; ``walks``: each axis' :class:`AxisWalk`.
    Never bipartite: a move of two tiles and one of one can close a cycle of three.
    """

    width: int
    ptr: np.ndarray
    moves: np.ndarray
    dist: np.ndarray
    longest: np.ndarray
    walks: list
    projections: Projections
    splits: Splits
    mirror: Mirror | None = None
    bipartite: bool = False

    @classmethod
    def build(cls, width: int, height: int, goal: Sequence[int], partitions: Sequence[Sequence[int]] = (),
              groups: Sequence[Sequence[int]] = (), splits: Splits | None = None,
              reflect: bool = True) -> "MtmSearchProblem":
        """Tables for the ``width`` x ``height`` board and ``goal``; ``partitions``: its rows
        and columns (:meth:`~puzzlespace.families.sliding.SlidingPuzzle.walking_partitions`),
        or none for the Manhattan bounds alone; ``groups``: the projections' tiles;
        ``splits``: split pattern databases (:class:`Splits`), if any, read for the
        reflected position too where the board has a :class:`Mirror` (unless not
        ``reflect``)."""
        n = width * height
        lines = line_moves(width, height)
        rows = []
        for b in range(n):
            for u in lines[b]:
                step, k = line_step(width, b, u)
                rows.append((u, 0 if abs(step) == width else 1, k, step))
        ptr = np.zeros(n + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(a) for a in lines])
        where = {t: v for v, t in enumerate(goal)}
        dist = np.zeros((2, n, n), dtype=np.int64)
        for t in range(1, n):
            for v in range(n):
                dist[0, t, v] = abs(v // width - where[t] // width)
                dist[1, t, v] = abs(v % width - where[t] % width)
        neighbors = grid_graph(width, height).neighbors
        tables = [build_walking_table(p, neighbors, goal) for p in partitions] or [None, None]
        walks = [AxisWalk.of(tables[0], n, height), AxisWalk.of(tables[1], n, width)]
        moves = np.array(rows, dtype=np.int64)
        projections = Projections.build(n, ptr, moves, list(goal), groups)
        splits = splits or Splits.build(n)
        mirror = Mirror.of(width, height, goal) if reflect and len(splits.size) else None
        return cls(width, ptr, moves, dist, np.array([height - 1, width - 1]), walks, projections, splits, mirror)

    def parts(self, state: Sequence[int]) -> tuple[int, int, int, int]:
        """(MD_v, MD_h, abstract state of the rows, of the columns) of ``state``."""
        md = [sum(int(self.dist[a, t, v]) for v, t in enumerate(state)) for a in (0, 1)]
        return md[0], md[1], self.walks[0].state(state), self.walks[1].state(state)

    def heuristic(self, state: Sequence[int]) -> int:
        """The bound h of ``state`` (see the module docstring)."""
        mdv, mdh, sv, sh = self.parts(state)
        axes = (max(int(self.walks[0].dist[sv]), -(-mdv // int(self.longest[0])))
                + max(int(self.walks[1].dist[sh]), -(-mdh // int(self.longest[1]))))
        tables = self.splits.bound(state)
        if self.mirror is not None:
            tables = max(tables, self.splits.bound(self.mirror.reflect(state)))
        return max(axes, self.projections.bound(list(state)), tables)

    def pass_function(self, start: Sequence[int], bound: int, ctl: np.ndarray, path: np.ndarray,
                      weight: tuple[int, int] = (1, 1)):
        """One depth-first pass from ``start`` below ``bound``, as a function of no arguments
        (``f = weight[0] * g + weight[1] * h``)."""
        tiles = np.asarray(start, dtype=np.int64).copy()
        blank = int(np.flatnonzero(tiles == 0)[0])
        mdv, mdh, sv, sh = self.parts(start)
        v, h, pj, sp = self.walks[0], self.walks[1], self.projections, self.splits
        codes = pj.codes(list(start))
        pos = sp.cells(start)
        ranks, occ = sp.ranks(pos)
        saved = np.zeros((bound // weight[0] + 2, len(sp.size)), dtype=np.int64)
        same = np.arange(len(start), dtype=np.int64)
        m = self.mirror or Mirror(same[:0], same[:0])  # no cells: no reflection
        mpos = sp.cells(m.reflect(start)) if self.mirror else pos.copy()
        mranks, mocc = sp.ranks(mpos)
        split = (pos, ranks, occ, saved, sp.table, sp.split, sp.project, sp.size, sp.group, sp.slot,
                 np.int64(sp.width), np.int64(sp.unit), same, mpos, mranks, mocc, saved.copy(), m.tile, m.cell)
        return lambda: _dfs(tiles, np.int64(blank), np.int64(-1), np.int64(0), np.int64(mdv), np.int64(mdh),
                            np.int64(sv), np.int64(sh), np.int64(bound),
                            np.int64(weight[0]), np.int64(weight[1]), self.ptr, self.moves, self.dist, self.longest,
                            v.trans, v.dist, v.column, v.token_class, h.trans, h.dist, h.column, h.token_class, codes,
                            pj.table, pj.off, pj.group, pj.weight, split, ctl, path)


@nb.njit(cache=True, nogil=True, inline="always")
def _axis_bound(md, longest, wd):
    """max(WD, ceil(MD / longest move)) of one axis."""
    return max(wd, (md + longest - 1) // longest)


@nb.njit(cache=True, nogil=True, inline="always")
def _shift_codes(tiles, blank, u, k, step, codes, pgroup, pweight, sign):
    """Add (``sign`` 1) or take back (-1) the change of the projections' codes as the blank
    goes from ``blank`` to ``u`` (``tiles`` as before the move)."""
    for j in range(1, k + 1):
        t = tiles[blank + j * step]
        if pgroup[t] >= 0:
            codes[pgroup[t]] -= sign * step * pweight[t]
    for p in range(codes.shape[0]):
        codes[p] += sign * (u - blank)


@nb.njit(cache=True, nogil=True, inline="always")
def _shift_splits(tiles, blank, k, step, pos, occ, group, slot, width, sign, tile, cell):
    """Move the tables' group tiles that the move of ``k`` cells of ``step`` from ``blank``
    slides in ``pos`` and ``occ`` (``sign`` 1) or back (-1), ``tiles`` as before the move,
    each tile ``t`` on cell ``c`` taken as ``tile[t]`` on ``cell[c]`` (the identity, or a
    :class:`Mirror`'s); returns the mask of the groups it changed."""
    mask = 0
    for j in range(1, k + 1):
        c = blank + j * step
        t = tile[tiles[c]]
        g = group[t]
        if g >= 0:
            after, before = cell[c - step], cell[c]
            pos[g * width + slot[t]] = after if sign > 0 else before
            occ[g] ^= (np.uint64(1) << np.uint64(after)) | (np.uint64(1) << np.uint64(before))
            mask |= 1 << g
    return mask


@nb.njit(cache=True, nogil=True, inline="always")
def _rerank(mask, pos, ranks, saved, size, width, n):
    """Rank again the groups of ``mask`` (their old ranks kept in ``saved``)."""
    for g in range(size.shape[0]):
        if (mask >> g) & 1:
            saved[g] = ranks[g]
            ranks[g] = rank_cells(pos, g * width, size[g], n)


@nb.njit(cache=True, nogil=True, inline="always")
def _unrank(mask, ranks, saved):
    for g in range(ranks.shape[0]):
        if (mask >> g) & 1:
            ranks[g] = saved[g]


@nb.njit(cache=True, nogil=True, inline="always")
def _unshift_splits(tiles, blank, k, step, split, mask, mirrored, g):
    """Take back a move's change of the tables' groups (``mask``) and of their reflection's
    (``mirrored``), at depth ``g`` (``split``: as :func:`_dfs` has it)."""
    (pos, ranks, occ, saved, _, _, _, _, group, slot, width, _, same, mpos, mranks, mocc, msaved, mtile,
     mcell) = split
    if mask:
        _shift_splits(tiles, blank, k, step, pos, occ, group, slot, width, -1, same, same)
        _unrank(mask, ranks, saved[g])
    if mirrored:
        _shift_splits(tiles, blank, k, step, mpos, mocc, group, slot, width, -1, mtile, mcell)
        _unrank(mirrored, mranks, msaved[g])


@nb.njit(cache=True, nogil=True)
def _dfs(tiles, blank, prev_axis, g, mdv, mdh, sv, sh, bound, wg, wh, ptr, moves, dist, longest,
         vtrans, vdist, vcol, vclass, htrans, hdist, hcol, hclass, codes, ptable, poff, pgroup, pweight, split, ctl,
         path):
    """One depth-first pass below ``bound`` of ``f = wg * g + wh * h``; returns FOUND,
    NOT_FOUND or STOPPED. ``mdv``/``mdh`` are the Manhattan distances along the axes,
    ``sv``/``sh`` the abstract states of the rows and columns, ``codes`` the projections'
    (:class:`Projections`; changed for a child and restored), ``split`` the line-move
    pattern databases' (their groups' cells, ranks and cell masks, changed for a child and
    restored, the ranks a move replaced per depth, then :class:`Splits`' arrays). A child
    is cut on the axes' bound before the tables are read.
    The tables are read for the reflected position too (its groups' cells, ranks, masks
    and replaced ranks, then the :class:`Mirror`'s tile names and cells; none: no
    reflection), where the position's own reading left the child within the bound.
    On FOUND, ``path[g:]`` holds the cells the blank moves to; the board is restored on
    every other return. The stop flag is read after each child that was searched."""
    (pos, ranks, occ, saved, stable, ssplit, sproject, ssize, sgroup, sslot, swidth, unit, same,
     mpos, mranks, mocc, msaved, mtile, mcell) = split
    n = np.int64(tiles.shape[0])
    width = np.int64(tiles.shape[0] // (longest[0] + 1))
    generated = 0
    for e in range(ptr[blank], ptr[blank + 1]):
        axis = moves[e, 1]
        if axis == prev_axis:
            continue
        u, k, step = moves[e, 0], moves[e, 2], moves[e, 3]
        generated += 1
        md2v, md2h, s2v, s2h = mdv, mdh, sv, sh
        way = 1 if step > 0 else 0
        block = blank // width if axis == 0 else blank % width
        for j in range(1, k + 1):
            c = blank + j * step
            t = tiles[c]
            if axis == 0:
                md2v += dist[0, t, c - step] - dist[0, t, c]
                s2v = vtrans[s2v, vcol[block, way] + vclass[t]]
            else:
                md2h += dist[1, t, c - step] - dist[1, t, c]
                s2h = htrans[s2h, hcol[block, way] + hclass[t]]
            block += 1 if step > 0 else -1
        h = _axis_bound(md2v, longest[0], np.int64(vdist[s2v])) + _axis_bound(md2h, longest[1], np.int64(hdist[s2h]))
        f = (g + 1) * wg + h * wh
        mask = 0
        mirrored = 0
        if f <= bound and ssize.shape[0]:
            mask = _shift_splits(tiles, blank, k, step, pos, occ, sgroup, sslot, swidth, 1, same, same)
            _rerank(mask, pos, ranks, saved[g], ssize, swidth, n)
            h = max(h, _tables_bound(ranks, occ, u, stable, ssplit, sproject, ssize, unit, n))
            f = (g + 1) * wg + h * wh
            if f <= bound and mcell.shape[0]:
                mirrored = _shift_splits(tiles, blank, k, step, mpos, mocc, sgroup, sslot, swidth, 1, mtile, mcell)
                _rerank(mirrored, mpos, mranks, msaved[g], ssize, swidth, n)
                h = max(h, _tables_bound(mranks, mocc, mcell[u], stable, ssplit, sproject, ssize, unit, n))
                f = (g + 1) * wg + h * wh
        if f <= bound and codes.shape[0]:
            _shift_codes(tiles, blank, u, k, step, codes, pgroup, pweight, 1)
            for p in range(codes.shape[0]):
                h = max(h, np.int64(ptable[poff[p] + codes[p]]))
            f = (g + 1) * wg + h * wh
            if f > bound:
                _shift_codes(tiles, blank, u, k, step, codes, pgroup, pweight, -1)
        if f > bound:
            _unshift_splits(tiles, blank, k, step, split, mask, mirrored, g)
            if f < ctl[MIN_F]:
                ctl[MIN_F] = f
            continue
        if md2v + md2h == 0:
            path[g] = u
            ctl[NODES] += generated
            return FOUND
        for j in range(1, k + 1):
            tiles[blank + (j - 1) * step] = tiles[blank + j * step]
        tiles[u] = 0
        status = _dfs(tiles, u, axis, g + 1, md2v, md2h, s2v, s2h, bound, wg, wh, ptr, moves, dist, longest,
                      vtrans, vdist, vcol, vclass, htrans, hdist, hcol, hclass, codes, ptable, poff, pgroup,
                      pweight, split, ctl, path)
        for j in range(k, 0, -1):
            tiles[blank + j * step] = tiles[blank + (j - 1) * step]
        tiles[blank] = 0
        _shift_codes(tiles, blank, u, k, step, codes, pgroup, pweight, -1)
        _unshift_splits(tiles, blank, k, step, split, mask, mirrored, g)
        if status == FOUND:
            path[g] = u
            ctl[NODES] += generated
            return FOUND
        if ctl[STOP] != 0:
            ctl[NODES] += generated
            return STOPPED
    ctl[NODES] += generated
    return NOT_FOUND


def line_pattern_problem(puzzle, spaces: Sequence, tables: np.ndarray, reflect: bool = True) -> MtmSearchProblem:
    """The IDA* problem of ``puzzle`` (a sliding board in the multi-tile metric): its
    walking bound and the line-move pattern databases ``tables`` of ``spaces``
    (:class:`Splits`), read for the reflected position too where the board has a
    :class:`Mirror` (unless not ``reflect``)."""
    return MtmSearchProblem.build(puzzle.width, puzzle.height, puzzle.goal, puzzle.walking_partitions(),
                                  splits=Splits.build(puzzle.n_cells, spaces, tables), reflect=reflect)
