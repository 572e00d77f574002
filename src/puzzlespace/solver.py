"""Optimal solving: choose a method, run it, replay and verify the answer.

The methods are family-agnostic: ``bfs`` and ``bibfs`` (:mod:`puzzlespace.search.bfs`)
work for every puzzle; ``ida`` (:mod:`puzzlespace.search.ida`) for every puzzle that
offers a :meth:`~puzzlespace.families.base.Puzzle.search_problem`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from .errors import PuzzleError, Undecided, Unsolvable
from .families.base import Puzzle, State, Verdict
from .search import bfs as bfs_search

METHODS = ("auto", "bfs", "bibfs", "ida", "table")


@dataclass
class Solution:
    """A proven-optimal solution, already replayed and checked against the rules.

    ``moves`` are the family's move codes; ``path`` holds every position from start to
    goal; ``nodes`` counts the states the search generated.
    """

    puzzle: Puzzle
    start: State
    moves: list[int]
    path: list[State]
    method: str
    nodes: int
    seconds: float
    optimal: bool = True
    notations: dict[str, list] = field(default_factory=dict)
    heuristic: str = ""

    @property
    def length(self) -> int:
        return len(self.moves)

    def to_json(self) -> dict:
        """The machine-readable form (the CLI's ``--json`` object)."""
        primary = next(iter(self.notations.values()), self.moves)
        return {
            "puzzle": self.puzzle.spec,
            "start": list(self.start),
            "goal": list(self.puzzle.goal),
            "length": self.length,
            "optimal": self.optimal,
            "moves": primary,
            "notations": self.notations,
            "path": [list(s) for s in self.path],
            "method": self.method,
            "heuristic": self.heuristic,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


def choose_method(puzzle: Puzzle) -> str:
    """``ida`` where the family offers compiled heuristic search, else ``bibfs``."""
    return "ida" if puzzle.default_heuristic() is not None else "bibfs"


def resolve_heuristic(puzzle: Puzzle, heuristic: str = "auto") -> str:
    """The heuristic ``auto`` stands for on ``puzzle`` (or ``heuristic`` itself)."""
    default = puzzle.default_heuristic()
    if default is None:
        raise PuzzleError(f"{puzzle.spec} has no heuristic search; use --method bfs or bibfs")
    return default if heuristic == "auto" else heuristic


def search_problem_for(puzzle: Puzzle, heuristic: str = "auto", deadline: float | None = None, **pdb_options):
    """The IDA* problem of ``puzzle`` with ``heuristic``: a classic bound or ``pdb:...``
    (pattern databases read from the cache or built; ``pdb_options`` go to
    :func:`~puzzlespace.pdb.heuristic.pattern_problem`). A classic bound's tables are
    refused when building them would end after ``deadline`` (``time.perf_counter()``)."""
    name = resolve_heuristic(puzzle, heuristic)
    if name.startswith("pdb:"):
        from .pdb.heuristic import pattern_problem

        return pattern_problem(puzzle, name, **pdb_options)
    problem = puzzle.search_problem(name, deadline=deadline)
    if problem is None:
        raise PuzzleError(f"{puzzle.spec} has no heuristic search; use --method bfs or bibfs")
    return problem


def cached_tablebase(puzzle: Puzzle):
    """The tablebase of ``puzzle`` in the cache directory, or None."""
    from .cache import tablebase_path

    path = tablebase_path(puzzle)
    if not path.exists():
        return None
    from .explore.tablebase import load

    try:
        return load(path, puzzle)
    except PuzzleError:
        return None


def solve(
    puzzle: Puzzle,
    start: State,
    method: str = "auto",
    time_limit: float | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    table=None,
    heuristic: str = "auto",
    problem=None,
    **pdb_options,
) -> Solution:
    """An optimal solution of ``start``.

    ``method="table"`` (or a given ``table``, a loaded
    :class:`~puzzlespace.tablebase.Tablebase`) reads the solution from a
    tablebase without search; ``"auto"`` does so when the cache holds one for this puzzle
    and no ``heuristic`` is named. IDA* uses ``heuristic`` (``auto``: the family's
    default; see :func:`search_problem_for`), or a ready ``problem`` (to share loaded
    pattern databases between many solves).

    Raises
    ------
    Unsolvable
        When the invariants prove the goal unreachable (or a search exhausts the space).
    SearchStopped
        On the time limit or a size guard.
    PuzzleError
        For an unknown method.
    """
    if method not in METHODS:
        raise PuzzleError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    try:
        verdict = puzzle.check(start)
    except Undecided:
        verdict = None
    if verdict is not None and not verdict.solvable:
        raise Unsolvable(verdict)
    if table is None and (method == "table" or (method == "auto" and heuristic == "auto" and problem is None)):
        table = cached_tablebase(puzzle)
    if table is not None and method in ("auto", "table"):
        method = "table"
    elif method == "table":
        raise PuzzleError(f"no tablebase for {puzzle.spec}: pass --table FILE or run 'puzzlespace explore {puzzle.spec} --save cache'")
    if heuristic != "auto" or problem is not None:
        if method not in ("auto", "ida"):
            raise PuzzleError(f"a heuristic guides IDA* only, not --method {method}")
        method = "ida"
    if method == "auto":
        method = choose_method(puzzle)
    used = resolve_heuristic(puzzle, heuristic) if method == "ida" else ""
    t0 = time.perf_counter()
    if method == "table":
        from .search.bfs import PathResult

        found = PathResult(table.descend(start), 0)
    elif method == "ida":
        if problem is None:  # building its tables counts against the time limit too
            deadline = None if time_limit is None else t0 + time_limit
            problem = search_problem_for(puzzle, heuristic, deadline=deadline, **pdb_options)
            if time_limit is not None:
                time_limit = max(0.0, time_limit - (time.perf_counter() - t0))
            t0 = time.perf_counter()
        from .search.ida import ida_star

        found = ida_star(problem, start, time_limit=time_limit, progress=progress)
    else:
        run = bfs_search.bfs if method == "bfs" else bfs_search.bidirectional_bfs
        found = run(puzzle, start, puzzle.goal, time_limit=time_limit)
    if found is None:
        raise Unsolvable(_exhausted())
    moves, nodes = found.moves, found.nodes
    seconds = time.perf_counter() - t0
    path = puzzle.replay(start, moves)
    if path[-1] != puzzle.goal:
        raise AssertionError(f"internal error: the {method} solution does not reach the goal")
    return Solution(puzzle, start, moves, path, method, nodes, seconds,
                    notations=puzzle.move_notations(path, moves), heuristic=used)


def _exhausted() -> Verdict:
    return Verdict(False, "the search exhausted every reachable position without meeting the goal", "exhaustive",
                   summary="not reachable (every reachable position was searched)")
