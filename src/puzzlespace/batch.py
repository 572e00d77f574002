"""Solve many positions of one puzzle: read them from text, solve them on several threads.

Input: one position per line; blank lines and lines starting with ``#`` are skipped. A
line of ``n + 1`` whole numbers for a puzzle of ``n`` cells (Korf's file format) starts
with the instance's id; otherwise the id is the position's number in the file (from 1).

The search problem (e.g. pattern databases) is built once and shared read-only by the
worker threads; each solve releases the GIL while it searches.
"""

from __future__ import annotations

import csv
import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable, Iterator, Sequence, TextIO

from .errors import PuzzleError, SearchStopped, Unsolvable
from .families.base import Puzzle, State
from .solver import Plan, plan_solving, solve, watch_compiles

FIELDS = ("id", "status", "length", "nodes", "seconds", "moves", "error", "lower_bound")


@dataclass
class BatchResult:
    """The outcome for one line: ``status`` is ``solved``, ``unsolvable``, ``stopped`` or
    ``invalid`` (a line that is not a position of the puzzle; ``reason`` says why and
    ``start`` is empty). ``lower_bound``: the optimum is at least this many moves (the
    length itself when the solution is proven optimal; for a stopped search, what it
    proved). ``lengths``: the solution's length in each metric its family counts
    (:attr:`~puzzlespace.solver.Solution.lengths`)."""

    id: str
    start: State
    status: str
    length: int | None
    nodes: int
    seconds: float
    moves: list
    reason: str = ""
    lower_bound: int | None = None
    lengths: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict:
        """The record written per line (CSV columns :data:`FIELDS`; JSON adds ``start``, ``reason`` and
        ``lengths``)."""
        return {"id": self.id, "status": self.status, "length": self.length, "lower_bound": self.lower_bound,
                "nodes": self.nodes,
                "seconds": round(self.seconds, 6), "moves": " ".join(map(str, self.moves)),
                "error": self.reason if self.status == "invalid" else ""}


def read_entries(puzzle: Puzzle, lines: Iterable[bytes | str]) -> list[tuple[str, State | None, str]]:
    """(id, position or None, problem) for each line that is not blank or a ``#`` comment.

    ``problem`` is '' for a good position, else a one-line message naming the line. Lines
    may be bytes (a file read as it is): one that is not UTF-8 is a bad line, not a failure.
    """
    entries: list[tuple[str, State | None, str]] = []
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                entries.append((str(len(entries) + 1), None, f"line {number}: not UTF-8 text"))
                continue
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        words = text.split()
        ident = str(len(entries) + 1)
        if "/" not in text and len(words) == puzzle.n_cells + 1 and all(re.fullmatch(r"[0-9]{1,18}", w) for w in words):
            ident, text = words[0], " ".join(words[1:])
        try:
            entries.append((ident, puzzle.parse_position(text), ""))
        except PuzzleError as exc:
            entries.append((ident, None, f"line {number}: {exc}"))
    return entries


def read_positions(puzzle: Puzzle, lines: Iterable[bytes | str]) -> list[tuple[str, State]]:
    """(id, position) for each position line; PuzzleError names the line of the first bad one."""
    entries = read_entries(puzzle, lines)
    bad = next((problem for _, _, problem in entries if problem), None)
    if bad:
        raise PuzzleError(bad)
    return [(ident, state) for ident, state, _ in entries]


def checked_entries(puzzle: Puzzle, lines: Iterable[bytes | str], name: str, strict: bool
                    ) -> list[tuple[str, State | None, str]]:
    """:func:`read_entries` of the file ``name``; PuzzleError where it holds no line at
    all, or with ``strict`` where any line is not a position (naming the first)."""
    entries = read_entries(puzzle, lines)
    bad = [problem for _, _, problem in entries if problem]
    if not entries:
        raise PuzzleError(f"{name!r} holds no positions")
    if bad and strict:
        raise PuzzleError(f"{bad[0]} ({len(bad)} bad line{'s' if len(bad) > 1 else ''}; --strict solves none)")
    return entries


def invalid(ident: str, problem: str) -> BatchResult:
    """The result row of a line that holds no position."""
    return BatchResult(ident, (), "invalid", None, 0, 0.0, [], problem)


def solve_all(
    puzzle: Puzzle,
    items: Sequence[tuple[str, State]],
    *,
    method: str = "auto",
    heuristic: str = "auto",
    threads: int = 1,
    time_limit: float | None = None,
    problem=None,
    plan: Plan | None = None,
    weight: Fraction | float | str = 1,
    anytime: bool = False,
    **pdb_options,
) -> Iterator[BatchResult]:
    """Solve every position, ``threads`` at a time (within ``weight`` of the optimum, or
    the best found until ``time_limit`` with ``anytime``: see
    :func:`~puzzlespace.solver.solve`); yield the results in input order.

    One :class:`~puzzlespace.solver.Plan` for all positions (``plan``, or
    :func:`~puzzlespace.solver.plan_solving`'s): a cached tablebase when there is one,
    else IDA*'s problem (``problem``, or the one ``heuristic`` names, built with
    ``pdb_options``) made once.
    """
    plan = plan or plan_solving(puzzle, method, heuristic, problem=problem,
                                bounded=anytime or Fraction(str(weight)) != 1)
    with watch_compiles(plan):
        plan = plan.ready(**pdb_options)

    def one(item: tuple[str, State]) -> BatchResult:
        ident, start = item
        try:
            sol = solve(puzzle, start, time_limit=time_limit, plan=plan, weight=weight, anytime=anytime)
        except Unsolvable as exc:
            return BatchResult(ident, start, "unsolvable", None, 0, 0.0, [], exc.verdict.reason)
        except SearchStopped as exc:
            return BatchResult(ident, start, "stopped", None, exc.nodes, exc.seconds, [], str(exc),
                               lower_bound=exc.lower_bound)
        primary = next(iter(sol.notations.values()), sol.moves)
        return BatchResult(ident, start, "solved", sol.length, sol.nodes, sol.seconds, list(primary),
                           lower_bound=sol.proven_lower_bound, lengths=sol.lengths)

    pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="puzzlespace-batch")
    try:
        yield from pool.map(one, items)
    finally:  # on Ctrl-C do not wait for the searches still running
        pool.shutdown(wait=False, cancel_futures=True)


def solve_entries(puzzle: Puzzle, entries: Sequence[tuple[str, State | None, str]], **options
                  ) -> Iterator[BatchResult]:
    """The results of every entry of :func:`read_entries` in order: its positions solved
    by :func:`solve_all` (given ``options``), its bad lines as :func:`invalid` rows."""
    items = [(ident, state) for ident, state, problem in entries if not problem]
    solved = solve_all(puzzle, items, **options) if items else iter(())
    for ident, state, problem in entries:
        yield invalid(ident, problem) if problem else next(solved)


@dataclass
class Tally:
    """What a batch's rows held: positions solved, stopped and bad lines; nodes searched
    and seconds searching in all."""

    rows: int = 0
    solved: int = 0
    stopped: int = 0
    invalid: int = 0
    nodes: int = 0
    seconds: float = 0.0


def write_results(results: Iterable[BatchResult], fmt: str, sink: TextIO) -> Tally:
    """Write each result to ``sink`` as it comes, flushed (so that a long batch shows its
    answers, and keeps them): ``"csv"`` (a header, then :data:`FIELDS`) or ``"jsonl"``
    (the row with ``start`` and ``reason``, a JSON object a line)."""
    writer = csv.DictWriter(sink, fieldnames=FIELDS) if fmt == "csv" else None
    if writer:
        writer.writeheader()
    tally = Tally()
    for r in results:
        if writer:
            writer.writerow(r.row())
        else:
            sink.write(json.dumps(dict(r.row(), start=list(r.start), reason=r.reason, lengths=r.lengths)) + "\n")
        sink.flush()
        tally.rows += 1
        tally.solved += r.status == "solved"
        tally.stopped += r.status == "stopped"
        tally.invalid += r.status == "invalid"
        tally.nodes += r.nodes
        tally.seconds += r.seconds
    return tally
