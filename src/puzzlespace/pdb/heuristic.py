"""Pattern-database heuristics for token puzzles: partitions, symmetry views, loading.

A heuristic is named ``pdb:SIZES`` (e.g. ``pdb:7-8``, ``pdb:6-6-3``, ``pdb:6-6-6-6``: the
tiles, taken in the order of their goal nodes along the family's :meth:`pattern_order`,
cut into groups of those sizes) or
``pdb:TILES/TILES/...`` (explicit groups, e.g. ``pdb:1,2,3,4,5,6,7/8,9,10,11,12,13,14,15``).
Groups must be disjoint; together they may leave tiles out (the bound stays admissible,
only weaker). On puzzles whose moves slide a line of tiles (the multi-tile metric) each
group's table splits every move's cost among the groups (:mod:`puzzlespace.pdb.split`),
and :func:`~puzzlespace.families.mtm_search.line_pattern_problem` joins them to the
puzzle's other bounds.

Symmetry: every node permutation the family offers (:meth:`symmetries`, e.g. the
reflection of a square board about its main diagonal) that keeps the goal's blank in place
maps the goal onto itself once tiles are renamed by their goal nodes; the same tables
looked up on the mapped position give another admissible sum, and the search takes the
larger.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from math import perm
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..errors import PuzzleError, SearchStopped
from .. import resources
from ..resources import human
from .space import MAX_NODES, PatternSpace
from .split import SplitPatternSpace, pattern_spaces
from ..compiled import clock
from ..calibration import Estimate
from .store import BuildCost, build_cost, cached_state, obtain, pdb_dir

#: Largest total number of entries a default partition may have (about that many bytes).
DEFAULT_MAX_ENTRIES = 600_000_000


def parse_groups(text: str, goal: Sequence[int], order: Sequence[int] | None = None) -> list[list[int]]:
    """The groups named by the part of a ``pdb:`` heuristic after the colon.

    Group sizes take the tiles in the order of their goal nodes along ``order`` (a
    sequence of all nodes; default 0..n-1).
    """
    n = len(goal)
    text = text.strip()
    if re.fullmatch(r"[0-9]{1,6}(-[0-9]{1,6})*", text):
        sizes = [int(s) for s in text.split("-")]
        if 0 in sizes or sum(sizes) > n - 1:
            raise PuzzleError(f"pdb:{text}: group sizes must be positive and sum to at most {n - 1} (the tiles)")
        order, groups = [goal[v] for v in (order if order is not None else range(n)) if goal[v]], []
        for s in sizes:
            groups.append(order[:s])
            order = order[s:]
        return groups
    groups = []
    for part in text.split("/"):
        words = [w for w in re.split(r"[,\s]+", part.strip()) if w]
        if not words or not all(re.fullmatch(r"[0-9]{1,6}", w) for w in words):
            raise PuzzleError(f"pdb:{text}: write group sizes (e.g. pdb:6-6-3) or tile lists (e.g. pdb:1,2,3/4,5,6)")
        groups.append([int(w) for w in words])
    tiles = [t for g in groups for t in g]
    bad = [t for t in tiles if not 1 <= t < n]
    if bad:
        raise PuzzleError(f"pdb:{text}: tile {bad[0]} does not exist (tiles are 1..{n - 1})")
    if len(set(tiles)) != len(tiles):
        raise PuzzleError(f"pdb:{text}: the groups must be disjoint (a tile appears twice)")
    return groups


def default_sizes(n_tiles: int) -> list[int]:
    """Groups of at most 6 tiles (two near-equal groups up to 11 tiles): 15 -> 6-6-3, 24 -> 6-6-6-6."""
    if n_tiles <= 11:
        return [n_tiles - n_tiles // 2, n_tiles // 2]
    return [6] * (n_tiles // 6) + ([n_tiles % 6] if n_tiles % 6 else [])


def default_pdb(n_nodes: int) -> str | None:
    """The default partition of a board of ``n_nodes``, or None where pattern databases
    would be too large (their total entries above :data:`DEFAULT_MAX_ENTRIES`)."""
    if n_nodes > MAX_NODES:
        return None
    sizes = default_sizes(n_nodes - 1)
    if sum(perm(n_nodes, k) for k in sizes) > DEFAULT_MAX_ENTRIES:
        return None
    return "pdb:" + "-".join(map(str, sizes))


def views(goal: Sequence[int], symmetries: Sequence[Sequence[int]]) -> list[tuple[list[int], list[int]]]:
    """(node map, tile map) of each symmetry that keeps the goal's blank on its node."""
    home = {t: v for v, t in enumerate(goal)}
    out = []
    for sigma in symmetries:
        if sigma[home[0]] != home[0]:
            continue
        out.append((list(sigma), [goal[sigma[home[t]]] for t in range(len(goal))]))
    return out


@dataclass
class PatternPlan:
    """The pattern databases a ``pdb:`` heuristic needs, and the cost of building those the cache lacks.

    ``build`` pairs each space to build with the reason; ``costs`` are their
    :class:`~puzzlespace.pdb.store.BuildCost`. ``memory`` counts the databases held
    together for the search plus the largest build; ``disk`` the files built, and
    ``peak_disk`` that with the largest build's checkpoint besides (what the cache's disk
    must have room for).
    """

    puzzle: object
    heuristic: str
    groups: list[list[int]]
    spaces: list[PatternSpace | SplitPatternSpace]
    build: list[tuple[PatternSpace | SplitPatternSpace, str]]
    costs: list[BuildCost]
    threads: int
    cache_dir: str | Path | None = None

    @property
    def estimate(self) -> Estimate:
        """The builds' time on this machine (:mod:`puzzlespace.calibration`)."""
        return sum((c.estimate for c in self.costs), Estimate(0.0, 0.0))

    @property
    def entries(self) -> int:
        return sum(c.entries for c in self.costs)

    @property
    def memory(self) -> int:
        held = sum(s.placements for s in self.spaces)
        return held + max((c.memory for c in self.costs), default=0)

    @property
    def disk(self) -> int:
        return sum(c.file for c in self.costs)

    @property
    def peak_disk(self) -> int:
        return self.disk + max((c.checkpoint for c in self.costs), default=0)

    @property
    def peak_memory(self) -> int:
        """The process's peak while building: what it holds now plus :attr:`memory`."""
        return resources.current_rss() + self.memory

    def describe(self) -> str:
        """The builds and their cost, in a line."""
        tables = f"{len(self.build)} of {len(self.spaces)} table{'s' if len(self.spaces) != 1 else ''} to build"
        return (f"pattern databases {self.heuristic} for {self.puzzle.spec}: {tables}, {self.entries:,} entries: "
                f"{self.estimate} on this machine, {human(self.peak_memory)} of memory, {human(self.disk)} of disk"
                f" ({human(self.peak_disk)} while they build)")

    def check_fits(self, deadline: float | None, build_first: str) -> None:
        """Refuse (PuzzleError) builds that would not fit the memory available or the cache's
        disk, or not end before ``deadline`` (:func:`~puzzlespace.compiled.clock`) by the estimate;
        ``build_first`` says how to build them instead."""
        if not self.build:
            return
        avail = resources.available_memory()
        if self.memory > avail:
            raise PuzzleError(f"building {self.heuristic} needs about {human(self.peak_memory)} of memory but "
                              f"{human(avail)} is available; free memory, choose smaller groups (e.g. the default "
                              f"heuristic), or build it on a larger machine ({build_first}) and copy the cache")
        free = resources.free_disk(pdb_dir(self.cache_dir))
        if self.peak_disk > free:
            raise PuzzleError(f"building {self.heuristic} needs about {human(self.peak_disk)} of disk but {human(free)} "
                              f"is free in {str(pdb_dir(self.cache_dir))!r}; choose another --cache-dir (and build it "
                              f"first there: {build_first} --cache-dir DIR)")
        if deadline is not None and self.estimate.seconds > deadline - clock():
            raise PuzzleError(f"building {self.heuristic} takes {self.estimate}, more than the time limit leaves "
                              f"({max(0.0, deadline - clock()):.0f} s); build it first: {build_first}")

    def stop_at(self, deadline: float | None, resume: str) -> Callable[[], None] | None:
        """A ``stop`` callback for the builds that raises SearchStopped once ``deadline``
        (:func:`~puzzlespace.compiled.clock`) has passed; ``resume`` is the command that finishes the build."""
        if deadline is None:
            return None

        def stop() -> None:
            if clock() > deadline:
                raise SearchStopped(f"the time limit was reached while building {self.heuristic}; the build "
                                    f"resumes where it stopped: {resume}")

        return stop


def pattern_plan(puzzle, heuristic: str, *, cache_dir: str | Path | None = None, threads: int | None = None,
                 rebuild: bool = False) -> PatternPlan:
    """What :func:`pattern_problem` will read and build for ``heuristic`` (a ``pdb:`` name),
    and what building costs (probing this machine once, :mod:`puzzlespace.calibration`)."""
    if puzzle.n_cells > MAX_NODES:
        raise PuzzleError(f"pattern databases are limited to {MAX_NODES} cells; {puzzle.spec} has {puzzle.n_cells}")
    threads = threads or os.cpu_count() or 1
    groups = parse_groups(heuristic.partition(":")[2], puzzle.goal, puzzle.pattern_order())
    spaces = [s for g in groups for s in pattern_spaces(puzzle, g)]
    build = []
    for space in spaces:
        why = "rebuild requested" if rebuild else cached_state(puzzle.identity, puzzle.goal, space, cache_dir)
        if why:
            build.append((space, why))
    costs = [build_cost(puzzle, space, threads) for space, _ in build]
    return PatternPlan(puzzle, heuristic, groups, spaces, build, costs, threads, cache_dir)


def build_command(puzzle, heuristic: str) -> str:
    """The command that builds ``heuristic``'s databases of ``puzzle`` ahead (its goal
    named unless it is the family's)."""
    import shlex

    words = ["puzzlespace", "pdb", "build", puzzle.spec, "--heuristic", heuristic]
    if tuple(puzzle.goal) != tuple(range(1, puzzle.n_cells)) + (0,):
        words += ["--goal", puzzle.format_position(puzzle.goal)]
    return " ".join(shlex.quote(w) for w in words)


def pattern_problem(puzzle, heuristic: str, *, cache_dir: str | Path | None = None, threads: int | None = None,
                    max_memory: int | None = None, progress=None, notify: Callable[[str], None] | None = None,
                    rebuild: bool = False, stop: Callable[[], None] | None = None, plan: PatternPlan | None = None,
                    deadline: float | None = None, build_first: str | None = None):
    """The :class:`~puzzlespace.pdb.search.PatternSearchProblem` of ``puzzle`` for a
    ``pdb:`` heuristic, its databases read from the cache or built there.

    ``plan``: the :func:`pattern_plan` already made. Builds that would not fit memory or
    disk, or (by the estimate) end after ``deadline`` (:func:`~puzzlespace.compiled.clock`), are refused
    with PuzzleError, and a build still running at ``deadline`` is stopped with
    SearchStopped, its checkpoint kept (the same call, or ``pdb build``, resumes it);
    ``build_first`` says how to build them instead (default :func:`build_command`'s). ``progress(entries built, entries to
    build)`` follows all the builds together; ``stop`` and ``notify`` are passed to
    :func:`~puzzlespace.pdb.store.obtain`.
    """
    from .search import PatternSearchProblem

    plan = plan or pattern_plan(puzzle, heuristic, cache_dir=cache_dir, threads=threads, rebuild=rebuild)
    if plan.build:
        build_first = build_first or build_command(puzzle, heuristic)
        plan.check_fits(deadline, build_first)
        stop = _in_turn(stop, plan.stop_at(deadline, build_first))
    pdb = np.empty(sum(s.placements for s in plan.spaces), dtype=np.uint8)  # all tables, read in place
    total, done, off = plan.entries, 0, 0
    building = {id(space) for space, _ in plan.build}
    for space in plan.spaces:
        report = progress and (lambda d, t, base=done: progress(base + d, total))
        obtain(puzzle.identity, puzzle.goal, space, root=cache_dir, threads=plan.threads, max_memory=max_memory,
               progress=report, notify=notify, rebuild=rebuild and id(space) in building,
               out=pdb[off : off + space.placements], stop=stop)
        if id(space) in building:
            done += space.placements
        off += space.placements
    if isinstance(plan.spaces[0], SplitPatternSpace):  # line moves: the family's own search reads the tables
        return puzzle.split_pattern_problem(plan.spaces, pdb)
    return PatternSearchProblem.build(puzzle.graph.neighbors, puzzle.distance_table(), plan.groups, pdb,
                                      views(puzzle.goal, puzzle.symmetries()), puzzle.graph.is_bipartite)


def _in_turn(*stops: Callable[[], None] | None) -> Callable[[], None] | None:
    """One ``stop`` callback that calls each of ``stops`` given (None: none given)."""
    given = [f for f in stops if f is not None]
    if len(given) <= 1:
        return given[0] if given else None
    return lambda: [f() for f in given] and None
