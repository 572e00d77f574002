"""IDA*, the driver: iterative deepening over any :class:`~puzzlespace.contracts.IDAProblem`.

The problem supplies the admissible bound and a compiled depth-first pass
(:meth:`~puzzlespace.contracts.IDAProblem.pass_function`); this module runs each pass in
a worker thread with the GIL released, so the caller can show progress, enforce a time
limit and take Ctrl-C, and raises the bound to the smallest one the pass pruned.

The pass and the driver share a control array ``ctl`` (slots :data:`NODES`,
:data:`MIN_F`, :data:`STOP`, and :data:`EXTRA` for the problem's own use) and the
statuses :data:`FOUND`, :data:`NOT_FOUND`, :data:`STOPPED`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..contracts import IDAProblem
from ..errors import SearchStopped

#: Slots of the control array: nodes generated, smallest f above the bound, stop request, the problem's own.
NODES, MIN_F, STOP, EXTRA = 0, 1, 2, 3
#: Larger than any f; MIN_F starts there.
BIG = 1 << 40
#: Statuses of a pass.
FOUND, NOT_FOUND, STOPPED = 1, 0, -1


@dataclass
class IDAResult:
    """Optimal moves (nodes the blank moves to), nodes generated, final bound, seconds."""

    moves: list[int]
    nodes: int
    bound: int
    seconds: float



def _run_pass(problem, start, bound, ctl, path):
    """Start one pass from ``start`` in a worker thread (deep recursion gets a large stack).

    ``problem.pass_function(start, bound, ctl, path)`` gives the pass as a function of no
    arguments returning FOUND, NOT_FOUND or STOPPED. Returns the thread and a one-item
    list that receives the pass's status.
    """
    out = [NOT_FOUND]
    run = problem.pass_function(start, bound, ctl, path)

    def work():
        out[0] = run()

    old = threading.stack_size(256 << 20)
    try:
        thread = threading.Thread(target=work, name="puzzlespace-ida", daemon=True)
        thread.start()
    finally:
        threading.stack_size(old)
    return thread, out


def ida_star(
    problem: IDAProblem,
    start: Sequence[int],
    *,
    time_limit: float | None = None,
    max_bound: int = 100_000,
    progress: Callable[[int, int, float], None] | None = None,
    poll: float = 0.1,
) -> IDAResult | None:
    """Optimal solution of ``start`` by IDA*; None if the search space is exhausted.

    Parameters
    ----------
    problem : IDAProblem
    start : sequence of int
        ``start[node] = token``.
    time_limit : float, optional
        Seconds; :class:`~puzzlespace.errors.SearchStopped` is raised when it passes.
        Ctrl-C (KeyboardInterrupt) raises SearchStopped too. Its ``lower_bound`` is the
        bound being searched: every shorter solution was ruled out.
    progress : callable(bound, nodes, seconds), optional
        Called at each new bound and every ``poll`` seconds.

    Returns
    -------
    IDAResult
        ``moves`` lists the node the blank moves to at each step.
    """
    t0 = time.perf_counter()
    h0 = problem.heuristic(start)
    if h0 == 0:
        return IDAResult([], 0, 0, time.perf_counter() - t0)
    bound, nodes = h0, 0
    while True:
        ctl = np.array([0, BIG, 0, 0], dtype=np.int64)
        path = np.full(bound + 1, -1, dtype=np.int32)
        if progress:
            progress(bound, nodes, time.perf_counter() - t0)
        thread, out = _run_pass(problem, start, bound, ctl, path)
        try:
            while thread.is_alive():
                thread.join(poll)
                elapsed = time.perf_counter() - t0
                if progress and thread.is_alive():
                    progress(bound, nodes + int(ctl[NODES]), elapsed)
                if time_limit is not None and elapsed > time_limit:
                    ctl[STOP] = 1
        except KeyboardInterrupt:
            ctl[STOP] = 1
            thread.join()
            raise SearchStopped(f"interrupted while searching with bound {bound}", nodes=nodes + int(ctl[NODES]),
                                seconds=time.perf_counter() - t0, lower_bound=bound, interrupted=True) from None
        elapsed = time.perf_counter() - t0
        nodes += int(ctl[NODES])
        if out[0] == STOPPED:
            raise SearchStopped(f"time limit reached while searching with bound {bound}",
                                nodes=nodes, seconds=elapsed, lower_bound=bound)
        if out[0] == FOUND:
            return IDAResult([int(v) for v in path if v >= 0], nodes, bound, elapsed)
        if ctl[MIN_F] >= BIG:
            return None
        if bound >= max_bound:
            raise SearchStopped(f"no solution within {max_bound} moves", nodes=nodes, seconds=elapsed,
                                lower_bound=bound)
        step = int(ctl[MIN_F]) - bound
        if problem.bipartite:
            step += step % 2
        bound += step
