"""Puzzle families. Each knows its rules; see :class:`~puzzlespace.families.base.Puzzle`."""

from .base import Puzzle, State, Verdict
from .flip import FlipPuzzle
from .graph import GraphPuzzle
from .jump import JumpPuzzle
from .sliding import SlidingPuzzle
from .tokens import TokenPuzzle

__all__ = ["Puzzle", "State", "Verdict", "FlipPuzzle", "GraphPuzzle", "JumpPuzzle", "SlidingPuzzle", "TokenPuzzle"]
