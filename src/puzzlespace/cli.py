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
                       OutputPath, Seconds, SegmentCount, Weight, quiet_finalizers)
from .errors import PuzzleError, SearchStopped, Undecided, Unsolvable
from .registry import load_puzzle, syntax as puzzle_syntax
from .cliprint import (SaidOnStderr, build_bar, err, layer_progress, out, print_exploration, print_optimal,
                       print_pdb_list, print_solution, say, search_status, show, write_files, write_pages)
from .optimal import LIST_CAP, every_optimal, optimal_json
from .solver import METHODS, plan_solving, search_weight, solve as solve_position, tablebase_of, unsolved_json

if TYPE_CHECKING:  # annotations only
    from .families.base import Puzzle


PUZZLE_HELP = ("PUZZLE", lambda: "the puzzle's family and size: " + puzzle_syntax() + "; a sliding board counts "
               "one tile a move (:stm, the default) or, with :mtm, a row or column of tiles a move (the multi-tile "
               "metric)")
POSITION_HELP = ("POSITION", "cells row-major, 0 the blank: '8 6 7/2 5 4/3 0 1', or 'BWB/WBB/BBB' for flip "
                             "puzzles (after --, if it starts with -)")
HEURISTIC_HELP = ("IDA*'s bound: auto, manhattan, linear-conflict, walking, or pattern databases "
                  "pdb:SIZES (pdb:7-8, pdb:6-6-3) or pdb:TILES/TILES (pdb:1,2,3/4,5,6)")
SECONDS = Seconds()
PATH = FilePath()
OUTPUT = OutputPath()
SEGMENTS = SegmentCount()

puzzle_argument = click.argument("puzzle", metavar="PUZZLE")
position_argument = click.argument("position", metavar="POSITION")
goal_option = click.option("--goal", metavar="POSITION", help="the goal (default: the family's)")
json_option = click.option("--json", "as_json", is_flag=True, help="print one JSON object on stdout")
heuristic_option = click.option("--heuristic", metavar="NAME", default="auto", help=HEURISTIC_HELP)
cache_option = click.option("--cache-dir", type=PATH, metavar="DIR",
                            help="where pattern databases and tablebases are kept "
                                 "(default: $PUZZLESPACE_CACHE, else ~/.cache/puzzlespace)")
threads_option = click.option("--threads", type=Count(1), metavar="N", help="worker threads (default: all cores)")
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
    if not any(isinstance(h, SaidOnStderr) for h in log.handlers):
        log.addHandler(SaidOnStderr())
        log.setLevel(logging.INFO)
        log.propagate = False


class Stop(Exception):
    """End a command with the exit status ``args[0]`` (its message, if any, is already printed)."""


@contextmanager
def _errors() -> Iterator[None]:
    """Turn every expected failure into one line on stderr and an exit status."""
    try:
        yield
    except PuzzleError as exc:
        err.print(f"error: {_continued(str(exc))}", markup=False)
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
        raise click.exceptions.Exit(exc.args[0])


#: How the library ends the message of a run that stopped with a checkpoint to continue from.
RESUME_ADVICE = " with --resume"


def _continued(message: str) -> str:
    """``message``, its closing advice to continue ``with --resume`` given, in a command
    that has ``--resume``, as the exact command line that continues the run."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or "resume" not in ctx.params or not message.endswith(RESUME_ADVICE):
        return message
    return f"{message[:-len(RESUME_ADVICE)]} with: {_this_command(resume=True, force=False)}"


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
        show(p.draw(state))
        word = "solvable" if verdict.solvable else "unsolvable"
        show(f"{word}: {verdict.summary or verdict.reason}")
        if explain:
            show(f"why: {verdict.reason}")
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
@click.option("--count", "count_only", is_flag=True, help="count every optimal solution (from the tablebase of "
              "--table or of the cache, else a search: of the position's layers, or IDA*'s; --method table, bfs "
              "or ida chooses)")
@click.option("--all", "list_cap", type=click.IntRange(1), is_flag=False, flag_value=LIST_CAP, default=None,
              metavar="[K]", help=f"list them too, in the order of their moves, at most K (default {LIST_CAP})")
@click.option("--quiet", "-q", is_flag=True, help="the moves only, no boards")
@click.option("--html", "html_file", type=OUTPUT, metavar="FILE",
              help="also write the solution as a page that plays it (one file, opens offline)")
@click.option("--svg", "svg_file", type=OUTPUT, metavar="FILE",
              help="also write the start, the path and the goal as one SVG picture")
@json_option
@cache_option
def solve(puzzle: str, position: str, goal: Optional[str], method: str, heuristic: str, weight: Fraction,
          anytime: bool, time_limit: Optional[float], table: Optional[Path], count_only: bool,
          list_cap: Optional[int], quiet: bool, html_file: Optional[Path], svg_file: Optional[Path], as_json: bool,
          cache_dir: Optional[Path]) -> None:
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
        table = tablebase_of(p, table) if table else None
        try:
            if count_only or list_cap:
                return _every_optimal(p, state, table, list_cap, as_json, html_file, svg_file, method=method,
                                      heuristic=heuristic, time_limit=time_limit)
            plan = plan_solving(p, method, heuristic, table=table, bounded=anytime or weight != 1)
            if plan.builds_patterns:
                plan = _with_patterns(plan, puzzle, goal, deadline=deadline)
            remaining = None if deadline is None else max(0.0, deadline - clock())
            with search_status(enabled=not as_json) as report:
                sol = solve_position(p, state, time_limit=remaining, progress=report, plan=plan, weight=weight,
                                     anytime=anytime)
        except Unsolvable as exc:
            if as_json:
                _emit_json(unsolved_json(p, state, "unsolvable", reason=exc.verdict.reason))
            say(f"unsolvable: {exc.verdict.summary or exc.verdict.reason}")
            raise Stop(EXIT_UNSOLVABLE)
        except SearchStopped as exc:
            if as_json:
                _emit_json(unsolved_json(p, state, "interrupted" if exc.interrupted else "stopped", reason=str(exc),
                                    lower_bound=exc.lower_bound, nodes=exc.nodes, seconds=round(exc.seconds, 6)))
            raise
    if as_json:
        _emit_json(dict(sol.to_json(), status="solved"))
    else:
        print_solution(sol, quiet)
    with _errors():
        write_pages(html_file, svg_file, sol)


def _every_optimal(p: Puzzle, state: tuple, table, list_cap: Optional[int], as_json: bool,
                   html_file: Optional[Path], svg_file: Optional[Path], **how) -> None:
    """``solve --count``/``--all``: the count, the list, and the page (of up to LIST_CAP) or picture."""
    shown = list_cap or (LIST_CAP if html_file or svg_file else None)
    counted, listed = every_optimal(p, state, table, shown, **how)
    if as_json:
        _emit_json(optimal_json(p, state, counted, listed if list_cap else None))
    print_optimal(p, counted, listed if list_cap else None, lines=not as_json)
    if listed:
        first, *others = [s.solution(p, state, counted.method) for s in listed]
        write_pages(html_file, svg_file, first, others, counted.count)


def _with_patterns(plan, puzzle_arg: str, goal_arg: Optional[str], **options):
    """``plan`` with its pattern databases read, or built as :func:`_pattern_problem` says."""
    from dataclasses import replace

    return replace(plan, problem=_pattern_problem(plan.puzzle, plan.heuristic.name, puzzle_arg, goal_arg, **options))


def _pattern_problem(p: Puzzle, heuristic: str, puzzle_arg: str, goal_arg: Optional[str], *,
                     deadline: Optional[float] = None, threads: Optional[int] = None, rebuild: bool = False):
    """The IDA* problem for a ``pdb:`` heuristic. Databases the cache lacks are announced with
    their cost on stderr (JSON on stdout stays clean), refused when they would not fit (or
    not finish before ``deadline``), then built under one progress bar."""
    from .pdb.heuristic import pattern_plan, pattern_problem
    from .solver import resolve_heuristic

    name = resolve_heuristic(p, heuristic)
    plan = pattern_plan(p, name, threads=threads, rebuild=rebuild)
    if plan.build:
        say(plan.describe())
    with build_bar(enabled=True, estimate=plan.estimate) as report:
        return pattern_problem(p, name, threads=threads, progress=report, rebuild=rebuild, plan=plan,
                               deadline=deadline, notify=say,
                               build_first=_command_line("pdb", "build", puzzle_arg, heuristic=name, goal=goal_arg))


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
@click.option("--out", "out_dir", type=OutputPath(folder=True), metavar="DIR",
              help="write a checkpoint to DIR after every layer")
@click.option("--resume", is_flag=True, help="continue from the checkpoint in --out")
@click.option("--save", type=OutputPath(made=True, keep=("cache",)), metavar="FILE", help="write a tablebase to FILE ('cache': where solve and distance find it)")
@click.option("--counts", is_flag=True, help="with --save: also count every position's optimal solutions, kept "
              "beside the tablebase (8 bytes a position), which distance then prints")
@threads_option
@click.option("--max-memory", metavar="SIZE", help="refuse to run above this much memory (e.g. 2G)")
@click.option("--antipodes", type=Count(0), default=100, metavar="K", help="list at most K antipodes (default 100)")
@click.option("--plot", type=OUTPUT, metavar="FILE",
              help="draw the depth distribution to a PNG or SVG file (needs the plot extra: "
                   "pip install 'puzzlespace[plot]')")
@click.option("--log", "log_scale", is_flag=True, help="--plot on a log axis")
@click.option("--html", "html_file", type=OUTPUT, metavar="FILE",
              help="also write a page: the summary, the depth chart (linear or log, cumulative), the antipodes "
                   "drawn, the counts")
@click.option("--csv", "csv_file", type=OUTPUT, metavar="FILE", help="also write the counts per depth as CSV")
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
def explore(puzzle: str, goal: Optional[str], out_dir: Optional[Path], resume: bool, save: Optional[Path], counts: bool,
            threads: Optional[int], max_memory: Optional[str], antipodes: int, plot: Optional[Path],
            log_scale: bool, html_file: Optional[Path], csv_file: Optional[Path], show_progress: bool, force: bool, segments: Optional[int], marks: str,
            workers: Optional[int], scheduler: Optional[str], as_json: bool) -> None:
    """Visit every position reachable from the goal: counts per depth, God's number, antipodes."""
    from .explore.run import explore_puzzle
    from .plot import check_plot_file, write_depth_plot
    from .resources import parse_size

    logs = show_progress or not as_json
    with _errors():
        p = load_puzzle(puzzle, goal)
        limit = parse_size(max_memory) if max_memory else None
        if plot is not None:
            check_plot_file(plot)
        try:
            with layer_progress(logs, show_progress and workers is None and scheduler is None) as report:
                result = explore_puzzle(p, out=out_dir, resume=resume, max_memory=limit, segments=segments,
                                        workers=workers, scheduler=scheduler, threads=threads, marks=marks, save=save,
                                        counts=counts, antipode_limit=antipodes, force=force, progress=report, said=say,
                                        log=say if logs else None, estimate=err.is_terminal)
        except KeyboardInterrupt:
            quiet_finalizers()
            say(f"stopped: interrupted; {_saved_layer(out_dir)}")
            raise Stop(EXIT_INTERRUPTED)
        if plot is not None:
            write_depth_plot(result, plot, log_scale)
            say(f"plot written to {plot}")
        from .pages import exploration_html

        write_files([(html_file, "page", lambda: exploration_html(p, result)),
                      (csv_file, "counts", lambda: "depth,positions\n" + "".join(
                          f"{d},{c}\n" for d, c in enumerate(result.depth_counts)))])
    if as_json:
        _emit_json(result.to_json())
        return
    print_exploration(p, result)


def _saved_layer(out_dir: Optional[Path]) -> str:
    """What an interrupted exploration kept, and the command that continues it."""
    from .explore.run import saved_layer

    if out_dir is None:
        return "nothing was saved (with --out DIR a run keeps a checkpoint of every layer)"
    depth = saved_layer(out_dir)
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
    """Print the exact distance of POSITION from the goal, read from a tablebase, and its
    number of optimal solutions where explore --counts kept them beside it."""
    from .explore.pathcounts import beside as path_counts_beside

    with _errors():
        _use_cache(cache_dir)
        p, state = _load(puzzle, position, goal)
        verdict = p.check(state)
        if not verdict.solvable:
            say(f"unsolvable: {verdict.summary or verdict.reason}")
            raise Stop(EXIT_UNSOLVABLE)
        tb = tablebase_of(p, table)
        if tb is None:
            raise PuzzleError(f"no tablebase for {p.spec} in the cache; make one with "
                              f"{_command_line('explore', puzzle, goal=goal, save='cache')}, or pass --table FILE")
        d = tb.distance(state)
        paths = path_counts_beside(tb, table)
    count = None if paths is None else paths.count(state)
    if as_json:
        _emit_json({"puzzle": p.spec, "start": list(state), "goal": list(p.goal), "distance": d,
                    **({} if count is None else {"count": count})})
    else:
        show(str(d) if count is None else f"{d} ({count:,} optimal solution{'' if count == 1 else 's'})")


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

    with _errors():
        p = load_puzzle(puzzle, goal)
        if count > MAX_GENERATE:
            raise PuzzleError(f"--count is at most {MAX_GENERATE:,}")
        rng = np.random.default_rng(seed)
        if depth is None:
            states = gen.distinct_solvable(p, count, rng)
        else:
            tb = tablebase_of(p, table)
            states = gen.random_at_depth(p, depth, count, rng, tablebase=tb)
    if as_json:
        _emit_json([list(s) for s in states])
    else:
        for s in states:
            show(p.format_position(s))


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
        _pattern_problem(p, name, puzzle, goal, threads=threads, rebuild=rebuild)
    show(f"{p.spec} {name}: ready in {pdb_dir()} ({time.perf_counter() - t0:.1f} s)")


@pdb.command("list", short_help="List the cached pattern databases, and builds left partial.",
              examples=["puzzlespace pdb list", "puzzlespace pdb list --json"])
@cache_option
@json_option
def pdb_list(cache_dir: Optional[Path], as_json: bool) -> None:
    """List the cached pattern databases (name, puzzle, tiles, size, build time, last use)
    and the builds left partial (interrupted, or running now: 'pdb build' continues
    one, 'pdb remove' frees it)."""
    from .cache import used_bytes
    from .pdb.store import catalogue, pdb_dir

    _use_cache(cache_dir)
    records = catalogue()
    if as_json:
        _emit_json(records)
        return
    print_pdb_list(records, pdb_dir(), used_bytes())


@pdb.command("remove", short_help="Remove cached pattern databases.",
              arguments=[("NAME", "a database's name, as 'pdb list' shows it")], examples=[
    "puzzlespace pdb remove sliding_4x4-1c3c4d3a52e0-t1.2.3.4.5.6.7", "puzzlespace pdb remove --all"])
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option("--all", "remove_all", is_flag=True, help="remove every pattern database (and interrupted builds)")
@cache_option
def pdb_remove(names: tuple[str, ...], remove_all: bool, cache_dir: Optional[Path]) -> None:
    """Remove cached pattern databases, by name or all of them."""
    from .resources import human
    from .pdb.store import pdb_dir, removal_targets, remove

    with _errors():
        _use_cache(cache_dir)
        targets = removal_targets(names, remove_all)
        freed = sum(remove(path) for path in targets)
    show(f"removed {len(targets)} pattern database{'' if len(targets) == 1 else 's'} from {pdb_dir()} "
         f"({human(freed)} freed)")


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
            show(f"ok       {path.name} ({db.header['puzzle']}, tiles {','.join(map(str, db.tiles))})")
        except PuzzleError as exc:
            bad += 1
            show(f"BAD      {path.name}: {exc}; remove it with 'puzzlespace pdb remove {path.name}' (a solve "
                 "that needs it builds it again)")
    show(f"{len(files) - bad} of {len(files)} pattern databases in {pdb_dir()} are sound")
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
@click.option("--output", "-o", type=OUTPUT, metavar="FILE",
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
    from .batch import checked_entries, solve_entries

    threads = threads or 1
    with _errors():
        _use_cache(cache_dir)
        search_weight(weight, anytime, method)  # refuse the whole file up front
        p = load_puzzle(puzzle, goal)
        try:
            lines = (sys.stdin.buffer.read() if str(file) == "-" else file.read_bytes()).splitlines()
        except OSError as exc:
            raise PuzzleError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
        entries = checked_entries(p, lines, str(file), strict)
        plan = plan_solving(p, method, heuristic, bounded=anytime or weight != 1)
        if plan.builds_patterns and not all(problem for _, _, problem in entries):
            plan = _with_patterns(plan, puzzle, goal)
        results = solve_entries(p, entries, plan=plan, threads=threads, time_limit=time_limit, weight=weight,
                                anytime=anytime)
        t0 = time.perf_counter()
        tally = _write_results(results, fmt, output)
    bad = tally.invalid
    invalid_lines = f" ({bad} invalid line{'s' if bad > 1 else ''})" if bad else ""
    say(f"solved {tally.solved} of {tally.rows - bad}{invalid_lines}: {tally.nodes:,} nodes, "
         f"{tally.seconds:.2f} s searching, {time.perf_counter() - t0:.2f} s wall on {threads} "
         f"thread{'s' if threads > 1 else ''}")
    raise click.exceptions.Exit(EXIT_USAGE if bad else EXIT_STOPPED if tally.stopped else EXIT_OK)


def _write_results(results, fmt: str, output: Optional[Path]):
    """:func:`~puzzlespace.batch.write_results` to ``output`` or stdout; its tally."""
    from .batch import write_results

    try:
        if output is None:
            return write_results(results, fmt, sys.stdout)
        with open(output, "w", newline="") as sink:
            return write_results(results, fmt, sink)
    except OSError as exc:
        where = str(output) if output else "stdout"
        raise PuzzleError(f"cannot write the results to {where!r}: {exc.strerror or exc}") from None


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
    show("puzzlespace demo: four puzzles solved in the fewest moves, each proven optimal")
    show("")
    from rich.table import Table

    table = Table()
    for col in ("puzzle", "position", "moves", "nodes", "seconds"):
        table.add_column(col, justify="right" if col in ("moves", "nodes", "seconds") else "left", no_wrap=True)
    with _errors():
        for spec, position, goal in DEMO:
            p = load_puzzle(spec, goal)
            plan = plan_solving(p)
            if plan.builds_patterns:
                plan = _with_patterns(plan, spec, goal)
            sol = solve_position(p, p.parse_position(position), plan=plan)
            if spec == "sliding:3x3":
                print_solution(sol, quiet=False)
                show("")
            table.add_row(spec, p.format_position(sol.start), str(sol.length), f"{sol.nodes:,}",
                          f"{sol.seconds:.3f}")
    out.print(table)
    show("try next:")
    for command, what in TRY_NEXT:
        show(f"  {command:<58} # {what}")


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
            show(f"{p.spec}: {said}")


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
            show(f"puzzlespace serve: open {url} in a browser (Ctrl-C stops it)")
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
