"""Dask clusters for explorations: one started on this machine (:func:`local_cluster`), or
a client of a running one (:func:`remote_cluster`), and what a run asks of one: its
workers (:func:`workers_seen`), their versions and memory lines. No wait on a cluster is
without a limit: a request is made while the client checks the scheduler
(:func:`asked`), and one left unanswered raises :class:`Unanswered`.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Sequence

from .._version import __version__
from ..contracts import PuzzleRules as Puzzle
from ..errors import PuzzleError
from ..bits import table_bytes
from ..resources import human
from .segments import Segment, load_code

#: What an error about the cluster tells the user to install.
EXTRA = 'pip install "puzzlespace[cluster]"'

#: Seconds between checks of a cluster the client waits on: its scheduler answers, and
#: the workers waited on (those holding a run's segments) are still there.
POLL = 1.0

#: How often the processes of a cluster :func:`local_cluster` starts time their event loops.
TICK = "500ms"

#: Seconds the client waits for the scheduler to answer a check of the workers before it
#: gives up on the run (a scheduler stopped, or its machine frozen, keeps its connections
#: open and answers nothing).
SCHEDULER_WAIT = 30.0

#: Seconds a client waits for a scheduler to accept its connection and to answer.
CONNECT_WAIT = 10.0

#: The fraction of its memory limit past which the nanny of a worker :func:`local_cluster`
#: starts restarts it (Dask's default: 0.95). The limit is the run's budget; a worker's
#: peak is its segments and the marks of one pass, so the line has only to catch one
#: that outgrows it, and a restart loses the worker's segments (the run stops).
RESTART_AT = 0.98

#: Seconds a message stream of the cluster :func:`local_cluster` starts waits to batch
#: messages (Dask: 2 ms from a worker, 5 ms to one, 10 ms from the client). A pass's
#: tasks wait on the last pass's, so every pass waits out those batches in turn.
STREAM_INTERVAL = 0.0005

#: Memory a worker needs besides its segments: the process (Python, NumPy, numba, Dask)
#: and the marks in flight of the largest layers (its peak, measured in docs/scaling.md,
#: with a margin).
WORKER_OVERHEAD = 360_000_000

#: How workers get more memory: those --workers starts, and those started by hand.
MORE_MEMORY = " (--max-memory with --workers; dask worker --memory-limit)"

#: What turns a worker's pausing off (docs/scaling.md starts workers with it).
NO_PAUSE = "DASK_DISTRIBUTED__WORKER__MEMORY__PAUSE=False"


def dask_distributed():
    """Dask's ``distributed`` package; PuzzleError naming the extra that installs it."""
    try:
        import distributed
    except ImportError:
        raise PuzzleError(f"--workers and --scheduler need Dask's distributed scheduler: {EXTRA}") from None
    return distributed


def dask_logs_off() -> None:
    """Keep Dask's own log lines off stderr for the rest of this process, for a command
    that reports a run in its own words: Dask's coroutines may still log (a connection
    found closed, with its traceback) after the cluster they served has closed, past the
    silence :func:`local_cluster` and :func:`remote_cluster` keep while it is open."""
    dask_distributed()  # its import sets up the handlers
    for handler in logging.getLogger("distributed").handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setLevel(logging.CRITICAL)


@contextmanager
def local_cluster(workers: int, threads: int = 1, memory_limit: int | None = None, puzzle: Puzzle | None = None):
    """A client of a new cluster of ``workers`` processes on this machine, ``threads``
    threads and ``memory_limit`` bytes (default: this machine's memory as Dask counts it,
shared out equally) each;
    closed on exit. Workers neither pause nor spill: the segments they hold are not
    Dask's data; their nannies restart them past :data:`RESTART_AT` of their limit. Nor
    do they sample their threads' stacks every 10 ms for Dask's profiler, which sees
    nothing of the compiled code the tasks run, and the scheduler, nannies and workers
    time their event loops every :data:`TICK` rather than every 20 ms (a measure for
    Dask's dashboard and its warnings of a blocked loop, whose every wake-up costs the
    cores the runs share).

    The workers never take a Ctrl-C (SIGINT) of their own: a terminal sends it to every
    process of its foreground group, and the client, which takes it, stops them itself.
    One pressed while the client and cluster close (a second, say) is taken once they are
    closed: taken midway, it would leave the workers' semaphores to Python's warnings.

    With ``puzzle``, the code its runs need is compiled here (or read from numba's
    cache) while the workers start, so that they read it from the cache, not each
    compile it, and each worker then loads it, as a part of starting the cluster rather
    than of a run's first passes. A memory limit (given or shared out) that leaves a worker no room for
    segments is refused before any worker starts."""
    distributed = dask_distributed()
    import dask
    from distributed.system import MEMORY_LIMIT

    memory_limit = memory_limit or int(MEMORY_LIMIT // workers)
    _refuse_without_room("each worker's", MemoryLine(memory_limit, RESTART_AT), f", or start fewer than {workers}")

    settings = {"distributed.worker.memory.target": False, "distributed.worker.memory.spill": False,
                "distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": RESTART_AT,
                "distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": TICK}
    code = cluster = None
    try:
        with _ctrl_c_held():
            if puzzle is not None:
                compiling = ThreadPoolExecutor(max_workers=1)
                code = compiling.submit(load_code, puzzle.state_index())
                compiling.shutdown(wait=False)  # the compile runs on; nothing else is submitted
            with dask.config.set(settings):
                cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True,
                                                   memory_limit=memory_limit, dashboard_address=":0",
                                                   silence_logs=50)
        if code is not None:
            code.result()  # waited for here, so that the cluster is closed whatever happens meanwhile
        client = distributed.Client(cluster)
        try:
            _quicken(client)
            if puzzle is not None:
                index = puzzle.state_index()
                asked(client, lambda: client.run(load_code, index))
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
    In the main thread a Ctrl-C meanwhile (taken by a thread started before), or a
    SIGTERM that Python handles (the command line's raises KeyboardInterrupt), is only
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
    pressed: list[tuple[int, object]] = []
    held = [signal.SIGINT] + ([signal.SIGTERM] if callable(signal.getsignal(signal.SIGTERM)) else [])
    with _signals_noted(pressed, held if main else []):
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            yield
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a pending SIGINT is noted now
    _hand_on(pressed)


@contextmanager
def _signals_noted(noted: list[tuple[int, object]], signums):
    """Within the block (in the main thread), the signals ``signums`` are only noted in
    ``noted``, each with the handler it would have met (see :func:`_hand_on`)."""
    import signal

    handlers = {s: signal.signal(s, lambda signum, frame: noted.append((signum, handlers[signum]))) for s in signums}
    try:
        yield
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _hand_on(noted: list[tuple[int, object]]) -> None:
    """Hand the first signal ``noted`` to the handler it would have met: a Python one is
    called (Python's own raises KeyboardInterrupt), the default raises KeyboardInterrupt,
    an ignored one does nothing; then forget them all."""
    import signal

    if noted:
        signum, handler = noted[0]
        noted.clear()
        if callable(handler):
            handler(signum, None)
        elif handler in (signal.SIG_DFL, None):
            raise KeyboardInterrupt


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


@contextmanager
def remote_cluster(address: str):
    """A client of the running Dask scheduler at ``address`` (``tcp://HOST:8786``);
    PuzzleError within :data:`CONNECT_WAIT` seconds or two when there is none there."""
    distributed = dask_distributed()
    try:
        _check_scheduler(address)
        client = distributed.Client(address, timeout=f"{CONNECT_WAIT}s")
    except PuzzleError as exc:
        failed = str(exc)
    except ValueError:  # Dask's parse of the address
        failed = f"--scheduler {address!r} is not a scheduler's address such as tcp://HOST:8786"
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
    forever); ValueError for an address Dask cannot parse, with a port out of range, or
    within one process (inproc://)."""
    from distributed.comm import parse_address, parse_host_port

    scheme, where = parse_address(address)
    if scheme == "inproc":
        raise ValueError("an address within one process")
    if scheme not in ("tcp", "tls"):
        return
    host, port = parse_host_port(where)
    if not 0 < port < 1 << 16:
        raise ValueError(f"port {port}")
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


def describe_workers(client) -> str:
    """The cluster in a line: workers, threads, memory."""
    workers = workers_seen(client).values()
    threads = sum(w["nthreads"] for w in workers)
    memory = sum(w.get("memory_limit") or 0 for w in workers)
    return (f"{len(workers)} worker{'s' if len(workers) != 1 else ''}, {threads} thread{'s' if threads != 1 else ''}, "
            f"{human(memory)} of memory")


def workers_seen(client) -> dict[str, dict]:
    """The scheduler's workers, by address: name, threads, memory limit (0: none), status
    ("running", "paused", ...), nanny (None: none) and host (its machine's address). Asked of the scheduler itself:
    some versions of Dask list only five workers in ``Client.scheduler_info()``.
    :class:`Unanswered` when it has not answered for :data:`SCHEDULER_WAIT` seconds."""

    def workers_of(dask_scheduler) -> dict[str, dict]:  # nested: sent by value, for a scheduler without puzzlespace
        return {address: {"name": ws.name, "nthreads": ws.nthreads, "memory_limit": ws.memory_limit or 0,
                          "status": getattr(ws.status, "name", str(ws.status)), "nanny": ws.nanny,
                          "host": ws.host}
                for address, ws in dask_scheduler.workers.items()}

    try:
        return client.run_on_scheduler(workers_of, callback_timeout=SCHEDULER_WAIT)  # a keyword of Client.sync
    except (TimeoutError, asyncio.TimeoutError):  # one class from Python 3.11 on
        raise Unanswered() from None


def threads_on_hosts(seen: dict[str, dict], workers: Sequence[str]) -> dict[str, int]:
    """For each of ``workers`` (of ``seen``, :func:`workers_seen`'s), the threads those on
    its machine keep busy in a run: their Dask threads and a merging thread each (see
    :func:`~puzzlespace.explore.cluster_tasks.expanding_threads`)."""
    on_host: dict[str, int] = {}
    for w in workers:
        on_host[seen[w]["host"]] = on_host.get(seen[w]["host"], 0) + seen[w]["nthreads"] + 1
    return {w: on_host[seen[w]["host"]] for w in workers}


class Unanswered(PuzzleError):
    """A request of the cluster's that went unanswered: the scheduler silent for
    :data:`SCHEDULER_WAIT` seconds (``lost`` empty), or workers it waited on gone
    (``lost``, their addresses)."""

    def __init__(self, lost: Sequence[str] = ()):
        self.lost = list(lost)
        super().__init__(f"worker {', '.join(self.lost)} left the Dask cluster" if self.lost else silent_scheduler())

def silent_scheduler(when: str = "") -> str:
    """What is said of a silent scheduler, ``when`` (" during layer 4", say)."""
    return f"the Dask scheduler has not answered for {SCHEDULER_WAIT:g} s{when} (stopped, or its machine frozen)"


#: The signals noted in :func:`interrupts_deferred`'s block, with the handlers they would have met.
_NOTED: list[tuple[int, object]] = []


@contextmanager
def interrupts_deferred():
    """Within the block, in the main thread, a Ctrl-C, or a SIGTERM that Python handles
    (the command line's raises KeyboardInterrupt), is noted, and handed to the handler it
    would have met by :func:`take_interrupt`, which the run calls where it waits on the
    cluster (every :data:`POLL` seconds at most), or as the block ends. Raised wherever
    the main thread stood, it could land in a Dask call, whose coroutines then print the
    errors of the futures it let go, or in an object's finalizer, which swallows it and
    the run goes on. An error that ends the block after a signal was noted gives way to
    it (the same signal may have stopped the workers)."""
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _signals_noted(_NOTED, [s for s in (signal.SIGINT, signal.SIGTERM) if callable(signal.getsignal(s))]):
        try:
            yield
        except KeyboardInterrupt:
            _NOTED.clear()  # one is under way: those noted since are the same stop
            raise
        except BaseException:
            take_interrupt()  # the stop asked for comes first: a SIGTERM to a job stops its workers too
            raise
    take_interrupt()


def take_interrupt() -> None:
    """Hand a signal noted in :func:`interrupts_deferred`'s block to its handler (which
    raises KeyboardInterrupt, as a rule); nothing when none was."""
    _hand_on(_NOTED)


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
        take_interrupt()
        seen = workers_seen(client)
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


def check_worker_memory(segs: Sequence[Segment], owners: Sequence[str], lines: dict[str, MemoryLine], tables: int,
                        in_files: bool, resumed: bool = False) -> None:
    """Refuse a run whose workers would hold more than Dask lets them (``lines[worker]``;
    absent or without a limit: not checked): each holds the ``tables`` 2-bit tables of
    the segments it owns (``owners[k]`` segment ``k``'s), or ``in_files`` of its largest
    one (one in memory at a time), plus :data:`WORKER_OVERHEAD` (an estimate: the marks
    in flight grow with the largest layer). A ``resumed`` run keeps its segments."""
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
            fewer = (f"a resumed run keeps the checkpoint's {len(segs)} segments: give the workers more memory"
                     if resumed else "use more segments (--segments N), or workers with more memory")
            raise PuzzleError(f"a segment's table takes {human(need)} but worker {worker} has {room_text}; "
                              f"{fewer}{MORE_MEMORY}{unpause}")
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
