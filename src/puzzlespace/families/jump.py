"""Line-jump puzzles: N pieces and one empty cell on a line of N+1 cells.

A piece moves into the empty cell from any distance in the allowed set (default {1, 2}:
step, or jump over one piece). It is the token puzzle on the graph joining cells ``i``
and ``i + d`` for every allowed ``d``.
"""

from __future__ import annotations

import re
from typing import Sequence

from ..errors import PuzzleError
from ..graphs import Graph
from .base import Family, State, register_family
from .tokens import TokenPuzzle

MAX_PIECES = 200


class JumpPuzzle(TokenPuzzle):
    """``pieces`` pieces on a line of ``pieces + 1`` cells, moving by the given distances."""

    family = "jump"

    def __init__(self, pieces: int, distances: Sequence[int] = (1, 2), goal: State | None = None):
        if not 1 <= pieces <= MAX_PIECES:
            raise PuzzleError(f"jump puzzles need 1..{MAX_PIECES} pieces, got {pieces}")
        dset = sorted(set(distances))
        if not dset:
            raise PuzzleError("the distance set is empty")
        cells = pieces + 1
        for d in dset:
            if d < 1:
                raise PuzzleError(f"distance {d} is not positive")
            if d >= cells:
                raise PuzzleError(f"distance {d} does not fit a line of {cells} cells")
        self.pieces, self.distances = pieces, tuple(dset)
        self.spec = f"jump:{pieces}:{','.join(map(str, dset))}"
        edges = tuple((i, i + d) for d in dset for i in range(cells - d))
        super().__init__(Graph(cells, edges), goal)

    def with_goal(self, goal: State) -> "JumpPuzzle":
        return JumpPuzzle(self.pieces, self.distances, goal)

    def draw(self, state: State) -> str:
        cell = len(str(self.pieces))
        return "[" + " ".join(str(t).rjust(cell) if t else ".".rjust(cell) for t in state) + "]"

    figure_edges = False  # a move's arc shows the jump
    how_to_move = ("Click a piece an allowed distance from the empty cell to move it there, "
                   "over any pieces between.")

    def places(self) -> list[tuple[float, float]]:
        """The line: cell i at (i, 0)."""
        return [(float(i), 0.0) for i in range(self.n_cells)]

    def move_notations(self, path: Sequence[State], moves: Sequence[int]) -> dict[str, list]:
        """``tiles`` (piece moved) and ``jumps`` (``"3:4>2"``: piece 3 from cell 4 to cell 2)."""
        notes = super().move_notations(path, moves)
        notes["jumps"] = [f"{path[i][m]}:{m}>{path[i].index(0)}" for i, m in enumerate(moves)]
        return notes


def from_name(args: str) -> JumpPuzzle:
    """``N`` or ``N:D1,D2,...`` (the text after ``jump:``) as a puzzle."""
    parts = args.split(":")
    if len(parts) > 2 or not re.fullmatch(r"[0-9]{1,6}", parts[0].strip()):
        raise PuzzleError(f"jump puzzle {('jump:' + args)!r} is not of the form jump:N or jump:N:D1,D2,...")
    distances: tuple[int, ...] = (1, 2)
    if len(parts) == 2:
        words = [w for w in re.split(r"[,\s]+", parts[1].strip()) if w]
        if not words:
            raise PuzzleError("the distance set is empty")
        if not all(re.fullmatch(r"[0-9]{1,6}", w) for w in words):
            raise PuzzleError(f"distances {parts[1]!r} must be positive whole numbers")
        distances = tuple(int(w) for w in words)
    return JumpPuzzle(int(parts[0]), distances)


register_family(Family("jump", "jump:N[:D1,D2,...]", from_name))
