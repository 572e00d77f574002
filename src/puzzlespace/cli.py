"""The ``puzzlespace`` command: a thin layer that parses arguments and prints.

Exit status: 0 success (solvable / solved), 1 unsolvable, 2 bad input, 3 stopped or
undecided (time limit, size guard, a question beyond the limits), 130 interrupted.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Iterator, Optional

import typer
from rich.console import Console
from rich.table import Table

from .errors import PuzzleError, SearchStopped, Undecided, Unsolvable
from .families.base import Puzzle
from .registry import load_puzzle
from .solver import Solution, solve as solve_position

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Solve combinatorial puzzles optimally and map their state space.",
)
out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)

PuzzleArg = Annotated[str, typer.Argument(help="sliding:WxH (or WxH), jump:N[:D1,D2,...], graph:FILE or flip:WxH")]
PositionArg = Annotated[str, typer.Argument(help="cells row-major, e.g. '8 6 7/2 5 4/3 0 1' or 'BWB/WBB/BBB'")]
GoalOpt = Annotated[Optional[str], typer.Option("--goal", help="goal position (default: the family's)")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object")]
HeuristicOpt = Annotated[str, typer.Option(
    "--heuristic", help="IDA* bound: auto, manhattan, linear-conflict, walking, or pattern databases pdb:SIZES "
    "(e.g. pdb:7-8, pdb:6-6-3, pdb:6-6-6-6) or pdb:TILES/TILES (e.g. pdb:1,2,3/4,5,6)")]
CacheOpt = Annotated[Optional[Path], typer.Option(
    "--cache-dir", help="where pattern databases and tablebases are cached (default: $PUZZLESPACE_CACHE, "
    "else ~/.cache/puzzlespace)")]


class Method(str, Enum):
    auto = "auto"
    bfs = "bfs"
    bibfs = "bibfs"
    ida = "ida"
    table = "table"


class Exit(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code


@contextmanager
def _errors() -> Iterator[None]:
    """Turn every expected failure into one line on stderr and an exit status."""
    try:
        yield
    except PuzzleError as exc:
        err.print(f"error: {exc}", markup=False)
        raise typer.Exit(2)
    except Undecided as exc:
        err.print(f"undecided: {exc}", markup=False)
        raise typer.Exit(3)
    except SearchStopped as exc:
        err.print(f"stopped: {exc} ({exc.nodes:,} nodes, {exc.seconds:.1f} s)", markup=False)
        raise typer.Exit(130 if "interrupted" in str(exc) else 3)
    except KeyboardInterrupt:
        err.print("stopped: interrupted", markup=False)
        raise typer.Exit(130)


def _emit_json(obj) -> None:
    """One compact JSON object (or list) on one line of stdout."""
    sys.stdout.write(json.dumps(obj) + "\n")


def _load(puzzle: str, position: str, goal: Optional[str]) -> tuple[Puzzle, tuple]:
    p = load_puzzle(puzzle, goal)
    return p, p.parse_position(position)


@app.command()
def check(
    puzzle: PuzzleArg,
    position: PositionArg,
    goal: GoalOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Say whether POSITION can reach the goal, and why (no search). Exit 0 yes, 1 no."""
    with _errors():
        p, state = _load(puzzle, position, goal)
        verdict = p.check(state)
    if as_json:
        _emit_json({
            "puzzle": p.spec, "position": list(state), "goal": list(p.goal),
            "solvable": verdict.solvable, "reason": verdict.reason, "method": verdict.method,
        })
    else:
        out.print(p.draw(state), markup=False)
        out.print(("solvable" if verdict.solvable else "unsolvable") + f": {verdict.reason}", markup=False)
    raise typer.Exit(0 if verdict.solvable else 1)


@app.command()
def solve(
    puzzle: PuzzleArg,
    position: PositionArg,
    goal: GoalOpt = None,
    method: Method = typer.Option(Method.auto, "--method", help="search method"),
    as_json: JsonOpt = False,
    time_limit: Optional[float] = typer.Option(None, "--time-limit", min=0.0, help="give up after S seconds"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="moves only, no boards"),
    table: Optional[Path] = typer.Option(None, "--table", help="read the solution from this tablebase"),
    heuristic: HeuristicOpt = "auto",
    cache_dir: CacheOpt = None,
) -> None:
    """Find a proven-optimal (fewest-moves) solution of POSITION."""
    with _errors():
        p, state = _load(puzzle, position, goal)
        tb = _tablebase(table, p) if table else None
        try:
            problem = None
            _use_cache(cache_dir)
            if tb is None and _builds_patterns(p, method.value, heuristic):
                problem = _search_problem(p, heuristic, show=not as_json)
            with _progress(enabled=not as_json) as report:
                sol = solve_position(p, state, "ida" if problem else method.value, time_limit=time_limit,
                                     progress=report, table=tb, heuristic=heuristic, problem=problem)
        except Unsolvable as exc:
            if as_json:
                _emit_json({"puzzle": p.spec, "start": list(state), "goal": list(p.goal),
                                           "solvable": False, "reason": exc.verdict.reason})
            else:
                err.print(f"unsolvable: {exc.verdict.reason}", markup=False)
            raise typer.Exit(1)
    if as_json:
        _emit_json(sol.to_json())
    else:
        _print_solution(sol, quiet)


@contextmanager
def _progress(enabled: bool):
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
        if seconds > 1.0 and bound != last[0]:
            last[0] = bound
            err.print(f"searching: bound {bound}, {nodes:,} nodes, {seconds:.1f} s", markup=False)

    yield plain


def _builds_patterns(p: Puzzle, method: str, heuristic: str) -> bool:
    """Whether solving will use pattern databases (loaded here first, to show their build)."""
    from .explore.cache import tablebase_path
    from .solver import resolve_heuristic

    if method not in ("auto", "ida") or p.default_heuristic() is None:
        return False
    if method == "auto" and heuristic == "auto" and tablebase_path(p).exists():
        return False
    return resolve_heuristic(p, heuristic).startswith("pdb:")


def _use_cache(cache_dir: Optional[Path]) -> None:
    """Point the library's cache (pattern databases, tablebases) at ``--cache-dir``."""
    if cache_dir is not None:
        os.environ["PUZZLESPACE_CACHE"] = str(cache_dir)


def _search_problem(p: Puzzle, heuristic: str, show: bool, threads: Optional[int] = None, rebuild: bool = False):
    """The IDA* problem for ``heuristic``; pattern databases are built with a progress bar if missing."""
    from .solver import search_problem_for

    extra = {"rebuild": True} if rebuild else {}
    if not show:
        return search_problem_for(p, heuristic, threads=threads, **extra)
    with _layer_progress(enabled=True) as report:
        return search_problem_for(p, heuristic, threads=threads, progress=report,
                                  notify=lambda line: err.print(line, markup=False), **extra)


def _print_solution(sol: Solution, quiet: bool) -> None:
    p = sol.puzzle
    rate = f", {sol.nodes / sol.seconds:,.0f} nodes/s" if sol.seconds > 0.01 and sol.nodes > 10_000 else ""
    how = f"{sol.method} {sol.heuristic}" if sol.heuristic else sol.method
    out.print(f"{p.spec}: optimal solution, {sol.length} move{'' if sol.length == 1 else 's'} "
              f"({how}, {sol.nodes:,} nodes, {sol.seconds:.3f} s{rate})", markup=False)
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


@app.command()
def explore(
    puzzle: PuzzleArg,
    goal: GoalOpt = None,
    out_dir: Optional[Path] = typer.Option(None, "--out", help="checkpoint directory (written after every layer)"),
    resume: bool = typer.Option(False, "--resume", help="continue from the checkpoint in --out"),
    save: Optional[str] = typer.Option(None, "--save", help="write a tablebase to this file ('cache': the cache directory)"),
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="worker threads (default: all cores)"),
    max_memory: Optional[str] = typer.Option(None, "--max-memory", help="refuse to run above this memory (e.g. 2G)"),
    as_json: JsonOpt = False,
    plot: Optional[Path] = typer.Option(None, "--plot", help="draw the depth distribution (PNG or SVG)"),
    antipodes: int = typer.Option(100, "--antipodes", min=0, help="list at most K antipodes"),
    show_progress: bool = typer.Option(False, "--progress", help="progress on stderr even with --json"),
) -> None:
    """Enumerate every position reachable from the goal: counts per depth, God's number, antipodes."""
    from .explore import engine
    from .explore.resources import parse_size

    with _errors():
        p = load_puzzle(puzzle, goal)
        limit = parse_size(max_memory) if max_memory else None
        if plot is not None:
            _check_plot_backend(plot)
        with _layer_progress(enabled=show_progress or not as_json) as report:
            result = engine.explore(p, threads=threads, out_dir=out_dir, resume=resume, max_memory=limit,
                                    antipode_limit=antipodes, progress=report, keep_table=save is not None)
        if save is not None:
            _save_tablebase(p, result, save)
        if plot is not None:
            _plot_depths(result, plot)
    if as_json:
        _emit_json(result.to_json())
        return
    _print_exploration(p, result)


def _save_tablebase(p: Puzzle, result, save: str) -> None:
    from .explore import tablebase
    from .explore.cache import tablebase_path

    path = tablebase_path(p) if save == "cache" else Path(save)
    path.parent.mkdir(parents=True, exist_ok=True)
    tablebase.save(path, p, p.state_index(), result.table, result.depth_counts)
    err.print(f"tablebase written to {path}", markup=False)


@contextmanager
def _layer_progress(enabled: bool):
    """A rich progress bar per layer on stderr: chunks of the layer done, states found, ETA."""
    if not enabled:
        yield None
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


def _print_exploration(p: Puzzle, r) -> None:
    table = Table(title=f"{p.spec}: positions by distance from the goal")
    table.add_column("depth", justify="right")
    table.add_column("positions", justify="right")
    for d, c in enumerate(r.depth_counts):
        table.add_row(str(d), f"{c:,}")
    out.print(table)
    out.print(f"states: {r.states:,}   God's number: {r.max_depth}   antipodes: {r.antipode_count:,}", markup=False)
    out.print(f"time: {r.seconds:.2f} s on {r.threads} threads   peak memory: {r.peak_memory_bytes / 2**20:.0f} MiB",
              markup=False)
    if r.antipodes:
        shown = r.antipodes
        out.print(f"antipodes ({len(shown)} of {r.antipode_count:,}):", markup=False)
        out.print(_tile_boards([p.draw(s) for s in shown], [p.format_position(s) for s in shown]), markup=False)


def _check_plot_backend(path: Path) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise PuzzleError("--plot needs matplotlib: pip install 'puzzlespace[plot]'") from None
    if path.suffix.lower() not in (".png", ".svg"):
        raise PuzzleError(f"--plot writes PNG or SVG, not {path.suffix or 'a file without extension'}")


def _plot_depths(result, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.bar(range(len(result.depth_counts)), result.depth_counts, color="#4c72b0")
    ax.set_xlabel("moves from the goal")
    ax.set_ylabel("positions")
    ax.set_title(f"{result.puzzle}: {result.states:,} positions, God's number {result.max_depth}")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


@app.command()
def distance(
    puzzle: PuzzleArg,
    position: PositionArg,
    table: Path = typer.Option(..., "--table", help="the puzzle's tablebase (explore --save)"),
    goal: GoalOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print the exact distance of POSITION from the goal, read from a tablebase."""
    with _errors():
        p, state = _load(puzzle, position, goal)
        verdict = p.check(state)
        if not verdict.solvable:
            err.print(f"unsolvable: {verdict.reason}", markup=False)
            raise typer.Exit(1)
        d = _tablebase(table, p).distance(state)
    if as_json:
        _emit_json({"puzzle": p.spec, "position": list(state), "distance": d})
    else:
        out.print(str(d))


@app.command()
def generate(
    puzzle: PuzzleArg,
    count: int = typer.Option(1, "--count", min=1, help="how many positions"),
    depth: Optional[int] = typer.Option(None, "--depth", min=0, help="exactly this many moves from the goal"),
    table: Optional[Path] = typer.Option(None, "--table", help="tablebase, for drawing at a depth without a new BFS"),
    goal: GoalOpt = None,
    seed: Optional[int] = typer.Option(None, "--seed", help="random seed (repeatable output)"),
    as_json: Annotated[bool, typer.Option("--json", help="one JSON list")] = False,
) -> None:
    """Print uniformly random solvable positions (or ones exactly --depth moves from the goal)."""
    import numpy as np

    from .explore import generate as gen

    with _errors():
        p = load_puzzle(puzzle, goal)
        rng = np.random.default_rng(seed)
        if depth is None:
            states = [gen.random_solvable(p, rng) for _ in range(count)]
        else:
            tb = _tablebase(table, p) if table else None
            states = gen.random_at_depth(p, depth, count, rng, tablebase=tb)
    if as_json:
        _emit_json([list(s) for s in states])
    else:
        for s in states:
            out.print(p.format_position(s), markup=False)

pdb_app = typer.Typer(no_args_is_help=True, help="Build, list and verify cached pattern databases.")
app.add_typer(pdb_app, name="pdb")


@pdb_app.command("build")
def pdb_build(
    puzzle: PuzzleArg,
    heuristic: HeuristicOpt = "auto",
    goal: GoalOpt = None,
    cache_dir: CacheOpt = None,
    threads: Optional[int] = typer.Option(None, "--threads", min=1, help="worker threads (default: all cores)"),
    rebuild: bool = typer.Option(False, "--rebuild", help="build again even if cached"),
) -> None:
    """Build the pattern databases of a heuristic (default: the board's) into the cache."""
    from .pdb.store import pdb_dir
    from .solver import resolve_heuristic

    with _errors():
        _use_cache(cache_dir)
        p = load_puzzle(puzzle, goal)
        name = resolve_heuristic(p, heuristic)
        if not name.startswith("pdb:"):
            raise PuzzleError(f"{name!r} needs no pattern databases; name one with --heuristic pdb:SIZES")
        t0 = time.perf_counter()
        _search_problem(p, name, show=True, threads=threads, rebuild=rebuild)
    out.print(f"{p.spec} {name}: ready in {pdb_dir()} ({time.perf_counter() - t0:.1f} s)", markup=False)


@pdb_app.command("list")
def pdb_list(cache_dir: CacheOpt = None, as_json: JsonOpt = False) -> None:
    """List the cached pattern databases."""
    from .pdb.store import listing, pdb_dir

    _use_cache(cache_dir)
    found = listing()
    if as_json:
        _emit_json([dict(h or {}, path=str(path), problem=why) for path, h, why in found])
        return
    if not found:
        out.print(f"no pattern databases in {pdb_dir()}", markup=False)
        return
    out.print(f"pattern databases in {pdb_dir()}:", markup=False)
    for path, h, why in found:
        if h is None:
            out.print(f"  {path.name}: unreadable ({why})", markup=False)
            continue
        out.print(f"  {h.get('puzzle', '?')}  goal {' '.join(map(str, h.get('goal', [])))}  "
                  f"tiles {','.join(map(str, h.get('tiles', [])))}: {h.get('entries', 0):,} entries, "
                  f"{h.get('bits')} bits, max {h.get('max')}, {path.stat().st_size / 2**20:.1f} MiB, "
                  f"built in {h.get('seconds', 0):.1f} s", markup=False)


@pdb_app.command("verify")
def pdb_verify(cache_dir: CacheOpt = None) -> None:
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
            out.print(f"BAD      {path.name}: {exc}", markup=False)
    out.print(f"{len(files) - bad} of {len(files)} pattern databases in {pdb_dir()} are sound", markup=False)
    raise typer.Exit(1 if bad else 0)


class Format(str, Enum):
    csv = "csv"
    jsonl = "jsonl"


@app.command()
def batch(
    puzzle: PuzzleArg,
    file: Annotated[Path, typer.Argument(help="positions, one per line ('-' for stdin); Korf's 'id cells...' lines too")],
    goal: GoalOpt = None,
    heuristic: HeuristicOpt = "auto",
    method: Method = typer.Option(Method.auto, "--method", help="search method"),
    fmt: Format = typer.Option(Format.csv, "--format", help="csv (a header line, then one row per position) or jsonl"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="write the results here (default: stdout)"),
    threads: int = typer.Option(1, "--threads", min=1, help="positions solved at once"),
    time_limit: Optional[float] = typer.Option(None, "--time-limit", min=0.0, help="give up on a position after S seconds"),
    cache_dir: CacheOpt = None,
) -> None:
    """Solve every position in FILE optimally; one result per line (CSV or JSON lines), totals on stderr.

    Exit 0 when every position got an answer (solved or proven unsolvable), 3 when the
    time limit stopped some.
    """
    import csv

    from .batch import FIELDS, read_positions, solve_all

    with _errors():
        _use_cache(cache_dir)
        p = load_puzzle(puzzle, goal)
        try:
            lines = sys.stdin.read().splitlines() if str(file) == "-" else file.read_text().splitlines()
        except OSError as exc:
            raise PuzzleError(f"cannot read {str(file)!r}: {exc.strerror or exc}") from None
        items = read_positions(p, lines)
        if not items:
            raise PuzzleError(f"{str(file)!r} holds no positions")
        problem = _search_problem(p, heuristic, show=True) if _builds_patterns(p, method.value, heuristic) else None
        sink = open(output, "w", newline="") if output else sys.stdout
        writer = csv.DictWriter(sink, fieldnames=FIELDS) if fmt == Format.csv else None
        if writer:
            writer.writeheader()
        t0 = time.perf_counter()
        solved = stopped = nodes = 0
        search = 0.0
        for r in solve_all(p, items, method=method.value, heuristic=heuristic, threads=threads, time_limit=time_limit,
                           problem=problem):
            if writer:
                writer.writerow(r.row())
            else:
                sink.write(json.dumps(dict(r.row(), start=list(r.start), reason=r.reason)) + "\n")
            sink.flush()
            solved += r.status == "solved"
            stopped += r.status == "stopped"
            nodes += r.nodes
            search += r.seconds
        if output:
            sink.close()
    err.print(f"solved {solved} of {len(items)}: {nodes:,} nodes, {search:.2f} s searching, "
              f"{time.perf_counter() - t0:.2f} s wall on {threads} thread{'s' if threads > 1 else ''}", markup=False)
    raise typer.Exit(3 if stopped else 0)


DEMO = [
    ("sliding:3x3", "8 6 7/2 5 4/3 0 1"),  # the 8-puzzle's hardest positions (seed 003)
    ("sliding:4x3", "0 3 2 1/8 7 6 5/4 11 10 9"),  # an 11-puzzle antipode (seeds 000, 001)
    ("jump:4", "1 2 3 4 0"),  # reverse four pieces with steps and jumps of 2 (seed 002)
    ("flip:5x5", "WWBWW/WWBWW/BWBBW/WWWWW/WWWWW"),  # seed 004's 13-move problem
]


@app.command()
def demo() -> None:
    """Solve the seeds' showcase positions and print them."""
    table = Table(title="puzzlespace showcase: proven-optimal solutions")
    for col in ("puzzle", "position", "moves", "nodes", "seconds"):
        table.add_column(col, justify="right" if col in ("moves", "nodes", "seconds") else "left", no_wrap=True)
    with _errors():
        for spec, position in DEMO:
            p = load_puzzle(spec)
            goal = "0 4 3 2 1" if spec == "jump:4" else None
            if goal:
                p = p.with_goal(p.parse_goal(goal))
            t0 = time.perf_counter()
            sol = solve_position(p, p.parse_position(position))
            if spec == "sliding:3x3":
                _print_solution(sol, quiet=False)
                out.print()
            table.add_row(spec, p.format_position(sol.start), str(sol.length), f"{sol.nodes:,}",
                          f"{time.perf_counter() - t0:.2f}")
    out.print(table)


def _keep_scipy_out() -> None:
    """Make ``import scipy`` fail in this process (unless it is already imported).

    numba imports SciPy, when it is installed, as it first compiles or loads a function,
    only to offer linear algebra in compiled code, which puzzlespace does not use; that
    costs about 0.3 s and 17 MB on every command (measured on a 2-core machine).
    """
    sys.modules.setdefault("scipy", None)


def main() -> None:
    """Entry point of the ``puzzlespace`` script.

    Ends the process with ``os._exit`` once the output is flushed: the interpreter's
    teardown (numba and LLVM finalisers) would otherwise add about 0.3 s to every command.
    """
    _keep_scipy_out()
    code = 0
    try:
        app()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except KeyboardInterrupt:  # pragma: no cover - outside a command
        err.print("stopped: interrupted", markup=False)
        code = 130
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # pragma: no cover - the reader went away
        code = code or 1
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    main()
