"""What the workers of a Dask cluster do for an exploration (:mod:`puzzlespace.explore.cluster`
submits it): each worker process holds a run's segments it owns (:class:`HeldStore`), and
runs the tasks pinned to it: open a segment, visit it, take, collect and receive the
marks between segments, hand back a table, and the chores of a run's directory on the
worker's own disk (claim, check, clean). Every function here runs on a worker; a task
that Dask runs a second time (to recompute what a lost worker held) refuses to run, so
none touches a segment twice.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ..contracts import PuzzleRules as Puzzle
from ..datafile import claim, let_go
from ..errors import PuzzleError
from ..bits import layer_value, new_blocks
from ..resources import peak_rss
from . import checkpoint
from .engine import kernel_of, new_buffers
from .packing import unpack_marks, write_block
from .dask_cluster import dask_distributed
from .segments import (Segment, SegmentStore, crc_text, empty_dir, file_crc, file_parts,
                       merge_sent, resumed_values, seed_tables, visit)

@dataclass
class _Held:
    """A run's state in one worker process: the client's id, the index, its kernel, mark
    buffers for the worker's threads and the segments the worker owns."""

    client: str
    index: object
    kernel: tuple
    threads: int
    buffers: list
    starts: np.ndarray
    keep_table: bool
    pool: ThreadPoolExecutor | None  # None: the task's thread expands (see expanding_threads)
    segments: dict[int, tuple[Segment, "HeldStore"]] = field(default_factory=dict)
    # One visit at a time: it uses all the worker's threads and the mark buffers.
    visiting: threading.Lock = field(default_factory=threading.Lock)


#: Runs' state in this worker process, by run token (made under the lock: a worker with
#: several threads may open several segments at once).
_HELD: dict[str, _Held] = {}

#: The directories on this worker's own disk that runs hold: real path -> (run token, the
#: id of its Dask client, the descriptor of its :func:`~puzzlespace.datafile.claim`).
_CLAIMS: dict[str, tuple[str, str, int]] = {}

_OPENING = threading.Lock()


class HeldStore(SegmentStore):
    """One segment's store on its owner: tables as :class:`SegmentStore` keeps them;
    marks for other segments kept here, packed, until taken; marks from them given by
    :meth:`arrive`. The files a pass proposes become the segment's checkpoint when the
    next pass begins (the client names them in the manifest in between). ``owners``:
    every segment's worker."""

    def __init__(self, s: Segment, owners: Sequence[str], out_dir: Path | None, keep_table: bool, depth: int):
        super().__init__(out_dir, keep_table)
        self.segment, self.k = s, s.k
        senders = [j for j in range(len(owners)) if j != s.k]
        self.neighbours = {j for j in senders if owners[j] == owners[s.k]}  # segments of the same worker
        self.returned = [j for j in senders if owners[j] == ring(owners)[owners[s.k]] != owners[s.k]]
        self.handed: dict[tuple[int, int], list[np.ndarray]] = {}  # (neighbour, pass) -> its marks for this one
        self.outbox: dict[int, list[np.ndarray]] = {}
        self.crossing = 0
        self.proposed: tuple[dict, dict] | None = None
        self.visited = depth - 1  # the last pass that visited the segment
        # sender segment -> the last pass whose marks from it arrived (pass ``depth`` is next)
        self.received_from = dict.fromkeys(senders, depth - 1)
        self.taken: dict[int, int] = {}  # target segment -> the last pass whose marks for it were taken

    def begin(self, depth: int) -> None:
        """Start pass ``depth``: the files the last pass proposed are the checkpoint's now,
        and the marks files the one before named are read and removed (by the client too,
        where it sees them)."""
        if self.proposed is not None:
            read = [name for name in self.files.keys() - self.proposed[0].keys() if name.startswith(("sent-", "bits-"))]
            self.files, slots = self.proposed
            self.slot.update(slots)
            self.proposed = None
            for name in read:
                (self.dir / name).unlink(missing_ok=True)
        super().begin(depth)
        self.outbox, self.crossing = {}, 0

    def owns(self, name: str) -> bool:
        """Only the segment's own files (other segments' may share the directory)."""
        return bool(checkpoint.SEGMENT_FILE.fullmatch(name)) and file_parts(name)[1] == self.k

    def drop_unfinished(self, depth: int) -> None:
        """Nothing: an interrupted pass's marks files are never read (only those a
        checkpoint names are) and are written anew or removed at the end."""

    def propose(self, arrived: dict[str, str] | None = None) -> dict[str, str]:
        files = dict(self.next_files if self.proposed is None else self.proposed[0], **(arrived or {}))
        self.proposed = (files, dict(self.next_slot if self.proposed is None else self.proposed[1]))
        return files

    def send(self, k: int, marks: np.ndarray) -> None:
        super().send(k, marks)
        self.crossing += len(marks)

    def delivers(self) -> bool:
        return True  # with files or without: the marks leave the worker packed

    def hand(self, targets) -> dict[int, list[np.ndarray]]:
        """Take out of the outbox the packed marks for ``targets`` that have any, by target."""
        return {j: self.outbox.pop(j) for j in targets if j in self.outbox}

    def deliver(self, k: int, block: np.ndarray) -> None:
        self.outbox.setdefault(k, []).append(block)

    def arrive(self, depth: int, blocks: list[np.ndarray]) -> dict[str, str]:
        """Take the marks sent to this segment in pass ``depth`` (after its visit of that
        pass): merged into its table at once, as states of the next layer carried into
        it, or (with files) kept for the next pass in ``sent-<depth>-<k>.bin``; returns
        that file's name and checksum."""
        if self.dir is None:
            flags = self.flags.setdefault(self.k, (new_blocks(self.segment.hi - self.segment.lo) + 1,) * 2)[1]
            added = merge_sent(self.segment, self.tables[("seg", self.k)], map(unpack_marks, blocks),
                               layer_value(depth + 1), flags)
            self.carried[self.k] = self.carried.get(self.k, 0) + added
            return {}
        if not blocks:
            return {}
        name, check = f"sent-{depth}-{self.k}.bin", 0
        with open(self.dir / name, "wb") as f:
            for block in blocks:
                check = write_block(f, block, check)
            f.flush()
            os.fsync(f.fileno())
        return {name: crc_text(check)}


def _ran_twice(depth: int) -> PuzzleError:
    """The error of a task that must not run: Dask runs a task again to recompute what a
    lost worker held, and a segment's tasks must each run once, in order, or leave it as
    it is."""
    return PuzzleError(f"a task of layer {depth} ran twice (Dask recomputed it after losing a worker); the run "
                       "cannot go on: continue from the last checkpoint with --resume")


def _held(token: str, k: int | None = None):
    """The run's state in this worker, or segment ``k``'s (segment, store); a PuzzleError
    when the worker does not hold it (a new process in a lost one's place)."""
    held = _HELD.get(token)
    if held is None or (k is not None and k not in held.segments):
        raise PuzzleError("a worker no longer holds its segments (it was restarted, perhaps over its memory "
                          "limit); the run cannot go on: continue from the last checkpoint with --resume")
    return held if k is None else held.segments[k]


def _this_worker():
    return dask_distributed().get_worker()


def open_segment(token: str, client: str, puzzle: Puzzle, layers: list[np.ndarray], s: Segment, starts: np.ndarray,
                 owners: list[str], out: Path | None, keep_table: bool, resumed: dict | None, depth: int,
                 busy: int) -> dict:
    """Hold segment ``s`` in this worker, for pass ``depth`` next, for the run ``token`` of
    the Dask client ``client`` (its id): first tables seeded with ``layers`` (those of the
    run's head in the segment, as ranks: see
    :func:`~puzzlespace.explore.segments.seed_tables`; a worker ranks no state, so it needs
    none of that code), or a resumed checkpoint's files. ``busy``: the threads the run
    keeps busy on this worker's machine (see :func:`expanding_threads`)."""
    threads = _this_worker().state.nthreads
    with _OPENING:
        held = _HELD.get(token)
        if held is None:
            index, expanding = puzzle.state_index(), expanding_threads(threads, busy)
            pool = ThreadPoolExecutor(max_workers=expanding) if expanding else None
            held = _HELD[token] = _Held(client, index, kernel_of(index), threads,
                                        new_buffers(index, max(expanding, 1)), starts, keep_table, pool)
        if s.k in held.segments:
            raise PuzzleError(f"segment {s.k} was opened twice (Dask ran its task again after losing a worker); "
                              "run it again")
        store = HeldStore(s, owners, out, keep_table, depth)
        held.segments[s.k] = (s, store)
    with held.visiting:
        if resumed is None:
            store.begin(0)
            seed_tables(s, layers, store, keep_table)
            files, values = store.propose(), None
        else:
            store.files, store.unchecked = dict(resumed["files"]), set(resumed["files"])
            if resumed["slot"] is not None:
                store.slot[s.k] = resumed["slot"]
            store.carried[s.k], store.sizes[s.k] = resumed["carried"], resumed["sizes"]
            files, values = {}, resumed_values(s, store, keep_table)
        if out is not None:
            os.sync()
    return {"files": files, "carried": store.carried.get(s.k, 0), "sizes": store.sizes.get(s.k, 0),
            "threads": held.threads, "values": values}


def expanding_threads(threads: int, busy: int) -> int:
    """The threads a worker of ``threads`` Dask threads expands segments on, while its task's
    thread merges the marks: all of them where its machine has a core for each of the
    ``busy`` threads its run keeps busy there (every worker's Dask threads and merging
    thread), one fewer where it has not (none: the task's thread expands and merges in
    turn), so that workers sharing cores do not crowd them."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return threads if busy <= cores else threads - 1


def visit_segment(token: str, k: int, depth: int, room: int, receive: bool, _after, senders: list[int], *parts) -> dict:
    """Pass ``depth`` over segment ``k``, after the tasks ``_after`` of the pass before
    (every worker's intake of the marks, or the visits of its worker's segments and the
    takes of the segment's marks) and, with ``receive``, merging first the marks that
    pass sent it: handed to it by its worker's other segments, and by the collect or,
    from the other workers' segments ``senders``, in ``parts`` (as :func:`collect_marks`'s).
    Reports to the client as a Dask event and returns the marks for the next worker's
    segments (see :func:`_hand_out`)."""
    t0 = time.perf_counter()
    held = _held(token)
    s, store = _held(token, k)
    if receive:
        collect_marks(token, [k], depth - 1, senders, None, *parts)
    received = _accept(store, depth - 1, list(store.received_from))[0] if receive else 0
    if store.visited != depth - 1 or any(done != depth - 1 for done in store.received_from.values()):
        raise _ran_twice(depth)
    store.visited = depth
    with held.visiting:
        store.begin(depth)
        layer, kept, total = visit(s, depth, held.index, held.kernel, store, held.keep_table, held.pool,
                                   held.buffers, held.starts, room)
        store.flush(everything=True)
        files = store.propose()
        if store.dir is not None:
            os.sync()
        sent = [[j, sum(b.nbytes for b in blocks)] for j, blocks in store.outbox.items()]
        marks = _hand_out(held, store, depth)
    _this_worker().log_event(report_topic(token), {
        "key": f"{visit_key(depth, k)}-{token}", "layer": layer, "kept": kept, "total": total,
        "carried": store.carried.get(k, 0), "files": files, "sent": sent, "crossing": store.crossing,
        "received": received, "seconds": time.perf_counter() - t0, "peak_memory": peak_rss()})
    return marks


def _hand_out(held: _Held, store: HeldStore, depth: int) -> dict[int, list[np.ndarray]]:
    """Hand the packed marks a segment sent in pass ``depth`` to the worker's other
    segments (in this process), and return those for the segments of the next worker in
    the ring (the visit's result: packed blocks by target segment, for the targets that
    have any); the rest stay in its outbox for takes."""
    for j in store.neighbours & store.outbox.keys():
        held.segments[j][1].handed[store.k, depth] = store.outbox.pop(j)
    return store.hand(store.returned)


def take_marks(token: str, k: int, targets: list[int], depth: int, _visited=None) -> dict[int, list[np.ndarray]]:
    """The packed marks segment ``k`` sent to each of the segments ``targets`` (those of
    one worker) in pass ``depth`` (once)."""
    store = _held(token, k)[1]
    if store.visited != depth or any(store.taken.get(j) == depth for j in targets):
        raise _ran_twice(depth)
    store.taken.update(dict.fromkeys(targets, depth))
    return store.hand(targets)


def _accept(store: HeldStore, depth: int, senders: list[int]) -> tuple[int, dict[str, str]]:
    """Give ``store`` the marks that segments ``senders`` sent to its segment in pass
    ``depth``, as they were handed to it (once, after its own visit of that pass; a
    sender that handed nothing sent nothing, and the client checks that every byte sent
    was received); (their bytes, the file written)."""
    if store.visited != depth or any(store.received_from[k] != depth - 1 for k in senders):
        raise _ran_twice(depth)
    store.received_from.update(dict.fromkeys(senders, depth))
    blocks = [b for k in senders for b in store.handed.pop((k, depth), ())]
    return sum(b.nbytes for b in blocks), store.arrive(depth, blocks)


def collect_marks(token: str, targets: list[int], depth: int, senders: list[int], _before,
             *parts: dict[int, list[np.ndarray]]) -> None:
    """Hand this worker's segments ``targets`` (all it owns, or for a visit its own) the
    marks that the other workers' segments ``senders`` sent them in pass ``depth``
    (``parts``: those segments' visits' or takes' results for this worker, in that
    order), after the task ``_before`` (its own visits of the pass)."""
    stores = {j: _held(token, j)[1] for j in targets}
    for k, part in zip(senders, parts):
        for j in stores.keys() & part.keys():
            if (k, depth) in stores[j].handed:
                raise _ran_twice(depth)
            stores[j].handed[k, depth] = part[j]


def receive_marks(token: str, targets: list[int], depth: int, senders: list[int], _before,
             *parts: dict[int, list[np.ndarray]]) -> dict:
    """Give this worker's segments ``targets`` (all it owns) the marks that ``senders``
    sent them in pass ``depth`` (``parts``: as :func:`collect_marks`'s, for the senders of
    other workers), after the tasks ``_before`` (its visits of the pass, or the receive
    before in its chain, and the visits of the senders it owns)."""
    collect_marks(token, targets, depth, [k for k in senders if k not in targets], None, *parts)
    received, files = 0, {}
    for j in targets:
        store = _held(token, j)[1]
        got, written = _accept(store, depth, [k for k in senders if k != j])
        store.propose(written)
        received, files = received + got, dict(files, **written)
    return {"bytes": received, "files": files}


def segment_table(token: str, k: int, role: str) -> np.ndarray:
    """Segment ``k``'s table (``role`` seg) or tablebase part (tb)."""
    s, store = _held(token, k)
    return store.load(role, k, s.hi - s.lo)


def discard_files(token: str) -> None:
    """On a worker: remove the files of its segments that the last complete pass does not
    name (a pass over an empty layer's, the other copy of each table)."""
    for _, store in _held(token).segments.values():
        store.discard()


def claim_dir(token: str, client: str, out: str, empty: bool) -> None:
    """On a worker: hold the directory ``out`` on its own disk for the run ``token`` of the
    Dask client ``client`` (its id) until the run is dropped from the worker; PuzzleError
    if another run holds it (its files would be another's), in this worker or in any
    process of its machine (another cluster's worker: see
    :func:`~puzzlespace.datafile.claim`). With ``empty`` (a fresh run),
    make it empty of checkpoint files: every worker of the run has done so before any
    segment is made (workers of one machine may share the directory)."""
    path = os.path.realpath(out)
    with _OPENING:
        holder = _CLAIMS.get(path)
        fd = claim(Path(path), token) if holder is None else holder[2] if holder[0] == token else None
        if fd is None:
            raise PuzzleError(f"another exploration keeps its segments in {out!r} there; choose another --out, or "
                              "wait for it to end")
        _CLAIMS[path] = (token, client, fd)
    if empty:
        empty_dir(Path(out))


def segments_here(out: str, named: list[tuple[int, dict[str, str]]]) -> list[int]:
    """On a worker: the segments ``k`` of ``named`` ((k, its files)) whose files are all in
    ``out`` (on its own disk)."""
    return [k for k, files in named if all((Path(out) / name).is_file() for name in files)]


def files_intact(out: str, files: dict[str, str]) -> bool:
    """On a worker: whether the ``files`` in ``out`` (name -> CRC-32 as a manifest gives
    it) are all there and match their CRC-32s."""
    try:
        return all(file_crc(Path(out) / name) == crc for name, crc in files.items())
    except OSError:
        return False


def running_tasks(dask_worker) -> int:
    """On a worker: the tasks it is running."""
    return dask_worker.state.executing_count


def runs_held() -> dict[str, str]:
    """On a worker: the runs it holds (their segments, or a directory on its disk), run
    token -> the id of the run's Dask client."""
    runs = {token: held.client for token, held in list(_HELD.items())}
    runs.update({token: client for token, client, _ in list(_CLAIMS.values())})
    return runs


def release_runs(tokens: list[str]) -> None:
    """On a worker: :func:`release_run` each of ``tokens``."""
    for token in tokens:
        release_run(token)


def release_run(token: str) -> None:
    """Drop a run's state and the directory it holds from this worker."""
    with _OPENING:
        for path in [path for path, (holder, *_) in _CLAIMS.items() if holder == token]:
            let_go(Path(path), token, _CLAIMS.pop(path)[2])  # never fails: the segments go below whatever happens
    held = _HELD.pop(token, None)
    if held is not None and held.pool is not None:
        held.pool.shutdown(wait=False)


def ring(owners: Sequence[str]) -> dict[str, str]:
    """Each worker owning segments -> the next in the order of their first segments
    (itself when it is the only one): the worker whose segments' marks a visit returns."""
    order = list(dict.fromkeys(owners))
    return {worker: order[(i + 1) % len(order)] for i, worker in enumerate(order)}


def report_topic(token: str) -> str:
    """The Dask event topic of a run's visit reports."""
    return f"puzzlespace-{token}"


def visit_key(depth: int, k: int) -> str:
    """The key of pass ``depth``'s visit of segment ``k`` (the run's token follows)."""
    return f"visit-{depth}-{k}"
