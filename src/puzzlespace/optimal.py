"""Every optimal solution of a position: how many (:func:`count_optimal`) and each one
(:func:`optimal_solutions`), in any family and metric.

The method is chosen as :func:`~puzzlespace.solver.solve` chooses: the tablebase given, or
the puzzle's cached one (``explore --save cache``), whose entries tell which moves are
optimal (:func:`puzzlespace.search.paths.by_table`: exact and fast however many solutions
there are); without one, on a small space (:func:`~puzzlespace.solver.is_small`) or a
family without IDA*, a breadth-first search of the position's layers up to the goal
(:func:`~puzzlespace.search.paths.by_search`); else one optimal IDA* solve, then a
compiled IDA* pass from each neighbour of the positions on an optimal path, deciding
whether it is one move nearer (:func:`~puzzlespace.search.paths.by_passes`). Each
search stops past ``max_states`` positions. All give the same optimal graph;
:mod:`puzzlespace.search.paths` says how its paths are counted and listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Iterator

from .compiled import clock
from .errors import PuzzleError
from .families.base import Puzzle, State
from .search.paths import ShortestPaths, by_passes, by_search, by_table

#: Positions a search without a tablebase may visit.
MAX_STATES = 2_000_000
#: How optimal solutions can be counted (``auto`` chooses among the others).
METHODS = ("auto", "table", "bfs", "ida")
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

    def solution(self, puzzle: Puzzle, start: State, method: str):
        """This solution as :class:`~puzzlespace.solver.Solution` (proven optimal; its
        search's nodes and time not counted), for what shows one (the pages)."""
        from .solver import Solution

        return Solution(puzzle, start, self.moves, self.path, method, 0, 0.0, self.notations)

    def to_json(self) -> dict:
        """``moves`` in the family's first notation, each notation, ``path`` and ``length``,
        as in ``solve --json``."""
        return {"moves": next(iter(self.notations.values()), self.moves), "notations": self.notations,
                "path": [list(s) for s in self.path], "length": self.length}


def shortest_paths(puzzle: Puzzle, start: State, table=None, *, method: str = "auto", heuristic: str = "auto",
                   plan=None, time_limit: float | None = None, cancel=None,
                   max_states: int = MAX_STATES) -> ShortestPaths:
    """The optimal graph of ``start``, by ``method``: ``auto`` (chosen as ``solve`` chooses:
    :func:`~puzzlespace.solver.plan_solving`),
    ``table`` (``table`` or the cached tablebase), ``bfs`` (a search of the layers) or
    ``ida`` (compiled IDA* passes guided by ``heuristic``, as ``solve`` names them); or
    by a ready :class:`~puzzlespace.solver.Plan` of ``solve``'s (``plan``: its tablebase,
    its IDA* problem, else a search of the layers). ``time_limit`` bounds the search,
    whose passes run as the graph is walked (counted or listed); ``cancel`` (a
    ``threading.Event``), once set, stops them as the time limit does.

    Raises
    ------
    Unsolvable
        When the position cannot reach the goal (decided before any search).
    SearchStopped
        Without a tablebase, past ``max_states`` positions or ``time_limit`` seconds.
    PuzzleError
        For a method not in :data:`METHODS`, ``table`` with no tablebase, a tablebase
        or a heuristic given with a method that does not use it, or ``ida`` in a family
        without IDA*.
    """
    from .solver import plan_solving, require_solvable

    if plan is None:
        if method not in METHODS:
            raise PuzzleError(f"optimal solutions are counted by {', '.join(METHODS)}, not by {method!r}")
        if heuristic != "auto" and (method not in ("auto", "ida") or table is not None):
            raise PuzzleError("a heuristic guides the ida method's search only, not a tablebase or bfs")
        if table is not None and method not in ("auto", "table"):
            raise PuzzleError(f"a tablebase tells the optimal moves without search: give a tablebase or "
                              f"method {method}, not both")
    require_solvable(puzzle, start)
    deadline = None if time_limit is None else clock() + time_limit
    plan = plan or plan_solving(puzzle, method, heuristic, table=table)  # the choice solve makes
    if plan.method == "table":
        return by_table(plan.table, start)
    if plan.method != "ida":
        return by_search(puzzle, start, max_states)
    plan = plan.ready(deadline=deadline)
    return _by_passes(puzzle, start, plan, None if deadline is None else deadline - clock(), cancel, max_states)


def _by_passes(puzzle: Puzzle, start: State, plan, time_limit: float | None, cancel, max_states: int) -> ShortestPaths:
    """One optimal solve by ``plan`` (IDA*'s, ready), then the graph its passes tell."""
    from .solver import solve

    t0 = clock()
    solution = solve(puzzle, start, plan=plan, time_limit=time_limit, cancel=cancel)
    left = None if time_limit is None else time_limit - (clock() - t0)
    return by_passes(puzzle, plan.problem, solution.path, left, max_states, cancel)


def count_optimal(puzzle: Puzzle, start: State, table=None, **how) -> OptimalCount:
    """The number of optimal solutions of ``start`` and their length (``how``: the
    keywords of :func:`shortest_paths`)."""
    return every_optimal(puzzle, start, table, **how)[0]


def optimal_solutions(puzzle: Puzzle, start: State, table=None, **how) -> Iterator[OptimalSolution]:
    """Every optimal solution of ``start``, in lexicographic order of the moves (the
    family's move codes); take as many as needed (``how``: the keywords of
    :func:`shortest_paths`)."""
    return _solutions(puzzle, start, shortest_paths(puzzle, start, table, **how))


def _solutions(puzzle: Puzzle, start: State, graph: ShortestPaths) -> Iterator[OptimalSolution]:
    for moves in graph.each():
        path = puzzle.replay(start, moves)
        yield OptimalSolution(moves, path, len(moves), puzzle.move_notations(path, moves))


def every_optimal(puzzle: Puzzle, start: State, table=None, cap: int | None = None, **how
                  ) -> tuple[OptimalCount, list[OptimalSolution] | None]:
    """The count of ``start``'s optimal solutions and, with ``cap``, the first ``cap`` of
    them (None without), from one optimal graph (``how``: the keywords of :func:`shortest_paths`)."""
    graph = shortest_paths(puzzle, start, table, **how)
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
