"""How a position looks: the small description a family gives and one renderer draws.

A family's :meth:`~puzzlespace.families.base.Puzzle.figure` returns a :class:`Figure`:
the places of the position (spots, in board units, y down), what each shows, the edges
between places and marks for a move. :mod:`puzzlespace.render` turns any figure into SVG;
it knows no family, and the families know no SVG.
"""

from __future__ import annotations

from dataclasses import dataclass

#: What a spot shows, as a role the renderer colours: a numbered piece, the empty place,
#: or one of the two faces of a two-coloured cell.
FILLS = ("piece", "empty", "dark", "light")
SHAPES = ("square", "circle")


@dataclass(frozen=True)
class Spot:
    """One place of the board: its centre (``x``, ``y``, in board units, y down), its
    ``shape`` (one of :data:`SHAPES`), its ``label`` ("" for none) and ``fill`` (one of
    :data:`FILLS`)."""

    x: float
    y: float
    shape: str
    label: str
    fill: str


@dataclass(frozen=True)
class Mark:
    """A move drawn on the position it is made from: ``kind`` ``"move"`` is an arrow from
    ``spots[0]`` to ``spots[1]`` (a piece going to the empty place), ``"line"`` an outline
    round ``spots`` (a line about to be turned over)."""

    kind: str
    spots: tuple[int, ...]


@dataclass(frozen=True)
class Figure:
    """A position as drawn: ``spots`` (one per cell, in cell order), ``edges`` between
    spots (pairs of indices) drawn as lines, and ``marks``."""

    spots: tuple[Spot, ...]
    edges: tuple[tuple[int, int], ...] = ()
    marks: tuple[Mark, ...] = ()


def side_by_side(pictures: list[str], labels: list[str], width: int = 100) -> str:
    """Text pictures of boards side by side, each under its label, in rows at most
    ``width`` characters wide."""
    blocks = [[lab] + pic.splitlines() for lab, pic in zip(labels, pictures)]
    col = max(len(line) for b in blocks for line in b) + 3
    per_row = max(1, width // col)
    rows = []
    for i in range(0, len(blocks), per_row):
        chunk = blocks[i : i + per_row]
        height = max(map(len, chunk))
        rows.append("\n".join(
            "".join((b[k] if k < len(b) else "").ljust(col) for b in chunk).rstrip() for k in range(height)
        ))
    return "\n\n".join(rows)
