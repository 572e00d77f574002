"""IDA*, the driver: iterative deepening over any :class:`~puzzlespace.contracts.IDAProblem`.

The problem supplies the admissible bound and a compiled depth-first pass
(:meth:`~puzzlespace.contracts.IDAProblem.pass_function`); this module runs each pass in
a worker thread with the GIL released, so the caller can show progress, enforce a time
limit and take Ctrl-C, and raises the bound to the smallest one the pass pruned.

Weighted IDA* (weight W = p/q > 1) cuts a node when ``q * g + p * h`` exceeds the
threshold. Every node of an optimal path (length C*) has ``q * g + p * h <= p * C*``, so
the threshold never passes ``p * C*`` before a solution is found, and the solution found
has ``q * L <= p * C*``: L <= W C*. A pass that fails at threshold T, having cut nothing
below T' (its smallest cut value), proves C* >= T' / p: the lower bound reported.

The pass and the driver share a control array ``ctl`` (slots :data:`NODES`,
:data:`MIN_F`, :data:`STOP`, and :data:`EXTRA` for the problem's own use) and the
statuses :data:`FOUND`, :data:`NOT_FOUND`, :data:`STOPPED`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

from ..contracts import IDAProblem
from ..errors import PuzzleError, SearchStopped
from .clock import Clock

#: Slots of the control array: nodes generated, smallest f above the bound, stop request, the problem's own.
NODES, MIN_F, STOP, EXTRA = 0, 1, 2, 3
#: Larger than any f; MIN_F starts there.
BIG = 1 << 40
#: Statuses of a pass.
FOUND, NOT_FOUND, STOPPED = 1, 0, -1


@dataclass
class IDAResult:
    """Moves (nodes the blank moves to; optimal when ``lower_bound == len(moves)``), nodes
    generated, final threshold, seconds, and the lower bound of the optimum proven."""

    moves: list[int]
    nodes: int
    bound: int
    seconds: float
    lower_bound: int


#: The largest weight: the pass's f values stay far inside 64 bits.
MAX_WEIGHT = 1000


def weight_coefficients(weight: Fraction | float | str = 1) -> tuple[int, int]:
    """(q, p) for a weight W = p / q from 1 to :data:`MAX_WEIGHT`, as written (``"1.5"``:
    3/2), its denominator at most 1000 (rounded down, so that L <= W C* holds for the W
    asked); PuzzleError for anything else."""
    wrong = f"a weight is a number from 1 to {MAX_WEIGHT}, such as 1.5, not {str(weight)!r}"
    try:
        exact = Fraction(str(weight))
    except (ValueError, ZeroDivisionError):
        raise PuzzleError(wrong) from None
    if not 1 <= exact <= MAX_WEIGHT:
        raise PuzzleError(wrong)
    if exact.denominator > 1000:
        exact = Fraction(exact.numerator * 1000 // exact.denominator, 1000)
    return exact.denominator, exact.numerator



def load_pass(problem: IDAProblem, start: Sequence[int]) -> None:
    """Run one pass of ``problem`` from ``start`` with bound 0, which cuts every move at
    once: its compiled code is loaded (compiled the first time) before a search starts
    its clock."""
    import numpy as np

    ctl = np.array([0, BIG, 0, 0], dtype=np.int64)
    problem.pass_function(start, 0, ctl, np.full(1, -1, dtype=np.int32), (1, 1))()


def _run_pass(problem, start, bound, ctl, path, weight):
    """Start one pass from ``start`` in a worker thread (deep recursion gets a large stack).

    ``problem.pass_function(start, bound, ctl, path, weight)`` gives the pass as a
    function of no arguments returning FOUND, NOT_FOUND or STOPPED. Returns the thread and
    a one-item list that receives the pass's status.
    """
    out = [NOT_FOUND]
    run = problem.pass_function(start, bound, ctl, path, weight)

    def work():
        out[0] = run()

    old = threading.stack_size(256 << 20)
    try:
        thread = threading.Thread(target=work, name="puzzlespace-ida", daemon=True)
        thread.start()
    finally:
        threading.stack_size(old)
    return thread, out


def _watched_pass(problem, start, bound, ctl, path, weight, clock: Clock, poll: float, max_nodes: int | None,
                  tick: Callable[[], None] | None) -> int:
    """Run one pass (:func:`_run_pass`) to its end and return its status, asking it to stop
    (through ``ctl``) at the clock's stop or once it has generated more than ``max_nodes``;
    ``tick`` is called at each poll while it runs. On Ctrl-C the pass is stopped, then
    KeyboardInterrupt raised."""
    thread, out = _run_pass(problem, start, bound, ctl, path, weight)
    try:
        while thread.is_alive():
            thread.join(poll)
            if tick and thread.is_alive():
                tick()
            if clock.stop_reason() or (max_nodes is not None and ctl[NODES] > max_nodes):
                ctl[STOP] = 1
    except KeyboardInterrupt:
        ctl[STOP] = 1
        thread.join()
        raise
    return out[0]


def within(problem: IDAProblem, start: Sequence[int], bound: int, clock: Clock, *,
           max_nodes: int | None = None, poll: float = 0.05) -> tuple[list[int] | None, int]:
    """One plain pass from ``start`` below ``bound``: the moves of a solution of at most
    ``bound`` moves (the first the pass finds: optimal when no shorter one exists), or
    None when there is none, and the nodes generated. SearchStopped at the clock's stop,
    past ``max_nodes`` or on Ctrl-C (``interrupted``)."""
    import numpy as np

    ctl = np.array([0, BIG, 0, 0], dtype=np.int64)
    path = np.full(bound + 1, -1, dtype=np.int32)
    try:
        status = _watched_pass(problem, start, bound, ctl, path, (1, 1), clock, poll, max_nodes, None)
    except KeyboardInterrupt:
        raise SearchStopped(f"interrupted while searching with bound {bound}", nodes=int(ctl[NODES]),
                            seconds=clock.elapsed(), interrupted=True) from None
    nodes = int(ctl[NODES])
    if status == STOPPED:
        why = clock.stop_reason() or f"more than {max_nodes:,} nodes"
        raise SearchStopped(f"{why} while searching with bound {bound}", nodes=nodes, seconds=clock.elapsed())
    return ([int(v) for v in path if v >= 0] if status == FOUND else None), nodes


def ida_star(
    problem: IDAProblem,
    start: Sequence[int],
    *,
    time_limit: float | None = None,
    max_bound: int = 100_000,
    progress: Callable[[int, int, float], None] | None = None,
    poll: float = 0.1,
    weight: Fraction | float | str = 1,
    cancel: threading.Event | None = None,
    max_nodes: int | None = None,
    at_least: int = 0,
) -> IDAResult | None:
    """Optimal solution of ``start`` by IDA* (or, with ``weight`` W > 1, one at most W
    times as long); None if the search space is exhausted.

    Parameters
    ----------
    problem : IDAProblem
    start : sequence of int
        ``start[node] = token``.
    time_limit : float, optional
        Seconds; :class:`~puzzlespace.errors.SearchStopped` is raised when it passes.
        Ctrl-C (KeyboardInterrupt) raises SearchStopped too. Its ``lower_bound`` is the
        lower bound of the optimum proven so far: every shorter solution was ruled out.
    progress : callable(bound, nodes, seconds), optional
        Called at each new threshold and every ``poll`` seconds (with weights, the
        threshold is in units of 1 / q move).
    weight : number >= 1, optional
        See :func:`weight_coefficients`.
    cancel : threading.Event, optional
        Once set (from another thread), the search stops within ``poll`` seconds and raises
        SearchStopped as on the time limit, saying it was cancelled.
    max_nodes : int, optional
        SearchStopped unless the whole search generates at most this many nodes (decided
        by the count, so the same for every run; a search past it is stopped at the next
        poll).
    at_least : int, optional
        A lower bound of the optimum already proven: the passes below it are skipped.

    Returns
    -------
    IDAResult
        ``moves`` lists the node the blank moves to at each step.
    """
    import numpy as np  # here, not at the top: the command line reads the weights above as it starts

    clock = Clock(time_limit, cancel)
    q, p = weight_coefficients(weight)
    if time_limit is not None:  # a short limit is checked often enough to be kept
        poll = min(poll, max(time_limit / 10, 0.0005))
    h0 = problem.heuristic(start)
    if h0 == 0:
        return IDAResult([], 0, 0, clock.elapsed(), 0)

    def proven(length: int) -> int:  # the smallest length of the optimum's parity at least ``length``
        return length + (length - h0) % 2 if problem.bipartite else length

    nodes, below = 0, proven(max(h0, at_least))
    bound = p * below if q == p else p * h0

    while True:
        ctl = np.array([0, BIG, 0, 0], dtype=np.int64)
        path = np.full(bound // q + 1, -1, dtype=np.int32)
        if progress:
            progress(bound, nodes, clock.elapsed())
        tick = (lambda: progress(bound, nodes + int(ctl[NODES]), clock.elapsed())) if progress else None
        try:
            out = _watched_pass(problem, start, bound, ctl, path, (q, p), clock, poll,
                                None if max_nodes is None else max_nodes - nodes, tick)
        except KeyboardInterrupt:
            raise SearchStopped(f"interrupted while searching with bound {bound}", nodes=nodes + int(ctl[NODES]),
                                seconds=clock.elapsed(), lower_bound=below, interrupted=True) from None
        elapsed = clock.elapsed()
        nodes += int(ctl[NODES])
        if max_nodes is not None and nodes > max_nodes:
            raise SearchStopped(f"more than {max_nodes:,} nodes with bound {bound}", nodes=nodes, seconds=elapsed,
                                lower_bound=below)
        if out == STOPPED:
            why = clock.stop_reason() or "time limit reached"
            raise SearchStopped(f"{why} while searching with bound {bound}",
                                nodes=nodes, seconds=elapsed, lower_bound=below)
        if out == FOUND:
            moves = [int(v) for v in path if v >= 0]
            return IDAResult(moves, nodes, bound, elapsed, max(below, proven(-(-q * len(moves) // p))))
        if ctl[MIN_F] >= BIG:
            return None
        below = max(below, proven(-(-int(ctl[MIN_F]) // p)))
        if bound >= max_bound * q:
            raise SearchStopped(f"no solution within {max_bound} moves", nodes=nodes, seconds=elapsed,
                                lower_bound=below)
        bound = p * below if q == p else int(ctl[MIN_F])


#: How much the heuristic gap of the suffix grows from one solve of :func:`optimal_suffix`
#: to the next (fewer, longer solves).
SUFFIX_GAP_STEP = 4


def optimal_suffix(problem: IDAProblem, path: Sequence[Sequence[int]], moves: Sequence[int], max_nodes: int, *,
                   time_limit: float | None = None, cancel: threading.Event | None = None
                   ) -> tuple[list[int], int, bool]:
    """``moves`` (from ``path[0]``, through ``path``, to the goal) with a suffix replaced by
    an optimal one: suffixes of growing heuristic gap (their length less the bound at their
    start: :data:`SUFFIX_GAP_STEP`, twice that, ... moves) are solved by IDA* in turn, while their nodes together stay
    within ``max_nodes`` (so the result is the same on every run). Returns the moves, no
    longer than before, the nodes spent, and whether the whole was solved (the moves then
    proven optimal). A time limit or ``cancel`` ends it early."""
    clock = Clock(time_limit)
    best, spent, tried, optimum = list(moves), 0, len(moves), 0  # the optimum from path[tried]
    gaps = [len(moves) - j - problem.heuristic(state) for j, state in enumerate(path)]
    for gap in range(SUFFIX_GAP_STEP, max(gaps) + SUFFIX_GAP_STEP, SUFFIX_GAP_STEP):
        k = min(j for j, g in enumerate(gaps) if g <= gap)
        if k == tried:
            continue
        left = clock.left()
        try:
            if left is not None and left <= 0:
                break
            found = ida_star(problem, path[k], max_nodes=max_nodes - spent, time_limit=left, cancel=cancel,
                             poll=0.005, at_least=optimum - (tried - k))  # moves are reversible
        except SearchStopped as exc:
            spent += min(exc.nodes, max_nodes - spent)
            break
        if found is None:  # not on the way to the goal after all: keep what there is
            break
        tried, spent, optimum = k, spent + found.nodes, len(found.moves)
        if k + optimum < len(best):
            best = list(moves[:k]) + found.moves
        if k == 0:
            break
    return best, spent, tried == 0


#: The weights an anytime search goes through, each pass of it finding a solution at
#: most that many times the optimum, down to the optimum itself.
ANYTIME_WEIGHTS = ("3", "2", "1.5", "1.25", "1.1", "1.05", "1")


def anytime_ida(
    problem: IDAProblem,
    start: Sequence[int],
    *,
    time_limit: float | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    weights: Sequence[Fraction | float | str] = ANYTIME_WEIGHTS,
    cancel: threading.Event | None = None,
) -> IDAResult | None:
    """The best solution of ``start`` found by weighted IDA* at ``weights`` in turn (the
    last should be 1) until ``time_limit`` passes or a solution is proven optimal, with
    the best lower bound any of them proved; None if the search space is exhausted.

    Raises :class:`~puzzlespace.errors.SearchStopped` (with the lower bound proven) only
    when the time limit, ``cancel`` (as in :func:`ida_star`) or Ctrl-C comes before any solution."""
    clock = Clock(time_limit)
    best: IDAResult | None = None
    nodes, lower = 0, 0
    for weight in weights:
        left = clock.left()
        try:
            if left is not None and left <= 0:
                raise SearchStopped("time limit reached", nodes=nodes, seconds=clock.elapsed(),
                                    lower_bound=lower)
            found = ida_star(problem, start, time_limit=left, progress=progress, weight=weight, cancel=cancel)
        except SearchStopped as exc:
            lower = max(lower, exc.lower_bound)
            if best is None:
                raise SearchStopped(str(exc), nodes=nodes + exc.nodes, seconds=clock.elapsed(),
                                    lower_bound=lower, interrupted=exc.interrupted) from None
            nodes += exc.nodes
            break
        if found is None:
            return None
        nodes += found.nodes
        lower = max(lower, found.lower_bound)
        if best is None or len(found.moves) < len(best.moves):
            best = found
        if len(best.moves) == lower:
            break
    return IDAResult(best.moves, nodes, best.bound, clock.elapsed(), lower)
