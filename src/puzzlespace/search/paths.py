"""Every shortest path between a position and the goal: how many, and each one in order.

A move is optimal when it reaches a position one move nearer the goal; the optimal
solutions are the paths of such moves, the layers of a directed acyclic graph (its
*optimal graph*) whose depth is the distance. A :class:`ShortestPaths` holds a position's
distance and its optimal moves as a function (``nearer``), from which :meth:`count` adds
the paths up layer by layer (each position of a layer holding the number of paths that
reach it: exact, an integer of any size, however many paths share positions) and
:meth:`each` lists them in the order of their moves. Three ways to tell which neighbours
are nearer: a tablebase's entries (:func:`by_table`), a breadth-first search from the
position with its layers kept (:func:`by_search`, for small spaces), or, given one
optimal solution, compiled IDA* passes from the neighbours of the positions reached
(:func:`by_passes`), each deciding whether that neighbour is one move nearer. The
graph is held in Python over hashed state tuples: its positions, not the searches',
are what is kept.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterator

from ..contracts import IDAProblem, PuzzleRules as Puzzle, State
from ..errors import PuzzleError, SearchStopped
from .bfs import bfs_layers
from .clock import Clock
from .ida import within

#: The optimal moves of a position: (move, the position it reaches) pairs, in move order.
Nearer = Callable[[State], list[tuple[int, State]]]


@dataclass(frozen=True)
class ShortestPaths:
    """The optimal graph of ``start``: its ``length`` (the distance to ``goal``), its
    optimal moves (``nearer``, defined on the positions of the graph) and how they were
    told (``method``: ``table`` or ``bfs``)."""

    start: State
    goal: State
    length: int
    nearer: Nearer
    method: str

    def count(self) -> int:
        """The number of distinct optimal move sequences from ``start``."""
        layer = {self.start: 1}
        for _ in range(self.length):
            below: dict = defaultdict(int)
            for state, paths in layer.items():
                for _, to in self.nearer(state):
                    below[to] += paths
            layer = below
        return layer.get(self.goal, 0)

    def each(self) -> Iterator[list[int]]:
        """Every optimal move sequence, in lexicographic order of the moves."""
        if self.length == 0:
            yield []
            return
        moves: list[int] = []
        stack = [iter(self.nearer(self.start))]
        while stack:
            step = next(stack[-1], None)
            if step is None:
                stack.pop()
                if moves:
                    moves.pop()
                continue
            moves.append(step[0])
            if len(moves) == self.length:
                yield list(moves)
                moves.pop()
            else:
                stack.append(iter(self.nearer(step[1])))


def by_table(table, start: State) -> ShortestPaths:
    """The optimal graph read from ``table`` (a loaded
    :class:`~puzzlespace.explore.tablebase.Tablebase`): a neighbour is one move nearer
    when its entry (depth mod 3) is one less than the position's, mod 3, since a move
    changes the depth by at most one."""
    puzzle = table.puzzle

    def nearer(state: State) -> list[tuple[int, State]]:
        want = (table.entry(state) - 1) % 3
        return sorted((m, t) for m, t in puzzle.successors(state) if table.entry(t) == want)

    if table.entry(start) == 3:
        raise PuzzleError("the position is not reachable from the goal (the table marks it unreached)")
    return ShortestPaths(start, puzzle.goal, table.distance(start), nearer, "table")


def by_search(puzzle: Puzzle, start: State, max_states: int = 2_000_000) -> ShortestPaths:
    """The optimal graph from a breadth-first search of ``start``'s layers up to the goal's,
    the positions on a shortest path then picked out from the goal back. SearchStopped
    past ``max_states`` positions; PuzzleError when the goal is not reached."""
    goal = puzzle.goal
    layers = []
    try:
        for layer in bfs_layers(puzzle, start, max_states):
            layers.append(set(layer))
            if goal in layers[-1]:
                break
        else:
            raise PuzzleError("the goal cannot be reached from the position")
    except SearchStopped:
        raise SearchStopped(f"the search of every optimal solution passed {max_states:,} positions; "
                            "use a tablebase (explore --save cache)", lower_bound=len(layers)) from None
    on = [set() for _ in layers]
    on[-1] = {goal}
    for k in range(len(layers) - 2, -1, -1):
        on[k] = {s for s in layers[k] if any(t in on[k + 1] for _, t in puzzle.successors(s))}
    depth = {s: k for k, states in enumerate(on) for s in states}

    def nearer(state: State) -> list[tuple[int, State]]:
        below = on[depth[state] + 1]
        return sorted((m, t) for m, t in puzzle.successors(state) if t in below)

    return ShortestPaths(start, goal, len(layers) - 1, nearer, "bfs")


def by_passes(puzzle: Puzzle, problem: IDAProblem, path: list[State], time_limit: float | None = None,
              max_states: int = 2_000_000, cancel=None) -> ShortestPaths:
    """The optimal graph of ``path[0]``, given ``path``, the positions of one optimal
    solution, each neighbour of a position ``left`` moves from the goal told by one
    compiled pass of ``problem`` from it below ``left - 1``
    (:func:`~puzzlespace.search.ida.within`): it is at least ``left - 1`` moves away, so
    it is one move nearer exactly when the pass finds a solution, and that solution is
    optimal, its positions' distances known without more passes. A pass that finds
    none proves the neighbour farther. The passes run as the graph is walked; SearchStopped
    once ``time_limit`` seconds have passed, ``cancel`` (a ``threading.Event``) is set, or
    more than ``max_states`` positions are known."""
    clock = Clock(time_limit, cancel)
    distance = {state: len(path) - 1 - k for k, state in enumerate(path)}
    farther: dict = {}  # a position's smallest distance the passes left possible
    optimal_moves: dict = {}

    def is_within(state: State, bound: int) -> bool:
        if state in distance:
            return distance[state] <= bound
        if farther.get(state, 0) > bound or problem.heuristic(state) > bound:
            return False
        if clock.stop_reason():
            raise SearchStopped(f"{clock.stop_reason()} while telling the optimal moves", seconds=clock.elapsed(),
                                lower_bound=len(path) - 1)
        moves, _ = within(problem, state, bound, clock)
        if moves is None:
            farther[state] = bound + 1
        else:
            distance.update((s, bound - k) for k, s in enumerate(puzzle.replay(state, moves)) if s not in distance)
        if len(distance) + len(farther) > max_states:
            raise SearchStopped(f"the search of every optimal solution passed {max_states:,} positions; "
                                "use a tablebase (explore --save cache)", seconds=clock.elapsed(),
                                lower_bound=len(path) - 1)
        return moves is not None

    def nearer(state: State) -> list[tuple[int, State]]:
        if state not in optimal_moves:
            bound = distance[state] - 1
            optimal_moves[state] = sorted((m, t) for m, t in puzzle.successors(state) if is_within(t, bound))
        return optimal_moves[state]

    return ShortestPaths(path[0], puzzle.goal, len(path) - 1, nearer, "ida")
