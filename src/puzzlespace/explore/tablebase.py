"""Tablebases: the depth (mod 3) of every position, 2 bits each, read without search.

File layout: the magic line ``PUZZLESPACE-TABLEBASE 1\\n``, an 8-byte little-endian
header length, a JSON header (puzzle, goal, scheme, size, depth_counts, version,
sha256 of the data), then the packed table (``ceil(size / 4)`` bytes: entry ``i`` in
bits ``2*(i%4)`` of byte ``i//4``; 0..2 = depth mod 3, 3 = not reachable).

Depth mod 3 is enough to walk down: a position's neighbours are one move nearer, as
near, or one move farther, and those three depths differ mod 3, so the neighbour whose
entry is one less (mod 3) is one move nearer the goal.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import datafile
from .._version import __version__
from ..errors import DamagedFile, PuzzleError
from ..contracts import PuzzleRules as Puzzle, State
from ..bits import get2, value_counts

MAGIC = b"PUZZLESPACE-TABLEBASE 1\n"


def save(path: str | Path, puzzle: Puzzle, index, table, depth_counts: list[int]) -> None:
    """Write ``table`` (the 2-bit depth-mod-3 table of ``puzzle``) with its header.

    ``table``: an array, or a function that gives its parts in rank order (arrays whose
    lengths add up to the table's, read twice: once for the checksum, once to write), so
    a table that does not fit in memory can be written from its segments.
    """
    path = Path(path)
    size = (index.size + 3) // 4

    def parts():
        left = size
        for part in (table() if callable(table) else [table]):
            yield part[:left]
            left -= len(part[:left])

    header = {
        "puzzle": puzzle.identity, "goal": list(puzzle.goal), "scheme": index.scheme, "size": index.size,
        "depth_counts": depth_counts, "version": __version__, "sha256": datafile.digest_parts(parts()),
    }
    datafile.write(path, MAGIC, header, parts)


def check_consistent(table: np.ndarray, size: int, depth_counts: list[int]) -> bool:
    """Whether a depth-mod-3 table holds exactly the positions its depth counts say (see
    :func:`holds_depths`)."""
    return holds_depths(value_counts(table, size), depth_counts)


def holds_depths(found: list[int], depth_counts: list[int]) -> bool:
    """Whether a depth-mod-3 table whose entries hold 0, 1, 2 and 3 as many times as
    ``found`` says holds the positions ``depth_counts`` says: for each residue r, as many
    entries r as positions at depths d = r (mod 3), the rest 3."""
    want = [sum(depth_counts[r::3]) for r in range(3)]
    return found[:3] == want and found[3] == sum(found) - sum(depth_counts)


@dataclass
class Tablebase:
    """A loaded tablebase for one puzzle and goal."""

    puzzle: Puzzle
    index: object
    table: np.ndarray
    depth_counts: list[int]
    sha256: str  #: the checksum of the table's data, as the file's header holds it

    def entry(self, state: State) -> int:
        return int(get2(self.table, self.index.rank(state)))

    def descend(self, state: State) -> list[int]:
        """Moves of an optimal solution, read from the table (no search)."""
        if self.entry(state) == 3:
            raise PuzzleError("the position is not reachable from the goal (the table marks it unreached)")
        moves = []
        limit = len(self.depth_counts)
        while state != self.puzzle.goal:
            want = (self.entry(state) - 1) % 3
            for m, t in self.puzzle.successors(state):
                if self.entry(t) == want:
                    moves.append(m)
                    state = t
                    break
            else:
                raise PuzzleError("the tablebase is inconsistent: no neighbour is one move nearer")
            if len(moves) > limit:
                raise PuzzleError("the tablebase is inconsistent: the descent does not end")
        return moves

    def distance(self, state: State) -> int:
        return len(self.descend(state))


def load(path: str | Path, puzzle: Puzzle, remake: str = "make it again with explore --save") -> Tablebase:
    """Read and verify a tablebase for ``puzzle`` (same puzzle, goal and hash scheme).

    Raises DamagedFile, ending with ``remake`` (the fix), for a damaged file; PuzzleError
    for one that cannot be read or is for another puzzle.
    """
    try:
        return _load(Path(path), puzzle)
    except DamagedFile as exc:
        raise DamagedFile(f"{exc}; {remake}") from None


def _load(path: Path, puzzle: Puzzle) -> Tablebase:
    index = puzzle.state_index()
    with datafile.open_data(path, MAGIC, "tablebase") as (header, f):
        for key, want in (("puzzle", puzzle.identity), ("goal", list(puzzle.goal)), ("scheme", index.scheme),
                          ("size", index.size)):
            if header.get(key) != want:
                raise PuzzleError(datafile.not_for(f"tablebase {str(path)!r}", key, header.get(key), want))
        where = f"tablebase {str(path)!r}"
        counts = datafile.require_counts(header, "depth_counts", index.size, where)
        expected = (index.size + 3) // 4
        data = np.fromfile(f, dtype=np.uint8, count=expected)
        extra = f.read(1)
    if len(data) != expected or extra:
        raise DamagedFile(f"{where} is truncated or overlong ({len(data):,}{'+' if extra else ''} of "
                          f"{expected:,} bytes)")
    if datafile.digest(data.data) != header.get("sha256"):
        raise DamagedFile(f"{where} is corrupt (checksum mismatch)")
    if counts[0] != 1 or not check_consistent(data, index.size, counts):
        raise DamagedFile(f"{where} is corrupt (its depth counts do not match its table)")
    return Tablebase(puzzle, index, data, counts, header["sha256"])
