"""The game behind ``puzzlespace serve``, free of any web framework: puzzles opened by name
or from a graph file's text, positions described for a page (the board as SVG, the legal
moves with their labels and marks), scrambles, and distances and hints from optimal
solutions. :mod:`puzzlespace.web` serves it over HTTP.

Every answer is a JSON-ready dict. Positions travel as their text form, so a page holds
no state the server needs. Bad input raises :class:`~puzzlespace.errors.PuzzleError`
(:class:`UnknownGame` for a game this server has not opened). Pattern databases are read
or built in a background thread, one per game, that :meth:`Games.prepare` polls;
:meth:`Games.stop` ends every search and build.
"""

from __future__ import annotations

import hashlib
import logging
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Iterator

import numpy as np

from . import render
from .cache import tablebase_path
from .errors import PuzzleError, SearchStopped, Undecided
from .families.base import Puzzle, State
from .registry import load_puzzle
from .solver import Plan, Solution, plan_solving, solve

#: Seconds an optimal solve may take before the answer says the distance is not known.
TIME_LIMIT = 10.0
#: Optimal solutions of a position the page is sent at most (it is told how many there are).
OPTIMAL_SHOWN = 50
#: Pattern databases estimated to take longer than this many seconds to build are not
#: built by the server (the classic bound guides the search instead).
BUILD_LIMIT = 120.0
#: The bound used where the default pattern databases are not built.
CLASSIC_BOUND = "linear-conflict"
#: Weight of the quick search that gives a hint when the optimal one runs out of time.
FALLBACK_WEIGHT = Fraction(2)
#: Positions whose distance and next optimal move a game remembers (from the solutions it found).
KNOWN_POSITIONS = 200_000
#: Games (puzzles) kept open at once; the least recently used one is closed beyond it.
MAX_GAMES = 16
#: The deepest scramble asked for: a bound checked before any work (a tablebase's own
#: deepest layer, far below it, refuses the rest).
MAX_DEPTH = 1_000_000
#: Scramble seeds are whole numbers from 0 to this (what numpy's generators take, and no larger).
MAX_SEED = 2**64 - 1
#: The arrow key (a page's ``KeyboardEvent.key``) and arrow of each way a piece goes
#: (:meth:`~puzzlespace.families.base.Puzzle.move_way`): a page's arrow keys move pieces their way.
ARROWS = {"up": ("ArrowUp", "↑"), "down": ("ArrowDown", "↓"), "left": ("ArrowLeft", "←"),
          "right": ("ArrowRight", "→")}


log = logging.getLogger("puzzlespace.play")


class UnknownGame(PuzzleError):
    """A game this server has not opened (or has closed since)."""


class Building(Exception):
    """The game's pattern databases are being built in the background: ask again later.
    ``status`` is the build's progress (:meth:`Build.status`)."""

    def __init__(self, status: dict):
        super().__init__(f"the pattern databases are {status['message']} left: ask again then")
        self.status = status


@dataclass
class Build:
    """A game's pattern databases read or built in a background ``thread``: the estimate
    (seconds), its start (``time.monotonic``), the share of entries built so far and, once
    the thread has ended, its ``error`` (None: the game's plan is ready)."""

    estimate: float
    started: float = field(default_factory=time.monotonic)
    done: float = 0.0
    error: BaseException | None = None
    thread: threading.Thread | None = None

    def progress(self, built: int, total: int) -> None:
        self.done = built / total if total else 1.0

    def status(self) -> dict:
        """The progress for a page: the estimate, the seconds so far, the share done and the
        seconds left (from the rate so far once some is done, else from the estimate), and
        ``message``: ``building, N s`` (N: those seconds left, at least 1)."""
        elapsed = time.monotonic() - self.started
        left = elapsed * (1 - self.done) / self.done if self.done > 0 else self.estimate - elapsed
        left = max(1, round(left))
        return {"estimate": round(self.estimate, 1), "elapsed": round(elapsed, 1), "done": round(self.done, 3),
                "left": left, "message": f"building, {left} s"}


@dataclass
class Game:
    """One puzzle being played: its plan for solving (pattern databases read once, by a
    :class:`Build` that :meth:`Games.prepare` or the first solve starts; ``table``: the
    cached tablebase file the plan was made with, :func:`_cached_table`) and the distances
    its solutions proved."""

    key: str
    puzzle: Puzzle
    plan: Plan
    table: tuple[int, int] | None = None
    note: str = ""
    build: dict | None = None
    job: Build | None = None
    known: dict[State, tuple[int, int | None]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def learn(self, sol: Solution) -> None:
        """Remember the distance and next move of every position on an optimal solution."""
        if len(self.known) + len(sol.path) > KNOWN_POSITIONS:
            self.known.clear()
        for k, state in enumerate(sol.path):
            self.known[tuple(state)] = (sol.length - k, sol.moves[k] if k < sol.length else None)


class Games:
    """The open games of one server, by key (the puzzle's name, or ``graph:`` and a hash
    of the uploaded file). Safe to call from many threads."""

    def __init__(self, time_limit: float = TIME_LIMIT, build_limit: float = BUILD_LIMIT):
        self.time_limit, self.build_limit = time_limit, build_limit
        self._games: dict[str, Game] = {}
        # reentrant: stop() runs in a signal handler, maybe while the main thread holds it
        self._lock = threading.RLock()
        self._graphs = tempfile.TemporaryDirectory(prefix="puzzlespace-graphs-")
        self._stopping = threading.Event()
        self._running: set[threading.Event] = set()
        self.solving = 0
        self.cancelled = 0

    def stop(self) -> None:
        """Stop every search running (within a tenth of a second) and every build (at its
        next progress report), both with SearchStopped, and refuse new ones: the server is
        stopping. Safe to call from a signal handler."""
        self._stopping.set()
        with self._lock:
            for cancel in self._running:
                cancel.set()

    def close(self) -> None:
        self.stop()
        self._graphs.cleanup()

    def _check_stopping(self) -> None:
        """SearchStopped once :meth:`stop` has been called (a build's ``stop`` callback)."""
        if self._stopping.is_set():
            raise SearchStopped("the server is stopping")

    # ----- opening ----------------------------------------------------------------------
    def open(self, name: str | None = None, graph: str | None = None, filename: str = "graph.toml",
             goal: str | None = None) -> dict:
        """Open a puzzle by ``name`` (any name ``load_puzzle`` reads except ``graph:FILE``:
        a page does not name the server's files) or from a graph file's text; describe it,
        how its moves are made (``help``) and its goal. A game open already is planned
        again when its tablebase has been saved, replaced or removed in the cache since."""
        if (name is None) == (graph is None):
            raise PuzzleError("give the puzzle's 'name' or a graph file's text as 'graph'")
        if graph is not None:
            suffix = ".json" if str(filename).lower().endswith(".json") else ".toml"
            digest = hashlib.sha256(graph.encode("utf-8", "surrogatepass")).hexdigest()[:16]
            path = Path(self._graphs.name) / f"{digest}{suffix}"
            path.write_text(graph, encoding="utf-8", errors="surrogatepass")
            puzzle, key = load_puzzle(f"graph:{path}", goal), f"graph:{digest}{suffix}"
        else:
            if str(name).strip().lower().startswith("graph:"):
                raise PuzzleError("a graph puzzle is opened from its file's text ('graph'), not by a path")
            puzzle = load_puzzle(str(name), goal)
            key = puzzle.spec
        if goal is not None:
            key += "|" + puzzle.format_position(puzzle.goal)
        game, table = self._games.get(key), _cached_table(puzzle)
        if game is None or game.table != table:
            game = self._new_game(key, puzzle, table)
        return {"game": key, "puzzle": puzzle.spec, "title": getattr(puzzle, "title", "") or puzzle.spec,
                "help": puzzle.how_to_move,
                "method": game.plan.method, "heuristic": game.plan.heuristic.name if game.plan.heuristic else "",
                "note": game.note, "build": game.build, "goal": self.describe(key, None)}

    def _new_game(self, key: str, puzzle: Puzzle, table: tuple[int, int] | None) -> Game:
        """A game planned now (``table``: the cached tablebase before planning), kept unless
        another thread has kept one planned with the same tablebase meanwhile."""
        plan, note, build = plan_solving(puzzle), "", None
        if plan.builds_patterns:
            from .pdb.heuristic import pattern_plan

            needs = pattern_plan(puzzle, plan.heuristic.name)
            if needs.build and needs.estimate.seconds > self.build_limit:
                note = (f"the pattern databases {plan.heuristic.name} would take {needs.estimate} to build, "
                        f"so the server searches with {CLASSIC_BOUND}; build them once with "
                        f"'puzzlespace pdb build {puzzle.spec}'")
                plan = plan_solving(puzzle, heuristic=CLASSIC_BOUND)
            elif needs.build:
                build = {"tables": len(needs.build), "entries": needs.entries, "seconds": round(needs.estimate.seconds, 1),
                         "estimate": str(needs.estimate), "memory": needs.peak_memory, "disk": needs.disk,
                         "heuristic": plan.heuristic.name}
        game = Game(key, puzzle, plan, table, note, build)
        with self._lock:
            kept = self._games.get(key)
            if kept is None or kept.table != table:
                self._games[key] = kept = game
            game = kept
            while len(self._games) > MAX_GAMES:
                self._games.pop(next(iter(self._games)))
        return game

    def game(self, key: str) -> Game:
        with self._lock:
            game = self._games.get(str(key))
            if game is None:
                raise UnknownGame(f"no open game {str(key)[:80]!r}: open the puzzle again")
            self._games[game.key] = self._games.pop(game.key)  # most recently used last
            return game

    def prepare(self, key: str, wait: float | None = None) -> dict:
        """Read or build the game's pattern databases now (the first solve does it otherwise),
        waiting at most ``wait`` seconds (None: until they are ready). ``ready``: whether they
        are; while they build, ``build`` is the progress (:meth:`Build.status`). A build that
        failed raises its error on the next call, and the call after starts it again."""
        game = self.game(key)
        t0 = time.perf_counter()
        try:
            self._ready(game, wait)
        except Building as exc:
            return {"game": key, "ready": False, "build": exc.status}
        return {"game": key, "ready": True, "seconds": round(time.perf_counter() - t0, 3)}

    def _ready(self, game: Game, wait: float | None) -> Plan:
        """The game's plan ready to search. Pattern databases are read or built by one
        background :class:`Build` per game, waited for at most ``wait`` seconds (None: to
        the end); Building while it runs; its error, once, when it failed."""
        with game.lock:
            if game.plan.problem is not None or game.plan.heuristic is None:
                return game.plan
            if not game.plan.builds_patterns:  # a classic bound: made at once
                game.plan = game.plan.ready()
                return game.plan
            self._check_stopping()
            job = game.job = game.job or self._start_build(game)
        job.thread.join(wait)
        with game.lock:
            if job.thread.is_alive():
                raise Building(job.status())
            if game.job is job:
                game.job = None
            if job.error is not None:
                raise job.error
            return game.plan

    def _start_build(self, game: Game) -> Build:
        """A :class:`Build` of the game's pattern databases, started; it readies the game's
        plan, and stops with SearchStopped once :meth:`stop` is called."""
        job = Build(game.build["seconds"] if game.build else 0.0)

        def run() -> None:
            try:
                plan = game.plan.ready(stop=self._check_stopping, progress=job.progress)
            except (PuzzleError, SearchStopped) as exc:
                job.error = exc
            except Exception as exc:  # reported to the page on its next poll, and to the server's log
                log.exception("building the pattern databases of %s failed", game.puzzle.spec)
                job.error = PuzzleError(f"building the pattern databases failed: {type(exc).__name__}: {exc}")
            else:
                with game.lock:
                    game.plan, game.build = plan, None

        job.thread = threading.Thread(target=run, name=f"puzzlespace build {game.key}", daemon=True)
        job.thread.start()
        return job

    # ----- positions --------------------------------------------------------------------
    def position(self, game: Game, text: str | None) -> State:
        if text is None:
            return game.puzzle.goal
        if not isinstance(text, str):
            raise PuzzleError("'position' must be the position's text form")
        return game.puzzle.parse_position(text)

    def describe(self, key: str, text: str | None) -> dict:
        """The position's board (SVG: spots with ids ``s0``, ``s1``, ..., and the moves'
        handles ``h<move>``), its text forms, whether it is the goal and can reach it, what
        is known of its distance, and each legal move as :func:`_move` describes it."""
        game = self.game(key)
        puzzle = game.puzzle
        state = self.position(game, text)
        verdict = _verdict(puzzle, state)
        known = game.known.get(tuple(state))
        figure = puzzle.figure(state)
        handles = {m: h for m in puzzle.moves(state) if (h := puzzle.move_handle(state, m)) is not None}
        return {
            "game": key, "position": puzzle.format_position(state), "picture": puzzle.draw(state),
            "svg": render.svg(figure, ids=True, handles=handles), "goal": state == puzzle.goal,
            "solvable": verdict[0], "reason": verdict[1], "distance": None if known is None else known[0],
            "moves": [_move(puzzle, figure, state, m) for m in puzzle.moves(state)],
        }

    def move(self, key: str, text: str | None, move) -> dict:
        """The description of the position after ``move`` (its code, or one of its labels)."""
        game = self.game(key)
        state = self.position(game, text)
        code = _move_code(game.puzzle, state, move)
        return self.describe(key, game.puzzle.format_position(game.puzzle.apply(state, code)))

    def scramble(self, key: str, depth: int | None = None, seed: int | None = None) -> dict:
        """A uniformly random position that can reach the goal, or with ``depth`` (0 to
        :data:`MAX_DEPTH`) one exactly that many moves from it (needs the puzzle's tablebase
        in the cache); ``seed``: 0 to :data:`MAX_SEED`, None for a fresh one."""
        from .explore.generate import random_at_depth, random_solvable

        game = self.game(key)
        if seed is not None:
            whole_number("seed", seed, 0, MAX_SEED)
        rng = np.random.default_rng(seed)
        if depth is None:
            state = random_solvable(game.puzzle, rng)
        else:
            whole_number("depth", depth, 0, MAX_DEPTH)
            if game.plan.method != "table":
                raise PuzzleError(f"a scramble at an exact depth needs the tablebase of {game.puzzle.spec}: run "
                                  f"'puzzlespace explore {game.puzzle.spec} --save cache' and open it again")
            state = random_at_depth(game.puzzle, depth, 1, rng, tablebase=game.plan.table)[0]
        return self.describe(key, game.puzzle.format_position(state))

    # ----- solving ----------------------------------------------------------------------
    def solve(self, key: str, text: str | None, cancel: threading.Event | None = None) -> dict:
        """The distance to the goal and the rest of an optimal solution (its first move is
        the hint), within the time limit. Past it, ``optimal`` is false: ``lower_bound`` is
        what the search proved and, where a quick weighted search finds one, the moves are
        a solution not proven shortest. Unsolvable when the goal cannot be reached;
        SearchStopped (``cancelled``) when ``cancel`` is set first or the server stops.
        Building while the game's pattern databases are built (reading them, it waits)."""
        game = self.game(key)
        state = self.position(game, text)
        known = self._known_answer(game, state)
        if known is not None:
            return known
        cancel = cancel or threading.Event()
        with self._searching(cancel):
            return self._solve(game, state, cancel)

    def optimal(self, key: str, text: str | None, cancel: threading.Event | None = None) -> dict:
        """Every optimal solution of the position: how many (``count``, of ``length``
        moves, found by ``method``) and the first :data:`OPTIMAL_SHOWN` in the order of
        their moves (``solutions``: each a list of moves, as the answer's ``moves``),
        counted with the game's plan (:func:`~puzzlespace.optimal.every_optimal`) within
        the time limit. SearchStopped past it, or when ``cancel`` is set first or the
        server stops; Unsolvable; Building while the game's databases build."""
        from .optimal import every_optimal

        game = self.game(key)
        state = self.position(game, text)
        cancel = cancel or threading.Event()
        with self._searching(cancel):
            plan = self._ready(game, 0 if game.build else None)
            counted, listed = every_optimal(game.puzzle, state, cap=OPTIMAL_SHOWN, plan=plan,
                                            time_limit=self.time_limit, cancel=cancel)
        figure = game.puzzle.figure(state)
        return {"game": game.key, "position": game.puzzle.format_position(state), "count": counted.count,
                "length": counted.length, "method": counted.method,
                "solutions": [[_move(game.puzzle, figure, s, m) for s, m in zip(sol.path, sol.moves)]
                              for sol in listed]}

    @contextmanager
    def _searching(self, cancel: threading.Event) -> Iterator[None]:
        """A search of the server's under way: counted in the status, stopped (``cancel``
        set) as the server stops, its cancellation counted."""
        with self._lock:
            self._check_stopping()
            self.solving += 1
            self._running.add(cancel)
        try:
            yield
        except SearchStopped:
            if cancel.is_set():
                with self._lock:
                    self.cancelled += 1
            raise
        finally:
            with self._lock:
                self.solving -= 1
                self._running.discard(cancel)

    def _solve(self, game: Game, state: State, cancel: threading.Event) -> dict:
        plan = self._ready(game, 0 if game.build else None)
        t0 = time.perf_counter()
        try:
            sol = solve(game.puzzle, state, plan=plan, time_limit=self.time_limit, cancel=cancel)
        except SearchStopped as exc:
            if cancel.is_set():
                raise
            quick = self._quick(game, state, plan, cancel) if plan.method == "ida" else None
            return self._unknown(game, state, exc.lower_bound, quick, t0)
        game.learn(sol)
        return self._answer(game, sol.path, sol.moves, True, sol.length, sol.seconds)  # the search's own time

    def _quick(self, game: Game, state: State, plan: Plan, cancel: threading.Event) -> Solution | None:
        """A solution at most :data:`FALLBACK_WEIGHT` times the optimum, or None past the time limit."""
        try:
            return solve(game.puzzle, state, plan=plan, time_limit=self.time_limit, cancel=cancel,
                         weight=FALLBACK_WEIGHT)
        except SearchStopped:
            if cancel.is_set():
                raise
            return None

    def _known_answer(self, game: Game, state: State) -> dict | None:
        """The answer from the positions learnt, or None where the chain to the goal is
        not known (or was forgotten by another thread meanwhile)."""
        path, moves = [state], []
        while (step := game.known.get(tuple(path[-1]))) is not None and step[1] is not None:
            moves.append(step[1])
            path.append(game.puzzle.apply(path[-1], moves[-1]))
        if step is None:
            return None
        return self._answer(game, path, moves, True, len(moves), 0.0)

    def _unknown(self, game: Game, state: State, lower: int, quick: Solution | None, t0: float) -> dict:
        if quick is not None:
            sol = replace(quick, lower_bound=max(lower, quick.proven_lower_bound))
            if sol.optimal:
                game.learn(sol)
            return self._answer(game, sol.path, sol.moves, sol.optimal, sol.proven_lower_bound,
                                time.perf_counter() - t0)
        return self._answer(game, [state], [], False, lower, time.perf_counter() - t0)

    def _answer(self, game: Game, path, moves, optimal: bool, lower: int, seconds: float) -> dict:
        puzzle = game.puzzle
        solved = bool(path) and path[-1] == puzzle.goal
        figure = puzzle.figure(path[0])  # its places serve every position's marks (the figure contract)
        steps = [_move(puzzle, figure, s, m) for s, m in zip(path, moves if solved else moves[:1])]
        return {
            "game": game.key, "position": puzzle.format_position(path[0]),
            "distance": len(moves) if optimal and solved else None, "optimal": optimal and solved,
            "lower_bound": lower, "time_limit": self.time_limit, "seconds": round(seconds, 4),
            "method": game.plan.method, "heuristic": game.plan.heuristic.name if game.plan.heuristic else "",
            "hint": steps[0] if steps else None,
            "moves": steps if solved else [],
            "path": [puzzle.format_position(s) for s in path] if solved else [],
        }

    def status(self) -> dict:
        with self._lock:
            return {"solving": self.solving, "cancelled": self.cancelled, "games": list(self._games),
                    "time_limit": self.time_limit,
                    "building": {key: g.job.status() for key, g in self._games.items()
                                 if g.job is not None and g.job.thread.is_alive()}}


def whole_number(name: str, value, low: int, high: int) -> int:
    """``value`` when it is a whole number (a bool is not) from ``low`` to ``high``;
    PuzzleError naming ``name`` and the range otherwise."""
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise PuzzleError(f"'{name}' must be a whole number from {low:,} to {high:,}")
    return value


def _cached_table(puzzle: Puzzle) -> tuple[int, int] | None:
    """The modification time (ns) and size of the puzzle's tablebase file in the cache, or
    None when there is none: a game's plan is made again when they change."""
    try:
        stat = tablebase_path(puzzle).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _verdict(puzzle: Puzzle, state: State) -> tuple[bool | None, str]:
    """Whether ``state`` can reach the goal (None: undecided) and the reason in a line."""
    try:
        v = puzzle.check(state)
    except Undecided as exc:
        return None, str(exc)
    return v.solvable, v.summary or v.reason


def _move(puzzle: Puzzle, figure, state: State, move: int) -> dict:
    """A legal move as the page uses it: its code, labels (every notation), the spot a
    click on which makes it (``from``, or None), the id of the board's element to click
    (``target``: that spot's, or the move's handle's; None where neither is drawn), the
    arrow key that makes it (``key``, or None: :func:`_arrow`), the move in words (``say``,
    with its key's arrow) and its mark (SVG drawn on ``figure``, a figure of the puzzle:
    its places are every position's)."""
    labels = _labels(puzzle, state, move)
    marks = puzzle.move_marks(state, move)
    spot = next((m.spots[0] for m in marks if m.kind == "move"), None)
    target = f"s{spot}" if spot is not None else f"h{move}" if puzzle.move_handle(state, move) else None
    key, arrow = _arrow(puzzle, state, move)
    return {"move": move, "label": next(iter(labels.values()), str(move)), "labels": labels, "from": spot,
            "target": target, "key": key, "say": puzzle.say_move(state, move) + (f" ({arrow})" if arrow else ""),
            "mark": "".join(render.mark_svg(figure, m) for m in marks)}


def _arrow(puzzle: Puzzle, state: State, move: int) -> tuple[str | None, str]:
    """The arrow key and arrow (:data:`ARROWS`) of the way ``move`` goes, where it is the
    first legal move that goes that way (a key makes one move: on a multi-tile board the
    one of the tile next to the blank, listed first); else (None, "")."""
    way = puzzle.move_way(state, move)
    first = next((m for m in puzzle.moves(state) if puzzle.move_way(state, m) == way), None)
    return ARROWS.get(way, (None, "")) if first == move else (None, "")


def _labels(puzzle: Puzzle, state: State, move: int) -> dict[str, str]:
    """The legal ``move`` in every notation of the puzzle, by the notation's name."""
    after = puzzle.apply(state, move)
    return {name: str(values[0]) for name, values in puzzle.move_notations([state, after], [move]).items()}


def _move_code(puzzle: Puzzle, state: State, move) -> int:
    """The legal move ``move`` names: its code, or one of its labels."""
    legal = list(puzzle.moves(state))
    if isinstance(move, int) and not isinstance(move, bool):
        if move in legal:
            return move
    elif isinstance(move, str):
        for m in legal:
            if move in _labels(puzzle, state, m).values():
                return m
    else:
        raise PuzzleError("'move' must be a move's code or label")
    raise PuzzleError(f"move {str(move)[:20]!r} is not legal in {puzzle.format_position(state)}")


__all__ = ["ARROWS", "BUILD_LIMIT", "MAX_DEPTH", "MAX_SEED", "TIME_LIMIT", "Build", "Building", "Game", "Games",
           "UnknownGame", "whole_number"]
