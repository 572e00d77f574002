"""Sliding-tile puzzles in the multi-tile metric (MTM): ``sliding:WxH:mtm``.

A move sends the blank any number ``k`` of cells along its row or column, and the ``k``
tiles in its way each slide one cell towards where it was: one move, however many tiles.
The positions, the goal and which positions reach it are those of the single-tile metric
(a move of ``k`` tiles is ``k`` single-tile moves); only the distances differ. A move is
the cell the blank goes to, as in every token puzzle.

The state index is the token index (:mod:`puzzlespace.families.token_index`), whose ranks
fit both metrics; its kernel here lists the multi-tile moves: along a row the blank's
move keeps the tokens' sequence (the rank moves by ``k``; by 1 a rank step), along a
column it is ``k`` single-tile moves in a row, each shifting a token along the sequence,
whose rank changes add up (:class:`MtmIndex`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import PuzzleError
from .base import State
from .sliding import SlidingPuzzle
from .grid_lines import line_moves, line_rays, line_step, merge_walk, slide, walk_cells
from .token_index import TokenIndex

#: The metrics a sliding puzzle's name may end with (``:stm`` is the default, unwritten).
METRICS = ("stm", "mtm")
#: The bounds an MTM puzzle's IDA* offers (see :mod:`puzzlespace.families.mtm_search`).
MTM_HEURISTICS = ("manhattan", "walking", "patterns")


class SlidingMtmPuzzle(SlidingPuzzle):
    """The ``width`` x ``height`` sliding-tile puzzle counted in the multi-tile metric."""

    metric = "mtm"
    how_to_move = ("Click a tile in the empty place's row or column to slide it and the tiles between "
                   "it and the empty place one cell towards it (one move), or press the arrow key of the "
                   "way the tile next to the empty place slides.")

    def __init__(self, width: int, height: int, goal: State | None = None):
        super().__init__(width, height, goal)
        self.spec = f"sliding:{width}x{height}:mtm"
        self._lines = line_moves(width, height)

    def with_goal(self, goal: State) -> "SlidingMtmPuzzle":
        return SlidingMtmPuzzle(self.width, self.height, goal)

    # ----- rules ------------------------------------------------------------------------
    def moves(self, state: State) -> Sequence[int]:
        return self._lines[state.index(0)]

    def apply(self, state: State, move: int) -> State:
        return slide(self.width, state, move)

    parity_rule = ("a move of k tiles is k swaps and takes the blank k cells across the bipartite grid")

    # ----- moves in words ---------------------------------------------------------------
    def moved_tiles(self, state: State, move: int) -> list[int]:
        """The tiles ``move`` slides, nearest the blank first."""
        b = state.index(0)
        step, k = line_step(self.width, b, move)
        return [state[b + j * step] for j in range(1, k + 1)]

    def move_way(self, state: State, move: int) -> str:
        """The way the tiles go: the opposite of the blank's."""
        step, _ = line_step(self.width, state.index(0), move)
        return {-self.width: "down", self.width: "up", -1: "right", 1: "left"}[step]

    def say_move(self, state: State, move: int) -> str:
        """``slide 5 6 7 left``: the tiles that move, nearest the blank first, and their way."""
        return f"slide {' '.join(map(str, self.moved_tiles(state, move)))} {self.move_way(state, move)}"

    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """``directions`` (the way the blank goes and how far, ``R3``; ``R`` for one cell)
        and ``tiles`` (the tiles that slide, nearest the blank first, ``7,6,5``)."""
        names = {-self.width: "U", self.width: "D", -1: "L", 1: "R"}
        directions, tiles = [], []
        for state, move in zip(path, moves):
            step, k = line_step(self.width, state.index(0), move)
            directions.append(names[step] + (str(k) if k > 1 else ""))
            tiles.append(",".join(map(str, self.moved_tiles(state, move))))
        return {"directions": directions, "tiles": tiles}

    def metric_lengths(self, start: State, moves: Sequence[int]) -> dict[str, int]:
        """``multi-tile`` (one move a line of tiles) and ``single-tile``: the tiles the
        moves slide, in all."""
        return {"multi-tile": len(moves), "single-tile": len(walk_cells(self.width, start.index(0), moves))}

    # ----- search -----------------------------------------------------------------------
    def new_state_index(self) -> "MtmIndex":
        """The token index's ranks with the multi-tile kernel (:class:`MtmIndex`)."""
        return MtmIndex(self)

    def default_heuristic(self) -> str:
        """The strongest bound offered: ``patterns`` (walking distance and projections of
        tile groups) up to 12 cells, ``walking`` (walking distance with multi-tile moves)
        up to 16, else ``manhattan`` (each axis' Manhattan distance over its longest move)."""
        from .mtm_search import PATTERN_MAX_CELLS

        if self.n_cells <= PATTERN_MAX_CELLS:
            return "patterns"
        return "walking" if self.walking_partitions() else "manhattan"

    def fast_bound(self) -> str:
        """``manhattan``: built at once on any size."""
        return "manhattan"

    def conflict_lines(self) -> list[list[int]]:
        """None: one multi-tile move can undo a conflict on its line, so the single-tile
        linear-conflict bound does not hold."""
        return []

    def search_problem(self, heuristic: str = "walking", deadline: float | None = None):
        """The IDA* problem of ``manhattan``, ``walking`` or ``patterns``
        (:class:`~puzzlespace.families.mtm_search.MtmSearchProblem`), built once per puzzle
        object and bound."""
        if heuristic not in MTM_HEURISTICS:
            raise PuzzleError(f"unknown heuristic {heuristic!r} for {self.spec}: choose one of "
                              f"{', '.join(MTM_HEURISTICS)} (the single-tile bounds count one tile a move)")
        if heuristic not in self._problems:
            from .mtm_search import PATTERN_MAX_CELLS, MtmSearchProblem, pattern_groups

            if heuristic == "patterns" and self.n_cells > PATTERN_MAX_CELLS:
                raise PuzzleError(f"patterns is offered up to {PATTERN_MAX_CELLS} cells; {self.spec} has "
                                  f"{self.n_cells}: use walking or manhattan")
            groups = pattern_groups(SlidingPuzzle.pattern_order(self), self.goal) if heuristic == "patterns" else []
            self._problems[heuristic] = MtmSearchProblem.build(
                self.width, self.height, self.goal, self.walking_partitions() if heuristic != "manhattan" else [],
                groups)
        return self._problems[heuristic]

    def line_rays(self) -> list[list[list[int]]]:
        """Per cell, its lines out (:func:`line_rays`): what ``pdb:...`` builds split
        pattern databases from (:mod:`puzzlespace.pdb.split`)."""
        return line_rays(self.width, self.height)

    def split_pattern_problem(self, spaces: Sequence, tables: np.ndarray):
        """The IDA* problem of the walking bound and the split pattern databases ``tables``
        of ``spaces`` (:func:`~puzzlespace.families.mtm_search.line_pattern_problem`)."""
        from .mtm_search import line_pattern_problem

        return line_pattern_problem(self, spaces, tables)

    def fast_solution(self, start: State) -> list[int]:
        """The single-tile constructive solution with its runs along a line merged."""
        return merge_walk(self.width, start.index(0), SlidingPuzzle.fast_solution(self, start))

    def shorten(self, start: State, moves: Sequence[int]) -> list[int]:
        """The single-tile shortening of the moves' walk, merged, where that has fewer moves."""
        b = start.index(0)
        shorter = merge_walk(self.width, b, SlidingPuzzle.shorten(self, start, walk_cells(self.width, b, moves)))
        return shorter if len(shorter) < len(moves) else list(moves)


def column_moves(width: int, height: int) -> list[list[tuple[int, int]]]:
    """Per blank cell ``b``, its moves along its column as single-tile moves ``(from,
    to)``: up, then down, nearest first, each one going on from where the one before it
    left the blank (``from != b``): the move of ``k`` cells is the ``k``-th of its way."""
    n = width * height
    out = []
    for b in range(n):
        moves = []
        for way in (-width, width):
            at = b
            while 0 <= at + way < n:
                moves.append((at, at + way))
                at += way
        out.append(moves)
    return out


def row_jumps(width: int, height: int) -> np.ndarray:
    """Per blank cell, the rank changes ``k`` of its moves of two cells or more along its
    row (``k`` cells right, ``-k`` left), padded with 0 to the longest list."""
    jumps = [[u - b for u in cells if u // width == b // width and abs(u - b) > 1]
             for b, cells in enumerate(line_moves(width, height))]
    most = max(map(len, jumps))
    return np.array([j + [0] * (most - len(j)) for j in jumps], dtype=np.int64).reshape(len(jumps), most)


class MtmIndex(TokenIndex):
    """The token index of a sliding board (same ranks, same layout, same kernel,
    :func:`~puzzlespace.families.token_index.expand_groups`) with the multi-tile moves:
    moves of one cell along a row are its rank steps, longer ones its jumps
    (:func:`row_jumps`), and a move of ``k`` cells along a column is listed as ``k``
    single-tile moves, each continuing the one before (:func:`column_moves`)."""

    def __init__(self, puzzle: SlidingMtmPuzzle):
        super().__init__(puzzle)
        self._columns = column_moves(puzzle.width, puzzle.height)
        self._jumps = row_jumps(puzzle.width, puzzle.height)
        self.max_degree = self._jumps.shape[1] + puzzle.height - 1

    def kernel_moves(self) -> tuple:
        """The column moves of :func:`column_moves` (from where each starts) and the row
        moves of :func:`row_jumps`."""
        sptr = np.zeros(self.n + 1, dtype=np.int64)
        sptr[1:] = np.cumsum([len(c) for c in self._columns])
        pairs = [pair for moves in self._columns for pair in moves] or [(0, 0)]
        sources, sadj = (np.array(x, dtype=np.int64) for x in zip(*pairs))
        return sptr, sadj, sources, self._jumps
