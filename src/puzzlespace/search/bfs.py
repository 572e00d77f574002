"""Breadth-first searches over any :class:`~puzzlespace.contracts.PuzzleRules` (moves are reversible).

These run in Python over hashed state tuples, so they are meant for small spaces and
short solutions (a bidirectional search meets in the middle). Each takes a ``max_states``
guard and raises :class:`~puzzlespace.errors.SearchStopped` rather than exhausting memory.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Iterator

from ..errors import SearchStopped
from ..contracts import PuzzleRules as Puzzle, State
from .clock import Clock


@dataclass
class PathResult:
    """Moves from start to goal (empty list when start == goal); ``nodes`` = states generated."""

    moves: list[int]
    nodes: int


class BFSClock(Clock):
    """A :class:`~puzzlespace.search.clock.Clock` that raises SearchStopped when the
    search must stop (checked every call)."""

    def check(self, nodes: int, what: str, lower_bound: int) -> None:
        if self.limit is None and self.cancel is None:
            return
        why = self.stop_reason()
        if why is not None:
            raise SearchStopped(f"{why} during {what}", nodes=nodes, seconds=self.elapsed(), lower_bound=lower_bound)

    def too_big(self, nodes: int, what: str, max_states: int, advice: str, lower_bound: int) -> SearchStopped:
        return SearchStopped(f"{what} passed {max_states:,} states; {advice}", nodes=nodes,
                             seconds=self.elapsed(), lower_bound=lower_bound)


def _walk_back(parents: dict, state: State) -> list[int]:
    """Moves leading to ``state`` in a parent map ``state -> (previous state, move)``."""
    moves = []
    while parents[state] is not None:
        prev, move = parents[state]
        moves.append(move)
        state = prev
    return moves[::-1]


def bfs(
    puzzle: Puzzle, start: State, goal: State, max_states: int = 5_000_000, time_limit: float | None = None,
    cancel: threading.Event | None = None,
) -> PathResult | None:
    """Shortest path by plain BFS from ``start``; None when ``goal`` is unreachable.
    SearchStopped past ``max_states``, ``time_limit`` or once ``cancel`` is set."""
    clock = BFSClock(time_limit, cancel)
    parents: dict[State, tuple[State, int] | None] = {start: None}
    frontier = [start]
    nodes = depth = 0  # depth of the frontier; the goal is not within it
    while frontier:
        if start == goal:
            return PathResult([], 0)
        nxt = []
        for s in frontier:
            for m, t in puzzle.successors(s):
                nodes += 1
                if t in parents:
                    continue
                parents[t] = (s, m)
                if t == goal:
                    return PathResult(_walk_back(parents, t), nodes)
                nxt.append(t)
            if len(parents) > max_states:
                raise clock.too_big(nodes, "BFS", max_states, "use --method ida or bibfs", depth + 1)
            clock.check(nodes, "BFS", depth + 1)
        frontier = nxt
        depth += 1
    return None


def bidirectional_bfs(
    puzzle: Puzzle, start: State, goal: State, max_states: int = 5_000_000, time_limit: float | None = None,
    cancel: threading.Event | None = None,
) -> PathResult | None:
    """Shortest path by BFS from both ends, expanding the smaller frontier a whole layer at a time.

    Relies on reversible moves: the backward search uses :meth:`Puzzle.successors` and maps
    each backward step to the move that undoes it. The layer in which the two searches first
    meet is finished, and the meeting state nearest the other end is taken, so the path is
    optimal.
    """
    if start == goal:
        return PathResult([], 0)
    clock = BFSClock(time_limit, cancel)
    fwd: dict[State, tuple[State, int] | None] = {start: None}
    bwd: dict[State, tuple[State, int] | None] = {goal: None}
    depth = {start: 0, goal: 0}
    f_front, b_front = [start], [goal]
    nodes = f_depth = b_depth = 0  # depths of the two frontiers; they have not met
    while f_front and b_front:
        forward = len(f_front) <= len(b_front)
        front, seen, other = (f_front, fwd, bwd) if forward else (b_front, bwd, fwd)
        nxt, meets = [], []
        for s in front:
            for m, t in puzzle.successors(s):
                nodes += 1
                if t in seen:
                    continue
                seen[t] = (s, m)
                nxt.append(t)
                if t in other:
                    meets.append(t)
                else:
                    depth[t] = depth[s] + 1
            if len(fwd) + len(bwd) > max_states:
                raise clock.too_big(nodes, "bidirectional BFS", max_states, "use --method ida", f_depth + b_depth + 1)
            clock.check(nodes, "bidirectional BFS", f_depth + b_depth + 1)
        if meets:
            meet = min(meets, key=depth.__getitem__)
            return PathResult(_join(puzzle, fwd, bwd, meet), nodes)
        if forward:
            f_front, f_depth = nxt, f_depth + 1
        else:
            b_front, b_depth = nxt, b_depth + 1
    return None


def _join(puzzle: Puzzle, fwd: dict, bwd: dict, meet: State) -> list[int]:
    """Moves start -> meet from ``fwd``, then meet -> goal by undoing the ``bwd`` chain."""
    moves = _walk_back(fwd, meet)
    state = meet
    while bwd[state] is not None:
        prev, _ = bwd[state]
        moves.append(next(m for m, t in puzzle.successors(state) if t == prev))
        state = prev
    return moves


def bfs_layers(puzzle: Puzzle, source: State, max_states: int | None = None) -> Iterator[list[State]]:
    """The layers of a plain BFS from ``source``: states at distance 0, 1, 2, ...

    Raises SearchStopped once more than ``max_states`` states have been seen.
    """
    seen = {source}
    layer = [source]
    while layer:
        yield layer
        nxt = []
        for s in layer:
            for _, t in puzzle.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        if max_states is not None and len(seen) > max_states:
            raise SearchStopped(f"the reachable set passed {max_states:,} states")
        layer = nxt


def reachable_states(puzzle: Puzzle, source: State, max_states: int = 1_000_000) -> set[State]:
    """Every state reachable from ``source`` (exhaustive; guarded by ``max_states``)."""
    return {s for layer in bfs_layers(puzzle, source, max_states) for s in layer}


def depth_counts(puzzle: Puzzle, source: State) -> tuple[list[int], list[State]]:
    """Reference layer-by-layer BFS: states per depth from ``source`` and the deepest layer."""
    counts: list[int] = []
    last: list[State] = []
    for layer in bfs_layers(puzzle, source):
        counts.append(len(layer))
        last = layer
    return counts, last
