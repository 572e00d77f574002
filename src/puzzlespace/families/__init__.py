"""Puzzle families. Each knows its rules; see :class:`~puzzlespace.families.base.Puzzle`.

Importing this package registers the built-in families (see :mod:`puzzlespace.registry`),
in the order help and error messages list them.
"""

from .base import Position, Puzzle, State, Verdict
from .sliding import SlidingPuzzle  # isort: skip  (registration order)
from .jump import JumpPuzzle  # isort: skip
from .graph import GraphPuzzle  # isort: skip
from .flip import FlipPuzzle  # isort: skip
from .tokens import TokenPuzzle

__all__ = ["Position", "Puzzle", "State", "Verdict", "FlipPuzzle", "GraphPuzzle", "JumpPuzzle", "SlidingPuzzle", "TokenPuzzle"]
