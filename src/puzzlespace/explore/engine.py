"""Layer-by-layer BFS over a minimal perfect hash, 2 bits per state, on every core.

The engine knows nothing of any family: it needs a
:class:`~puzzlespace.contracts.StateIndex` (``puzzle.state_index()``). It walks the
frontier itself (:func:`expand_span`); the index's compiled kernel only lists the
neighbours of the ranks it is given. Chunks are expanded in parallel threads (the walk
and the kernels release the GIL) and their marks merged into the table by the calling
thread; the same split lets a distributed engine run chunks elsewhere. The index's
``rank_steps``, if any, are applied in place as the layer closes
(:func:`puzzlespace.bits.close_and_step`), with no mark to merge.

Table: 2 bits per state, nothing else per state (:mod:`puzzlespace.bits`): unreached, closed, or the
value of the frontier or of the next layer. Expansion reads the frontier's entries; the
merge turns unreached entries of the marks into the next layer's value; when the layer is
complete, the old frontier is closed (in parallel, by chunk). Block flags (one byte per
65,536 states) mark where the frontier may be, so small layers skip the rest of the
table. Memory per state: 2 bits.
A tablebase (depth mod 3) is recorded, when asked for, in a second 2-bit table.
"""

from __future__ import annotations

import functools
import os
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numba as nb
import numpy as np
from numba.core import types

from ..compiled import cfunc, watch
from ..errors import PuzzleError
from ..contracts import FrontierSpace, PuzzleRules as Puzzle, State
from . import checkpoint
from ..resources import available_memory, current_rss, human, peak_rss
from ..bits import (BLOCK_BITS, BLOCK_WORD_BITS, BLOCK_WORDS, close_and_step, close_layer, collect_layer, copy_layer,
                    layer_value, lowest_bit, match_word, merge_marks, new_blocks, new_table, pattern, popcount, set2,
                    table_bytes)

#: Chunks per worker thread and layer (load balance against per-call overhead).
CHUNKS_PER_THREAD = 8
#: Marks one expansion call may write before it returns to have them merged.
MARK_BUFFER = 1 << 17
#: Most states listed at once for the index to expand (fewer calls against a smaller buffer).
RANK_BATCH = 1 << 14


@dataclass
class ExploreResult:
    """What a complete exploration found.

    ``depth_counts[d]`` is the number of positions exactly ``d`` moves from the goal;
    ``seconds`` the time of this run (numba's compiling left out), ``earlier_seconds``
    that of the runs before it whose checkpoint it resumed;
    ``antipodes`` the first ``antipode_limit`` positions at ``max_depth`` (by rank),
    ``antipode_count`` all of them. ``table``: the depth-mod-3 table (3: unreached), when
    asked for: an array, or (from an exploration out of core) a function that gives its
    parts in rank order. ``search_table``: the search's own table when stopped at a depth; the states
    of that layer are those whose entry is ``layer_value(max_depth)``.
    """

    puzzle: str
    goal: State
    states: int
    max_depth: int
    depth_counts: list[int]
    antipode_count: int
    antipodes: list[State]
    seconds: float
    peak_memory_bytes: int
    scheme: str
    rank_space: int
    threads: int
    table: np.ndarray | Callable[[], Iterator[np.ndarray]] | None = field(default=None, repr=False)
    search_table: np.ndarray | None = field(default=None, repr=False)
    earlier_seconds: float = 0.0

    def _repr_html_(self) -> str:
        """In a notebook: the summary and the positions per depth on a log axis (where the
        antipodes' few positions still show)."""
        from html import escape

        from ..render import bar_chart_svg

        rows = [("positions", f"{self.states:,}"), ("God's number", str(self.max_depth)),
                ("antipodes", f"{self.antipode_count:,}"), ("time", f"{self.seconds:.2f} s")]
        table = "".join(f"<tr><th>{k}</th><td>{escape(v)}</td></tr>" for k, v in rows)
        return (f"<div><strong>{escape(self.puzzle)}</strong><table>{table}</table>"
                f"{bar_chart_svg(self.depth_counts, log=True)}</div>")

    def to_json(self) -> dict:
        return {
            "puzzle": self.puzzle,
            "goal": list(self.goal),
            "states": self.states,
            "max_depth": self.max_depth,
            "depth_counts": self.depth_counts,
            "antipode_count": self.antipode_count,
            "antipodes": [list(s) for s in self.antipodes],
            "seconds": round(self.seconds, 3),
            "earlier_seconds": round(self.earlier_seconds, 3),
            "peak_memory_bytes": self.peak_memory_bytes,
            "scheme": self.scheme,
            "rank_space": self.rank_space,
            "threads": self.threads,
        }


@dataclass
class Plan:
    """Bytes a run needs in memory and on disk."""

    memory: int
    disk: int


def plan(index: FrontierSpace, threads: int, with_checkpoints: bool, tables: int = 1) -> Plan:
    """Memory and disk of a run keeping ``tables`` 2-bit tables (2 with a tablebase)."""
    table = table_bytes(index.size)
    marks, ranks = buffer_sizes(index)
    buffers = 2 * threads * (marks + ranks) * 8
    return Plan(memory=tables * table + buffers + (64 << 20), disk=2 * tables * table if with_checkpoints else 0)


def check_resources(need: Plan, max_memory: int | None, out_dir: Path | None, resume: bool = False) -> None:
    """Refuse, with what is needed, what is there and what to do, when a run cannot fit.

    ``max_memory`` bounds the whole process: what it holds already (the interpreter,
    NumPy, numba) plus what the run adds. Checkpoint files already in ``out_dir`` count
    as free, since the run replaces them.
    """
    avail = available_memory()
    if max_memory is not None and current_rss() + need.memory > max_memory:
        raise PuzzleError(
            f"exploring needs about {human(current_rss() + need.memory)} of memory in all (the program itself "
            f"{human(current_rss())}, the run {human(need.memory)}), above --max-memory {human(max_memory)}; "
            + ("the checkpoint was made with the whole table in memory and resumes so: raise --max-memory" if resume
               else "with --out DIR the table goes to segment files there")
        )
    if need.memory > avail:
        raise PuzzleError(
            f"exploring needs about {human(need.memory)} of memory but there is {human(avail)} available; "
            "free memory or run it on a larger machine"
        )
    if out_dir is not None:
        free = checkpoint.disk_room(out_dir)
        if need.disk > free:
            raise PuzzleError(f"checkpoints need about {human(need.disk)} of disk in {str(out_dir)!r} but only "
                              f"{human(free)} is free; choose another --out")


def buffer_sizes(space: FrontierSpace) -> tuple[int, int]:
    """Entries of a mark buffer and of its rank buffer, each with room for a word's worth
    of states (32) and their neighbours."""
    degree = max(space.max_degree, 1)
    return max(MARK_BUFFER, 32 * degree) + 1, max(min(MARK_BUFFER // degree, RANK_BATCH), 32) + _UNROLLED - 1


def new_buffers(space: FrontierSpace, threads: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(marks, ranks) buffers for ``threads`` threads: two each, so that one is merged
    while the other fills."""
    marks, ranks = buffer_sizes(space)
    return [(np.empty(marks, dtype=np.int64), np.empty(ranks, dtype=np.int64)) for _ in range(2 * threads)]


def neighbours_kernel(function, data, cache: bool = True):
    """``function`` compiled as a :attr:`FrontierSpace.kernel
    <puzzlespace.contracts.FrontierSpace.kernel>` for data of the type of ``data``.

    ``function(table, base, ranks, count, out, written, data) -> written`` must compile with
    numba in nopython mode. The result is a numba ``cfunc``, typed by its signature alone,
    so the engine's compiled walk calls it per batch of states and is itself compiled once
    per type of data (and kept in numba's cache with ``cache``). Made once per function
    and type of data.
    """
    return _compiled_kernel(function, nb.typeof(data), cache)


@functools.lru_cache(maxsize=None)
def _compiled_kernel(function, data_type, cache: bool):
    vector = types.Array(types.int64, 1, "C")
    signature = types.int64(types.Array(types.uint8, 1, "C"), types.int64, vector, types.int64, vector, types.int64,
                            data_type)
    kernel = cfunc(signature, function, cache)
    kernel._numba_type_ = nb.typeof(kernel)  # the engine passes it on every call: type it once
    return kernel


def expand_span(space: FrontierSpace, table: np.ndarray, lo: int, hi: int, value: int, blocks: np.ndarray,
                out: np.ndarray, ranks: np.ndarray, base: int = 0) -> tuple[int, int]:
    """List the neighbours of the states of ``[lo, hi)`` whose entry is ``value`` into
    ``out``, until it could overflow: the one walk of a frontier.

    The states are listed batch by batch (into ``ranks``, in increasing order) and
    ``space.kernel`` writes each batch's neighbours; ``blocks`` flags the blocks that may
    hold the frontier. Returns ``(count, next)``: ``out[:count]`` holds the marks, and the
    states from ``next`` on are still to be expanded (``next == hi`` when done). Needs
    room for 35 states (a word's worth and 3) in ``ranks``, and for the neighbours of 32
    and one more mark in ``out``. Raises RuntimeError if the kernel fails.

    ``table`` may hold a part of the ranks only: those from ``base`` on (a multiple of 32);
    ``lo`` and ``hi`` are then ranks within that part, and ``blocks`` flags its blocks.
    """
    count, nxt = _expand(kernel_of(space), table, lo, hi, value, blocks, out, ranks, base)
    out[:count] = out[1:count + 1]
    return count, nxt


def expand_ranks(kernel: tuple, ranks: np.ndarray, out: np.ndarray) -> int:
    """List every neighbour of the states ``ranks`` (increasing) that a space's kernel
    (``kernel``: its :func:`kernel_of`) writes, reached or not (it is given no table),
    into ``out`` (room for ``len(ranks) * max_degree`` and one more); returns how many.
    The rank steps are not among them. Raises RuntimeError if the kernel fails."""
    function, data, degree = kernel
    count = _list_neighbours(NO_TABLE, ranks, len(ranks), out, function, degree, *data)
    if count < 0:
        raise RuntimeError(KERNEL_FAILED)
    out[:count] = out[1:count + 1]
    return int(count)


#: The table a kernel is given to list every neighbour: no rank is in it, so none is reached.
NO_TABLE = np.empty(0, dtype=np.uint8)


@nb.njit(cache=True, nogil=True)
def _list_neighbours(table, ranks, count, out, kernel, degree, *data):
    """The compiled call of :func:`expand_ranks`: marks in ``out[1:]`` (as :func:`_walk`
    leaves them), their number returned, or -1 if the kernel failed."""
    done = kernel(table, 0, ranks, count, out, 1, data)
    if kernel_failed(done, 1, count, degree):
        return -1
    return done - 1


def kernel_of(space: FrontierSpace) -> tuple:
    """What the walk needs of ``space``, read once per run: (kernel, its data, the most marks a state writes)."""
    return space.kernel, space.kernel_data, max(space.max_degree, 1)


def load_walk(space: FrontierSpace) -> None:
    """Load the walk of ``space``'s kernel (compile it, or read it from numba's cache) by
    walking an empty range, so that memory measured after it counts the code a run
    loads."""
    marks, ranks = buffer_sizes(space)
    _expand(kernel_of(space), new_table(64), 0, 0, layer_value(0), new_blocks(64) + 1,
            np.empty(marks, dtype=np.int64), np.empty(ranks, dtype=np.int64))


def _expand(kernel: tuple, table, lo, hi, value, blocks, out, ranks, base: int = 0) -> tuple[int, int]:
    """:func:`expand_span` with the marks left in ``out[1:count + 1]``."""
    function, data, degree = kernel
    count, nxt = _walk(table, base, lo - base, hi - base, value, blocks, out, ranks, function, degree, *data)
    if count < 0:
        raise RuntimeError(KERNEL_FAILED)
    return int(count), int(nxt)


KERNEL_FAILED = ("a state space's kernel failed (numba printed its exception above): it must not raise, and it "
                  "must write at most max_degree neighbours a state")


#: Words of the table the walk matches at once (in vector instructions) before it lists their states.
SEGMENT_WORDS = 256
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
#: States of a word the walk lists without a branch on their number.
_UNROLLED = 4
_PAST = np.uint64(1 << 63)  # an odd bit, never an entry's: its index, halved, is past a word's states


@nb.njit(cache=True, nogil=True)
def _walk(table, base, lo, hi, value, blocks, out, ranks, kernel, degree, *data):
    """The compiled walk of :func:`expand_span`; the kernel's data come one argument each
    (numba types arrays passed alone faster than a tuple of them). Marks go to ``out[1:]``
    and ``(count, next)`` is returned; ``count`` is -1 if the kernel failed. ``lo`` and
    ``hi`` count from ``base``, the rank of the table's first entry; ``next`` is a rank.

    A kernel runs as a C callback, where an exception is only printed and the call
    returns 0; so ``out[0]`` is left unused and the kernel always starts past it, and a
    return below where it started (or past what it may write) is a failure.

    The table is matched ``SEGMENT_WORDS`` words at a time in vector instructions, and the
    words holding frontier states listed without a branch on their entries; their states
    go into ``ranks``, and each full batch to the kernel. Blocks whose flag is clear are
    skipped whole.
    """
    words = table.view(np.uint64)
    pat = pattern(value)
    batch = ranks.shape[0] - _UNROLLED + 1  # the branch-free writes may go that far past a batch
    written = 1  # out[0] is left unused: a kernel that fails returns 0
    limit = min(batch, (out.shape[0] - written) // degree)
    listed = 0
    w = lo >> 5
    end = (hi + 31) >> 5
    below_lo = (_ONE << np.uint64((lo & 31) << 1)) - _ONE  # entries of the first word before lo
    upto_hi = ~_ZERO if hi & 31 == 0 else (_ONE << np.uint64((hi & 31) << 1)) - _ONE  # of the last word
    matches = np.empty(SEGMENT_WORDS, dtype=np.uint64)
    nonzero = np.empty(SEGMENT_WORDS, dtype=np.int64)
    while w < end:
        if w & (BLOCK_WORDS - 1) == 0 and blocks[w >> BLOCK_WORD_BITS] == 0:
            w += BLOCK_WORDS
            below_lo = _ZERO
            continue
        stop = min(end, (w | (BLOCK_WORDS - 1)) + 1, w + SEGMENT_WORDS)
        segment, found = words[w:stop], matches[:stop - w]
        for j in range(stop - w):  # vector instructions
            found[j] = match_word(segment[j], pat)
        found[0] &= ~below_lo
        below_lo = _ZERO
        if stop == end:
            found[stop - w - 1] &= upto_hi
        words_found = 0
        for j in range(stop - w):  # no branch on the entries
            nonzero[words_found] = j
            words_found += np.int64(found[j] != 0)
        for t in range(words_found):
            bits = found[nonzero[t]]
            first = base + ((w + nonzero[t]) << 5)  # the rank of the word's first entry
            if listed + popcount(bits) > limit:  # a full batch: expand it before this word
                done = kernel(table, base, ranks, listed, out, written, data)
                if kernel_failed(done, written, listed, degree):
                    return -1, base + lo
                written = done
                listed = 0
                limit = min(batch, (out.shape[0] - written) // degree)  # what the marks left can take
                if limit < 32:  # not a word's worth: hand the marks over
                    return written - 1, first + (lowest_bit(bits) >> 1)
            for _ in range(_UNROLLED):  # the common words, without a branch: a write past the states is not counted
                ranks[listed] = first + (lowest_bit(bits | _PAST) >> 1)
                listed += np.int64(bits != 0)
                bits &= bits - _ONE
            while bits != 0:
                ranks[listed] = first + (lowest_bit(bits) >> 1)
                bits &= bits - _ONE
                listed += 1
        w = stop
    if listed:
        done = kernel(table, base, ranks, listed, out, written, data)
        if kernel_failed(done, written, listed, degree):
            return -1, base + lo
        written = done
    return written - 1, base + hi


@nb.njit(cache=True, nogil=True, inline="always")
def kernel_failed(done, written, listed, degree):
    """Whether a kernel given ``listed`` states with ``written`` marks before returned a
    count that no kernel keeping its contract can (fewer, or more than ``degree`` a state)."""
    return done < written or done > written + listed * degree


def chunk_spans(size: int, align: int, parts: int) -> list[tuple[int, int]]:
    """Split ``[0, size)`` into about ``parts`` spans whose starts are multiples of ``align``."""
    step = max(align, -(-size // parts // align) * align)
    return [(lo, min(lo + step, size)) for lo in range(0, size, step)]


def explore(
    puzzle: Puzzle,
    *,
    threads: int | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    max_memory: int | None = None,
    antipode_limit: int = 100,
    progress: Callable[[int, int, int, int], None] | None = None,
    keep_table: bool = False,
    stop_at_depth: int | None = None,
    force: bool = False,
) -> ExploreResult:
    """Enumerate every position reachable from ``puzzle.goal``, layer by layer.

    Parameters
    ----------
    threads : int, optional
        Worker threads (default: all cores).
    out_dir : path, optional
        Write a checkpoint after every layer; with ``resume`` continue from it.
    max_memory : int, optional
        Refuse to start if the run needs more bytes than this.
    progress : callable(depth, chunks done, chunks, states found so far), optional
        Called as chunks of a layer finish.
    keep_table : bool
        Also record depth mod 3 per rank (a second 2-bit table, checkpointed too) and
        return it in ``result.table``.
    stop_at_depth : int, optional
        Stop once layer ``stop_at_depth`` is complete; ``antipodes`` then lists (up to
        ``antipode_limit``) positions of that layer and ``search_table`` marks all of them.
    force : bool
        Start afresh in an ``out_dir`` that holds a checkpoint of a layer or more
        (another puzzle's or goal's, or this run's, which ``resume`` would continue;
        refused otherwise).

    A checkpoint that cannot be written (a full disk, an I/O error) ends the run with a
    PuzzleError that says which layer's checkpoint is intact.
    """
    with watch(f"the exploration of {puzzle.spec}", "exploration") as compiles:
        index = puzzle.state_index()
        load_walk(index)  # the code loaded before the run's own time starts
        compiles.restart()
        threads = threads or os.cpu_count() or 1
        out = Path(out_dir) if out_dir is not None else None
        check_resources(plan(index, threads, out is not None, 2 if keep_table else 1), max_memory, out, resume)
        goal = list(puzzle.goal)
        size = index.size
        if resume:
            if out is None:
                raise PuzzleError(checkpoint.RESUME_NEEDS_OUT)
            manifest, table, tablebase = checkpoint.load(out, puzzle.identity, goal, index.scheme, size, keep_table)
            depth, counts, done_before = manifest.depth, list(manifest.depth_counts), manifest.seconds
        else:
            if out is not None and not force:
                refuse_to_replace_checkpoint(out, puzzle.identity, goal)
            table = new_table(size)
            tablebase = new_table(size) if keep_table else None
            g = index.rank(puzzle.goal)
            set2(table, g, layer_value(0))
            if tablebase is not None:
                set2(tablebase, g, 0)
            depth, counts, done_before = 0, [1], 0.0
            if out is not None:
                _save(out, puzzle, goal, index, depth, counts, table, tablebase, done_before)
        base = [sum(counts)]
        report = (lambda d, done, total, new: progress(d, done, total, base[0] + new)) if progress else None

        def record(d: int, table: np.ndarray) -> None:
            if tablebase is not None:
                copy_layer(table, 0, size, layer_value(d), tablebase, d % 3)

        blocks = new_blocks(size)
        if resume:
            blocks[:] = 1
        else:
            blocks[g >> BLOCK_BITS] = 1
        layers = run_layers(index, table, depth, threads, report, on_layer=record, blocks=blocks)
        while stop_at_depth is None or depth < stop_at_depth:
            added = next(layers, 0)
            if added == 0:
                break
            depth += 1
            counts.append(added)
            base[0] += added
            if out is not None:
                _save(out, puzzle, goal, index, depth, counts, table, tablebase,
                      done_before + compiles.elapsed())
        layers.close()
        if stop_at_depth is None or depth < stop_at_depth:
            check_all_reached(puzzle, counts, resume)
        found = np.empty(max(antipode_limit, 0), dtype=np.int64)
        written, total = collect_layer(table, 0, size, layer_value(depth), found)
        antipodes = [index.unrank(int(i)) for i in found[:written]]
        return ExploreResult(
            puzzle=puzzle.spec, goal=puzzle.goal, states=sum(counts), max_depth=depth, depth_counts=counts,
            antipode_count=int(total), antipodes=antipodes, seconds=compiles.elapsed(), earlier_seconds=done_before,
            peak_memory_bytes=peak_rss(), scheme=index.scheme, rank_space=size, threads=threads,
            table=tablebase, search_table=table if stop_at_depth is not None else None,
        )


def check_all_reached(puzzle: Puzzle, counts: list[int], resumed: bool = False) -> None:
    """Raise RuntimeError unless a complete exploration's layers (``counts``) hold as many
    positions as the family says its goal reaches (where it knows): a defect of the
    engine, never a user's, and never a result to print; PuzzleError for a ``resumed``
    run, whose checkpoint may have been altered past what its checksums can see."""
    reachable = puzzle.reachable_count()
    if reachable is not None and sum(counts) != reachable:
        said = f"the exploration of {puzzle.spec} reached {sum(counts):,} positions, but {reachable:,} are reachable"
        if resumed:
            raise PuzzleError(f"{said}: the checkpoint it resumed does not hold what its manifest says (altered, its "
                              f"checksums made again); {checkpoint.RERUN}")
        raise RuntimeError(f"{said} from the goal: a defect in puzzlespace; please report it")


def run_layers(index: FrontierSpace, table, depth: int, threads: int, progress=None,
               on_layer: Callable[[int, np.ndarray], None] | None = None,
               blocks: np.ndarray | None = None) -> Iterator[int]:
    """Expand layer after layer, starting from the complete layer ``depth`` of ``table``
    (its states hold ``layer_value(depth)``, every other reached state is CLOSED).

    Yields the number of states of each new layer, once it is complete: ``table`` then holds
    that layer as its frontier value and every earlier state CLOSED. Before yielding it
    calls ``on_layer(new depth, table)``. Ends when a layer is empty (the last layer keeps
    its value). ``progress(depth, chunks done, chunks, states of the layer so far)``.
    ``blocks``: flags of the blocks that may hold layer ``depth`` (default: all).
    """
    chunks = chunk_spans(index.size, index.group * 64, CHUNKS_PER_THREAD * threads)
    buffers = new_buffers(index, threads)
    kernel = kernel_of(index)
    if blocks is None:
        blocks = np.ones_like(new_blocks(index.size))
    following = np.zeros_like(blocks)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="puzzlespace-bfs") as pool:
        while True:
            added = _expand_layer(pool, index, kernel, table, chunks, depth, buffers, blocks, following, progress)
            added += _close_frontier(pool, index, table, chunks, depth, blocks, following, added)
            if added == 0:
                return
            blocks, following = following, blocks
            following[:] = 0
            depth += 1
            if on_layer:
                on_layer(depth, table)
            yield added


@dataclass
class LayerState:
    """A layered BFS between two layers: ``table`` holds layer ``depth`` as its frontier
    (every earlier state closed); ``counts[d]`` is the number of states at depth ``d``."""

    table: np.ndarray
    depth: int
    counts: list[int]


def layered_bfs(index: FrontierSpace, roots, *, threads: int | None = None, max_memory: int | None = None,
                on_layer: Callable[[int, np.ndarray, int], None] | None = None, progress=None,
                extra_memory: int = 0, resume: LayerState | None = None,
                after_layer: Callable[[LayerState], None] | None = None) -> list[int]:
    """Breadth-first search over any state index from the ranks ``roots`` (depth 0).

    The in-memory core of :func:`explore`, for state spaces that are not puzzles (e.g.
    the abstract spaces of pattern databases; their ranks need not all be reachable).
    ``on_layer(depth, table, value)`` sees each complete layer: its states are those whose
    entry of ``table`` is ``value`` (read it, do not keep it). ``after_layer(state)`` is
    called next, with the search's :class:`LayerState` (to checkpoint it, or to stop by
    raising). ``resume`` continues a search from such a state instead of ``roots``.
    ``extra_memory``: bytes the caller needs besides (counted in the refusal check).
    Returns the number of states per depth.
    """
    threads = threads or os.cpu_count() or 1
    need = plan(index, threads, False)
    check_resources(Plan(need.memory + extra_memory, 0), max_memory, None)
    blocks = new_blocks(index.size)
    if resume is None:
        table = new_table(index.size)
        for r in roots:
            set2(table, int(r), layer_value(0))
            blocks[int(r) >> BLOCK_BITS] = 1
        state = LayerState(table, 0, [len(set(roots))])
        if on_layer:
            on_layer(0, table, layer_value(0))
    else:
        state = LayerState(resume.table, resume.depth, list(resume.counts))
        blocks[:] = 1
    report = on_layer and (lambda d, t: on_layer(d, t, layer_value(d)))
    for added in run_layers(index, state.table, state.depth, threads, progress, on_layer=report, blocks=blocks):
        state.counts.append(added)
        state.depth += 1
        if after_layer:
            after_layer(state)
    return state.counts


def refuse_to_replace_checkpoint(out: Path, spec: str, goal: list[int]) -> None:
    """A fresh run must not replace a checkpoint that holds a layer unasked: another
    puzzle's (or goal's), one of this run that ``--resume`` would continue, or a damaged
    one (which neither can say)."""
    if not (out / checkpoint.MANIFEST).exists():
        return
    held = checkpoint.peek_manifest(out)
    if not checkpoint.intact(held):
        raise PuzzleError(f"{str(out)!r} holds a damaged checkpoint ({checkpoint.MANIFEST} fails its checksum); "
                          "choose another --out, or --force to replace it")
    if isinstance(held.get("depth"), int) and held["depth"] < 0:
        return
    if (held.get("puzzle"), held.get("goal")) != (spec, goal):
        raise PuzzleError(f"{str(out)!r} holds the checkpoint of another run ({held.get('puzzle')!r}, depth "
                          f"{held.get('depth')!r}); choose another --out, or --force to replace it")
    raise PuzzleError(f"{str(out)!r} holds this run's checkpoint of layer {held.get('depth')!r}: continue it with "
                      "--resume, or start again with --force")


def _save(out, puzzle, goal, index, depth, counts, table, tablebase, seconds) -> None:
    manifest = checkpoint.Manifest(puzzle=puzzle.identity, goal=goal, scheme=index.scheme, size=index.size,
                                   depth=depth, depth_counts=counts, seconds=seconds)
    try:
        checkpoint.save(out, manifest, table, tablebase)
    except OSError as exc:
        then = (f"the checkpoint of layer {depth - 1} is intact: free space and continue with --resume" if depth
                else "free space and run it again")
        raise PuzzleError(f"could not write the checkpoint of layer {depth} in {str(out)!r} "
                          f"({exc.strerror or exc}); {then}") from None


def _close_frontier(pool, index, table, chunks, depth, blocks, following, added) -> int:
    """Apply the index's rank steps from layer ``depth`` (if it has any: moves to the next
    or previous rank, which ``neighbours`` leaves out) and close that layer, chunk by
    chunk in parallel. ``added``: the states the marks added to layer ``depth + 1``.

    Returns the states the steps added. If the new layer is empty even so, layer
    ``depth`` is left as it is (the last layer keeps its value).
    """
    old, new = layer_value(depth), layer_value(depth + 1)

    def close_all() -> None:
        list(pool.map(lambda span: close_layer(table, span[0], span[1], old, blocks), chunks))

    steps = index.rank_steps
    if steps is None:
        if added:
            close_all()
        return 0
    up, down = steps
    stepped = sum(pool.map(lambda span: int(close_and_step(table, span[0], span[1], old, blocks, new, following,
                                                           up, down, added > 0)), chunks))
    if not added and stepped:  # the steps alone made the new layer: close the old one now
        close_all()
    return stepped


def _expand_layer(pool, index, kernel, table, chunks, depth, buffers, blocks, following, progress) -> int:
    """Expand every chunk of layer ``depth``; merge the marks as they come; return states added.

    One thread (this one) writes the table, so no atomic operation is needed. ``blocks``
    cover the layer; the merge sets ``following`` for the blocks of the new states.
    """
    new = layer_value(depth + 1)
    added, finished = [0], [0]

    def merge(marks: np.ndarray) -> None:
        added[0] += int(merge_marks(table, marks, len(marks), new, following))

    def chunk_done() -> None:
        finished[0] += 1
        if progress:
            progress(depth + 1, finished[0], len(chunks), added[0])

    expand_chunks(pool, kernel, table, chunks, layer_value(depth), blocks, buffers, merge, chunk_done)
    return added[0]


def expand_chunks(pool, kernel: tuple, table: np.ndarray, chunks, value: int, blocks: np.ndarray, buffers,
                  take: Callable[[np.ndarray], None], chunk_done: Callable[[], None] | None = None,
                  base: int = 0) -> None:
    """Expand the states of ``value`` in every chunk (ranks ``[lo, hi)``) on the pool's
    threads, one mark buffer each (``buffers``: (marks, ranks) pairs), and hand each
    buffer's marks to ``take`` in this thread as it comes back, then give the buffer out
    again: taking (merging, for one) overlaps expansion. With no pool (None), this
    thread expands into the first buffer and takes its marks in turn, one thread in all.
    ``chunk_done()`` follows each chunk's last buffer. ``table`` holds the ranks from
    ``base`` on (see :func:`expand_span`).
    """
    if pool is None:
        _expand_here(kernel, table, chunks, value, blocks, buffers[0], take, chunk_done, base)
        return
    todo = list(reversed(chunks))
    free, pending = list(buffers), {}

    def submit(lo: int, hi: int, buf: tuple[np.ndarray, np.ndarray]) -> None:
        pending[pool.submit(_expand, kernel, table, lo, hi, value, blocks, *buf, base)] = (buf, hi)

    while free and todo:
        submit(*todo.pop(), free.pop())
    while pending:
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in finished:
            buf, hi = pending.pop(fut)
            count, nxt = fut.result()
            take(buf[0][1:count + 1])
            if nxt < hi:
                submit(nxt, hi, buf)
                continue
            if chunk_done:
                chunk_done()
            if todo:
                submit(*todo.pop(), buf)


def _expand_here(kernel: tuple, table: np.ndarray, chunks, value: int, blocks: np.ndarray, buffer, take,
                 chunk_done, base: int) -> None:
    """:func:`expand_chunks` without a pool: expand and take in this thread, in turn."""
    for lo, hi in chunks:
        while lo < hi:
            count, lo = _expand(kernel, table, lo, hi, value, blocks, *buffer, base)
            take(buffer[0][1:count + 1])
        if chunk_done:
            chunk_done()
