"""Text forms of positions: the parsing every family shares.

A position is written as numbers separated by white space or commas, rows optionally
separated by ``/`` (``"0 3 2 1/8 7 6 5/4 11 10 9"``). Flip boards use letters instead,
see :mod:`puzzlespace.families.flip`.
"""

from __future__ import annotations

import re

from .errors import PuzzleError

_SEPARATORS = re.compile(r"[\s,]+")
#: A whole number as puzzlespace reads it: ASCII digits, at most 18 of them, optionally signed.
_WHOLE = re.compile(r"[+-]?[0-9]{1,18}")


def whole_number(word: str, what: str) -> int:
    """``word`` as an int; PuzzleError naming ``what`` unless it is a plain whole number
    (ASCII digits, at most 18, so no text can make a number of thousands of digits)."""
    if not _WHOLE.fullmatch(word):
        raise PuzzleError(f"{what}: {word[:30]!r} is not a whole number" + (" (too long)" if len(word) > 18 else ""))
    return int(word)


_BOARD = re.compile(r"([0-9]{1,6})x([0-9]{1,6})")


def board_size(text: str, family: str) -> tuple[int, int]:
    """``"WxH"`` (case-insensitive) as (W, H); PuzzleError naming ``family`` otherwise."""
    m = _BOARD.fullmatch(text.strip().lower())
    if not m:
        raise PuzzleError(f"{family} size {text!r} is not of the form WxH (e.g. 4x3)")
    return int(m.group(1)), int(m.group(2))


def is_board_size(text: str) -> bool:
    """Whether ``text`` reads as ``WxH``."""
    return _BOARD.fullmatch(text.strip().lower()) is not None


def split_rows(text: str, what: str) -> list[str]:
    """Split ``text`` at ``/`` into rows; empty text or an empty row is an error."""
    if not text.strip():
        raise PuzzleError(f"{what} is empty")
    rows = [r.strip() for r in text.strip().split("/")]
    if any(not r.strip(", ") for r in rows):
        raise PuzzleError(f"{what} has an empty row between '/' separators")
    return rows


def parse_numbers(text: str, what: str) -> list[list[int]]:
    """Parse numbered cells, returning one list per ``/``-separated row."""
    rows = []
    for row in split_rows(text, what):
        cells = []
        for word in _SEPARATORS.split(row.strip(" ,")):
            cells.append(whole_number(word, what))
        rows.append(cells)
    return rows


def check_arrangement(values: list[int], n: int, what: str) -> tuple[int, ...]:
    """Check that ``values`` is an arrangement of ``0..n-1`` (0 = blank) and return it."""
    if len(values) != n:
        raise PuzzleError(f"{what} has {len(values)} cells, expected {n}")
    seen: set[int] = set()
    for v in values:
        if not 0 <= v < n:
            raise PuzzleError(f"{what}: {v} is out of range (tokens are 0..{n - 1}, 0 is the blank)")
        if v in seen:
            raise PuzzleError(f"{what}: {v} appears more than once")
        seen.add(v)
    return tuple(values)


def check_row_lengths(rows: list[list], width: int, what: str) -> None:
    """When rows were separated by ``/``, each must hold exactly ``width`` cells."""
    if len(rows) > 1:
        for i, row in enumerate(rows):
            if len(row) != width:
                raise PuzzleError(f"{what}: row {i + 1} has {len(row)} cells, expected {width}")
