"""Puzzle names: ``sliding:WxH`` (or ``WxH``), ``jump:N[:D1,D2,...]``, ``graph:FILE``, ``flip:WxH``."""

from __future__ import annotations

import re

from .errors import PuzzleError
from .families import FlipPuzzle, GraphPuzzle, JumpPuzzle, Puzzle, SlidingPuzzle

_SIZE = re.compile(r"([0-9]{1,6})x([0-9]{1,6})")


def _size(text: str, family: str) -> tuple[int, int]:
    m = _SIZE.fullmatch(text.strip().lower())
    if not m:
        raise PuzzleError(f"{family} size {text!r} is not of the form WxH (e.g. 4x3)")
    return int(m.group(1)), int(m.group(2))


def _jump(rest: str) -> JumpPuzzle:
    parts = rest.split(":")
    if len(parts) > 2 or not re.fullmatch(r"[0-9]{1,6}", parts[0].strip()):
        raise PuzzleError(f"jump puzzle {('jump:' + rest)!r} is not of the form jump:N or jump:N:D1,D2,...")
    distances = (1, 2)
    if len(parts) == 2:
        words = [w for w in re.split(r"[,\s]+", parts[1].strip()) if w]
        if not words:
            raise PuzzleError("the distance set is empty")
        if not all(re.fullmatch(r"[0-9]{1,6}", w) for w in words):
            raise PuzzleError(f"distances {parts[1]!r} must be positive whole numbers")
        distances = tuple(int(w) for w in words)
    return JumpPuzzle(int(parts[0]), distances)


def load_puzzle(name: str, goal: str | None = None) -> Puzzle:
    """The puzzle called ``name``, with ``goal`` (a position text) if given.

    Raises
    ------
    PuzzleError
        On an unknown family, a malformed or impossible size, an unreadable graph file,
        or a malformed goal.
    """
    name = name.strip()
    family, _, rest = name.partition(":")
    family = family.lower()
    if not rest and _SIZE.fullmatch(family):
        family, rest = "sliding", name
    if family == "sliding":
        puzzle: Puzzle = SlidingPuzzle(*_size(rest, "sliding"))
    elif family == "flip":
        puzzle = FlipPuzzle(*_size(rest, "flip"))
    elif family == "jump":
        puzzle = _jump(rest)
    elif family == "graph":
        if not rest:
            raise PuzzleError("graph puzzles are named graph:FILE")
        puzzle = GraphPuzzle.from_file(rest)
    else:
        raise PuzzleError(
            f"unknown puzzle {name!r}: use sliding:WxH (or WxH), jump:N[:D1,D2,...], graph:FILE or flip:WxH"
        )
    if goal is not None:
        puzzle = puzzle.with_goal(puzzle.parse_goal(goal))
    return puzzle
