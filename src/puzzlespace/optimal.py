"""Every optimal solution of a position: how many (:func:`count_optimal`) and each one
(:func:`optimal_solutions`), in any family and metric.

The method is chosen as :func:`~puzzlespace.solver.solve` chooses: the tablebase given, or
the puzzle's cached one (``explore --save cache``), whose entries tell which moves are
optimal (:func:`puzzlespace.search.paths.by_table`: exact and fast however many solutions
there are); without one, on a small space (:func:`~puzzlespace.solver.is_small`) or a
family without IDA*, a breadth-first search of the position's layers up to the goal
(:func:`~puzzlespace.search.paths.by_search`); else one optimal IDA* solve for the length,
then a search of the walks of that length below IDA*'s bound
(:func:`~puzzlespace.search.paths.by_bound`). Each search stops past ``max_states``
positions. All give the same optimal graph; :mod:`puzzlespace.search.paths` says how its
paths are counted and listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Iterator

from .families.base import Puzzle, State
from .search.paths import ShortestPaths, by_bound, by_search, by_table

#: Positions a search without a tablebase may visit.
MAX_STATES = 2_000_000
#: Optimal solutions ``solve --all`` lists when no number is given.
LIST_CAP = 100


@dataclass(frozen=True)
class OptimalCount:
    """``count`` distinct optimal move sequences of ``length`` moves, found by ``method``
    (``table``, ``bfs`` or ``ida``)."""

    length: int
    count: int
    method: str


@dataclass(frozen=True)
class OptimalSolution:
    """One optimal solution: its ``moves``, the ``path`` of positions from the start to the
    goal (``len(moves) + 1`` of them) and its ``length``."""

    moves: list[int]
    path: list[State]
    length: int
    notations: dict[str, list]

    def to_json(self) -> dict:
        """``moves`` in the family's first notation, each notation, ``path`` and ``length``,
        as in ``solve --json``."""
        return {"moves": next(iter(self.notations.values()), self.moves), "notations": self.notations,
                "path": [list(s) for s in self.path], "length": self.length}


def shortest_paths(puzzle: Puzzle, start: State, table=None, max_states: int = MAX_STATES) -> ShortestPaths:
    """The optimal graph of ``start`` (see the module docstring for the method).

    Raises
    ------
    Unsolvable
        When the position cannot reach the goal (decided before any search).
    SearchStopped
        Without a tablebase, past ``max_states`` positions.
    """
    from .solver import cached_tablebase, is_small, plan_solving, require_solvable, solve

    require_solvable(puzzle, start)
    if table is None:
        table = cached_tablebase(puzzle, skip_unusable=True)
    if table is not None:
        return by_table(table, start)
    if is_small(puzzle) or puzzle.default_heuristic() is None:
        return by_search(puzzle, start, max_states)
    plan = plan_solving(puzzle, "ida").ready()
    length = solve(puzzle, start, plan=plan).length
    return by_bound(puzzle, start, length, plan.problem.heuristic, max_states)


def count_optimal(puzzle: Puzzle, start: State, table=None, max_states: int = MAX_STATES) -> OptimalCount:
    """The number of optimal solutions of ``start`` and their length."""
    return every_optimal(puzzle, start, table, max_states=max_states)[0]


def optimal_solutions(puzzle: Puzzle, start: State, table=None,
                      max_states: int = MAX_STATES) -> Iterator[OptimalSolution]:
    """Every optimal solution of ``start``, in lexicographic order of the moves (the
    family's move codes); take as many as needed."""
    return _solutions(puzzle, start, shortest_paths(puzzle, start, table, max_states))


def _solutions(puzzle: Puzzle, start: State, graph: ShortestPaths) -> Iterator[OptimalSolution]:
    for moves in graph.each():
        path = puzzle.replay(start, moves)
        yield OptimalSolution(moves, path, len(moves), puzzle.move_notations(path, moves))



def every_optimal(puzzle: Puzzle, start: State, table=None, cap: int | None = None,
                  max_states: int = MAX_STATES) -> tuple[OptimalCount, list[OptimalSolution] | None]:
    """The count of ``start``'s optimal solutions and, with ``cap``, the first ``cap`` of
    them (None without), from one optimal graph."""
    graph = shortest_paths(puzzle, start, table, max_states)
    counted = OptimalCount(graph.length, graph.count(), graph.method)
    return counted, None if cap is None else list(islice(_solutions(puzzle, start, graph), cap))


def optimal_json(puzzle: Puzzle, start: State, counted: OptimalCount,
                 listed: list[OptimalSolution] | None = None) -> dict:
    """``solve --count --json``'s object (with ``--all``, ``solutions`` too: the first ones,
    each as :meth:`OptimalSolution.to_json`)."""
    answer = {"puzzle": puzzle.spec, "start": list(start), "goal": list(puzzle.goal), "status": "solved",
              "length": counted.length, "count": counted.count, "method": counted.method}
    if listed is not None:
        answer["solutions"] = [s.to_json() for s in listed]
    return answer
