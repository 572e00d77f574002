"""Compiling ahead: the compiled code of a puzzle's first commands, loaded before they run.

numba compiles a kernel on its first run on a machine and keeps it in its cache
(:mod:`puzzlespace.compiled`); :func:`warm` runs a small instance of each kind of work a
puzzle has, so that its later commands start at once: its search (the default solve,
and bidirectional search where it is compiled), its fast method where the family has
one, its pattern-database builds where its search reads them, and its exploration where
its table fits :data:`EXPLORE_BYTES`. A kernel's compiled code depends on the family,
not on the board or the position, so a small instance compiles what the real work runs.
Nothing is written to the cache but the rates of :mod:`puzzlespace.calibration`.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass

import numpy as np

from .families.base import Puzzle, State

#: Moves of the walk from the goal to the position the searches are warmed on.
WALK = 12
#: The largest table (bytes) an exploration is warmed on: its first layers are explored.
EXPLORE_BYTES = 256 << 20


@dataclass(frozen=True)
class Warmed:
    """One kind of work warmed: ``work`` names it, ``seconds`` were spent compiling it
    (0: its code was compiled before, and loaded from numba's cache)."""

    work: str
    seconds: float


def warm(puzzle: Puzzle) -> list[Warmed]:
    """Run a small instance of each kind of work ``puzzle`` has (see the module docstring)."""
    from .compiled import watch

    with watch(f"the {puzzle.spec} search"):  # compiles are counted from here on
        pass
    near = _near_goal(puzzle)
    done = [_timed("search", lambda: _search(puzzle, near))]
    if puzzle.fast_solution(puzzle.goal) is not None:
        done.append(_timed("fast method", lambda: _solve(puzzle, near, method="fast")))
    if _explorable(puzzle):
        done.append(_timed("exploration", lambda: _explore(puzzle)))
    return done


def _timed(work: str, run) -> Warmed:
    from .compiled import total_seconds

    before = total_seconds()
    run()
    return Warmed(work, total_seconds() - before)


def _near_goal(puzzle: Puzzle) -> State:
    """The end of a walk of :data:`WALK` random moves from the goal (a fixed seed)."""
    rng = np.random.default_rng(0)
    state = puzzle.goal
    for _ in range(WALK):
        moves = list(puzzle.moves(state))
        state = puzzle.apply(state, moves[int(rng.integers(len(moves)))])
    return state


def _solve(puzzle: Puzzle, start: State, **options) -> None:
    from .solver import solve

    solve(puzzle, start, **options)


def _search(puzzle: Puzzle, start: State) -> None:
    """The default solve, IDA*'s bound included (pattern databases: one of a single tile,
    built in a cache of its own and dropped, compiles every build and search kernel), and
    bidirectional BFS."""
    from .solver import plan_solving, solve

    plan = plan_solving(puzzle, bounded=True)
    if plan.builds_patterns:
        from .pdb.heuristic import pattern_problem

        with tempfile.TemporaryDirectory(prefix="puzzlespace-warm-") as scratch:
            one_tile = pattern_problem(puzzle, "pdb:1", cache_dir=scratch)
        solve(puzzle, start, problem=one_tile)
    elif plan.method != "table":
        solve(puzzle, start, plan=plan)
    solve(puzzle, start, method="bibfs")


def _explorable(puzzle: Puzzle) -> bool:
    from .bits import table_bytes
    from .errors import PuzzleError

    try:
        return table_bytes(puzzle.state_index().size) <= EXPLORE_BYTES
    except PuzzleError:  # no state index, or too many cells to explore
        return False


def _explore(puzzle: Puzzle) -> None:
    """The first layers of an exploration, recording a tablebase as ``--save`` does."""
    from .explore.engine import explore

    explore(puzzle, stop_at_depth=2, keep_table=True, antipode_limit=1)
