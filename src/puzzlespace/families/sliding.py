"""Sliding-tile puzzles ``WxH``: the 8-, 11-, 15-, 24-puzzle and every rectangle.

A token puzzle on the W x H grid graph (cells row-major from 0). Positions may separate
rows with ``/``. Moves are shown as the tiles moved and as blank directions U/D/L/R.
``WxH:mtm`` counts a row or column of tiles slid at once as one move
(:mod:`puzzlespace.families.sliding_mtm`); ``WxH:stm`` is ``WxH``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import PuzzleError
from ..graphs import Graph
from ..positions import board_size, check_arrangement, check_row_lengths, is_board_size, parse_numbers
from .base import Family, State, register_family
from .tokens import TokenPuzzle

MAX_CELLS = 400
#: Default pattern-database partitions, as goal cells, for the blank home in the top-left
#: corner (mirrored for the other corners). 4x4, 6-6-3: the left two columns' top three
#: rows and cell 12, the right two columns' top three rows, the rest of the bottom row.
#: 5x5, 6-6-6-6: four compact blocks. Compact blocks keep tiles that interact in one
#: group, so each lookup counts more of their moves than row-major groups do (the node
#: counts are in docs/benchmarks.md).
CORNER_BLOCKS = {
    4: ([1, 4, 5, 8, 9, 12], [2, 3, 6, 7, 10, 11], [13, 14, 15]),
    5: ([1, 2, 5, 6, 7, 12], [3, 4, 8, 9, 13, 14], [10, 11, 15, 16, 20, 21], [17, 18, 19, 22, 23, 24]),
}
#: Largest board offered the walking-distance bound (its abstract spaces grow fast:
#: 24,964 states per partition on 4x4; larger boards use other bounds).
WALKING_MAX_CELLS = 16


def grid_graph(width: int, height: int) -> Graph:
    edges = []
    for r in range(height):
        for c in range(width):
            v = r * width + c
            if c + 1 < width:
                edges.append((v, v + 1))
            if r + 1 < height:
                edges.append((v, v + width))
    return Graph(width * height, tuple(edges))


class SlidingPuzzle(TokenPuzzle):
    """The ``width`` x ``height`` sliding-tile puzzle (W columns, H rows, both >= 2)."""

    family = "sliding"
    #: How moves are counted: ``stm``, one tile a move (``mtm``: :mod:`~puzzlespace.families.sliding_mtm`).
    metric = "stm"

    def __init__(self, width: int, height: int, goal: State | None = None):
        if width < 2 or height < 2:
            raise PuzzleError(f"sliding puzzles need at least 2 columns and 2 rows, got {width}x{height}")
        if width * height > MAX_CELLS:
            raise PuzzleError(f"sliding {width}x{height} is too large (at most {MAX_CELLS} cells)")
        self.width, self.height = width, height
        self.spec = f"sliding:{width}x{height}"
        super().__init__(grid_graph(width, height), goal)

    def with_goal(self, goal: State) -> "SlidingPuzzle":
        return SlidingPuzzle(self.width, self.height, goal)

    def parse_position(self, text: str, what: str = "position") -> State:
        rows = parse_numbers(text, what)
        check_row_lengths(rows, self.width, what)
        return check_arrangement([v for r in rows for v in r], self.n_cells, what)

    def format_position(self, state: State) -> str:
        w = self.width
        return "/".join(" ".join(map(str, state[r * w : (r + 1) * w])) for r in range(self.height))

    def draw(self, state: State) -> str:
        cell = len(str(self.n_cells - 1))
        w = self.width
        return "\n".join(
            " ".join(str(t).rjust(cell) if t else ".".rjust(cell) for t in state[r * w : (r + 1) * w])
            for r in range(self.height)
        )

    figure_shape = "square"
    figure_edges = False
    how_to_move = ("Click a tile next to the empty place to slide it there, or press the arrow key "
                   "of the way it slides.")

    def move_way(self, state: State, move: int) -> str:
        """The way the tile goes: to the blank, the opposite of the blank's ``directions``."""
        return {-self.width: "up", self.width: "down", -1: "left", 1: "right"}[state.index(0) - move]

    def say_move(self, state: State, move: int) -> str:
        """``slide 5 up``: the tile clicked and the way it goes."""
        return f"slide {state[move]} {self.move_way(state, move)}"

    def places(self) -> list[tuple[float, float]]:
        """The grid: cell (row r, column c) at (c, r)."""
        return [(float(v % self.width), float(v // self.width)) for v in range(self.n_cells)]

    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """``tiles`` (the tile moved) and ``directions`` (the way the blank moves)."""
        notes = super().move_notations(path, moves)
        names = {-self.width: "U", self.width: "D", -1: "L", 1: "R"}
        notes["directions"] = [names[m - path[i].index(0)] for i, m in enumerate(moves)]
        return notes

    def metric_lengths(self, start: State, moves: Sequence[int]) -> dict[str, int]:
        """``single-tile`` (one move a tile) and ``multi-tile``: the moves with each run
        along one line merged (:func:`~puzzlespace.families.grid_lines.merge_walk`)."""
        from .grid_lines import merge_walk

        return {"single-tile": len(moves), "multi-tile": len(merge_walk(self.width, start.index(0), moves))}

    def fast_solution(self, start: State) -> list[int]:
        """Line by line from the outside in (:mod:`puzzlespace.families.sliding_fast`):
        milliseconds up to 20 x 20."""
        from .sliding_fast import constructive_walk

        return [int(v) for v in constructive_walk(self.width, self.height, start, self.goal)[1:]]

    def shorten(self, start: State, moves: Sequence[int]) -> list[int]:
        """Every window of the moves replaced by an optimal one between its ends where
        that is shorter (:func:`~puzzlespace.families.sliding_fast.shortened_walk`)."""
        from .sliding_fast import shortened_walk

        walk = np.array([start.index(0), *moves], np.int32)
        return [int(v) for v in shortened_walk(self.width, self.height, start, walk)[1:]]

    def conflict_lines(self) -> list[list[int]]:
        """Rows and columns: the linear-conflict bound (Hansson, Mayer & Yung 1992) holds on them."""
        w, h = self.width, self.height
        return [list(range(r * w, (r + 1) * w)) for r in range(h)] + [
            list(range(c, w * h, w)) for c in range(w)
        ]

    def walking_partitions(self) -> list[list[int]]:
        """Rows and columns (Takahashi's walking distance): a move crosses rows or columns, never both."""
        if self.n_cells > WALKING_MAX_CELLS:
            return []
        w = self.width
        return [[v // w for v in range(self.n_cells)], [v % w for v in range(self.n_cells)]]

    def symmetries(self) -> list[list[int]]:
        """The reflection about the main diagonal, on square boards."""
        w = self.width
        if w != self.height:
            return []
        return [[(v % w) * w + v // w for v in range(self.n_cells)]]

    def pattern_order(self) -> list[int]:
        """Along the shorter side first: row-major, or column-major on boards wider than
        tall, so that ``pdb:6-5`` on 4x3 takes two 2x3 blocks and ``pdb:7-8`` on 4x4 the
        top and bottom halves."""
        w, h = self.width, self.height
        if w <= h:
            return list(range(self.n_cells))
        return [r * w + c for c in range(w) for r in range(h)]

    def default_heuristic(self) -> str:
        """Up to 9 cells the classic ``walking`` bound; larger boards pattern databases
        while their tables total at most :data:`~puzzlespace.pdb.heuristic.DEFAULT_MAX_ENTRIES`
        entries (beyond that ``linear-conflict``):
        on 4x4 and 5x5 with the blank's goal in a corner the blocks of
        :data:`CORNER_BLOCKS`, else ``pdb:SIZES`` (4x3: ``pdb:6-5``, 4x4: ``pdb:6-6-3``,
        5x5: ``pdb:6-6-6-6``)."""
        from ..pdb.heuristic import default_pdb

        if self.n_cells <= 9:
            return "walking"
        blocks = self._corner_blocks()
        if blocks:
            return "pdb:" + "/".join(",".join(str(self.goal[c]) for c in b) for b in blocks)
        return default_pdb(self.n_cells) or "linear-conflict"

    def _corner_blocks(self) -> list[list[int]] | None:
        """:data:`CORNER_BLOCKS` mirrored so that their blank corner is the goal's, or None."""
        w = self.width
        if w != self.height or w not in CORNER_BLOCKS:
            return None
        r, c = divmod(self.goal.index(0), w)
        if r not in (0, w - 1) or c not in (0, w - 1):
            return None

        def image(cell: int) -> int:
            y, x = divmod(cell, w)
            return (w - 1 - y if r else y) * w + (w - 1 - x if c else x)

        return [[image(v) for v in block] for block in CORNER_BLOCKS[w]]


def load_sliding(args: str) -> SlidingPuzzle:
    """The puzzle ``WxH`` or ``WxH:METRIC`` names: ``stm`` (the default: a move slides one
    tile) or ``mtm`` (a move slides every tile between the blank and a cell of its row or
    column, :mod:`puzzlespace.families.sliding_mtm`)."""
    size, _, metric = args.partition(":")
    metric = metric.strip().lower() or "stm"
    if metric == "stm":
        return SlidingPuzzle(*board_size(size, "sliding"))
    if metric == "mtm":
        from .sliding_mtm import SlidingMtmPuzzle

        return SlidingMtmPuzzle(*board_size(size, "sliding"))
    raise PuzzleError(f"unknown metric {metric!r} in sliding:{args.strip()}: use stm (one tile a move, the "
                      "default) or mtm (a row or column of tiles a move)")


def is_sliding_name(name: str) -> bool:
    """Whether ``name`` reads as ``WxH`` or ``WxH:stm`` / ``WxH:mtm``."""
    size, colon, metric = name.partition(":")
    return is_board_size(size) and (not colon or metric.strip().lower() in ("stm", "mtm"))


register_family(Family("sliding", "sliding:WxH[:mtm] (or WxH[:mtm])", load_sliding, bare=is_sliding_name))
