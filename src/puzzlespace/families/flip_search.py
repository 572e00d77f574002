"""IDA*'s problem for flip puzzles: the orbit bound, compiled with numba.

A position is a digit per orbit (:mod:`puzzlespace.families.flip_index`). The orbits lie
on a grid (:func:`orbit_grid`): a row move touches the orbits of one row of it (its
*line*: a row and its mirror row share one), a column move those of one column, and each
orbit alone, so moving and projecting onto a group of orbits commute: the projection is
a homomorphism of the puzzle's graph onto the group's *projected space*, where a move
that touches none of the group's orbits stands still.

The bound. Take a group g of orbits on lines ``a`` and ``b`` of the grid's rows (all of
theirs or a run across them; ``a == b`` on a grid of one row), and a solution of the
position. Its moves fall into disjoint sets: the row moves of lines ``a`` and
``b`` with every column move, and the row moves of each other line ``c``. The solution
projected onto g is a path to the goal's projection made by the first set alone, so that
set has at least ``D_g`` moves, the distance in g's projected space. On line ``c``, each
orbit ``o`` reaches its goal pattern through row moves of ``c`` and column moves alone,
so the solution has at least ``cost(o)`` row moves of ``c``: the fewest row moves that
take ``o``'s pattern to its goal's when column moves cost nothing (a 0-1 BFS over its at
most 16 patterns). Hence

    h_g = D_g + sum over lines c other than a, b of  max over orbits o on c of cost(o)

never exceeds the true distance, and likewise with rows and columns swapped. The *orbit
bound* is the largest ``h_g`` over the groups: admissible. It is consistent too: a
move changes ``D_g`` or one line's cost (a cost is the same across free moves), by at
most one. The tables ``D_g`` are built by the explore engine's layered BFS over each
group's projected space (:class:`~puzzlespace.families.flip_index.FlipIndex` of its
orbits), one byte per entry, one table for groups whose spaces are alike. Every orbit
lies in some group, so the bound is 0 at the goal alone.

On boards with odd sides every move turns an odd number of cells over, so the number of
white cells changes parity at every move: the graph is bipartite, the true distance has
the parity of the difference of white cells from the goal's, and the bound is raised to it.

Moves of two rows (or two columns) commute, and every move undoes itself, so a shortest
path has a form where the rows (columns) of each run of row (column) moves increase:
the pass tries only those. The depth-first pass is compiled, iterative and GIL-free (no
Python object per node); it undoes a move by making it again. Memory: the tables (one
byte per entry of each distinct projected space) plus O(bound) per pass.
"""

from __future__ import annotations

import itertools
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numba as nb
import numpy as np

from ..compiled import clock
from ..errors import SearchStopped
from ..explore.engine import layered_bfs
from ..pdb.space import record_layer
from ..search.counting import counted
from ..search.ida import FOUND, MIN_F, NODES, NOT_FOUND, STOPPED
from .flip_index import FlipIndex

#: The most entries one group's table may hold.
GROUP_ENTRIES = 1 << 21
#: Groups on every two lines of the grid up to this many lines of a kind; neighbouring lines alone past it.
EVERY_PAIR = 5
#: Table entries built per second (a lower bound of this program's pace).
ENTRIES_PER_SECOND = 2e6
#: The two kinds of lines of the orbit grid: its rows (turned by row moves) and its columns.
ROWS, COLUMNS = 0, 1


@dataclass(frozen=True)
class OrbitGroup:
    """Orbits whose projection has a table: on lines ``lines`` (two, or one twice) of the
    orbit grid's rows (``kind`` :data:`ROWS`) or columns (:data:`COLUMNS`)."""

    kind: int
    lines: tuple[int, int]
    orbits: tuple[int, ...]


def orbit_groups(puzzle, limit: int = GROUP_ENTRIES) -> list[OrbitGroup]:
    """The groups of the orbit bound, their tables at most ``limit`` entries each: the
    orbits of every two lines of the grid's rows (of neighbouring ones alone past
    :data:`EVERY_PAIR` lines), then likewise of its columns; where two lines' table would
    be too large, the longest runs across them that fit, one from each place on the
    lines (:func:`_windows`)."""
    grid = orbit_grid(puzzle)
    radix = [int(ix.radix[0]) for ix in orbit_indexes(puzzle)]
    groups = []
    for kind, lines in ((ROWS, grid), (COLUMNS, [list(column) for column in zip(*grid)])):
        n = len(lines)
        pairs = (itertools.combinations(range(n), 2) if n <= EVERY_PAIR else zip(range(n - 1), range(1, n)))
        for a, b in list(pairs) or [(0, 0)]:
            units = [list(dict.fromkeys((x, y))) for x, y in zip(lines[a], lines[b])]
            groups += [OrbitGroup(kind, (a, b), tuple(w)) for w in _windows(units, radix, limit)]
    return groups


def orbit_indexes(puzzle) -> list[FlipIndex]:
    """The index of each orbit alone (its digits and its moves' effect on them), in
    ``puzzle.orbits``' order; on any board, however large its whole index would be."""
    return [FlipIndex(puzzle, [o]) for o in range(len(puzzle.orbits))]


def orbit_grid(puzzle) -> list[list[int]]:
    """The orbits (numbers in ``puzzle.orbits``) on a grid: ``grid[r][c]`` is the one whose
    cell nearest the top left corner is at row ``r``, column ``c``. Row ``r`` of the grid
    is what rows ``r`` and ``H - 1 - r`` touch, column ``c`` what columns ``c`` and
    ``W - 1 - c`` touch."""
    grid: dict[int, dict[int, int]] = {}
    for o, cells in enumerate(puzzle.orbits):
        r, c = divmod(min(cells), puzzle.width)
        grid.setdefault(r, {})[c] = o
    return [[grid[r][c] for c in sorted(grid[r])] for r in sorted(grid)]


def _windows(units: list[list[int]], radix: list[int], limit: int) -> list[list[int]]:
    """The orbits of the longest runs of consecutive ``units`` (lists of orbits) with at
    most ``limit`` patterns in all (a unit alone may have more), one run from each unit
    on until a run reaches the last."""
    patterns = [int(np.prod([radix[o] for o in unit])) for unit in units]
    runs = []
    for first in range(len(units)):
        last, size = first + 1, patterns[first]
        while last < len(units) and size * patterns[last] <= limit:
            size *= patterns[last]
            last += 1
        runs.append([o for unit in units[first:last] for o in unit])
        if last == len(units):
            break
    return runs


class FlipSearchProblem:
    """The orbit bound's tables and the moves' effect on digits, for IDA*.

    Attributes
    ----------
    orbit_cells, orbit_len, pat2dig : int64 arrays (orbits, 4), (orbits,), (orbits, 16)
        Each orbit's cells, their number, and the digit of each pattern (bit ``k``: the
        ``k``-th cell white), as in its index.
    move_orbits : int64 array (moves, K)
        The orbits each move touches (-1 after the last).
    next_digit : int64 array (moves * K, 16)
        Row ``m * K + k``, column ``d``: the digit of the ``k``-th orbit move ``m`` touches
        after the move, where it was ``d`` before.
    move_line : int64 array (moves, 2)
        Each move's kind of line (:data:`ROWS`, :data:`COLUMNS`) and line of the grid.
    line_orbits : int64 array (2, lines, L)
        The orbits on each line of each kind (-1 after the last).
    orbit_cost : int64 array (2, orbits, 16)
        ``cost`` of each orbit's digit (see the module docstring), paying for row moves
        (first index :data:`ROWS`) or column moves.
    weights : int64 array (orbits, G)
        Each orbit's digit's weight in the rank of each group (0: not in it).
    orbit_group, orbit_mult : int64 arrays (orbits, G)
        The same by orbit: the groups it lies in (-1 after the last) and its weights there.
    group_lines : int64 array (groups, 3)
        Each group's kind and its two lines (one twice where it has one).
    table_off : int64 array (groups,)
        Where each group's table starts in ``tables``.
    tables : uint8 array
        The distinct tables (distance in a projected space by its rank), one after the other.
    rows : int
        Moves ``0..rows-1`` turn rows; the others columns.
    bipartite : bool
        Whether both sides are odd (then the bound keeps the parity of the true distance).
    """

    def __init__(self, puzzle, groups: Sequence[OrbitGroup], deadline: float | None = None):
        self.goal = puzzle.goal
        self.rows = puzzle.height
        self.bipartite = puzzle.width % 2 == 1 and puzzle.height % 2 == 1
        self._digits(orbit_indexes(puzzle))
        if sorted({o for g in groups for o in g.orbits}) != list(range(len(self.orbit_cells))):
            raise ValueError("the groups must cover every orbit")
        self._lines(puzzle)
        self.group_lines = np.array([(g.kind, *g.lines) for g in groups], dtype=np.int64)
        self._tables(puzzle, groups, deadline)

    def _digits(self, orbits: list[FlipIndex]) -> None:
        """``orbit_cells``, ``orbit_len``, ``pat2dig``, ``move_orbits`` and ``next_digit``, from
        each orbit's index (``orbits``)."""
        self.orbit_cells = np.concatenate([ix.orbit_cells for ix in orbits])
        self.orbit_len = np.concatenate([ix.orbit_len for ix in orbits])
        self.pat2dig = np.concatenate([ix.pat2dig for ix in orbits])
        n_moves = len(orbits[0].move_orbits)
        touching = [[o for o, ix in enumerate(orbits) if ix.move_orbits[m, 0] == 0] for m in range(n_moves)]
        per_move = max(map(len, touching))
        self.move_orbits = np.full((n_moves, per_move), -1, dtype=np.int64)
        self.next_digit = np.tile(np.arange(16, dtype=np.int64), (n_moves * per_move, 1))
        for m, touched in enumerate(touching):
            for k, o in enumerate(touched):
                self.move_orbits[m, k] = o
                self.next_digit[m * per_move + k] += orbits[o].digit_change[m]  # one orbit: the rank is its digit

    def _lines(self, puzzle) -> None:
        """``move_line``, ``line_orbits`` and ``orbit_cost``."""
        h, w = puzzle.height, puzzle.width
        self.move_line = np.array([(ROWS, min(m, h - 1 - m)) if m < h else (COLUMNS, min(m - h, w + h - 1 - m))
                                   for m in range(h + w)], dtype=np.int64)
        grid = orbit_grid(puzzle)
        lines = (grid, [list(column) for column in zip(*grid)])
        size = max(len(grid), len(grid[0]))
        self.line_orbits = np.full((2, size, size), -1, dtype=np.int64)
        for kind, of_kind in enumerate(lines):
            for line, orbits in enumerate(of_kind):
                self.line_orbits[kind, line, :len(orbits)] = orbits
        goal = self.digits(self.goal)
        self.orbit_cost = np.array([[self._cost(o, kind, int(goal[o])) for o in range(len(goal))]
                                    for kind in (ROWS, COLUMNS)], dtype=np.int64)

    def _cost(self, orbit: int, kind: int, goal: int) -> list[int]:
        """``cost`` of each digit of ``orbit`` (16 entries): the fewest moves of lines of
        ``kind`` from it to the goal's digit ``goal``, the other moves free (a 0-1 BFS from
        there; moves undo themselves)."""
        per_move = self.move_orbits.shape[1]
        steps = [(self.next_digit[m * per_move + k], int(self.move_line[m, 0] == kind))
                 for m, k in zip(*np.nonzero(self.move_orbits == orbit))]
        cost = [16] * 16
        cost[goal] = 0
        queue = deque([goal])
        while queue:
            d = queue.popleft()
            for after, paid in steps:
                e = int(after[d])
                if cost[d] + paid < cost[e]:
                    cost[e] = cost[d] + paid
                    if paid:
                        queue.append(e)
                    else:
                        queue.appendleft(e)
        return cost

    def _tables(self, puzzle, groups: Sequence[OrbitGroup], deadline: float | None) -> None:
        """``weights``, ``orbit_group``, ``orbit_mult``, ``table_off`` and ``tables`` (one per
        group whose projected space is unlike the earlier groups')."""
        spaces = [FlipIndex(puzzle, g.orbits) for g in groups]
        self.weights = np.zeros((len(self.orbit_cells), len(groups)), dtype=np.int64)
        for k, g in enumerate(groups):
            self.weights[list(g.orbits), k] = spaces[k].mult
        self.orbit_group = np.full_like(self.weights, -1)
        self.orbit_mult = np.zeros_like(self.weights)
        for o, row in enumerate(self.weights):
            in_groups = np.flatnonzero(row)
            self.orbit_group[o, :len(in_groups)], self.orbit_mult[o, :len(in_groups)] = in_groups, row[in_groups]
        roots = [s.rank(puzzle.goal) for s in spaces]
        alike = [_same_distances(s, root) for s, root in zip(spaces, roots)]
        first = {key: k for k, key in reversed(list(enumerate(alike)))}  # the first group of each key builds
        _check_time(sum(spaces[k].size for k in first.values()), deadline)
        tables = {key: _distances(spaces[k], roots[k]) for key, k in first.items()}
        offsets = dict(zip(tables, np.cumsum([0] + [len(t) for t in tables.values()])))
        self.table_off = np.array([offsets[key] for key in alike], dtype=np.int64)
        self.tables = np.concatenate(list(tables.values()))

    def digits(self, state: Sequence[int]) -> np.ndarray:
        """The position's digit per orbit."""
        on_orbit = np.arange(4) < self.orbit_len[:, None]  # an orbit's cells, its row's padding past them
        patterns = ((np.asarray(state, dtype=np.int64)[self.orbit_cells] * on_orbit) << np.arange(4)).sum(axis=1)
        return self.pat2dig[np.arange(len(patterns)), patterns]

    def line_costs(self, digits: np.ndarray) -> np.ndarray:
        """Each line's cost (the largest of its orbits'), by position, kind and line, for
        positions' digits (positions, orbits)."""
        on_line = self.line_orbits >= 0
        orbits = np.where(on_line, self.line_orbits, 0)
        costs = self.orbit_cost[np.arange(2)[:, None, None], orbits, digits[:, orbits]]
        return np.where(on_line, costs, 0).max(axis=3)

    def bounds(self, digits: np.ndarray) -> np.ndarray:
        """The bound of positions (before parity) from their digits (positions, orbits)."""
        return _bounds(self.table_off + digits @ self.weights, self.line_costs(digits), self.group_lines, self.tables)

    def parity(self, state: Sequence[int]) -> int:
        """On bipartite boards the parity of the position's distance (white cells against
        the goal's); 0 elsewhere."""
        return (sum(state) - sum(self.goal)) % 2 if self.bipartite else 0

    def heuristic(self, state: Sequence[int]) -> int:
        """The orbit bound of ``state`` (see the module docstring)."""
        h = int(self.bounds(self.digits(state)[None])[0])
        return h + (h - self.parity(state)) % 2 if self.bipartite else h

    def pass_function(self, start: Sequence[int], bound: int, ctl: np.ndarray, path: np.ndarray,
                      weight: tuple[int, int] = (1, 1)):
        """One depth-first pass from ``start`` below ``bound``, as a function of no arguments
        (``f = weight[0] * g + weight[1] * h``)."""
        digits = self.digits(start)
        keys = self.table_off + digits @ self.weights
        costs = self.line_costs(digits[None])[0]
        return lambda: _dfs(digits, keys, costs, costs.sum(axis=1), np.int64(self.parity(start)),
                            np.int64(self.bipartite), np.int64(bound), np.int64(weight[0]), np.int64(weight[1]),
                            np.int64(self.rows), self.move_orbits, self.next_digit, self.move_line, self.line_orbits,
                            self.orbit_cost, self.orbit_group, self.orbit_mult, self.group_lines, self.tables, ctl,
                            path)


def _check_time(entries: int, deadline: float | None) -> None:
    """SearchStopped when building ``entries`` table entries would end after ``deadline``."""
    seconds = entries / ENTRIES_PER_SECOND
    if deadline is not None and clock() + seconds > deadline:
        raise SearchStopped(f"the time limit would pass while building the orbit bound's tables ({entries:,} "
                            f"entries, about {seconds:.1f} s); give it more time")


def _same_distances(space: FlipIndex, root: int) -> tuple:
    """What a projected space's distances from ``root`` depend on alone: its radices, the
    root, and its moves in any order (each a row of orbits it touches and its rank
    changes; a move that touches none stands still). Spaces alike in it have one table."""
    per_move = space.move_orbits.shape[1]
    moves = sorted(space.move_orbits[m].tobytes() + space.digit_change[m * per_move:(m + 1) * per_move].tobytes()
                   for m in range(len(space.move_orbits)) if space.move_orbits[m, 0] >= 0)
    return space.radix.tobytes(), root, tuple(moves)


def _distances(space: FlipIndex, root: int) -> np.ndarray:
    """Distance from ``root`` of every rank of a projected space, one byte each."""
    table = np.full(space.size, 255, dtype=np.uint8)

    def on_layer(depth: int, layer: np.ndarray, value: int) -> None:
        record_layer(layer, value, depth, 1, table)

    layered_bfs(space, [root], on_layer=on_layer, extra_memory=table.nbytes)
    return table


@nb.njit(cache=True, nogil=True)
def _bound(keys, costs, totals, group_lines, tables):
    """The largest ``h_g`` (see the module docstring), from the groups' table entries
    ``keys``, the lines' ``costs`` and their ``totals`` per kind."""
    h = 0
    for g in range(keys.shape[0]):
        kind, a, b = group_lines[g, 0], group_lines[g, 1], group_lines[g, 2]
        v = np.int64(tables[keys[g]]) + totals[kind] - costs[kind, a]
        if b != a:
            v -= costs[kind, b]
        h = max(h, v)
    return h


@nb.njit(cache=True, nogil=True)
def _bounds(keys, costs, group_lines, tables):
    """:func:`_bound` of each position: its groups' entries ``keys[i]``, its lines' ``costs[i]``."""
    out = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        out[i] = _bound(keys[i], costs[i], costs[i].sum(axis=1), group_lines, tables)
    return out


@nb.njit(cache=True, nogil=True, inline="always")
def _move(m, digits, keys, costs, totals, move_orbits, next_digit, move_line, line_orbits, orbit_cost,
          orbit_group, orbit_mult):
    """Make move ``m``: new digits for the orbits it touches, new entries for their groups,
    and its line's new cost (the other lines' costs stay: the move is free for them)."""
    per_move = move_orbits.shape[1]
    for k in range(per_move):
        o = move_orbits[m, k]
        if o < 0:
            break
        old = digits[o]
        new = next_digit[m * per_move + k, old]
        digits[o] = new
        for j in range(orbit_group.shape[1]):
            g = orbit_group[o, j]
            if g < 0:
                break
            keys[g] += (new - old) * orbit_mult[o, j]
    kind, line = move_line[m, 0], move_line[m, 1]
    cost = 0
    for j in range(line_orbits.shape[2]):
        o = line_orbits[kind, line, j]
        if o < 0:
            break
        cost = max(cost, orbit_cost[kind, o, digits[o]])
    totals[kind] += cost - costs[kind, line]
    costs[kind, line] = cost


@nb.njit(cache=True, nogil=True)
def _dfs(digits, keys, costs, totals, parity, bipartite, bound, wg, wh, rows, move_orbits, next_digit, move_line,
         line_orbits, orbit_cost, orbit_group, orbit_mult, group_lines, tables, ctl, path):
    """One depth-first pass below ``bound`` of ``f = wg * depth + wh * h``; returns FOUND,
    NOT_FOUND or STOPPED.

    Iterative: ``path[d]`` holds the move made at depth ``d``, ``tried[d]`` the next move to
    try there. After a row ``r`` the moves tried are those above ``r`` (the other rows and
    every column); after a column ``c`` every row and the columns above ``c`` (see the
    module docstring). ``parity`` is the start's distance parity on bipartite boards. On
    FOUND, ``path`` holds the moves and -1 after the last. The stop flag is read every
    4,096 nodes.
    """
    n_moves = move_orbits.shape[0]
    tried = np.empty(path.shape[0] + 1, dtype=np.int64)
    tried[0] = 0
    d = 0
    generated = 0
    while d >= 0:
        m = tried[d]
        if d > 0 and path[d - 1] >= rows and m == rows:  # past the rows after a column: the columns above it
            m = path[d - 1] + 1
        if m >= n_moves:  # every move tried: step back
            d -= 1
            if d >= 0:
                _move(path[d], digits, keys, costs, totals, move_orbits, next_digit, move_line, line_orbits,
                      orbit_cost, orbit_group, orbit_mult)
            continue
        tried[d] = m + 1
        generated, stop = counted(generated, ctl)
        if stop:
            return STOPPED
        _move(m, digits, keys, costs, totals, move_orbits, next_digit, move_line, line_orbits, orbit_cost,
              orbit_group, orbit_mult)
        h = _bound(keys, costs, totals, group_lines, tables)
        at_goal = h == 0
        h += ((h + parity + d + 1) & 1) * bipartite
        f = (d + 1) * wg + h * wh
        if f > bound:
            if f < ctl[MIN_F]:
                ctl[MIN_F] = f
            _move(m, digits, keys, costs, totals, move_orbits, next_digit, move_line, line_orbits, orbit_cost,
                  orbit_group, orbit_mult)
        elif at_goal:
            path[d] = m
            path[d + 1:] = -1
            ctl[NODES] += generated
            return FOUND
        else:
            path[d] = m
            d += 1
            tried[d] = 0 if m >= rows else m + 1
    ctl[NODES] += generated
    return NOT_FOUND
