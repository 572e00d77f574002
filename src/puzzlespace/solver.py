"""Solving: choose a method, run it, replay and verify the answer.

The optimal methods are family-agnostic: ``bfs`` and ``bibfs`` (:mod:`puzzlespace.search.bfs`;
compiled over the ranks of a state index, :mod:`puzzlespace.search.rank_bfs`, past
:data:`SMALL_SPACE` positions) work for every puzzle; ``ida`` (:mod:`puzzlespace.search.ida`) for every puzzle that
offers a :meth:`~puzzlespace.families.base.Puzzle.search_problem`. ``fast`` runs the
family's own :meth:`~puzzlespace.families.base.Puzzle.fast_solution` (not optimal) and
proves a lower bound with IDA*'s bound.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import partial
from pathlib import Path
from typing import Callable

from .compiled import clock
from .errors import DamagedFile, PuzzleError, Undecided, Unsolvable
from .families.base import Puzzle, State, Verdict
from .search import bfs as bfs_search
from .search.ida import weight_coefficients

METHODS = ("auto", "bfs", "bibfs", "ida", "table", "fast")


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

    @property
    def lengths(self) -> dict[str, int]:
        """The length in each metric the family counts moves in, the puzzle's own first
        (:meth:`~puzzlespace.families.base.Puzzle.metric_lengths`); empty where it counts
        them one way."""
        return self.puzzle.metric_lengths(self.start, self.moves)

    def said_length(self, unit: bool = True) -> str:
        """``53 moves`` (``53`` without ``unit``), and the length in each other metric:
        ``53 moves (36 in the multi-tile metric)``."""
        others = ", ".join(f"{n} in the {name} metric" for name, n in list(self.lengths.items())[1:])
        said = f"{self.length} move{'' if self.length == 1 else 's'}" if unit else str(self.length)
        return said + (f" ({others})" if others else "")

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
            "lengths": self.lengths,
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


#: Positions a puzzle may have for ``auto`` to search it with plain bidirectional BFS:
#: there it answers within a tenth of a second, sooner than compiled code loads (importing
#: numba and its first call take about a quarter of a second in a new process).
SMALL_SPACE = 200_000


def choose_method(puzzle: Puzzle, bounded: bool = False) -> str:
    """``bibfs`` on a space of at most :data:`SMALL_SPACE` positions unless the solve is
    ``bounded`` (weighted or anytime: it needs IDA*'s bounds); else ``ida`` where the
    family offers compiled heuristic search, else ``bibfs``."""
    if not bounded and is_small(puzzle):
        return "bibfs"
    return "ida" if puzzle.default_heuristic() is not None else "bibfs"


def is_small(puzzle: Puzzle) -> bool:
    """Whether ``puzzle``'s goal reaches at most :data:`SMALL_SPACE` positions (as its family counts them)."""
    count = puzzle.reachable_count()
    return count is not None and count <= SMALL_SPACE


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
        ``pdb_options``); tables that would not be built by ``deadline``
        (:func:`~puzzlespace.compiled.clock`) are refused, and a pattern-database build stopped there."""
        if self.heuristic is None or self.problem is not None:
            return self
        problem = search_problem_for(self.puzzle, self.heuristic.name, deadline=deadline, **pdb_options)
        return replace(self, problem=problem)


def plan_solving(puzzle: Puzzle, method: str = "auto", heuristic: str = "auto", table=None,
                 problem=None, bounded: bool = False) -> Plan:
    """Choose how to solve positions of ``puzzle``.

    ``auto`` reads a tablebase (``table``, or the cached one when no heuristic is named)
    without search, else chooses as :func:`choose_method` (``bounded``: the solves are
    weighted or anytime). Naming a heuristic (or giving a ready ``problem``) means IDA*,
    except with ``fast``, whose lower bound it proves (by default the family's
    :meth:`~puzzlespace.families.base.Puzzle.fast_bound`);
    ``table`` with a heuristic is an error, as with ``bfs`` or ``bibfs``.
    """
    if method not in METHODS:
        raise PuzzleError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if method == "fast":
        if puzzle.fast_solution(puzzle.goal) is None:
            raise PuzzleError(f"{puzzle.spec} has no fast method (sliding boards have one); use --weight W or "
                              f"--anytime for a quick solution")
        return Plan(puzzle, "fast", Heuristic.parse(puzzle, puzzle.fast_bound() if heuristic == "auto" else heuristic),
                    problem=problem)
    guided = heuristic != "auto" or problem is not None
    if guided and method not in ("auto", "ida"):
        raise PuzzleError(f"a heuristic guides IDA* only, not --method {method}")
    if guided and table is not None:
        raise PuzzleError("a tablebase answers without search: give a tablebase or a heuristic, not both")
    if table is None and (method == "table" or (method == "auto" and not guided)):
        table = cached_tablebase(puzzle, skip_unusable=method == "auto")
    if table is not None and method in ("auto", "table"):
        return Plan(puzzle, "table", table=table)
    if method == "table":
        raise PuzzleError(f"no tablebase for {puzzle.spec}: pass --table FILE or run "
                          f"'puzzlespace explore {puzzle.spec} --save cache'")
    if guided:
        method = "ida"
    if method == "auto":
        method = choose_method(puzzle, bounded)
    if method != "ida":
        return Plan(puzzle, method)
    return Plan(puzzle, "ida", Heuristic.parse(puzzle, heuristic), problem=problem)


def search_problem_for(puzzle: Puzzle, heuristic: str = "auto", deadline: float | None = None, **pdb_options):
    """The IDA* problem of ``puzzle`` with ``heuristic``: a classic bound or ``pdb:...``
    (pattern databases read from the cache or built; ``pdb_options`` go to
    :func:`~puzzlespace.pdb.heuristic.pattern_problem`). Tables are refused when building
    them would end after ``deadline`` (:func:`~puzzlespace.compiled.clock`), and a pattern-database build
    stops there (SearchStopped; it resumes where it stopped)."""
    name = resolve_heuristic(puzzle, heuristic)
    if name.startswith("pdb:"):
        from .pdb.heuristic import pattern_problem

        return pattern_problem(puzzle, name, deadline=deadline, **pdb_options)
    problem = puzzle.search_problem(name, deadline=deadline)
    if problem is None:
        raise PuzzleError(f"{puzzle.spec} has no heuristic search; use --method bfs or bibfs")
    return problem


def unsolved_json(puzzle: Puzzle, start: State, status: str, **facts) -> dict:
    """The machine-readable form of a solve that found no solution (the CLI's ``--json``
    object): its ``status`` (``"unsolvable"``, ``"stopped"``, ``"interrupted"``) and
    ``facts`` (the reason, the lower bound proven...)."""
    verdict = {"solvable": False} if status == "unsolvable" else {}
    return {"puzzle": puzzle.spec, "start": list(start), "goal": list(puzzle.goal), "status": status, **verdict,
            **facts}


def tablebase_of(puzzle: Puzzle, path: Path | str | None = None):
    """The tablebase of ``puzzle`` in the file ``path``, or without it the cache's
    (:func:`cached_tablebase`: None where there is none)."""
    if path is None:
        return cached_tablebase(puzzle)
    from .explore.tablebase import load

    return load(path, puzzle)


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
    ``time_limit`` bounds the whole call: building IDA*'s tables (pattern databases
    included: refused up front when they would not be built in time, stopped cleanly
    when the time runs out, their build resumable) counts against it; numba's compiling,
    once a machine, does not (:func:`~puzzlespace.compiled.clock`). ``cancel``, once set from another thread, stops the search within a tenth of a
    second as the time limit does. The time reported (``seconds``) is the search's own:
    not the build's, nor numba's compiling (:mod:`puzzlespace.compiled`).

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
    deadline = None if time_limit is None else clock() + time_limit
    require_solvable(puzzle, start)
    if plan is None:
        plan = plan_solving(puzzle, method, heuristic, table, problem, bounded=anytime or p != q)
    if plan.method in ("ida", "fast") and plan.problem is None:  # its tables' build counts against the time limit
        with watch_compiles(plan):
            plan = plan.ready(deadline=deadline, **pdb_options)
    with watch_compiles(plan) as compiles:
        _load_code(plan, start)
        t0, before = time.perf_counter(), compiles.seconds
        moves, nodes, lower, path = _search(plan, start, _left(deadline), progress, weight, anytime, cancel)
        seconds = max(0.0, time.perf_counter() - t0 - (compiles.seconds - before))
    method = plan.method
    return Solution(puzzle, start, moves, path, method, nodes, seconds, notations=puzzle.move_notations(path, moves),
                    heuristic=plan.heuristic.name if plan.heuristic else "",
                    lower_bound=None if lower == len(moves) else lower,
                    weight=None if method == "fast" else Fraction(p, q), anytime=anytime and method == "ida")


def require_solvable(puzzle: Puzzle, start: State) -> None:
    """Raise Unsolvable when ``puzzle.check`` proves ``start`` cannot reach the goal; an
    undecided check lets the search go ahead (it finds out)."""
    try:
        verdict = puzzle.check(start)
    except Undecided:
        return
    if not verdict.solvable:
        raise Unsolvable(verdict)


def _left(deadline: float | None) -> float | None:
    """Seconds until ``deadline`` (:func:`~puzzlespace.compiled.clock`), at least 0; None without one."""
    return None if deadline is None else max(0.0, deadline - clock())


def watch_compiles(plan: Plan):
    """:func:`puzzlespace.compiled.watch` for the search ``plan`` runs, or a block that
    watches nothing where it runs no compiled code (a plain search of a small space,
    which so loads no numba)."""
    from contextlib import nullcontext

    from .compiled import Compiles, watch

    if plan.method in ("bfs", "bibfs") and is_small(plan.puzzle):
        return nullcontext(Compiles(""))
    return watch(f"the {plan.puzzle.spec} search")


def _load_code(plan: Plan, start: State) -> None:
    """Load the compiled code of ``plan``'s search (from numba's cache; compiled the first
    time) before the search starts its clock: loading takes a process a tenth of a second
    or more that is not the search's."""
    if plan.method == "ida":
        from .search.ida import load_pass

        load_pass(plan.problem, start)
    elif plan.method in ("bfs", "bibfs") and not is_small(plan.puzzle):
        from .search.rank_bfs import load, state_index_of

        index = state_index_of(plan.puzzle)
        if index is not None:
            load(index)


def _breadth_first(puzzle: Puzzle, method: str):
    """The search ``method`` (``bfs`` or ``bibfs``) runs on ``puzzle``: compiled over the
    ranks of its state index past :data:`SMALL_SPACE` positions where it has one, else over
    positions (on a small space that answers sooner than compiled code loads)."""
    if not is_small(puzzle):
        from .search.rank_bfs import rank_bfs, state_index_of

        if state_index_of(puzzle) is not None:
            return partial(rank_bfs, bidirectional=method == "bibfs")
    return bfs_search.bfs if method == "bfs" else bfs_search.bidirectional_bfs


def _search(plan: Plan, start: State, time_limit, progress, weight, anytime: bool, cancel):
    """Run ``plan``'s method from ``start`` (ready: IDA*'s problem built): the moves, the
    nodes generated, the lower bound proven (None: the moves are optimal) and the path,
    replayed and checked."""
    puzzle, method = plan.puzzle, plan.method
    t0 = time.perf_counter()
    if method == "table":
        from .search.bfs import PathResult

        found = PathResult(plan.table.descend(start), 0)
    elif method in ("ida", "fast"):
        from .search.ida import IDAResult, anytime_ida, ida_star

        if method == "fast":
            found = IDAResult(puzzle.fast_solution(start), 0, 0, 0.0, plan.problem.heuristic(start))
        elif anytime:
            found = anytime_ida(plan.problem, start, time_limit=time_limit, progress=progress, cancel=cancel)
        else:
            found = ida_star(plan.problem, start, time_limit=time_limit, progress=progress, weight=weight,
                             cancel=cancel)
    else:
        found = _breadth_first(puzzle, method)(puzzle, start, puzzle.goal, time_limit=time_limit, cancel=cancel)
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
    path = found_path if found_path is not None and moves == candidates[0] else puzzle.replay(start, moves)
    if path[-1] != puzzle.goal:
        raise AssertionError(f"internal error: the {method} solution does not reach the goal")
    return moves, nodes, lower if lower is not None else len(moves), path


def _exhausted() -> Verdict:
    return Verdict(False, "the search exhausted every reachable position without meeting the goal", "exhaustive",
                   summary="not reachable (every reachable position was searched)")
