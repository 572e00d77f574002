"""Solving: choose a method, run it, replay and verify the answer.

The optimal methods are family-agnostic: ``bfs`` and ``bibfs`` (:mod:`puzzlespace.search.bfs`)
work for every puzzle; ``ida`` (:mod:`puzzlespace.search.ida`) for every puzzle that
offers a :meth:`~puzzlespace.families.base.Puzzle.search_problem`. ``fast`` runs the
family's own :meth:`~puzzlespace.families.base.Puzzle.fast_solution` (not optimal) and
proves a lower bound with IDA*'s bound.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable

from .errors import DamagedFile, PuzzleError, Undecided, Unsolvable
from .families.base import Puzzle, State, Verdict
from .search import bfs as bfs_search
from .search.ida import weight_coefficients

METHODS = ("auto", "bfs", "bibfs", "ida", "table", "fast")
#: The bound that proves a lower bound for ``fast`` solutions unless another is named.
FAST_BOUND = "linear-conflict"


@dataclass
class Solution:
    """A solution, already replayed and checked against the rules: proven optimal, or
    (weighted search) at most ``weight`` times the optimum, which is at least
    ``lower_bound``.

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
    notations: dict[str, list] = field(default_factory=dict)
    heuristic: str = ""
    lower_bound: int | None = None  # None: the length itself (proven optimal)
    weight: Fraction | None = Fraction(1)  # None: no bound on length / optimum (method fast)
    anytime: bool = False  # found by anytime search (then ``weight`` is 1 and the gap what it proved)

    @property
    def optimal(self) -> bool:
        return self.lower_bound is None or self.lower_bound == self.length

    @property
    def proven_lower_bound(self) -> int:
        """The optimum is at least this many moves."""
        return self.length if self.lower_bound is None else self.lower_bound

    @property
    def length(self) -> int:
        return len(self.moves)

    def _repr_html_(self) -> str:
        """In a notebook: the animated solution page (:func:`~puzzlespace.pages.solution_html`)."""
        from .pages import solution_frame

        return solution_frame(self)

    def to_json(self) -> dict:
        """The machine-readable form (the CLI's ``--json`` object)."""
        primary = next(iter(self.notations.values()), self.moves)
        return {
            "puzzle": self.puzzle.spec,
            "start": list(self.start),
            "goal": list(self.puzzle.goal),
            "length": self.length,
            "optimal": self.optimal,
            "lower_bound": self.proven_lower_bound,
            "gap": self.length - self.proven_lower_bound,
            "weight": None if self.weight is None else float(self.weight),
            "moves": primary,
            "notations": self.notations,
            "path": [list(s) for s in self.path],
            "method": self.method,
            "heuristic": self.heuristic,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 6),
        }


#: A weighted search's solution then has its longest suffix that this many times the
#: search's nodes can prove made optimal (:func:`~puzzlespace.search.ida.optimal_suffix`).
SUFFIX_EFFORT = 20


def choose_method(puzzle: Puzzle) -> str:
    """``ida`` where the family offers compiled heuristic search, else ``bibfs``."""
    return "ida" if puzzle.default_heuristic() is not None else "bibfs"


def resolve_heuristic(puzzle: Puzzle, heuristic: str = "auto") -> str:
    """The heuristic ``auto`` stands for on ``puzzle`` (or ``heuristic`` itself)."""
    default = puzzle.default_heuristic()
    if default is None:
        raise PuzzleError(f"{puzzle.spec} has no heuristic search; use --method bfs or bibfs")
    return default if heuristic == "auto" else heuristic


@dataclass(frozen=True)
class Heuristic:
    """IDA*'s bound, parsed once from its text form: ``name`` is a classic bound
    (``manhattan``, ``linear-conflict``, ``walking``) or pattern databases (``pdb:...``)."""

    name: str

    @property
    def patterns(self) -> bool:
        """Whether the bound reads pattern databases (which may have to be built first)."""
        return self.name.startswith("pdb:")

    @classmethod
    def parse(cls, puzzle: Puzzle, text: str = "auto") -> "Heuristic":
        """The heuristic ``text`` names on ``puzzle`` (``auto``: the family's default);
        PuzzleError for a puzzle without heuristic search or malformed pattern groups."""
        name = resolve_heuristic(puzzle, text.strip())
        if name.startswith("pdb:"):
            from .pdb.heuristic import parse_groups

            parse_groups(name.partition(":")[2], puzzle.goal, puzzle.pattern_order())
        return cls(name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Plan:
    """How to solve positions of ``puzzle``: the one decision :func:`solve`, the batch and
    the command line share.

    ``method`` is ``table`` (read from ``table``), ``ida`` (with ``heuristic``, and
    ``problem`` once built), ``fast`` (its lower bound from ``heuristic``'s ``problem``),
    ``bfs`` or ``bibfs``. :attr:`builds_patterns` says whether
    pattern databases must be read or built first (:meth:`ready` does it).
    """

    puzzle: Puzzle
    method: str
    heuristic: Heuristic | None = None
    table: object = None
    problem: object = None

    @property
    def builds_patterns(self) -> bool:
        return self.problem is None and self.heuristic is not None and self.heuristic.patterns

    def ready(self, deadline: float | None = None, **pdb_options) -> "Plan":
        """This plan with IDA*'s problem built (pattern databases read or built with
        ``pdb_options``; a classic bound's tables refused past ``deadline``)."""
        if self.heuristic is None or self.problem is not None:
            return self
        problem = search_problem_for(self.puzzle, self.heuristic.name, deadline=deadline, **pdb_options)
        return replace(self, problem=problem)


def plan_solving(puzzle: Puzzle, method: str = "auto", heuristic: str = "auto", table=None,
                 problem=None) -> Plan:
    """Choose how to solve positions of ``puzzle``.

    ``auto`` reads a tablebase (``table``, or the cached one when no heuristic is named)
    without search, else runs IDA* where the family offers it, else bidirectional BFS.
    Naming a heuristic (or giving a ready ``problem``) means IDA*, except with ``fast``,
    whose lower bound it proves (:data:`FAST_BOUND` by default).
    """
    if method not in METHODS:
        raise PuzzleError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if method == "fast":
        if puzzle.fast_solution(puzzle.goal) is None:
            raise PuzzleError(f"{puzzle.spec} has no fast method (sliding boards have one); use --weight W or "
                              f"--anytime for a quick solution")
        return Plan(puzzle, "fast", Heuristic.parse(puzzle, FAST_BOUND if heuristic == "auto" else heuristic),
                    problem=problem)
    if table is None and (method == "table" or (method == "auto" and heuristic == "auto" and problem is None)):
        table = cached_tablebase(puzzle, skip_unusable=method == "auto")
    if table is not None and method in ("auto", "table"):
        return Plan(puzzle, "table", table=table)
    if method == "table":
        raise PuzzleError(f"no tablebase for {puzzle.spec}: pass --table FILE or run "
                          f"'puzzlespace explore {puzzle.spec} --save cache'")
    if heuristic != "auto" or problem is not None:
        if method not in ("auto", "ida"):
            raise PuzzleError(f"a heuristic guides IDA* only, not --method {method}")
        method = "ida"
    if method == "auto":
        method = choose_method(puzzle)
    if method != "ida":
        return Plan(puzzle, method)
    return Plan(puzzle, "ida", Heuristic.parse(puzzle, heuristic), problem=problem)


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


def cached_tablebase(puzzle: Puzzle, skip_unusable: bool = False):
    """The tablebase of ``puzzle`` in the cache directory, or None when there is none.

    One that cannot be used (damaged, unreadable, or of another version's layout) raises
    PuzzleError with the command that makes it again, or is passed over (None) with
    ``skip_unusable``.
    """
    from .cache import tablebase_path

    path = tablebase_path(puzzle)
    if not path.exists():
        return None
    from .explore.tablebase import load

    remake = f"make it again with 'puzzlespace explore {puzzle.spec} --save cache'"
    try:
        return load(path, puzzle, remake=remake)
    except PuzzleError as exc:
        if skip_unusable:
            return None
        if isinstance(exc, DamagedFile):
            raise
        raise PuzzleError(f"{exc}; {remake}") from None


def search_weight(weight: Fraction | float | str, anytime: bool = False, method: str = "auto") -> tuple[int, int]:
    """``weight``'s (q, p) (:func:`~puzzlespace.search.ida.weight_coefficients`);
    PuzzleError for a weight other than 1 with ``anytime``, which goes through its own,
    and for either with ``method`` fast, which searches nothing."""
    q, p = weight_coefficients(weight)
    if method == "fast" and (anytime or p != q):
        raise PuzzleError("--method fast takes neither --weight nor --anytime: it builds its solution without search")
    if anytime and p != q:
        raise PuzzleError("--anytime goes through its own weights down to 1: give it without --weight")
    return q, p


def solve(
    puzzle: Puzzle,
    start: State,
    method: str = "auto",
    time_limit: float | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    table=None,
    heuristic: str = "auto",
    problem=None,
    plan: Plan | None = None,
    weight: Fraction | float | str = 1,
    anytime: bool = False,
    cancel: threading.Event | None = None,
    **pdb_options,
) -> Solution:
    """An optimal solution of ``start``, or with ``weight`` W > 1 one at most W times as
    long as the optimum, found by weighted IDA* (other methods give the optimum) and its
    longest suffix that :data:`SUFFIX_EFFORT` times the search's nodes can prove made
    optimal (:func:`~puzzlespace.search.ida.optimal_suffix`); with
    ``anytime``, the best solution weighted IDA* finds at falling weights until
    ``time_limit`` (:func:`~puzzlespace.search.ida.anytime_ida`), with the best lower
    bound proven. A solution not proven optimal goes through the family's
    :meth:`~puzzlespace.families.base.Puzzle.shorten` before it is replayed.

    How is decided by :func:`plan_solving` from ``method``, ``table`` (a loaded
    :class:`~puzzlespace.explore.tablebase.Tablebase`), ``heuristic`` and ``problem``, or
    given as a ready ``plan`` (to share loaded pattern databases between many solves).
    ``time_limit`` counts building IDA*'s tables too. ``cancel``, once set from another
    thread, stops the search within a tenth of a second as the time limit does.

    Raises
    ------
    Unsolvable
        When the invariants prove the goal unreachable (or a search exhausts the space).
    SearchStopped
        On the time limit or a size guard.
    PuzzleError
        For an unknown method, or a heuristic the puzzle does not have.
    """
    q, p = search_weight(weight, anytime, plan.method if plan else method)
    try:
        verdict = puzzle.check(start)
    except Undecided:
        verdict = None
    if verdict is not None and not verdict.solvable:
        raise Unsolvable(verdict)
    if plan is None:
        plan = plan_solving(puzzle, method, heuristic, table, problem)
    method = plan.method
    used = plan.heuristic.name if plan.heuristic else ""
    t0 = time.perf_counter()
    if method == "table":
        from .search.bfs import PathResult

        found = PathResult(plan.table.descend(start), 0)
    elif method in ("ida", "fast"):
        if plan.problem is None:  # building its tables counts against the time limit too
            plan = plan.ready(deadline=None if time_limit is None else t0 + time_limit, **pdb_options)
            if time_limit is not None:
                time_limit = max(0.0, time_limit - (time.perf_counter() - t0))
            t0 = time.perf_counter()
        from .search.ida import IDAResult, anytime_ida, ida_star

        if method == "fast":
            found = IDAResult(puzzle.fast_solution(start), 0, 0, 0.0, plan.problem.heuristic(start))
        elif anytime:
            found = anytime_ida(plan.problem, start, time_limit=time_limit, progress=progress, cancel=cancel)
        else:
            found = ida_star(plan.problem, start, time_limit=time_limit, progress=progress, weight=weight,
                             cancel=cancel)
    else:
        run = bfs_search.bfs if method == "bfs" else bfs_search.bidirectional_bfs
        found = run(puzzle, start, puzzle.goal, time_limit=time_limit, cancel=cancel)
    if found is None:
        raise Unsolvable(_exhausted())
    moves, nodes = found.moves, found.nodes
    lower = found.lower_bound if method in ("ida", "fast") else None
    candidates, found_path = [moves], None
    if method == "ida" and not anytime and lower < len(moves):
        from .search.ida import optimal_suffix

        left = None if time_limit is None else time_limit - (time.perf_counter() - t0)
        found_path = puzzle.replay(start, moves)
        suffixed, spent, whole = optimal_suffix(plan.problem, found_path, moves,
                                                SUFFIX_EFFORT * nodes, time_limit=left, cancel=cancel)
        nodes += spent
        if whole:
            moves, lower = suffixed, len(suffixed)
        elif len(suffixed) < len(moves):
            candidates.append(suffixed)  # the family's shortening may gain more from either
    if lower is not None and lower < len(moves):
        moves = min((puzzle.shorten(start, c) for c in candidates), key=len)
    seconds = time.perf_counter() - t0
    path = found_path if found_path is not None and moves == candidates[0] else puzzle.replay(start, moves)
    if path[-1] != puzzle.goal:
        raise AssertionError(f"internal error: the {method} solution does not reach the goal")
    return Solution(puzzle, start, moves, path, method, nodes, seconds, notations=puzzle.move_notations(path, moves),
                    heuristic=used, lower_bound=None if lower == len(moves) else lower,
                    weight=None if method == "fast" else Fraction(p, q), anytime=anytime and method == "ida")


def _exhausted() -> Verdict:
    return Verdict(False, "the search exhausted every reachable position without meeting the goal", "exhaustive",
                   summary="not reachable (every reachable position was searched)")
