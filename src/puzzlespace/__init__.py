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

from ._version import __version__
from .lazy import lazy_exports

#: Public names, loaded on first use (so that ``import puzzlespace`` is quick and the
#: command can answer Ctrl-C while it loads).
_EXPORTS = {
    "PuzzleError": "errors", "SearchStopped": "errors", "Undecided": "errors", "Unsolvable": "errors",
    "FlipPuzzle": "families", "Position": "families", "GraphPuzzle": "families", "JumpPuzzle": "families", "Puzzle": "families",
    "SlidingPuzzle": "families", "TokenPuzzle": "families", "Verdict": "families",
    "load_puzzle": "registry", "Solution": "solver", "solve": "solver",
    "count_optimal": "optimal", "optimal_solutions": "optimal",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
