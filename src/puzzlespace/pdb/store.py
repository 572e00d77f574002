"""Pattern database files: one per tile group, in the cache directory, built on demand.

File layout: the magic line ``PUZZLESPACE-PDB 1\\n``, an 8-byte little-endian header
length, a JSON header, then the entries. Header: ``puzzle`` (its identity), ``goal``, ``tiles``
(the group, in rank order), ``nodes``, ``graph`` (sha256 of the adjacency lists),
``entries`` (n!/(n-k)!), ``bits`` (4 when every value fits, else 8), ``max``,
``scheme``, ``version``, ``sha256`` of the data, ``seconds`` (build time). With 4 bits,
entry ``i`` is the low nibble of byte ``i // 2`` when ``i`` is even, the high one when
odd. In memory entries are always one byte.

Cache directory: ``--cache-dir``, else ``$PUZZLESPACE_CACHE``, else the XDG cache
(``~/.cache/puzzlespace``); databases go in its ``pdb/`` folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from math import perm
from typing import Callable, Sequence

import numpy as np

from .. import datafile
from ..explore import checkpoint as cp
from .._version import __version__
from ..errors import DamagedFile, PuzzleError
from ..bits import table_bytes
from ..cache import cache_dir, file_stem
from ..calibration import Estimate, estimate, rate
from ..compiled import watch
from .space import PatternSpace
from .split import SplitPatternSpace, pattern_spaces

MAGIC = b"PUZZLESPACE-PDB 1\n"
SUFFIX = ".pspdb"


def graph_digest(neighbors: Sequence[Sequence[int]]) -> str:
    return hashlib.sha256(json.dumps([sorted(a) for a in neighbors]).encode()).hexdigest()[:16]


def pdb_dir(root: str | Path | None = None) -> Path:
    """The folder holding pattern databases under ``root`` (default: the cache directory)."""
    return Path(root) / "pdb" if root is not None else cache_dir() / "pdb"


def pdb_path(spec: str, goal: Sequence[int], tiles: Sequence[int], root: str | Path | None = None,
             kind: str = "") -> Path:
    """File of the database of ``tiles`` for puzzle ``spec`` with ``goal``; ``kind`` names
    the tables of one group that are not the single-tile one (``split``, ``projection``)."""
    return pdb_dir(root) / f"{file_stem(spec, goal)}-t{'.'.join(map(str, tiles))}{'-' + kind if kind else ''}{SUFFIX}"


@dataclass
class PatternDatabase:
    """The table of one group: ``table[placement rank]`` = fewest moves of the group's tiles."""

    header: dict
    table: np.ndarray
    path: Path | None = None

    @property
    def tiles(self) -> tuple[int, ...]:
        return tuple(self.header["tiles"])


def _expected(spec: str, goal: Sequence[int], space: PatternSpace) -> dict:
    return {"puzzle": spec, "goal": list(goal), "tiles": list(space.tiles), "nodes": space.n,
            "graph": graph_digest(space.neighbors), "entries": space.placements, "scheme": space.scheme}


def save(path: Path, header: dict, table: np.ndarray) -> None:
    """Write ``table`` (uint8 per entry) with ``header``, packed to 4 bits when it fits."""
    top = int(table.max()) if len(table) else 0
    if top <= 15:
        padded = np.zeros(len(table) + len(table) % 2, dtype=np.uint8)
        padded[: len(table)] = table
        data = padded[0::2] | (padded[1::2] << 4)
        bits = 4
    else:
        data, bits = table, 8
    header = dict(header, bits=bits, max=top, version=__version__, sha256=datafile.digest(data.data))
    datafile.write(path, MAGIC, header, data)


def read(path: Path, expect: dict | None = None, out: np.ndarray | None = None) -> PatternDatabase:
    """Read and verify a database file; ``expect`` lists header values it must have.

    ``out`` (uint8, one per entry), if given, receives the table (read straight into it,
    no copy: this is how a search gathers its groups' tables in one array).

    Raises PuzzleError naming the file and what is wrong (unreadable, not a database,
    mismatched, truncated, corrupt).
    """
    name = str(path)
    with datafile.open_data(path, MAGIC, "pattern database") as (header, f):
        for key, want in (expect or {}).items():
            if header.get(key) != want:
                raise PuzzleError(f"pattern database {name!r} is for {key} {header.get(key)!r}, not {want!r}")
        where = f"pattern database {name!r}"
        entries = datafile.require_int(header, "entries", 0, MAX_ENTRIES, where)
        bits = datafile.require_int(header, "bits", 4, 8, where)
        top = datafile.require_int(header, "max", 0, 254, where)
        if bits not in (4, 8) or (bits == 4 and top > 15):
            raise DamagedFile(f"{where} has a corrupt header: 'bits' is {bits} with 'max' {top}")
        size = (entries + 1) // 2 if bits == 4 else entries
        direct = out is not None and bits == 8 and len(out) == entries
        data = out if direct else np.empty(size, dtype=np.uint8)
        got = f.readinto(memoryview(data))
        extra = f.read(1)
    if got != size or extra:
        raise DamagedFile(f"{where} is truncated or overlong "
                          f"({max(got, 0) + len(extra):,}{'+' if extra else ''} of {size:,} bytes)")
    if datafile.digest(data.data) != header.get("sha256"):
        raise DamagedFile(f"{where} is corrupt (checksum mismatch)")
    if bits == 4:
        table = out if out is not None else np.empty(entries, dtype=np.uint8)
        table[0::2] = data[: (entries + 1) // 2] & 15
        table[1::2] = data[: entries // 2] >> 4
    elif out is not None and not direct:
        out[:] = data
        table = out
    else:
        table = data
    if entries and int(table.max()) != top:
        raise DamagedFile(f"pattern database {name!r} is corrupt (its entries do not match its header)")
    return PatternDatabase(header, table, path)


#: The most entries a database file may declare (more than any board of 64 nodes needs in memory).
MAX_ENTRIES = 1 << 36
#: A build in progress writes a checkpoint at the end of a layer once this many seconds have passed since the last.
CHECKPOINT_SECONDS = 30.0
#: The ``format`` of a build checkpoint's manifest.
BUILD_FORMAT = "puzzlespace-pdb-build/1"



@dataclass
class BuildCost:
    """What building one database takes: ``estimate``, its time on this machine
    (:mod:`puzzlespace.calibration`); ``memory``, the peak bytes of the build itself;
    ``file``, the bytes of its file (an entry a byte; half that where every distance fits
    in 4 bits); ``checkpoint``, the bytes of the checkpoint it keeps while it builds."""

    tiles: tuple[int, ...]
    entries: int
    estimate: Estimate
    memory: int
    file: int
    checkpoint: int


def build_cost(puzzle, space: PatternSpace | SplitPatternSpace, threads: int) -> BuildCost:
    """The cost of building ``space``'s database (a group of ``puzzle``'s tiles) with
    ``threads`` threads (a split space builds on one, a byte per state, no checkpoint)."""
    from ..explore.engine import plan

    split = isinstance(space, SplitPatternSpace)
    threads = 1 if split else threads
    table = space.size if split else plan(space, threads, False).memory
    file, checkpoint = build_disk(puzzle.identity, puzzle.goal, space, threads)
    return BuildCost(space.tiles, space.placements, build_estimate(puzzle, space.n, space.k, space.size, threads),
                     memory=table + space.placements, file=file, checkpoint=0 if split else checkpoint)


#: The most slots of a probe's abstract space (a few tenths of a second to build).
PROBE_SLOTS = 8_000_000


def probe_size(n: int) -> int:
    """Tiles of the probe group of a puzzle of ``n`` nodes (see :func:`build_estimate`)."""
    size = 1
    while size + 2 < n and perm(n, size + 1) * (n - size - 1) <= PROBE_SLOTS:
        size += 1
    return size


def build_estimate(puzzle, n: int, k: int, slots: int, threads: int) -> Estimate:
    """The time to build the database of a group of ``k`` tiles of ``puzzle`` (``n`` nodes,
    ``slots`` slots) on ``threads`` threads, from a probe (its rate kept by
    :mod:`puzzlespace.calibration`): the group of the puzzle's first tiles (in its
    ``pattern_order``) with the most tiles whose space has at most :data:`PROBE_SLOTS`
    slots is built and timed; a build costs its slots at that rate, scaled by its tiles
    over the probe's (a move's rank takes time in proportion to the group's tiles)."""
    size = probe_size(n)
    per_slot = rate(f"pattern {puzzle.identity} {size} tiles", threads, lambda: _probe(puzzle, size, threads))
    return estimate(slots * per_slot * k / size)


def _probe(puzzle, size: int, threads: int) -> tuple[float, int]:
    """(seconds, slots) of building the database of ``puzzle``'s first ``size`` tiles."""
    from .space import pattern_distances

    tiles = [puzzle.goal[v] for v in puzzle.pattern_order() if puzzle.goal[v]][:size]
    space = pattern_spaces(puzzle, tiles)[0]
    with watch(f"the pattern-database build of {puzzle.spec}", "build") as compiles:
        t0 = time.perf_counter()
        space.distances() if isinstance(space, SplitPatternSpace) else pattern_distances(space, threads=threads)
        return time.perf_counter() - t0 - compiles.seconds, space.size


def build_disk(spec: str, goal: Sequence[int], space: PatternSpace, threads: int) -> tuple[int, int]:
    """Bytes of the database file of ``space`` (an entry a byte; the header's numbers that
    only the build knows, its seconds and largest distance, at their usual widths) and of
    the checkpoint its build keeps (the search's 2-bit table and the entries so far)."""
    header = dict(_expected(spec, goal, space), seconds=99.999, threads=threads, bits=8, max=99, version=__version__,
                  sha256="0" * 64)
    blob = json.dumps(dict(header, header_sha256=datafile.header_digest(header))).encode()
    return len(MAGIC) + 8 + len(blob) + space.placements, table_bytes(space.size) + space.placements


def cached_state(spec: str, goal: Sequence[int], space: PatternSpace, root: str | Path | None = None) -> str:
    """Why the database of ``space`` must be built ('' when the cache holds it, judged by its header and size)."""
    path = pdb_path(spec, goal, space.tiles, root, space.kind)
    if (partial_dir(path) / cp.MANIFEST).exists():
        return "resuming an interrupted build"
    if not path.exists():
        return "not in the cache"
    try:
        with datafile.open_data(path, MAGIC, "pattern database") as (header, f):
            start = f.tell()
    except PuzzleError as exc:
        return f"rebuilding: {exc}"
    expected = _expected(spec, goal, space)
    if any(header.get(k) != v for k, v in expected.items()):
        return "rebuilding: the cached file is for another pattern"
    size = (space.placements + 1) // 2 if header.get("bits") == 4 else space.placements
    if path.stat().st_size != start + size:
        return "rebuilding: the cached file is truncated"
    return ""


def partial_dir(path: Path) -> Path:
    """The checkpoint directory of a build of ``path`` in progress."""
    return path.with_name(path.name + ".partial")


def build(spec: str, goal: Sequence[int], space: PatternSpace, *, threads: int | None = None,
          max_memory: int | None = None, progress=None, checkpoint: Path | None = None,
          stop: Callable[[], None] | None = None) -> PatternDatabase:
    """Compute the database of ``space`` (see :func:`~puzzlespace.pdb.space.pattern_distances`);
    its header's ``seconds`` are the build's own, numba's compiling left out.

    ``checkpoint``: a directory where the build saves itself at the end of a layer (at most
    every :data:`CHECKPOINT_SECONDS`) and from which it resumes if it holds a matching
    build. ``progress(entries done, entries)`` follows the build, layer by layer: the
    entries given their distance so far. ``stop()`` is called as it goes and may raise
    (e.g. :class:`~puzzlespace.errors.SearchStopped`) to end it, keeping the last
    checkpoint.
    """
    from ..explore.engine import LayerState
    from .space import pattern_distances

    if isinstance(space, SplitPatternSpace):
        return _build_split(spec, goal, space, progress, stop)
    threads = threads or os.cpu_count() or 1
    expected = _expected(spec, goal, space)
    resume, before = None, 0.0
    if checkpoint is not None and (checkpoint / cp.MANIFEST).exists():
        try:
            resume, before = _resume(checkpoint, expected, space)
        except PuzzleError:
            shutil.rmtree(checkpoint, ignore_errors=True)
    last_save = [time.monotonic()]
    with watch(f"the pattern-database build of {spec}", "build") as compiles:
        t0 = time.perf_counter()

        def spent() -> float:  # the build's own seconds, its compiling left out
            return before + time.perf_counter() - t0 - compiles.seconds

        def after_layer(state: LayerState, pdb: np.ndarray, given: int) -> None:
            if progress:
                progress(given, space.placements)
            if checkpoint is not None and time.monotonic() - last_save[0] >= CHECKPOINT_SECONDS:
                manifest = dict(expected, format=BUILD_FORMAT, depth=state.depth, depth_counts=state.counts,
                                seconds=spent())
                try:
                    cp.save_layer(checkpoint, manifest, {"table": state.table, "pdb": pdb})
                except OSError:
                    pass  # a full disk: the build goes on, and a resume starts from the last checkpoint written
                last_save[0] = time.monotonic()
            if stop:
                stop()

        table = pattern_distances(space, threads=threads, max_memory=max_memory,
                                  progress=stop and (lambda *_: stop()), resume=resume, after_layer=after_layer)
        header = dict(expected, seconds=round(spent(), 3), threads=threads)
    if progress:
        progress(space.placements, space.placements)
    return PatternDatabase(header, table)


def _build_split(spec: str, goal: Sequence[int], space: SplitPatternSpace, progress, stop) -> PatternDatabase:
    """:func:`build` of a split space: on one thread, in one go (a build of seconds keeps
    no checkpoint); ``progress`` follows its levels."""
    report = progress and (lambda done, known: progress(space.placements * done // known, space.placements))
    with watch(f"the pattern-database build of {spec}", "build") as compiles:
        t0 = time.perf_counter()
        table = space.distances(report, stop)
        header = dict(_expected(spec, goal, space), seconds=round(time.perf_counter() - t0 - compiles.seconds, 3),
                      threads=1)
    return PatternDatabase(header, table)


def _resume(directory: Path, expected: dict, space: PatternSpace):
    """((layer state, database so far), seconds spent) of the build checkpointed in
    ``directory``; a checkpoint of another build is an error."""
    from ..explore.engine import LayerState

    fix = "it is discarded and the build starts again"
    manifest = cp.read_manifest(directory, fix)
    for key, want in dict(expected, format=BUILD_FORMAT).items():
        if manifest.get(key) != want:
            raise PuzzleError(f"build checkpoint {str(directory)!r} is for {key} {manifest.get(key)!r}, not {want!r}; "
                              f"{fix}")
    where = f"build checkpoint {str(directory)!r}"
    counts = datafile.require_counts(manifest, "depth_counts", space.size, where)
    depth = datafile.require_int(manifest, "depth", 0, space.size, where)
    seconds = manifest.get("seconds")
    if depth != len(counts) - 1 or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise PuzzleError(f"{where} is inconsistent; {fix}")
    table = cp.read_array(directory, manifest, "table", table_bytes(space.size), fix)
    pdb = cp.read_array(directory, manifest, "pdb", space.placements, fix)
    return (LayerState(table, depth, counts), pdb), float(seconds)


def obtain(spec: str, goal: Sequence[int], space: PatternSpace, *, root: str | Path | None = None,
           threads: int | None = None, max_memory: int | None = None, progress=None,
           notify: Callable[[str], None] | None = None, rebuild: bool = False,
           out: np.ndarray | None = None, stop: Callable[[], None] | None = None) -> PatternDatabase:
    """The database of ``space`` from the cache; built and saved if missing, mismatched or corrupt.

    ``notify`` receives one line when a database is built (and why); ``out`` receives
    the table as in :func:`read`. A build checkpoints itself beside its file and resumes
    from there after an interruption (unless ``rebuild``); see :func:`build`.
    """
    path = pdb_path(spec, goal, space.tiles, root, space.kind)
    why = "not in the cache"
    if path.exists() and not rebuild:
        try:
            db = read(path, _expected(spec, goal, space), out)
            _touch(path)
            return db
        except PuzzleError as exc:
            why = f"rebuilding: {exc}"
    elif rebuild:
        why = "rebuild requested"
    with datafile.locked(path, "the pattern database", wait=True):  # one builder at a time; the others wait
        if not rebuild and why == "not in the cache" and path.exists():  # built by another process meanwhile
            try:
                return read(path, _expected(spec, goal, space), out)
            except PuzzleError as exc:
                why = f"rebuilding: {exc}"
        return _build_and_save(spec, goal, space, path, why, root=root, threads=threads, max_memory=max_memory,
                               progress=progress, notify=notify, rebuild=rebuild, out=out, stop=stop)


def _build_and_save(spec, goal, space, path: Path, why: str, *, root, threads, max_memory, progress, notify,
                    rebuild, out, stop) -> PatternDatabase:
    """Build the database of ``space`` (resuming its checkpoint) and save it to ``path``; the
    caller holds the file's lock."""
    from ..resources import free_disk, human

    partial = partial_dir(path)
    if rebuild:
        shutil.rmtree(partial, ignore_errors=True)
    elif (partial / cp.MANIFEST).exists():
        why = "resuming an interrupted build"
    need = sum(build_disk(spec, goal, space, threads or os.cpu_count() or 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    if free_disk(path.parent) < need:
        raise PuzzleError(f"the pattern database needs about {human(need)} of disk in {str(path.parent)!r} "
                          f"but only {human(free_disk(path.parent))} is free; choose another --cache-dir")
    if notify:
        notify(f"building pattern database for tiles {','.join(map(str, space.tiles))} "
               f"({space.placements:,} entries; {why})")
    db = build(spec, goal, space, threads=threads, max_memory=max_memory, progress=progress, checkpoint=partial,
               stop=stop)
    save(path, db.header, db.table)
    shutil.rmtree(partial, ignore_errors=True)
    db.path = path
    if out is not None:
        out[:] = db.table
        db.table = out
    return db


def _touch(path: Path) -> None:
    """Record that ``path`` was used now (its access time, which ``pdb list`` shows)."""
    try:
        os.utime(path, (time.time(), path.stat().st_mtime))
    except OSError:
        pass


def remove(path: Path) -> int:
    """Delete a database file and any build of it in progress; return the bytes freed."""
    freed = 0
    for target in (path, partial_dir(path)):
        if target.is_dir():
            freed += sum(f.stat().st_size for f in target.iterdir() if f.is_file())
            shutil.rmtree(target)
        elif target.exists():
            freed += target.stat().st_size
            target.unlink()
    return freed


def listing(root: str | Path | None = None) -> list[tuple[Path, dict | None, str]]:
    """Every database file in the cache: (path, header or None, problem or '').

    A header is given only when the fields a listing shows are sound (``puzzle``,
    ``tiles``, ``entries``, ``seconds``).
    """
    found = []
    for path in sorted(pdb_dir(root).glob(f"*{SUFFIX}")):
        try:
            with datafile.open_data(path, MAGIC, "pattern database") as (header, _):
                datafile.require_int(header, "entries", 0, MAX_ENTRIES, "it")
                seconds, tiles = header.get("seconds"), header.get("tiles")
                if not isinstance(header.get("puzzle"), str) or not isinstance(seconds, (int, float)) \
                        or not isinstance(tiles, list) or not all(type(t) is int for t in tiles):
                    raise PuzzleError("it has a corrupt header")
                found.append((path, header, ""))
        except PuzzleError as exc:
            found.append((path, None, str(exc)))
    return found


def partial_builds(root: str | Path | None = None) -> list[tuple[Path, dict, int]]:
    """Every build in the cache that was interrupted or runs now: (the database file it
    makes, its checkpoint's manifest as it is, empty where it cannot be read, and the
    bytes its checkpoint holds). ``pdb remove`` frees them (:func:`remove`)."""
    found = []
    for directory in sorted(pdb_dir(root).glob(f"*{SUFFIX}.partial")):
        if not directory.is_dir():
            continue
        held = sum(f.stat().st_size for f in directory.iterdir() if f.is_file())
        found.append((directory.with_suffix(""), cp.peek_manifest(directory), held))
    return found


def catalogue(root: str | Path | None = None) -> list[dict]:
    """Every database file in the cache, then every partial build (:func:`listing`,
    :func:`partial_builds`), as a record: ``name`` (the file's, less :data:`SUFFIX`),
    ``path`` and ``bytes``; a file's header fields where they are sound, ``problem`` (''
    or why it cannot be read) and ``last_used`` (its access time); a build's ``partial``
    (True), ``puzzle``, ``tiles``, ``entries`` and ``depth`` (None where its manifest
    lacks them)."""
    files = [dict(h or {}, name=path.name.removesuffix(SUFFIX), path=str(path), problem=why,
                  bytes=path.stat().st_size, last_used=path.stat().st_atime) for path, h, why in listing(root)]
    return files + [dict(name=path.name.removesuffix(SUFFIX), path=str(path) + ".partial", partial=True,
                         puzzle=m.get("puzzle"), tiles=m.get("tiles"), entries=m.get("entries"),
                         depth=m.get("depth"), bytes=held) for path, m, held in partial_builds(root)]


def removal_targets(names: Sequence[str], every: bool, root: str | Path | None = None) -> list[Path]:
    """The database files (and their partial builds: see :func:`remove`) that ``names``
    name, or with ``every`` all of them and every partial build; PuzzleError for a name
    of none, or for names with ``every`` or neither."""
    if every == bool(names):
        raise PuzzleError("name the databases to remove (see 'puzzlespace pdb list') or give --all, not both")
    folder = pdb_dir(root)
    if every:
        return sorted(set(folder.glob(f"*{SUFFIX}")) | {d.with_suffix("") for d in folder.glob("*.partial")})
    targets = []
    for name in names:
        path = folder / (name if name.endswith(SUFFIX) else name + SUFFIX)
        if "/" in name or not (path.exists() or path.with_name(path.name + ".partial").exists()):
            raise PuzzleError(f"no pattern database named {name!r} in {str(folder)!r} (see 'puzzlespace pdb list')")
        targets.append(path)
    return targets
