"""Minimal perfect hash of flip-puzzle positions, and its compiled BFS expansion.

The cells fall into orbits (see :mod:`puzzlespace.families.flip`). A reachable position
is a choice, per orbit, of one pattern allowed there: on a 4-cell orbit the patterns with
the goal's diagonal balance (1, 4 or 6 of them), on smaller orbits every pattern. The rank
is the mixed-radix number whose digits are the chosen patterns' places in those lists,
orbit 0 the least significant. So the rank space is exactly the reachable set.
"""

from __future__ import annotations

from typing import Sequence

import numba as nb
import numpy as np

from ..bits import unreached
from ..errors import PuzzleError
from ..explore.engine import neighbours_kernel
from ..fastdiv import divisor, mul_shift
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


def expand_flip(table, base, ranks, count, out, written, data):
    """The flip index's kernel (:attr:`FrontierSpace.kernel
    <puzzlespace.contracts.FrontierSpace.kernel>`): the unreached neighbours of the states
    ``ranks[:count]`` (increasing), written into ``out`` from ``written`` on; returns the
    index after the last. ``data`` is :attr:`FlipIndex.kernel_data`.

    A move maps every orbit onto itself and touches only the orbits with a cell on its
    line (``move_orbits[m]``, -1 after the last), so the neighbour's rank is the state's
    plus, per touched orbit ``o``, ``digit_change[m * K + k, d]``: the change of the rank
    when the orbit's digit ``d`` becomes the moved pattern's (``K`` = ``move_orbits``'
    columns). The states' digits are kept by adding the gap to the last one,
    odometer-like (``radix_m``, ``radix_s``: division by each radix as a multiply and a
    shift, :mod:`puzzlespace.fastdiv`).
    """
    radix, radix_m, radix_s, move_orbits, digit_change = data
    n_orbits = radix.shape[0]
    n_moves, per_move = move_orbits.shape
    digits = np.zeros(n_orbits, dtype=np.int64)
    current = 0  # the rank whose digits are in ``digits``
    for t in range(count):
        i = ranks[t]
        carry = i - current
        current = i
        x = 0
        while carry != 0:
            s = digits[x] + carry
            if s < radix[x]:
                digits[x] = s
                break
            carry = mul_shift(s, radix_m[x], radix_s[x])
            digits[x] = s - carry * radix[x]
            x += 1
        for m in range(n_moves):
            j = i
            for k in range(per_move):
                o = move_orbits[m, k]
                if o < 0:
                    break
                j += digit_change[m * per_move + k, digits[o]]
            if unreached(table, base, j):
                out[written] = j
                written += 1
    return written


class FlipIndex:
    """Rank/unrank of a flip puzzle's reachable positions (see the module docstring).

    With ``orbits`` (numbers of orbits of ``puzzle.orbits``, all by default), the ranks
    are the patterns of those orbits alone: the index of the puzzle's projection onto
    them, a homomorphism since every move maps each orbit onto itself (a move that
    touches none of them leaves a rank as it is). ``rank`` reads their cells alone.
    """

    def __init__(self, puzzle, orbits: Sequence[int] | None = None):
        orbits = puzzle.orbits if orbits is None else [puzzle.orbits[o] for o in orbits]
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
        self.digit_change = self._digit_changes(orbits)
        # the odometer divides a digit plus a gap below the size: less than size + 16
        self.radix_m, self.radix_s = (np.array(v, dtype=np.int64) for v in
                                      zip(*(divisor(int(r), self.size + 16) for r in radix)))
        self.group = 1
        self.max_degree = len(puzzle.lines)
        self.minimal = True
        self.rank_steps = None
        self.scheme = "flip-orbit-mixed-radix/v1"

    def _digit_changes(self, orbits) -> np.ndarray:
        """Row ``m * K + k`` (``K`` = ``move_orbits``' columns), column ``d``: the change of
        the rank when move ``m`` turns digit ``d`` of its ``k``-th orbit into the moved
        pattern's digit. A move reverses its line and flips its colours, which maps each
        orbit onto itself; refused otherwise."""
        per_move = self.move_orbits.shape[1]
        out = np.zeros((len(self.move_orbits) * per_move, 16), dtype=np.int64)
        for m, orbs in enumerate(self.move_orbits):
            for k, o in enumerate(orbs):
                if o < 0:
                    break
                cells = list(orbits[o])
                if any(int(self.src[m, c]) not in cells for c in cells):
                    raise PuzzleError("a move maps an orbit's cells onto another orbit")
                for d in range(int(self.radix[o])):
                    old = int(self.dig2pat[o, d])
                    new = sum((((old >> cells.index(int(self.src[m, c]))) & 1) ^ int(self.flip[m, c])) << q
                              for q, c in enumerate(cells))
                    if self.pat2dig[o, new] < 0:
                        raise PuzzleError("a move turns an allowed pattern of an orbit into one that is not")
                    out[m * per_move + k, d] = (int(self.pat2dig[o, new]) - d) * int(self.mult[o])
        return out

    def rank(self, state: State) -> int:
        return int(_rank(np.asarray(state, dtype=np.int64), self.orbit_cells, self.orbit_len, self.pat2dig, self.mult))

    def unrank(self, i: int) -> State:
        cells = np.empty(self.n, dtype=np.int64)
        _unrank(np.int64(i), self.orbit_cells, self.orbit_len, self.dig2pat, self.radix, cells)
        return tuple(int(c) for c in cells)

    @property
    def kernel_data(self) -> tuple:
        return self.radix, self.radix_m, self.radix_s, self.move_orbits, self.digit_change

    @property
    def kernel(self):
        """:func:`expand_flip`, compiled."""
        return neighbours_kernel(expand_flip, self.kernel_data)
