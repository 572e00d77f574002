"""Puzzle families. Each knows its rules; see :class:`~puzzlespace.families.base.Puzzle`.

The built-in families register themselves as their modules are imported, which
:func:`puzzlespace.registry.families` does (in the order help and error messages list
them); the names below are loaded on first use, so that the contracts in
:mod:`~puzzlespace.families.base` cost no family's imports.
"""

from ..lazy import lazy_exports

#: The built-in families' modules, in the order they register.
BUILT_IN = ("sliding", "jump", "graph", "flip")

_EXPORTS = {"Position": "base", "Puzzle": "base", "State": "base", "Verdict": "base", "FlipPuzzle": "flip",
            "GraphPuzzle": "graph", "JumpPuzzle": "jump", "SlidingPuzzle": "sliding", "TokenPuzzle": "tokens"}

__all__ = list(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS, globals())
