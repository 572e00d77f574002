"""Lines of the W x H grid (cells row-major from 0) and the multi-tile moves along them:
a move is the cell the blank goes to, in its row or column, the tiles between sliding one
cell each. Plain Python, for what runs once a solution (naming, replaying, merging);
the compiled searches build their tables from these.
"""

from __future__ import annotations

from typing import Sequence

from .base import State


def line_rays(width: int, height: int) -> list[list[list[int]]]:
    """Per cell, the cells of its column and row in each direction (up, down, left,
    right), nearest first."""
    out = []
    for b in range(width * height):
        r, c = divmod(b, width)
        out.append([[b - j * width for j in range(1, r + 1)], [b + j * width for j in range(1, height - r)],
                    [b - j for j in range(1, c + 1)], [b + j for j in range(1, width - c)]])
    return out


def line_moves(width: int, height: int) -> list[list[int]]:
    """Per blank cell, the cells the blank can move to: every other cell of its row and its
    column, nearest first in each direction (up, down, left, right)."""
    return [[u for ray in rays for u in ray] for rays in line_rays(width, height)]


def line_step(width: int, blank: int, move: int) -> tuple[int, int]:
    """(step, k): the blank going from ``blank`` to ``move`` (same row or column) goes ``k``
    cells of ``step`` (``+-1`` along a row, ``+-width`` along a column)."""
    if blank // width == move // width:
        step = 1 if move > blank else -1
    else:
        step = width if move > blank else -width
    return step, (move - blank) // step


def slide(width: int, state: State, move: int) -> State:
    """``state`` after the blank goes to ``move`` along its row or column."""
    s = list(state)
    b = s.index(0)
    step, k = line_step(width, b, move)
    for j in range(1, k + 1):
        s[b + (j - 1) * step] = s[b + j * step]
    s[move] = 0
    return tuple(s)


def merge_walk(width: int, blank: int, cells: Sequence[int]) -> list[int]:
    """The blank's walk ``cells`` (each next to the one before, the first next to
    ``blank``) as multi-tile moves: every run of moves along one line made one move, a run
    that ends where it began dropped (so runs either side of it may join)."""
    moves: list[tuple[int, int]] = []  # (cell the blank left, cell it went to)
    at = blank
    for cell in cells:
        if moves and _same_line(width, moves[-1][0], cell):
            begin = moves.pop()[0]
            if begin != cell:
                moves.append((begin, cell))
        else:
            moves.append((at, cell))
        at = cell
    return [to for _, to in moves]


def _same_line(width: int, a: int, b: int) -> bool:
    """Whether cells ``a`` and ``b`` share a row or a column: for the start ``a`` of a
    move and the end ``b`` of the single-tile move after it, whether both go along one
    line (a turn leaves both row and column)."""
    return a // width == b // width or a % width == b % width


def walk_cells(width: int, blank: int, moves: Sequence[int]) -> list[int]:
    """The multi-tile ``moves`` from a blank on ``blank`` as the cells the blank enters one
    at a time (single-tile moves)."""
    cells = []
    for move in moves:
        step, k = line_step(width, blank, move)
        cells += [blank + j * step for j in range(1, k + 1)]
        blank = move
    return cells
