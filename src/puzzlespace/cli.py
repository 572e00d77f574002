"""The ``puzzlespace`` command: parses arguments, calls the library, prints.

Exit status: 0 success (solvable / solved), 1 unsolvable, 2 bad input or usage, 3 stopped
or undecided (time limit, size guard, a question beyond the limits), 130 interrupted.
Every failure is one line on stderr.
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import sys
import time
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Optional

import click

from ._version import __version__
from .compiled import clock
from .cliparse import (EXIT_INTERRUPTED, EXIT_OK, EXIT_STOPPED, EXIT_UNSOLVABLE, EXIT_USAGE, Count, FilePath, Group,
                       LazyConsole, Seconds, quiet_finalizers)
from .errors import PuzzleError, SearchStopped, Undecided, Unsolvable
from .registry import load_puzzle, syntax as puzzle_syntax
from .search.ida import weight_coefficients
from .solver import METHODS, Solution, plan_solving, search_weight, solve as solve_position

if TYPE_CHECKING:  # annotations only
    from .families.base import Puzzle

out = LazyConsole()
err = LazyConsole(stderr=True)

PUZZLE_HELP = ("PUZZLE", lambda: "the puzzle's family and size: " + puzzle_syntax())
POSITION_HELP = ("POSITION", "cells row-major, 0 the blank: '8 6 7/2 5 4/3 0 1', or 'BWB/WBB/BBB' for flip "
                             "puzzles (after --, if it starts with -)")
HEURISTIC_HELP = ("IDA*'s bound: auto, manhattan, linear-conflict, walking, or pattern databases "
                  "pdb:SIZES (pdb:7-8, pdb:6-6-3) or pdb:TILES/TILES (pdb:1,2,3/4,5,6)")
SECONDS = Seconds()
PATH = FilePath()

puzzle_argument = click.argument("puzzle", metavar="PUZZLE")
position_argument = click.argument("position", metavar="POSITION")
goal_option = click.option("--goal", metavar="POSITION", help="the goal (default: the family's)")
json_option = click.option("--json", "as_json", is_flag=True, help="print one JSON object on stdout")
heuristic_option = click.option("--heuristic", metavar="NAME", default="auto", help=HEURISTIC_HELP)
cache_option = click.option("--cache-dir", type=PATH, metavar="DIR",
                            help="where pattern databases and tablebases are kept "
                                 "(default: $PUZZLESPACE_CACHE, else ~/.cache/puzzlespace)")
threads_option = click.option("--threads", type=Count(1), metavar="N", help="worker threads (default: all cores)")


class SegmentCount(Count):
    """A number of segments or of workers: 1 to the most a checkpoint holds (its module,
    which loads compiled code, is read as such an option is given, not as the command starts)."""

    def __init__(self):
        super().__init__(1)

    def convert(self, value, param, ctx):
        from .explore.checkpoint import MAX_SEGMENTS

        self.high = MAX_SEGMENTS
        return super().convert(value, param, ctx)


SEGMENTS = SegmentCount()


class Weight(click.ParamType):
    """A search weight W >= 1, as an exact fraction (``1.5`` is 3/2)."""

    name = "weight"

    def convert(self, value, param, ctx):
        if isinstance(value, Fraction):
            return value
        try:
            q, p = weight_coefficients(value)
        except PuzzleError as exc:
            self.fail(str(exc), param, ctx)
        return Fraction(p, q)


weight_option = click.option("--weight", type=Weight(), default="1", metavar="W",
                             help="accept a solution up to W times the optimum (W >= 1, such as 1.5; weighted IDA*, "
                                  "far faster on hard positions), with the lower bound it proves; 1: optimal")
method_option = click.option("--method", type=click.Choice(METHODS), default="auto", metavar="METHOD",
                             help="auto, bfs, bibfs, ida, table (read from a tablebase) or fast (sliding boards of any "
                                  "size: a quick solution, not optimal, with a proven lower bound)")


@click.group("puzzlespace", cls=Group, help="Solve combinatorial puzzles optimally and map their state space.",
             epilog="Run 'puzzlespace COMMAND --help' for a command's options and examples.")
@click.version_option(__version__, "--version", "-V", prog_name="puzzlespace", message="%(prog)s %(version)s")
def app() -> None:
    """The command group: numba's first compiles (:mod:`puzzlespace.compiled`) are said on
    stderr when it is a terminal (as progress is: a log or a pipe gets only the answers)."""
    log = logging.getLogger("puzzlespace.compile")
    if not any(isinstance(h, _SaidOnStderr) for h in log.handlers):
        log.addHandler(_SaidOnStderr())
        log.setLevel(logging.INFO)
        log.propagate = False


class _SaidOnStderr(logging.Handler):
    """A log line as one line on stderr, through the command's console, when it is a terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        if err.is_terminal:
            err.print(record.getMessage(), markup=False)


class Stop(Exception):
    """End a command with an exit status (its message, if any, is already printed)."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@contextmanager
def _errors() -> Iterator[None]:
    """Turn every expected failure into one line on stderr and an exit status."""
    try:
        yield
    except PuzzleError as exc:
        err.print(f"error: {exc}", markup=False)
        raise click.exceptions.Exit(EXIT_USAGE)
    except Undecided as exc:
        err.print(f"undecided: {exc}", markup=False)
        raise click.exceptions.Exit(EXIT_STOPPED)
    except SearchStopped as exc:
        err.print(f"stopped: {exc} ({exc.nodes:,} nodes, {exc.seconds:.1f} s)", markup=False)
        raise click.exceptions.Exit(EXIT_INTERRUPTED if exc.interrupted else EXIT_STOPPED)
    except KeyboardInterrupt:
        quiet_finalizers()
        err.print("stopped: interrupted", markup=False)
        raise click.exceptions.Exit(EXIT_INTERRUPTED)
    except Stop as exc:
        raise click.exceptions.Exit(exc.code)


def _emit_json(obj) -> None:
    """One compact JSON object (or list) on one line of stdout."""
    sys.stdout.write(json.dumps(obj) + "\n")


def _load(puzzle: str, position: str, goal: Optional[str]) -> tuple[Puzzle, tuple]:
    p = load_puzzle(puzzle, goal)
    return p, p.parse_position(position)


def _use_cache(cache_dir: Optional[Path]) -> None:
    """Point the library's cache (pattern databases, tablebases) at ``--cache-dir`` for this command."""
    from . import cache

    if cache_dir is not None:
        click.get_current_context().with_resource(cache.use(cache_dir))


def _command_line(*words: str, **options: Optional[str]) -> str:
    """A ``puzzlespace`` command line, quoted for a POSIX shell (options left out when None)."""
    parts = ["puzzlespace", *words]
    for name, value in options.items():
        if value is not None:
            parts += [f"--{name.replace('_', '-')}", value]
    return " ".join(shlex.quote(str(w)) for w in parts)


# ----- check -------------------------------------------------------------------------------------
@app.command(short_help="Say whether a position can reach the goal, and why.",
             arguments=[PUZZLE_HELP, POSITION_HELP], examples=[
    "puzzlespace check 3x3 '1 2 3/4 5 6/8 7 0'",
    "puzzlespace check flip:5x5 WWBWW/WWBWW/BWBBW/WWWWW/WWWWW --explain",
    "puzzlespace check jump:4:1,3 '1 2 3 4 0' --goal '0 4 3 2 1' --json"])
@puzzle_argument
@position_argument
@goal_option
@click.option("--explain", is_flag=True, help="also print the whole argument behind the verdict")
@json_option
def check(puzzle: str, position: str, goal: Optional[str], explain: bool, as_json: bool) -> None:
    """Say whether POSITION can reach the goal, and why, without search. Exit 0 yes, 1 no."""
    with _errors():
        p, state = _load(puzzle, position, goal)
        verdict = p.check(state)
    if as_json:
        _emit_json({"puzzle": p.spec, "start": list(state), "goal": list(p.goal), "solvable": verdict.solvable,
                    "summary": verdict.summary or verdict.reason, "reason": verdict.reason,
                    "method": verdict.method})
    else:
        out.print(p.draw(state), markup=False)
        word = "solvable" if verdict.solvable else "unsolvable"
        out.print(f"{word}: {verdict.summary or verdict.reason}", markup=False)
        if explain:
            out.print(f"why: {verdict.reason}", markup=False)
    raise click.exceptions.Exit(EXIT_OK if verdict.solvable else EXIT_UNSOLVABLE)


# ----- solve -------------------------------------------------------------------------------------
@app.command(short_help="Solve a position: optimally, within a weight, anytime, or fast (sliding boards).",
             arguments=[PUZZLE_HELP, POSITION_HELP], examples=[
    "puzzlespace solve 3x3 '8 6 7/2 5 4/3 0 1'",
    "puzzlespace solve 4x3 '0 3 2 1/8 7 6 5/4 11 10 9' --quiet",
    "puzzlespace solve jump:4 '1 2 3 4 0' --goal '0 4 3 2 1' --json",
    "puzzlespace solve 4x4 '14 13 15 7/11 12 9 5/6 0 2 1/4 8 10 3' --time-limit 60",
    "puzzlespace solve 3x3 '8 6 7/2 5 4/3 0 1' --quiet --html solution.html",
    "puzzlespace solve 10x10 \"$(puzzlespace generate 10x10 --count 1)\" --method fast --quiet",
    "puzzlespace solve 5x5 '0 24 23 22 21/20 19 18 17 16/15 14 13 12 11/10 9 8 7 6/5 4 3 2 1' --weight 2 "
    "--heuristic linear-conflict"])
@puzzle_argument
@position_argument
@goal_option
@method_option
@heuristic_option
@weight_option
@click.option("--anytime", is_flag=True,
              help="improve the solution until --time-limit (weighted IDA* at falling weights, down to the "
                   "optimum): the best found and the best lower bound proven; exit 0 with a solution")
@click.option("--time-limit", type=SECONDS, metavar="SECONDS",
              help="stop after this long, counting any pattern-database build; a build estimated to take "
                   "longer is refused up front")
@click.option("--table", type=PATH, metavar="FILE",
              help="read the solution from this tablebase (default with --method table: the cached one)")
@click.option("--quiet", "-q", is_flag=True, help="the moves only, no boards")
@click.option("--html", "html_file", type=PATH, metavar="FILE",
              help="also write the solution as a page that plays it (one file, opens offline)")
@click.option("--svg", "svg_file", type=PATH, metavar="FILE",
              help="also write the start, the path and the goal as one SVG picture")
@json_option
@cache_option
def solve(puzzle: str, position: str, goal: Optional[str], method: str, heuristic: str, weight: Fraction,
          anytime: bool, time_limit: Optional[float], table: Optional[Path], quiet: bool,
          html_file: Optional[Path], svg_file: Optional[Path], as_json: bool, cache_dir: Optional[Path]) -> None:
    """Find a proven-optimal (fewest-moves) solution of POSITION, or with --weight W one
    at most W times as long, with a proven lower bound of the optimum; with --anytime the
    best solution found until --time-limit.

    With --json, one object on stdout whatever happens, with a status: solved,
    unsolvable, stopped or interrupted (then with the lower bound proven so far).
    """
    deadline = None if time_limit is None else clock() + time_limit
    with _errors():
        _use_cache(cache_dir)
        p, state = _load(puzzle, position, goal)
        plan = plan_solving(p, method, heuristic, table=_tablebase(table, p) if table else None,
                            bounded=anytime or weight != 1)
        try:
            if plan.builds_patterns:
                plan = _with_patterns(plan, puzzle, goal, show=True, deadline=deadline)  # stderr: JSON stays clean
            remaining = None if deadline is None else max(0.0, deadline - clock())
            with _search_status(enabled=not as_json) as report:
                sol = solve_position(p, state, time_limit=remaining, progress=report, plan=plan, weight=weight,
                                     anytime=anytime)
        except Unsolvable as exc:
            if as_json:
                _emit_json(_outcome(p, state, "unsolvable", reason=exc.verdict.reason))
            err.print(f"unsolvable: {exc.verdict.summary or exc.verdict.reason}", markup=False)
            raise Stop(EXIT_UNSOLVABLE)
        except SearchStopped as exc:
            if as_json:
                _emit_json(_outcome(p, state, "interrupted" if exc.interrupted else "stopped", reason=str(exc),
                                    lower_bound=exc.lower_bound, nodes=exc.nodes, seconds=round(exc.seconds, 6)))
            raise
    if as_json:
        _emit_json(dict(sol.to_json(), status="solved"))
    else:
        _print_solution(sol, quiet)
    if html_file or svg_file:
        from .pages import solution_html, solution_svg

        with _errors():
            _write_files([(html_file, "page", lambda: solution_html(sol)),
                          (svg_file, "picture", lambda: solution_svg(sol))])


def _write_files(outputs) -> None:
    """Write each ``(path, what, make)`` whose path is given: ``make()``'s text,
    atomically; a failure names ``what``."""
    from .datafile import write_atomic

    for path, what, make in outputs:
        if path is None:
            continue
        text = make().encode()
        try:
            write_atomic(path, lambda f: f.write(text))
        except OSError as exc:
            raise PuzzleError(f"cannot write the {what} {str(path)!r}: {exc.strerror or exc}") from None
        err.print(f"{what} written to {path}", markup=False)


def _outcome(p: Puzzle, state: tuple, status: str, **facts) -> dict:
    """The ``--json`` object of a solve that found no solution."""
    verdict = {"solvable": False} if status == "unsolvable" else {}
    return {"puzzle": p.spec, "start": list(state), "goal": list(p.goal), "status": status, **verdict, **facts}


@contextmanager
def _search_status(enabled: bool):
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


def _with_patterns(plan, puzzle_arg: str, goal_arg: Optional[str], **options):
    """``plan`` with its pattern databases read, or built as :func:`_pattern_problem` says."""
    from dataclasses import replace

    problem = _pattern_problem(plan.puzzle, plan.heuristic.name, puzzle_arg, goal_arg, **options)
    return replace(plan, problem=problem)


def _pattern_problem(p: Puzzle, heuristic: str, puzzle_arg: str, goal_arg: Optional[str], *, show: bool,
                     deadline: Optional[float] = None, threads: Optional[int] = None, rebuild: bool = False):
    """The IDA* problem for a ``pdb:`` heuristic. Databases the cache lacks are announced with
    their cost, refused when they would not fit (or not finish before ``deadline``), then
    built under one progress bar."""
    from .pdb.heuristic import pattern_plan, pattern_problem
    from .solver import resolve_heuristic

    name = resolve_heuristic(p, heuristic)
    plan = pattern_plan(p, name, threads=threads, rebuild=rebuild)
    if plan.build and show:
        err.print(plan.describe(), markup=False)
    with _build_bar(enabled=show, estimate=plan.estimate) as report:
        return pattern_problem(p, name, threads=threads, progress=report, rebuild=rebuild, plan=plan,
                               deadline=deadline, build_first=_command_line("pdb", "build", puzzle_arg, heuristic=name,
                                                                            goal=goal_arg),
                               notify=(lambda line: err.print(line, markup=False)) if show else None)


@contextmanager
def _build_bar(enabled: bool, estimate):
    """One progress bar for all the pattern-database builds of a command: the entries given
    their distance, and the time left (:func:`_time_left`, from ``estimate``, the builds'
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
            return Text(_time_left(task.elapsed or 0.0, task.completed, task.total, estimate.seconds))

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


def _time_left(elapsed: float, done: float, total: float, expected: float) -> str:
    """What a build bar says of the time left: the larger of the estimate's remainder and
    what the rate so far leaves (a build's last layers give few entries, so neither alone
    holds to the end)."""
    left = max(expected - elapsed, elapsed * (total - done) / done if done else 0.0, 0.0)
    return f"about {left:.0f} s left" if left < 90 else f"about {left / 60:.0f} min left"


def _print_solution(sol: Solution, quiet: bool) -> None:
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
    moves = f"{sol.length} move{'' if sol.length == 1 else 's'}"
    what = (f"optimal solution, {moves}" if sol.optimal else
            f"solution, length {sol.length}, within {float(sol.weight):g} of optimal (lower bound {sol.lower_bound})"
            if bounded else
            f"solution, length {sol.length}, optimum >= {sol.lower_bound} (gap {sol.length - sol.lower_bound})")
    out.print(f"{p.spec}: {what} ({how}, {sol.seconds:.3f} s{rate})", markup=False)
    for name, moves in sol.notations.items():
        sep = "" if all(len(str(m)) == 1 and not str(m).isdigit() for m in moves) else " "
        out.print(f"{name}: {sep.join(map(str, moves)) or '(none)'}", markup=False)
    if not quiet:
        primary = next(iter(sol.notations.values()), sol.moves)
        labels = ["start"] + [f"{i + 1}: {m}" for i, m in enumerate(primary)]
        out.print(_tile_boards([p.draw(s) for s in sol.path], labels), markup=False)


def _tile_boards(pictures: list[str], labels: list[str], width: int = 100) -> str:
    """Lay out board pictures side by side, with labels, in rows at most ``width`` wide."""
    blocks = [[lab] + pic.splitlines() for lab, pic in zip(labels, pictures)]
    col = max(len(line) for b in blocks for line in b) + 3
    per_row = max(1, width // col)
    rows = []
    for i in range(0, len(blocks), per_row):
        chunk = blocks[i : i + per_row]
        height = max(map(len, chunk))
        rows.append("\n".join(
            "".join((b[k] if k < len(b) else "").ljust(col) for b in chunk).rstrip() for k in range(height)
        ))
    return "\n\n".join(rows)


def _tablebase(path: Path, puzzle: Puzzle):
    from .explore import tablebase

    return tablebase.load(path, puzzle)


# ----- explore -----------------------------------------------------------------------------------
@app.command(short_help="Visit every position: counts per depth, God's number, antipodes.",
             arguments=[PUZZLE_HELP], examples=[
    "puzzlespace explore 3x3 --antipodes 5",
    "puzzlespace explore 4x3 --json --out ck/",
    "puzzlespace explore 4x3 --out ck/ --resume",
    "puzzlespace explore 3x3 --save cache",
    "puzzlespace explore flip:5x5 --plot depths.png --log",
    "puzzlespace explore 3x3 --html 3x3.html --csv 3x3.csv",
    "puzzlespace explore 7x2 --out ck/ --max-memory 3G",
    "puzzlespace explore 4x3 --workers 2",
    "puzzlespace explore 5x2 --scheduler tcp://HOST:8786 --out /shared/ck"])
@puzzle_argument
@goal_option
@click.option("--out", "out_dir", type=PATH, metavar="DIR",
              help="write a checkpoint to DIR after every layer")
@click.option("--resume", is_flag=True, help="continue from the checkpoint in --out")
@click.option("--save", type=PATH, metavar="FILE", help="write a tablebase to FILE ('cache': where solve and distance find it)")
@threads_option
@click.option("--max-memory", metavar="SIZE", help="refuse to run above this much memory (e.g. 2G)")
@click.option("--antipodes", type=Count(0), default=100, metavar="K", help="list at most K antipodes (default 100)")
@click.option("--plot", type=PATH, metavar="FILE",
              help="draw the depth distribution to a PNG or SVG file (needs the plot extra: "
                   "pip install 'puzzlespace[plot]')")
@click.option("--log", "log_scale", is_flag=True, help="--plot on a log axis")
@click.option("--html", "html_file", type=PATH, metavar="FILE",
              help="also write a page: the summary, the depth chart (linear or log, cumulative), the antipodes "
                   "drawn, the counts")
@click.option("--csv", "csv_file", type=PATH, metavar="FILE", help="also write the counts per depth as CSV")
@click.option("--progress", "show_progress", is_flag=True,
              help="progress on stderr even with --json: a bar per layer on a terminal, else a line as each "
                   "layer's pass ends")
@click.option("--force", is_flag=True,
              help="let --out replace the checkpoint there (of this run, which --resume would continue, or of another)")
@click.option("--segments", type=SEGMENTS, metavar="N",
              help="cut the table into N segments, one in memory at a time, the others in files under --out "
                   "(chosen by itself when the table does not fit --max-memory; --resume keeps the checkpoint's)")
@click.option("--marks", type=click.Choice(["packed", "bitmap"]), default="packed", show_default=True,
              help="how a pass by segments keeps the marks it sends to other segments: packed lists of ranks, "
                   "written as they come, or, past a quarter of a bitmap's bytes, a bit per state of the puzzle in "
                   "memory, at most a bit per state written a pass (for puzzles where many moves cross segments, "
                   "such as flip boards)")
@click.option("--workers", type=SEGMENTS, metavar="N",
              help="explore on a Dask cluster of N worker processes on this machine (--threads each, "
                   "--max-memory shared out); needs the cluster extra: pip install 'puzzlespace[cluster]'")
@click.option("--scheduler", metavar="ADDRESS",
              help="explore on the running Dask cluster at ADDRESS (tcp://HOST:8786); --out: a directory "
                   "every worker shares, or a path on each worker's own disk")
@json_option
def explore(puzzle: str, goal: Optional[str], out_dir: Optional[Path], resume: bool, save: Optional[Path],
            threads: Optional[int], max_memory: Optional[str], antipodes: int, plot: Optional[Path],
            log_scale: bool, html_file: Optional[Path], csv_file: Optional[Path], show_progress: bool, force: bool, segments: Optional[int], marks: str,
            workers: Optional[int], scheduler: Optional[str], as_json: bool) -> None:
    """Visit every position reachable from the goal: counts per depth, God's number, antipodes."""
    from contextlib import ExitStack

    from .datafile import locked
    from .explore import engine
    from .explore.checkpoint import RESUME_NEEDS_OUT
    from .explore.segments import explore_segmented
    from .plot import check_plot_file, write_depth_plot
    from .resources import parse_size

    with _errors():
        p = load_puzzle(puzzle, goal)
        limit = parse_size(max_memory) if max_memory else None
        if plot is not None:
            check_plot_file(plot)
        save_path = _save_path(p, save) if save is not None else None
        on_cluster = workers is not None or scheduler is not None
        if workers is not None and scheduler is not None:
            raise PuzzleError("give --workers (a cluster on this machine) or --scheduler (a running one), not both")
        if segments and out_dir is None and not on_cluster:
            raise PuzzleError("--segments keeps the segments in files: give --out DIR")
        if resume and out_dir is None:  # said before a cluster is started
            raise PuzzleError(RESUME_NEEDS_OUT)
        if max_memory and scheduler is not None:
            raise PuzzleError("--max-memory shares this machine's memory out among the workers --workers starts; "
                              "those of --scheduler's cluster have the limits they were started with (dask worker "
                              "--memory-limit)")
        if threads and scheduler is not None:
            raise PuzzleError("--threads sets the threads of each worker --workers starts; those of --scheduler's "
                              "cluster have the threads they were started with (dask worker --nthreads)")
        if marks != "packed" and on_cluster:
            raise PuzzleError("--marks bitmap is for a run by segments in one process: a cluster's workers send "
                              "their marks packed")
        if marks != "packed" and out_dir is None:
            raise PuzzleError("--marks bitmap is for a run by segments, in files: give --out DIR (with --segments N, "
                              "or --max-memory SIZE below the table)")
        if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
            raise PuzzleError(f"--out {str(out_dir)!r} is a file; give a directory for the checkpoints")
        try:
            with ExitStack() as held:
                if out_dir is not None:
                    held.enter_context(locked(out_dir, "the checkpoint in", directory=True))
                if save_path is not None:
                    held.enter_context(locked(save_path, "the tablebase"))
                note = _segments_made(p, segments, out_dir if resume else None) if segments else None
                if workers:
                    workers, started = _workers_to_start(p, workers, segments, out_dir if resume else None)
                    note = "\n".join(line for line in (note, started) if line) or None
                if not on_cluster:
                    segments = _segments(p, out_dir, resume, threads, limit, save is not None, segments, marks)
                if not (on_cluster or segments or resume):
                    _say_exploration_estimate(p, threads)
                with _layer_progress(show_progress or not as_json, show_progress and not on_cluster) as report:
                    report = _saying_first(note, report)
                    if on_cluster:
                        result = _explore_on_cluster(p, workers, scheduler, threads, limit, segments, out_dir,
                                                     resume, antipodes, report, save is not None, force,
                                                     show_progress or not as_json)
                    elif segments:
                        result = explore_segmented(p, segments=segments, threads=threads, out_dir=out_dir,
                                                   resume=resume, antipode_limit=antipodes, progress=report,
                                                   keep_table=save is not None, force=force, marks=marks)
                    else:
                        result = engine.explore(p, threads=threads, out_dir=out_dir, resume=resume,
                                                max_memory=limit, antipode_limit=antipodes, progress=report,
                                                keep_table=save is not None, force=force)
                if save_path is not None:
                    _save_tablebase(p, result, save_path)
        except KeyboardInterrupt:
            quiet_finalizers()
            err.print(f"stopped: interrupted; {_saved_layer(out_dir)}",
                      markup=False)
            raise Stop(EXIT_INTERRUPTED)
        if plot is not None:
            write_depth_plot(result, plot, log_scale)
            err.print(f"plot written to {plot}", markup=False)
        from .pages import exploration_html

        _write_files([(html_file, "page", lambda: exploration_html(p, result)),
                      (csv_file, "counts", lambda: "depth,positions\n" + "".join(
                          f"{d},{c}\n" for d, c in enumerate(result.depth_counts)))])
    if as_json:
        _emit_json(result.to_json())
        return
    _print_exploration(p, result)


#: Positions from which an exploration's time is estimated, and said on a terminal, before it starts.
ESTIMATE_FROM = 10_000_000


def _say_exploration_estimate(p: Puzzle, threads: Optional[int]) -> None:
    """On a terminal, the time an exploration in memory of a large puzzle takes here
    (:func:`~puzzlespace.explore.estimate.exploration_estimate`), before it starts."""
    from .explore.estimate import exploration_estimate

    positions = p.reachable_count() or p.state_index().size
    if not err.is_terminal or positions < ESTIMATE_FROM:
        return
    estimate = exploration_estimate(p, threads or os.cpu_count() or 1)
    if estimate is not None:
        err.print(f"exploring {p.spec}: {positions:,} positions, {estimate} on this machine", markup=False)


def _saved_layer(out_dir: Optional[Path]) -> str:
    """What an interrupted exploration kept, and the command that continues it."""
    from .explore.checkpoint import read_manifest

    if out_dir is None:
        return "nothing was saved (with --out DIR a run keeps a checkpoint of every layer)"
    try:
        depth = int(read_manifest(out_dir, "")["depth"])
    except (PuzzleError, KeyError, TypeError, ValueError):
        depth = -1
    if depth < 0:
        return f"no layer was saved in {str(out_dir)!r}"
    return f"layer {depth} is saved in {str(out_dir)!r}; continue with: {_this_command(resume=True, force=False)}"


def _this_command(**changes) -> str:
    """The command being run, as a shell line, with the options in ``changes`` set
    (options left at their defaults are left out)."""
    ctx = click.get_current_context()
    values = dict(ctx.params, **changes)
    words = [ctx.command_path]
    for param in ctx.command.params:
        value = values.get(param.name)
        if isinstance(param, click.Argument):
            words += [shlex.quote(str(v)) for v in (value if param.nargs != 1 else [value])]
        elif getattr(param, "is_flag", False):
            if value != param.default:
                names = param.opts if value else param.secondary_opts
                words += [max(names, key=len)] if names else []
        elif value is not None and value != param.default:
            name = max(param.opts, key=len)
            for v in value if param.multiple or param.nargs != 1 else [value]:
                words += [name, *(shlex.quote(str(x)) for x in (v if isinstance(v, tuple) else [v]))]
    return " ".join(words)


def _segments_of_run(p: Puzzle, asked: int, resumed: Optional[Path]) -> Optional[int]:
    """The segments of a run that asks for ``asked``: those of the checkpoint it resumes in
    ``resumed`` (0: it was made without; None where it cannot be read: the run says why),
    else those the ranks make."""
    from .explore.checkpoint import read_manifest
    from .explore.segments import segment_bounds

    if resumed is None:
        return len(segment_bounds(p.state_index(), asked))
    try:
        return len(read_manifest(resumed, "").get("segments", []))
    except (PuzzleError, TypeError):
        return None


def _cut(p: Puzzle, made: int) -> str:
    """Why a run has ``made`` segments, not as many as asked."""
    from .explore.segments import segment_align

    return (f"{p.spec}'s ranks, cut at multiples of {segment_align(p.state_index()):,}, make {made} "
            f"segment{'s' if made != 1 else ''}")


def _segments_made(p: Puzzle, asked: int, resumed: Optional[Path]) -> Optional[str]:
    """What to say when a run is not in the ``asked`` number of segments (None if it is):
    the ranks make another number, or it resumes the checkpoint in ``resumed``, whose
    segments it keeps."""
    made = _segments_of_run(p, asked, resumed)
    if made is None or made == asked:
        return None
    if resumed is not None:
        return (f"--segments {asked}: --resume keeps the checkpoint's {made} segments" if made else
                f"--segments {asked}: the checkpoint in {str(resumed)!r} was made without segments; --resume "
                "continues it so")
    return f"--segments {asked}: {_cut(p, made)}; exploring in {made}"


def _workers_to_start(p: Puzzle, workers: int, segments: Optional[int], resumed: Optional[Path]
                      ) -> tuple[int, Optional[str]]:
    """How many of the ``workers`` asked for to start: no more than the run's segments
    (``segments`` asked for, else a worker each; or the checkpoint's in ``resumed``),
    since the others would hold none; and what to say when that is fewer."""
    made = _segments_of_run(p, segments or workers, resumed)
    if not made or made >= workers:  # none: the run says what is wrong with its checkpoint
        return workers, None
    why = (f"the checkpoint has {made} segment{'s' if made != 1 else ''}" if resumed is not None else
           _cut(p, made) if segments is None else f"the run has {made} segment{'s' if made != 1 else ''}")
    return made, f"--workers {workers}: {why}; starting {made} worker{'s' if made != 1 else ''}"


def _saying_first(note: Optional[str], report):
    """The progress callback ``report`` (or None), saying ``note`` (if any) on stderr
    first, once the run is under way: a run refused before it starts says only why."""
    if note is None:
        return report
    said = []

    def first(*args) -> None:
        if not said:
            said.append(True)
            err.print(note, markup=False)
        if report is not None:
            report(*args)

    return first


def _segments(p: Puzzle, out_dir: Optional[Path], resume: bool, threads: Optional[int], limit: Optional[int],
              tablebase: bool, asked: Optional[int], marks: str) -> int:
    """How many segments an exploration runs in: 0 (the whole table in memory) unless it
    resumes a checkpoint made by segments (-1: its segments, which must fit
    ``--max-memory``), ``asked`` for (they must fit
    ``--max-memory`` with the ``marks`` kept as they say), or the table does not fit
    ``--max-memory`` and ``--out`` can hold the segments (said on stderr)."""
    from .explore import engine
    from .bits import table_bytes
    from .explore.segments import check_resumed_memory, checkpoint_is_segmented, memory_needed, segments_to_fit
    from .resources import current_rss, human

    if out_dir is None:
        return 0
    index = p.state_index()
    threads = threads or os.cpu_count() or 1
    tables = 2 if tablebase else 1
    if resume:
        if not checkpoint_is_segmented(out_dir):
            return 0
        if limit:
            check_resumed_memory(index, out_dir, threads, tables, limit, marks)
        return -1
    if asked:
        fewest = segments_to_fit(index, threads, tables, limit, marks) if limit else 1
        if fewest > asked:
            raise PuzzleError(f"--max-memory {human(limit)} needs {fewest} segments or more, not {asked}")
        return asked
    in_memory = current_rss() + engine.plan(index, threads, True, tables).memory
    if limit is None or in_memory <= limit:
        return 0
    held = "table and tablebase" if tablebase else "table"
    taken = f"in memory it takes about {human(in_memory)}, its {held} {human(table_bytes(index.size) * tables)}"
    fixed = memory_needed(index, threads, tables, 0, marks)
    if fixed >= limit:  # no number of segments helps: the program and its buffers alone do not fit
        raise PuzzleError(f"--max-memory {human(limit)} is too little for {p.spec}: {taken}, and in segments the "
                          f"program and its buffers alone take about {human(fixed)}; raise it")
    segments = segments_to_fit(index, threads, tables, limit, marks)
    err.print(f"{p.spec} does not fit --max-memory {human(limit)}: {taken}; exploring in {segments} segments, one "
              f"in memory at a time, the others in {str(out_dir)!r}", markup=False)
    return segments


def _explore_on_cluster(p: Puzzle, workers: Optional[int], scheduler: Optional[str], threads: Optional[int],
                        limit: Optional[int], segments: Optional[int], out_dir: Optional[Path], resume: bool,
                        antipodes: int, report, tablebase: bool, force: bool, log_layers: bool):
    """Explore on a Dask cluster: a new one on this machine (``workers`` processes) or
    the one at ``scheduler``; a line per layer on stderr when ``log_layers``."""
    from .explore import cluster, dask_cluster
    from .explore.checkpoint import RERUN, read_manifest
    from .explore.segments import checkpoint_is_segmented
    from .resources import human

    if resume and out_dir is not None:  # said before a cluster is started
        read_manifest(out_dir, RERUN)
        if not checkpoint_is_segmented(out_dir):
            raise PuzzleError(f"the checkpoint in {str(out_dir)!r} was made without segments: resume it without "
                              "--workers or --scheduler")
    dask_cluster.dask_logs_off()
    if workers is not None:
        each = max(1, (os.cpu_count() or 1) // workers) if threads is None else threads
        gathers = tablebase and out_dir is None
        share = dask_cluster.worker_memory(limit, workers, p.state_index().size, gathers) if limit else None
        connect = dask_cluster.local_cluster(workers, each, share, puzzle=p)
    else:
        connect = dask_cluster.remote_cluster(scheduler)

    def layer_done(r: "cluster.LayerReport") -> None:
        if log_layers:
            states = f"{r.states:,} state{'s' if r.states != 1 else ''}"
            where = (f"{human(r.bytes_between_workers)} between workers, slowest {r.slowest_worker} "
                     f"({r.slowest_seconds:.2f} s)" if r.slowest_worker is not None else "in this process")
            err.print(f"layer {r.depth}: {states} in {r.seconds:.2f} s, {where}", markup=False)

    with connect as client:
        if log_layers:
            err.print(f"Dask cluster: {dask_cluster.describe_workers(client)}", markup=False)
        return cluster.explore_distributed(p, client, segments=segments, out_dir=out_dir, resume=resume,
                                           antipode_limit=antipodes, keep_table=tablebase, progress=report,
                                           layer_done=layer_done, force=force)


def _save_path(p: Puzzle, save: Path) -> Path:
    """Where ``--save`` writes, checked before the run: a file path with room for the tablebase."""
    from .cache import tablebase_path
    from .resources import free_disk, human

    path = tablebase_path(p) if str(save) == "cache" else save
    if path.name.startswith(".") and path.name.endswith(".lock"):
        raise PuzzleError(f"--save {str(path)!r} is named as puzzlespace's lock files are (removed as a write "
                          "ends); choose another name")
    if path.is_dir():
        raise PuzzleError(f"--save {str(path)!r} is a directory; give a file name such as {str(path / 't.pstb')!r}")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise PuzzleError(f"--save {str(path)!r}: {str(parent)!r} is not a directory")
    need = (p.state_index().size + 3) // 4 + (1 << 16)
    if need > free_disk(parent):
        raise PuzzleError(f"the tablebase needs about {human(need)} of disk in {str(parent)!r} but only "
                          f"{human(free_disk(parent))} is free; choose another --save")
    return path


def _save_tablebase(p: Puzzle, result, path: Path) -> None:
    from .explore import tablebase

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tablebase.save(path, p, p.state_index(), result.table, result.depth_counts)
    except OSError as exc:
        raise PuzzleError(f"cannot write the tablebase {str(path)!r}: {exc.strerror or exc}") from None
    err.print(f"tablebase written to {path}", markup=False)


@contextmanager
def _layer_progress(enabled: bool, lines: bool = False):
    """A rich progress bar per layer on stderr (on a terminal): chunks of the layer done,
    states found, ETA; elsewhere (a log file), with ``lines``, a line as each layer ends."""
    if not enabled or not err.is_terminal:
        yield _layer_lines() if enabled and lines else None
        return
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn("layer {task.fields[depth]:>3}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("chunks, {task.fields[states]:>13,} states"), TimeElapsedColumn(),
               TextColumn("layer ETA"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("explore", total=1, depth=0, states=1)
        layer = [-1]

        def report(depth: int, done: int, total: int, states: int) -> None:
            if depth != layer[0]:
                layer[0] = depth
                bar.reset(task, total=total, depth=depth, states=states)
            bar.update(task, completed=done, total=total, depth=depth, states=states)

        yield report


def _layer_lines():
    """A progress callback that prints a line on stderr as the last part of a layer's pass
    is done, with what the bar shows: the states found so far (the layer's steps made as
    it closes are counted at the next)."""
    t0 = time.perf_counter()

    def report(depth: int, done: int, total: int, states: int) -> None:
        if done == total:
            err.print(f"layer {depth}: {total} of {total} parts done, {states:,} states found so far, "
                      f"{time.perf_counter() - t0:.1f} s", markup=False)

    return report


def _print_exploration(p: Puzzle, r) -> None:
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
        out.print(_tile_boards([p.draw(s) for s in shown], [p.format_position(s) for s in shown]), markup=False)


# ----- distance and generate ---------------------------------------------------------------------
@app.command(short_help="Read a position's exact distance from a tablebase.",
             arguments=[PUZZLE_HELP, POSITION_HELP], examples=[
    "puzzlespace explore 3x3 --save cache",
    "puzzlespace distance 3x3 '8 6 7/2 5 4/3 0 1'",
    "puzzlespace distance 3x3 '8 6 7/2 5 4/3 0 1' --table t.pstb --json"])
@puzzle_argument
@position_argument
@goal_option
@click.option("--table", type=PATH, metavar="FILE",
              help="the puzzle's tablebase (default: the one 'explore --save cache' keeps)")
@json_option
@cache_option
def distance(puzzle: str, position: str, goal: Optional[str], table: Optional[Path], as_json: bool,
             cache_dir: Optional[Path]) -> None:
    """Print the exact distance of POSITION from the goal, read from a tablebase."""
    from .solver import cached_tablebase

    with _errors():
        _use_cache(cache_dir)
        p, state = _load(puzzle, position, goal)
        verdict = p.check(state)
        if not verdict.solvable:
            err.print(f"unsolvable: {verdict.summary or verdict.reason}", markup=False)
            raise Stop(EXIT_UNSOLVABLE)
        tb = _tablebase(table, p) if table else cached_tablebase(p)
        if tb is None:
            raise PuzzleError(f"no tablebase for {p.spec} in the cache; make one with "
                              f"{_command_line('explore', puzzle, goal=goal, save='cache')}, or pass --table FILE")
        d = tb.distance(state)
    if as_json:
        _emit_json({"puzzle": p.spec, "start": list(state), "goal": list(p.goal), "distance": d})
    else:
        out.print(str(d))


@app.command(short_help="Print random solvable positions, optionally at an exact depth.",
             arguments=[PUZZLE_HELP], examples=[
    "puzzlespace generate 3x3 --count 3 --seed 7",
    "puzzlespace generate 4x3 --count 5 --depth 40 --seed 1",
    "puzzlespace generate 3x3 --depth 31 --count 2 --json"])
@puzzle_argument
@click.option("--count", type=Count(1), default=1, metavar="N", help="how many distinct positions (default 1)")
@click.option("--depth", type=Count(0), metavar="D", help="exactly D moves from the goal")
@click.option("--table", type=PATH, metavar="FILE",
              help="a tablebase, to draw at a depth without a new search (default: the cached one)")
@goal_option
@click.option("--seed", type=Count(0), metavar="N", help="random seed, for repeatable output")
@click.option("--json", "as_json", is_flag=True, help="print one JSON list")
def generate(puzzle: str, count: int, depth: Optional[int], table: Optional[Path], goal: Optional[str],
             seed: Optional[int], as_json: bool) -> None:
    """Print distinct uniformly random solvable positions (or ones exactly --depth moves from the goal)."""
    import numpy as np

    from .explore import generate as gen
    from .solver import cached_tablebase

    with _errors():
        p = load_puzzle(puzzle, goal)
        if count > MAX_GENERATE:
            raise PuzzleError(f"--count is at most {MAX_GENERATE:,}")
        rng = np.random.default_rng(seed)
        if depth is None:
            states = gen.distinct_solvable(p, count, rng)
        else:
            tb = _tablebase(table, p) if table else cached_tablebase(p)
            states = gen.random_at_depth(p, depth, count, rng, tablebase=tb)
    if as_json:
        _emit_json([list(s) for s in states])
    else:
        for s in states:
            out.print(p.format_position(s), markup=False)


#: The most positions one ``generate`` prints.
MAX_GENERATE = 10_000_000


# ----- pattern databases -------------------------------------------------------------------------
@app.group(help="Build, list, verify and remove cached pattern databases.")
def pdb() -> None:
    """The ``pdb`` command group."""


@pdb.command("build", short_help="Build the pattern databases of a heuristic.",
              arguments=[PUZZLE_HELP], examples=[
    "puzzlespace pdb build 4x4",
    "puzzlespace pdb build 4x4 --heuristic pdb:7-8 --goal '0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15'"])
@puzzle_argument
@heuristic_option
@goal_option
@threads_option
@click.option("--rebuild", is_flag=True, help="build again even if cached (discards an interrupted build)")
@cache_option
def pdb_build(puzzle: str, heuristic: str, goal: Optional[str], threads: Optional[int], rebuild: bool,
              cache_dir: Optional[Path]) -> None:
    """Build the pattern databases of a heuristic (default: the board's) into the cache.

    A build keeps a checkpoint as it goes; after Ctrl-C or a crash the same command
    continues where it stopped.
    """
    from .pdb.store import pdb_dir
    from .solver import resolve_heuristic

    with _errors():
        _use_cache(cache_dir)
        p = load_puzzle(puzzle, goal)
        name = resolve_heuristic(p, heuristic)
        if not name.startswith("pdb:"):
            raise PuzzleError(f"{name!r} needs no pattern databases; name one with --heuristic pdb:SIZES")
        t0 = time.perf_counter()
        _pattern_problem(p, name, puzzle, goal, show=True, threads=threads, rebuild=rebuild)
    out.print(f"{p.spec} {name}: ready in {pdb_dir()} ({time.perf_counter() - t0:.1f} s)", markup=False)


@pdb.command("list", short_help="List the cached pattern databases, and builds left partial.",
              examples=["puzzlespace pdb list", "puzzlespace pdb list --json"])
@cache_option
@json_option
def pdb_list(cache_dir: Optional[Path], as_json: bool) -> None:
    """List the cached pattern databases (name, puzzle, tiles, size, build time, last use)
    and the builds left partial (interrupted, or running now: 'pdb build' continues
    one, 'pdb remove' frees it)."""
    from .cache import cache_dir as cache_root
    from .resources import human
    from .pdb.store import listing, partial_builds, pdb_dir

    _use_cache(cache_dir)
    found, partial = listing(), partial_builds()
    if as_json:
        _emit_json([dict(h or {}, name=path.name.removesuffix(".pspdb"), path=str(path), problem=why,
                         bytes=path.stat().st_size, last_used=path.stat().st_atime) for path, h, why in found]
                   + [dict(name=path.name.removesuffix(".pspdb"), path=str(path) + ".partial", partial=True,
                           puzzle=m.get("puzzle"), tiles=m.get("tiles"), entries=m.get("entries"),
                           depth=m.get("depth"), bytes=held) for path, m, held in partial])
        return
    rows = [("NAME", "PUZZLE", "TILES", "ENTRIES", "SIZE", "BUILT IN", "LAST USED")]
    for path, h, why in found:
        st = path.stat()
        name = path.name.removesuffix(".pspdb")
        if h is None:
            rows.append((name, f"unreadable: {why}", "", "", human(st.st_size), "", ""))
            continue
        rows.append((name, str(h.get("puzzle", "?")), ",".join(map(str, h.get("tiles", []))),
                     f"{h.get('entries', 0):,}", human(st.st_size), f"{h.get('seconds', 0):.1f} s",
                     time.strftime("%Y-%m-%d %H:%M", time.localtime(st.st_atime))))
    for path, m, held in partial:
        tiles, entries = m.get("tiles"), m.get("entries")
        rows.append((path.name.removesuffix(".pspdb"), str(m.get("puzzle", "?")),
                     ",".join(map(str, tiles)) if isinstance(tiles, list) else "",
                     f"{entries:,}" if isinstance(entries, int) else "", human(held),
                     f"partial, layer {m.get('depth', '?')}", "-"))
    if len(rows) > 1:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        for r in rows:
            out.print("  ".join(c.rjust(w) if i in (3, 4, 5) else c.ljust(w)
                                for i, (c, w) in enumerate(zip(r, widths))).rstrip(), markup=False)
    total = sum(path.stat().st_size for path, _, _ in found) + sum(held for _, _, held in partial)
    every = sum(f.stat().st_size for f in cache_root().rglob("*") if f.is_file()) if cache_root().exists() else 0
    count = f"{len(found)} pattern database{'' if len(found) == 1 else 's'}" if found else "no pattern databases"
    if partial:
        count += f" and {len(partial)} partial build{'' if len(partial) == 1 else 's'}"
    out.print(f"{count} in {pdb_dir()}: {human(total)}; the whole cache: {human(every)}", markup=False)


@pdb.command("remove", short_help="Remove cached pattern databases.",
              arguments=[("NAME", "a database's name, as 'pdb list' shows it")], examples=[
    "puzzlespace pdb remove sliding_4x4-1c3c4d3a52e0-t1.2.3.4.5.6.7", "puzzlespace pdb remove --all"])
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option("--all", "remove_all", is_flag=True, help="remove every pattern database (and interrupted builds)")
@cache_option
def pdb_remove(names: tuple[str, ...], remove_all: bool, cache_dir: Optional[Path]) -> None:
    """Remove cached pattern databases, by name or all of them."""
    from .resources import human
    from .pdb.store import SUFFIX, pdb_dir, remove

    with _errors():
        _use_cache(cache_dir)
        if remove_all == bool(names):
            raise PuzzleError("name the databases to remove (see 'puzzlespace pdb list') or give --all, not both")
        folder = pdb_dir()
        if remove_all:
            targets = sorted(set(folder.glob(f"*{SUFFIX}")) | {d.with_suffix("") for d in folder.glob("*.partial")})
        else:
            targets = []
            for name in names:
                path = folder / (name if name.endswith(SUFFIX) else name + SUFFIX)
                if "/" in name or not (path.exists() or path.with_name(path.name + ".partial").exists()):
                    raise PuzzleError(f"no pattern database named {name!r} in {str(folder)!r} "
                                      "(see 'puzzlespace pdb list')")
                targets.append(path)
        freed = sum(remove(path) for path in targets)
    out.print(f"removed {len(targets)} pattern database{'' if len(targets) == 1 else 's'} from {folder} "
              f"({human(freed)} freed)", markup=False)


@pdb.command("verify", short_help="Check every cached pattern database.",
              examples=["puzzlespace pdb verify"])
@cache_option
def pdb_verify(cache_dir: Optional[Path]) -> None:
    """Check every cached pattern database (header, size, checksum). Exit 1 if any is bad."""
    from .pdb.store import listing, pdb_dir, read

    _use_cache(cache_dir)
    bad = 0
    files = listing()
    for path, _, _ in files:
        try:
            db = read(path)
            out.print(f"ok       {path.name} ({db.header['puzzle']}, tiles {','.join(map(str, db.tiles))})",
                      markup=False)
        except PuzzleError as exc:
            bad += 1
            out.print(f"BAD      {path.name}: {exc}; remove it with 'puzzlespace pdb remove {path.name}' (a solve "
                      "that needs it builds it again)", markup=False)
    out.print(f"{len(files) - bad} of {len(files)} pattern databases in {pdb_dir()} are sound", markup=False)
    raise click.exceptions.Exit(EXIT_UNSOLVABLE if bad else EXIT_OK)


# ----- batch -------------------------------------------------------------------------------------
@app.command(short_help="Solve every position of a file; one result per line.",
             arguments=[PUZZLE_HELP, ("FILE", "positions, one per line ('-' for stdin); Korf's 'id cells...' "
                                              "lines too; blank lines and # comments are skipped")],
             examples=["puzzlespace batch 3x3 positions.txt",
                       "puzzlespace batch 4x4 examples/korf100.txt --goal '0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15' "
                       "-o r.csv"])
@puzzle_argument
@click.argument("file", metavar="FILE", type=PATH)
@goal_option
@method_option
@heuristic_option
@weight_option
@click.option("--anytime", is_flag=True,
              help="per position, improve the solution until --time-limit (see solve --anytime)")
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl"]), default="csv", metavar="FORMAT",
              help="csv (a header, then a row per position; the default) or jsonl (a JSON object per line)")
@click.option("--output", "-o", type=PATH, metavar="FILE",
              help="write the results to FILE (default: stdout)")
@threads_option
@click.option("--time-limit", type=SECONDS, metavar="SECONDS", help="give up on a position after this long")
@click.option("--strict", is_flag=True, help="refuse the whole file if any line is not a position (solve none)")
@cache_option
def batch(puzzle: str, file: Path, goal: Optional[str], method: str, heuristic: str, weight: Fraction,
          anytime: bool, fmt: str,
          output: Optional[Path], threads: Optional[int], time_limit: Optional[float], strict: bool,
          cache_dir: Optional[Path]) -> None:
    """Solve every position in FILE optimally (or within --weight W of it): one result per
    line, the totals on stderr.

    A line that is not a position gets a row with status invalid and the error, and the
    other lines are solved. Exit 0 when every position got an answer (solved or proven
    unsolvable), 2 when some line was invalid, 3 when the time limit stopped some.
    """
    from .batch import invalid, read_entries

    threads = threads or 1
    with _errors():
        _use_cache(cache_dir)
        search_weight(weight, anytime, method)  # refuse the whole file up front
        p = load_puzzle(puzzle, goal)
        try:
            lines = (sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()).splitlines()
        except OSError as exc:
            raise PuzzleError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
        entries = read_entries(p, lines)
        bad = [problem for _, _, problem in entries if problem]
        if not entries:
            raise PuzzleError(f"{str(file)!r} holds no positions")
        if bad and strict:
            raise PuzzleError(f"{bad[0]} ({len(bad)} bad line{'s' if len(bad) > 1 else ''}; --strict solves none)")
        items = [(ident, state) for ident, state, problem in entries if not problem]
        plan = plan_solving(p, method, heuristic, bounded=anytime or weight != 1)
        if items and plan.builds_patterns:
            plan = _with_patterns(plan, puzzle, goal, show=True)
        results = _solve_in_order(p, entries, items, invalid, plan=plan, threads=threads, time_limit=time_limit,
                                  weight=weight, anytime=anytime)
        t0 = time.perf_counter()
        tally = _write_results(results, fmt, output)
    solved, stopped, nodes, search = tally
    invalid_lines = f" ({len(bad)} invalid line{'s' if len(bad) > 1 else ''})" if bad else ""
    err.print(f"solved {solved} of {len(items)}{invalid_lines}: {nodes:,} nodes, "
              f"{search:.2f} s searching, {time.perf_counter() - t0:.2f} s wall on {threads} "
              f"thread{'s' if threads > 1 else ''}", markup=False)
    raise click.exceptions.Exit(EXIT_USAGE if bad else EXIT_STOPPED if stopped else EXIT_OK)


def _solve_in_order(p: Puzzle, entries, items, invalid, **options):
    """The results of every entry in file order: solved ones from the batch, invalid ones as rows."""
    from .batch import solve_all

    solved = solve_all(p, items, **options) if items else iter(())
    for ident, state, problem in entries:
        yield invalid(ident, problem) if problem else next(solved)


def _write_results(results, fmt: str, output: Optional[Path]) -> tuple[int, int, int, float]:
    """Write each result as it comes (CSV or JSON lines) to ``output`` or stdout; return the tally."""
    import csv

    from .batch import FIELDS

    where = str(output) if output else "stdout"
    tally = [0, 0, 0, 0.0]  # solved, stopped, nodes, seconds searching

    def emit(sink) -> None:
        writer = csv.DictWriter(sink, fieldnames=FIELDS) if fmt == "csv" else None
        if writer:
            writer.writeheader()
        for r in results:
            if writer:
                writer.writerow(r.row())
            else:
                sink.write(json.dumps(dict(r.row(), start=list(r.start), reason=r.reason)) + "\n")
            sink.flush()
            tally[0] += r.status == "solved"
            tally[1] += r.status == "stopped"
            tally[2] += r.nodes
            tally[3] += r.seconds

    try:
        if output is None:
            emit(sys.stdout)
        else:  # row by row as they come, so that a long batch shows its answers (and keeps them)
            if output.is_dir():
                raise PuzzleError(f"-o {where!r} is a directory; give a file name")
            with open(output, "w", newline="") as sink:
                emit(sink)
    except OSError as exc:
        raise PuzzleError(f"cannot write the results to {where!r}: {exc.strerror or exc}") from None
    solved, stopped, nodes, search = tally
    return solved, stopped, nodes, search


# ----- demo --------------------------------------------------------------------------------------
#: (puzzle, position, goal or None): an 8-puzzle antipode, an 11-puzzle antipode, the reversal
#: of four pieces that step or jump two cells, and a 13-move flip puzzle.
DEMO = [
    ("sliding:3x3", "8 6 7/2 5 4/3 0 1", None),
    ("sliding:4x3", "0 3 2 1/8 7 6 5/4 11 10 9", None),
    ("jump:4", "1 2 3 4 0", "0 4 3 2 1"),
    ("flip:5x5", "WWBWW/WWBWW/BWBBW/WWWWW/WWWWW", None),
]

TRY_NEXT = [
    ("puzzlespace solve 4x3 '0 3 2 1/8 7 6 5/4 11 10 9' --quiet", "an 11-puzzle position, 53 moves"),
    ("puzzlespace explore 3x3 --antipodes 2", "all 181,440 positions of the 8-puzzle"),
    ("puzzlespace check 3x3 '1 2 3/4 5 6/8 7 0' --explain", "why a position cannot be solved"),
]


@app.command(short_help="Solve four showcase positions and print them.",
             examples=["puzzlespace demo"])
def demo() -> None:
    """Solve four showcase positions, each proven optimal, and print them."""
    out.print("puzzlespace demo: four puzzles solved in the fewest moves, each proven optimal", markup=False)
    out.print(markup=False)
    from rich.table import Table

    table = Table()
    for col in ("puzzle", "position", "moves", "nodes", "seconds"):
        table.add_column(col, justify="right" if col in ("moves", "nodes", "seconds") else "left", no_wrap=True)
    with _errors():
        for spec, position, goal in DEMO:
            p = load_puzzle(spec, goal)
            plan = plan_solving(p)
            if plan.builds_patterns:
                plan = _with_patterns(plan, spec, goal, show=True)
            sol = solve_position(p, p.parse_position(position), plan=plan)
            if spec == "sliding:3x3":
                _print_solution(sol, quiet=False)
                out.print(markup=False)
            table.add_row(spec, p.format_position(sol.start), str(sol.length), f"{sol.nodes:,}",
                          f"{sol.seconds:.3f}")
    out.print(table)
    out.print("try next:", markup=False)
    for command, what in TRY_NEXT:
        out.print(f"  {command:<58} # {what}", markup=False)


@app.command(short_help="Compile ahead the code the first commands on puzzles run.",
             arguments=[("PUZZLE...", "the puzzles (default: the demo's)")],
             examples=["puzzlespace warm", "puzzlespace warm 4x4 flip:6x6"])
@click.argument("puzzles", nargs=-1, metavar="PUZZLE...")
def warm(puzzles: tuple[str, ...]) -> None:
    """Compile ahead (once a machine: numba keeps the code in its cache) what the first
    commands on PUZZLE... run: their searches, fast method, pattern-database builds and
    exploration, so that those start at once. Without puzzles, the demo's."""
    from .warmup import warm as warm_up

    with _errors():
        loaded = [load_puzzle(name, goal) for name, _, goal in DEMO] if not puzzles else \
            [load_puzzle(name) for name in puzzles]
        for p in loaded:
            done = warm_up(p)
            said = ", ".join(f"{w.work} {'compiled in ' + format(w.seconds, '.1f') + ' s' if w.seconds else 'ready'}"
                             for w in done)
            out.print(f"{p.spec}: {said}", markup=False)


@app.command(short_help="Play in a browser, with optimal hints (needs the web extra).",
             examples=["puzzlespace serve", "puzzlespace serve --port 8080 --time-limit 30"])
@click.option("--host", default="127.0.0.1", show_default=True, metavar="HOST",
              help="the address to listen on (the default lets only this machine in)")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True, metavar="PORT",
              help="the port (0: any free one)")
@click.option("--time-limit", type=SECONDS, default="10", show_default=True, metavar="SECONDS",
              help="longest optimal solve for a distance or a hint; past it the page shows a lower bound "
                   "and a quick solution's move")
@click.option("--build-limit", type=SECONDS, default="120", show_default=True, metavar="SECONDS",
              help="pattern databases estimated to take longer to build are not built (the search uses "
                   "linear-conflict instead; 'puzzlespace pdb build' makes them once)")
@cache_option
def serve(host: str, port: int, time_limit: float, build_limit: float, cache_dir: Optional[Path]) -> None:
    """Serve a page to play on: pick a puzzle (or load a graph file), scramble, move by
    clicking or with the keys, see the distance to the goal after every move and ask for
    the next move of an optimal solution. Stop it with Ctrl-C."""
    from . import web

    with _errors():
        _use_cache(cache_dir)

        def ready(url: str) -> None:
            out.print(f"puzzlespace serve: open {url} in a browser (Ctrl-C stops it)", markup=False)
            sys.stdout.flush()

        web.serve(host, port, time_limit, build_limit, ready=ready)


def _keep_scipy_out() -> None:
    """Make ``import scipy`` fail in this process (unless it is already imported).

    numba imports SciPy, when it is installed, as it first compiles or loads a function,
    only to offer linear algebra in compiled code, which puzzlespace does not use.
    """
    sys.modules.setdefault("scipy", None)


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``puzzlespace`` script.

    Ends the process with ``os._exit`` once the output is flushed: the interpreter's
    teardown (numba and LLVM finalisers) is slow and has nothing left to do.
    """
    _keep_scipy_out()
    code = app.main(argv, prog_name="puzzlespace", standalone_mode=False)
    try:
        sys.stdout.flush()
    except OSError as exc:  # a full disk, or the reader went away
        try:
            sys.stderr.write(f"error: cannot write the output: {exc.strerror or exc}\n")
        except OSError:
            pass
        code = code or EXIT_USAGE
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # pragma: no cover
    main()
