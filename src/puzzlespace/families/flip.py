"""Flip puzzles ``flip:WxH`` (ura-omote, 裏表パズル): two-sided cells, white or black.

A move turns one row or one column over: the order of its cells is reversed and every
cell of it shows its other side. The default goal is all white.

State: a tuple with 1 (white, ``W``) or 0 (black, ``B``) per cell, row-major.
Move: ``0..H-1`` turns row ``r``; ``H + c`` turns column ``c``.

Invariants (for every WxH and every goal): the cells fall into
*orbits* {(r,c), (r,W-1-c), (H-1-r,c), (H-1-r,W-1-c)}. Write a 4-cell orbit's pattern
as ``a b / d e`` (its cells in row-major order). Every move swaps two of its cells that
lie on different diagonals and turns both over, so the *diagonal balance*
``(a + e) - (b + d)`` (white cells on the main diagonal minus those on the other) never
changes. It splits the 16 patterns into classes of 1, 4, 6, 4 and 1 (balance -2..2;
the all-white pattern has balance 0 and lies in the class of 6), and each class is one orbit. Orbits
of 2 or 1 cells, on the middle row or column, turn freely. A position is reachable
exactly when every 4-cell orbit has its goal pattern's balance (tests confirm this
against exhaustive search on every small board and many goals).
"""

from __future__ import annotations

import re
from functools import cached_property
from typing import Sequence

from ..drawing import Figure, Mark, Spot
from ..errors import PuzzleError
from ..positions import board_size, split_rows
from .base import Family, Puzzle, State, Verdict, register_family

MAX_CELLS = 400
#: The bound of flip puzzles' IDA* (:mod:`~puzzlespace.families.flip_search`), as ``--heuristic`` names it.
ORBIT_BOUND = "orbits"
_SYMBOLS = {"W": 1, "B": 0, "1": 1, "0": 0}


class FlipPuzzle(Puzzle):
    """The ``width`` x ``height`` flip puzzle."""

    family = "flip"

    def __init__(self, width: int, height: int, goal: State | None = None):
        if width < 1 or height < 1 or width * height < 2:
            raise PuzzleError(f"flip boards need at least 2 cells, got {width}x{height}")
        if width * height > MAX_CELLS:
            raise PuzzleError(f"flip {width}x{height} is too large (at most {MAX_CELLS} cells)")
        self.width, self.height = width, height
        self.n_cells = width * height
        self.spec = f"flip:{width}x{height}"
        w, h = width, height
        self.lines = [list(range(r * w, (r + 1) * w)) for r in range(h)] + [
            list(range(c, w * h, w)) for c in range(w)
        ]
        self.orbits = sorted(
            {
                tuple(sorted({r * w + c, r * w + w - 1 - c, (h - 1 - r) * w + c, (h - 1 - r) * w + w - 1 - c}))
                for r in range(h)
                for c in range(w)
            }
        )
        self.goal = (1,) * self.n_cells if goal is None else self._checked(goal, "goal")

    def _checked(self, values: Sequence[int], what: str) -> State:
        if len(values) != self.n_cells or any(v not in (0, 1) for v in values):
            raise PuzzleError(f"{what} must have {self.n_cells} cells of 0/1")
        return tuple(values)

    def with_goal(self, goal: State) -> "FlipPuzzle":
        return FlipPuzzle(self.width, self.height, goal)

    # ----- text forms -------------------------------------------------------------------
    def parse_position(self, text: str, what: str = "position") -> State:
        rows = []
        for row in split_rows(text.upper(), what):
            cells = []
            for ch in re.sub(r"[\s,]+", "", row):
                if ch not in _SYMBOLS:
                    raise PuzzleError(f"{what}: unknown symbol {ch!r} (use W/B or 1/0)")
                cells.append(_SYMBOLS[ch])
            rows.append(cells)
        if len(rows) > 1:
            for i, row in enumerate(rows):
                if len(row) != self.width:
                    raise PuzzleError(f"{what}: row {i + 1} has {len(row)} cells, expected {self.width}")
        cells = [v for r in rows for v in r]
        if len(cells) != self.n_cells:
            raise PuzzleError(f"{what} has {len(cells)} cells, expected {self.n_cells}")
        return tuple(cells)

    def format_position(self, state: State) -> str:
        w = self.width
        return "/".join(
            "".join("W" if v else "B" for v in state[r * w : (r + 1) * w]) for r in range(self.height)
        )

    def draw(self, state: State) -> str:
        w = self.width
        return "\n".join(
            "".join("□" if v else "■" for v in state[r * w : (r + 1) * w]) for r in range(self.height)
        )

    def figure(self, state: State, move: int | None = None) -> Figure:
        """A square per cell, light for 1 and dark for 0; a move outlines its line."""
        w = self.width
        spots = tuple(Spot(float(v % w), float(v // w), "square", "", "light" if x else "dark")
                      for v, x in enumerate(state))
        return Figure(spots, marks=self.move_marks(state, move))

    def move_marks(self, state: State, move: int | None) -> tuple[Mark, ...]:
        """An outline round the line turned over."""
        return () if move is None else (Mark("line", tuple(self.lines[move])),)

    how_to_move = ("Click a row's handle (r0, r1, ... on the left) or a column's (c0, c1, ... on top) to turn "
                   "that line over: its cells reverse their order and each shows its other side.")

    def move_handle(self, state: State, move: int) -> Spot:
        """A round handle labelled with the move (``r0``, ``c2``): left of its row, above its column."""
        row, column = (move, -1) if move < self.height else (-1, move - self.height)
        return Spot(float(column), float(row), "circle", self.move_label(move), "empty")

    def say_move(self, state: State, move: int) -> str:
        """``turn over row 0 (r0)``: the line and its handle's label."""
        line = f"row {move}" if move < self.height else f"column {move - self.height}"
        return f"turn over {line} ({self.move_label(move)})"

    # ----- rules ------------------------------------------------------------------------
    def moves(self, state: State) -> Sequence[int]:
        return range(len(self.lines))

    def apply(self, state: State, move: int) -> State:
        s = list(state)
        line = self.lines[move]
        for a, b in zip(line, reversed(line)):
            s[a] = 1 - state[b]
        return tuple(s)

    def move_label(self, move: int) -> str:
        return f"r{move}" if move < self.height else f"c{move - self.height}"

    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """``lines``: ``r<i>`` turns row i over, ``c<j>`` column j (both from 0)."""
        return {"lines": [self.move_label(m) for m in moves]}

    # ----- invariants -------------------------------------------------------------------
    @staticmethod
    def diagonal_balance(pattern: Sequence[int]) -> int:
        """``(a + e) - (b + d)`` for a 4-cell orbit's pattern ``a b / d e`` (row-major)."""
        a, b, d, e = pattern
        return a + e - b - d

    def check(self, state: State) -> Verdict:
        for orbit in self.orbits:
            if len(orbit) != 4:
                continue
            mine = self.diagonal_balance([state[i] for i in orbit])
            goal = self.diagonal_balance([self.goal[i] for i in orbit])
            if mine != goal:
                return Verdict(
                    False,
                    f"cells {', '.join(map(str, orbit))} form a 4-cell orbit (a cell and its mirror "
                    "images): every move swaps two of them across its diagonals and turns both over, so "
                    "white cells on one diagonal minus those on the other never changes; it is "
                    f"{goal:+d} in the goal and {mine:+d} here",
                    summary=f"cells {', '.join(map(str, orbit))} have diagonal balance {mine:+d}, the goal {goal:+d} "
                            "(no move changes it)",
                )
        return Verdict(
            True,
            "every 4-cell orbit (a cell and its mirror images) has the goal's diagonal balance "
            "(white cells on one diagonal minus the other), and cells on the middle row or column "
            "turn freely, so the position is reachable",
            summary="every 4-cell orbit has the goal's diagonal balance",
        )

    def reachable_count(self) -> int:
        sizes = {-2: 1, -1: 4, 0: 6, 1: 4, 2: 1}
        total = 1
        for orbit in self.orbits:
            if len(orbit) == 4:
                total *= sizes[self.diagonal_balance([self.goal[i] for i in orbit])]
            else:
                total *= 2 ** len(orbit)
        return total

    def random_position(self, rng) -> State:
        """Uniform over the reachable positions: per orbit, a uniform pattern of its class."""
        cells = list(self.goal)
        for orbit in self.orbits:
            if len(orbit) == 4:
                want = self.diagonal_balance([self.goal[c] for c in orbit])
                choices = [p for p in range(16) if self.diagonal_balance([(p >> k) & 1 for k in range(4)]) == want]
            else:
                choices = list(range(1 << len(orbit)))
            pattern = choices[int(rng.integers(len(choices)))]
            for k, c in enumerate(orbit):
                cells[c] = (pattern >> k) & 1
        return tuple(cells)

    def state_index(self):
        """Rank/unrank of the reachable positions (:class:`~puzzlespace.families.flip_index.FlipIndex`)."""
        from .flip_index import FlipIndex

        return FlipIndex(self)

    # ----- compiled search --------------------------------------------------------------
    def default_heuristic(self) -> str:
        """IDA* with the orbit bound (:mod:`~puzzlespace.families.flip_search`), on every board."""
        return ORBIT_BOUND

    def search_problem(self, heuristic: str = ORBIT_BOUND, deadline: float | None = None):
        """IDA*'s problem with the orbit bound, its tables built once per puzzle object;
        SearchStopped when the build is estimated to end after ``deadline``
        (:func:`~puzzlespace.compiled.clock` seconds)."""
        if heuristic != ORBIT_BOUND:
            raise PuzzleError(f"unknown heuristic {heuristic!r}: flip puzzles have {ORBIT_BOUND!r}")
        if heuristic not in self._problems:
            from .flip_search import FlipSearchProblem, orbit_groups

            self._problems[heuristic] = FlipSearchProblem(self, orbit_groups(self), deadline)
        return self._problems[heuristic]

    @cached_property
    def _problems(self) -> dict:
        return {}


register_family(Family("flip", "flip:WxH", lambda args: FlipPuzzle(*board_size(args, "flip"))))
