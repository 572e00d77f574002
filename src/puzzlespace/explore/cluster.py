"""Exploration on a Dask cluster: the segments of :mod:`puzzlespace.explore.segments`, each
held by one worker, with only the marks that cross segments sent between workers.

Segment ``k`` (a contiguous range of ranks) lives in the process of the worker that owns
it (``workers[k % len(workers)]``): in memory, or, when the run keeps checkpoints, in its
files under ``out_dir``: a directory that every worker and the client share, or, where a
worker does not see the client's, the directory of that path on the worker's own disk
(then each worker empties and cleans its own, the client keeps the manifest and gathers
the tablebase into its directory at the end, and a resumed run gives each segment to a
worker that has its files). Every task that touches a segment is pinned to its owner.
A pass over layer ``d`` is, per segment:

1. ``visit`` (on the owner): the pass of :func:`~puzzlespace.explore.segments.visit`;
   marks inside the segment are merged in place, the others packed
   (:mod:`puzzlespace.explore.packing`) by target segment. Those for the owner's other
   segments are handed to them in its process; those for the segments of the next
   worker in the ring of owners are the visit's result, which Dask moves to that worker
   (so on two workers a pass is one hop between them); the rest wait on the worker;
2. ``take`` (on the sender's worker) hands the packed marks for one further worker's
   segments to Dask, and that worker gets them: Dask moves only these between workers,
   in a task a segment and worker (not a segment and segment: many segments on few
   workers stay cheap to schedule).

The marks a pass sends are the targets' for the next pass, and each worker takes in
those for its segments (a task a worker, so that a pass schedules dependencies in
proportion to segments times workers, not to segments squared): with ``out_dir``, a
``receive`` writes them to the targets' ``sent-<d>-<k>.bin`` files before the checkpoint
names them (the checkpoint is the segments engine's, and either engine resumes the
other's); without it, a ``collect`` hands them to the targets, whose next visits merge
them, or, when they are large, a chain of ``receive`` tasks, one sending worker's marks
a link, merges them first. With few segments (:data:`DIRECT_SEGMENTS`) and small marks
the visits take them straight from the tasks that hold them instead, a hop less. Without files the
client submits :data:`AHEAD` passes before it waits for the first of them (after the
last layer, that many passes over empty layers run for nothing).

Each visit reports its counts and files to the client as a Dask event (its result being
marks, which the client never fetches). The client waits for each pass, writes the
manifest (the checkpoint) and reports the layer: states, bytes sent between workers,
the slowest worker. While it waits it watches the workers: one that leaves (killed,
over its memory limit, its machine gone) takes its segments with it, and the run stops
with a PuzzleError within :data:`POLL` seconds of the scheduler noticing; ``resume``
continues from the last checkpoint on any number of workers. A worker that pauses
(Dask's memory setting) and stays so, running nothing, stops it after
:data:`PAUSED_WAIT` seconds.

Worker memory: the segments it holds (2 bits per state, or one segment at a time with
``out_dir``), mark buffers per thread and the packed marks in flight: its own outgoing
marks of a pass and, as they come in, one sending worker's for its segments (all
senders' at once when they are small or go to files). That
memory is not Dask's to spill: a local cluster is started with pausing and spilling off
(see :func:`~puzzlespace.explore.dask_cluster.local_cluster`), and a run refuses workers
of any cluster whose segments would pass their pause or restart line
(:func:`~puzzlespace.explore.dask_cluster.memory_lines`).

This module is the client's side of a run; what the workers hold and run is
:mod:`puzzlespace.explore.cluster_tasks`, and how a cluster is started, reached and
asked, :mod:`puzzlespace.explore.dask_cluster`.
"""

from __future__ import annotations

import os
import queue
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .._version import __version__
from ..contracts import PuzzleRules as Puzzle
from ..errors import PuzzleError
from ..bits import table_bytes
from ..resources import available_memory, human, peak_rss
from . import checkpoint
from .engine import ExploreResult
from .head import Head
from .cluster_tasks import (claim_dir, collect_marks, discard_files, files_intact, open_segment, receive_marks,
                            release_run, release_runs, report_topic, ring, runs_held, running_tasks, segment_table,
                            segments_here, take_marks, visit_key, visit_segment)
from .dask_cluster import (NO_PAUSE, POLL, Unanswered, asked, check_installed, check_worker_memory, dask_distributed,
                           interrupts_deferred, memory_lines, silent_scheduler, take_interrupt, threads_on_hosts,
                           workers_seen)
from .segments import (Segment, SegmentStore, check_resumed, disk_needed, file_errors, file_parts, prepare,
                       result_of, run_head, segment_starts)

#: Bytes of marks a segment that make the next pass take them in with chains of receive
#: tasks (a task a sending worker: a sender's copy goes as soon as the chain of its
#: target worker has merged it, and a worker takes in one sender's marks at a time).
RECEIVE_AT = 4 << 20

#: Passes submitted ahead of the one the client waits for, without files (with them, the
#: client writes each pass's checkpoint before it submits the next): the workers need
#: not wait for the client between passes. One: how a pass's marks are taken in is
#: decided from the last pass tallied, and each pass further ahead lets a growing layer
#: outgrow :data:`RECEIVE_AT` more before the chains of receives take over. At least one:
#: a visit is let go once its report is read, so the tasks that take its marks must have
#: been submitted by then.
AHEAD = 1

#: Segments up to which a visit takes the marks sent to it straight from the tasks on
#: other workers that hold them (a hop less, but a pass then makes segments²
#: dependencies); past it, a collect a worker takes them in first.
DIRECT_SEGMENTS = 12

#: Seconds a worker holding segments may stay paused before the run stops, if it is
#: running none of the run's tasks then (Dask may spill its results and unpause it).
PAUSED_WAIT = 15.0

#: Seconds the client waits for a finished visit's report (a Dask event, sent before the
#: visit ends) before it gives up on the run.
REPORT_WAIT = 60.0

#: Seconds a stopping run waits for its segments to be dropped from the workers: one that
#: is dying (a SIGTERM to the whole job) holds Dask's broadcast for its connect timeout,
#: 30 s; a later run drops what is left (:func:`drop_orphaned_runs`).
RELEASE_WAIT = 5.0


def drop_orphaned_runs(client) -> int:
    """Drop from the workers the runs of clients that are gone (the segments a killed
    client's run held would otherwise stay in the workers' memory for as long as they
    live), and from the scheduler the report topics no client hears any more; how many
    runs were dropped, over all workers (a task of theirs under way runs to its end, a
    thread cannot be stopped, then its memory goes too). A run calls it as it starts and
    as it ends."""

    def connected(prefix: str, dask_scheduler) -> list[str]:  # nested: sent by value (no puzzlespace needed there)
        """Drop the report topics no connected client hears; the connected clients."""
        # Dask keeps a topic's last events for as long as it runs and has no call that drops
        # a topic: its broker's table is reached into where it is as this version has it.
        topics = getattr(getattr(dask_scheduler, "_broker", None), "_topics", None)
        if isinstance(topics, dict):  # a client gone (killed) stays a topic's subscriber: only those here count
            heard = lambda t: set(getattr(t, "subscribers", [None])) & {*dask_scheduler.clients, None}  # noqa: E731
            for name in [n for n, t in topics.items() if n.startswith(prefix) and not heard(t)]:
                del topics[name]
        return list(dask_scheduler.clients)

    def drop() -> int:
        # The runs first, then the clients: a run held now was opened by a client connected
        # now, so it is dropped only if its client has gone since (one opened meanwhile is
        # not among them, and its client may be missing from the list).
        held = client.run(runs_held)
        clients = set(client.run_on_scheduler(connected, report_topic("")))
        orphans = {worker: [token for token, of in runs.items() if of not in clients]
                   for worker, runs in held.items()}
        orphans = {worker: tokens for worker, tokens in orphans.items() if tokens}
        for worker, tokens in orphans.items():
            client.run(release_runs, tokens, workers=[worker], on_error="ignore")  # one gone meanwhile: nothing held
        return sum(map(len, orphans.values()))

    return asked(client, drop)


@dataclass
class LayerReport:
    """One pass over a layer on the cluster: the layer's ``states``, the packed marks
    ``bytes_sent`` between segments (``bytes_between_workers`` of them between different
    workers; the run stops if any of them is not received, by the receives or the next
    pass's visits), the crossing marks the walk generated before
    packing dropped repeats, and the worker whose tasks took longest (``slowest_seconds``;
    None for a layer of the run's head, explored in the client's process: see
    :mod:`~puzzlespace.explore.head`)."""

    depth: int
    states: int
    bytes_sent: int
    bytes_between_workers: int
    crossing_marks: int
    slowest_worker: str | None
    slowest_seconds: float
    seconds: float


@interrupts_deferred()
def explore_distributed(
    puzzle: Puzzle,
    client,
    *,
    segments: int | None = None,
    workers: Sequence[str] | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    antipode_limit: int = 100,
    keep_table: bool = False,
    progress: Callable[[int, int, int, int], None] | None = None,
    layer_done: Callable[[LayerReport], None] | None = None,
    force: bool = False,
    head: int | None = None,
) -> ExploreResult:
    """Enumerate every position reachable from ``puzzle.goal`` on the Dask cluster of
    ``client``, in ``segments`` segments (default: one per worker; a resumed checkpoint's)
    held by ``workers`` (addresses; default: all the cluster's, in order). Same result,
    checkpoints and tablebase as :func:`~puzzlespace.explore.segments.explore_segmented`;
    ``progress(depth, segments done, segments, states so far)`` as segments finish and
    ``layer_done(report)`` after each layer. A fresh run first explores the layers that
    hold at most ``head`` states in all in this process (as
    :func:`~puzzlespace.explore.segments.explore_segmented` does; they are reported with
    no worker), then seeds the segments with them. Called in the main thread, it takes a Ctrl-C
    (or a SIGTERM Python handles) where it waits on the cluster, within
    :data:`~puzzlespace.explore.dask_cluster.POLL` seconds (see
    :func:`~puzzlespace.explore.dask_cluster.interrupts_deferred`)."""
    t0 = time.perf_counter()
    index = puzzle.state_index()
    out = Path(out_dir).absolute() if out_dir is not None else None  # the same path for workers of other cwds
    store = SegmentStore(out, keep_table)
    as_it_was = lambda: _left(out, None if resume else -1)  # noqa: E731 - nothing changed yet
    with _cluster_kept(client, lambda: -1, as_it_was):
        owners = list(workers or sorted(asked(client, client.nthreads)))
        if not owners:
            raise PuzzleError("the Dask cluster has no workers; start some (see docs/scaling.md)")
        check_installed(client)
        drop_orphaned_runs(client)
        local = out is not None and not _shared(client, owners, out)
        on_disks = _segments_on_disks(client, owners, out, checkpoint.peek_manifest(out)) if local and resume else None
        lines, tables = memory_lines(client), 2 if keep_table else 1
        busy = threads_on_hosts(workers_seen(client), owners)
    owner = lambda segs: [_owner(s.k, owners, on_disks, out) for s in segs]  # noqa: E731

    def check(segs: list[Segment]) -> None:
        gathered, available = table_bytes(index.size) if keep_table and out is None else 0, available_memory()
        if gathered > available:
            raise PuzzleError(f"without --out the tablebase ({human(gathered)}) is gathered in this process, which "
                              f"has {human(available)} of memory available; give --out DIR (it is then written a "
                              "segment at a time)")
        check_worker_memory(segs, owner(segs), lines, tables, out is not None, resume)
        if local and not resume:
            _check_disks(client, segs, owner(segs), out, tables)

    segs, identity, (depth, counts, before) = prepare(puzzle, index, segments or len(owners), out, resume, store,
                                                      force, check=check, disk=not local)
    start = None if resume else run_head(index, index.rank(puzzle.goal), segment_starts(segs), head)
    if start is not None:
        counts = start.counts
    run = _Run(client, uuid.uuid4().hex, owner(segs), out, intact=depth - 1)
    try:
        with file_errors(out, lambda: depth, None), _cluster_kept(client, lambda: depth, run.left):
            if local:
                _claim_on_workers(client, run.token, sorted(run.workers), out, empty=not resume)
            values = run.open(puzzle, start, segs, keep_table, store if resume else None,
                              depth if start is None else start.depth, busy)
            if resume:
                check_resumed(out, counts, store.sizes, store.carried, values)
            if out is not None and start is not None:
                store.begin(0)
                _commit(store, run, start.depth - 1, dict(identity, depth=start.depth - 1, depth_counts=counts,
                                                          seconds=time.perf_counter() - t0, version=__version__))
            if start is not None:  # no layer was saved before, nor a pass under way
                depth = start.depth
                _report_head(start, segs, progress, layer_done)
            while True:
                store.begin(depth)
                layer, found, found_total = run.layer(depth, antipode_limit, counts, progress, layer_done)
                if layer == 0:  # the layer before was the last: its states, kept as it was closed, are the antipodes
                    break
                counts.append(layer)
                if out is not None:
                    _commit(store, run, depth, dict(identity, depth=depth, depth_counts=counts,
                                                    seconds=before + time.perf_counter() - t0, version=__version__))
                depth += 1
            store.discard()
            if local:
                asked(client, lambda: client.run(discard_files, run.token, workers=sorted(run.workers)), run.workers)
            tablebase = None
            if keep_table and out is None:
                tablebase = run.gather_whole("tb", segs, index.size)
            elif keep_table:
                if local:
                    _gather_tablebase(run, store, segs)
                tablebase = lambda: (store.load("tb", s.k, s.hi - s.lo) for s in segs)  # noqa: E731
    finally:
        run.release()
    return result_of(puzzle, index, counts, found, found_total, antipode_limit, (time.perf_counter() - t0, before),
                     max(peak_rss(), run.peak_memory), run.threads, tablebase, resume)


def _report_head(start: Head, segs: Sequence[Segment], progress, layer_done) -> None:
    """Report the layers the run's head explored, as its passes report theirs."""
    reached = 0
    for d in range(start.depth):
        reached += len(start.layers[d])
        if progress:
            progress(d, len(segs), len(segs), reached)
        if layer_done:
            layer_done(LayerReport(d, len(start.layers[d]), 0, 0, start.crossing[d], None, 0.0, start.seconds[d]))


@contextmanager
def _cluster_kept(client, depth: Callable[[], int], left: Callable[[], str]):
    """A lost connection of the cluster's ends the run with one line saying what is left
    (``left()``, see :func:`_left`), not as an error on the segment files: any OSError
    once the client has stopped running (it has lost its scheduler: killed, its machine
    or the network gone), and a connection of Dask's closed, reset or timed out while it
    runs (a worker gone in the middle of a call). ``depth()``: the pass under way (-1:
    starting)."""
    try:
        yield
    except Unanswered as exc:
        raise _unanswered(exc, depth(), left()) from None
    except OSError as exc:
        lost = client.status != "running"
        if not lost and not isinstance(exc, (dask_distributed().comm.CommClosedError, ConnectionError, TimeoutError)):
            raise
        what = "the Dask scheduler" if lost else "a connection of the Dask cluster"
        raise PuzzleError(f"lost {what} {_when(depth())} ({exc}); {_lost_message([], depth(), left())}") from None


def _shared(client, workers: Sequence[str], out: Path) -> bool:
    """Whether every one of ``workers`` sees this program's directory ``out`` (shared
    storage) rather than a directory of that path on its own disk: whether each finds a
    file written here into ``out``, or into its nearest existing parent."""
    probe = next(p for p in [out, *out.parents] if p.is_dir()) / f".puzzlespace-probe-{uuid.uuid4().hex}"
    try:
        probe.touch()
    except OSError as exc:
        raise PuzzleError(f"cannot write in {str(probe.parent)!r} for --out {str(out)!r} ({exc.strerror or exc})"
                          ) from None
    try:
        return all(asked(client, lambda: client.run(os.path.exists, str(probe), workers=list(workers)),
                         workers).values())
    finally:
        probe.unlink()


def _segments_on_disks(client, workers: Sequence[str], out: Path, manifest: dict) -> dict[str, set[int]]:
    """The segments of the checkpoint ``manifest`` (as read: a resume checks it) whose
    files it names each worker has in its own ``out``: all of them, and where several
    workers have them (files of an earlier run left on another's disk), only those whose
    files match the manifest's CRC-32s."""
    segments, files = manifest.get("segments"), manifest.get("files")
    if not isinstance(segments, list) or not isinstance(files, dict):
        return {}
    named: dict[int, dict[str, str]] = {k: {} for k in range(len(segments))}
    for name, crc in files.items():
        if checkpoint.SEGMENT_FILE.fullmatch(str(name)) and file_parts(name)[1] in named:
            named[file_parts(name)[1]][name] = crc
    held = {w: set(got) for w, got in asked(client, lambda: client.run(
        segments_here, str(out), list(named.items()), workers=list(workers)), workers).items()}
    for k, mine in named.items():
        claims = [w for w in workers if k in held[w]]
        if len(claims) > 1:
            checked = asked(client, lambda: client.run(files_intact, str(out), mine, workers=claims), claims)
            for w, intact in checked.items():
                if not intact:
                    held[w].discard(k)
    return held


def _claim_on_workers(client, token: str, workers: Sequence[str], out: Path, empty: bool) -> None:
    """Hold ``out`` on each of ``workers`` (on its own disk) for the run ``token`` (see
    :func:`claim_dir`), with ``empty`` made empty of checkpoint files; PuzzleError naming a
    worker that cannot."""
    for worker, done in asked(client, lambda: client.run(claim_dir, token, client.id, str(out), empty,
                                                         workers=workers, on_error="return"), workers).items():
        if isinstance(done, OSError):
            raise PuzzleError(f"worker {worker} cannot make or empty {str(out)!r} on its disk "
                              f"({done.strerror or done}); choose another --out")
        if isinstance(done, PuzzleError):
            raise PuzzleError(f"on worker {worker}, {done}")
        if isinstance(done, BaseException):
            raise done


def _owner(k: int, workers: Sequence[str], held: dict[str, set[int]] | None, out: Path | None) -> str:
    """The worker of segment ``k``: the ``k``-th in turn, or, for segments kept on the
    workers' own disks (``held``: the segments each has files of), one that has its
    files (the one in turn if it does)."""
    turn = workers[k % len(workers)]
    if held is None or k in held.get(turn, ()):
        return turn
    for worker in workers:
        if k in held.get(worker, ()):
            return worker
    raise PuzzleError(f"segment {k}'s files are on none of the workers (each keeps its segments in {str(out)!r} on "
                      "its own disk): resume on the workers whose disks hold the checkpoint, or gather every "
                      "worker's files into one directory and resume in one process (--segments)")


def _gather_tablebase(run: "_Run", store: SegmentStore, segs: Sequence[Segment]) -> None:
    """Copy each segment's tablebase part from its worker's own disk into this program's
    directory, under the name the manifest gives it, a segment at a time."""
    for s in segs:
        run.gather("tb", s).tofile(store.dir / f"tb-{s.k}-{store.slot.get(s.k, 1)}.bin")


def _check_disks(client, segs: Sequence[Segment], owners: Sequence[str], out: Path, tables: int) -> None:
    """Refuse a run if a worker's own disk lacks room in ``out`` for its segments' files
    (:func:`~puzzlespace.explore.segments.disk_needed`; segment files there count as free)."""
    need: dict[str, int] = {}
    for s in segs:
        need[owners[s.k]] = need.get(owners[s.k], 0) + s.hi - s.lo
    need = {w: disk_needed(size, tables) for w, size in need.items()}
    rooms = asked(client, lambda: client.run(checkpoint.disk_room, out, workers=sorted(need)), list(need))
    for worker, free in rooms.items():
        if free < need[worker]:
            raise PuzzleError(f"worker {worker}'s segment files need about {human(need[worker])} of disk in "
                              f"{str(out)!r} but only {human(free)} is free there; choose another --out, or use "
                              "more workers")


def _commit(store: SegmentStore, run: "_Run", depth: int, manifest: dict) -> None:
    """Name the files and counts of pass ``depth``, as the workers reported them, in the
    checkpoint's manifest."""
    store.next_files, store.carried, store.sizes = dict(run.files), dict(run.carried), dict(run.sizes)
    store.next_slot = {k: slot for role, k, slot in map(file_parts, run.files) if role == "seg"}
    store.commit(depth, manifest)
    run.intact = max(depth, run.intact)


@dataclass
class _Run:
    """The client's side of a run: which worker owns which segment, and what the last
    pass reported."""

    client: object
    token: str
    owners: list[str]
    out: Path | None
    intact: int = -1  # the last layer whose checkpoint is on disk (-1: none)
    files: dict[str, str] = field(default_factory=dict)
    carried: dict[int, int] = field(default_factory=dict)
    sizes: dict[int, int] = field(default_factory=dict)
    threads: int = 0
    peak_memory: int = 0
    receives: dict[int, list] = field(default_factory=dict)  # pass -> its receive tasks, until checked
    intake: dict[str, object] = field(default_factory=dict)  # worker -> the task the next pass's visits there wait for
    last_sent: int = 0  # bytes of marks the last pass tallied sent
    takes: dict = field(default_factory=dict)  # (from segment, to worker) -> the take task of the last pass submitted
    visits: list | None = None  # the visits of the last pass submitted
    ahead: list = field(default_factory=list)  # the visits of the next passes, submitted before this one is done
    sent: dict[int, int] = field(default_factory=dict)  # pass -> bytes of marks sent, until received
    workers: set[str] = field(init=False)  # the owners
    in_flight: list = field(default_factory=list)  # the tasks submitted and not done
    held: dict[str, list[int]] = field(default_factory=dict)  # worker -> the segments it owns
    reports: "_Reports" = field(default_factory=lambda: _Reports())
    paused_since: float | None = None  # when a worker holding segments was first seen paused, until none is

    def __post_init__(self):
        for k, worker in enumerate(self.owners):
            self.held.setdefault(worker, []).append(k)
        self.next_worker = ring(self.owners)
        self.workers = set(self.owners)
        self.client.subscribe_topic(report_topic(self.token), self.reports)

    def left(self) -> str:
        """What a failure leaves (see :func:`_left`)."""
        return _left(self.out, self.intact)

    def submit(self, function, *args, worker: str, key: str, keep: bool = True):
        """Run ``function(*args)`` on ``worker`` and nowhere else (the segments are there);
        ``keep``: hold the task in flight, to wait for or cancel."""
        future = self.client.submit(function, *args, workers=[worker], allow_other_workers=False, pure=False,
                                    key=f"{key}-{self.token}")
        if keep:
            self.in_flight.append(future)
        return future

    def open(self, puzzle: Puzzle, head: Head | None, segs: list[Segment], keep_table: bool,
             resumed: SegmentStore | None, depth: int, busy: dict[str, int]) -> dict[int, list[list[int]]]:
        """Make every segment on its owner, for pass ``depth`` next: its first tables,
        seeded with the ``head``'s layers, or a resumed checkpoint's files; returns the
        resumed segments' :func:`~puzzlespace.explore.segments.resumed_values`. ``busy``:
        by owner, the threads a run keeps busy on its machine
        (:func:`~puzzlespace.explore.dask_cluster.threads_on_hosts`)."""
        starts = segment_starts(segs)
        futures = []
        for s in segs:
            held, layers = None, None
            if resumed is not None:
                mine = {name: crc for name, crc in resumed.files.items() if file_parts(name)[1] == s.k}
                held = dict(files=mine, slot=resumed.slot.get(s.k), carried=resumed.carried.get(s.k, 0),
                            sizes=resumed.sizes.get(s.k, 0))
            else:
                layers = head.within(s.lo, s.hi)
            futures.append(self.submit(open_segment, self.token, self.client.id, puzzle, layers, s, starts,
                                       self.owners, self.out, keep_table, held, depth, busy[self.owners[s.k]],
                                       worker=self.owners[s.k],
                                       key=f"open-{s.k}"))
        threads, values = {}, {}
        for s, got in zip(segs, self._wait(futures, -1)):
            self.files.update(got["files"])
            self.carried[s.k], self.sizes[s.k] = got["carried"], got["sizes"]
            threads[self.owners[s.k]] = got["threads"]
            if got["values"] is not None:
                values[s.k] = got["values"]
        self.threads = sum(threads.values())
        return values

    def layer(self, depth: int, room: int, counts: list[int], progress, layer_done):
        """Pass ``depth`` over every segment; (states of layer ``depth``, the first
        ``room`` states of layer ``depth - 1`` by rank, how many it had)."""
        t0 = time.perf_counter()
        self.in_flight = [f for f in self.in_flight if not f.done()]
        visits = self.ahead.pop(0) if self.ahead else self._submit_pass(depth, room)
        while self.out is None and len(self.ahead) < AHEAD:
            self.ahead.append(self._submit_pass(depth + 1 + len(self.ahead), room))
        done, states = [0], [sum(counts)]

        def visited(summary):
            done[0] += 1
            states[0] += summary["layer"]
            if progress:
                progress(depth, done[0], len(visits), states[0])

        summaries = self._wait(visits, depth, each=visited, reported=True)
        checked = depth if self.out is not None else depth - 1  # the pass whose marks have all arrived now
        arrived = self._wait(self.receives.pop(checked, []), depth)
        report = self._tally(depth, summaries, arrived, checked, time.perf_counter() - t0)
        if layer_done and report.states:
            layer_done(report)
        if not report.states and self.ahead:  # the passes over the empty layers after the last
            tail = self._wait(self.ahead[0], depth + 1, reported=True)
            taken = self._wait(self.receives.pop(depth, []), depth + 1)
            self._arrived(depth, sum(got["received"] for got in tail) + sum(got["bytes"] for got in taken))
            for i, visits in enumerate(self.ahead[1:], depth + 2):
                self._wait(visits, i, reported=True)
            self.ahead = []
        found = [r for got in summaries for r in got["kept"]][:max(room, 0)]
        return report.states, found, sum(got["total"] for got in summaries)

    def _submit_pass(self, depth: int, room: int) -> list:
        """Submit pass ``depth``'s tasks: a visit of every segment, the takes of its marks
        for the workers past the next in the ring and, with files, every worker's
        receive; returns the visits.

        A visit takes in the marks of the pass before: with files, after its worker's
        receive wrote them to the segments' files; without, when they are large (the last
        pass tallied sent ``RECEIVE_AT`` bytes a segment or more), after its worker's chain
        of receives merged them (so that the senders' copies are let go before the next
        pass fills its own), and otherwise by merging them itself first: straight from
        the tasks that hold them (one hop between workers) with up to
        :data:`DIRECT_SEGMENTS` segments, else after its worker's collect of them (a
        hop more, but a pass then schedules dependencies in proportion to segments times
        workers, not to segments squared). Except straight, a visit waits for every
        worker's receive or collect, and so for every take of its segment's marks (which
        must have left its outbox before it is refilled), without holding their copies."""
        n = len(self.owners)
        receive = self.out is None and self.visits is not None and self.last_sent < RECEIVE_AT * n
        direct = receive and n <= DIRECT_SEGMENTS
        if self.out is None and self.visits is not None and not direct:
            (self._submit_collects if receive else self._submit_receives)(depth - 1)
        intake, self.intake = self.intake, {}

        def after(k: int) -> tuple:  # what must be done first, then the senders and their marks when direct
            if self.visits is None:
                return [], []
            if not direct:  # every worker's intake: so also every take of the segment's marks, whose copies
                return list(intake.values()), []  # are let go when taken in, not held until this visit ends
            mine = self.owners[k]
            senders = [j for j in range(n) if self.owners[j] != mine]
            first = [self.takes[k, worker] for worker in self._takers(k)] + [self.visits[j] for j in self.held[mine]]
            return first, senders, *[self._marks(j, mine) for j in senders]

        visits = self.visits = [self.submit(visit_segment, self.token, k, depth, room, receive, *after(k),
                                            worker=self.owners[k], key=visit_key(depth, k)) for k in range(n)]
        # Not kept in flight: a take's marks are let go as soon as the tasks that need them are done.
        self.takes = {(k, worker): self.submit(take_marks, self.token, k, targets, depth, visits[k],
                                               worker=self.owners[k], key=f"take-{depth}-{k}-{targets[0]}", keep=False)
                      for k in range(n) for worker, targets in self._takers(k).items()}
        if self.out is not None:
            self._submit_receives(depth)
        return visits

    def _takers(self, k: int) -> dict[str, list[int]]:
        """The segments whose marks from segment ``k`` a take hands out, by owner: those of
        every worker but its own and the next in the ring (see
        :func:`~puzzlespace.explore.cluster_tasks.visit_segment`)."""
        mine = self.owners[k]
        return {worker: segs for worker, segs in self.held.items() if worker not in (mine, self.next_worker[mine])}

    def _marks(self, k: int, worker: str):
        """The task whose result holds segment ``k``'s marks for the segments of ``worker``
        (another than its owner): its visit's, or a take's."""
        return self.visits[k] if worker == self.next_worker[self.owners[k]] else self.takes[k, worker]

    def _submit_collects(self, depth: int) -> None:
        """Submit, for every worker, the collect of the marks that the other workers'
        segments sent to its segments in pass ``depth``, after its own visits of the pass
        (which hand each other theirs)."""
        for worker, segs in self.held.items():
            senders = [k for k in range(len(self.owners)) if self.owners[k] != worker]
            self.intake[worker] = self.submit(collect_marks, self.token, segs, depth, senders,
                                              [self.visits[j] for j in segs],
                                              *[self._marks(k, worker) for k in senders], worker=worker,
                                              key=f"collect-{depth}-{segs[0]}")

    def _submit_receives(self, depth: int) -> None:
        """Submit, for every worker, the receives of the marks sent to its segments in pass
        ``depth``, after its own visits of the pass: with files, one receive writes them
        to the segments' files; in memory a chain of receives merges them, one sending
        worker's at a time (each worker's chain starting with a different one, its own
        last), so that a worker holds no more than one worker's marks as they come in."""
        order, links = list(self.held), []
        for t, (worker, segs) in enumerate(self.held.items()):
            groups = [list(range(len(self.owners)))] if self.out is not None else [
                self.held[sender] for sender in order[t + 1:] + order[:t + 1] if sender != worker or len(segs) > 1]
            before = [self.visits[j] for j in segs]
            for group in groups or [[]]:
                here = [self.visits[k] for k in group if self.owners[k] == worker]  # handed in-process
                before = [self.submit(receive_marks, self.token, segs, depth, group, before + here,
                                      *[self._marks(k, worker) for k in group if self.owners[k] != worker],
                                      worker=worker, key=f"receive-{depth}-{segs[0]}-{len(links)}")]
                links.append(before[0])
            self.intake[worker] = before[0]
        self.receives[depth] = links

    def _tally(self, depth: int, summaries: list[dict], arrived: list[dict], checked: int,
               seconds: float) -> LayerReport:
        """Keep what pass ``depth`` reported (files, counts) and sum it up; every byte
        pass ``checked`` sent must have been received (by receives, or by the visits)."""
        self.files, sent, busy = {}, 0, {}
        for k, got in enumerate(summaries):
            self.files.update(got["files"])
            self.carried[k], self.sizes[k] = got["carried"], got["layer"]
            sent += sum(size for _, size in got["sent"])
            busy[self.owners[k]] = busy.get(self.owners[k], 0.0) + got["seconds"]
            self.peak_memory = max(self.peak_memory, got["peak_memory"])
        for got in arrived:
            self.files.update(got["files"])
        self.sent[depth] = self.last_sent = sent
        self._arrived(checked, sum(got["received"] for got in summaries) + sum(got["bytes"] for got in arrived))
        between = sum(size for k, got in enumerate(summaries) for j, size in got["sent"]
                      if self.owners[k] != self.owners[j])
        slowest = max(busy, key=busy.get)
        return LayerReport(depth, sum(got["layer"] for got in summaries), sent, between,
                           sum(got["crossing"] for got in summaries), slowest, busy[slowest], seconds)

    def _arrived(self, depth: int, received: int) -> None:
        """Check that the ``received`` bytes are all the marks pass ``depth`` sent."""
        sent = self.sent.pop(depth, 0)
        if sent != received:
            raise RuntimeError(f"layer {depth}: {sent} bytes of marks sent but {received} received")

    def gather(self, role: str, s: Segment) -> np.ndarray:
        """Segment ``s``'s table (``role`` seg) or tablebase part (tb), from its owner."""
        return self._wait([self.submit(segment_table, self.token, s.k, role, worker=self.owners[s.k],
                                       key=f"gather-{role}-{s.k}")], -1)[0]

    def gather_whole(self, role: str, segs: list[Segment], size: int) -> np.ndarray:
        """The table of ``size`` states (``role`` seg) or tablebase (tb) the segments
        ``segs`` cut, gathered a segment at a time (its bytes and one segment's at most)."""
        whole = np.empty(table_bytes(size), dtype=np.uint8)
        for s in segs:
            part = self.gather(role, s)
            whole[s.lo // 4:s.lo // 4 + len(part)] = part
        return whole

    def _wait(self, futures: list, depth: int, each: Callable | None = None, reported: bool = False) -> list:
        """The results of ``futures`` (with ``reported``: visits, their reports, and the
        futures are let go once read), in order; stop with a PuzzleError as soon as a
        worker holding segments has left the cluster."""
        finished: queue.SimpleQueue = queue.SimpleQueue()
        for future in futures:  # called once each, as it finishes (not when its result is lost with a worker)
            future.add_done_callback(finished.put)
        results = {}
        while len(results) < len(futures):
            take_interrupt()
            try:
                future = finished.get(timeout=POLL)
            except queue.Empty:
                self._check_workers(depth)
                continue
            results[future.key] = self._report_of(future, depth) if reported else self._result(future, depth)
            if each:
                each(results[future.key])
        return [results[f.key] for f in futures]

    def _result(self, future, depth: int):
        """A done task's result; when it failed, a lost worker is named first (a result
        held by a worker that is then lost is computed again, and so can fail after it was
        seen finished)."""
        while future.status == "finished":
            try:  # fetched through the scheduler: one that stops answering is named, not waited on forever
                return future.result(timeout=POLL)
            except TimeoutError:
                self._check_workers(depth)
            except Exception:  # noqa: BLE001 - named below, or raised as it is
                break
        self._fail(future, depth)

    def _fail(self, future, depth: int):
        """Raise a failed task's error, a lost worker named first."""
        self._check_workers(depth)
        _raise_remote(future, depth, self.left())

    def _report_of(self, future, depth: int) -> dict:
        """A done visit's report, then let go of the visit (its result, marks for other
        workers, is the next pass's to take); a failed one's error as :meth:`_result`."""
        if future.status != "finished":
            self._fail(future, depth)
        deadline = time.monotonic() + REPORT_WAIT
        while (report := self.reports.take(future.key)) is None:  # sent before the visit ended: almost always here
            take_interrupt()
            self._check_workers(depth)
            if time.monotonic() > deadline:
                raise PuzzleError(f"task {future.key!r} finished but its report never came; "
                                  f"{_lost_message([], depth, self.left())}")
        future.release()
        return report

    def _check_workers(self, depth: int) -> None:
        """Stop the run if a worker holding segments has left the cluster, or has stayed
        paused (starting no task) with no task running for :data:`PAUSED_WAIT` seconds, or
        the scheduler has not answered for
        :data:`~puzzlespace.explore.dask_cluster.SCHEDULER_WAIT` seconds."""
        try:
            seen = workers_seen(self.client)
        except Unanswered as exc:
            raise _unanswered(exc, depth, self.left()) from None
        lost = sorted(self.workers - set(seen))
        if lost:
            raise WorkerLost(_lost_message(lost, depth, self.left()))
        paused = sorted(w for w in self.workers if seen[w]["status"] == "paused")
        if not paused:
            self.paused_since = None
            return
        self.paused_since = self.paused_since or time.monotonic()
        if time.monotonic() - self.paused_since < PAUSED_WAIT:
            return
        running = asked(self.client, lambda: self.client.run(running_tasks, workers=paused), paused)
        idle = [w for w, tasks in running.items() if not tasks]
        if idle:
            raise WorkerPaused(f"worker{'s' * (len(idle) > 1)} {', '.join(idle)} paused "
                               f"{_when(depth)}, its memory past "
                               "Dask's pause line (a fraction of its limit; the segments a worker holds stay in "
                               f"it), and a paused worker starts no task; start the workers with {NO_PAUSE} (see "
                               f"docs/scaling.md) or give them more memory; {_lost_message([], depth, self.left())}")

    def release(self) -> None:
        """Let go of the run's tasks, so that those still to run are forgotten, and drop its
        segments from every worker still there, waiting at most :data:`RELEASE_WAIT` (after
        an error or Ctrl-C, a task that starts all the same finds no segment to touch). The
        tasks are released, not cancelled: Dask's cancel fails on a task whose dependents no
        client holds (a take)."""
        held = [*self.in_flight, *self.takes.values(), *(self.visits or []), *self.intake.values()]
        for future in held + [f for visits in self.ahead for f in visits] + [
                f for links in self.receives.values() for f in links]:
            future.release()
        self.reports.clear()
        try:
            self.client.unsubscribe_topic(report_topic(self.token))
        except Exception:  # noqa: BLE001 - the cluster may be gone
            pass
        dropping = threading.Thread(target=self._drop_segments, daemon=True, name="puzzlespace-release")
        dropping.start()
        dropping.join(RELEASE_WAIT)

    def _drop_segments(self) -> None:
        """Drop the run's segments from every worker still there, and any orphaned run's."""
        try:
            self.client.run(release_run, self.token, workers=sorted(self.workers & set(self.client.nthreads())),
                            on_error="ignore")
            drop_orphaned_runs(self.client)  # again: a killed client's tasks that were under way at the start
        except Exception:  # noqa: BLE001 - the cluster may be gone; nothing is left to free then
            pass


class _Reports:
    """The visits' reports of a run as they arrive (Dask events: (time, report)), by
    visit key. The handler of the run's topic: the client keeps it even after the run
    unsubscribes, so it holds nothing but the reports not read yet."""

    def __init__(self):
        self.by_key: dict[str, dict] = {}
        self.arrived = threading.Condition()

    def __call__(self, event: tuple) -> None:
        with self.arrived:
            self.by_key[event[1]["key"]] = event[1]
            self.arrived.notify_all()

    def take(self, key: str) -> dict | None:
        """The report of visit ``key``, waiting up to :data:`POLL` seconds for it; None if
        it has not come."""
        with self.arrived:
            self.arrived.wait_for(lambda: key in self.by_key, timeout=POLL)
            return self.by_key.pop(key, None)

    def clear(self) -> None:
        with self.arrived:
            self.by_key.clear()


class WorkerLost(PuzzleError):
    """A worker holding segments left the cluster during a run."""


class WorkerPaused(PuzzleError):
    """A worker holding segments paused during a run, for good: its memory stays above
    Dask's pause line, so it would never start the run's next task."""


def _left(out: Path | None, intact: int | None) -> str:
    """What is left of a run that fails, with ``intact`` the last layer whose checkpoint in
    ``out`` is whole (-1: none; None: the checkpoint it resumes, as it was)."""
    if out is None:
        return "nothing was saved (with --out DIR a run keeps a checkpoint of every layer)"
    if intact is None:
        return f"the checkpoint in {str(out)!r} is as it was: continue with --resume"
    return (f"the checkpoint of layer {intact} in {str(out)!r} is intact: continue with --resume" if intact >= 0
            else "run it again")


#: Why a worker may have left a run, the likeliest first: one that leaves without a word
#: was killed more often than stopped by its nanny or dropped by the scheduler.
LEAVING_CAUSES = ("killed by the system's out-of-memory killer or by a signal; else over its memory limit; else "
                  "unresponsive past the scheduler's timeout (worker-ttl), or its machine gone")


def _lost_message(lost: list[str], depth: int, then: str) -> str:
    """What to say after losing workers ``lost`` (none named: the cause says which)
    during pass ``depth`` (-1: while starting), which leaves ``then`` (see :func:`_left`):
    what is known (which worker left, when), then its likely causes in order, then ``then``."""
    if not lost:
        return then
    return (f"worker {', '.join(lost)} left the cluster {_when(depth)}, taking its segments with it (likely "
            f"{LEAVING_CAUSES}); {then}")


def _unanswered(exc: Unanswered, depth: int, left: str) -> PuzzleError:
    """What a run says of a request of the cluster's that went unanswered during pass
    ``depth`` (-1: starting), which leaves ``left`` (see :func:`_left`)."""
    if exc.lost:
        return WorkerLost(_lost_message(exc.lost, depth, left))
    return PuzzleError(f"{silent_scheduler(' ' + _when(depth))}; {left}")


def _when(depth: int) -> str:
    """When in a run pass ``depth`` is (-1: starting), as a message says it."""
    return f"during layer {depth}" if depth >= 0 else "while starting"


def _raise_remote(future, depth: int, left: str) -> None:
    """Raise a failed task's error on the client: a PuzzleError as it is; a task
    cancelled, lost or whose worker was killed while running it as :class:`WorkerLost`."""
    if future.status != "error":  # cancelled or lost: its worker is gone
        raise WorkerLost(f"task {future.key!r} was {future.status}; {_lost_message([], depth, left)}")
    exc = future.exception()
    if isinstance(exc, dask_distributed().KilledWorker):
        raise WorkerLost(f"a worker died running {future.key!r} {_when(depth)} (likely {LEAVING_CAUSES}); "
                         f"{_lost_message([], depth, left)}") from None
    if isinstance(exc, MemoryError):
        raise PuzzleError(f"a worker ran out of memory running {future.key!r} ({exc}); use more workers or "
                          f"segments, or workers with more memory; {_lost_message([], depth, left)}") from None
    raise exc
