"""Optimal path counts: for every position, how many shortest move sequences join it and
the goal (its number of optimal solutions), counted over a depth-mod-3 table.

A position at depth ``d + 1`` is reached in one move from each of its neighbours at depth
``d`` and from no other position, so its count is the sum of theirs (the goal's is 1).
:func:`count_paths` adds them up layer by layer, each layer's positions listed from the
layer before (a neighbour whose entry is one more, mod 3, is one move farther), the
neighbours listed by the index's compiled kernel. Counts are kept as 64-bit integers;
one that would pass ``2**64 - 1`` stops the count with :class:`CountOverflow`, never
wraps. Memory per state: 8 bytes (the counts), beside the table's 2 bits, and 8 bytes per
position of the two largest consecutive layers (their ranks).

A count file (:func:`save`, :func:`load`) sits beside its tablebase (:func:`counts_path`)
and is bound to it by the tablebase's checksum: a tablebase made again makes the old
counts unusable, never wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numba as nb
import numpy as np

from .. import datafile
from .._version import __version__
from ..bits import get2
from ..contracts import PuzzleRules as Puzzle, State, StateIndex
from ..errors import DamagedFile, PuzzleError
from .engine import NO_TABLE, kernel_failed, KERNEL_FAILED, kernel_of

MAGIC = b"PUZZLESPACE-PATHCOUNTS 1\n"
#: The largest count a position may have.
MAX_COUNT = 2**64 - 1
#: Bytes a state costs while its paths are counted (the counts), beside the table.
BYTES_PER_STATE = 8


class CountOverflow(PuzzleError):
    """A position has more optimal paths than a 64-bit count holds."""


def count_paths(index: StateIndex, table: np.ndarray, depth_counts: list[int], goal_rank: int) -> np.ndarray:
    """The number of optimal paths from the goal (rank ``goal_rank``) to every rank, as
    uint64 (0 for a rank not reached), from the depth-mod-3 ``table`` whose layers hold
    ``depth_counts`` positions. CountOverflow names the first depth where a count passes
    :data:`MAX_COUNT`."""
    counts = np.zeros(index.size, dtype=np.uint64)
    counts[goal_rank] = 1
    steps = index.rank_steps
    up, down = steps if steps is not None else (np.zeros(1, dtype=np.uint64), np.zeros(1, dtype=np.uint64))
    function, data, degree = kernel_of(index)
    widest = max(depth_counts)
    layer, following = np.array([goal_rank], dtype=np.int64), np.empty(widest, dtype=np.int64)
    out = np.empty(degree + 2, dtype=np.int64)
    for depth in range(1, len(depth_counts)):
        found = _next_layer(NO_TABLE, table, counts, layer, following, depth % 3, up, down, out, function, degree,
                            *data)
        if found == -1:
            raise RuntimeError(KERNEL_FAILED)
        if found == -2:
            raise CountOverflow(f"a position at depth {depth} has more than {MAX_COUNT:,} optimal paths: the "
                                "counts do not fit 64 bits")
        if found != depth_counts[depth]:
            raise PuzzleError(f"the table holds {found:,} positions at depth {depth}, not {depth_counts[depth]:,}: "
                              "it is not this puzzle's depth table")
        layer, following = np.sort(following[:found]), following
    return counts


@nb.njit(cache=True, nogil=True)
def _next_layer(no_table, table, counts, layer, following, value, up, down, out, kernel, degree, *data):
    """Add each position of ``layer``'s count to its neighbours whose entry is ``value``
    (one move farther), listing those neighbours in ``following`` as they are first met;
    returns how many, -1 if the kernel failed, -2 on an overflow. The kernel is given
    ``no_table`` (an empty table), so that it lists every neighbour."""
    one = np.empty(1, dtype=np.int64)
    found = 0
    for i in range(layer.shape[0]):
        rank = layer[i]
        one[0] = rank
        written = kernel(no_table, 0, one, 1, out, 1, data)
        if kernel_failed(written, 1, 1, degree):
            return -1
        for k in range(1, written + 2):
            if k < written:
                to = out[k]
            else:  # a rank step (see puzzlespace.bits.close_and_step): bit 2j of its word's mask
                j = rank & 31
                mask = up[(rank - j) % up.shape[0]] if k == written else down[(rank - j) % down.shape[0]]
                stepped = (mask >> np.uint64(2 * j)) & np.uint64(1)
                to = -1 if stepped == 0 else (rank + 1 if k == written else rank - 1)
            if to < 0 or get2(table, to) != value:
                continue
            before = counts[to]
            after = before + counts[rank]
            if after < before:
                return -2
            if before == 0:
                following[found] = to
                found += 1
            counts[to] = after
    return found


def record(puzzle: Puzzle, tablebase_file: Path, max_memory: int | None = None) -> Path:
    """Count the optimal paths of every position of the tablebase at ``tablebase_file``
    and write them beside it (:func:`counts_path`), which is returned. PuzzleError,
    before counting, when the table, the counts and the two largest layers would pass
    ``max_memory`` (default: the memory available now)."""
    from ..resources import available_memory, human
    from .tablebase import load

    index = puzzle.state_index()
    need = index.size // 4 + BYTES_PER_STATE * index.size
    limit = available_memory() if max_memory is None else max_memory
    if need > limit:
        raise PuzzleError(f"counting the optimal paths of {puzzle.spec} needs about {human(need)} of memory "
                          f"({BYTES_PER_STATE} bytes a position, beside its table) but "
                          f"{human(limit)} is {'allowed' if max_memory else 'available'}")
    table = load(tablebase_file, puzzle)
    counts = count_paths(index, table.table, table.depth_counts, index.rank(puzzle.goal))
    target = counts_path(tablebase_file)
    try:
        save(target, puzzle, index, counts, table.sha256)
    except OSError as exc:
        raise PuzzleError(f"cannot write the path counts {str(target)!r}: {exc.strerror or exc}") from None
    return target


def counts_path(tablebase: Path) -> Path:
    """Where the counts of the tablebase file ``tablebase`` are kept: beside it, ``.counts`` added."""
    return tablebase.with_name(tablebase.name + ".counts")


def save(path: Path, puzzle: Puzzle, index: StateIndex, counts: np.ndarray, tablebase_sha256: str) -> None:
    """Write ``counts`` (uint64 per rank, little-endian) with a header binding them to the
    tablebase whose data's checksum is ``tablebase_sha256``."""
    data = counts.astype("<u8", copy=False)
    header = {"puzzle": puzzle.identity, "goal": list(puzzle.goal), "scheme": index.scheme, "size": index.size,
              "tablebase_sha256": tablebase_sha256, "version": __version__, "sha256": datafile.digest(data.data)}
    datafile.write(path, MAGIC, header, lambda: [data.view(np.uint8)])


@dataclass
class PathCounts:
    """The loaded optimal path counts of a puzzle and goal."""

    index: StateIndex
    counts: np.ndarray

    def count(self, state: State) -> int:
        """The number of optimal solutions of ``state`` (0: not reachable)."""
        return int(self.counts[self.index.rank(state)])


def beside(table, tablebase_file: Path | None = None) -> PathCounts | None:
    """The counts kept beside the tablebase file ``tablebase_file`` (default: the
    puzzle's in the cache), loaded as ``table``; None when there are none (they were
    not made, or were made for a tablebase since made again)."""
    from ..cache import tablebase_path

    path = counts_path(Path(tablebase_file) if tablebase_file else tablebase_path(table.puzzle))
    if not path.exists():
        return None
    try:
        return load(path, table.puzzle, table.sha256)
    except PuzzleError as exc:
        if isinstance(exc, DamagedFile):
            raise DamagedFile(f"{exc}; count them again with 'puzzlespace explore {table.puzzle.spec} "
                              "--save ... --counts'") from None
        return None


def load(path: Path, puzzle: Puzzle, tablebase_sha256: str) -> PathCounts:
    """Read and verify the counts at ``path`` for ``puzzle``, made from the tablebase whose
    data's checksum is ``tablebase_sha256``. DamagedFile for a damaged file; PuzzleError
    for one of another puzzle or another tablebase."""
    index = puzzle.state_index()
    where = f"path counts {str(path)!r}"
    with datafile.open_data(path, MAGIC, "path counts") as (header, f):
        for key, want in (("puzzle", puzzle.identity), ("goal", list(puzzle.goal)), ("scheme", index.scheme),
                          ("size", index.size), ("tablebase_sha256", tablebase_sha256)):
            if header.get(key) != want:
                raise PuzzleError(datafile.not_for(where, key, header.get(key), want))
        data = np.fromfile(f, dtype="<u8", count=index.size)
        extra = f.read(1)
    if len(data) != index.size or extra:
        raise DamagedFile(f"{where} is truncated or overlong ({len(data):,}{'+' if extra else ''} of "
                          f"{index.size:,} counts)")
    if datafile.digest(data.data) != header.get("sha256"):
        raise DamagedFile(f"{where} is corrupt (checksum mismatch)")
    return PathCounts(index, data.astype(np.uint64, copy=False))
