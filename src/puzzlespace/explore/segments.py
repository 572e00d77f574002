"""Exploration by segments: the rank range cut into contiguous parts, one in memory at a time.

The reference is :func:`puzzlespace.explore.engine.explore`, which keeps the whole 2-bit
table in memory; this engine gives the same per-layer counts, antipodes and tablebase
bytes with only one segment's table in memory, the others in files (out of core), so a
puzzle whose table does not fit the memory budget can still be explored.

A *pass* over layer ``d`` visits every segment once, in rank order. For a segment it:

1. merges the marks that other segments sent it in the previous pass (states of layer
   ``d``), applies the index's rank steps from layer ``d - 1`` and closes that layer
   (the steps never leave a segment: segments start at multiples of the chunk
   alignment); layer ``d`` is then complete in the segment, and is counted (and recorded
   in the tablebase);
2. expands layer ``d`` with the engine's walk (the kernel is given the segment's part of
   the table, see :func:`~puzzlespace.explore.engine.expand_span`): marks that land in
   the segment are merged at once (layer ``d + 1``), the others are sent to their
   segments for the next pass, sorted by target.

Layer ``d - 1``'s states of each segment are kept (up to the antipode limit) before it is
closed: when layer ``d`` turns out empty, they are the antipodes. Memory: one segment's
table (and its tablebase part), the mark buffers and the marks in flight; the segment
tables themselves are 2 bits per state, in files when ``out_dir`` is given.

Files (with ``out_dir``): ``seg-<k>-<s>.bin`` (segment ``k``'s table in its slot ``s``,
0 or 1: a pass that changes the segment writes the slot the last complete pass does not
name, in place, and only the blocks that may differ from what it held), ``tb-<k>-<s>.bin`` (its tablebase part), ``sent-<d>-<k>.bin`` (marks for
segment ``k`` from pass ``d``, in packed blocks: :mod:`~puzzlespace.explore.packing`) or
``bits-<d>-<k>.bin`` (the same as a bitmap: see :class:`BitmapStore`) and
``manifest.json``, switched atomically after each
complete pass (every file synced first) and carrying the CRC-32 of every file it names,
and its own SHA-256; ``resume`` counts the segment tables against it
(:func:`check_resumed`), continues from it and checks each file as it reads it.
"""

from __future__ import annotations

import errno
import os
import zlib
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numba as nb
import numpy as np

from .._version import __version__
from ..bits import (BLOCK_BITS, CLOSED, MERGE_PREFETCH, close_and_step, close_layer, copy_layer,
                    first_in_layer, layer_value, mark_state, merge_marks, new_blocks, new_table, prefetch, set2,
                    table_bytes, value_counts)
from ..contracts import PuzzleRules as Puzzle
from ..compiled import watch
from ..datafile import not_for
from ..errors import PuzzleError
from ..resources import current_rss, human, peak_rss
from . import checkpoint
from .engine import (ExploreResult, buffer_sizes, check_all_reached, chunk_spans, expand_chunks, expand_ranks,
                     kernel_of, load_walk, new_buffers, refuse_to_replace_checkpoint)
from .head import Head, first_layers, head_budget
from .packing import pack_marks, read_blocks, unpack_marks, write_block
from .tablebase import holds_depths

FORMAT = "puzzlespace-segments/2"
#: Marks in flight to other segments, kept in memory before they are appended to their files.
SENT_BUFFER = 1 << 20
#: How a pass keeps the marks it sends to other segments: ``packed`` (a list of ranks, one
#: or two bytes a mark, appended to files as they come: :class:`SegmentStore`) or
#: ``bitmap`` (a bit per state of the puzzle in memory, its parts written at the pass's
#: end: :class:`BitmapStore`).
MARKS = ("packed", "bitmap")


def bitmap_bytes(size: int) -> int:
    """Bytes of a bitmap of ``size`` ranks (a bit each)."""
    return -(-size // 8)


def disk_needed(size: int, tables: int, marks: str = "packed") -> int:
    """Bytes of disk the segment files of ``size`` ranks need: two copies of each of the
    ``tables`` tables, and room for the marks in flight, or for two passes' bitmaps and
    the marks they sent packed first."""
    return 2 * tables * table_bytes(size) + (4 * SENT_BUFFER * 8 if marks == "packed" else 3 * bitmap_bytes(size))


def _check_disk(out: Path, size: int, tables: int, marks: str) -> None:
    """Refuse a run whose segment files (:func:`disk_needed`) would not fit the disk of
    ``out``; files there already count as free."""
    need = disk_needed(size, tables, marks)
    free = checkpoint.disk_room(out)
    if need > free:
        raise PuzzleError(f"the segment files need about {human(need)} of disk in {str(out)!r} but only {human(free)} "
                          "is free; choose another --out")


def empty_dir(out: Path) -> None:
    """Make ``out``, with no checkpoint data files in it (another process may remove them
    too); other files stay."""
    out.mkdir(parents=True, exist_ok=True)
    for path in checkpoint.data_files(out):
        path.unlink(missing_ok=True)


@contextmanager
def file_errors(out: Path | None, depth: Callable[[], int], marks: str | None):
    """An I/O error on the segment files (a full disk, a file gone) ends the run with one
    line saying which layer's checkpoint is intact (and, for a full disk with the
    ``marks`` packed where they could be a bitmap, not None, that a bitmap of them takes
    at most a bit per state)."""
    try:
        yield
    except OSError as exc:
        last = depth() - 1
        room = ("free space" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "check the disk" if exc.errno
                else "free space or check the disk")  # a short write (NumPy's) says no more
        if exc.errno == errno.ENOSPC and marks == "packed":
            room = "free space (or bound the marks between segments by a bit per state: --marks bitmap)"
        then = (f"the checkpoint of layer {last} is intact: {room} and continue with --resume" if last >= 0
                else f"{room} and run it again")
        raise PuzzleError(f"could not read or write the segment files in {str(out)!r} ({exc.strerror or exc}); "
                          f"{then}") from None


def segments_to_fit(index, threads: int, tables: int, max_memory: int, marks: str = "packed") -> int:
    """The fewest segments with which a run keeps this process within ``max_memory`` bytes
    (see :func:`memory_needed`), its largest segment as :func:`segment_bounds` cuts it.
    Raises PuzzleError when no number of segments fits."""
    fixed = memory_needed(index, threads, tables, 0, marks)
    align = segment_align(index)
    fits = (max_memory - fixed) // tables // 8 * 32 // align * align  # the most ranks a segment may hold
    if fits <= 0:
        raise PuzzleError(f"exploring in segments needs more than --max-memory {human(max_memory)} (the program and "
                          f"its buffers take about {human(fixed)}); raise it")
    return -(-index.size // fits)


def memory_needed(index, threads: int, tables: int, span: int, marks: str = "packed") -> int:
    """The bytes a run by segments whose largest segment holds ``span`` ranks keeps this
    process within: the program itself, with all the code a pass runs loaded, and 32 MiB
    for what the allocator keeps; one segment's ``tables`` 2-bit tables, the mark buffers
    and the marks in flight (three times :data:`SENT_BUFFER` ranks: those held, and the
    arrays that gather and sort a target's to pack them), and with ``bitmap`` marks (see
    :data:`MARKS`) the pass's bitmap."""
    load_code(index)  # counted in the program's memory below
    buffered, ranks = buffer_sizes(index)
    in_flight = 3 * SENT_BUFFER * 8 + (bitmap_bytes(index.size) if marks == "bitmap" else 0)
    return (current_rss() + 2 * threads * (buffered + ranks) * 8 + in_flight + (32 << 20)
            + (table_bytes(span) * tables if span else 0))


def load_code(index) -> None:
    """Load the compiled code a run runs (the walk, and the head's listing of neighbours;
    merging, routing, packing and bitmaps of marks; closing, stepping and copying a
    layer, and finding its first states), compiled or read from numba's cache, by
    running each on empty inputs, so that memory measured after it counts it."""
    load_walk(index)
    table, blocks, none = new_table(64), new_blocks(64), np.empty(0, dtype=np.int64)
    expand_ranks(kernel_of(index), none, np.empty(1, dtype=np.int64))
    set2(table, 0, layer_value(0))
    merge_marks(table, none, 0, 1, blocks)
    merge_inside(table, none, 0, 64, 1, blocks, none)
    partition_marks(none, none, none, np.zeros(1, dtype=np.int64))
    unpack_marks(pack_marks(none))
    set_bits(np.empty(0, dtype=np.uint8), none)
    ranks_of_bits(np.empty(0, dtype=np.uint8), 0, none)
    close_layer(table, 0, 64, 1, blocks)
    if index.rank_steps is not None:
        close_and_step(table, 0, 64, 1, blocks, 2, blocks, *index.rank_steps, True)
    copy_layer(table, 0, 64, 1, new_table(64), 0)
    first_in_layer(table, 0, 64, 1, blocks, none)


@dataclass
class Segment:
    """Segment ``k``: ranks ``[lo, hi)``."""

    k: int
    lo: int
    hi: int


#: The arrays of a store that is not packing marks (see :meth:`SegmentStore.flush`).
_NOT_PACKING = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


class SegmentStore:
    """Where segment tables, the marks sent between segments and per-segment counts live
    between visits. Files named by a resumed checkpoint are checked against its CRC-32
    as they are read; files this run wrote are trusted to the system until the next
    resume."""

    def __init__(self, out_dir: Path | None, keep_table: bool):
        self.dir, self.keep_table = out_dir, keep_table
        self.segments: list[Segment] = []  # set once known (a resumed checkpoint names them)
        self.tables: dict[tuple[str, int], np.ndarray] = {}
        self.sent: dict[int, list[np.ndarray]] = {}  # marks for segment k, for the next pass
        self.sent_bytes = 0
        self.sent_crc: dict[int, int] = {}
        # A target's marks gathered to be packed, and the scratch of their sort: made at a
        # pass's first packing (grown as needed) and let go at its end, so that the many
        # packings of a large pass allocate nothing of their size.
        self.packing = _NOT_PACKING
        self.files: dict[str, str] = {}  # file name -> CRC-32: the last complete pass
        self.unchecked: set[str] = set()  # files of a resumed checkpoint, not read yet
        self.carried: dict[int, int] = {}  # states of the next layer merged into segment k in this pass
        self.slot: dict[int, int] = {}  # which of segment k's two files the last complete pass names
        self.sizes: dict[int, int] = {}  # states of this pass's layer in segment k
        # Segment k's block flags (one byte per 65,536 states, kept in memory): the blocks
        # that may hold its states of the last pass's layer and of the next layer. A
        # segment without them (a fresh or resumed run) is scanned whole.
        self.flags: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        # Per (role, segment): the blocks its last write may have changed (None: unknown).
        # A segment's writes alternate between its two files, so the file a write replaces
        # differs from the table only in those blocks and the ones this write changed.
        self.last_changed: dict[tuple[str, int], np.ndarray | None] = {}

    def load(self, role: str, k: int, size: int) -> np.ndarray:
        """Segment ``k``'s table (``role`` seg) or tablebase part (tb), as last kept."""
        if self.dir is None:
            return self.tables[(role, k)]
        name = f"{role}-{k}-{self.slot.get(k, 1)}.bin"
        path = self.dir / name  # a plain file: anything else (a pipe) is refused, not read
        data = np.fromfile(path, dtype=np.uint8) if path.is_file() else np.empty(0, dtype=np.uint8)
        if len(data) != table_bytes(size) or (name in self.unchecked and _crc(data) != self.files[name]):
            raise PuzzleError(f"segment file {str(self.dir / name)!r} is missing, truncated or corrupt; "
                              f"{checkpoint.RERUN}")
        self.unchecked.discard(name)
        return data

    def keep(self, role: str, k: int, table: np.ndarray, changed: np.ndarray | None = None) -> None:
        """Write segment ``k``'s table or tablebase part to its other file (the one the
        last complete pass does not name), in place. ``changed`` (block flags: the blocks
        this visit may have changed) lets it write only the blocks in which that file
        may differ from ``table``; without it, or without the last write's, everything
        is written."""
        if self.dir is None:
            self.tables[(role, k)] = table
            return
        slot = self.next_slot[k] = 1 - self.slot.get(k, 1)
        name = f"{role}-{k}-{slot}.bin"
        path = self.dir / name
        before = self.last_changed.get((role, k))
        now = None if changed is None else changed != 0  # a copy: the caller's flags change later
        with open(path, "r+b" if path.exists() else "wb") as f:
            if now is None or before is None or os.fstat(f.fileno()).st_size != len(table):
                table.tofile(f)
                f.truncate()
            else:
                write_blocks(f, table, before | now)
        self.next_files[name] = _crc(table)
        self.last_changed[(role, k)] = now

    def send_others(self, marks: np.ndarray, starts: np.ndarray) -> None:
        """Send ``marks`` (global ranks outside the segment visited) to their segments
        (segment ``k`` starts at ``starts[k - 1]``)."""
        grouped = np.empty(len(marks), dtype=np.int64)
        offsets = np.zeros(len(starts) + 2, dtype=np.int64)
        partition_marks(marks, starts, grouped, offsets)
        for k in range(len(starts) + 1):
            if offsets[k + 1] > offsets[k]:
                self.send(k, grouped[offsets[k]:offsets[k + 1]])
        self.flush()

    def send(self, k: int, marks: np.ndarray) -> None:
        self.sent.setdefault(k, []).append(marks)
        self.sent_bytes += marks.nbytes

    def received(self, s: Segment, depth: int) -> Iterator[np.ndarray]:
        """The marks sent to segment ``s`` in pass ``depth - 1`` (global ranks), a part at a
        time: kept in memory, or in its file of that pass, packed or a bitmap (a resumed
        run reads either, whichever way it sends). A resumed file that fails its checksum
        raises PuzzleError before any of it is read."""
        yield from self.inbox.pop(s.k, [])
        for name in _sent_names(s.k, depth - 1):
            if self.dir is not None and name in self.files:
                yield from self._read_sent(name, s)

    def _read_sent(self, name: str, s: Segment) -> Iterator[np.ndarray]:
        path = self.dir / name
        corrupt = f"segment file {str(path)!r} is corrupt; {checkpoint.RERUN}"
        if not path.is_file():
            raise PuzzleError(f"segment file {str(path)!r} is missing; {checkpoint.RERUN}")
        if name in self.unchecked and file_crc(path) != self.files[name]:
            raise PuzzleError(corrupt)  # checked whole first: nothing damaged is ever decoded
        self.unchecked.discard(name)
        with open(path, "rb") as f:
            if name.startswith("bits-"):
                size = bitmap_bytes(s.hi - s.lo)
                if os.fstat(f.fileno()).st_size != size:
                    raise PuzzleError(corrupt)
                pieces = (np.fromfile(f, dtype=np.uint8, count=BITMAP_RUN) for _ in range(0, size, BITMAP_RUN))
                yield from bitmap_ranks(pieces, s.lo)
                return
            try:
                for block in read_blocks(f):
                    yield unpack_marks(block)
            except ValueError:
                raise PuzzleError(corrupt) from None

    def flush(self, everything: bool = False) -> None:
        """Deliver the marks in memory, packed by target segment (all of them, or when
        there are many: called as they come, so that they never hold more than
        ``SENT_BUFFER`` marks), unless :meth:`delivers` says they stay in memory as they
        are, for the next pass."""
        if not self.delivers() or not (everything or self.sent_bytes > SENT_BUFFER * 8):
            return
        sent, self.sent, self.sent_bytes = self.sent, {}, 0
        for k, parts in sent.items():
            self.deliver(k, self._packed(parts))
        if everything:
            self.packing = _NOT_PACKING

    def _packed(self, parts: list[np.ndarray]) -> np.ndarray:
        """The ranks of ``parts`` packed, gathered and sorted in the pass's arrays for it."""
        count = sum(len(part) for part in parts)
        if len(self.packing[0]) < count:
            self.packing = (np.empty(count, dtype=np.int64), np.empty(count, dtype=np.int64))
        gathered, scratch = self.packing[0][:count], self.packing[1][:count]
        np.concatenate(parts, out=gathered)
        return pack_marks(gathered, scratch)

    def delivers(self) -> bool:
        """Whether marks for other segments are delivered packed (to files), or kept."""
        return self.dir is not None

    def deliver(self, k: int, block: np.ndarray) -> None:
        """Append a packed block of marks for segment ``k`` to its file of this pass."""
        with open(self.dir / f"sent-{self.depth}-{k}.bin", "ab") as f:
            self.sent_crc[k] = write_block(f, block, self.sent_crc.get(k, 0))

    def begin(self, depth: int) -> None:
        """Start pass ``depth``: marks sent and states carried in the last pass come in."""
        self.depth = depth
        self.inbox, self.sent, self.sent_bytes, self.sent_crc = self.sent, {}, 0, {}
        self.carried_in, self.carried = self.carried, {}
        self.sizes_before, self.sizes = self.sizes, {}
        self.next_files, self.next_slot = {}, {}
        self.drop_unfinished(depth)

    def drop_unfinished(self, depth: int) -> None:
        """Remove the marks a pass ``depth`` interrupted before had sent."""
        if self.dir is not None:
            for kind in ("sent", "bits"):
                for old in self.dir.glob(f"{kind}-{depth}-*.bin"):
                    old.unlink()

    def untouched(self, k: int, depth: int) -> bool:
        """Whether pass ``depth`` leaves segment ``k`` as it is: no state of the layer
        before (to close), none of this layer (carried or sent) and so none to expand."""
        return not (self.carried_in.get(k) or self.sizes_before.get(k) or self.inbox.get(k)
                    or any(name in self.files for name in _sent_names(k, depth - 1)))

    def keep_as_is(self, k: int) -> None:
        """Segment ``k``'s files stay those of the last complete pass."""
        if self.dir is not None:
            self.next_slot[k] = self.slot.get(k, 1)
            for role in ("seg", "tb") if self.keep_table else ("seg",):
                name = f"{role}-{k}-{self.next_slot[k]}.bin"
                if name in self.files:
                    self.next_files[name] = self.files[name]

    def discard(self) -> None:
        """Drop the files that the last complete pass does not name (the next pass's, which
        found no state)."""
        if self.dir is not None:
            for path in checkpoint.data_files(self.dir):
                if self.owns(path.name) and path.name not in self.files:
                    path.unlink(missing_ok=True)

    def owns(self, name: str) -> bool:
        """Whether the checkpoint file ``name`` in the directory is this store's to remove: any."""
        return True

    def commit(self, depth: int, manifest: dict) -> None:
        """End pass ``depth``: name its files (and the counts the next pass needs) in the
        manifest, then drop the older files."""
        if self.dir is None:
            return
        self.flush(everything=True)
        for k, check in self.sent_crc.items():
            self.next_files[f"sent-{depth}-{k}.bin"] = crc_text(check)
        os.sync()  # every file of the pass on disk before the manifest names them (one call, not one a file)
        checkpoint.write_manifest(self.dir, dict(manifest, files=self.next_files, carried=_listed(self.carried),
                                                 sizes=_listed(self.sizes)))
        self.files = self.next_files
        self.slot.update(self.next_slot)
        for path in [*self.dir.glob("sent-*.bin"), *self.dir.glob("bits-*.bin")]:
            if path.name not in self.files:
                path.unlink()


class BitmapStore(SegmentStore):
    """A :class:`SegmentStore` that, once a pass has sent more marks to other segments
    than ``packed_share`` of a bitmap's bytes (packed, as :class:`SegmentStore` sends
    them), keeps the rest of the pass's marks as a bit per rank of the puzzle
    (``size / 8`` bytes in memory, allocated untouched, so only the pages that receive
    marks become resident): a state costs its bit however many moves reach it, so a
    pass writes at most a bit per state (and the packed marks before the switch), at its
    end (``bits-<d>-<k>.bin``: segment ``k``'s part, with holes where it has no mark).
    For puzzles where many moves cross segments, whose packed marks would outgrow the
    disk; a pass with few marks costs what it costs packed."""

    #: Marks a pass sends packed before it switches to the bitmap, as a share of the
    #: bitmap's bytes (a packed mark takes a byte or more).
    packed_share = 0.25

    def __init__(self, out_dir: Path | None, keep_table: bool, size: int):
        super().__init__(out_dir, keep_table)
        self.size = size
        self.marked = 0  # marks sent to other segments in this pass
        self.bits: np.ndarray | None = None  # this pass's marks after the switch
        self.bits_in: np.ndarray | None = None  # the last pass's, without files

    def send_others(self, marks: np.ndarray, starts: np.ndarray) -> None:
        self.marked += len(marks)
        if self.bits is None and self.marked <= self.packed_share * bitmap_bytes(self.size):
            super().send_others(marks, starts)
            return
        if self.bits is None:
            self.bits = np.zeros(bitmap_bytes(self.size), dtype=np.uint8)
        set_bits(self.bits, marks)

    def flush(self, everything: bool = False) -> None:
        """Deliver the packed marks (see :meth:`SegmentStore.flush`); at the pass's end
        (``everything``), with files, also write each segment's part of the bitmap that
        holds a mark, then let the bitmap go."""
        super().flush(everything)
        if not everything or self.dir is None or self.bits is None:
            return
        for s in self.segments:
            part = _part(self.bits, s)
            if not part.any():
                continue
            name = f"bits-{self.depth}-{s.k}.bin"
            with open(self.dir / name, "wb") as f:
                f.truncate(len(part))
                write_blocks(f, part, np.maximum.reduceat(part, np.arange(0, len(part), BITMAP_RUN)), BITMAP_RUN)
            self.next_files[name] = _crc(part)
        self.bits = None

    def begin(self, depth: int) -> None:
        super().begin(depth)
        self.bits_in, self.bits, self.marked = self.bits, None, 0

    def received(self, s: Segment, depth: int) -> Iterator[np.ndarray]:
        yield from super().received(s, depth)
        if self.bits_in is not None:
            part = _part(self.bits_in, s)
            yield from bitmap_ranks((part[at:at + BITMAP_RUN] for at in range(0, len(part), BITMAP_RUN)), s.lo)

    def untouched(self, k: int, depth: int) -> bool:
        if self.bits_in is not None and _part(self.bits_in, self.segments[k]).any():
            return False
        return super().untouched(k, depth)


def _part(bits: np.ndarray, s: Segment) -> np.ndarray:
    """Segment ``s``'s bytes of a bitmap of every rank (segments start at multiples of 8)."""
    return bits[s.lo // 8:s.lo // 8 + bitmap_bytes(s.hi - s.lo)]


#: Bytes of a bitmap of marks read or written at a time (the holes of its files are
#: runs of this many zero bytes).
BITMAP_RUN = 1 << 16


def bitmap_ranks(pieces: Iterable[np.ndarray], lo: int) -> Iterator[np.ndarray]:
    """The ranks whose bits are set in a bitmap given in consecutive ``pieces`` of at
    most ``BITMAP_RUN`` bytes (bit ``i`` of its byte ``j``: rank ``lo + 8 j + i``), in
    order, an array for each piece with a bit set."""
    at = 0
    for piece in pieces:
        out = np.empty(8 * len(piece), dtype=np.int64)
        count = ranks_of_bits(piece, lo + 8 * at, out)
        at += len(piece)
        if count:
            yield out[:count]


@nb.njit(cache=True, nogil=True)
def ranks_of_bits(bits, first, out):
    """Write ``first + i`` to ``out`` for every bit ``i`` set in ``bits`` (bit ``i % 8`` of
    byte ``i // 8``), in order; return how many."""
    count = 0
    for j in range(bits.shape[0]):
        byte = bits[j]
        if byte == 0:
            continue
        for i in range(8):
            if byte >> i & 1:
                out[count] = first + 8 * j + i
                count += 1
    return count


@nb.njit(cache=True, nogil=True)
def set_bits(bits, ranks):
    """Set bit ``r % 8`` of byte ``r // 8`` of ``bits`` for every rank ``r`` in ``ranks``."""
    for r in ranks:
        bits[r >> 3] |= np.uint8(1 << (r & 7))


def write_blocks(f, table: np.ndarray, dirty: np.ndarray, step: int = (1 << BLOCK_BITS) // 4) -> int:
    """Write the runs of ``table`` (bytes) whose blocks of ``step`` bytes (by default the
    bytes of a table block, 2 bits a state) are flagged in ``dirty`` to the same offsets
    of the open file ``f``; returns the bytes written."""
    blocks = np.flatnonzero(dirty)
    if not len(blocks):
        return 0
    cuts = np.flatnonzero(np.diff(blocks) > 1)
    written = 0
    for a, b in zip(blocks[np.r_[0, cuts + 1]].tolist(), (blocks[np.r_[cuts, len(blocks) - 1]] + 1).tolist()):
        lo, hi = a * step, min(b * step, len(table))
        if lo < hi:
            f.seek(lo)
            f.write(memoryview(table[lo:hi]))
            written += hi - lo
    return written


def file_crc(path: Path) -> str:
    """The CRC-32 of a file's bytes, as the manifest names it, read a part at a time."""
    check = 0
    with open(path, "rb") as f:
        while part := f.read(1 << 24):
            check = zlib.crc32(part, check)
    return crc_text(check)


def _crc(data: np.ndarray) -> str:
    """The CRC-32 of an array's bytes, as the manifest names it: it catches any burst of
    damage up to 32 bits and all but one in 2**32 others, and costs far less than SHA-256
    (the files are the run's own, not something received)."""
    return crc_text(zlib.crc32(data.data))


def crc_text(check: int) -> str:
    """A CRC-32 as a manifest names it."""
    return f"crc32:{check:08x}"


def _sent_names(k: int, depth: int) -> tuple[str, str]:
    """The files that may hold the marks sent to segment ``k`` in pass ``depth``: packed,
    or a bitmap."""
    return f"sent-{depth}-{k}.bin", f"bits-{depth}-{k}.bin"


def _listed(counts: dict[int, int]) -> dict[str, int]:
    return {str(k): int(v) for k, v in counts.items() if v}


def explore_segmented(
    puzzle: Puzzle,
    *,
    segments: int,
    threads: int | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    antipode_limit: int = 100,
    keep_table: bool = False,
    progress: Callable[[int, int, int, int], None] | None = None,
    force: bool = False,
    marks: str = "packed",
    head: int | None = None,
) -> ExploreResult:
    """Enumerate every position reachable from ``puzzle.goal`` with the table cut into
    about ``segments`` segments, one in memory at a time (in files under ``out_dir``, or
    in memory without it). Same result as :func:`~puzzlespace.explore.engine.explore`;
    ``progress(depth, segments done, segments, states so far)``.

    With ``out_dir``, every complete pass is a checkpoint and ``resume`` continues from
    it (with the segments it was made with); a fresh run refuses a directory holding a
    checkpoint of a layer or more (another run's, or this one's) unless ``force``.
    ``keep_table`` returns the tablebase: whole in memory, or as its segments' parts
    (``result.table`` a function) with ``out_dir``. ``marks`` says how a pass keeps the marks it sends to other
    segments (:data:`MARKS`); a resumed run may change it. A fresh run first explores the layers that hold at most
    ``head`` states in all (default :func:`~puzzlespace.explore.head.head_budget`; 0: the
    goal alone) in this process, as arrays of ranks, and seeds the segments with them
    (:mod:`~puzzlespace.explore.head`).
    """
    with watch(f"the exploration of {puzzle.spec}", "exploration") as compiles:
        index = puzzle.state_index()
        load_code(index)  # before the run's own time starts
        compiles.restart()
        threads = threads or os.cpu_count() or 1
        out = Path(out_dir) if out_dir is not None else None
        if marks not in MARKS:
            raise PuzzleError(f"marks are kept {' or '.join(MARKS)}, not {marks!r}")
        store = SegmentStore(out, keep_table) if marks == "packed" else BitmapStore(out, keep_table, index.size)
        segs, identity, (depth, counts, before) = prepare(puzzle, index, segments, out, resume, store, force, marks)
        starts = segment_starts(segs)
        if not resume:
            start = run_head(index, index.rank(puzzle.goal), starts, head)
            counts = start.counts
            with file_errors(out, lambda: depth, marks):  # no layer is saved until the seeded tables are
                store.begin(0)
                for s in segs:
                    seed_tables(s, start.within(s.lo, s.hi), store, keep_table)
                if out is not None:
                    store.commit(start.depth - 1, dict(identity, depth=start.depth - 1, depth_counts=counts,
                                                       seconds=compiles.elapsed(), version=__version__))
            depth = start.depth
            if progress:
                for d in range(depth):
                    progress(d, len(segs), len(segs), sum(counts[:d + 1]))
        kernel = kernel_of(index)
        buffers = new_buffers(index, threads)
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="puzzlespace-segments") as pool, \
                file_errors(out, lambda: depth, marks):
            if resume:
                check_resumed(out, counts, store.sizes, store.carried,
                              {s.k: resumed_values(s, store, keep_table) for s in segs})
            while True:
                store.begin(depth)
                layer, found, found_total = 0, [], 0
                for s in segs:
                    n, kept, total = visit(s, depth, index, kernel, store, keep_table, pool, buffers, starts,
                                           antipode_limit - len(found))
                    layer += n
                    found += kept
                    found_total += total
                    if progress:
                        progress(depth, s.k + 1, len(segs), sum(counts) + layer)
                if layer == 0:  # the layer before was the last: its states, kept as it was closed, are the antipodes
                    break
                counts.append(layer)
                store.commit(depth, dict(identity, depth=depth, depth_counts=counts,
                                         seconds=before + compiles.elapsed(), version=__version__))
                depth += 1
        store.discard()
        parts = lambda: (store.load("tb", s.k, s.hi - s.lo) for s in segs)  # noqa: E731
        tablebase = None if not keep_table else parts if out is not None else np.concatenate(list(parts()))
        return result_of(puzzle, index, counts, found, found_total, antipode_limit, (compiles.elapsed(), before),
                         peak_rss(), threads, tablebase, resume)


def result_of(puzzle: Puzzle, index, counts: list[int], found: list[int], found_total: int, antipode_limit: int,
              seconds: tuple[float, float], peak_memory: int, threads: int, tablebase, resumed: bool) -> ExploreResult:
    """The result of a run by segments (``resumed`` or not, see
    :func:`~puzzlespace.explore.engine.check_all_reached`) whose last layer was
    ``len(counts) - 1``, with the ranks ``found`` of its first antipodes; ``seconds``:
    this run's and the earlier runs' whose checkpoint it resumed."""
    check_all_reached(puzzle, counts, resumed)
    return ExploreResult(
        puzzle=puzzle.spec, goal=puzzle.goal, states=sum(counts), max_depth=len(counts) - 1, depth_counts=counts,
        antipode_count=int(found_total), antipodes=[index.unrank(int(r)) for r in found[:max(antipode_limit, 0)]],
        seconds=seconds[0], earlier_seconds=seconds[1], peak_memory_bytes=peak_memory, scheme=index.scheme,
        rank_space=index.size, threads=threads, table=tablebase,
    )


def segment_align(index) -> int:
    """What every segment's first rank is a multiple of: 64 of the index's groups."""
    return index.group * 64


def segment_bounds(index, segments: int) -> list[tuple[int, int]]:
    """The rank ranges of a run in about ``segments`` segments: equal, their starts
    multiples of :func:`segment_align` (so fewer where the ranks make fewer)."""
    return chunk_spans(index.size, segment_align(index), max(segments, 1))


def prepare(puzzle: Puzzle, index, segments: int, out: Path | None, resume: bool, store: SegmentStore, force: bool,
            marks: str = "packed", check: Callable[[list[Segment]], None] | None = None, disk: bool = True):
    """What a run by segments starts from: the segments (``segments`` equal, aligned rank
    ranges, or a resumed checkpoint's), the run's identity as its manifests name it, and
    (next depth, counts, seconds so far), with the resumed files and counts in ``store``.
    ``check(segments)`` may refuse the run before anything is changed; then a fresh run
    with ``out`` gets an empty checkpoint directory, whose disk must hold the segment
    files unless ``disk`` is False (they are kept elsewhere; and a resumed checkpoint's
    files must be there unless it is False) (see
    :func:`~puzzlespace.explore.engine.refuse_to_replace_checkpoint` for ``force``)."""
    if not resume and segments > checkpoint.MAX_SEGMENTS:
        raise PuzzleError(f"{segments:,} segments asked for; a run is cut into at most {checkpoint.MAX_SEGMENTS:,}")
    goal = list(puzzle.goal)
    run = {"format": FORMAT, "puzzle": puzzle.identity, "goal": goal, "scheme": index.scheme, "size": index.size,
           "tablebase": store.keep_table}
    manifest = _resumed_manifest(out, run) if resume else None
    bounds = _bounds(manifest, out, run["size"], segment_align(index)) if resume else segment_bounds(index, segments)
    segs = store.segments = [Segment(k, lo, hi) for k, (lo, hi) in enumerate(bounds)]
    if check is not None:
        check(segs)
    identity = dict(run, segments=[[s.lo, s.hi] for s in segs])
    if resume:
        resumed = _resume(manifest, out, store)
        if disk and store.files and not any((out / name).exists() for name in store.files):
            raise PuzzleError(f"none of the {len(store.files)} segment files the checkpoint in {str(out)!r} names is "
                              "there: if Dask workers that each keep them on their own disk made it, resume it on "
                              "those workers (--resume --scheduler ADDRESS, the same --out; see docs/scaling.md); "
                              f"else {checkpoint.RERUN}")
        return segs, identity, resumed
    if out is not None:
        if not force:
            refuse_to_replace_checkpoint(out, puzzle.identity, goal)
        if disk:
            _check_disk(out, index.size, 2 if store.keep_table else 1, marks)
        empty_dir(out)
        (out / checkpoint.MANIFEST).unlink(missing_ok=True)
    return segs, identity, (0, [], 0.0)


def segment_starts(segs: list[Segment]) -> np.ndarray:
    """The first ranks of the segments after the first (which starts at 0)."""
    return np.array([s.lo for s in segs[1:]], dtype=np.int64)


def run_head(index, goal: int, starts: np.ndarray, head: int | None) -> Head:
    """The head a fresh run by segments (starting at 0 and ``starts``) seeds its segments
    with: the layers from ``goal`` that hold at most ``head`` states in all (default
    :func:`~puzzlespace.explore.head.head_budget`)."""
    return first_layers(index, goal, head_budget(index.size) if head is None else head, starts)


def seed_tables(s: Segment, layers: list[np.ndarray], store: SegmentStore, keep_table: bool) -> None:
    """Keep segment ``s``'s first tables: as pass ``D = len(layers) - 1`` finds them, given
    its part of layers ``0..D`` (ranks, increasing; see :class:`~puzzlespace.explore.head.Head`): the
    layers before ``D - 1`` closed, ``D - 1`` still the frontier's value and ``D`` the
    next's, carried into the segment (counted in pass ``D``), and the block flags of
    those two; the tablebase part holds the layers before ``D``. Layer 0 alone (the
    goal) is the start of a run with no head."""
    span, depth = s.hi - s.lo, len(layers) - 1
    table = new_table(span)
    tablebase = new_table(span) if keep_table else None
    flags, older = [new_blocks(span), new_blocks(span)], new_blocks(span)  # layers depth - 1 and depth; the rest
    for d, ranks in enumerate(layers):
        part = ranks - s.lo
        blocks = flags[d - depth + 1] if d >= depth - 1 else older
        merge_marks(table, part, len(part), CLOSED if d < depth - 1 else layer_value(d), blocks)
        if tablebase is not None and d < depth:
            merge_marks(tablebase, part, len(part), d % 3, blocks)
        if d >= depth - 1 and len(part):
            (store.sizes if d < depth else store.carried)[s.k] = len(part)
    store.flags[s.k] = (flags[0], flags[1])
    store.keep("seg", s.k, table)
    del table
    if tablebase is not None:
        store.keep("tb", s.k, tablebase)


def visit(s: Segment, depth: int, index, kernel, store: SegmentStore, keep_table: bool, pool, buffers, starts,
           room: int) -> tuple[int, list[int], int]:
    """Pass ``depth`` over segment ``s`` (see the module docstring). Returns the size of
    layer ``depth`` in the segment, the states of layer ``depth - 1`` kept before closing
    it (up to ``room``) and how many it had."""
    span = s.hi - s.lo
    if store.untouched(s.k, depth):
        store.keep_as_is(s.k)
        return 0, [], 0
    table = store.load("seg", s.k, span)
    tablebase = store.load("tb", s.k, span) if keep_table else None
    last, frontier = store.flags.pop(s.k, None) or (new_blocks(span) + 1, new_blocks(span) + 1)
    now, before = layer_value(depth), layer_value(depth - 1)
    layer = store.carried_in.get(s.k, 0) + merge_sent(s, table, store.received(s, depth), now, frontier)
    kept, total = [], store.sizes_before.get(s.k, 0)
    if depth > 0:
        if room > 0 and total:
            found = np.empty(min(room, total), dtype=np.int64)
            kept = [s.lo + int(r) for r in found[:first_in_layer(table, 0, span, before, last, found)]]
        layer += _close(index, table, span, before, now, last, frontier)
    store.sizes[s.k] = layer
    if tablebase is not None:
        copy_layer(table, 0, span, now, tablebase, depth % 3)
    following = new_blocks(span)
    if layer:
        _expand_segment(s, table, depth, kernel, store, pool, buffers, starts, frontier, following, index)
    store.flags[s.k] = (frontier, following)
    changed = last | frontier | following  # closed, merged or stepped into, and marked: nothing else moves
    store.keep("seg", s.k, table, changed)
    if tablebase is not None:
        store.keep("tb", s.k, tablebase, frontier)  # the layer recorded is in the frontier's blocks
    return layer, kept, total


def merge_sent(s: Segment, table: np.ndarray, parts: Iterable[np.ndarray], value: int, flags: np.ndarray) -> int:
    """Merge the ranks sent to segment ``s`` (arrays of global ranks, shifted in place to
    the segment) as states of ``value``, flagging their blocks in ``flags``; returns the
    new states. A part with a rank outside the segment (a damaged file) raises
    PuzzleError before it is merged."""
    added = 0
    for marks in parts:
        if len(marks) and (marks.min() < s.lo or marks.max() >= s.hi):
            raise PuzzleError(f"marks sent to segment {s.k} fall outside it: its file is corrupt; "
                              f"{checkpoint.RERUN}")
        marks -= s.lo
        added += int(merge_marks(table, marks, len(marks), value, flags))
    return added


def _close(index, table: np.ndarray, span: int, before: int, now: int, last: np.ndarray,
           frontier: np.ndarray) -> int:
    """Apply the rank steps from the states of value ``before`` (in the blocks flagged in
    ``last``) and close them; return the states the steps added (flagged in ``frontier``)."""
    steps = index.rank_steps
    if steps is None:
        close_layer(table, 0, span, before, last)
        return 0
    return int(close_and_step(table, 0, span, before, last, now, frontier, steps[0], steps[1], True))


def _expand_segment(s: Segment, table, depth, kernel, store: SegmentStore, pool, buffers, starts, frontier,
                    following, index) -> None:
    """Expand layer ``depth`` of the segment (in the blocks flagged in ``frontier``) in
    parallel chunks, merging the marks that stay (flagged in ``following``) and sending
    the others to their segments as each buffer comes back."""
    new = layer_value(depth + 1)
    chunks = [(s.lo + a, s.lo + b) for a, b in chunk_spans(s.hi - s.lo, index.group * 64, 4 * len(buffers))]
    expand_chunks(pool, kernel, table, chunks, layer_value(depth), frontier, buffers,
                  lambda marks: _route(s, table, marks, new, store, starts, following), base=s.lo)


def _route(s: Segment, table, marks: np.ndarray, new: int, store: SegmentStore, starts: np.ndarray, every) -> None:
    """Merge the marks inside segment ``s`` (counting the new states); send the others
    to their segments, grouped by segment."""
    others = np.empty_like(marks)
    kept = merge_inside(table, marks, s.lo, s.hi, new, every, others)
    store.carried[s.k] = store.carried.get(s.k, 0) + int(kept[0])
    if kept[1]:
        store.send_others(others[:int(kept[1])], starts)


@nb.njit(cache=True, nogil=True)
def merge_inside(table, marks, lo, hi, value, blocks, others):
    """Merge the marks in ``[lo, hi)`` into ``table`` (which holds those ranks from
    ``lo``), as :func:`~puzzlespace.bits.merge_marks` does, and copy the others into
    ``others`` (room for all the marks), in order; return (states newly set, others
    copied). One loop: the branch on the segment is predicted well where few marks
    leave it, or leave it in runs (a sliding puzzle's, which leave it only when a move
    shifts a leading token)."""
    span = np.uint64(hi - lo)
    count = marks.shape[0]
    added = 0
    left = 0
    for j in range(count):
        if j + MERGE_PREFETCH < count:
            prefetch(table, (marks[j + MERGE_PREFETCH] - lo) >> 2)  # never faults, even outside the table
        i = marks[j] - lo
        if np.uint64(i) >= span:
            others[left] = marks[j]
            left += 1
            continue
        added += mark_state(table, i, value, blocks)
    return added, left


@nb.njit(cache=True, nogil=True)
def partition_marks(marks, starts, out, offsets):
    """Write ``marks`` into ``out`` grouped by segment (segment ``k`` holds the ranks from
    ``starts[k - 1]`` to ``starts[k]``), in order within each group; ``offsets[k]`` and
    ``offsets[k + 1]`` bound group ``k``. Two passes, no sort."""
    targets = np.searchsorted(starts, marks, side="right")
    for t in targets:
        offsets[t + 1] += 1
    for k in range(1, offsets.shape[0]):
        offsets[k] += offsets[k - 1]
    at = offsets[:-1].copy()
    for i in range(marks.shape[0]):
        t = targets[i]
        out[at[t]] = marks[i]
        at[t] += 1


def _resumed_manifest(out: Path | None, run: dict) -> dict:
    """The manifest of the checkpoint in ``out``, which must be of this ``run``."""
    if out is None:
        raise PuzzleError(checkpoint.RESUME_NEEDS_OUT)
    fix = checkpoint.RERUN
    manifest = checkpoint.read_manifest(out, fix)
    for key, want in run.items():
        if manifest.get(key) != want and not (key == "tablebase" and manifest.get(key) is True):
            if key == "tablebase":
                raise PuzzleError(f"the checkpoint in {str(out)!r} was made without a tablebase; resume without "
                                  f"--save, or {fix}")
            then = (f"resume it with that {key}, or choose another --out for this run" if key in ("puzzle", "goal")
                    else fix)
            raise PuzzleError(f"{not_for(f'checkpoint in {str(out)!r}', key, manifest.get(key), want)}; {then}")
    return manifest


def _bounds(manifest: dict, out: Path, size: int, align: int) -> list[tuple[int, int]]:
    """The segments a checkpoint's manifest names: contiguous, aligned, covering the ranks."""
    bounds = manifest.get("segments")
    ok = isinstance(bounds, list) and 0 < len(bounds) <= size and all(
        isinstance(b, list) and len(b) == 2 and all(type(x) is int for x in b) for b in bounds)
    if ok:
        edges = [b[0] for b in bounds] + [bounds[-1][1]]
        ok = edges[0] == 0 and edges[-1] == size and all(a < b and a % align == 0 for a, b in zip(edges, edges[1:]))
    if not ok:
        raise PuzzleError(f"checkpoint in {str(out)!r} is damaged (its segments); {checkpoint.RERUN}")
    return [tuple(b) for b in bounds]


def check_resumed_memory(index, out: Path, threads: int, tables: int, max_memory: int, marks: str) -> None:
    """Refuse to resume the checkpoint by segments in ``out`` within ``max_memory`` bytes
    when its largest segment would not fit (see :func:`memory_needed`): a resumed run
    keeps the segments it was made with. A checkpoint whose segments cannot be read is
    left to the run to refuse."""
    try:
        span = max(hi - lo for lo, hi in _bounds(checkpoint.peek_manifest(out), out, index.size,
                                                 segment_align(index)))
    except PuzzleError:
        return
    need = memory_needed(index, threads, tables, span, marks)
    if need > max_memory:
        held = "table and tablebase part take" if tables == 2 else "table takes"
        raise PuzzleError(f"the checkpoint in {str(out)!r} is in segments whose {held} up to "
                          f"{human(table_bytes(span) * tables)} (a resumed run keeps them): resuming it takes about "
                          f"{human(need)}, more than --max-memory {human(max_memory)}; raise it")


def file_parts(name: str) -> tuple[str, int, int]:
    """(role, segment, slot or pass) of a checkpoint file named as
    :data:`~puzzlespace.explore.checkpoint.SEGMENT_FILE` says:
    ``seg-<k>-<slot>``, ``tb-<k>-<slot>``, ``sent-<pass>-<k>`` or ``bits-<pass>-<k>``."""
    role, a, b = name.removesuffix(".bin").split("-")
    return (role, int(b), int(a)) if role in ("sent", "bits") else (role, int(a), int(b))


def checkpoint_is_segmented(out: Path) -> bool:
    """Whether ``out`` holds the checkpoint of an exploration by segments (of this
    version's format or another: resuming names the difference)."""
    return str(checkpoint.peek_manifest(out).get("format")).startswith(FORMAT.split("/")[0] + "/")


def resumed_values(s: Segment, store: SegmentStore, keep_table: bool) -> list[list[int]]:
    """How many states of segment ``s``'s resumed table (and tablebase part, with
    ``keep_table``) hold each value (see :func:`~puzzlespace.bits.value_counts`); reading
    them checks their files."""
    roles = ("seg", "tb") if keep_table else ("seg",)
    return [value_counts(store.load(role, s.k, s.hi - s.lo), s.hi - s.lo) for role in roles]


def check_resumed(out: Path, counts: list[int], sizes: dict[int, int], carried: dict[int, int],
                  values: dict[int, list[list[int]]]) -> None:
    """Refuse a checkpoint of layer ``len(counts) - 1`` whose segment tables do not hold
    the states its manifest says: in each segment ``k`` (its :func:`resumed_values`),
    ``sizes[k]`` states of that layer and ``carried[k]`` of the next; in all, the table a
    one-process checkpoint would hold (:func:`~puzzlespace.explore.checkpoint.holds_layer`)
    and, with tablebase parts, the tablebase
    (:func:`~puzzlespace.explore.tablebase.holds_depths`)."""
    depth = len(counts) - 1
    parts = len(next(iter(values.values())))  # the table, and the tablebase part if kept
    summed = [[sum(v[part][i] for v in values.values()) for i in range(4)] for part in range(parts)]
    ok = (sizes.keys() <= values.keys() and carried.keys() <= values.keys()
          and all(v[0][layer_value(depth)] == sizes.get(k, 0) and v[0][layer_value(depth + 1)] == carried.get(k, 0)
                  for k, v in values.items())
          and checkpoint.holds_layer(summed[0], counts, sum(carried.values()))
          and all(holds_depths(tablebase, counts) for tablebase in summed[1:]))
    if not ok:
        raise PuzzleError(f"checkpoint in {str(out)!r} is corrupt (its segment tables do not hold the states its "
                          f"manifest says); {checkpoint.RERUN}")


def _resume(manifest: dict, out: Path, store: SegmentStore):
    """(next depth, counts, seconds so far) from a checkpoint's manifest, whose files and
    counts go to ``store``."""
    fix = checkpoint.RERUN
    files = manifest.get("files")
    if not isinstance(files, dict) or not all(isinstance(k, str) and "/" not in k and isinstance(v, str)
                                             for k, v in files.items()):
        raise PuzzleError(f"checkpoint in {str(out)!r} names no files; {fix}")
    if not all(checkpoint.SEGMENT_FILE.fullmatch(name) for name in files):
        raise PuzzleError(f"checkpoint in {str(out)!r} names files it cannot have made; {fix}")
    store.files, store.unchecked = dict(files), set(files)
    for name in files:
        role, k, slot = file_parts(name)
        if role == "seg":
            store.slot[k] = slot
    for name, counts in (("carried", store.carried), ("sizes", store.sizes)):
        got = manifest.get(name)
        if not isinstance(got, dict) or not all(k.isdigit() and type(v) is int and v > 0 for k, v in got.items()):
            raise PuzzleError(f"checkpoint in {str(out)!r} is damaged ({name}); {fix}")
        counts.update({int(k): v for k, v in got.items()})
    depth = manifest.get("depth")
    if type(depth) is not int or depth < -1:
        raise PuzzleError(f"checkpoint in {str(out)!r} is damaged (depth {depth!r}); {fix}")
    counts = manifest.get("depth_counts")
    if not isinstance(counts, list) or len(counts) != depth + 1 or not all(type(c) is int and c > 0 for c in counts):
        raise PuzzleError(f"checkpoint in {str(out)!r} is damaged (depth counts); {fix}")
    seconds = manifest.get("seconds")
    return depth + 1, counts, float(seconds) if isinstance(seconds, (int, float)) else 0.0
