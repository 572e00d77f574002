"""puzzlespace: solve combinatorial puzzles optimally and map their whole state space.

Quick start::

    >>> import puzzlespace as ps
    >>> p = ps.load_puzzle("3x3")
    >>> start = p.parse_position("8 6 7/2 5 4/3 0 1")
    >>> p.check(start).solvable
    True
    >>> ps.solve(p, start).length
    31
"""

from .errors import PuzzleError, SearchStopped, Undecided, Unsolvable
from .families import FlipPuzzle, GraphPuzzle, JumpPuzzle, Puzzle, SlidingPuzzle, TokenPuzzle, Verdict
from .registry import load_puzzle
from .solver import Solution, solve

from ._version import __version__

__all__ = [
    "__version__",
    "FlipPuzzle", "GraphPuzzle", "JumpPuzzle", "Puzzle", "SlidingPuzzle", "TokenPuzzle", "Verdict",
    "PuzzleError", "SearchStopped", "Undecided", "Unsolvable", "Solution", "load_puzzle", "solve",
]
