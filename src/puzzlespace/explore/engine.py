"""Layer-by-layer BFS over a minimal perfect hash, 2 bits per state, on every core.

The engine knows nothing of any family: it needs a *state index* (``puzzle.state_index()``)
with ``size``, ``group`` (ranks per chunk alignment), ``max_degree``, ``rank``,
``unrank`` and ``expand(table, frontier, lo, hi, dmod, out) -> (count, next)``, a
compiled, read-only function of (table snapshot, chunk of ranks) that lists the
neighbours of the chunk's frontier states (all unreached ones; reached ones may be
listed too, the merge drops them), stopping when its buffer is full
(it is then called again from ``next``). Chunks are expanded in parallel threads (the
kernels release the GIL) and their marks merged into the table by the calling thread;
the same split lets a distributed engine run chunks elsewhere.

Table: depth mod 3 per state, 3 for not reached (2 bits). Frontier: one transient bit
per state, set for the layer being expanded; new states are added to it as they are
found and expansion takes only states whose entry is the current depth mod 3. Once a
chunk is expanded its old-layer bits are cleared (by the merging thread, the only one
that writes the frontier), so at the end of a layer the frontier is exactly the new
layer. Memory per state: 3 bits.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ..errors import PuzzleError
from ..families.base import Puzzle, State
from . import checkpoint
from .resources import available_memory, free_disk, human, peak_rss
from .table import collect_bits, keep_value, merge_marks, new_bits, new_table, set2, set_bit

#: Chunks per worker thread and layer (load balance against per-call overhead).
CHUNKS_PER_THREAD = 8
#: Marks one expansion call may write before it returns to have them merged.
MARK_BUFFER = 1 << 19


@dataclass
class ExploreResult:
    """What a complete exploration found.

    ``depth_counts[d]`` is the number of positions exactly ``d`` moves from the goal;
    ``antipodes`` the first ``antipode_limit`` positions at ``max_depth`` (by rank),
    ``antipode_count`` all of them.
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
    table: np.ndarray | None = field(default=None, repr=False)
    frontier: np.ndarray | None = field(default=None, repr=False)

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


def plan(index, threads: int, with_checkpoints: bool) -> Plan:
    table = (index.size + 3) // 4
    bits = ((index.size + 63) // 64) * 8
    buffers = 2 * threads * MARK_BUFFER * 8
    return Plan(memory=table + bits + buffers + (64 << 20), disk=2 * (table + bits) if with_checkpoints else 0)


def check_resources(need: Plan, max_memory: int | None, out_dir: Path | None) -> None:
    """Refuse, with what is needed, what is there and what to do, when a run cannot fit."""
    avail = available_memory()
    limit = min(avail, max_memory) if max_memory else avail
    if need.memory > limit:
        what = f"--max-memory {human(max_memory)}" if max_memory and max_memory < avail else f"{human(avail)} available"
        raise PuzzleError(
            f"exploring needs about {human(need.memory)} of memory but there is {what}; "
            "free memory or run it on a larger machine"
        )
    if out_dir is not None and need.disk > free_disk(out_dir):
        raise PuzzleError(
            f"checkpoints need about {human(need.disk)} of disk in {str(out_dir)!r} but only "
            f"{human(free_disk(out_dir))} is free; choose another --out"
        )


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
        Return the final 2-bit table (depth mod 3 per rank) in ``result.table``.
    stop_at_depth : int, optional
        Stop once layer ``stop_at_depth`` is complete; ``antipodes`` then lists (up to
        ``antipode_limit``) positions of that layer and ``frontier`` holds all of them.
    """
    t0 = time.perf_counter()
    index = puzzle.state_index()
    threads = threads or os.cpu_count() or 1
    out = Path(out_dir) if out_dir is not None else None
    check_resources(plan(index, threads, out is not None), max_memory, out)
    goal = list(puzzle.goal)
    size = index.size
    if resume:
        if out is None:
            raise PuzzleError("--resume needs --out DIR (the checkpoint directory)")
        manifest, table, frontier = checkpoint.load(out, puzzle.spec, goal, index.scheme, size)
        depth, counts, done_before = manifest.depth, list(manifest.depth_counts), manifest.seconds
    else:
        table, frontier = new_table(size), new_bits(size)
        g = index.rank(puzzle.goal)
        set2(table, g, 0)
        set_bit(frontier, g)
        depth, counts, done_before = 0, [1], 0.0
        if out is not None:
            _save(out, puzzle, goal, index, depth, counts, table, frontier, done_before)
    base = [sum(counts)]
    report = (lambda d, done, total, new: progress(d, done, total, base[0] + new)) if progress else None
    layers = run_layers(index, table, frontier, depth, threads, report)
    while stop_at_depth is None or depth < stop_at_depth:
        added = next(layers, 0)
        if added == 0:
            break
        depth += 1
        counts.append(added)
        base[0] += added
        if out is not None:
            _save(out, puzzle, goal, index, depth, counts, table, frontier,
                  done_before + time.perf_counter() - t0)
    layers.close()
    found = np.empty(max(antipode_limit, 0), dtype=np.int64)
    written, total = collect_bits(frontier, 0, len(frontier) * 8, found)
    antipodes = [index.unrank(int(i)) for i in found[:written]]
    return ExploreResult(
        puzzle=puzzle.spec, goal=puzzle.goal, states=sum(counts), max_depth=depth, depth_counts=counts,
        antipode_count=int(total), antipodes=antipodes, seconds=done_before + time.perf_counter() - t0,
        peak_memory_bytes=peak_rss(), scheme=index.scheme, rank_space=size, threads=threads,
        table=table if keep_table else None, frontier=frontier if stop_at_depth is not None else None,
    )


def run_layers(index, table, frontier, depth: int, threads: int, progress=None) -> Iterator[int]:
    """Expand layer after layer, starting from the complete layer ``depth`` in ``frontier``.

    Yields the number of states of each new layer, once it is complete (``frontier`` then
    holds exactly that layer and ``table`` every state reached so far); ends when a layer
    is empty. ``progress(depth, chunks done, chunks, states of the layer so far)``.
    """
    chunks = chunk_spans(index.size, index.group * 64, CHUNKS_PER_THREAD * threads)
    with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="puzzlespace-bfs") as pool:
        while True:
            added = _expand_layer(pool, index, table, frontier, chunks, depth, threads, progress)
            if added == 0:
                return
            depth += 1
            yield added


def layered_bfs(index, roots, *, threads: int | None = None, max_memory: int | None = None,
                on_layer: Callable[[int, np.ndarray], None] | None = None, progress=None,
                extra_memory: int = 0) -> list[int]:
    """Breadth-first search over any state index from the ranks ``roots`` (depth 0).

    The in-memory core of :func:`explore`, for state spaces that are not puzzles (e.g.
    the abstract spaces of pattern databases; their ranks need not all be reachable).
    ``on_layer(depth, frontier)`` sees each complete layer as a bitmap (read it, do not
    keep it). ``extra_memory``: bytes the caller needs besides (counted in the refusal
    check). Returns the number of states per depth.
    """
    threads = threads or os.cpu_count() or 1
    need = plan(index, threads, False)
    check_resources(Plan(need.memory + extra_memory, 0), max_memory, None)
    table, frontier = new_table(index.size), new_bits(index.size)
    for r in roots:
        set2(table, int(r), 0)
        set_bit(frontier, int(r))
    counts = [len(set(roots))]
    if on_layer:
        on_layer(0, frontier)
    for added in run_layers(index, table, frontier, 0, threads, progress):
        counts.append(added)
        if on_layer:
            on_layer(len(counts) - 1, frontier)
    return counts


def _save(out, puzzle, goal, index, depth, counts, table, frontier, seconds) -> None:
    manifest = checkpoint.Manifest(puzzle=puzzle.spec, goal=goal, scheme=index.scheme, size=index.size,
                                   depth=depth, depth_counts=counts, seconds=seconds)
    checkpoint.save(out, manifest, table, frontier)


def _expand_layer(pool, index, table, frontier, chunks, depth, threads, progress) -> int:
    """Expand every chunk of layer ``depth``; merge the marks as they come; return states added.

    When a chunk is done, its frontier keeps only new-layer states (no thread reads that
    chunk's frontier again in this layer, and later merges only add new-layer states).
    Chunks done before any new state was found are cleared at the end, and only if the
    layer found some: if it found none, the frontier must still hold the last layer.
    """
    dmod, new = depth % 3, (depth + 1) % 3
    padded_end = len(frontier) * 8
    free_buffers = [np.empty(MARK_BUFFER, dtype=np.int64) for _ in range(2 * threads)]
    pending: dict = {}
    todo = list(reversed(chunks))
    starts = {hi: lo for lo, hi in chunks}
    unkept: list[tuple[int, int]] = []
    added = done = 0

    def submit(lo: int, hi: int, buf: np.ndarray) -> None:
        pending[pool.submit(index.expand, table, frontier, lo, hi, dmod, buf)] = (buf, hi)

    while free_buffers and todo:
        submit(*todo.pop(), free_buffers.pop())
    while pending:
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for fut in finished:
            buf, hi = pending.pop(fut)
            count, nxt = fut.result()
            added += int(merge_marks(table, frontier, buf, count, new))
            if nxt < hi:
                submit(nxt, hi, buf)
                continue
            span = (starts[hi], hi if hi < index.size else padded_end)
            if added:
                keep_value(table, frontier, span[0], span[1], new)
            else:
                unkept.append(span)
            done += 1
            if progress:
                progress(depth + 1, done, len(chunks), added)
            if todo:
                submit(*todo.pop(), buf)
    if added:
        list(pool.map(lambda span: keep_value(table, frontier, span[0], span[1], new), unkept))
    return added
