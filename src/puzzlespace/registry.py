"""Puzzle names and the families behind them: ``FAMILY:ARGS`` (``sliding:4x3``, ``jump:5:1,3``).

A family registers itself with :func:`~puzzlespace.families.base.register_family` (the
built-in ones as :func:`families` first imports them); a family from another
package plugs in through the entry-point group ``puzzlespace.families``, each entry point
naming a :class:`~puzzlespace.families.base.Family`. Nothing else (the CLI, the
algorithms) needs to know the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import PuzzleError
from .families.base import _FAMILIES, Family, register_family

if TYPE_CHECKING:  # pragma: no cover
    from .families.base import Puzzle

__all__ = ["ENTRY_POINTS", "Family", "families", "load_puzzle", "register_family", "syntax"]

#: The entry-point group through which other packages add families.
ENTRY_POINTS = "puzzlespace.families"


_LOADED = [False]


def families() -> list[Family]:
    """Every known family: the built-in ones (in :data:`~puzzlespace.families.BUILT_IN`'s
    order, whichever was imported first), then those of installed packages' entry points."""
    from .families import BUILT_IN

    if not _LOADED[0]:
        _LOADED[0] = True
        from importlib import import_module

        for module in BUILT_IN:  # each registers its family as it is imported
            import_module(f".families.{module}", __package__)
        for entry in _entry_points():
            family = entry.load()
            if not isinstance(family, Family):
                raise TypeError(f"entry point {entry.name!r} of {ENTRY_POINTS!r} names no puzzlespace Family")
            register_family(family)
    first = [_FAMILIES[name] for name in BUILT_IN if name in _FAMILIES]
    return first + [f for f in _FAMILIES.values() if f not in first]


def _entry_points():
    from importlib.metadata import entry_points

    return entry_points(group=ENTRY_POINTS)


def syntax() -> str:
    """How puzzles are named, for help and error messages."""
    known = [f.syntax for f in families()]
    return ", ".join(known[:-1]) + f" or {known[-1]}" if len(known) > 1 else "".join(known)


def load_puzzle(name: str, goal: str | None = None) -> "Puzzle":
    """The puzzle called ``name``, with ``goal`` (a position text) if given.

    Raises
    ------
    PuzzleError
        On an unknown family, a malformed or impossible size, an unreadable graph file,
        or a malformed goal.
    """
    name = name.strip()
    prefix, colon, args = name.partition(":")
    known = {f.name: f for f in families()}
    family = known.get(prefix.lower()) if colon else None
    if family is None:
        family = next((f for f in known.values() if f.bare is not None and f.bare(name)), None)
        args = name
    if family is None:
        raise PuzzleError(f"unknown puzzle {name!r}: use {syntax()}")
    puzzle = family.load(args)
    if goal is not None:
        puzzle = puzzle.with_goal(puzzle.parse_goal(goal))
    return puzzle
