"""Minimal perfect hash of flip-puzzle positions, and its compiled BFS expansion.

The cells fall into orbits (see :mod:`puzzlespace.families.flip`). A reachable position
is a choice, per orbit, of one pattern allowed there: on a 4-cell orbit the patterns with
the goal's diagonal balance (1, 4 or 6 of them), on smaller orbits every pattern. The rank
is the mixed-radix number whose digits are the chosen patterns' places in those lists,
orbit 0 the least significant. So the rank space is exactly the reachable set.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..explore.table import get2, next_in_layer, pattern
from ..errors import PuzzleError
from .base import State


@nb.njit(cache=True, nogil=True)
def _rank(cells, orbit_cells, orbit_len, pat2dig, mult):
    r = 0
    for o in range(orbit_len.shape[0]):
        pat = 0
        for k in range(orbit_len[o]):
            pat |= cells[orbit_cells[o, k]] << k
        r += pat2dig[o, pat] * mult[o]
    return r


@nb.njit(cache=True, nogil=True)
def _unrank(i, orbit_cells, orbit_len, dig2pat, radix, cells):
    for o in range(orbit_len.shape[0]):
        d = i % radix[o]
        i //= radix[o]
        pat = dig2pat[o, d]
        for k in range(orbit_len[o]):
            cells[orbit_cells[o, k]] = (pat >> k) & 1


@nb.njit(cache=True, nogil=True)
def expand_flip(table, lo, hi, value, blocks, orbit_cells, orbit_len, pat2dig, dig2pat, radix, mult,
                src, flip, move_orbits, out):
    """Unreached neighbours of the frontier states in ``[lo, hi)`` (read-only; see TokenIndex.expand).

    A move touches only the orbits with a cell on its line (``move_orbits``), so the
    neighbour's rank is the state's rank with those digits replaced.
    """
    n = src.shape[1]
    cells = np.empty(n, dtype=np.int64)
    count = 0
    room = out.shape[0] - src.shape[0]
    words = table.view(np.uint64)
    pat = pattern(value)
    i = lo - 1
    while True:
        i = next_in_layer(words, i + 1, hi, pat, blocks)
        if i >= hi:
            break
        if count > room:
            return count, i
        _unrank(i, orbit_cells, orbit_len, dig2pat, radix, cells)
        for m in range(src.shape[0]):
            j = i
            for k in range(move_orbits.shape[1]):
                o = move_orbits[m, k]
                if o < 0:
                    break
                old = 0
                new = 0
                for q in range(orbit_len[o]):
                    c = orbit_cells[o, q]
                    old |= cells[c] << q
                    new |= (cells[src[m, c]] ^ flip[m, c]) << q
                j += (pat2dig[o, new] - pat2dig[o, old]) * mult[o]
            if get2(table, j) == 3:
                out[count] = j
                count += 1
    return count, hi


@nb.njit(cache=True, nogil=True)
def expand_flip_reference(table, lo, hi, value, orbit_cells, orbit_len, pat2dig, dig2pat, radix, mult,
                          src, flip, out):
    """Reference for :func:`expand_flip`: applies each move to the whole board and ranks it afresh."""
    n = src.shape[1]
    cells = np.empty(n, dtype=np.int64)
    moved = np.empty(n, dtype=np.int64)
    count = 0
    for i in range(lo, hi):
        if get2(table, i) != value:
            continue
        _unrank(i, orbit_cells, orbit_len, dig2pat, radix, cells)
        for m in range(src.shape[0]):
            for c in range(n):
                moved[c] = cells[src[m, c]] ^ flip[m, c]
            j = _rank(moved, orbit_cells, orbit_len, pat2dig, mult)
            if get2(table, j) == 3:
                out[count] = j
                count += 1
    return count


class FlipIndex:
    """Rank/unrank of a flip puzzle's reachable positions (see the module docstring)."""

    def __init__(self, puzzle):
        orbits = puzzle.orbits
        self.n = puzzle.n_cells
        self.orbit_cells = np.zeros((len(orbits), 4), dtype=np.int64)
        self.orbit_len = np.array([len(o) for o in orbits], dtype=np.int64)
        self.pat2dig = np.full((len(orbits), 16), -1, dtype=np.int64)
        self.dig2pat = np.zeros((len(orbits), 16), dtype=np.int64)
        radix = []
        for o, cells in enumerate(orbits):
            self.orbit_cells[o, : len(cells)] = cells
            goal_pattern = [puzzle.goal[c] for c in cells]
            allowed = [
                p for p in range(1 << len(cells))
                if len(cells) != 4
                or puzzle.diagonal_balance([(p >> k) & 1 for k in range(4)]) == puzzle.diagonal_balance(goal_pattern)
            ]
            for d, p in enumerate(allowed):
                self.pat2dig[o, p] = d
                self.dig2pat[o, d] = p
            radix.append(len(allowed))
        self.radix = np.array(radix, dtype=np.int64)
        self.mult = np.cumprod([1] + radix[:-1]).astype(np.int64)
        self.size = int(np.prod(radix, dtype=object))
        if self.size >= 1 << 62:
            raise PuzzleError(f"{puzzle.spec} has about {self.size:.3g} positions: too many to index")
        self.src = np.tile(np.arange(self.n, dtype=np.int64), (len(puzzle.lines), 1))
        self.flip = np.zeros((len(puzzle.lines), self.n), dtype=np.int64)
        for m, line in enumerate(puzzle.lines):
            for a, b in zip(line, reversed(line)):
                self.src[m, a] = b
                self.flip[m, a] = 1
        touched = [sorted({o for o, cells in enumerate(orbits) for c in cells if c in set(line)})
                   for line in puzzle.lines]
        self.move_orbits = np.full((len(touched), max(map(len, touched))), -1, dtype=np.int64)
        for m, orbs in enumerate(touched):
            self.move_orbits[m, : len(orbs)] = orbs
        self.group = 1
        self.max_degree = len(puzzle.lines)
        self.minimal = True
        self.scheme = "flip-orbit-mixed-radix/v1"

    def rank(self, state: State) -> int:
        return int(_rank(np.asarray(state, dtype=np.int64), self.orbit_cells, self.orbit_len, self.pat2dig, self.mult))

    def unrank(self, i: int) -> State:
        cells = np.empty(self.n, dtype=np.int64)
        _unrank(np.int64(i), self.orbit_cells, self.orbit_len, self.dig2pat, self.radix, cells)
        return tuple(int(c) for c in cells)

    def expand(self, table, lo: int, hi: int, value: int, blocks, out: np.ndarray) -> tuple[int, int]:
        """See :meth:`TokenIndex.expand <puzzlespace.families.token_index.TokenIndex.expand>`."""
        return expand_flip(table, lo, hi, value, blocks, self.orbit_cells, self.orbit_len, self.pat2dig,
                           self.dig2pat, self.radix, self.mult, self.src, self.flip, self.move_orbits, out)
