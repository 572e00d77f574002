"""How the ``puzzlespace`` command shows what it does: its consoles, the progress of
searches, builds and explorations on stderr (drawn on a terminal; elsewhere, as lines
where asked), solutions and explorations on stdout, and the files it writes (pages,
pictures).
"""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .calibration import time_left
from .cliparse import LazyConsole
from .drawing import side_by_side
from .resources import human

if TYPE_CHECKING:  # annotations only
    from .families.base import Puzzle
    from .solver import Solution

out = LazyConsole()
err = LazyConsole(stderr=True)


def say(line: str) -> None:
    """One line on stderr, as it is."""
    err.print(line, markup=False)


def show(line: str) -> None:
    """One line (or lines) on stdout, as it is."""
    out.print(line, markup=False)


class SaidOnStderr(logging.Handler):
    """A log line as one line on stderr, through the command's console, when it is a terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        if err.is_terminal:
            err.print(record.getMessage(), markup=False)


@contextmanager
def search_status(enabled: bool):
    """A progress reporter (bound, nodes, seconds) for long searches, on stderr."""
    if not enabled:
        yield None
        return
    if err.is_terminal:
        with err.status("searching") as status:
            yield lambda b, n, s: status.update(f"searching: bound {b}, {n:,} nodes, {s:.1f} s")
        return
    last = [-1]

    def plain(bound: int, nodes: int, seconds: float) -> None:
        if seconds > 10.0 and bound != last[0]:
            last[0] = bound
            err.print(f"searching: bound {bound}, {nodes:,} nodes, {seconds:.1f} s", markup=False)

    yield plain


@contextmanager
def build_bar(enabled: bool, estimate):
    """One progress bar for all the pattern-database builds of a command: the entries given
    their distance, and the time left (:func:`~puzzlespace.calibration.time_left`, from ``estimate``, the builds'
    :class:`~puzzlespace.calibration.Estimate`).

    The bar appears with the first progress report, so nothing flashes while tables load;
    it is drawn on a terminal only (elsewhere the build's notices say what happens).
    """
    if not enabled or not err.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, Progress, ProgressColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    class TimeLeft(ProgressColumn):
        def render(self, task) -> Text:
            return Text(time_left(task.elapsed or 0.0, task.completed, task.total, estimate.seconds))

    columns = (TextColumn("building"), BarColumn(), TaskProgressColumn(),
               TextColumn("{task.completed:,.0f} of {task.total:,.0f} entries"), TimeElapsedColumn(), TimeLeft())
    bar = Progress(*columns, console=err, transient=True)
    task = []

    def report(done: int, total: int) -> None:
        if not task:
            bar.start()
            task.append(bar.add_task("build", total=total))
        bar.update(task[0], completed=done, total=total)

    try:
        yield report
    finally:
        if task:
            bar.stop()


@contextmanager
def layer_progress(enabled: bool, lines: bool = False):
    """A rich progress bar per layer on stderr (on a terminal): chunks of the layer done,
    states found, ETA; elsewhere (a log file), with ``lines``, a line as each layer ends.
    The bar appears with the first report, below what the run says as it starts."""
    if not enabled or not err.is_terminal:
        yield layer_lines() if enabled and lines else None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn("layer {task.fields[depth]:>3}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("chunks, {task.fields[states]:>13,} states"), TimeElapsedColumn(),
               TextColumn("layer ETA"), TimeRemainingColumn())
    bar = Progress(*columns, console=err, transient=True)
    task, layer = [], [-1]

    def report(depth: int, done: int, total: int, states: int) -> None:
        if not task:
            bar.start()
            task.append(bar.add_task("explore", total=total, depth=depth, states=states))
        if depth != layer[0]:
            layer[0] = depth
            bar.reset(task[0], total=total, depth=depth, states=states)
        bar.update(task[0], completed=done, total=total, depth=depth, states=states)

    try:
        yield report
    finally:
        if task:
            bar.stop()


def layer_lines():
    """A progress callback that prints a line on stderr as the last part of a layer's pass
    is done, with what the bar shows: the states found so far (the layer's steps made as
    it closes are counted at the next)."""
    t0 = time.perf_counter()

    def report(depth: int, done: int, total: int, states: int) -> None:
        if done == total:
            err.print(f"layer {depth}: {total} of {total} parts done, {states:,} states found so far, "
                      f"{time.perf_counter() - t0:.1f} s", markup=False)

    return report


def print_solution(sol: Solution, quiet: bool) -> None:
    """A solution on stdout: its length and how it was found, its moves in each notation
    and, unless ``quiet``, the boards along it."""
    p = sol.puzzle
    rate = f", {sol.nodes / sol.seconds:,.0f} nodes/s" if sol.seconds > 0.01 and sol.nodes > 10_000 else ""
    how = f"{sol.method} {sol.heuristic}" if sol.heuristic else sol.method
    bounded = sol.weight is not None and sol.weight != 1
    if bounded:
        how += f" weight {float(sol.weight):g}"
    if sol.anytime:
        how += " anytime"
    if sol.method != "fast":
        how += f", {sol.nodes:,} nodes"
    length = sol.said_length(unit=False)
    what = (f"optimal solution, {sol.said_length()}" if sol.optimal else
            f"solution, length {length}, within {float(sol.weight):g} of optimal (lower bound {sol.lower_bound})"
            if bounded else
            f"solution, length {length}, optimum >= {sol.lower_bound} (gap {sol.length - sol.lower_bound})")
    out.print(f"{p.spec}: {what} ({how}, {sol.seconds:.3f} s{rate})", markup=False)
    for name, moves in sol.notations.items():
        sep = "" if all(len(str(m)) == 1 and not str(m).isdigit() for m in moves) else " "
        out.print(f"{name}: {sep.join(map(str, moves)) or '(none)'}", markup=False)
    if not quiet:
        primary = next(iter(sol.notations.values()), sol.moves)
        labels = ["start"] + [f"{i + 1}: {m}" for i, m in enumerate(primary)]
        out.print(side_by_side([p.draw(s) for s in sol.path], labels), markup=False)


def print_exploration(p: Puzzle, r) -> None:
    """An exploration's result on stdout: positions by depth, the summary, the antipodes drawn."""
    from rich.table import Table

    table = Table(title=f"{p.spec}: positions by distance from the goal")
    table.add_column("depth", justify="right")
    table.add_column("positions", justify="right")
    for d, c in enumerate(r.depth_counts):
        table.add_row(str(d), f"{c:,}")
    out.print(table)
    out.print(f"states: {r.states:,}   God's number: {r.max_depth}   antipodes: {r.antipode_count:,}", markup=False)
    threads = f"{r.threads} thread{'s' if r.threads != 1 else ''}"
    earlier = f" (resumed, after {r.earlier_seconds:.2f} s of the runs before)" if r.earlier_seconds else ""
    out.print(f"time: {r.seconds:.2f} s on {threads}{earlier}   peak memory: {r.peak_memory_bytes / 2**20:.0f} MiB",
              markup=False)
    if r.antipodes:
        shown = r.antipodes
        out.print(f"antipodes ({len(shown)} of {r.antipode_count:,}):", markup=False)
        out.print(side_by_side([p.draw(s) for s in shown], [p.format_position(s) for s in shown]), markup=False)


def print_pdb_list(records: list[dict], folder, cache_bytes: int) -> None:
    """The records of :func:`~puzzlespace.pdb.store.catalogue` (in ``folder``) as 'pdb
    list' shows them on stdout: a header and a line each, in columns (none where there
    are none), then the count and the bytes they and the whole cache (``cache_bytes``) hold."""
    rows = [("NAME", "PUZZLE", "TILES", "ENTRIES", "SIZE", "BUILT IN", "LAST USED")] + [_pdb_row(r) for r in records]
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            show("  ".join(c.rjust(w) if i in (3, 4, 5) else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
                 .rstrip())
    partial = sum(bool(r.get("partial")) for r in records)
    found = len(records) - partial
    count = f"{found} pattern database{'' if found == 1 else 's'}" if found else "no pattern databases"
    if partial:
        count += f" and {partial} partial build{'' if partial == 1 else 's'}"
    show(f"{count} in {folder}: {human(sum(r['bytes'] for r in records))}; the whole cache: {human(cache_bytes)}")


def _pdb_row(r: dict) -> tuple[str, ...]:
    """A line of 'pdb list' for a record of :func:`~puzzlespace.pdb.store.catalogue`."""
    tiles = ",".join(map(str, r["tiles"])) if isinstance(r.get("tiles"), list) else ""
    if r.get("partial"):
        entries = f"{r['entries']:,}" if isinstance(r["entries"], int) else ""
        return (r["name"], "?" if r["puzzle"] is None else str(r["puzzle"]), tiles, entries, human(r["bytes"]),
                f"partial, layer {'?' if r['depth'] is None else r['depth']}", "-")
    if r["problem"]:
        return (r["name"], f"unreadable: {r['problem']}", "", "", human(r["bytes"]), "", "")
    return (r["name"], str(r["puzzle"]), tiles, f"{r['entries']:,}", human(r["bytes"]), f"{r['seconds']:.1f} s",
            time.strftime("%Y-%m-%d %H:%M", time.localtime(r["last_used"])))


def print_optimal(p: "Puzzle", counted, listed, lines: bool = True) -> None:
    """``solve --count``'s line, then (``--all``) each listed solution's moves in the
    family's first notation (with ``lines``); on stderr, whether ``--all``'s cap cut the
    list."""
    if listed is not None and len(listed) < counted.count:
        say(f"listed the first {len(listed):,} of {counted.count:,} optimal solutions; --all {counted.count} "
            "lists them all")
    if not lines:
        return
    plural = "" if counted.count == 1 else "s"
    out.print(f"{p.spec}: {counted.count:,} optimal solution{plural} of {counted.length} moves ({counted.method})",
              markup=False)
    for i, sol in enumerate(listed or [], 1):
        moves = next(iter(sol.notations.values()), sol.moves)
        sep = "" if all(len(str(m)) == 1 and not str(m).isdigit() for m in moves) else " "
        out.print(f"{i}: {sep.join(map(str, moves)) or '(none)'}", markup=False)


def write_pages(html_file: Path | None, svg_file: Path | None, sol, others=(), count=None) -> None:
    """``--html`` and ``--svg`` of a solution (with ``count``, one of several optimal ones)."""
    if html_file or svg_file:
        from .pages import solution_html, solution_svg

        write_files([(html_file, "page", lambda: solution_html(sol, others, count)),
                     (svg_file, "picture", lambda: solution_svg(sol))])


def write_files(outputs) -> None:
    """Write each ``(path, what, make)`` whose path is given: ``make()``'s text,
    atomically; a failure names ``what``."""
    from .datafile import write_atomic
    from .errors import PuzzleError

    for path, what, make in outputs:
        if path is None:
            continue
        text = make().encode()
        try:
            write_atomic(path, lambda f: f.write(text))
        except OSError as exc:
            raise PuzzleError(f"cannot write the {what} {str(path)!r}: {exc.strerror or exc}") from None
        err.print(f"{what} written to {path}", markup=False)
