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
(see :func:`local_cluster`), and a run refuses workers of any cluster whose segments
would pass their pause or restart line (:func:`memory_lines`).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import queue
import socket
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .._version import __version__
from ..contracts import PuzzleRules as Puzzle
from ..datafile import claim, let_go
from ..errors import PuzzleError
from ..bits import layer_value, new_blocks, table_bytes
from ..resources import available_memory, human, peak_rss
from . import checkpoint
from .engine import ExploreResult, kernel_of, new_buffers
from .packing import unpack_marks, write_block
from .segments import (Segment, SegmentStore, check_resumed, crc_text, disk_needed, empty_dir, file_crc,
                       file_errors, file_parts, first_tables, load_code, merge_sent, prepare, result_of,
                       resumed_values, visit)

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
#: Seconds between checks that every worker holding segments is still there.
POLL = 1.0
#: Seconds a worker holding segments may stay paused before the run stops, if it is
#: running none of the run's tasks then (Dask may spill its results and unpause it).
PAUSED_WAIT = 15.0
#: Seconds the client waits for a finished visit's report (a Dask event, sent before the
#: visit ends) before it gives up on the run.
REPORT_WAIT = 60.0
#: Seconds the client waits for the scheduler to answer a check of the workers before it
#: gives up on the run (a scheduler stopped, or its machine frozen, keeps its connections
#: open and answers nothing).
SCHEDULER_WAIT = 30.0
#: Seconds a stopping run waits for its segments to be dropped from the workers: one that
#: is dying (a SIGTERM to the whole job) holds Dask's broadcast for its connect timeout,
#: 30 s; a later run drops what is left (:func:`drop_orphaned_runs`).
RELEASE_WAIT = 5.0
#: What an error about the cluster tells the user to install.
EXTRA = 'pip install "puzzlespace[cluster]"'


def _distributed():
    try:
        import distributed
    except ImportError:
        raise PuzzleError(f"--workers and --scheduler need Dask's distributed scheduler: {EXTRA}") from None
    return distributed


@contextmanager
def local_cluster(workers: int, threads: int = 1, memory_limit: int | None = None, puzzle: Puzzle | None = None):
    """A client of a new cluster of ``workers`` processes on this machine, ``threads``
    threads and ``memory_limit`` bytes (default: this machine's memory shared out) each;
    closed on exit. Workers neither pause nor spill: the segments they hold are not
    Dask's data; their nannies restart them past :data:`RESTART_AT` of their limit. Nor
    do they sample their threads' stacks every 10 ms for Dask's profiler, which sees
    nothing of the compiled code the tasks run.

    The workers never take a Ctrl-C (SIGINT) of their own: a terminal sends it to every
    process of its foreground group, and the client, which takes it, stops them itself.
    One pressed while the client and cluster close (a second, say) is taken once they are
    closed: taken midway, it would leave the workers' semaphores to Python's warnings.

    With ``puzzle``, the code its runs need is compiled here (or read from numba's
    cache) while the workers start, so that they read it from the cache, not each
    compile it. A ``memory_limit`` that leaves a worker no room for segments is refused
    before any worker starts."""
    distributed = _distributed()
    import dask

    if memory_limit is not None:
        _refuse_without_room("each worker's", MemoryLine(memory_limit))

    settings = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
                "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": RESTART_AT,
                "distributed.worker.profile.enabled": False}
    code = cluster = None
    try:
        with _ctrl_c_held():
            if puzzle is not None:
                compiling = ThreadPoolExecutor(max_workers=1)
                code = compiling.submit(load_code, puzzle.state_index())
                compiling.shutdown(wait=False)  # the compile runs on; nothing else is submitted
            with dask.config.set(settings):
                cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                                   memory_limit=memory_limit or "auto", dashboard_address=":0",
                                                   silence_logs=50)
        if code is not None:
            code.result()  # waited for here, so that the cluster is closed whatever happens meanwhile
        client = distributed.Client(cluster)
        try:
            _quicken(client)
            yield client
        finally:
            with _ctrl_c_held():
                client.close()
    finally:
        if cluster is not None:
            with _ctrl_c_held():
                cluster.close()


@contextmanager
def _ctrl_c_held():
    """Hold back SIGINT from this thread, and so from the threads it starts and the
    processes they start (which keep the mask: their SIGINT stays pending, never taken).
    In the main thread a Ctrl-C meanwhile (taken by a thread started before) is only
    noted, and handed on exit to the handler it would have met (KeyboardInterrupt, as a
    rule). Multiprocessing's resource tracker is started first: starting it lets SIGINT
    through in the thread that starts it."""
    import signal
    from multiprocessing import resource_tracker

    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - Windows: no process groups to share a Ctrl-C
        yield
        return
    resource_tracker.ensure_running()
    main = threading.current_thread() is threading.main_thread()
    pressed: list[int] = []
    handler = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum)) if main else None
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending SIGINT is noted now
        if main:
            signal.signal(signal.SIGINT, signal.SIG_DFL if handler is None else handler)
    if pressed and callable(handler):
        handler(signal.SIGINT, None)  # Python's own raises KeyboardInterrupt
    elif pressed and handler in (signal.SIG_DFL, None):
        raise KeyboardInterrupt


#: The fraction of its memory limit past which the nanny of a worker :func:`local_cluster`
#: starts restarts it (Dask's default: 0.95). The limit is the run's budget; a worker's
#: peak is its segments and the marks of one pass, so the line has only to catch one
#: that outgrows it, and a restart loses the worker's segments (the run stops).
RESTART_AT = 0.98


#: Seconds a message stream of the cluster :func:`local_cluster` starts waits to batch
#: messages (Dask: 2 ms from a worker, 5 ms to one, 10 ms from the client). A pass's
#: tasks wait on the last pass's, so every pass waits out those batches in turn.
STREAM_INTERVAL = 0.0005


def _quicken(client) -> None:
    """Shorten the batching of the message streams between the client, the scheduler and
    the workers to :data:`STREAM_INTERVAL` (Dask has no setting for it: the streams'
    ``interval``, left as it is where a version of Dask has none). The functions go to
    the workers by name, so each imports this module (and numba) now, as the command
    line has before a run in one process, rather than in a run's first task."""
    _quicken_streams([getattr(client, "scheduler_comm", None)])
    client.run_on_scheduler(_quicken_scheduler)
    client.run(_quicken_worker)


def _quicken_streams(streams) -> None:
    """Set each stream's (a Dask ``BatchedSend``'s) batching interval to :data:`STREAM_INTERVAL`."""
    for stream in streams:
        if isinstance(getattr(stream, "interval", None), float):
            stream.interval = STREAM_INTERVAL


def _quicken_scheduler(dask_scheduler) -> None:
    """On the scheduler: its streams to the workers and to the clients."""
    _quicken_streams([*getattr(dask_scheduler, "stream_comms", {}).values(),
                      *getattr(dask_scheduler, "client_comms", {}).values()])


def _quicken_worker(dask_worker) -> None:
    """On a worker: its stream to the scheduler."""
    _quicken_streams([getattr(dask_worker, "batched_stream", None)])


#: Memory a worker needs besides its segments: the process (Python, NumPy, numba, Dask)
#: and the marks in flight of the largest layers (its peak, measured in docs/scaling.md,
#: with a margin).
WORKER_OVERHEAD = 360_000_000


@dataclass(frozen=True)
class MemoryLine:
    """Where Dask stops a worker's work: at ``fraction`` of its memory ``limit`` (bytes; 0:
    none) it pauses (``pauses``: it starts no task until its memory falls back, and
    the segments it holds never do), or its nanny restarts it (losing its segments)."""

    limit: int
    fraction: float = 0.95
    pauses: bool = False

    @property
    def at(self) -> int:
        """The line in bytes."""
        return int(self.fraction * self.limit)

    @property
    def stops(self) -> str:
        """Where Dask stops the worker, in words."""
        return f"Dask {'pauses' if self.pauses else 'restarts'} it at {self.fraction:.0%} of it"

    def __str__(self) -> str:
        return f"its memory limit of {human(self.limit)} ({self.stops})"


#: How workers get more memory: those --workers starts, and those started by hand.
MORE_MEMORY = " (--max-memory with --workers; dask worker --memory-limit)"
#: What turns a worker's pausing off (docs/scaling.md starts workers with it).
NO_PAUSE = "DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE=False"


def check_worker_memory(segs: Sequence[Segment], owners: Sequence[str], lines: dict[str, MemoryLine], tables: int,
                        in_files: bool) -> None:
    """Refuse a run whose workers would hold more than Dask lets them (``lines[worker]``;
    absent or without a limit: not checked): each holds the ``tables`` 2-bit tables of
    the segments it owns (``owners[k]`` segment ``k``'s), or ``in_files`` of its largest
    one (one in memory at a time), plus :data:`WORKER_OVERHEAD` (an estimate: the marks
    in flight grow with the largest layer)."""
    held: dict[str, list[int]] = {}
    for s in segs:
        held.setdefault(owners[s.k], []).append(table_bytes(s.hi - s.lo) * tables)
    for worker, sizes in held.items():
        line = lines.get(worker) or MemoryLine(0)
        need, room = max(sizes) if in_files else sum(sizes), line.at - WORKER_OVERHEAD
        if not line.limit or need <= room:
            continue
        unpause = f", or start the workers with {NO_PAUSE} (see docs/scaling.md)" if line.pauses else ""
        _refuse_without_room(f"worker {worker}'s", line, unpause)
        room_text = f"room for {human(room)} within {line}"
        if in_files:
            raise PuzzleError(f"a segment's table takes {human(need)} but worker {worker} has {room_text}; "
                              f"use more segments (--segments N), or workers with more memory{MORE_MEMORY}{unpause}")
        raise PuzzleError(f"worker {worker} would hold {human(need)} of segments but has {room_text}; use more "
                          f"workers, or workers with more memory{MORE_MEMORY}, or give --out DIR (the segments in "
                          f"files, one in memory at a time){unpause}")


def worker_memory(max_memory: int, workers: int, size: int, gathers_tablebase: bool) -> int:
    """Each of ``workers`` new workers' memory limit when ``max_memory`` bytes are shared
    out among them, less the tablebase of ``size`` states this process gathers at the end
    when ``gathers_tablebase`` (a run without files)."""
    gathered = table_bytes(size) if gathers_tablebase else 0
    share = (max_memory - gathered) // workers
    if gathered and share <= WORKER_OVERHEAD:
        raise PuzzleError(f"--save without --out gathers the tablebase ({human(gathered)}) in this process, out of "
                          f"--max-memory {human(max_memory)}, which leaves the workers too little; raise it, or give "
                          "--out DIR (the tablebase is then written a segment at a time)")
    return share


def _refuse_without_room(whose: str, line: MemoryLine, unpause: str = "") -> None:
    """Refuse a worker whose memory ``line`` leaves no room for segments beside
    :data:`WORKER_OVERHEAD` (``whose``: the worker named, possessive)."""
    if line.limit and line.at <= WORKER_OVERHEAD:
        raise PuzzleError(f"{whose} memory limit of {human(line.limit)} leaves no room for segments ({line.stops}, "
                          f"and the program and the marks in flight take about {human(WORKER_OVERHEAD)}); give the "
                          f"workers more memory{MORE_MEMORY}{unpause}")


def workers_seen(client, wait: float | None = None) -> dict[str, dict]:
    """The scheduler's workers, by address: name, threads, memory limit (0: none), status
    ("running", "paused", ...) and nanny (None: none). Asked of the scheduler itself:
    some versions of Dask list only five workers in ``Client.scheduler_info()``.
    TimeoutError when it has not answered within ``wait`` seconds (None: no limit)."""

    def workers_of(dask_scheduler) -> dict[str, dict]:  # nested: sent by value, for a scheduler without puzzlespace
        return {address: {"name": ws.name, "nthreads": ws.nthreads, "memory_limit": ws.memory_limit or 0,
                          "status": getattr(ws.status, "name", str(ws.status)), "nanny": ws.nanny}
                for address, ws in dask_scheduler.workers.items()}

    return client.run_on_scheduler(workers_of, callback_timeout=wait)  # a keyword of Dask's Client.sync


def _seen(client) -> dict[str, dict]:
    """:func:`workers_seen`, or :class:`Unanswered` when the scheduler has not answered
    for :data:`SCHEDULER_WAIT` seconds."""
    try:
        return workers_seen(client, SCHEDULER_WAIT)
    except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
        raise Unanswered() from None


class Unanswered(PuzzleError):
    """A request of the cluster's that went unanswered: the scheduler silent for
    :data:`SCHEDULER_WAIT` seconds (``lost`` empty), or workers it waited on gone
    (``lost``, their addresses). A run says when, and what is left (:meth:`saying`)."""

    def __init__(self, lost: Sequence[str] = ()):
        self.lost = list(lost)
        super().__init__(f"worker {', '.join(self.lost)} left the Dask cluster" if self.lost else _silent(""))

    def saying(self, depth: int, left: str) -> str:
        """The message of a run in pass ``depth`` (-1: starting) that leaves ``left`` (see
        :func:`_left`)."""
        return _lost_message(self.lost, depth, left) if self.lost else f"{_silent(' ' + _when(depth))}; {left}"


def _silent(when: str) -> str:
    """What :class:`Unanswered` says of a silent scheduler, ``when`` (" during layer 4", say)."""
    return f"the Dask scheduler has not answered for {SCHEDULER_WAIT:g} s{when} (stopped, or its machine frozen)"


def asked(client, request: Callable[[], object], workers: Sequence[str] = ()):
    """``request()``: a call of ``client``'s that waits on the cluster (``Client.run``,
    say), made in a thread of its own while this one checks the cluster every
    :data:`POLL` seconds. :class:`Unanswered` once the scheduler has not answered a check
    for :data:`SCHEDULER_WAIT` seconds, or one of ``workers`` (those the request waits on;
    none named: every worker of the first check) has left the cluster; the thread is
    then left waiting (a daemon). A frozen scheduler keeps its connections open, and
    Dask's calls have no limit of their own but for their results' size."""
    done, answer = threading.Event(), []

    def call() -> None:
        try:
            answer.append((True, request()))
        except BaseException as exc:  # noqa: BLE001 - raised again in the asking thread
            answer.append((False, exc))
        finally:
            done.set()

    threading.Thread(target=call, daemon=True, name="puzzlespace-request").start()
    waited_on = set(workers)
    while not done.wait(POLL):
        seen = _seen(client)
        waited_on = waited_on or set(seen)
        if waited_on - set(seen):
            raise Unanswered(sorted(waited_on - set(seen)))
    ok, value = answer[0]
    if not ok:
        raise value
    return value


def check_installed(client) -> None:
    """Refuse a cluster whose workers cannot run this puzzlespace: a worker without it,
    or with another version (the tasks name its functions, which the workers import)."""

    def version() -> str:  # nested: sent by value, so that it runs where puzzlespace is missing
        from puzzlespace._version import __version__ as installed
        return installed

    for worker, got in sorted(asked(client, lambda: client.run(version, on_error="return")).items()):
        if isinstance(got, Exception):
            raise PuzzleError(f"worker {worker} cannot import puzzlespace ({type(got).__name__}: {got}); install "
                              f"puzzlespace {__version__} on every worker")
        if got != __version__:
            raise PuzzleError(f"worker {worker} runs puzzlespace {got}, this program {__version__}: run the same "
                              "version on every worker (restart the workers after an upgrade)")


def drop_orphaned_runs(client) -> int:
    """Drop from the workers the runs of clients that are gone (the segments a killed
    client's run held would otherwise stay in the workers' memory for as long as they
    live), and from the scheduler the report topics no client hears any more; how many
    runs were dropped, over all workers. A run calls it as it starts and as it ends."""

    def clients(dask_scheduler) -> list[str]:  # nested: sent by value, for a scheduler without puzzlespace
        return list(dask_scheduler.clients)

    def drop_unheard(prefix: str, dask_scheduler) -> None:  # nested, as clients
        # Dask keeps a topic's last events for as long as it runs and has no call that drops
        # a topic: its broker's table is reached into where it is as this version has it.
        topics = getattr(getattr(dask_scheduler, "_broker", None), "_topics", None)
        if isinstance(topics, dict):  # a client gone (killed) stays a topic's subscriber: only those here count
            heard = lambda t: set(getattr(t, "subscribers", [None])) & {*dask_scheduler.clients, None}  # noqa: E731
            for name in [n for n, t in topics.items() if n.startswith(prefix) and not heard(t)]:
                del topics[name]

    def drop() -> int:
        client.run_on_scheduler(drop_unheard, _topic(""))
        return sum(client.run(_drop_orphans, client.run_on_scheduler(clients)).values())

    return asked(client, drop)


def memory_lines(client) -> dict[str, MemoryLine]:
    """Each worker's :class:`MemoryLine`, by address and by name (either may name a
    worker): the lower of its pause line and, with a nanny, its nanny's restart line
    (the workers' own Dask settings)."""
    seen, settings = asked(client, lambda: (workers_seen(client), client.run(_memory_settings)))
    lines = {}
    for address, w in seen.items():
        pause, terminate = settings.get(address, (0.8, 0.95))
        steps = [(pause, True)] if pause else []
        steps += [(terminate, False)] if terminate and w["nanny"] else []
        fraction, pauses = min(steps) if steps else (1.0, False)
        for key in (address, w["name"]):
            if key is not None:
                lines[key] = MemoryLine(w["memory_limit"], fraction, pauses)
    return lines


def _memory_settings(dask_worker) -> tuple:
    """On a worker: the fractions of its memory limit at which it pauses and at which its
    nanny restarts it (False: never)."""
    import dask

    manager = getattr(dask_worker, "memory_manager", None)
    pause = getattr(manager, "memory_pause_fraction", dask.config.get("distributed.worker.memory.pause"))
    return pause, dask.config.get("distributed.worker.memory.terminate")


#: Seconds a client waits for a scheduler to accept its connection and to answer.
CONNECT_WAIT = 10.0


@contextmanager
def remote_cluster(address: str):
    """A client of the running Dask scheduler at ``address`` (``tcp://HOST:8786``);
    PuzzleError within :data:`CONNECT_WAIT` seconds or two when there is none there."""
    distributed = _distributed()
    try:
        _check_scheduler(address)
        client = distributed.Client(address, timeout=f"{CONNECT_WAIT}s")
    except PuzzleError as exc:
        failed = str(exc)
    except ValueError as exc:  # Dask's parse of the address
        failed = f"--scheduler {address!r} is not a scheduler's address such as tcp://HOST:8786 ({exc})"
    except (OSError, TimeoutError) as exc:
        failed = f"cannot reach the Dask scheduler at {address!r} ({exc}); is it running?"
    except TypeError as exc:  # Dask's TLS connector without a certificate, or another it cannot set up
        fix = (": give Dask the client's TLS certificate and key (distributed.comm.tls.* in its configuration)"
               if address.startswith("tls://") else
               ": Dask cannot connect this way here; give a tcp:// or tls:// address")
        failed = f"cannot connect to {address!r} ({exc}){fix}"
    else:
        # Dask's own log lines on the way (a scheduler gone: its comms closed, its client giving
        # up reconnecting) are kept off stderr, as a cluster local_cluster starts keeps them: a
        # run reports what happened in its own words.
        with distributed.utils.silence_logging_cmgr(logging.CRITICAL), client:
            yield client
        return
    # The half-made client is closed now: collected later, its close could come inside
    # another client's start and wait forever on the lock Dask's loop runners share.
    gc.collect()
    raise PuzzleError(failed)


def _check_scheduler(address: str) -> None:
    """Raise PuzzleError at once where nothing listens at a tcp:// or tls:// ``address``
    (Dask would retry until its timeout), and within :data:`CONNECT_WAIT` seconds where
    what listens at a tcp:// one is not a Dask scheduler (Dask's client can wait on it
    forever); ValueError for an address Dask cannot parse."""
    from distributed.comm import parse_address, parse_host_port

    scheme, where = parse_address(address)
    if scheme not in ("tcp", "tls"):
        return
    host, port = parse_host_port(where)
    try:
        socket.create_connection((host, port), timeout=CONNECT_WAIT).close()
    except socket.gaierror as exc:
        raise PuzzleError(f"--scheduler {address!r}: cannot find the host {host!r} ({exc.strerror})") from None
    except (OSError, OverflowError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise PuzzleError(f"cannot reach the Dask scheduler at {address!r} ({reason}); is it running?") from None
    if scheme != "tcp":
        return
    try:  # in a thread of its own: the caller may be running an event loop (a notebook)
        with ThreadPoolExecutor(max_workers=1) as asking:
            kind = asking.submit(asyncio.run, _identity(address)).result().get("type")
        said = f"a Dask {kind}"
    except (TimeoutError, asyncio.TimeoutError):
        kind, said = None, f"no answer in Dask's protocol within {CONNECT_WAIT:.0f} s"
    except Exception:  # noqa: BLE001 - closed on Dask's greeting, or answered otherwise: Dask's reading of a
        kind, said = None, "no answer in Dask's protocol"  # foreign answer fails in many ways (MemoryError too)
    if kind != "Scheduler":
        raise PuzzleError(f"what listens at {address!r} is not a Dask scheduler ({said}); give the scheduler's "
                          "address, such as tcp://HOST:8786")


async def _identity(address: str) -> dict:
    """What the Dask server at ``address`` says it is (``{"type": "Scheduler", ...}``)."""
    from distributed.comm import connect

    comm = await asyncio.wait_for(connect(address, timeout=CONNECT_WAIT), CONNECT_WAIT)
    try:
        await comm.write({"op": "identity"})
        return await asyncio.wait_for(comm.read(), CONNECT_WAIT)
    finally:
        comm.abort()


@dataclass
class LayerReport:
    """One pass over a layer on the cluster: the layer's ``states``, the packed marks
    ``bytes_sent`` between segments (``bytes_between_workers`` of them between different
    workers; the run stops if any of them is not received, by the receives or the next
    pass's visits), the crossing marks the walk generated before
    packing dropped repeats, and the worker whose tasks took longest (``slowest_seconds``)."""

    depth: int
    states: int
    bytes_sent: int
    bytes_between_workers: int
    crossing_marks: int
    slowest_worker: str
    slowest_seconds: float
    seconds: float


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
) -> ExploreResult:
    """Enumerate every position reachable from ``puzzle.goal`` on the Dask cluster of
    ``client``, in ``segments`` segments (default: one per worker; a resumed checkpoint's)
    held by ``workers`` (addresses; default: all the cluster's, in order). Same result,
    checkpoints and tablebase as :func:`~puzzlespace.explore.segments.explore_segmented`;
    ``progress(depth, segments done, segments, states so far)`` as segments finish and
    ``layer_done(report)`` after each layer."""
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
    owner = lambda segs: [_owner(s.k, owners, on_disks, out) for s in segs]  # noqa: E731

    def check(segs: list[Segment]) -> None:
        gathered, available = table_bytes(index.size) if keep_table and out is None else 0, available_memory()
        if gathered > available:
            raise PuzzleError(f"without --out the tablebase ({human(gathered)}) is gathered in this process, which "
                              f"has {human(available)} of memory available; give --out DIR (it is then written a "
                              "segment at a time)")
        check_worker_memory(segs, owner(segs), lines, tables, out is not None)
        if local and not resume:
            _check_disks(client, segs, owner(segs), out, tables)

    segs, identity, (depth, counts, before) = prepare(puzzle, index, segments or len(owners), out, resume, store,
                                                      force, check=check, disk=not local)
    run = _Run(client, uuid.uuid4().hex, owner(segs), out, intact=depth - 1)
    try:
        with file_errors(out, lambda: depth, None), _cluster_kept(client, lambda: depth, run.left):
            if local:
                _claim_on_workers(client, run.token, sorted(run.workers), out, empty=not resume)
            values = run.open(puzzle, index.rank(puzzle.goal), segs, keep_table, store if resume else None, depth)
            if resume:
                check_resumed(out, counts, store.sizes, store.carried, values)
            if out is not None and not resume:
                store.begin(0)
                _commit(store, run, -1, dict(identity, depth=-1, depth_counts=[], seconds=0.0, version=__version__))
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
                asked(client, lambda: client.run(_discard, run.token, workers=sorted(run.workers)), run.workers)
            tablebase = None
            if keep_table and out is None:
                tablebase = run.gather_whole("tb", segs, index.size)
            elif keep_table:
                if local:
                    _gather_tablebase(run, store, segs)
                tablebase = lambda: (store.load("tb", s.k, s.hi - s.lo) for s in segs)  # noqa: E731
    finally:
        run.release()
    return result_of(puzzle, index, counts, found, found_total, antipode_limit, before + time.perf_counter() - t0,
                     max(peak_rss(), run.peak_memory), run.threads, tablebase, resume)


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
        raise (WorkerLost if exc.lost else PuzzleError)(exc.saying(depth(), left())) from None
    except OSError as exc:
        lost = client.status != "running"
        if not lost and not isinstance(exc, (_distributed().comm.CommClosedError, ConnectionError, TimeoutError)):
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
        _segments_here, str(out), list(named.items()), workers=list(workers)), workers).items()}
    for k, mine in named.items():
        claims = [w for w in workers if k in held[w]]
        if len(claims) > 1:
            checked = asked(client, lambda: client.run(_files_intact, str(out), mine, workers=claims), claims)
            for w, intact in checked.items():
                if not intact:
                    held[w].discard(k)
    return held


def _claim_on_workers(client, token: str, workers: Sequence[str], out: Path, empty: bool) -> None:
    """Hold ``out`` on each of ``workers`` (on its own disk) for the run ``token`` (see
    :func:`_claim`), with ``empty`` made empty of checkpoint files; PuzzleError naming a
    worker that cannot."""
    for worker, done in asked(client, lambda: client.run(_claim, token, client.id, str(out), empty,
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
        self.next_worker = _ring(self.owners)
        self.workers = set(self.owners)
        self.client.subscribe_topic(_topic(self.token), self.reports)

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

    def open(self, puzzle: Puzzle, goal: int, segs: list[Segment], keep_table: bool, resumed: SegmentStore | None,
             depth: int) -> dict[int, list[list[int]]]:
        """Make every segment on its owner, for pass ``depth`` next: its first tables (the
        goal's rank: ``goal``), or a resumed checkpoint's files; returns the resumed
        segments' :func:`~puzzlespace.explore.segments.resumed_values`."""
        starts = np.array([s.lo for s in segs[1:]], dtype=np.int64)
        futures = []
        for s in segs:
            held = None
            if resumed is not None:
                mine = {name: crc for name, crc in resumed.files.items() if file_parts(name)[1] == s.k}
                held = dict(files=mine, slot=resumed.slot.get(s.k), carried=resumed.carried.get(s.k, 0),
                            sizes=resumed.sizes.get(s.k, 0))
            futures.append(self.submit(_open, self.token, self.client.id, puzzle, goal, s, starts, self.owners,
                                       self.out, keep_table, held, depth, worker=self.owners[s.k], key=f"open-{s.k}"))
        threads, values = {}, {}
        for s, got in zip(segs, self._wait(futures, -1)):
            self.files.update(got["files"])
            self.carried[s.k] = got["carried"]
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

        visits = self.visits = [self.submit(_visit, self.token, k, depth, room, receive, *after(k),
                                            worker=self.owners[k], key=_visit_key(depth, k)) for k in range(n)]
        # Not kept in flight: a take's marks are let go as soon as the tasks that need them are done.
        self.takes = {(k, worker): self.submit(_take, self.token, k, targets, depth, visits[k], worker=self.owners[k],
                                               key=f"take-{depth}-{k}-{targets[0]}", keep=False)
                      for k in range(n) for worker, targets in self._takers(k).items()}
        if self.out is not None:
            self._submit_receives(depth)
        return visits

    def _takers(self, k: int) -> dict[str, list[int]]:
        """The segments whose marks from segment ``k`` a take hands out, by owner: those of
        every worker but its own and the next in the ring (see :func:`_hand_out`)."""
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
            self.intake[worker] = self.submit(_collect, self.token, segs, depth, senders,
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
                before = [self.submit(_receive, self.token, segs, depth, group, before + here,
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
        return self._wait([self.submit(_table, self.token, s.k, role, worker=self.owners[s.k],
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
        if future.status == "finished":
            try:
                return future.result()
            except Exception:  # noqa: BLE001 - named below, or raised as it is
                pass
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
            self._check_workers(depth)
            if time.monotonic() > deadline:
                raise PuzzleError(f"task {future.key!r} finished but its report never came; "
                                  f"{_lost_message([], depth, self.left())}")
        future.release()
        return report

    def _check_workers(self, depth: int) -> None:
        """Stop the run if a worker holding segments has left the cluster, or has stayed
        paused (starting no task) with no task running for :data:`PAUSED_WAIT` seconds, or
        the scheduler has not answered for :data:`SCHEDULER_WAIT` seconds."""
        try:
            seen = _seen(self.client)
        except Unanswered as exc:
            raise PuzzleError(exc.saying(depth, self.left())) from None
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
        running = asked(self.client, lambda: self.client.run(_running, workers=paused), paused)
        idle = [w for w in paused if not running[w]]
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
            self.client.unsubscribe_topic(_topic(self.token))
        except Exception:  # noqa: BLE001 - the cluster may be gone
            pass
        dropping = threading.Thread(target=self._drop_segments, daemon=True, name="puzzlespace-release")
        dropping.start()
        dropping.join(RELEASE_WAIT)

    def _drop_segments(self) -> None:
        """Drop the run's segments from every worker still there, and any orphaned run's."""
        try:
            self.client.run(_release, self.token, workers=sorted(self.workers & set(self.client.nthreads())),
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


def _lost_message(lost: list[str], depth: int, then: str) -> str:
    """What to say after losing workers ``lost`` (none named: the cause says which)
    during pass ``depth`` (-1: while starting), which leaves ``then`` (see :func:`_left`)."""
    if not lost:
        return then
    return (f"worker {', '.join(lost)} left the cluster {_when(depth)} (killed, over its memory limit or its machine "
            f"gone) and took its segments with it; {then}")


def _when(depth: int) -> str:
    """When in a run pass ``depth`` is (-1: starting), as a message says it."""
    return f"during layer {depth}" if depth >= 0 else "while starting"


def _raise_remote(future, depth: int, left: str) -> None:
    """Raise a failed task's error on the client: a PuzzleError as it is; a task
    cancelled, lost or whose worker was killed while running it as :class:`WorkerLost`."""
    if future.status != "error":  # cancelled or lost: its worker is gone
        raise WorkerLost(f"task {future.key!r} was {future.status}; {_lost_message([], depth, left)}")
    exc = future.exception()
    if isinstance(exc, _distributed().KilledWorker):
        raise WorkerLost(f"a worker died running {future.key!r}; {_lost_message([], depth, left)}") from None
    if isinstance(exc, MemoryError):
        raise PuzzleError(f"a worker ran out of memory running {future.key!r} ({exc}); use more workers or "
                          f"segments, or workers with more memory; {_lost_message([], depth, left)}") from None
    raise exc


def _ring(owners: Sequence[str]) -> dict[str, str]:
    """Each worker owning segments -> the next in the order of their first segments
    (itself when it is the only one): the worker whose segments' marks a visit returns."""
    order = list(dict.fromkeys(owners))
    return {worker: order[(i + 1) % len(order)] for i, worker in enumerate(order)}


def _topic(token: str) -> str:
    """The Dask event topic of a run's visit reports."""
    return f"puzzlespace-{token}"


def _visit_key(depth: int, k: int) -> str:
    """The key of pass ``depth``'s visit of segment ``k`` (the run's token follows)."""
    return f"visit-{depth}-{k}"


# ---- on the workers -------------------------------------------------------------------

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
    pool: ThreadPoolExecutor
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
        self.returned = [j for j in senders if owners[j] == _ring(owners)[owners[s.k]] != owners[s.k]]
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
    return _distributed().get_worker()


def _open(token: str, client: str, puzzle: Puzzle, goal: int, s: Segment, starts: np.ndarray, owners: list[str],
          out: Path | None, keep_table: bool, resumed: dict | None, depth: int) -> dict:
    """Hold segment ``s`` in this worker, for pass ``depth`` next, for the run ``token`` of
    the Dask client ``client`` (its id): new first tables (the goal's rank ``goal`` given:
    a worker ranks no state, so it needs none of that code), or a resumed checkpoint's
    files."""
    threads = _this_worker().state.nthreads
    with _OPENING:
        held = _HELD.get(token)
        if held is None:
            index = puzzle.state_index()
            held = _HELD[token] = _Held(client, index, kernel_of(index), threads, new_buffers(index, threads),
                                        starts, keep_table, ThreadPoolExecutor(max_workers=threads))
        if s.k in held.segments:
            raise PuzzleError(f"segment {s.k} was opened twice (Dask ran its task again after losing a worker); "
                              "run it again")
        store = HeldStore(s, owners, out, keep_table, depth)
        held.segments[s.k] = (s, store)
    with held.visiting:
        if resumed is None:
            store.begin(0)
            first_tables(s, goal, store, keep_table)
            files, values = store.propose(), None
        else:
            store.files, store.unchecked = dict(resumed["files"]), set(resumed["files"])
            if resumed["slot"] is not None:
                store.slot[s.k] = resumed["slot"]
            store.carried[s.k], store.sizes[s.k] = resumed["carried"], resumed["sizes"]
            files, values = {}, resumed_values(s, store, keep_table)
        if out is not None:
            os.sync()
    return {"files": files, "carried": store.carried.get(s.k, 0), "threads": held.threads, "values": values}


def _visit(token: str, k: int, depth: int, room: int, receive: bool, _after, senders: list[int], *parts) -> dict:
    """Pass ``depth`` over segment ``k``, after the tasks ``_after`` of the pass before
    (every worker's intake of the marks, or the visits of its worker's segments and the
    takes of the segment's marks) and, with ``receive``, merging first the marks that
    pass sent it: handed to it by its worker's other segments, and by the collect or,
    from the other workers' segments ``senders``, in ``parts`` (as :func:`_collect`'s).
    Reports to the client as a Dask event and returns the marks for the next worker's
    segments (see :func:`_hand_out`)."""
    t0 = time.perf_counter()
    held = _held(token)
    s, store = _held(token, k)
    if receive:
        _collect(token, [k], depth - 1, senders, None, *parts)
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
    _this_worker().log_event(_topic(token), {
        "key": f"{_visit_key(depth, k)}-{token}", "layer": layer, "kept": kept, "total": total,
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


def _take(token: str, k: int, targets: list[int], depth: int, _visited=None) -> dict[int, list[np.ndarray]]:
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


def _collect(token: str, targets: list[int], depth: int, senders: list[int], _before,
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


def _receive(token: str, targets: list[int], depth: int, senders: list[int], _before,
             *parts: dict[int, list[np.ndarray]]) -> dict:
    """Give this worker's segments ``targets`` (all it owns) the marks that ``senders``
    sent them in pass ``depth`` (``parts``: as :func:`_collect`'s, for the senders of
    other workers), after the tasks ``_before`` (its visits of the pass, or the receive
    before in its chain, and the visits of the senders it owns)."""
    _collect(token, targets, depth, [k for k in senders if k not in targets], None, *parts)
    received, files = 0, {}
    for j in targets:
        store = _held(token, j)[1]
        got, written = _accept(store, depth, [k for k in senders if k != j])
        store.propose(written)
        received, files = received + got, dict(files, **written)
    return {"bytes": received, "files": files}


def _table(token: str, k: int, role: str) -> np.ndarray:
    """Segment ``k``'s table (``role`` seg) or tablebase part (tb)."""
    s, store = _held(token, k)
    return store.load(role, k, s.hi - s.lo)


def _discard(token: str) -> None:
    """On a worker: remove the files of its segments that the last complete pass does not
    name (a pass over an empty layer's, the other copy of each table)."""
    for _, store in _held(token).segments.values():
        store.discard()


def _claim(token: str, client: str, out: str, empty: bool) -> None:
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


def _segments_here(out: str, named: list[tuple[int, dict[str, str]]]) -> list[int]:
    """On a worker: the segments ``k`` of ``named`` ((k, its files)) whose files are all in
    ``out`` (on its own disk)."""
    return [k for k, files in named if all((Path(out) / name).is_file() for name in files)]


def _files_intact(out: str, files: dict[str, str]) -> bool:
    """On a worker: whether the ``files`` in ``out`` (name -> CRC-32 as a manifest gives
    it) are all there and match their CRC-32s."""
    try:
        return all(file_crc(Path(out) / name) == crc for name, crc in files.items())
    except OSError:
        return False


def _running(dask_worker) -> int:
    """On a worker: the tasks it is running."""
    return dask_worker.state.executing_count


def _drop_orphans(clients: list[str]) -> int:
    """On a worker: drop the runs of Dask clients not in ``clients`` (gone without letting
    go of them: killed, or their machine lost); how many. A task of theirs under way
    runs to its end (a thread cannot be stopped), then its memory goes too."""
    orphans = {token for token, held in list(_HELD.items()) if held.client not in clients}
    orphans |= {token for token, client, _ in list(_CLAIMS.values()) if client not in clients}
    for token in orphans:
        _release(token)
    return len(orphans)


def _release(token: str) -> None:
    """Drop a run's state and the directory it holds from this worker."""
    with _OPENING:
        for path in [path for path, (holder, *_) in _CLAIMS.items() if holder == token]:
            let_go(Path(path), token, _CLAIMS.pop(path)[2])  # never fails: the segments go below whatever happens
    held = _HELD.pop(token, None)
    if held is not None:
        held.pool.shutdown(wait=False)


def describe_workers(client) -> str:
    """The cluster in a line: workers, threads, memory."""
    workers = _seen(client).values()
    threads = sum(w["nthreads"] for w in workers)
    memory = sum(w.get("memory_limit") or 0 for w in workers)
    return f"{len(workers)} workers, {threads} threads, {human(memory)} of memory"
