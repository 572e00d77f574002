"""Pattern database files: one per tile group, in the cache directory, built on demand.

File layout: the magic line ``PUZZLESPACE-PDB 1\\n``, an 8-byte little-endian header
length, a JSON header, then the entries. Header: ``puzzle`` (spec), ``goal``, ``tiles``
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
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from .. import datafile
from .._version import __version__
from ..errors import PuzzleError
from ..explore.cache import cache_dir, file_stem
from .space import PatternSpace

MAGIC = b"PUZZLESPACE-PDB 1\n"
SUFFIX = ".pspdb"


def graph_digest(neighbors: Sequence[Sequence[int]]) -> str:
    return hashlib.sha256(json.dumps([sorted(a) for a in neighbors]).encode()).hexdigest()[:16]


def pdb_dir(root: str | Path | None = None) -> Path:
    """The folder holding pattern databases under ``root`` (default: the cache directory)."""
    return Path(root) / "pdb" if root is not None else cache_dir() / "pdb"


def pdb_path(spec: str, goal: Sequence[int], tiles: Sequence[int], root: str | Path | None = None) -> Path:
    """File of the database of ``tiles`` for puzzle ``spec`` with ``goal``."""
    return pdb_dir(root) / f"{file_stem(spec, goal)}-t{'.'.join(map(str, tiles))}{SUFFIX}"


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
    header = dict(header, bits=bits, max=top, version=__version__, sha256=hashlib.sha256(data.data).hexdigest())
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
        entries, bits = int(header.get("entries", -1)), header.get("bits")
        size = (entries + 1) // 2 if bits == 4 else entries
        direct = out is not None and bits == 8 and len(out) == entries
        data = out if direct else np.empty(max(size, 0), dtype=np.uint8)
        got = f.readinto(memoryview(data)) if bits in (4, 8) and size >= 0 else -1
        extra = f.read(1)
    if bits not in (4, 8) or got != size or extra:
        raise PuzzleError(f"pattern database {name!r} is truncated or overlong "
                          f"({max(got, 0) + len(extra):,}{'+' if extra else ''} of {size:,} bytes)")
    if hashlib.sha256(data.data).hexdigest() != header.get("sha256"):
        raise PuzzleError(f"pattern database {name!r} is corrupt (checksum mismatch)")
    if bits == 4:
        table = out if out is not None else np.empty(entries, dtype=np.uint8)
        table[0::2] = data[: (entries + 1) // 2] & 15
        table[1::2] = data[: entries // 2] >> 4
    elif out is not None and not direct:
        out[:] = data
        table = out
    else:
        table = data
    return PatternDatabase(header, table, path)


def build(spec: str, goal: Sequence[int], space: PatternSpace, *, threads: int | None = None,
          max_memory: int | None = None, progress=None) -> PatternDatabase:
    """Compute the database of ``space`` (see :func:`~puzzlespace.pdb.space.pattern_distances`)."""
    from .space import pattern_distances

    t0 = time.perf_counter()
    table = pattern_distances(space, threads=threads, max_memory=max_memory, progress=progress)
    header = dict(_expected(spec, goal, space), seconds=round(time.perf_counter() - t0, 3))
    return PatternDatabase(header, table)


def obtain(spec: str, goal: Sequence[int], space: PatternSpace, *, root: str | Path | None = None,
           threads: int | None = None, max_memory: int | None = None, progress=None,
           notify: Callable[[str], None] | None = None, rebuild: bool = False,
           out: np.ndarray | None = None) -> PatternDatabase:
    """The database of ``space`` from the cache; built and saved if missing, mismatched or corrupt.

    ``notify`` receives one line when a database is built (and why); ``out`` receives
    the table as in :func:`read`.
    """
    from ..explore.resources import free_disk, human

    path = pdb_path(spec, goal, space.tiles, root)
    why = "not in the cache"
    if path.exists() and not rebuild:
        try:
            return read(path, _expected(spec, goal, space), out)
        except PuzzleError as exc:
            why = f"rebuilding: {exc}"
    elif rebuild:
        why = "rebuild requested"
    need = space.placements
    path.parent.mkdir(parents=True, exist_ok=True)
    if free_disk(path.parent) < need:
        raise PuzzleError(f"the pattern database needs about {human(need)} of disk in {str(path.parent)!r} "
                          f"but only {human(free_disk(path.parent))} is free; choose another --cache-dir")
    if notify:
        notify(f"building pattern database for tiles {','.join(map(str, space.tiles))} "
               f"({space.placements:,} entries; {why})")
    db = build(spec, goal, space, threads=threads, max_memory=max_memory, progress=progress)
    save(path, db.header, db.table)
    db.path = path
    if out is not None:
        out[:] = db.table
        db.table = out
    return db


def listing(root: str | Path | None = None) -> list[tuple[Path, dict | None, str]]:
    """Every database file in the cache: (path, header or None, problem or '')."""
    found = []
    for path in sorted(pdb_dir(root).glob(f"*{SUFFIX}")):
        try:
            with datafile.open_data(path, MAGIC, "pattern database") as (header, _):
                found.append((path, header, ""))
        except PuzzleError as exc:
            found.append((path, None, str(exc)))
    return found
