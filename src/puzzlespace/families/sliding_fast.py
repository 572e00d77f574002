"""A fast, not optimal, solver for sliding-tile puzzles of any size.

The board is solved from the outside in, as people do: while the unsolved rectangle is
more than 2 cells in either direction, one of its outer rows or columns (one that does
not hold the goal's blank) is filled and fixed. A line's tiles are brought home one at a
time, each by the fewest moves that leave the fixed tiles alone (a breadth-first search
over where that tile and the blank are); the last two of a line go in together (the
last one first, into its neighbour's place, the other beside it one step in, then the
blank turns them both home). The 2 x 2 left holds the goal's blank and is turned into
place. A walk (this one, or a weighted search's) can then be shortened: every window
of it is replaced by an optimal walk between its two ends when that is shorter (IDA*
with the Manhattan distance, at most :data:`WINDOW_NODES` nodes a window).

A *walk* here is the sequence of cells the blank visits, its first entry the start's
blank; its moves (the token-puzzle move codes) are its entries after the first.

Memory: the board and the tiles' cells (4 bytes a cell each), three arrays of
``(n + 1) * n`` 4-byte entries for the breadth-first searches (1.9 MB on 20 x 20), and
the walk (4 bytes a move).
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: Moves in one window the shortening tries to replace.
WINDOW = 32
#: Nodes one window's IDA* may generate before the window is left as it is.
WINDOW_NODES = 20000


@nb.njit(cache=True, nogil=True)
def _neighbours(cell, width, height, out):
    """The grid cells next to ``cell`` written into ``out``; their number."""
    r, c = divmod(cell, width)
    k = 0
    if r > 0:
        out[k] = cell - width
        k += 1
    if r + 1 < height:
        out[k] = cell + width
        k += 1
    if c > 0:
        out[k] = cell - 1
        k += 1
    if c + 1 < width:
        out[k] = cell + 1
        k += 1
    return k


@nb.njit(cache=True, nogil=True)
def _shortest_walk(free, width, height, tile, blank, target, out):
    """The fewest blank moves, over ``free`` cells only, that bring the tile on ``tile``
    to a ``target`` cell (or, with ``tile`` < 0, the blank to one); written into ``out``
    (the cells the blank enters); their number, or -1 when there is none."""
    n = width * height
    seen = np.full((n + 1) * n, -1, np.int32)  # the state reached from, by state tile' * n + blank
    queue = np.empty((n + 1) * n, np.int32)
    first = (tile + 1) * n + blank
    seen[first] = first
    queue[0] = first
    head, tail = 0, 1
    near = np.empty(4, np.int64)
    found = -1
    while head < tail:
        s = queue[head]
        head += 1
        t, b = divmod(s, n)
        t -= 1
        if target[t] if tile >= 0 else target[b]:
            found = s
            break
        for i in range(_neighbours(b, width, height, near)):
            v = near[i]
            if not free[v]:
                continue
            nt = b if v == t else t
            s2 = (nt + 1) * n + v
            if seen[s2] < 0:
                seen[s2] = s
                queue[tail] = s2
                tail += 1
    if found < 0:
        return -1
    k = 0
    s = found
    while s != first:
        out[k] = s % n
        k += 1
        s = seen[s]
    out[:k] = out[:k][::-1].copy()
    return k


@nb.njit(cache=True, nogil=True)
def _follow(board, where, cells):
    """Move the blank through ``cells`` on ``board`` (``where[t]``: tile t's cell)."""
    for v in cells:
        b = where[0]
        t = board[v]
        board[b], board[v] = t, 0
        where[t], where[0] = b, v


@nb.njit(cache=True, nogil=True)
def _manhattan(a, b, width):
    return abs(a // width - b // width) + abs(a % width - b % width)


@nb.njit(cache=True, nogil=True)
def _optimal_between(board, home, width, height, longest, budget, out):
    """The fewest blank moves (at most ``longest``) from ``board`` to the position where
    tile t is on ``home[t]`` (IDA* with the Manhattan distance, at most ``budget`` nodes),
    written into ``out``; their number, or -1. ``board`` is left as it was."""
    n = width * height
    h0 = 0
    blank0 = 0
    for v in range(n):
        t = board[v]
        if t:
            h0 += _manhattan(v, home[t], width)
        else:
            blank0 = v
    parity = (_manhattan(blank0, home[0], width) - h0) % 2  # every walk between the two has this parity
    bound = h0 + parity
    cells = np.empty(longest + 1, np.int64)
    hs = np.empty(longest + 1, np.int64)
    choice = np.empty(longest + 1, np.int64)
    near = np.empty(4, np.int64)
    nodes = 0
    while bound <= longest:
        d = 0
        cells[0], hs[0], choice[0] = blank0, h0, 0
        while d >= 0:
            if hs[d] == 0 and cells[d] == home[0]:
                out[:d] = cells[1 : d + 1]
                for k in range(d, 0, -1):  # put the board back
                    t = board[cells[k - 1]]
                    board[cells[k]], board[cells[k - 1]] = t, 0
                return d
            count = _neighbours(cells[d], width, height, near)
            if choice[d] >= count or nodes > budget:
                if d > 0:
                    t = board[cells[d - 1]]
                    board[cells[d]], board[cells[d - 1]] = t, 0
                d -= 1
                continue
            v = near[choice[d]]
            choice[d] += 1
            if d > 0 and v == cells[d - 1]:
                continue
            t = board[v]
            h = hs[d] + _manhattan(cells[d], home[t], width) - _manhattan(v, home[t], width)
            if d + 1 + h > bound:
                continue
            nodes += 1
            board[cells[d]], board[v] = t, 0
            d += 1
            cells[d], hs[d], choice[d] = v, h, 0
        if nodes > budget:
            return -1
        bound += 2
    return -1


@nb.njit(cache=True, nogil=True)
def _play(board, walk, first, last):
    """Make the moves ``walk[first..last]`` (the blank going from each entry's predecessor
    to it) on ``board``."""
    for k in range(first, last + 1):
        a, b = walk[k - 1], walk[k]
        board[a], board[b] = board[b], 0


@nb.njit(cache=True, nogil=True)
def _shorten(walk, start, width, height, window, budget):
    """``walk`` (from ``start``) with every window of ``window`` moves replaced by an
    optimal walk between its ends where that is shorter; windows overlap by half."""
    n = width * height
    cur = walk.copy()
    board = start.copy()
    target = np.empty(n, np.int32)
    home = np.empty(n, np.int32)
    out = np.empty(window, np.int32)
    step = max(1, window // 2)
    p = 0  # board is the position after cur[: p + 1]
    while p < len(cur) - 1:
        j = min(p + window, len(cur) - 1)
        target[:] = board
        _play(target, cur, p + 1, j)
        for v in range(n):
            home[target[v]] = v
        found = _optimal_between(board, home, width, height, j - p - 1, budget, out)
        if found >= 0:
            cur = np.concatenate((cur[: p + 1], out[:found], cur[j + 1 :]))
            continue
        nxt = min(p + step, len(cur) - 1)
        _play(board, cur, p + 1, nxt)
        p = nxt
    return cur


def shortened_walk(width: int, height: int, start, walk: np.ndarray) -> np.ndarray:
    """``walk`` from ``start`` made shorter by optimal windows (see the module docstring),
    pass after pass while a pass gains."""
    board = np.asarray(start, dtype=np.int32)
    while True:
        shorter = _shorten(walk.astype(np.int32), board, width, height, WINDOW, WINDOW_NODES)
        if len(shorter) == len(walk):
            return walk
        walk = shorter


@nb.njit(cache=True, nogil=True)
def _two_home(inside, width, height, a, b, blank, a_home, b_home, out):
    """The fewest blank moves inside the ``inside`` cells (the blank and both tiles start
    there) that bring the tiles on ``a`` and ``b`` to ``a_home`` and ``b_home``, written
    into ``out``; their number, or -1. A breadth-first search over where the two tiles and
    the blank are (cells numbered locally: m^3 states for m cells)."""
    n = width * height
    local = np.full(n, -1, np.int64)
    cells = np.flatnonzero(inside)
    m = len(cells)
    for i in range(m):
        local[cells[i]] = i
    if local[a] < 0 or local[b] < 0 or local[blank] < 0 or local[a_home] < 0 or local[b_home] < 0:
        return -1
    seen = np.full(m * m * m, -1, np.int64)
    queue = np.empty(m * m * m, np.int64)
    first = (local[a] * m + local[b]) * m + local[blank]
    seen[first] = first
    queue[0] = first
    head, tail = 0, 1
    near = np.empty(4, np.int64)
    goal_a, goal_b = local[a_home], local[b_home]
    while head < tail:
        s = queue[head]
        head += 1
        pa, rest = divmod(s, m * m)
        pb, pz = divmod(rest, m)
        if pa == goal_a and pb == goal_b:
            k = 0
            while s != first:
                out[k] = cells[s % m]
                k += 1
                s = seen[s]
            out[:k] = out[:k][::-1].copy()
            return k
        for i in range(_neighbours(cells[pz], width, height, near)):
            v = local[near[i]]
            if v < 0:
                continue
            na = pz if v == pa else pa
            nb_ = pz if v == pb else pb
            s2 = (na * m + nb_) * m + v
            if seen[s2] < 0:
                seen[s2] = s
                queue[tail] = s2
                tail += 1
    return -1


class _Board:
    """The board being solved: tiles by cell, cells by tile, the cells not yet fixed, and
    the blank's walk so far (a list of arrays)."""

    def __init__(self, width: int, height: int, start):
        n = width * height
        self.width, self.height = width, height
        self.board = np.asarray(start, dtype=np.int32).copy()
        self.where = np.empty(n, np.int32)
        self.where[self.board] = np.arange(n, dtype=np.int32)
        self.free = np.ones(n, np.bool_)
        self.walk = [np.array([self.where[0]], np.int32)]
        self.scratch = np.empty((n + 1) * n, np.int32)

    def follow(self, cells: np.ndarray) -> None:
        _follow(self.board, self.where, cells)
        self.walk.append(cells.copy())

    def bring(self, tile: int, target) -> None:
        """Move ``tile`` (or the blank, for tile 0) over the free cells to ``target`` (a
        cell or a list of cells)."""
        src = int(self.where[tile]) if tile else -1
        cells = np.zeros(len(self.board), np.bool_)
        cells[target] = True
        k = _shortest_walk(self.free, self.width, self.height, src, int(self.where[0]), cells, self.scratch)
        if k < 0:
            raise AssertionError("internal error: the constructive solver could not place a tile")
        self.follow(self.scratch[:k])

    def fill_line(self, goal, line: list[tuple[int, int]], step: tuple[int, int]) -> None:
        """Bring home the goal's tiles of ``line`` ((row, column) cells in order, ``step``
        the way inward) and fix them."""
        cells = [r * self.width + c for r, c in line]
        for cell in cells[:-2]:
            self.bring(goal[cell], cell)
            self.free[cell] = False
        a, b = goal[cells[-2]], goal[cells[-1]]
        if self.board[cells[-2]] != a or self.board[cells[-1]] != b:
            # b onto the line's last two cells, then a near, then the blank, each held still
            # in turn (holding a tile on the line shuts in no cell but the line's other last
            # one); then a search over where the two and the blank are inside the end of the
            # line and the 3 lines within finishes it
            self.bring(b, cells[-2:])
            self.free[self.where[b]] = False
            self.bring(a, self._block(line[-3:], step, 3))
            self.free[self.where[a]] = False
            self.bring(0, self._block(line[-4:], step, 4))
            self.free[self.where[[a, b]]] = True
            inside = np.zeros(len(self.board), np.bool_)
            inside[self._block(line[-4:], step, 4)] = True
            k = _two_home(inside, self.width, self.height, int(self.where[a]), int(self.where[b]),
                          int(self.where[0]), cells[-2], cells[-1], self.scratch)
            if k < 0:
                raise AssertionError("internal error: the constructive solver could not place a line's last two")
            self.follow(self.scratch[:k])
        self.free[cells[-2]] = self.free[cells[-1]] = False

    def _block(self, line: list[tuple[int, int]], step: tuple[int, int], depth: int) -> list[int]:
        """The free cells up to ``depth`` - 1 steps inward from ``line``'s cells."""
        dr, dc = step
        block = [(r + k * dr, c + k * dc) for r, c in line for k in range(depth)]
        return [r * self.width + c for r, c in block
                if 0 <= r < self.height and 0 <= c < self.width and self.free[r * self.width + c]]


def constructive_walk(width: int, height: int, start, goal) -> np.ndarray:
    """The blank's walk (see the module docstring) from ``start`` to ``goal`` (solvable,
    so the caller has checked), found by filling the board's lines from the outside in."""
    state = _Board(width, height, start)
    top, bottom, left, right = 0, height - 1, 0, width - 1
    gr, gc = divmod(list(goal).index(0), width)
    while bottom - top > 1 or right - left > 1:
        line, step, side = _outer_line(top, bottom, left, right, gr, gc)
        state.fill_line(goal, line, step)
        top, bottom, left, right = (top + (side == "top"), bottom - (side == "bottom"),
                                    left + (side == "left"), right - (side == "right"))
    state.walk.append(_turn_home(state.board, np.asarray(goal, np.int32), width, top, left))
    return np.concatenate(state.walk)


def _outer_line(top: int, bottom: int, left: int, right: int, gr: int, gc: int):
    """The outer line of the rectangle to fill next: its (row, column) cells, the way
    inward and which side it is. The longer way is shortened first, from the side away
    from the goal's blank (which must stay inside)."""
    if bottom - top > 1 and (bottom - top >= right - left or right - left <= 1):
        side = "top" if gr - top >= bottom - gr else "bottom"
        r, dr = (top, 1) if side == "top" else (bottom, -1)
        return [(r, c) for c in range(left, right + 1)], (dr, 0), side
    side = "left" if gc - left >= right - gc else "right"
    c, dc = (left, 1) if side == "left" else (right, -1)
    return [(r, c) for r in range(top, bottom + 1)], (0, dc), side


def _turn_home(board: np.ndarray, goal: np.ndarray, width: int, top: int, left: int) -> np.ndarray:
    """The blank's cells that turn the 2 x 2 at (top, left) into the goal: round the
    square one way or the other, whichever is shorter (a solvable 2 x 2 needs < 12)."""
    square = [top * width + left, top * width + left + 1, (top + 1) * width + left + 1, (top + 1) * width + left]
    for steps in range(12):
        for way in (1, -1):
            b = board.copy()
            at = square.index(int(np.flatnonzero(b == 0)[0]))
            cells = []
            for _ in range(steps):
                nxt = (at + way) % 4
                b[square[at]], b[square[nxt]] = b[square[nxt]], 0
                at = nxt
                cells.append(square[at])
            if np.array_equal(b, goal):
                return np.array(cells, np.int32)
    raise AssertionError("internal error: the last 2 x 2 of the board cannot be turned home")
